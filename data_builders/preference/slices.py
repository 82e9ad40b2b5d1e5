"""Folds, fold-exclusive generator priors (eq. 2) and the audit slices of the EmoPrefer shortcut audit.

Folds are shuffled 5-fold KFold (seed 42) over ALL rows in file order, before "same" rows are dropped (appendix A),
so every probe and judge shares held-out members. The prior of generator g for a pair in fold k is its win rate over
the binary pairs of the other folds: preferred appearances / all appearances. The prior's choice is the candidate with
the larger prior; ties (and generators unseen in the training folds) abstain.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

N_SPLITS = 5
FOLD_SEED = 42
LENGTH_TOLERANCE = 0.15
ABSTAIN = -1
SOURCE_PAIR_SEP = " | "


def assign_folds(n: int, n_splits: int = N_SPLITS, seed: int = FOLD_SEED) -> np.ndarray:
    """Fold index of each row, identical to ``KFold(n_splits, shuffle=True, random_state=seed).split(range(n))``."""
    if n < n_splits:
        raise ValueError(f"need at least {n_splits} rows for {n_splits}-fold cross-validation, got {n}")
    fold = np.empty(n, dtype=np.int64)
    for k, (_, test) in enumerate(KFold(n_splits, shuffle=True, random_state=seed).split(np.arange(n))):
        fold[test] = k
    return fold


def binary_label(preference: pd.Series) -> np.ndarray:
    """1 = a1 preferred, 0 = a2 preferred, -1 = same."""
    return preference.map({"a1": 1, "a2": 0, "same": ABSTAIN}).to_numpy(dtype=np.int64)


def fold_priors(gen1: np.ndarray, gen2: np.ndarray, label: np.ndarray, fold: np.ndarray) -> tuple[np.ndarray, ...]:
    """Fold-exclusive win-rate prior of both candidates' generators (NaN where unseen in the training folds)."""
    gens, codes = np.unique(np.concatenate([gen1, gen2]), return_inverse=True)
    c1, c2 = codes[: len(gen1)], codes[len(gen1):]
    binary = label >= 0
    folds = np.unique(fold)
    # wins/apps per (fold, generator) counted over that fold's own binary pairs; training folds = total - own.
    wins = np.zeros((folds.size, gens.size))
    apps = np.zeros((folds.size, gens.size))
    fidx = np.searchsorted(folds, fold)
    for codes_i, won in ((c1, label == 1), (c2, label == 0)):
        np.add.at(apps, (fidx[binary], codes_i[binary]), 1)
        np.add.at(wins, (fidx[binary], codes_i[binary]), won[binary])
    train_wins, train_apps = wins.sum(0) - wins, apps.sum(0) - apps
    with np.errstate(invalid="ignore", divide="ignore"):
        prior = np.where(train_apps > 0, train_wins / train_apps, np.nan)
    return prior[fidx, c1], prior[fidx, c2]


def prior_choice(prior1: np.ndarray, prior2: np.ndarray) -> np.ndarray:
    """1 (a1), 0 (a2) or -1 (abstain: tie or a prior that is unknown)."""
    choice = np.where(prior1 > prior2, 1, 0)
    return np.where((prior1 == prior2) | np.isnan(prior1) | np.isnan(prior2), ABSTAIN, choice)


def length_matched(len1: np.ndarray, len2: np.ndarray, tolerance: float = LENGTH_TOLERANCE) -> np.ndarray:
    """``| |d1| - |d2| | / max(|d1|, |d2|) < tolerance`` on character counts."""
    longest = np.maximum(len1, len2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(longest > 0, np.abs(len1 - len2) / longest < tolerance, True)


def win_rates(gen1: np.ndarray, gen2: np.ndarray, label: np.ndarray) -> dict[str, dict]:
    """Whole-dataset win rate per generator over binary pairs (for cards and reports, never for predictions)."""
    binary = label >= 0
    out: dict[str, dict] = {}
    for g in sorted(set(gen1[binary]) | set(gen2[binary])):
        apps = int(np.sum(gen1[binary] == g) + np.sum(gen2[binary] == g))
        wins = int(np.sum((gen1 == g) & (label == 1)) + np.sum((gen2 == g) & (label == 0)))
        out[str(g)] = {"win_rate": wins / apps, "wins": wins, "appearances": apps}
    return out


def annotate(df: pd.DataFrame, tolerance: float = LENGTH_TOLERANCE) -> pd.DataFrame:
    """Add lengths, priors, the prior's choice and slice flags to pairs that already carry a ``fold`` column."""
    out = df.copy()
    label = binary_label(out["preference"])
    gen1, gen2 = out["model1"].to_numpy(dtype=object), out["model2"].to_numpy(dtype=object)
    out["len1"] = out["a1"].str.len().astype(np.int64)
    out["len2"] = out["a2"].str.len().astype(np.int64)
    out["prior1"], out["prior2"] = fold_priors(gen1, gen2, label, out["fold"].to_numpy())
    choice = prior_choice(out["prior1"].to_numpy(), out["prior2"].to_numpy())
    out["prior_choice"] = pd.Series(choice).map({1: "a1", 0: "a2", ABSTAIN: "abstain"}).to_numpy()
    out["is_binary"] = label >= 0
    out["length_matched"] = length_matched(out["len1"].to_numpy(), out["len2"].to_numpy(), tolerance)
    out["counter_stereotypical"] = (label >= 0) & (choice >= 0) & (choice != label)
    out["same_generator"] = gen1 == gen2
    out["source_pair"] = [SOURCE_PAIR_SEP.join(sorted((a, b))) for a, b in zip(gen1, gen2, strict=True)]
    return out
