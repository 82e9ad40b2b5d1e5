"""Duplicate rows in a preference file: unique ids, one fold per duplicate group, counts on the card."""

import numpy as np
import pandas as pd
import pytest

from omniaudit.data_builders.preference import PreferenceBuildOptions, build_preference_dataset, build_tables
from omniaudit.data_builders.preference.build import summarize, unique_ids
from omniaudit.data_builders.preference.slices import assign_folds

SWAP = {"model1": "model2", "model2": "model1", "a1": "a2", "a2": "a1"}


def test_ids_stay_unique_when_a_name_looks_like_a_generated_id():
    ids = unique_ids(pd.Series(["x", "x", "x#0", "y", "x#1", "x"]))
    assert ids.is_unique  # the old ids were x#0, x#1, x#0, y, x#1, x#2
    assert ids.tolist() == ["x#2", "x#3", "x#0", "y", "x#1", "x#4"]
    assert unique_ids(pd.Series(["a", "b", "a"])).tolist() == ["a#0", "b", "a#1"]  # the usual case is unchanged


def _with_copies(raw: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, tuple[int, int]]]:
    """``raw`` plus an exact copy, a swapped copy (label reversed) and a whitespace/case copy of three rows, each
    chosen so that plain KFold over the rows would put the copy in another fold than its original."""
    n = len(raw) + 3
    fold = assign_folds(n)
    copies, where = [], {}
    for kind, slot in (("exact", n - 3), ("swapped", n - 2), ("near", n - 1)):
        src = next(i for i in range(len(raw)) if fold[i] != fold[slot] and i not in [w[0] for w in where.values()]
                   and raw["preference"][i] != "same")
        row = raw.iloc[[src]].copy()
        if kind == "swapped":
            row = row.rename(columns=SWAP)[raw.columns]
            row["preference"] = row["preference"].map({"a1": "a2", "a2": "a1"})
        elif kind == "near":
            row["a1"] = "  " + row["a1"].str.upper().str.replace(" ", "   ") + "\n"
        copies.append(row)
        where[kind] = (src, slot)
    return pd.concat([raw, *copies], ignore_index=True), where


def test_duplicates_share_the_fold_of_their_first_occurrence(small_raw):
    raw = small_raw.iloc[:200].reset_index(drop=True)
    data, where = _with_copies(raw)
    pairs = build_tables(data)["pairs"]
    plain = assign_folds(len(data))
    for kind, (src, copy) in where.items():
        assert plain[src] != plain[copy], kind  # plain KFold would split them (the leak)
        assert pairs["fold"][copy] == pairs["fold"][src] == plain[src], kind
        assert pairs["dedup_group"][copy] == pairs["dedup_group"][src] == pairs["id"][src], kind
    # every other row keeps the paper's KFold assignment
    others = np.setdiff1d(np.arange(len(data)), [c for _, c in where.values()])
    assert (pairs["fold"].to_numpy()[others] == plain[others]).all()
    assert pairs["id"].is_unique
    dup = summarize(pairs)["duplicates"]
    assert dup == {"exact": 2, "near": 1, "groups": 3, "conflicting_labels": 0,
                   "examples": [[pairs["id"][s], pairs["id"][c]] for s, c in sorted(where.values())]}


def test_without_duplicates_folds_are_the_papers_kfold(small_raw):
    pairs = build_tables(small_raw)["pairs"]
    assert (pairs["fold"].to_numpy() == assign_folds(len(small_raw))).all()
    assert (pairs["dedup_group"] == pairs["id"]).all()
    assert summarize(pairs)["duplicates"] == {"exact": 0, "near": 0, "groups": 0, "conflicting_labels": 0,
                                              "examples": []}


def test_conflicting_labels_and_dual_order_are_counted_right(small_raw):
    raw = small_raw.iloc[:100].reset_index(drop=True)
    i = int(np.flatnonzero(raw["preference"] == "a1")[0])
    clash = raw.iloc[[i]].assign(preference="a2")  # the same pair, the opposite label
    tables = build_tables(pd.concat([raw, clash], ignore_index=True), PreferenceBuildOptions(dual_order=True))
    assert summarize(tables["pairs"])["duplicates"]["conflicting_labels"] == 1
    # a dual_order table holds each pair in both orders by design: only the real copy is counted
    dual = summarize(tables["dual_order"])["duplicates"]
    assert dual["exact"] == 1 and dual["groups"] == 1
    both = tables["dual_order"].groupby("pair_id")["fold"].nunique()
    assert (both == 1).all()


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_card_counts_duplicates(tmp_path, small_raw, suffix):
    raw = small_raw.iloc[:60].reset_index(drop=True)
    data, _ = _with_copies(raw)
    path = tmp_path / f"prefs.{suffix}"
    if suffix == "csv":
        data.to_csv(path, index=False)
    else:
        data.to_json(path, orient="records", lines=True)
    out = build_preference_dataset(tmp_path / "ds", path)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "## Duplicate pairs" in card
    assert "| exact copies of an earlier row | 2 |" in card
    assert "| near copies (equal only after collapsing whitespace and case) | 1 |" in card
    assert "| duplicate groups | 3 |" in card
