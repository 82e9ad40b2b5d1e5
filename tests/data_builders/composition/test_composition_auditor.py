"""The composition auditor on a NaN / infinite difficulty (crashed after every call), an ``--out`` in a
missing folder, and ``--dialect`` passed to the runner as ``omniaudit judge --dialect`` does."""

from __future__ import annotations

import json

import pytest

from omniaudit.cli import main
from omniaudit.data_builders.composition.auditor import audit_samples, parse_audit


def generated(tmp_path, n=4):
    from omniaudit.data_builders.composition.synthetic import synthesize_samples

    path = synthesize_samples(tmp_path / "gen", n=n, seed=1)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        r.pop("auditor_decision"), r.pop("difficulty")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


class Auditor:
    def __init__(self, answers):
        self.answers, self.calls = answers, 0

    def answer(self, items):
        self.calls += 1
        return [self.answers[i % len(self.answers)] for i in range(len(items))]


@pytest.mark.parametrize("score", ["NaN", "Infinity", "-Infinity", '"nan"', '"inf"'])
def test_a_nan_or_infinite_difficulty_is_an_unparsed_answer(score):
    raw = '{"decision": "ACCEPT", "failure_pillar": null, "rationale": "ok", "difficulty_score": SCORE}'.replace(
        "SCORE", score)
    assert parse_audit(raw) is None  # was: ValueError / OverflowError from int(score)
    assert parse_audit(raw.replace(score, "7"))["difficulty"] == 7


def test_nan_difficulty_after_all_calls_writes_the_file(tmp_path):
    answers = ['{"decision": "ACCEPT", "difficulty_score": NaN}',
               '{"decision": "REJECT", "failure_pillar": "Media", "difficulty_score": 3}']
    auditor = Auditor(answers)
    result = audit_samples(generated(tmp_path), auditor, tmp_path / "audited.jsonl")
    out = [json.loads(line) for line in (tmp_path / "audited.jsonl").read_text().splitlines()]
    assert result.unparsed == 2 and result.rows == 4 and auditor.calls == 1
    assert [(r["auditor_decision"], r["difficulty"], r["auditor_parsed"]) for r in out] == [
        ("REJECT", -1, False), ("REJECT", 3, True)] * 2


def test_out_in_a_missing_folder_and_a_folder_that_cannot_be_made(tmp_path):
    samples = generated(tmp_path)
    auditor = Auditor(['{"decision": "ACCEPT", "difficulty_score": 5}'])
    out = tmp_path / "not" / "yet" / "audited.jsonl"
    assert audit_samples(samples, auditor, out).rows == 4 and out.is_file()
    (tmp_path / "afile").write_text("x")
    auditor = Auditor(['{"decision": "ACCEPT", "difficulty_score": 5}'])
    from omniaudit.errors import InputError

    with pytest.raises(InputError, match="cannot create the output's folder"):
        audit_samples(samples, auditor, tmp_path / "afile" / "audited.jsonl")
    assert auditor.calls == 0  # refused before any auditor call


def test_dialect_reaches_the_runner(tmp_path, monkeypatch):
    import omniaudit.runners as judges

    seen = {}

    def make_judge(spec, **kw):
        seen.update(kw, spec=spec)
        return Auditor(['{"decision": "ACCEPT", "difficulty_score": 5}'])

    monkeypatch.setattr(judges, "make_judge", make_judge)
    out = tmp_path / "sub" / "audited.jsonl"
    assert main(["composition-auditor", "--samples", str(generated(tmp_path)), "--auditor",
                 "openai:gpt-x@http://127.0.0.1:9/v1", "--dialect", "frames", "--out", str(out)]) == 0
    assert seen["dialect"] == "frames" and seen["spec"] == "openai:gpt-x@http://127.0.0.1:9/v1" and out.is_file()
    assert main(["composition-auditor", "--samples", str(generated(tmp_path / "b")), "--auditor", "scripted:x",
                 "--out", str(tmp_path / "b.jsonl")]) == 0
    assert seen["dialect"] == "vllm"  # the default, as `omniaudit judge`
