"""Is the generator prior just verbosity? Per-generator mean length and a length-controlled win rate.

* :func:`length_by_generator`: mean character length of each generator's descriptions beside its win rate, and the
  paper's check that the wordiest generator does not simply win (EmoPrefer audit, appendix A: "the generator with the
  longest mean output wins 63%", while win rates span 32-79%).
* :func:`length_controlled_win_rates`: the length-controlled (LC) win rate of AlpacaEval 2 (Dubois et al., 2024),
  adapted from "model vs one baseline" to pairs of generators. A logistic GLM
  ``logit P(a1 preferred) = b + theta[g1] - theta[g2] + phi * tanh((l1 - l2) / sd(l1 - l2))`` is fitted on the binary
  pairs (generator strengths theta, one fixed at 0; slot intercept b; length term phi on the rescaled, squashed
  length difference, as AlpacaEval's ``tanh(length difference / std)``); the LC win rate of g is its modelled win
  rate over its own pairs with the length term (and the slot intercept) zeroed: mean of ``sigmoid(theta[g] -
  theta[h])`` over its opponents h. A generator whose raw win rate came from verbosity loses it under length
  control; one whose rate survives is preferred for something other than length.

Both are pure NumPy on arrays; the GLM is fitted by Newton's method (IRLS) with the probes' L2 strength (C = 1, the
intercept unpenalised), the objective of scikit-learn's ``LogisticRegression(C=1)`` on the same design (tested).
"""

from __future__ import annotations

import numpy as np
from scipy import stats as _sps

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


def lc_design(gen1: np.ndarray, gen2: np.ndarray, len1: np.ndarray, len2: np.ndarray,
              generators: list[str]) -> tuple[np.ndarray, float]:
    """(design matrix, length scale): columns ``+1/-1`` for the generators of slot 1 / slot 2 (all but the first
    generator, whose strength is 0), then ``tanh((l1 - l2) / sd)``; sd is the standard deviation of l1 - l2 (1 if 0).
    """
    index = {g: i for i, g in enumerate(generators)}
    n, k = len(gen1), len(generators)
    ident = np.zeros((n, k))
    rows = np.arange(n)
    np.add.at(ident, (rows, [index[g] for g in gen1]), 1.0)
    np.add.at(ident, (rows, [index[g] for g in gen2]), -1.0)
    diff = np.asarray(len1, dtype=np.float64) - np.asarray(len2, dtype=np.float64)
    scale = float(diff.std()) or 1.0
    return np.column_stack([ident[:, 1:], np.tanh(diff / scale)]), scale


def length_controlled_win_rates(gen1: np.ndarray, gen2: np.ndarray, len1: np.ndarray, len2: np.ndarray,
                                y: np.ndarray, ridge: float = RIDGE) -> dict:
    """Raw and length-controlled win rate of every generator over the binary pairs (``y``: 1 = a1 preferred).

    Returns ``generators`` (per generator: ``n`` pairs, raw ``win_rate``, ``lc_win_rate``, ``strength`` theta),
    ``length_coefficient`` phi (> 0: the longer description is preferred), ``slot_intercept`` b, ``length_scale``
    and ``n``. The LC win rate zeroes the length term and the slot intercept and keeps each generator's own opponents,
    so raw and LC rates describe the same matchups.
    """
    gen1, gen2 = np.asarray(gen1, dtype=object).astype(str), np.asarray(gen2, dtype=object).astype(str)
    y = np.asarray(y, dtype=np.int64)
    generators = sorted(set(gen1) | set(gen2))
    x, scale = lc_design(gen1, gen2, len1, len2, generators)
    beta = fit_logistic(x, y, ridge)
    theta = np.concatenate([[0.0], beta[1:len(generators)]])
    index = {g: i for i, g in enumerate(generators)}
    t1, t2 = theta[[index[g] for g in gen1]], theta[[index[g] for g in gen2]]
    p_lc = _sigmoid(t1 - t2)  # P(slot 1 preferred) with length and slot terms zeroed
    out = {}
    for g in generators:
        first, second = gen1 == g, gen2 == g
        n = int(first.sum() + second.sum())
        wins = float(y[first].sum() + (1 - y[second]).sum())
        lc = float(p_lc[first].sum() + (1 - p_lc[second]).sum())
        out[g] = {"n": n, "win_rate": wins / n if n else None, "lc_win_rate": lc / n if n else None,
                  "strength": float(theta[index[g]])}
    return {"generators": out, "length_coefficient": float(beta[-1]), "slot_intercept": float(beta[0]),
            "length_scale": scale, "n": int(y.size), "ridge": ridge,
            "model": "logit P(a1) = b + theta[g1] - theta[g2] + phi * tanh((l1 - l2) / sd); LC: b = phi = 0"}
