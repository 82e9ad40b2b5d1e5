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
def items(ffv, tmp_path_factory):
    return ffv.by_length(ffv.training_items(tmp_path_factory.mktemp("ffv")))


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


@pytest.mark.slow
def test_a_tiny_judge_trained_on_biased_pairs_is_flagged_for_position(ffv, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["find_fix_verify.py", "--steps", "20", "--workdir", str(tmp_path)])
    ffv.main()
    printed = capsys.readouterr().out
    assert printed.strip().splitlines()[-1].startswith("find_fix_verify: position=flagged/")
    card = json.loads((tmp_path / "card" / "scorecard.json").read_text(encoding="utf-8"))
    biased = card["models"]["biased"]["shortcuts"]["position"]
    assert biased["status"] == "flagged" and biased["value"] >= 0.9  # "A" learned: the slot decides
    assert set(card["baseline"]["models"]) == {"control", "remedied"}
    assert "position" in card["remedies"] and "biased" in card["remedies"]["position"]["models"]
