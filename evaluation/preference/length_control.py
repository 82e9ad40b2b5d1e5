"""Is the generator prior just verbosity? Per-generator mean length and a length-controlled win rate.

* :func:`length_by_generator`: mean character length of each generator's descriptions beside its win rate, and the
  paper's check that the wordiest generator does not simply win (EmoPrefer audit, appendix A: "the generator with the
  longest mean output wins 63%", while win rates span 32-79%).
* :func:`length_controlled_win_rates`: the length-controlled (LC) win rate of AlpacaEval 2 (Dubois et al., 2024),
  adapted from "model vs one baseline" to pairs of generators. A logistic GLM
  ``logit P(a1 preferred) = b + theta[g1] - theta[g2] + phi * tanh((l1 - l2) / sd(l1 - l2))`` is fitted on the binary
  pairs (generator strengths theta; slot intercept b; length term phi on the rescaled, squashed length difference, as
  AlpacaEval's ``tanh(length difference / std)``); the LC win rate of g is its modelled win rate over its own pairs
  with the length term (and the slot intercept) zeroed: mean of ``sigmoid(theta[g] - theta[h])`` over its opponents h.
  A generator whose raw win rate came from verbosity loses it under length control; one whose rate survives is
  preferred for something other than length. Each LC win rate has a percentile bootstrap CI over resampled pairs.

The parametrisation is symmetric: every generator has a strength column and the L2 penalty applies to all of them
(there is no reference level), so the strengths sum to zero at the optimum (the likelihood only sees differences;
the penalty's gradient along ``theta + c`` must vanish) and renaming or reordering generators changes no LC win rate.
(An earlier version dropped the first generator in sort order as an unpenalised reference; the penalty then shrank
every strength towards that one generator, and renaming generators moved LC rates by points.)

Both are pure NumPy on arrays; the GLM is fitted by Newton's method (IRLS) with the probes' L2 strength (C = 1, the
intercept unpenalised), the objective of scikit-learn's ``LogisticRegression(C=1)`` on the same design (tested). The
bootstrap refits every resample (:mod:`~omniaudit.evaluation.preference.glm_bootstrap`: batches of weighted Newton
problems, warm-started at the full fit, in blocks of resamples so memory stays bounded); the audit refits the
length- and style-controlled GLMs on one set of draws (:mod:`~omniaudit.evaluation.preference.controlled`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as _sps

from omniaudit.evaluation.preference.glm_bootstrap import RIDGE, GLMBootstrap, Matchups, bootstrap_fits, sigmoid
from omniaudit.evaluation.stats import BOOTSTRAP_SEED, N_RESAMPLES, percentile_ci


def length_by_generator(gen1: np.ndarray, gen2: np.ndarray, len1: np.ndarray, len2: np.ndarray,
                        win_rates: dict[str, float]) -> dict:
    """Mean length (characters) of each generator's descriptions, its win rate, and the wordiest-generator check.

    Lengths are averaged over every description the generator wrote in the given pairs (both slots); ``win_rates``
    are the whole-dataset win rates of the binary pairs. ``wordiest`` names the generator with the longest mean
    description, its win rate and its rank by win rate (1 = wins most); ``wordiest_wins_most`` is whether it is also
    the generator that wins most; ``spearman`` is the rank correlation of mean length and win rate across generators
    (None with fewer than three generators).
    """
    gens = np.concatenate([np.asarray(gen1, dtype=object), np.asarray(gen2, dtype=object)]).astype(str)
    lens = np.concatenate([np.asarray(len1, dtype=np.float64), np.asarray(len2, dtype=np.float64)])
    names, codes = np.unique(gens, return_inverse=True)
    counts = np.bincount(codes, minlength=names.size)
    means = np.bincount(codes, weights=lens, minlength=names.size) / np.maximum(counts, 1)
    rates = np.array([win_rates.get(g, np.nan) for g in names], dtype=np.float64)
    by_win = sorted(range(names.size), key=lambda i: (-np.nan_to_num(rates[i], nan=-1.0), names[i]))
    win_rank = {names[i]: r + 1 for r, i in enumerate(by_win)}
    wordiest = int(max(range(names.size), key=lambda i: (means[i], -i)))
    top = by_win[0]
    rho = None
    finite = np.isfinite(rates)
    if finite.sum() >= 3 and np.ptp(means[finite]) > 0 and np.ptp(rates[finite]) > 0:
        rho = float(_sps.spearmanr(means[finite], rates[finite]).statistic)
    return {
        "generators": {str(g): {"mean_length": float(means[i]), "n_descriptions": int(counts[i]),
                                "win_rate": None if not np.isfinite(rates[i]) else float(rates[i]),
                                "win_rank": win_rank[g]} for i, g in enumerate(names)},
        "wordiest": {"generator": str(names[wordiest]), "mean_length": float(means[wordiest]),
                     "win_rate": None if not np.isfinite(rates[wordiest]) else float(rates[wordiest]),
                     "win_rank": win_rank[names[wordiest]]},
        "most_winning": {"generator": str(names[top]), "win_rate": float(rates[top]) if finite[top] else None},
        "wordiest_wins_most": bool(wordiest == top),
        "win_rate_span": [float(np.nanmin(rates)), float(np.nanmax(rates))] if finite.any() else [None, None],
        "spearman": rho,
    }


def fit_logistic(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE, max_iter: int = 100,
                 tol: float = 1e-10) -> np.ndarray:
    """Penalised maximum likelihood of ``logit P(y=1) = b + x @ w`` by Newton's method; returns ``[b, *w]``.

    Objective: ``sum log-lik - ridge / 2 * |w|^2`` (intercept unpenalised), scikit-learn's ``LogisticRegression(C=1 /
    ridge)``. ``ridge = 0`` is plain maximum likelihood (diverges under separation: keep a ridge for small data).
    """
    x1 = np.column_stack([np.ones(len(x)), np.asarray(x, dtype=np.float64)])
    y = np.asarray(y, dtype=np.float64)
    penalty = np.full(x1.shape[1], float(ridge))
    penalty[0] = 0.0
    beta = np.zeros(x1.shape[1])
    for _ in range(max_iter):
        p = sigmoid(x1 @ beta)
        grad = x1.T @ (y - p) - penalty * beta
        hess = (x1 * (p * (1 - p))[:, None]).T @ x1 + np.diag(penalty)
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        beta += step
        if np.max(np.abs(step)) < tol:
            break
    return beta


# bootstrap refits of the GLM for the LC win-rate CIs: the audit's --n-resamples, as every other CI (no cap: all
# resamples' Newton steps run together as dense matrix products; the time grows with resamples x pairs)
LC_RESAMPLES = N_RESAMPLES


def lc_design(gen1: np.ndarray, gen2: np.ndarray, len1: np.ndarray, len2: np.ndarray,
              generators: list[str]) -> tuple[np.ndarray, float]:
    """(design matrix, length scale): one column per generator (``+1`` in slot 1, ``-1`` in slot 2; every generator,
    no reference level), then ``tanh((l1 - l2) / sd)``; sd is the standard deviation of l1 - l2 (1 if 0).

    The generator columns sum to zero in every row, so the unpenalised likelihood cannot tell ``theta`` from
    ``theta + c``; the L2 penalty on every column picks the sum-to-zero solution, the same whatever the order of
    ``generators``.
    """
    diff = np.asarray(len1, dtype=np.float64) - np.asarray(len2, dtype=np.float64)
    scale = float(diff.std()) or 1.0
    return np.column_stack([generator_columns(gen1, gen2, generators), np.tanh(diff / scale)]), scale


def generator_columns(gen1: np.ndarray, gen2: np.ndarray, generators: list[str]) -> np.ndarray:
    """(pairs, generators): ``+1`` for the slot-1 generator, ``-1`` for the slot-2 one (the Bradley-Terry design)."""
    index = {g: i for i, g in enumerate(generators)}
    n, k = len(gen1), len(generators)
    ident = np.zeros((n, k))
    rows = np.arange(n)
    np.add.at(ident, (rows, [index[g] for g in gen1]), 1.0)
    np.add.at(ident, (rows, [index[g] for g in gen2]), -1.0)
    return ident


def length_controlled_win_rates(gen1: np.ndarray, gen2: np.ndarray, len1: np.ndarray, len2: np.ndarray,
                                y: np.ndarray, ridge: float = RIDGE, n_resamples: int = LC_RESAMPLES,
                                seed: int = BOOTSTRAP_SEED, confidence: float = 0.95,
                                clusters: np.ndarray | None = None) -> dict:
    """Raw and length-controlled win rate of every generator over the binary pairs (``y``: 1 = a1 preferred).

    Returns ``generators`` (per generator: ``n`` pairs, raw ``win_rate``, ``lc_win_rate`` with its percentile
    bootstrap ``lc_ci``, ``strength`` theta; strengths sum to zero), ``length_coefficient`` phi (> 0: the longer
    description is preferred), ``slot_intercept`` b, ``length_scale``, ``n`` and ``bootstrap``. The LC win rate zeroes
    the length term and the slot intercept and keeps each generator's own opponents, so raw and LC rates describe the
    same matchups. Renaming or reordering generators leaves every number unchanged (symmetric L2, no reference level).

    The CI resamples pairs with replacement (``n_resamples`` seeded resamples, the draws of
    :func:`~omniaudit.evaluation.stats.resample_weight_chunks`; ``clusters`` resamples whole clusters, e.g. copies of
    a pair), refits the GLM (length scale kept) on each and recomputes every generator's LC rate over its pairs in
    that resample; a resample whose labels are all one class (no finite slot intercept) is skipped, as the WAF
    bootstrap skips them, and ``bootstrap.n_resamples`` counts the resamples used (``bootstrap.requested``: those
    drawn, the audit's ``--n-resamples``); ``n_resamples = 0`` gives no CI.
    """
    fit = lc_fit(gen1, gen2, len1, len2, y, ridge)
    (samples,) = bootstrap_fits([fit], n_resamples, seed, clusters, ridge)
    return lc_result(fit, samples, n_resamples, seed, confidence, clusters)


@dataclass
class LengthControlFit:
    """The full-data LC fit (pairs, labels, generator matchups, design, length scale, ``[b, *theta, phi]``): what
    the bootstrap refits and :func:`lc_result` reports."""

    gen1: np.ndarray
    gen2: np.ndarray
    y: np.ndarray
    matchups: Matchups
    x: np.ndarray
    scale: float
    beta: np.ndarray
    ridge: float

    def bootstrap_model(self) -> GLMBootstrap:
        """The GLM to refit per resample, keeping each resample's LC win rates (resamples, generators)."""
        k = self.matchups.k
        return GLMBootstrap(self.x, self.beta, lambda fits, counts: self.matchups.win_rates(fits[:, 1:k + 1], counts))


def lc_fit(gen1: np.ndarray, gen2: np.ndarray, len1: np.ndarray, len2: np.ndarray, y: np.ndarray,
           ridge: float = RIDGE) -> LengthControlFit:
    """The LC GLM fitted on all binary pairs (see :func:`length_controlled_win_rates`)."""
    gen1, gen2 = np.asarray(gen1, dtype=object).astype(str), np.asarray(gen2, dtype=object).astype(str)
    y = np.asarray(y, dtype=np.int64)
    matchups = Matchups(gen1, gen2)
    x, scale = lc_design(gen1, gen2, len1, len2, matchups.generators)
    return LengthControlFit(gen1, gen2, y, matchups, x, scale, fit_logistic(x, y, ridge), ridge)


def lc_result(fit: LengthControlFit, samples: np.ndarray | None, n_resamples: int, seed: int,
              confidence: float = 0.95, clusters: np.ndarray | None = None) -> dict:
    """What :func:`length_controlled_win_rates` returns, from the fit and the LC win rates of the resamples kept
    (None: no resample, no CI)."""
    gen1, gen2, y, beta, k = fit.gen1, fit.gen2, fit.y, fit.beta, fit.matchups.k
    theta = beta[1:k + 1]
    lc_point = fit.matchups.win_rates(theta, fit.matchups.counts())[0]
    samples = np.zeros((0, k)) if samples is None else samples
    samples = samples[np.isfinite(samples).any(axis=1)]
    used = int(samples.shape[0])
    lo, hi = percentile_ci(samples, confidence)
    out = {}
    for i, g in enumerate(fit.matchups.generators):
        first, second = gen1 == g, gen2 == g
        n = int(first.sum() + second.sum())
        wins = float(y[first].sum() + (1 - y[second]).sum())
        ci = [None if not np.isfinite(v) else float(v) for v in (lo[i], hi[i])]
        out[g] = {"n": n, "win_rate": wins / n if n else None, "lc_win_rate": float(lc_point[i]) if n else None,
                  "lc_ci": ci, "strength": float(theta[i])}
    return {"generators": out, "length_coefficient": float(beta[-1]), "slot_intercept": float(beta[0]),
            "length_scale": fit.scale, "n": int(y.size), "ridge": fit.ridge,
            "bootstrap": {"n_resamples": used, "requested": n_resamples, "seed": seed, "confidence": confidence,
                          "unit": "pairs" if clusters is None else "clusters",
                          "method": "percentile; GLM refitted on each resample of pairs (length scale kept); "
                                    "one-class resamples skipped"},
            "model": "logit P(a1) = b + theta[g1] - theta[g2] + phi * tanh((l1 - l2) / sd); L2 on every theta "
                     "(sum-to-zero, no reference generator); LC: b = phi = 0"}
