"""Issue 26: a server that echoes the API key in any field it sends (the answer, ``finish_reason``, logprob tokens,
the completion's model and fingerprint, its ``/models`` entry) leaves no trace of it in any file a run writes: the
response cache, predictions, audits, reports, wandb's offline run; and non-finite logprobs (``Infinity``, ``NaN``)
never become NaN option probabilities."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from chat_server import ChatServer

from omniaudit.cli import main
from omniaudit.evaluation.scorecard.runner import MIN_RESAMPLES
from omniaudit.runners.completions import completion_reply, option_probs
from omniaudit.runners.items import JudgeItem
from omniaudit.runners.openai_compat import OpenAIJudge
from omniaudit.runners.transport import scrub

KEY = "echo-secret-0123456789abc"  # not sk-...: the key's own value is what is hidden
EVERYWHERE = ("content", "finish_reason", "logprobs", "fingerprint", "models")


@pytest.fixture
def key(monkeypatch, tmp_path):
    """TEST_KEY holds KEY; the default response cache and wandb (offline) write under tmp_path."""
    monkeypatch.setenv("TEST_KEY", KEY)
    monkeypatch.setenv("OMNIAUDIT_CACHE", str(tmp_path / "home-cache"))
    for var, name in (("WANDB_DIR", "wandb-runs"), ("WANDB_DATA_DIR", "wandb-data"),
                      ("WANDB_CACHE_DIR", "wandb-cache"), ("WANDB_CONFIG_DIR", "wandb-config")):
        monkeypatch.setenv(var, str(tmp_path / name))
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    for var in ("WANDB_PROJECT", "WANDB_RUN_GROUP", "WANDB_NAME", "WANDB_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return "TEST_KEY"


def _leaks(root: Path) -> list[str]:
    """Every file under ``root`` whose bytes hold the key (plain, or as JSON would escape it)."""
    needles = (KEY.encode(), KEY.encode("utf-16-le"))
    return [str(p) for p in root.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)]


def _probs(body: dict, answer: str) -> dict[str, float]:
    """The first option favoured (judge items: "yes" / "no" and the like; preference pairs: "A" / "B")."""
    text = body["messages"][-1]["content"][-1]["text"]
    if "A or B" in text:
        return {"A": 0.7, "B": 0.3}
    first = answer.split()[0]
    return {first: 0.8, "Well": 0.2}


def test_a_parsed_reply_keeps_no_key():
    echoed = {"token": KEY, "logprob": -1.0, "bytes": list(KEY.encode())}
    logprobs = {"content": [{"token": "yes", "logprob": -0.1, "top_logprobs": [echoed]}, echoed]}
    reply = completion_reply(json.dumps({"model": KEY, "system_fingerprint": KEY, "choices": [
        {"finish_reason": f"stop {KEY}", "message": {"content": f"yes {KEY}"}, "logprobs": logprobs}]}), KEY)
    assert reply.answered and reply.raw == "yes ***" and reply.finish_reason == "stop ***"
    assert KEY not in json.dumps(reply.__dict__) and str(list(KEY.encode()))[1:-1] not in json.dumps(reply.__dict__)
    assert reply.logprobs == [{"token": "yes", "logprob": -0.1, "top_logprobs": [{"token": "***", "logprob": -1.0}]},
                              {"token": "***", "logprob": -1.0}]
    assert scrub({KEY: [f"/w/{KEY}", {"x": KEY, "n": 1}]}, KEY) == {"***": ["/w/***", {"x": "***", "n": 1}]}
    assert scrub("Basic idea", KEY, patterns=False) == "Basic idea"  # a model's words: only the key goes


def test_a_judge_keeps_no_key_from_an_echoing_server(key, tmp_path):
    cache = tmp_path / "cache"
    items = [JudgeItem(id=f"q{i}", prompt="Is it raining? Answer with exactly one of: yes, no.",
                       options=["yes", "no"]) for i in range(2)]
    with ChatServer(echo_key=EVERYWHERE, probs=_probs, models=[{"id": "m", "object": "model"}]) as server:
        judge = OpenAIJudge("m", server.url, cache, api_key_env=key)
        answers = judge.answer(items)
        identity = judge.identity()
        again = OpenAIJudge("m", server.url, cache, api_key_env=key).answer(items)  # from the cache
    assert server.auth == [f"Bearer {KEY}"] * 2 and server.requests == 2
    assert answers == again and [a.finish_reason for a in answers] == ["stop ***"] * 2
    assert answers[0] == "yes ***" and answers[0].option_probs == pytest.approx({"yes": 1.0, "no": 0.0})
    assert identity["served"] == {"id": "m", "object": "model", "root": "/weights/***", "***": "x",
                                  "meta": [{"note": "***"}]}
    assert KEY not in json.dumps(identity) and list(cache.rglob("*.json")) and _leaks(tmp_path) == []


def test_no_file_of_a_judge_run_or_a_scorecard_holds_the_key(key, mixed_dataset, tmp_path, capsys, small_defaults):
    """``omniaudit judge`` and ``omniaudit scorecard`` (with wandb, offline) against a server echoing the key in
    every field: zero hits in every file under the output folders, the response caches and wandb's folders."""
    pytest.importorskip("wandb")
    with ChatServer(echo_key=EVERYWHERE, probs=_probs, models=[{"id": "m", "object": "model"}]) as server:
        spec = f"m=openai:m@{server.url}"
        judged = tmp_path / "judged" / "pred.jsonl"
        assert main(["judge", "--dataset", str(mixed_dataset), "--config", "mixed", "--judge", spec.split("=", 1)[1],
                     "--api-key-env", key, "--allow-insecure-key", "--cache", str(tmp_path / "cache"),
                     "--out", str(judged)]) == 0
        card = tmp_path / "card"
        assert main(["scorecard", "--size", "small", "--audits", "preference", "--model", spec,
                     "--n-resamples", str(MIN_RESAMPLES), "--api-key-env", key, "--allow-insecure-key",
                     "--cache", str(tmp_path / "cache"), "--report-to", "wandb", "--run-name", "secrets",
                     "--out", str(card)]) == 0
    assert {a for a in server.auth + server.get_auth} == {f"Bearer {KEY}"}  # the key was sent, and echoed
    rows = [json.loads(line) for line in judged.read_text(encoding="utf-8").splitlines()]
    assert rows and {r["finish_reason"] for r in rows} == {"stop ***"} and all(r["raw"].endswith(" ***") for r in rows)
    assert any(r["option_probs"] for r in rows)
    written = {p.name for p in card.rglob("*")}
    assert {"audit.json", "report.md", "scorecard.json"} <= written and list((tmp_path / "cache").rglob("*.json"))
    assert list((tmp_path / "wandb-runs").rglob("*.wandb"))
    captured = capsys.readouterr()
    assert KEY not in captured.out + captured.err
    assert _leaks(tmp_path) == []


# ---- non-finite logprobs --------------------------------------------------------------------------------------------

def _position(*alternatives: tuple[str, float]) -> list[dict]:
    top = [{"token": t, "logprob": lp} for t, lp in alternatives]
    return [{"token": alternatives[0][0], "logprob": alternatives[0][1], "top_logprobs": top}]


def test_non_finite_logprobs_never_make_nan_probabilities():
    inf, nan = float("inf"), float("nan")
    assert option_probs(_position(("A", inf), ("B", -1.0)), ["A", "B"]) == {"A": 0.0, "B": 1.0}
    assert option_probs(_position(("A", nan), ("B", -0.5), ("A", -0.5)), ["A", "B"]) == pytest.approx(
        {"A": 0.5, "B": 0.5})
    assert option_probs(_position(("A", -inf), ("B", -1.0)), ["A", "B"]) == {"A": 0.0, "B": 1.0}
    for alternatives in ((("A", inf), ("B", nan)), (("A", nan),), (("A", -inf), ("B", -inf)), (("A", "NaN"),),
                         (("A", 800.0), ("B", 800.0))):
        assert option_probs(_position(*alternatives), ["A", "B"]) is None, alternatives


def test_a_server_sending_infinite_logprobs_writes_no_nan(mixed_dataset, tmp_path):
    for odds in ({"yes": float("inf"), "A": float("inf"), "B": float("nan")}, {"yes": float("nan")}):
        def probs(body, answer, odds=odds):  # math.log(inf) = inf, math.log(nan) = nan: sent as Infinity, NaN
            return {answer: odds.get(answer, float("nan")), "x": 0.5}

        with ChatServer(probs=probs) as server:
            out = tmp_path / "pred.jsonl"
            assert main(["judge", "--dataset", str(mixed_dataset), "--config", "mixed", "--judge",
                         f"openai:m@{server.url}", "--no-cache", "--out", str(out)]) == 0
        text = out.read_text(encoding="utf-8")
        assert "NaN" not in text and "Infinity" not in text
        for row in map(json.loads, text.splitlines()):
            assert row["option_probs"] is None or all(math.isfinite(p) for p in row["option_probs"].values()), row
