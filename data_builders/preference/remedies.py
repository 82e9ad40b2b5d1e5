"""Dataset-side remedies of §6, each producing a new config from the binary pairs.

* source-balanced pairing: within each unordered source pair {g, h}, keep as many pairs won by g as won by h
  (seeded subsample of the majority), so no generator's identity predicts the winner within a pairing;
* strict length control: keep only pairs whose relative length gap is below a tolerance;
* dual-order expansion: every pair in both orders with the label reversed, for symmetric training.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from omniaudit.data_builders.preference.slices import length_matched

# Columns that belong to one candidate; everything else (lengths, priors, flags) is recomputed by annotate().
SWAP = {"model1": "model2", "model2": "model1", "a1": "a2", "a2": "a1",
        "synthetic_correct1": "synthetic_correct2", "synthetic_correct2": "synthetic_correct1"}
FLIP = {"a1": "a2", "a2": "a1"}


def _binary(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["preference"] != "same"]


def source_balanced(df: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Balance winners within each unordered source pairing (same-generator pairs: balance a1/a2 positions)."""
    binary = _binary(df)
    winner = np.where(binary["preference"] == "a1", binary["model1"], binary["model2"])
    first = np.where(binary["model1"] <= binary["model2"], binary["model1"], binary["model2"])
    same_gen = (binary["model1"] == binary["model2"]).to_numpy()
    side = np.where(same_gen, binary["preference"] == "a1", winner == first)
    rng = np.random.default_rng(seed)
    keep: list[int] = []
    for _, idx in binary.groupby("source_pair", sort=True).indices.items():
        a, b = idx[side[idx]], idx[~side[idx]]
        m = min(a.size, b.size)
        keep.extend(rng.choice(a, m, replace=False).tolist() + rng.choice(b, m, replace=False).tolist())
    return binary.iloc[np.sort(np.asarray(keep, dtype=np.int64))]


def length_controlled(df: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    binary = _binary(df)
    return binary[length_matched(binary["len1"].to_numpy(), binary["len2"].to_numpy(), tolerance)]


def dual_order(df: pd.DataFrame) -> pd.DataFrame:
    """Each binary pair as ``ab`` (as given) and ``ba`` (candidates swapped, label reversed), interleaved."""
    ab = _binary(df).copy()
    ba = ab.rename(columns=SWAP)[ab.columns].copy()
    ba["preference"] = ba["preference"].map(FLIP)
    for frame, order in ((ab, "ab"), (ba, "ba")):
        frame["pair_id"] = frame["id"]
        frame["order"] = order
        frame["id"] = frame["id"] + "/" + order
    both = pd.concat([ab, ba])
    position = np.concatenate([np.arange(len(ab)) * 2, np.arange(len(ba)) * 2 + 1])
    return both.iloc[np.argsort(position, kind="stable")]
