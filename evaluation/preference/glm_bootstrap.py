"""Bootstrap refits of the controlled Bradley-Terry GLMs (length control, style control): every resample's penalised
logistic fit by Newton's method, many resamples at once, several GLMs on one set of draws.

* :func:`fit_logistic_resamples`: the fit of :func:`~omniaudit.evaluation.preference.length_control.fit_logistic`
  for a batch of case weights (the multiplicities of bootstrap resamples), all resamples' Newton steps together as
  dense matrix products; in blocks of resamples whose work arrays stay in the CPU cache and are reused from one
  Newton step to the next (the time went to page faults and memory traffic on resamples x pairs temporaries, not to
  arithmetic);
* :class:`Matchups`: a generator's modelled win rate over its pairs needs only how often each (slot 1, slot 2)
  generator matchup is drawn, so a resample's rates come from its matchup counts (resamples x matchups), not from a
  resamples x pairs pass;
* :func:`bootstrap_glms`: the length- and style-controlled fits share the pairs, the labels and the seed, hence the
  draws: both are refitted on each block of resamples as it is drawn (one draw, one one-class check, one count of
  matchups).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from omniaudit.evaluation.stats import block_rows, resample_weight_chunks

RIDGE = 1.0  # 1 / C of the probes' logistic regressions


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def batch_design(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """(X, outer, triangle): the design with its intercept column (items x columns), and every item's ``x x^T`` as
    its upper triangle (items x columns (columns + 1) / 2, at the ``triangle`` indices), built once and shared by all
    resample blocks, so that a Newton step for a block of resamples is three dense matrix products (BLAS):
    ``W @ outer`` gives every resample's Hessian at once.

    ``outer`` is float32: the Hessian only sets the step, not the solution (the gradient, in float64, is zero at the
    fit either way), so its rounding at 1e-7 slows Newton's convergence by nothing a tolerance of 1e-5 sees; and
    half the memory and time of the largest product."""
    x1 = np.column_stack([np.ones(len(x)), np.asarray(x, dtype=np.float64)])
    triangle = np.triu_indices(x1.shape[1])
    return x1, (x1[:, triangle[0]] * x1[:, triangle[1]]).astype(np.float32), triangle


COARSE_TOL = 2e-3  # float32 Newton steps until one is below this (the next would be at float32's rounding)


def fit_logistic_resamples(x: np.ndarray, y: np.ndarray, weights: np.ndarray, ridge: float = RIDGE,
                           start: np.ndarray | None = None, max_iter: int = 50, tol: float = 1e-5,
                           design=None) -> np.ndarray:
    """``fit_logistic`` for a batch of case weights at once: row r of ``weights`` (resamples x items, e.g. the
    multiplicities of a bootstrap resample) gives ``sum_i w_ri log-lik_i - ridge / 2 * |w|^2``; returns (resamples,
    1 + columns). Equal to ``fit_logistic`` on the resample's rows (repeated by their weights), tested.

    Newton's method for a block of resamples together (dense matrix products), from ``start`` (the full-data fit;
    ``design``: the :func:`batch_design` of ``x`` when the caller has it), in three phases:

    1. the Newton step at ``start``: the gradient and Hessian there are linear in the weights, one matrix product
       for all resamples (no per-resample pass over the items);
    2. float32 Newton steps until one is below ``COARSE_TOL``: a float32 pass costs a fraction of a float64 one
       (half the memory traffic, vectorised ``tanh``), and these steps only need to point the right way;
    3. float64 steps until each resample's is below ``tol``, the first with phase 2's last Hessian, the others with
       their own: the Hessian only sets a step, the float64 gradient sets where the steps stop, so the fit is the
       float64 fit. Phase 2 leaves about 1e-6 to correct; the one step that does it lands within about 1e-3 of
       that (the Hessian's change over phase 2's last step) plus its square (Newton's quadratic convergence): on
       the audit's 2,096 pairs every fit is within 3e-10 of the converged one (1e-11 on average).
    """
    x1, outer, triangle = design if design is not None else batch_design(x)
    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    b, p = w.shape[0], x1.shape[1]
    penalty = np.full(p, float(ridge))
    penalty[0] = 0.0
    start = np.zeros(p) if start is None else np.asarray(start, np.float64)
    p0 = sigmoid(x1 @ start)  # phase 1: gradient and curvature per item at the start
    first = np.column_stack([(y - p0)[:, None] * x1, (p0 * (1 - p0))[:, None] * outer]).astype(np.float32)
    beta = np.empty((b, p))
    rows = max(1, min(b, block_rows(x1.shape[0])))
    coarse = (x1.astype(np.float32), (2 * y - 1).astype(np.float32), outer, triangle, penalty)
    for s0 in range(0, b, rows):
        wb = w[s0:s0 + rows]
        s = (wb.astype(np.float32) @ first).astype(np.float64)
        beta[s0:s0 + rows] = start + _newton_step(s[:, p:], s[:, :p] - penalty * start, triangle, penalty)
        upper = _coarse_newton(coarse, wb.astype(np.float32), beta[s0:s0 + rows], max_iter)
        _newton(x1, outer, triangle, y, wb, beta[s0:s0 + rows], penalty, max_iter, tol, upper)
    return beta


def _newton_step(upper: np.ndarray, grad: np.ndarray, triangle, penalty: np.ndarray) -> np.ndarray:
    """Per resample, the step ``H^-1 grad`` with ``H`` = the Hessian's upper triangle ``upper`` + the ridge."""
    r, p = grad.shape
    hess = np.empty((r, p, p))
    hess[:, triangle[0], triangle[1]] = upper
    hess[:, triangle[1], triangle[0]] = upper
    hess += np.diag(penalty)
    try:
        return np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:  # a flat direction (e.g. a generator absent from a resample): least squares
        return (np.linalg.pinv(hess) @ grad[:, :, None])[:, :, 0]


def _derivatives(x, y2, w, beta, penalty, outer, work, hessian: bool):
    """Per resample: the penalised log-likelihood's gradient (float64) and, if ``hessian``, the upper triangle of
    minus its Hessian without the ridge, in the precision of ``x``, ``w`` and the two work arrays ``work``
    (resamples x items, overwritten); ``y2`` is 2 y - 1. With ``t = tanh(eta / 2)``: P(y = 1) = (1 + t) / 2, so
    y - P = (y2 - t) / 2 and P (1 - P) = (1 - t^2) / 4 (one pass over the items for the sigmoid instead of four)."""
    t, tmp = work
    np.matmul((0.5 * beta).astype(t.dtype), x.T, out=t)
    np.tanh(t, out=t)
    np.subtract(y2, t, out=tmp)
    tmp *= w
    grad = 0.5 * (tmp @ x).astype(np.float64) - penalty * beta
    if not hessian:
        return grad, None
    t *= t
    np.subtract(1.0, t, out=t)
    t *= w
    return grad, 0.25 * (t.astype(np.float32, copy=False) @ outer).astype(np.float64)


def _coarse_newton(problem, w32: np.ndarray, beta: np.ndarray, max_iter: int) -> np.ndarray | None:
    """Phase 2 of :func:`fit_logistic_resamples`: float32 Newton steps for one block (``problem``: the float32
    design and 2 y - 1, the Hessian products' ``outer`` and ``triangle``, the ridge), ``beta`` updated in place;
    returns the Hessians (upper triangles) of the last step when that step was below ``COARSE_TOL``, else None (and
    ``beta`` as it came if a step was not finite: phase 3 then starts where phase 1 left off)."""
    x32, y2, outer, triangle, penalty = problem
    work, entry = (np.empty_like(w32), np.empty_like(w32)), beta.copy()
    for _ in range(max_iter):
        grad, upper = _derivatives(x32, y2, w32, beta, penalty, outer, work, hessian=True)
        step = _newton_step(upper, grad, triangle, penalty)
        if not np.isfinite(step).all():
            beta[...] = entry
            return None
        beta += step
        if np.abs(step).max() < COARSE_TOL:
            return upper
    return None


def _newton(x1, outer, triangle, y, w, beta, penalty, max_iter, tol, upper=None) -> None:
    """Phase 3 of :func:`fit_logistic_resamples`: float64 steps for one block until each resample's is below
    ``tol`` (a resample that has converged keeps its fit), ``beta`` updated in place; ``upper``: the Hessians of the
    first step (phase 2's last; later steps compute their own)."""
    work, y2 = (np.empty_like(w), np.empty_like(w)), 2 * y - 1
    active = np.ones(len(w), dtype=bool)
    for _ in range(max_iter):
        grad, fresh = _derivatives(x1, y2, w, beta, penalty, outer, work, hessian=upper is None)
        step = _newton_step(fresh if upper is None else upper, grad, triangle, penalty)
        upper = None
        step[~active] = 0.0
        beta += step
        active &= np.max(np.abs(step), axis=1) >= tol
        if not active.any():
            break


class Matchups:
    """The generators (sorted names) and every pair's (slot-1 generator, slot-2 generator) matchup, for modelled win
    rates from strengths alone.

    A generator's controlled win rate is the mean of P(g beats its opponent) over g's pairs; that probability
    depends on the matchup only, so a resample's rates need its count of each matchup (:meth:`counts`)."""

    def __init__(self, gen1: np.ndarray, gen2: np.ndarray) -> None:
        self.generators = sorted(set(gen1) | set(gen2))
        index = {g: i for i, g in enumerate(self.generators)}
        self.k = k = len(self.generators)
        self.c1 = np.array([index[g] for g in gen1], dtype=np.int64)
        self.c2 = np.array([index[g] for g in gen2], dtype=np.int64)
        codes, combos = pd.factorize(self.c1 * k + self.c2)
        combos = np.asarray(combos, dtype=np.int64)
        self.codes = codes
        self.first, self.second = combos // k, combos % k
        self.one_hot = np.eye(combos.size)[codes]  # (pairs, matchups)
        eye = np.eye(k)
        self.slot1, self.slot2 = eye[self.first], eye[self.second]  # (matchups, generators)

    def counts(self, weights: np.ndarray | None = None) -> np.ndarray:
        """(resamples, matchups): the weighted count of each matchup, (1, matchups) unweighted."""
        if weights is None:
            return np.bincount(self.codes, minlength=self.first.size)[None, :].astype(np.float64)
        return np.asarray(weights, np.float64) @ self.one_hot

    def present(self, counts: np.ndarray) -> np.ndarray:
        """(resamples, generators): whether the generator is in some pair of the resample."""
        return (counts @ (self.slot1 + self.slot2)) > 0

    def win_rates(self, theta: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """(resamples, generators): each generator's modelled win rate over its (counted) pairs from the strengths
        ``theta`` (resamples, generators) alone, every other term zeroed; NaN for a generator with no pair."""
        th = np.atleast_2d(theta)
        p = sigmoid(th[:, self.first] - th[:, self.second])  # P(slot 1 preferred) per matchup
        wins = (counts * p) @ self.slot1 + (counts * (1 - p)) @ self.slot2
        with np.errstate(invalid="ignore", divide="ignore"):
            return wins / (counts @ (self.slot1 + self.slot2))


@dataclass
class GLMBootstrap:
    """One GLM to refit on every resample: its design ``x`` (no intercept column), its full-data fit ``start``
    (``[b, *w]``, the warm start) and ``summary(fits, counts)``, the statistics kept per resample (a (resamples,
    columns) array) from the fits and the resample's :class:`Matchups` counts."""

    x: np.ndarray
    start: np.ndarray
    summary: Callable[[np.ndarray, np.ndarray], np.ndarray]


def bootstrap_glms(models: list[GLMBootstrap], y: np.ndarray, matchups: Matchups, n_resamples: int, seed: int,
                   clusters: np.ndarray | None = None, ridge: float = RIDGE) -> list[np.ndarray | None]:
    """Every model refitted on the same bootstrap resamples of the pairs; per model, its summaries of the resamples
    kept (stacked), or None when none was kept.

    Resamples are the seeded draws of :func:`~omniaudit.evaluation.stats.resample_weight_chunks` over pairs, or over
    ``clusters`` (one key per pair: its rows go together), drawn in blocks of
    :func:`~omniaudit.evaluation.stats.block_rows` resamples (the same draws whatever the block size: a block's work
    arrays stay in the CPU cache, and memory bounded); a resample whose labels are all one class has no finite slot
    intercept and is skipped; every fit is warm-started at its model's full-data fit.
    """
    y = np.asarray(y, dtype=np.float64)
    codes = pd.factorize(np.asarray(clusters))[0] if clusters is not None else None
    if codes is not None and codes.size != y.size:
        raise ValueError(f"clusters and y differ in length: {codes.size} vs {y.size}")
    m = int(codes.max()) + 1 if codes is not None and codes.size else y.size
    designs = [batch_design(model.x) for model in models]
    kept: list[list[np.ndarray]] = [[] for _ in models]
    for block in resample_weight_chunks(m, n_resamples, seed):
        w = (block if codes is None else block[:, codes]).astype(np.float64)
        pos = w @ y
        both = (pos > 0) & (pos < w.sum(axis=1))
        if not both.all():
            w = w[both]
        if not len(w):
            continue
        counts = matchups.counts(w)
        for model, design, out in zip(models, designs, kept, strict=True):
            fits = fit_logistic_resamples(model.x, y, w, ridge, start=model.start, design=design)
            out.append(model.summary(fits, counts))
    return [np.concatenate(out) if out else None for out in kept]


def bootstrap_fits(fits: list, n_resamples: int, seed: int, clusters: np.ndarray | None = None,
                   ridge: float = RIDGE) -> list[np.ndarray | None]:
    """:func:`bootstrap_glms` of full-data fits of the same pairs (each with ``y``, ``matchups`` and
    ``bootstrap_model()``); a None per fit where no resample is asked for or there are no pairs."""
    first = fits[0]
    if not (n_resamples and first.y.size):
        return [None] * len(fits)
    return bootstrap_glms([fit.bootstrap_model() for fit in fits], first.y, first.matchups, n_resamples, seed,
                          clusters, ridge)
