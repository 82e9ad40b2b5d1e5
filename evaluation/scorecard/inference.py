"""The scorecard's statistics: matched contrasts over clustered items, their nulls, a family-wise control per model
and three verdicts (flagged / clear / inconclusive), each with its minimum detectable effect. Pure NumPy + SciPy.

**A measure** is a linear combination of item means, ``theta = sum_j a_j * R_j`` with ``R_j`` the mean of the item
values ``y`` over the items in arm ``j`` (a rate, or a matched difference of two rates on the same clusters). Its
**null** ``theta0`` is the same combination of the items' *content-blind* values ``p0`` (what a model that does not
use the evidence has on each of these very items, e.g. ``1 / k`` for a uniform guess over ``k`` options), so a null
is computed on the items, never a constant assumed.

**Interval**: the cluster-robust linearisation (the ratio estimator's influence summed per cluster, CR1 scale
``G / (G - 1)``) with Student-t critical values on ``G - 1`` degrees of freedom. Why not the percentile bootstrap
the audits use: with 6-40 clusters it under-covers (it has no small-sample correction and resamples of 6 clusters
repeat the same few values), while the t(G-1) reference is the standard few-cluster correction (Cameron, Gelbach
& Miller 2008; Bell & McCaffrey 2002) and is checked by simulation on the defaults' cluster counts
(``tests/evaluation/scorecard/test_scorecard_calibration.py``). It is also deterministic: no resampling seed.

**Family**: every counted measure of every shortcut and stratum of one model is one family. A measure is *flagged*
when its simultaneous interval (Bonferroni at ``alpha / m``; for a one-sided measure the interval whose lower bound is
the one-sided ``alpha / m`` bound, level ``1 - 2 alpha / m``) excludes the null on the shortcut's side. Bonferroni
rather than Holm or max-T: it holds under any dependence between the measures (strata share clusters), the card's
intervals then say exactly what flagged (an interval that excludes the null *is* the flag; Holm's step-down would flag
some measures whose shown interval covers the null), and with a handful of shortcuts present at once the power lost
to Holm is small. ``ALPHA`` = 4% is split so that at most ``FWER`` = 5% of shortcut-free models get any flag
(measured, see ``ALPHA``).

**Clear** is an equivalence claim, one per cell: the one-sided 95% bound on the shortcut's side lies within the
shortcut's *minimum effect of interest* ``delta`` of the null (two one-sided tests for two-sided measures). A measure
whose interval excludes the null but which is also clear is a real effect shown to be smaller than any of interest
(significant, ``"significant": true``): it is *clear*, not flagged, so a verdict does not turn into a flag merely
because a card holds many items (a tiny model's slot-A rate of 0.53 [0.51, 0.54] on 1,000 answers is no position
lock when the minimum effect is 0.10). So *flagged* means: the interval excludes the null and the items do not rule
out an effect of interest. Neither flagged nor clear is **inconclusive**: too few items to tell.

**Power**: the minimum detectable effect (MDE) at 80% power is ``(t_crit + z_0.8) * se0``, with ``se0`` the standard
error a content-blind model has on these items (item variances ``v0``, independent draws) and ``t_crit`` the
family-wise critical value of this very model's family.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

FWER = 0.05  # the promise: at most this share of shortcut-free models get any flag
# what Bonferroni splits over a model's family: below FWER because the t reference is slightly liberal on bounded item
# values (simulated on the defaults: 0.63% per test at a nominal 0.56%, 5.3% of random models flagged when 5% is split)
ALPHA = 0.04
POWER = 0.80
EQUIVALENCE_ALPHA = 0.05  # one-sided, per cell: "clear" wrongly claimed for an effect of delta at most 5% of the time
SIDES = ("above", "outside")  # the shortcut raises the measure / moves it either way


@dataclass(frozen=True)
class Arm:
    """One item mean of a contrast: ``coef * mean(values[mask])``; ``null`` (the content-blind value of each item)
    and ``null_var`` (its variance under a content-blind draw) per item; arms with the same ``pair`` are the two sides
    of a matched difference (equal under the null)."""

    coef: float
    values: np.ndarray
    mask: np.ndarray
    null: np.ndarray
    null_var: np.ndarray
    pair: object = None


@dataclass(frozen=True)
class Contrast:
    """A measured contrast before the family decides: value, null, standard errors, clusters and items."""

    value: float
    null: float
    se: float  # what the test and interval use: the larger of the two below
    se_wald: float  # cluster-robust, residuals about the estimate
    se_score: float  # cluster-robust, residuals about the null's fit (each pair pooled, a lone arm at its null)
    se0: float  # a content-blind model's, on the same items
    clusters: int
    n: int  # items in the contrast
    arms: tuple[Arm, ...] = ()  # what it was computed from, kept so two models' contrasts can be paired
    cluster_ids: np.ndarray | None = None  # each item's cluster label (shared by two models on the same items)


def arm(values, mask, null, null_var, coef: float = 1.0, pair: object = None) -> Arm:
    """An :class:`Arm` with arrays coerced (scalars broadcast over the items)."""
    mask = np.asarray(mask, bool)
    full = lambda x: np.broadcast_to(np.asarray(x, float), mask.shape).astype(float)  # noqa: E731
    return Arm(float(coef), np.nan_to_num(full(values)), mask, full(null), full(null_var), pair)


def contrast(clusters, arms: list[Arm], score_floor: bool = True) -> Contrast | None:
    """The contrast ``sum_j coef_j * mean_j`` with its cluster-robust SEs; None when an arm has no item or fewer than
    two clusters carry items (no variance can be estimated).

    Two residuals are summed per cluster: about the estimate (Wald) and about the fit under the null (score: the
    two arms of a pair pooled, a lone arm centred at its null). The test uses the larger (``score_floor``): a Wald SE
    alone collapses when one arm of a rare event has no hit (simulated: 7-8% of shortcut-free models flagged at a
    nominal 5%), the score SE alone is not an interval about the estimate. Without ``score_floor`` the Wald SE alone:
    under a large effect on few clusters the score SE carries the effect itself and has no power."""
    codes, _ = pd.factorize(np.asarray(clusters))
    if not arms or any(not a.mask.any() for a in arms):
        return None
    used = np.zeros(len(codes), bool)
    for a in arms:
        used |= a.mask
    g = int(np.unique(codes[used]).size)
    if g < 2:
        return None
    pooled: dict[object, tuple[float, int]] = {}
    for a in arms:
        if a.pair is not None:
            num, den = pooled.get(a.pair, (0.0, 0))
            pooled[a.pair] = (num + a.values[a.mask].sum(), den + int(a.mask.sum()))
    wald, score, w0 = np.zeros(len(codes)), np.zeros(len(codes)), np.zeros(len(codes))
    value = null = 0.0
    for a in arms:
        n_j = a.mask.sum()
        r_j, r0_j = a.values[a.mask].mean(), a.null[a.mask].mean()
        centre = r0_j if a.pair is None else pooled[a.pair][0] / pooled[a.pair][1]
        value += a.coef * r_j
        null += a.coef * r0_j
        wald += np.where(a.mask, a.coef * (a.values - r_j) / n_j, 0.0)
        score += np.where(a.mask, a.coef * (a.values - centre) / n_j, 0.0)
        w0 += np.where(a.mask, a.coef / n_j, 0.0)
    se_wald, se_score = (float(np.sqrt(g / (g - 1) * np.sum(np.bincount(codes, weights=psi) ** 2)))
                         for psi in (wald, score))
    se0 = float(np.sqrt(np.sum(w0 ** 2 * _item_var(arms))))
    se = max(se_wald, se_score) if score_floor else se_wald
    return Contrast(float(value), float(null), se, se_wald, se_score, se0, g, int(used.sum()), tuple(arms),
                    np.asarray(clusters))


def _item_var(arms: list[Arm]) -> np.ndarray:
    """Per item, the content-blind variance of its value (the arms agree on an item's variance; the largest wins)."""
    out = np.zeros(len(arms[0].mask))
    for a in arms:
        out = np.where(a.mask, np.maximum(out, a.null_var), out)
    return out


def critical(side: str, df: int, level_alpha: float) -> float:
    """The t critical value of a test at ``level_alpha`` (two-sided for ``outside``)."""
    q = 1 - level_alpha / (2 if side == "outside" else 1)
    return float(sps.t.ppf(q, df))


def p_value(c: Contrast, side: str) -> float:
    """The t test's p of the null ``c.null`` against the shortcut's side."""
    diff = c.value - c.null
    if c.se <= 1e-12:  # no spread: the data say exactly where the value is
        return 0.0 if (diff > 1e-12 or (side == "outside" and diff < -1e-12)) else 1.0
    t = diff / c.se
    df = c.clusters - 1
    return float(2 * sps.t.sf(abs(t), df) if side == "outside" else sps.t.sf(t, df))


def decide(c: Contrast, side: str, delta: float, m: int, alpha: float = ALPHA) -> dict:
    """The verdict of one measure in a family of ``m``: its simultaneous CI, p (unadjusted and Bonferroni),
    flagged / clear / inconclusive (see the module docstring), the equivalence bound and the MDE at 80% power."""
    df = c.clusters - 1
    t_fw = critical(side, df, alpha / m)
    lo, hi = c.value - t_fw * c.se, c.value + t_fw * c.se
    significant = lo > c.null + 1e-12 or (side == "outside" and hi < c.null - 1e-12)
    t_eq = float(sps.t.ppf(1 - EQUIVALENCE_ALPHA, df))
    lower, upper = c.value - t_eq * c.se, c.value + t_eq * c.se
    clear = upper < c.null + delta and (side == "above" or lower > c.null - delta)
    flagged = significant and not clear  # a real effect shown to be below the minimum of interest is no finding
    p = p_value(c, side)
    return {"ci": [float(lo), float(hi)], "ci_level": 1 - (2 if side == "above" else 1) * alpha / m, "p": p,
            "p_adjusted": min(1.0, p * m), "family_size": m, "significant": bool(significant),
            "verdict": "flagged" if flagged else "clear" if clear else "inconclusive",
            "equivalence_bound": [float(lower) if side == "outside" else None, float(upper)], "delta": delta,
            "mde": mde(c.se0, c.clusters, side, m, alpha)}


def mde(se0: float, clusters: int, side: str, m: int, alpha: float = ALPHA) -> float:
    """The effect flagged with 80% power in a family of ``m`` (normal approximation around the null's SE)."""
    return float((critical(side, clusters - 1, alpha / m) + sps.norm.ppf(POWER)) * se0)
