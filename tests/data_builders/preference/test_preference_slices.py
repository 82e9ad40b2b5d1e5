"""Folds, fold-exclusive priors and slice flags against independent computations."""

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import KFold

from omniaudit.data_builders.preference import PreferenceBuildOptions, build_tables
from omniaudit.data_builders.preference.slices import assign_folds, length_matched
from omniaudit.evaluation.preference.probes import winrate_rule


@pytest.mark.parametrize("n", [5, 17, 600, 2096])
def test_folds_match_sklearn_kfold(n):
    fold = assign_folds(n)
    for k, (_, test) in enumerate(KFold(5, shuffle=True, random_state=42).split(np.arange(n))):
        assert np.flatnonzero(fold == k).tolist() == sorted(test.tolist())


def test_folds_assigned_before_same_rows_are_dropped(small_raw):
    pairs = build_tables(small_raw)["pairs"]
    assert (pairs["fold"].to_numpy() == assign_folds(len(small_raw))).all()
    assert (~pairs["is_binary"]).sum() == (small_raw["preference"] == "same").sum() > 0


def _loop_prior(pairs: pd.DataFrame, row: pd.Series, gen: str) -> float:
    train = pairs[(pairs["fold"] != row["fold"]) & (pairs["preference"] != "same")]
    apps = (train["model1"] == gen).sum() + (train["model2"] == gen).sum()
    wins = ((train["model1"] == gen) & (train["preference"] == "a1")).sum() + \
        ((train["model2"] == gen) & (train["preference"] == "a2")).sum()
    return wins / apps if apps else np.nan


def test_priors_are_fold_exclusive_win_rates(small_raw):
    pairs = build_tables(small_raw)["pairs"]
    for _, row in pairs.sample(60, random_state=0).iterrows():
        assert row["prior1"] == pytest.approx(_loop_prior(pairs, row, row["model1"]))
        assert row["prior2"] == pytest.approx(_loop_prior(pairs, row, row["model2"]))


def test_test_labels_never_enter_the_prior(small_raw):
    flipped = small_raw.copy()
    flipped.loc[0, "preference"] = {"a1": "a2", "a2": "a1", "same": "a1"}[flipped.loc[0, "preference"]]
    a, b = build_tables(small_raw)["pairs"], build_tables(flipped)["pairs"]
    same_fold = a["fold"] == a.loc[0, "fold"]
    np.testing.assert_array_equal(a.loc[same_fold, "prior1"], b.loc[same_fold, "prior1"])
    assert not np.allclose(a.loc[~same_fold, "prior1"], b.loc[~same_fold, "prior1"])


def test_slice_flags(small_raw):
    pairs = build_tables(small_raw)["pairs"]
    gap = (pairs["len1"] - pairs["len2"]).abs() / np.maximum(pairs["len1"], pairs["len2"])
    np.testing.assert_array_equal(pairs["length_matched"], gap < 0.15)
    assert (pairs["len1"] == small_raw["a1"].str.len()).all()
    decided = pairs["prior_choice"] != "abstain"
    counter = pairs["is_binary"] & decided & (pairs["prior_choice"] != pairs["preference"])
    np.testing.assert_array_equal(pairs["counter_stereotypical"], counter)
    ties = pairs["prior1"] == pairs["prior2"]
    assert (pairs.loc[ties, "prior_choice"] == "abstain").all()


def test_length_matched_boundary():
    assert length_matched(np.array([100, 100, 0]), np.array([86, 85, 0])).tolist() == [True, False, True]


def test_prior_ties_abstain_and_same_generator_pairs():
    raw = pd.DataFrame({"name": [f"c{i}" for i in range(10)], "model1": ["g"] * 5 + ["h"] * 5,
                        "a1": ["x"] * 10, "model2": ["g"] * 5 + ["k"] * 5, "a2": ["yy"] * 10,
                        "preference": ["a1", "a2"] * 5})
    pairs = build_tables(raw)["pairs"]
    assert pairs["same_generator"].tolist() == [True] * 5 + [False] * 5
    assert (pairs.loc[pairs["same_generator"], "prior_choice"] == "abstain").all()
    assert not pairs.loc[pairs["same_generator"], "counter_stereotypical"].any()


def test_winrate_rule_scores_zero_on_counter_stereotypical_slice(small_raw):
    pairs = build_tables(small_raw)["pairs"]
    binary = pairs[pairs["is_binary"]]
    y = (binary["preference"] == "a1").to_numpy(dtype=int)
    choice = binary["prior_choice"].map({"a1": 1, "a2": 0, "abstain": -1}).to_numpy()
    pred = winrate_rule(choice, y, binary["fold"].to_numpy())
    counter = binary["counter_stereotypical"].to_numpy()
    assert counter.sum() > 0 and (pred[counter] != y[counter]).all()


def test_remedy_configs(small_raw):
    tables = build_tables(small_raw, PreferenceBuildOptions(source_balanced=True, length_control=0.1,
                                                            dual_order=True))
    pairs = tables["pairs"]
    n_binary = int(pairs["is_binary"].sum())
    # source-balanced: within each unordered source pairing, each generator wins equally often
    sb = tables["source_balanced"]
    winner = np.where(sb["preference"] == "a1", sb["model1"], sb["model2"])
    for _, group in pd.Series(winner).groupby(sb["source_pair"].to_numpy()):
        counts = group.value_counts()
        assert len(counts) == 2 and counts.iloc[0] == counts.iloc[1]
    assert sb["is_binary"].all() and set(sb["id"]) <= set(pairs["id"])
    # strict length control
    lc = tables["length_controlled"]
    assert ((lc["len1"] - lc["len2"]).abs() / np.maximum(lc["len1"], lc["len2"]) < 0.1).all()
    # dual order: both orders, label and candidates swapped
    do = tables["dual_order"]
    assert len(do) == 2 * n_binary
    ab, ba = do[do["order"] == "ab"].set_index("pair_id"), do[do["order"] == "ba"].set_index("pair_id")
    assert (ab["a1"] == ba.loc[ab.index, "a2"]).all() and (ab["model1"] == ba.loc[ab.index, "model2"]).all()
    assert (ab["preference"] != ba.loc[ab.index, "preference"]).all()
    assert (do["preference"] == "a1").mean() == 0.5
