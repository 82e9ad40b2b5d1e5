"""A judge that is always right is audited as right whatever it writes: scores per description, a reasoning trace
that leans the other way before the answer, or Russian. Read as choices of the first option named, each would be a
position-locked judge (first slot 100%, WAF 50)."""

import json

import pytest

from omniaudit.cli import main
from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset
from omniaudit.runners.items import Answer, Sampling, load_items
from omniaudit.runners.run import prediction_row

FAST = ["--n-resamples", "50", "--no-source-classifier", "--no-controls"]
STYLES = {
    "scores": lambda gold: f"A: {9 if gold == 'A' else 6}/10, B: {9 if gold == 'B' else 6}/10",
    "think": lambda gold: (f"<think>At first {'B' if gold == 'A' else 'A'} looked right, the answer is "
                           f"{'B' if gold == 'A' else 'A'}... let me check the voice.</think>\n\nAnswer: {gold}"),
    "russian": lambda gold: f"Я выбираю {'первое' if gold == 'A' else 'второе'} описание.",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_preference_dataset(tmp_path_factory.mktemp("pref") / "ds", spec=SyntheticSpec(n_pairs=60, seed=7))


@pytest.mark.parametrize("style", list(STYLES))
def test_a_correct_judge_is_not_position_locked_whatever_it_writes(tmp_path, built, style, capsys):
    items = load_items(built, "judge")
    rows = [prediction_row(item, STYLES[style](item.gold), Sampling(), None) for item in items]
    assert all(r["label"] == item.gold for r, item in zip(rows, items, strict=True))
    pred = tmp_path / f"{style}.jsonl"
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "audit"
    assert main(["audit", "preference", "--data", str(built), "--judges", f"{style}={pred}", *FAST,
                 "--out", str(out)]) == 0, capsys.readouterr().err
    audit = json.loads((out / "audit.json").read_text())
    judge, full = audit["judges"][style], audit["predictors"][style]["full"]
    assert judge["order_agreement"] == 1.0 and full["waf"] == 100.0 and judge["n_ties"] == 0


def test_a_trace_is_recorded_by_its_length_and_an_unglossed_language_by_its_name():
    from omniaudit.cli.models import _judged
    from omniaudit.runners.items import JudgeItem
    from omniaudit.runners.run import _run_summary

    item = JudgeItem(id="p/ab", order="ab", prompt="Which description is more faithful? Answer A or B.",
                     options=["A", "B"], media=[])
    rows = [prediction_row(item, "<think>A or B? B.</think>\nB", Sampling(), None),
            prediction_row(item, Answer("A", reasoning="Thinking it over: A."), Sampling(), None),
            prediction_row(item, "Η απάντηση είναι η δεύτερη περιγραφή.", Sampling(), None),
            prediction_row(item, "<think>Comparing them, A is", Sampling(), None)]
    assert [r["label"] for r in rows] == ["B", "A", None, None]
    assert [r.get("unread") for r in rows] == [None, None, "language", "reasoning-only"]
    assert [r.get("reasoning_chars") for r in rows] == [10, 20, None, 20]

    class Judge:
        requests_sent = rejected = not_completions = None

    line = _judged({**_run_summary(rows, Judge(), "free"), "runs": 1, "shard": None, "items": 4})
    assert "unread: 1 language (el 1), 1 reasoning-only" in line and "3 with a reasoning trace" in line


def test_answers_read_from_a_trace_count_apart_and_can_be_left_out(tmp_path, built, capsys):
    from omniaudit.runners.rescue import read_traces

    items = load_items(built, "judge")
    rows = [prediction_row(item, f"<think>Weighing both, {item.gold} names the trembling voice. Final answer: "
                                 f"{item.gold}.</think>", Sampling(), None) for item in items]
    assert {r.get("unread") for r in rows} == {"reasoning-only"}  # unread unless asked
    assert read_traces(list(zip(rows, items, strict=True))) == len(rows)
    pred = tmp_path / "think.jsonl"
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    seen = {}
    for flag in ([], ["--exclude-extracted"]):
        out = tmp_path / f"audit{len(flag)}"
        assert main(["audit", "preference", "--data", str(built), "--judges", f"think={pred}", *FAST, *flag,
                     "--out", str(out)]) == 0, capsys.readouterr().err
        seen[bool(flag)] = json.loads((out / "audit.json").read_text())["judges"]["think"]
    assert seen[False]["p_a1_from"] == {"reasoning": len(rows)} and seen[False]["order_agreement"] == 1.0
    assert "read from the reasoning trace" in seen[False]["note"]
    assert seen[True]["p_a1_from"] == {"excluded": len(rows)} and seen[True]["n_ties"] > 0
    assert "left out (--exclude-extracted)" in seen[True]["note"]
