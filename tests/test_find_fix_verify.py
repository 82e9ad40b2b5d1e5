"""Find, fix, verify (``benchmarks/find_fix_verify.py``): its training sets are what the design says, and a reduced
run of the whole loop (three tiny judges trained by ``training/sft.py``, one scorecard with ``--baseline``) finds
the position shortcut the biased data teach."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def ffv():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import find_fix_verify

        yield find_fix_verify
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("ffv")


@pytest.fixture(scope="module")
def items(ffv, work):
    return ffv.by_length(ffv.training_items(work))


def test_the_length_labels_pick_the_longer_description_in_both_orders(ffv, items):
    for _, pair in items.groupby("pair_id"):
        if len(pair) == 2:  # the two orders of a pair name opposite letters for the same description
            assert set(pair["gold"]) == {"A", "B"}
    row = items.iloc[0]
    a, b = (row["prompt"].split(f"Description {s}: ")[1].split("\n\n")[0] for s in "AB")
    assert row["gold"] == ("A" if len(a) > len(b) else "B")


def test_position_sets_bias_balance_and_remedy_the_same_pairs(ffv, items):
    sets = ffv.position_sets(items, seed=0)
    biased, control, remedy = sets["biased"], sets["control"], sets["remedy"]
    assert (biased["gold"] == "A").all()  # the shortcut pays on every row
    assert len(control) == len(biased) and abs((control["gold"] == "A").mean() - 0.5) <= 1 / len(control)
    assert set(control["pair_id"]) == set(biased["pair_id"]) == set(remedy["pair_id"])
    both = remedy.groupby("pair_id").agg(orders=("order", frozenset), golds=("gold", frozenset))
    assert (both["orders"] == frozenset({"ab", "ba"})).all() and (both["golds"] == frozenset({"A", "B"})).all()
    assert ffv.position_sets(items, seed=0)["control"].equals(control)  # seeded


def test_style_sets_teach_length_control_it_with_neither_cue_and_remedy_with_balanced_pairs(ffv, items, work):
    balanced = ffv.source_balanced_items(work)
    sets = ffv.style_sets(items, balanced, seed=0)
    biased, control, remedy = sets["biased"], sets["control"], sets["remedy"]
    assert biased.equals(ffv.position_sets(items, seed=0)["control"])  # one set, trained once for both shortcuts
    longer = [len(d) for d in (row["messages"][0]["content"].split(f"Description {s}: ")[1].split("\n\n")[0]
                               for _, row in biased.head(1).iterrows() for s in "AB")]
    assert biased.iloc[0]["gold"] == ("A" if longer[0] > longer[1] else "B")  # length pays
    assert set(control["pair_id"]) == set(remedy["pair_id"]) == set(balanced["pair_id"])
    assert len(remedy) == 2 * len(control) and abs((control["gold"] == "A").mean() - 0.5) <= 1 / len(control)
    assert set(balanced["pair_id"]) < set(ffv.training_items(work)["pair_id"])  # a subset: winners balanced


@pytest.fixture(scope="module")
def label_sets(ffv, tmp_path_factory):
    pytest.importorskip("soundfile")
    return ffv.label_following_sets(tmp_path_factory.mktemp("ffv-labels"), seed=0)


def answer(row: dict) -> str:
    return row["messages"][-1]["content"][0]["text"]


def test_label_sets_answer_the_supplied_label_a_random_one_or_the_truth_beside_the_same_no_label_items(label_sets):
    biased, control, remedy = label_sets["biased"], label_sets["control"], label_sets["remedy"]
    assert len(biased) == len(control) == len(remedy) > 0
    labelled = [r for r in biased if r["supplied"] is not None]
    assert labelled and all(answer(r) == r["supplied"] != r["gold"] for r in labelled)  # copying always pays
    assert all(answer(r) == r["gold"] != r["supplied"] for r in remedy if r["supplied"] is not None)  # and never
    assert all(answer(r) == r["gold"] for r in control)
    supplied = [r for r in control if r["supplied"] is not None]
    k = len(supplied[0]["options"])
    hits = sum(r["supplied"] == r["gold"] for r in supplied) / len(supplied)
    assert abs(hits - 1 / k) < 0.1  # as often as chance
    for row in labelled[:5]:  # the quoted label in the prompt is the one recorded
        assert f'"{row["supplied"]}"' in row["messages"][0]["content"][1]["text"]
    assert [r["id"] for r in biased if r["supplied"] is None] == [r["id"] for r in remedy if r["supplied"] is None]


@pytest.mark.slow
def test_a_tiny_judge_trained_on_biased_pairs_is_flagged_for_position(ffv, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["find_fix_verify.py", "--shortcuts", "position", "--steps", "20", "--workdir",
                                      str(tmp_path)])
    ffv.main()
    printed = capsys.readouterr().out
    assert printed.strip().splitlines()[-1].startswith("find_fix_verify: position=flagged/")
    card = json.loads((tmp_path / "card-position" / "scorecard.json").read_text(encoding="utf-8"))
    biased = card["models"]["biased"]["shortcuts"]["position"]
    assert biased["status"] == "flagged" and biased["value"] >= 0.9  # "A" learned: the slot decides
    assert set(card["baseline"]["models"]) == {"control", "remedied"}
    assert "position" in card["remedies"] and "biased" in card["remedies"]["position"]["models"]
