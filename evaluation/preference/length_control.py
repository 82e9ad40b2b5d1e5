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
bootstrap refits every resample at once (a batch of weighted Newton problems, warm-started at the full fit), in
blocks of resamples so memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
from scipy import stats as _sps

from omniaudit.evaluation.stats import BOOTSTRAP_SEED, N_RESAMPLES, percentile_ci, resample_weight_chunks

RIDGE = 1.0  # 1 / C of the probes' logistic regressions


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


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


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
        p = _sigmoid(x1 @ beta)
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
LC_CHUNK_ELEMENTS = 1 << 20  # resamples x pairs handled at once (a few float64 matrices of this size)


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


def batch_design(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """(X, outer, triangle): the design with its intercept column (items x columns), and every item's ``x x^T`` as
    its upper triangle (items x columns (columns + 1) / 2, at the ``triangle`` indices), built once and shared by all
    resample blocks, so that a Newton step for a block of resamples is three dense matrix products (BLAS):
    ``W @ outer`` gives every resample's Hessian at once.

    ``outer`` is float32: the Hessian only sets the step, not the solution (the gradient, in float64, is zero at the
    fit either way), so its rounding at 1e-7 slows Newton's quadratic convergence by nothing a tolerance of 1e-6
    sees; and half the memory and time of the largest product."""
    x1 = np.column_stack([np.ones(len(x)), np.asarray(x, dtype=np.float64)])
    triangle = np.triu_indices(x1.shape[1])
    return x1, (x1[:, triangle[0]] * x1[:, triangle[1]]).astype(np.float32), triangle


def _sigmoid_inplace(z: np.ndarray) -> np.ndarray:
    """:func:`_sigmoid` overwriting ``z`` (the resample blocks are the audit's largest arrays)."""
    z *= 0.5
    np.tanh(z, out=z)
    z += 1.0
    z *= 0.5
    return z


def fit_logistic_resamples(x: np.ndarray, y: np.ndarray, weights: np.ndarray, ridge: float = RIDGE,
                           start: np.ndarray | None = None, max_iter: int = 50, tol: float = 1e-6,
                           design=None) -> np.ndarray:
    """:func:`fit_logistic` for a batch of case weights at once: row r of ``weights`` (resamples x items, e.g. the
    multiplicities of a bootstrap resample) gives ``sum_i w_ri log-lik_i - ridge / 2 * |w|^2``; returns (resamples,
    1 + columns). Equal to :func:`fit_logistic` on the resample's rows (repeated by their weights), tested. Newton
    steps for all resamples together, warm-started at ``start`` (the full-data fit); ``design``: the
    :func:`batch_design` of ``x`` when the caller has it. A resample stops once its step is below ``tol``: Newton's
    method converges quadratically, so the fit it keeps (that step applied) is off by about ``tol**2``."""
    x1, outer, triangle = design if design is not None else batch_design(x)
    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    b, p = w.shape[0], x1.shape[1]
    penalty = np.full(p, float(ridge))
    penalty[0] = 0.0
    beta = np.tile(np.zeros(p) if start is None else np.asarray(start, np.float64), (b, 1))
    active = np.ones(b, dtype=bool)
    for _ in range(max_iter):
        if not active.any():
            break
        wa, ba = w[active], beta[active]
        prob = _sigmoid_inplace(ba @ x1.T)  # (resamples, items)
        grad = (wa * (y - prob)) @ x1 - penalty * ba
        prob *= 1 - prob
        prob *= wa  # the curvature weights, in place
        hess = np.empty((len(ba), p, p))
        hess[:, triangle[0], triangle[1]] = prob.astype(np.float32) @ outer
        hess[:, triangle[1], triangle[0]] = hess[:, triangle[0], triangle[1]]
        hess += np.diag(penalty)
        try:
            step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:  # a flat direction (e.g. a generator absent from a resample): least squares
            step = (np.linalg.pinv(hess) @ grad[:, :, None])[:, :, 0]
        beta[active] = ba + step
        done = np.max(np.abs(step), axis=1) < tol
        idx = np.flatnonzero(active)
        active[idx[done]] = False
    return beta


def controlled_win_rates(theta: np.ndarray, c1: np.ndarray, c2: np.ndarray, k: int,
                         weights: np.ndarray | None = None):
    """Modelled win rate per generator (k,) or per resample and generator (B, k) from the strengths alone (every
    other term zeroed): mean of P(g beats its opponent) over g's pairs (each pair counted by its weight)."""
    th = np.atleast_2d(theta)
    p_lc = _sigmoid(th[:, c1] - th[:, c2])  # (B, n): P(slot 1 preferred), length and slot terms zeroed
    w = np.ones((1, c1.size)) if weights is None else np.atleast_2d(weights).astype(np.float64)
    first, second = np.eye(k)[c1], np.eye(k)[c2]  # (n, k) slot membership
    wins = (w * p_lc) @ first + (w * (1 - p_lc)) @ second
    count = w @ (first + second)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = wins / count
    return rates if weights is not None else rates[0]


def resampled_fits(x: np.ndarray, y: np.ndarray, start: np.ndarray, n_resamples: int, seed: int,
                   clusters: np.ndarray | None = None,
                   ridge: float = RIDGE) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The GLM refitted on bootstrap resamples of the pairs, block by block: ``(weights, fits)`` with the pair
    multiplicities (resamples x pairs) and the fits (resamples x (1 + columns)) of the resamples kept.

    Resamples are the seeded draws of :func:`~omniaudit.evaluation.stats.resample_weight_chunks` over pairs, or over
    ``clusters`` (one key per pair: its rows go together); a resample whose labels are all one class has no finite
    slot intercept and is skipped. Blocks hold at most ``LC_CHUNK_ELEMENTS`` resample x pair cells, so memory stays
    bounded; every fit is warm-started at ``start`` (the full-data fit).
    """
    codes = pd.factorize(np.asarray(clusters))[0] if clusters is not None else np.arange(y.size)
    if codes.size != y.size:
        raise ValueError(f"clusters and y differ in length: {codes.size} vs {y.size}")
    m = int(codes.max()) + 1 if codes.size else 0
    per_block = max(1, LC_CHUNK_ELEMENTS // max(y.size, 1))
    design = batch_design(x)
    for block in resample_weight_chunks(m, n_resamples, seed):
        for s0 in range(0, len(block), per_block):
            w = block[s0:s0 + per_block][:, codes].astype(np.float64)
            pos = w @ y
            both = (pos > 0) & (pos < w.sum(axis=1))
            if both.any():
                yield w[both], fit_logistic_resamples(x, y, w[both], ridge, start=start, design=design)


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
    gen1, gen2 = np.asarray(gen1, dtype=object).astype(str), np.asarray(gen2, dtype=object).astype(str)
    y = np.asarray(y, dtype=np.int64)
    generators = sorted(set(gen1) | set(gen2))
    k = len(generators)
    x, scale = lc_design(gen1, gen2, len1, len2, generators)
    beta = fit_logistic(x, y, ridge)
    theta = beta[1:k + 1]
    index = {g: i for i, g in enumerate(generators)}
    c1, c2 = np.array([index[g] for g in gen1], int), np.array([index[g] for g in gen2], int)
    lc_point = controlled_win_rates(theta, c1, c2, k)
    lo = hi = np.full(k, np.nan)
    used = 0
    if n_resamples and y.size:
        samples = [controlled_win_rates(fits[:, 1:k + 1], c1, c2, k, w)
                   for w, fits in resampled_fits(x, y, beta, n_resamples, seed, clusters, ridge)]
        samples = np.concatenate(samples) if samples else np.zeros((0, k))
        samples = samples[np.isfinite(samples).any(axis=1)]
        used = int(samples.shape[0])
        lo, hi = percentile_ci(samples, confidence)
    out = {}
    for g in generators:
        i = index[g]
        first, second = gen1 == g, gen2 == g
        n = int(first.sum() + second.sum())
        wins = float(y[first].sum() + (1 - y[second]).sum())
        ci = [None if not np.isfinite(v) else float(v) for v in (lo[i], hi[i])]
        out[g] = {"n": n, "win_rate": wins / n if n else None, "lc_win_rate": float(lc_point[i]) if n else None,
                  "lc_ci": ci, "strength": float(theta[i])}
    return {"generators": out, "length_coefficient": float(beta[-1]), "slot_intercept": float(beta[0]),
            "length_scale": scale, "n": int(y.size), "ridge": ridge,
            "bootstrap": {"n_resamples": used, "requested": n_resamples, "seed": seed, "confidence": confidence,
                          "unit": "pairs" if clusters is None else "clusters",
                          "method": "percentile; GLM refitted on each resample of pairs (length scale kept); "
                                    "one-class resamples skipped"},
            "model": "logit P(a1) = b + theta[g1] - theta[g2] + phi * tanh((l1 - l2) / sd); L2 on every theta "
                     "(sum-to-zero, no reference generator); LC: b = phi = 0"}
