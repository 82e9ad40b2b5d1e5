"""The fault suite (``benchmarks/faults.py``): its classifier can fail (a key in an artifact, NaN in a measure, exit 0
where a refusal was due, a traceback are each caught), and its smoke subset (a few seeded cases of every family,
through the real command line) finds nothing silently wrong and no crash."""

from __future__ import annotations

import importlib.util
import json
import signal
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def faults():
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("faults", BENCHMARKS / "faults.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["faults"] = module
    spec.loader.exec_module(module)
    return module


KEY = "fk-0123456789abcdef-secret"


def _outcome(faults, *runs, **kw):
    return faults.Outcome("test", "case", runs=list(runs), **kw)


def test_a_key_in_any_artifact_is_silently_wrong(faults, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").write_text("all fine\n")
    clean = faults.Run(["judge"], 0, "", "", expect="succeed")
    assert faults.classify(_outcome(faults, clean, outputs=[out], key=KEY)) == ("clean", "")
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "reply.json").write_text(json.dumps({"raw": f"A {KEY}"}))
    verdict, reason = faults.classify(_outcome(faults, clean, outputs=[out], secret_roots=[cache], key=KEY))
    assert verdict == "silently wrong" and "reply.json" in reason
    (cache / "reply.json").write_bytes(KEY.encode("utf-16-le"))  # also as UTF-16
    assert faults.classify(_outcome(faults, clean, secret_roots=[cache], key=KEY))[0] == "silently wrong"
    loud = faults.Run(["judge"], 2, "", f"error: refused key {KEY}\n", expect="refuse")
    assert faults.classify(_outcome(faults, loud, key=KEY))[0] == "silently wrong"  # shown in a message


def test_non_finite_measures_and_wrong_outputs_are_silently_wrong(faults, tmp_path):
    run = faults.Run(["audit"], 0, "", "", expect="either")
    audit = tmp_path / "a"
    audit.mkdir()
    (audit / "audit.json").write_text('{"waf": NaN}')
    assert faults.classify(_outcome(faults, run, outputs=[audit]))[0] == "silently wrong"
    (audit / "audit.json").write_text('{"waf": 50.0, "note": "NaN is a word here"}')
    (audit / "predictions.csv").write_text("name,model1,p_a1__j\nx,inf,0.5\ny,gale,inf\n")
    verdict, reason = faults.classify(_outcome(faults, run, outputs=[audit]))
    assert verdict == "silently wrong" and "p_a1__j" in reason  # the numeric column, not the generator "inf"
    (audit / "predictions.csv").write_text("name,model1,p_a1__j\nx,inf,0.5\n")
    assert faults.classify(_outcome(faults, run, outputs=[audit])) == ("clean", "")
    assert faults.classify(_outcome(faults, run, problems=["predictions.csv differs"]))[0] == "silently wrong"
    accepted = faults.Run(["audit"], 0, "", "", expect="refuse")
    assert faults.classify(_outcome(faults, accepted))[0] == "silently wrong"


def test_refusals_crashes_and_the_rest(faults):
    def verdict(rc, stderr, **kw):
        return faults.classify(_outcome(faults, faults.Run(["audit"], rc, "", stderr, **kw)))[0]

    one_line = "error: j.jsonl:row 3: column 'label': expected label A or B (found 5)\n"
    assert verdict(2, one_line, expect="refuse", names=("j.jsonl",)) == "clean"
    argparse_line = "usage: omniaudit judge ...\nomniaudit judge: error: argument --runs: expected an integer\n"
    assert verdict(2, argparse_line, expect="refuse", names=("--runs",)) == "clean"
    assert verdict(2, one_line, expect="refuse", names=("pref.csv",)) == "unclear"  # names another file
    assert verdict(2, "something went wrong\n", expect="refuse") == "unclear"  # no error line
    assert verdict(2, one_line + one_line, expect="refuse") == "unclear"  # two
    assert verdict(2, one_line, expect="succeed") == "unclear"  # a valid input refused
    traceback = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: boom\n'
    assert verdict(1, traceback) == "crash" and verdict(2, traceback + one_line, expect="refuse") == "crash"
    assert verdict(-signal.SIGSEGV, "") == "crash"
    assert verdict(-signal.SIGKILL, "", expect="killed") == "clean"  # the suite's own kill
    assert verdict(None, "", expect="succeed") == "unclear"  # timed out
    assert verdict(7, "exit seven\n") == "unclear"
    left = _outcome(faults, faults.Run(["judge"], 0, "", ""), leftovers=[".p.jsonl.journal-1"])
    assert faults.classify(left)[0] == "unclear"


def test_the_summary_line_counts_every_verdict(faults):
    results = [faults.Result("kills", str(i), v, "", 0.0) for i, v in enumerate(
        ["clean", "clean", "unclear", "silently wrong", "crash"])]
    assert faults.summary(results) == ("faults: tried 5, clean 2, unclear 1, silently wrong 1, crashes 1 — goal 0 "
                                       "silently wrong, 0 crashes")
    assert "kills" in faults.table(results)


@pytest.mark.slow
def test_the_smoke_subset_finds_nothing_silently_wrong_and_no_crash(faults, tmp_path):
    """A few seeded cases of every family (kills, server modes, fuzzed predictions and CSV, numeric options,
    concurrency) through the real command line: about 30 s on 2 cores."""
    results = faults.run_suite("smoke", seed=0, jobs=2, root=tmp_path / "suite")
    assert {r.family for r in results} == set(faults.FAMILIES)
    assert len(results) >= 2 * len(faults.FAMILIES) - 2
    bad = [r for r in results if r.verdict in ("silently wrong", "crash", "unclear")]
    assert bad == [], "\n".join(f"{r.verdict}: {r.family} / {r.case}: {r.reason} [{r.detail}]" for r in bad)
