"""Issue 26, served models: every predictions row keeps the completion's ``model`` and ``system_fingerprint`` (where
the server gives them); a reply naming another model, or a model the server does not list, warns once per run; a
journal or a kept predictions file answered by another model or deployment is never resumed or reused."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from chat_server import ChatServer

import omniaudit.runners.run as run_module
from omniaudit.cli import main
from omniaudit.evaluation.scorecard.runner import CANARY, MIN_RESAMPLES
from omniaudit.runners import run_judge
from omniaudit.runners.openai_compat import OpenAIJudge
from omniaudit.runners.run import ServedModelWarning

LISTED = [{"id": "m", "object": "model"}]
FAST = ["--audits", "preference", "--n-resamples", str(MIN_RESAMPLES)]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _served(messages: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in messages if issubclass(w.category, ServedModelWarning)]


def test_rows_carry_the_served_model_and_fingerprint_and_a_listed_model_warns_nothing(mixed_dataset, tmp_path):
    out, said = tmp_path / "p.jsonl", []
    with ChatServer(models=LISTED, served_model="m", system_fingerprint="fp-1") as server, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_judge(mixed_dataset, "mixed", f"openai:m@{server.url}", out, progress=said.append,
                  cache_dir=tmp_path / "c")
        again = run_module.answer_again(mixed_dataset, "mixed", f"openai:m@{server.url}", [(0, 0)],
                                        cache_dir=tmp_path / "c")
        before = server.requests  # a rerun from the response cache keeps them too
        run_judge(mixed_dataset, "mixed", f"openai:m@{server.url}", tmp_path / "q.jsonl", cache_dir=tmp_path / "c")
        assert server.requests == before
    rows = _rows(out)
    assert rows and all((r["served_model"], r["system_fingerprint"]) == ("m", "fp-1") for r in rows)
    assert all((r["served_model"], r["system_fingerprint"]) == ("m", "fp-1") for r in _rows(tmp_path / "q.jsonl"))
    assert (again[0]["served_model"], again[0]["system_fingerprint"]) == ("m", "fp-1")
    assert _served(caught) == [] and not [m for m in said if m.startswith("warning")]
    # a server that gives neither: the rows have no such keys
    with ChatServer(models=LISTED) as server:
        run_judge(mixed_dataset, "mixed", f"openai:m@{server.url}", out, cache_dir=None)
    assert all(not {"served_model", "system_fingerprint"} & set(r) for r in _rows(out))


def test_a_reply_naming_another_model_or_an_unlisted_model_warns_once(mixed_dataset, tmp_path):
    said: list[str] = []
    with ChatServer(models=LISTED, served_model="other-model") as server, pytest.warns(ServedModelWarning) as caught:
        run_judge(mixed_dataset, "mixed", f"openai:m@{server.url}", tmp_path / "p.jsonl", progress=said.append,
                  cache_dir=None)
    (message,) = _served(caught)
    assert "'other-model'" in message and "not the one asked for ('m')" in message
    assert [m for m in said if m.startswith("warning: ")] == [f"warning: {message}"]
    assert {r["served_model"] for r in _rows(tmp_path / "p.jsonl")} == {"other-model"}
    with ChatServer(models=[{"id": "another"}]) as server, pytest.warns(ServedModelWarning) as caught:
        run_judge(mixed_dataset, "mixed", f"openai:m@{server.url}", tmp_path / "q.jsonl", cache_dir=None)
    (message,) = _served(caught)
    assert "does not list the model 'm' under /models (or has none" in message and "served: null" in message
    assert _rows(tmp_path / "q.jsonl")[0]["provenance"]["model"]["served"] is None


def _interrupted(mixed_dataset, server: ChatServer, out: Path, monkeypatch) -> None:
    """A run killed after its first chunk of 2 answers, which its journal keeps."""
    monkeypatch.setattr(run_module, "CHUNK", 2)
    real, calls = OpenAIJudge.answer, []

    def answer(self, items, progress=None):
        calls.append(len(items))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, items, progress)

    monkeypatch.setattr(OpenAIJudge, "answer", answer)
    with pytest.raises(KeyboardInterrupt):
        run_judge(mixed_dataset, "mixed", f"openai:m@{server.url}", out, cache_dir=out.parent / "c")
    monkeypatch.setattr(OpenAIJudge, "answer", real)
    assert [p for p in out.parent.iterdir() if ".journal-" in p.name and p.stat().st_size]


def test_a_journal_of_the_same_deployment_resumes(mixed_dataset, tmp_path, monkeypatch):
    out = tmp_path / "p.jsonl"
    with ChatServer(models=LISTED, served_model="m", system_fingerprint="fp-1") as server:
        _interrupted(mixed_dataset, server, out, monkeypatch)
        counts = run_judge(mixed_dataset, "mixed", f"openai:m@{server.url}", out, cache_dir=tmp_path / "c")
    assert counts["resumed"] == 2 and {r["system_fingerprint"] for r in _rows(out)} == {"fp-1"}


def test_a_journal_from_another_fingerprint_is_not_resumed(mixed_dataset, tmp_path, monkeypatch):
    out, said = tmp_path / "p.jsonl", []
    with ChatServer(models=LISTED, served_model="m", system_fingerprint="fp-1") as server:
        _interrupted(mixed_dataset, server, out, monkeypatch)
        server.system_fingerprint = "fp-2"  # redeployed under the same name and URL
        before = server.requests
        with pytest.warns(ServedModelWarning) as caught:
            counts = run_judge(mixed_dataset, "mixed", f"openai:m@{server.url}", out, progress=said.append,
                               cache_dir=tmp_path / "c")
        asked = server.requests - before
    (message,) = _served(caught)
    assert 'system_fingerprint "fp-1" (kept) but "fp-2" now' in message and "asked afresh" in message
    assert counts["resumed"] == 0 and asked == 1 + counts["items"]  # the probe, then every item past the cache
    assert {r["system_fingerprint"] for r in _rows(out)} == {"fp-2"} and f"warning: {message}" in said


@pytest.fixture(scope="module")
def preference(tmp_path_factory, small_defaults) -> Path:
    """The preference audit's small embedded default (120 pairs: what is asked again, and when, does not depend on
    the size; the default's 500 made each served run 4 times longer), built once by a scorecard run of the oracle."""
    out = tmp_path_factory.mktemp("base") / "card"
    assert main(["scorecard", "--model", "o=scripted:oracle", *FAST, "--size", "small", "--out", str(out)]) == 0
    return out / "datasets" / "preference"


@pytest.mark.slow
def test_a_scorecard_rerun_after_the_fingerprint_changed_answers_afresh(preference, tmp_path, capsys):
    out = tmp_path / "card"
    answers = out / "models" / "srv" / "judge.jsonl"
    with ChatServer(models=[{"id": "judge"}], served_model="judge", system_fingerprint="fp-1") as server:
        argv = ["scorecard", "--model", f"srv=openai:judge@{server.url}", *FAST, "--data", f"preference={preference}",
                "--cache", str(tmp_path / "cache"), "--out", str(out)]
        assert main(argv) == 0
        items = server.requests
        assert {r["system_fingerprint"] for r in _rows(answers)} == {"fp-1"}
        assert main(argv) == 0 and server.requests == items + CANARY  # the same deployment: only the canary
        assert "warning" not in capsys.readouterr().err
        server.system_fingerprint = "fp-2"  # the same answers, from another deployment
        assert main(argv) == 0 and server.requests == 2 * items + 2 * CANARY
    assert {r["system_fingerprint"] for r in _rows(answers)} == {"fp-2"}
    canary = json.loads((out / "models/srv/status.json").read_text(encoding="utf-8"))["preference"]["canary"]["judge"]
    assert len(canary["changed"]) == CANARY and 'system_fingerprint "fp-1" (kept) but "fp-2" now' in canary["note"]
    assert "asked afresh" in canary["note"] and canary["note"] in " ".join(capsys.readouterr().err.split())


def test_a_deployment_switch_during_a_run_is_refused_or_noted_by_every_audit(mixed_dataset, tmp_path):
    """Replies naming another model after a switch are two models' answers under one provenance: refused at the row
    that names the other one; another fingerprint of the same model is kept, with a note counting the rows."""
    import pandas as pd

    from omniaudit.errors import InputError
    from omniaudit.predictions import check_predictions

    out = tmp_path / "p.jsonl"
    with ChatServer(models=LISTED, served_model="m", system_fingerprint="fp-1") as server:
        run_judge(mixed_dataset, "mixed", f"openai:m@{server.url}", out, cache_dir=tmp_path / "c")
    rows = _rows(out)
    half = len(rows) // 2
    switched = pd.DataFrame([{**r, "served_model": "m-v2"} if i >= half else r for i, r in enumerate(rows)])
    with pytest.raises(InputError) as err:
        check_predictions(switched, out, mixed_dataset, ("mixed",))
    assert "two served models" in str(err.value) and f"row {half + 1}" in str(err.value)
    redeployed = pd.DataFrame([{**r, "system_fingerprint": "fp-2"} if i >= half else r for i, r in enumerate(rows)])
    notes = check_predictions(redeployed, out, mixed_dataset, ("mixed",)).notes
    assert any(f"fp-1: {half} rows" in n and "2 deployments" in n for n in notes)
    note = run_module._served_note({"model": "m", "served": "m"}, redeployed.to_dict("records"))
    assert note is not None and "2 deployments" in note
