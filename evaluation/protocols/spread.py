"""The RF placement spread (lalm-judge-protocol-shortcuts §V-C) with a CI that knows the extremes were picked late.

The spread is ``S = max_p RF_p - min_p RF_p`` over the four placements: "the gap between a judge's most- and
least-following slot". The extreme placements are chosen *after* looking at the data, so a CI that bootstraps the
difference of the two placements chosen at the point estimate (the "fixed pair") ignores the choice, and so does the
plain percentile interval of the re-chosen ``S*``: on a judge whose four placements are truly equal, ``S*`` is above
0 in every resample (coverage of the true spread 0 is nil), and the fixed pair excludes 0 for about one judge in five
(a simulation is in the tests).

:func:`rf_spread` therefore bootstraps on one resample matrix of the clips (the audit's, so the cells stay paired)
and re-chooses the extremes inside every resample:

- ``ci``: the selection-adjusted interval ``[S - c, S + c]`` (clipped to [0, 1]), with ``c`` the ``confidence``
  quantile of ``max over placement pairs (p, q) of |(RF*_p - RF*_q) - (RF_p - RF_q)|``: the worst pair is re-chosen
  in every resample. Every pairwise difference is then covered at once with the stated confidence, so the true spread
  (the largest true pairwise difference) is too, whichever placements are truly extreme;
- ``resampled``: the max-minus-min statistic itself, ``S* = max RF* - min RF*`` with its percentile interval and mean
  (``mean - value`` is the selection's upward bias), for reading, not as the CI;
- ``same_pair_share``: how often the resample picks the point estimate's (most, least) pair again, and
  ``extreme_pairs`` the share of every (most, least) pair chosen; a low share means the named placements are not
  reliably the extreme ones;
- ``fixed_pair_ci``: the naive interval, for comparison.

Ties go to the first placement in the order given (the point estimate and the resamples use the same rule).

No spread is read (``value`` None, with a ``reason``) off a judge that is not answering the reference items (their
parse rate below the judge modes' ``MIN_PARSE_RATE``) or whose placements all tie (a constant or silent judge
follows at every placement alike): no placement is then the most- or least-following one, and a zero-width
interval would read as a finding where the modes table says the judge does not answer.
"""

from __future__ import annotations

import warnings

import numpy as np

from omniaudit.evaluation.protocols.modes import MIN_PARSE_RATE
from omniaudit.evaluation.stats import percentile_ci

METHOD = ("selection-adjusted: [S - c, S + c], c the quantile of the largest deviation of any placement-pair "
          "difference from its point value, the pair re-chosen in every resample (clips resampled)")


def _finite(x: float | np.floating) -> float | None:
    return float(x) if np.isfinite(x) else None


def rf_spread(point: dict[str, float], samples: dict[str, np.ndarray], confidence: float = 0.95,
              parse_rate: float | None = None) -> dict | None:
    """Spread of the reference-follow rate over placements (see the module docstring); ``point``: placement ->
    RF, ``samples``: placement -> RF in every resample (one shared resample matrix), ``parse_rate``: the judge's
    parse rate on the attribute's reference items. None with fewer than two placements with a finite rate; no
    value (None, with a ``reason``) from a judge not answering or with every placement tied."""
    names = [p for p, v in point.items() if v is not None and np.isfinite(v)]
    if len(names) < 2:
        return None
    pt = np.array([point[p] for p in names], dtype=np.float64)
    reason = None
    if parse_rate is not None and parse_rate < MIN_PARSE_RATE:
        reason = f"not answering: reference parse rate {parse_rate:.2f} < {MIN_PARSE_RATE}"
    elif pt.max() - pt.min() <= 1e-12:
        reason = f"every placement follows alike (RF {pt[0]:.2f}): no most- or least-following placement"
    if reason:
        return {"value": None, "ci": [None, None], "most": None, "least": None, "reason": reason,
                "parse_rate": parse_rate, "placements": dict(zip(names, pt.tolist(), strict=True))}
    most, least = names[int(np.argmax(pt))], names[int(np.argmin(pt))]
    value = float(pt.max() - pt.min())
    out: dict = {"value": value, "most": most, "least": least, "placements": dict(zip(names, pt.tolist(),
                                                                                       strict=True))}
    rs = np.column_stack([np.asarray(samples[p], dtype=np.float64) for p in names])  # (resamples, placements)
    rs = rs[np.isfinite(rs).sum(axis=1) >= 2]  # a resample needs two defined placements to have a spread
    out["n_resamples_used"] = int(rs.shape[0])
    if not rs.shape[0]:
        return {**out, "ci": [None, None], "same_pair_share": None, "extreme_pairs": {},
                "resampled": {"ci": [None, None], "mean": None}, "fixed_pair_ci": [None, None], "method": METHOD}
    with warnings.catch_warnings():  # NaN placements of a resample are skipped by the nan-reductions
        warnings.simplefilter("ignore", RuntimeWarning)
        dev = np.abs((rs[:, :, None] - rs[:, None, :]) - (pt[:, None] - pt[None, :]))  # (resamples, p, q)
        c = float(np.quantile(np.nanmax(dev.reshape(len(rs), -1), axis=1), confidence))
        s_star = np.nanmax(rs, axis=1) - np.nanmin(rs, axis=1)
        hi_i = np.nanargmax(np.where(np.isnan(rs), -np.inf, rs), axis=1)
        lo_i = np.nanargmin(np.where(np.isnan(rs), np.inf, rs), axis=1)
    chosen = hi_i * len(names) + lo_i
    counts = np.bincount(chosen, minlength=len(names) ** 2)
    pairs = {f"{names[k // len(names)]} - {names[k % len(names)]}": float(counts[k] / len(rs))
             for k in np.argsort(-counts, kind="stable") if counts[k]}
    fixed = rs[:, names.index(most)] - rs[:, names.index(least)]
    return {**out, "ci": [max(0.0, value - c), min(1.0, value + c)],
            "same_pair_share": float(np.mean((hi_i == names.index(most)) & (lo_i == names.index(least)))),
            "extreme_pairs": pairs,
            "resampled": {"ci": [_finite(v) for v in percentile_ci(s_star, confidence)],
                          "mean": float(np.mean(s_star))},
            "fixed_pair_ci": [_finite(v) for v in percentile_ci(fixed, confidence)],
            "method": METHOD}
