"""The scorecard's options are checked before any work (a wrong one is the user's, exit 2, never a model's "not
answering"), and a served model's kept answers are reused only while a canary of them, asked again, still holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_server import ChatServer

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.evaluation.scorecard.runner import CANARY, MIN_RESAMPLES, ScorecardOptions, run_scorecard
from omniaudit.runners.base import RefusedItems
from omniaudit.runners.rows import UnusableRun, check_usable

FAST = ["--audits", "preference", "--n-resamples", str(MIN_RESAMPLES)]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _status(out: Path, model: str) -> dict:
    return json.loads((out / "models" / model / "status.json").read_text(encoding="utf-8"))["preference"]


@pytest.fixture(scope="module")
def preference(tmp_path_factory, small_defaults) -> Path:
    """The preference audit's small embedded default (120 pairs: what is asked again, and when, does not depend on
    the size; the default's 500 made each served run 4 times longer), built once by a scorecard run of the oracle."""
    out = tmp_path_factory.mktemp("base") / "card"
    assert main(["scorecard", "--model", "o=scripted:oracle", *FAST, "--size", "small", "--out", str(out)]) == 0
    return out / "datasets" / "preference"


# ------------------------------------------------------------------------------------------ options, up front
@pytest.mark.parametrize(("flags", "option"), [
    (["--temperature", "-1"], "temperature"), (["--top-p", "2"], "top_p"), (["--n-resamples", "0"], "n_resamples"),
    (["--n-resamples", "-3"], "n_resamples"), (["--n-resamples", "1"], "n_resamples"),
    (["--max-tokens", "0"], "max_tokens"), (["--concurrency", "0"], "concurrency"),
    (["--timeout", "0"], "timeout_s"), (["--max-reply-mb", "-1"], "--max-reply-mb"), (["--margin", "nan"], "--margin"),
    (["--margin", "1.5"], "--margin")])
def test_a_wrong_option_is_refused_before_any_work(tmp_path, capsys, flags, option):
    argv = ["scorecard", "--model", "x=scripted:oracle", "--audits", "preference", *flags]
    assert main([*argv, "--out", str(tmp_path / "card")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and option in err[0], err
    assert not list(tmp_path.iterdir())  # no folder, no lock, no dataset


@pytest.mark.parametrize("options", [
    {"n_resamples": MIN_RESAMPLES - 1}, {"n_resamples": 500.0}, {"sampling": {"temperature": float("inf")}},
    {"sampling": {"temperature": float("nan")}}, {"sampling": {"top_p": 0.0}}, {"min_usable": 1.5},
    {"runner": {"batch_size": 0}}, {"runner": {"max_retries": -1}}, {"runner": {"top_logprobs": 21}},
    {"runner": {"fps": 0.0}}, {"runner": {"dialect": "grpc"}}, {"runner": {"max_tokens": 1.5}},
    {"margin": float("nan")}])
def test_the_library_checks_every_option_first(tmp_path, options):
    with pytest.raises(InputError, match="must be"):
        run_scorecard(tmp_path / "card", ["x=scripted:oracle"], ScorecardOptions(audits=("preference",), **options))
    assert not (tmp_path / "card").exists()


def test_an_unusable_run_carries_its_counts():
    rows = [{"id": str(i), "raw": "A" if i == 0 else "", "parsed": i == 0, "option_probs": None,
             "finish_reason": "stop"} for i in range(5)]
    with pytest.raises(UnusableRun) as info:
        check_usable(rows, "openai:m@http://localhost/v1", 0.5)
    assert (info.value.usable, info.value.total) == (1, 5) and "gave 1 usable answers of 5" in str(info.value)


def test_only_a_model_that_cannot_answer_is_not_answering(preference, tmp_path, monkeypatch):
    """UnusableRun and RefusedItems make a model "not answering" (with its parse rate); any other InputError while
    answering is an input or option error: it propagates."""
    import omniaudit.runners.run as run_module

    real = run_module.run_judge
    raised: dict[str, Exception] = {}

    def judge(dataset, config, spec, *args, **kwargs):
        if spec == "scripted:random" and "error" in raised:
            raise raised["error"]
        return real(dataset, config, spec, *args, **kwargs)

    monkeypatch.setattr(run_module, "run_judge", judge)
    options = ScorecardOptions(audits=("preference",), data={"preference": str(preference)},
                               n_resamples=MIN_RESAMPLES)
    for name, error, rate in (("a", UnusableRun("said little", usable=9, total=180), 9 / 180),
                              ("b", RefusedItems("cannot answer these"), None)):
        raised["error"] = error
        out = run_scorecard(tmp_path / name, ["m=scripted:random"], options)
        assert _status(out, "m") | {"key": None} == {"status": "not answering", "reason": str(error), "key": None,
                                                   "parse_rate": rate, "predictions": {}}
    raised["error"] = InputError("an option the runner refuses")
    with pytest.raises(InputError, match="an option the runner refuses"):
        run_scorecard(tmp_path / "c", ["m=scripted:random"], options)


# ------------------------------------------------------------------------------- reuse of a served model's answers
def _scorecard(server: ChatServer, preference: Path, out: Path, *extra: str) -> int:
    """One scorecard run of the served model ``srv``; returns the chat requests it made."""
    before = server.requests
    argv = ["scorecard", "--model", f"srv=openai:judge@{server.url}", *FAST, "--data", f"preference={preference}",
            "--cache", str(out.parent / "cache"), *extra, "--out", str(out)]
    assert main(argv) == 0
    return server.requests - before


@pytest.mark.slow
def test_a_server_redeployed_under_the_same_name_is_asked_afresh(preference, tmp_path, capsys):
    out = tmp_path / "card"
    answers = out / "models" / "srv" / "judge.jsonl"
    with ChatServer() as server:  # answers the first option, "A"
        items = _scorecard(server, preference, out)
        first, audit = answers.read_bytes(), (out / "models/srv/preference/audit.json").read_bytes()
        assert {r["label"] for r in _rows(answers)} == {"A"} and items == len(_rows(answers))
        # the same model: only the canary is asked (past the response cache), the kept answers stand
        assert _scorecard(server, preference, out) == CANARY
        assert answers.read_bytes() == first
        assert _status(out, "srv")["canary"] == {"judge": {"asked": CANARY, "changed": [], "note": None}}
        assert "warning" not in capsys.readouterr().err
        # another model behind the same name and URL (and the response cache that holds the old replies)
        server.answer = lambda body: "B"
        assert _scorecard(server, preference, out) == CANARY + items
        assert {r["label"] for r in _rows(answers)} == {"B"}
        assert (out / "models/srv/preference/audit.json").read_bytes() != audit  # audited again
        canary = _status(out, "srv")["canary"]["judge"]
        assert len(canary["changed"]) == CANARY and "asked afresh" in canary["note"]
        err = " ".join(capsys.readouterr().err.split())
        assert "warning: srv: the server's answers to judge changed" in err and canary["changed"][0] in err
        # the fresh answers (and the refreshed cache) hold from now on
        assert _scorecard(server, preference, out) == CANARY
        assert {r["label"] for r in _rows(answers)} == {"B"}


@pytest.mark.slow
def test_no_reuse_and_unseeded_sampling_ask_afresh(preference, tmp_path, capsys):
    out = tmp_path / "card"
    with ChatServer() as server:
        items = _scorecard(server, preference, out)
        assert _scorecard(server, preference, out, "--no-reuse") == items  # no canary, past the response cache
        assert "canary" not in _status(out, "srv")
        sampled = tmp_path / "sampled"
        assert _scorecard(server, preference, sampled, "--temperature", "0.7") == items
        assert _scorecard(server, preference, sampled, "--temperature", "0.7") == items  # cannot be checked
        assert "sampled without a seed" in " ".join(capsys.readouterr().err.split())
        seeded = tmp_path / "seeded"
        assert _scorecard(server, preference, seeded, "--temperature", "0.7", "--seed", "1") == items
        assert _scorecard(server, preference, seeded, "--temperature", "0.7", "--seed", "1") == CANARY
