"""`judge --limit N` (scale issue: smoke runs): a seeded, stratified sample of whole item groups (both orders of a pair
together) of at most N items, in the selection's order, recorded in the provenance (limit and seed) so that a limited
run is never merged with, or audited as, a full one."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from omniaudit.errors import InputError
from omniaudit.predictions import check_predictions
from omniaudit.runners import run_judge
from omniaudit.runners.items import JudgeItem, load_items
from omniaudit.runners.shards import group_key, limit_positions, merge_predictions

ARGS = {"temperature": 1.0, "seed": 5, "runs": 2}


def pairs(counts: dict[str, int]) -> list[JudgeItem]:
    """Pairwise items: ``counts[condition]`` trials per condition, each asked in both orders (AB then BA)."""
    items = []
    for condition, n in counts.items():
        for t in range(n):
            items += [JudgeItem(id=f"pairwise/{condition}/{t:03d}/{o}", prompt="?", order=o, condition=condition)
                      for o in ("AB", "BA")]
    return items


def singles(counts: dict[str, int]) -> list[JudgeItem]:
    return [JudgeItem(id=f"x/{c}/{t}", prompt="?", condition=c) for c, n in counts.items() for t in range(n)]


def groups_of(items: list[JudgeItem], positions: list[int]) -> Counter:
    return Counter(group_key(items[p]) for p in positions)


# ------------------------------------------------------------------------------------------------ the sample itself
def test_the_same_seed_gives_the_same_sample():
    items = pairs({"a": 30, "b": 20, "c": 10})
    assert limit_positions(items, 24, 7) == limit_positions(items, 24, 7)
    assert limit_positions(items, 24, None) == limit_positions(items, 24, 0)  # no seed: seed 0


def test_another_seed_gives_another_sample():
    items = pairs({"a": 30, "b": 20, "c": 10})
    samples = {tuple(limit_positions(items, 24, seed)) for seed in range(5)}
    assert len(samples) == 5


def test_the_sample_is_not_the_first_items_and_keeps_the_selection_order():
    items = singles({"a": 100})
    sample = limit_positions(items, 10, 0)
    assert sample != list(range(10)) and sample == sorted(sample) and len(set(sample)) == 10


def test_groups_are_never_split_and_the_limit_counts_items():
    items = pairs({"a": 30, "b": 20, "c": 10})
    for limit in (1, 2, 7, 24, 25, 119):
        sample = limit_positions(items, limit, 3)
        assert set(groups_of(items, sample).values()) <= {2}  # both orders of every sampled trial
        assert limit - 1 <= len(sample) <= limit  # odd N: stops at the last pair that fits
    assert limit_positions(items, 1, 3) == []  # not even one pair fits


def test_every_stratum_is_represented_in_proportion():
    items = pairs({"big": 60, "mid": 30, "rare": 1})
    sample = limit_positions(items, 20, 11)
    per = Counter(items[p].condition for p in sample)
    assert set(per) == {"big", "mid", "rare"}
    assert len(sample) == 20 and per["big"] > per["mid"] > per["rare"] == 2
    # proportional: 60:30 trials -> about 2:1 of the rest
    items = singles({"a": 50, "b": 30, "c": 20})
    assert Counter(items[p].condition for p in limit_positions(items, 10, 1)) == {"a": 5, "b": 3, "c": 2}


def test_every_stratum_when_the_limit_allows_one_group_each_only():
    items = singles({c: 10 for c in "abcde"})
    assert Counter(items[p].condition for p in limit_positions(items, 5, 2)) == dict.fromkeys("abcde", 1)
    items = pairs({c: 10 for c in "abcde"})  # 5 pairs need 10 items: with 9, as many strata as fit
    assert len(limit_positions(items, 9, 2)) == 8


def test_a_limit_at_or_above_the_selection_takes_every_item():
    items = pairs({"a": 3})
    assert limit_positions(items, 6, 9) == limit_positions(items, 60, 9) == list(range(6))


# ------------------------------------------------------------------------------------------------- judge --limit N
def test_the_provenance_records_the_limit_and_the_seed(protocol_dataset, tmp_path):
    out = tmp_path / "smoke.jsonl"
    counts = run_judge(protocol_dataset, "pairwise", "scripted:random", out, limit=21, **ARGS)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    items = load_items(protocol_dataset, "pairwise")
    sample = [items[p].id for p in limit_positions(items, 21, 5)]
    assert [r["id"] for r in rows] == sample * 2 and counts["items"] == len(sample) == 20  # pairs: 20 of 21
    assert rows[0]["provenance"]["selection"] == {"conditions": None, "formats": None, "items": len(items),
                                                  "limit": 21, "limit_seed": 5}
    assert set(Counter(group_key(items[p]) for p in limit_positions(items, 21, 5)).values()) == {2}
    assert {r["provenance"]["selection"]["limit_seed"] for r in rows} == {5}
    unseeded = tmp_path / "unseeded.jsonl"
    run_judge(protocol_dataset, "pairwise", "scripted:random", unseeded, limit=21)
    row = json.loads(unseeded.read_text().splitlines()[0])
    assert row["provenance"]["selection"]["limit_seed"] == 0
    with pytest.raises(InputError, match=r"--limit 21.*--partial"):
        check_predictions(pd.read_json(out, lines=True), out, protocol_dataset, ("pairwise",))


def test_a_limit_below_every_group_is_refused(protocol_dataset, tmp_path):
    with pytest.raises(InputError, match="--limit 1 holds no whole item group"):
        run_judge(protocol_dataset, "pairwise", "scripted:random", tmp_path / "p.jsonl", limit=1)
    assert not list(tmp_path.iterdir())


def test_a_limited_run_is_never_merged_with_a_full_one(protocol_dataset, tmp_path):
    limited = [tmp_path / f"limited{i}.jsonl" for i in range(2)]
    full = [tmp_path / f"full{i}.jsonl" for i in range(2)]
    for i in range(2):
        run_judge(protocol_dataset, "blueprint", "scripted:random", limited[i], shard=(i, 2), limit=9, **ARGS)
        run_judge(protocol_dataset, "blueprint", "scripted:random", full[i], shard=(i, 2), **ARGS)
    for mixed in ([limited[0], full[1]], [full[0], limited[1]]):
        with pytest.raises(InputError, match=r"another judge run.*selection"):
            merge_predictions(tmp_path / "merged.jsonl", mixed)
        assert not (tmp_path / "merged.jsonl").exists()
    # nor joined in one file: rows of a limited and a full run of one config are two runs
    whole, smoke = tmp_path / "whole.jsonl", tmp_path / "smoke.jsonl"
    run_judge(protocol_dataset, "blueprint", "scripted:random", whole, **ARGS)
    run_judge(protocol_dataset, "blueprint", "scripted:random", smoke, limit=9, **ARGS)
    both = tmp_path / "both.jsonl"
    both.write_text(whole.read_text() + smoke.read_text())
    # (refused; the message names dataset.fingerprint, though the selection is what differs: see predictions.py)
    with pytest.raises(InputError, match="comes from another run than row 1"):
        check_predictions(pd.read_json(both, lines=True), both, protocol_dataset, ("blueprint",), partial=True)
