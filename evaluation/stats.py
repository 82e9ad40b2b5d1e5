"""Pure NumPy statistics for audits: two-class WAF, bootstrap CIs, exact McNemar, prior-following.

Binary labels are encoded as integers, 1 = "a1 preferred" and 0 = "a2 preferred". Everything is vectorised: a
bootstrap is one (resamples x items) count matrix, never a Python loop per resample.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy import stats as _sps

N_RESAMPLES = 2000
BOOTSTRAP_SEED = 0


def _as_binary(name: str, values: np.ndarray) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    if arr.size and not np.isin(arr, (0, 1)).all():
        raise ValueError(f"{name}: expected binary labels 0/1, found {sorted(set(np.unique(arr).tolist()))[:5]}")
    return arr.astype(np.int64)


def confusion_cells(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    """Per-item confusion cell 0..3 = 2*true + pred (0: tn, 1: fp, 2: fn, 3: tp for class 1)."""
    y_true, y_pred = _as_binary("y_true", y_true), _as_binary("y_pred", y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred differ in length: {y_true.size} vs {y_pred.size}")
    return 2 * y_true + y_pred


def waf_from_confusion(conf: np.ndarray) -> np.ndarray:
    """Two-class support-weighted F1 in percent from confusion counts [..., (tn, fp, fn, tp)].

    Matches ``sklearn.metrics.f1_score(average="weighted", labels=[0, 1])`` with zero_division=0.
    """
    conf = np.asarray(conf, dtype=np.float64)
    tn, fp, fn, tp = conf[..., 0], conf[..., 1], conf[..., 2], conf[..., 3]
    with np.errstate(invalid="ignore", divide="ignore"):
        f1_pos = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
        f1_neg = np.where(2 * tn + fp + fn > 0, 2 * tn / (2 * tn + fp + fn), 0.0)
        total = tn + fp + fn + tp
        out = 100.0 * ((tp + fn) * f1_pos + (tn + fp) * f1_neg) / total
    return np.where(total > 0, out, np.nan)


def confusion(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    return np.bincount(confusion_cells(y_true, y_pred), minlength=4)


def waf(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Two-class weighted F1 in percent ("same" items must already be excluded)."""
    return float(waf_from_confusion(confusion(y_true, y_pred)))


def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    conf = confusion(y_true, y_pred)
    return float((conf[0] + conf[3]) / conf.sum()) if conf.sum() else float("nan")


def resample_weights(n: int, n_resamples: int = N_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """(n_resamples, n) multiplicities of each item in each resample drawn with replacement.

    Resample r takes items ``rng.integers(0, n, size=(n_resamples, n))[r]``; any additive statistic of a resample is
    then ``weights @ per_item_values``. Memory is n_resamples x n; audits use :func:`resample_weight_chunks`.
    """
    chunks = list(resample_weight_chunks(n, n_resamples, seed))
    return np.concatenate(chunks) if chunks else np.zeros((0, n), dtype=np.int64)


# resamples x items drawn at once: 2 MiB per int64 block, so that a block and the products over it stay in the CPU
# cache (a 32 MiB block spent more time on memory traffic and page faults than on arithmetic) ...
BOOTSTRAP_CHUNK_ELEMENTS = 1 << 18
# ... but at least this many resamples per block: a block's products read every item's values once (at 150,000
# items, one resample per block read them 2,000 times)
MIN_BLOCK_ROWS = 32


def block_rows(n: int, chunk_elements: int | None = None) -> int:
    """Resamples per block of :func:`resample_weight_chunks` over ``n`` items: ``chunk_elements`` cells (default:
    ``BOOTSTRAP_CHUNK_ELEMENTS``, and at least ``MIN_BLOCK_ROWS`` resamples)."""
    if chunk_elements is not None:
        return max(1, chunk_elements // max(n, 1))
    return max(MIN_BLOCK_ROWS, BOOTSTRAP_CHUNK_ELEMENTS // max(n, 1))


def resample_weight_chunks(n: int, n_resamples: int = N_RESAMPLES, seed: int = BOOTSTRAP_SEED,
                           chunk_elements: int | None = None) -> Iterator[np.ndarray]:
    """The rows of :func:`resample_weights` in consecutive blocks of at most ``chunk_elements`` cells (default:
    :func:`block_rows`).

    The blocks are the same draws (one generator, consumed in order: ``integers`` of a (c1 + c2, n) shape equals a
    (c1, n) draw followed by a (c2, n) draw), so a statistic summed block by block equals the one-matrix result while
    memory stays bounded by the block size, not by resamples x items.
    """
    rng = np.random.default_rng(seed)
    rows = block_rows(n, chunk_elements)
    for start in range(0, n_resamples, rows):
        c = min(rows, n_resamples - start)
        idx = rng.integers(0, n, size=(c, n)) if n else np.zeros((c, 0), dtype=np.int64)
        idx += n * np.arange(c)[:, None]
        yield np.bincount(idx.ravel(), minlength=c * n).reshape(c, n)


def resample_indices(n: int, n_resamples: int = N_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """The item indices behind :func:`resample_weights` (for reference implementations and tests)."""
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))


@dataclass(frozen=True)
class Estimate:
    value: float
    ci: tuple[float, float]
    n: int
    n_resamples_used: int


TIE = 0.5  # a decision that picks neither candidate: scored half for each class (see ``decide_with_ties``)


def confusion_weights(y_true: np.ndarray, share_a1: np.ndarray) -> np.ndarray:
    """(n, 4) confusion weights (tn, fp, fn, tp) per item from the share of the decision given to class 1.

    ``share_a1`` is 1 (a1), 0 (a2) or 0.5 (a tie); a binary decision is one-hot, a tie counts half in each cell of
    its row, which is the expected confusion of a fair coin (and equals scoring each of the two presentation orders of
    a position-locked judge as a trial of its own). Metrics linear in the cells (accuracy, prior-following) are then
    a fair coin's expected score exactly; WAF is not linear: :func:`waf_from_confusion` of these cells is the WAF of
    the coin's expected confusion, which exceeds the coin's expected WAF by O(1/n) (one tied pair: 66.7 vs 50; ten:
    52.1 vs 50.7; 100: 50.08 vs 49.95).
    """
    y_true = _as_binary("y_true", y_true)
    q = np.asarray(share_a1, dtype=np.float64)
    if q.shape != y_true.shape:
        raise ValueError(f"y_true and y_pred differ in length: {y_true.size} vs {q.size}")
    if q.size and not np.isin(q, (0.0, TIE, 1.0)).all():
        raise ValueError(f"y_pred: expected decisions 0, 0.5 (tie) or 1, found {sorted(set(np.unique(q)))[:5]}")
    out = np.zeros((y_true.size, 4))
    pos = y_true == 1
    out[~pos, 0], out[~pos, 1] = 1 - q[~pos], q[~pos]
    out[pos, 2], out[pos, 3] = 1 - q[pos], q[pos]
    return out


def bootstrap_waf(
    y_true: np.ndarray,
    preds: np.ndarray,
    n_resamples: int = N_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = 0.95,
    clusters: np.ndarray | None = None,
) -> list[Estimate]:
    """WAF and percentile bootstrap CI for one or several predictors on the same items.

    ``preds`` is (n,) or (k, n) of decisions 0/1, or 0.5 for a tie (half in each class, see
    :func:`confusion_weights`). All predictors share the same resamples (seeded), so their CIs are comparable.
    Resamples whose gold labels hold a single class are skipped, as in the paper. ``clusters`` (one key per item)
    resamples whole clusters instead of items, e.g. both presentation orders of a source pair in a dual-order table:
    items of one cluster are not independent, so resampling them separately would make the CI too narrow. Without
    ``clusters`` (or with one cluster per item) the resamples are exactly those of :func:`resample_indices`.
    Memory is bounded (resamples are drawn in blocks, :func:`resample_weight_chunks`), not resamples x items.
    """
    point, samples, n = waf_resamples(y_true, preds, n_resamples, seed, clusters)
    lo_q, hi_q = 50 * (1 - confidence), 50 * (1 + confidence)
    out = []
    for k in range(point.size):
        vals = samples[:, k]
        lo, hi = np.percentile(vals, [lo_q, hi_q]) if vals.size else (np.nan, np.nan)
        out.append(Estimate(float(point[k]), (float(lo), float(hi)), n, int(samples.shape[0])))
    return out


def waf_resamples(y_true: np.ndarray, preds: np.ndarray, n_resamples: int = N_RESAMPLES, seed: int = BOOTSTRAP_SEED,
                  clusters: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """(point WAF (k,), WAF of every kept resample (kept, k), n items) behind :func:`bootstrap_waf`.

    All k predictors are scored on the same resamples, so a difference of two columns is a paired bootstrap of the
    WAF difference (:func:`paired_waf_difference`).
    """
    y_true = _as_binary("y_true", y_true)
    preds2 = np.atleast_2d(np.asarray(preds))
    n, k = y_true.size, len(preds2)
    weights_k = np.stack([confusion_weights(y_true, p) for p in preds2])  # (k, n, 4)
    point = waf_from_confusion(weights_k.sum(axis=1))
    if n == 0 or n_resamples == 0:  # no items, or no CI asked for
        return point, np.zeros((0, k)), n
    cells = np.concatenate(list(weights_k), axis=1)  # (n, 4k): all predictors in one product
    sizes, positives = np.ones(n), y_true.astype(np.float64)
    if clusters is not None:
        import pandas as pd

        codes = pd.factorize(np.asarray(clusters))[0]
        if codes.size != n:
            raise ValueError(f"clusters and y_true differ in length: {codes.size} vs {n}")
        m = int(codes.max()) + 1
        sizes, positives = np.bincount(codes, minlength=m).astype(np.float64), np.bincount(codes, positives, m)
        summed = np.zeros((m, cells.shape[1]))
        np.add.at(summed, codes, cells)
        cells = summed
    blocks = []
    for weights in resample_weight_chunks(sizes.size, n_resamples, seed):
        weights = weights.astype(np.float64)
        pos_support, total = weights @ positives, weights @ sizes
        keep = (pos_support > 0) & (pos_support < total)
        conf = (weights[keep] @ cells).reshape(int(keep.sum()), k, 4)
        blocks.append(waf_from_confusion(conf))
    return point, np.concatenate(blocks), n


def waf_against_null(y_true: np.ndarray, preds: np.ndarray, n_resamples: int = N_RESAMPLES,
                     seed: int = BOOTSTRAP_SEED, confidence: float = 0.95,
                     clusters: np.ndarray | None = None) -> tuple[list[Estimate], float, list[dict]]:
    """WAF of each predictor, the content-blind null and each predictor's paired difference from it, on one set of
    resamples.

    The null is the WAF of a judge with no information on these very items: a tie on every item (half credit for each
    class, :func:`confusion_weights`). It is not 50: with unbalanced gold labels it is above 50 (52.7 on 16 of 22 a1),
    and a percentile CI of a judge that ties everywhere then never reaches below 50, so "CI above 50" would call it
    informed. The difference from the null is paired (the same resamples), so that judge's is 0 on every resample.
    Returns ``(estimates, null WAF, [{value, ci, n_resamples_used}, ...])``, WAF points in percent.
    """
    preds2 = np.atleast_2d(np.asarray(preds, dtype=np.float64))
    stacked = np.vstack([preds2, np.full((1, preds2.shape[1]), 0.5)])
    point, samples, n = waf_resamples(y_true, stacked, n_resamples, seed, clusters)
    lo_q, hi_q = 50 * (1 - confidence), 50 * (1 + confidence)
    estimates, differences = [], []
    for k in range(len(preds2)):
        vals, diff = samples[:, k], samples[:, k] - samples[:, -1]
        lo, hi = np.percentile(vals, [lo_q, hi_q]) if vals.size else (np.nan, np.nan)
        estimates.append(Estimate(float(point[k]), (float(lo), float(hi)), n, int(samples.shape[0])))
        dlo, dhi = np.percentile(diff, [lo_q, hi_q]) if diff.size else (np.nan, np.nan)
        differences.append({"value": float(point[k] - point[-1]), "ci": [float(dlo), float(dhi)],
                            "n_resamples_used": int(diff.size)})
    return estimates, float(point[-1]), differences


def paired_waf_difference(y_true: np.ndarray, pred_a: np.ndarray, pred_b: np.ndarray,
                          n_resamples: int = N_RESAMPLES, seed: int = BOOTSTRAP_SEED, confidence: float = 0.95,
                          clusters: np.ndarray | None = None) -> dict:
    """WAF(a) - WAF(b) on the same items with a paired percentile bootstrap CI.

    Both predictors are rescored on every resample (the resamples of :func:`bootstrap_waf`, clusters kept together)
    and the interval is taken over the per-resample differences, so the pairing of the two predictions on one item is
    kept. Overlapping marginal CIs are not a paired test; this interval is. Returns ``{value, ci: [lo, hi], n,
    n_resamples_used}`` (WAF points, percent).
    """
    point, samples, n = waf_resamples(y_true, np.stack([np.asarray(pred_a), np.asarray(pred_b)]), n_resamples,
                                      seed, clusters)
    diff = samples[:, 0] - samples[:, 1]
    lo_q, hi_q = 50 * (1 - confidence), 50 * (1 + confidence)
    lo, hi = np.percentile(diff, [lo_q, hi_q]) if diff.size else (np.nan, np.nan)
    return {"value": float(point[0] - point[1]), "ci": [float(lo), float(hi)], "n": n,
            "n_resamples_used": int(diff.size)}


def mcnemar_exact_p(b: np.ndarray | int, c: np.ndarray | int) -> np.ndarray | float:
    """Two-sided exact McNemar: ``min(1, 2 P[X <= min(b, c)])``, X ~ Binomial(b + c, 1/2); 1 when b + c = 0."""
    b_arr, c_arr = np.asarray(b), np.asarray(c)
    p = np.minimum(1.0, 2.0 * _sps.binom.cdf(np.minimum(b_arr, c_arr), b_arr + c_arr, 0.5))
    p = np.where(b_arr + c_arr == 0, 1.0, p)
    return float(p) if p.ndim == 0 else p


def mcnemar_exact(correct_a: np.ndarray, correct_b: np.ndarray) -> dict:
    """Paired exact McNemar on two boolean indicator vectors (e.g. "judge A correct", "judge B correct").

    ``b`` counts items only A has, ``c`` items only B has; agreements do not enter the test.
    """
    a, bb = np.asarray(correct_a, dtype=bool), np.asarray(correct_b, dtype=bool)
    if a.shape != bb.shape:
        raise ValueError(f"McNemar needs paired indicators of equal length: {a.size} vs {bb.size}")
    b, c = int(np.sum(a & ~bb)), int(np.sum(~a & bb))
    return {"b": b, "c": c, "p": float(mcnemar_exact_p(b, c))}


def prior_following(y_pred: np.ndarray, prior: np.ndarray) -> float:
    """Fraction of decisions equal to the prior's choice, over items where the prior does not abstain (-1).

    On the counter-stereotypical slice (label opposite to the prior) this is the paper's prior-following rate. A tie
    (0.5) follows the prior half.
    """
    y_pred, prior = np.asarray(y_pred, dtype=np.float64), np.asarray(prior)
    decided = prior >= 0
    follows = np.where(prior == 1, y_pred, 1.0 - y_pred)
    return float(np.mean(follows[decided])) if decided.any() else float("nan")


def mean_sd(values: np.ndarray) -> dict:
    values = np.asarray(values, dtype=np.float64)
    return {"mean": float(values.mean()), "sd": float(values.std(ddof=1)) if values.size > 1 else 0.0}


def decide(p_a1: np.ndarray) -> np.ndarray:
    """Decision from P(a1 preferred): a1 (1) when p >= 0.5, else a2 (0); the one threshold used everywhere.

    p = 0.5 exactly is no preference; audits that score judges use :func:`decide_with_ties` so that it is not
    silently counted as a1."""
    return (np.asarray(p_a1, dtype=np.float64) >= 0.5).astype(np.int64)


TIE_TOLERANCE = 1e-9


def decide_with_ties(p_a1: np.ndarray) -> np.ndarray:
    """Decision from P(a1 preferred) with ties kept: 1.0 (a1) above 0.5, 0.0 (a2) below, 0.5 (tie) at 0.5.

    A tie is a judge with no preference between the candidates: e.g. a position-locked judge that picks the first slot
    in both presentation orders (a1 in one, a2 in the other, averaging to 0.5). Thresholding would make it "always
    a1", i.e. a judge of the majority class when a1 is the majority. Ties are scored half for each class instead
    (:func:`confusion_weights`): the confusion a fair coin gives in expectation, with no seed and no class favoured.
    Accuracy and prior-following are then exactly a fair coin's expected score; WAF is the WAF of that expected
    confusion, slightly above a coin's expected WAF on small slices (O(1/n); 66.7 vs 50 for one tied pair).
    ``|p - 0.5| <= TIE_TOLERANCE`` counts as a tie, so that averaged orders such as (0.7 + 0.3) / 2 do.
    """
    p = np.asarray(p_a1, dtype=np.float64)
    return np.where(np.abs(p - 0.5) <= TIE_TOLERANCE, TIE, (p > 0.5).astype(np.float64))


def cluster_ratio_resamples(num: np.ndarray, den: np.ndarray, n_resamples: int = N_RESAMPLES,
                            seed: int = BOOTSTRAP_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Ratio statistics and their cluster-bootstrap resamples.

    ``num`` and ``den`` are (k, clusters): per-cluster sums for k ratio statistics (e.g. correct answers and answers
    per source clip). Clusters are resampled with replacement (seeded, shared by all k statistics, so derived
    quantities such as differences keep their pairing). Returns the point ratios (k,) and the resampled ratios
    (n_resamples, k); a resample whose denominator is 0 gives NaN for that statistic.
    """
    num, den = np.atleast_2d(np.asarray(num, np.float64)), np.atleast_2d(np.asarray(den, np.float64))
    if num.shape != den.shape:
        raise ValueError(f"num and den differ in shape: {num.shape} vs {den.shape}")
    with np.errstate(invalid="ignore", divide="ignore"):
        point = num.sum(axis=1) / den.sum(axis=1)
        if num.shape[1] == 0 or n_resamples == 0:
            return point, np.full((0, num.shape[0]), np.nan)
        blocks = [(w @ num.T) / (w @ den.T) for w in
                  (w.astype(np.float64) for w in resample_weight_chunks(num.shape[1], n_resamples, seed))]
        return point, np.concatenate(blocks)


def percentile_ci(samples: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval over axis 0, ignoring NaN resamples (all-NaN columns give NaN)."""
    samples = np.asarray(samples, np.float64)
    if samples.shape[0] == 0:
        nan = np.full(samples.shape[1:], np.nan)
        return nan, nan
    lo_q, hi_q = 50 * (1 - confidence), 50 * (1 + confidence)
    with warnings.catch_warnings():  # an all-NaN column (statistic never defined) is a NaN interval, not an error
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(samples, [lo_q, hi_q], axis=0)
    return lo, hi


class ClusterRatios:
    """Named ratio statistics (rates, means) over clustered items, bootstrapped together by cluster.

    Each statistic is a per-cluster numerator and denominator sum; all share one resample matrix, so derived
    quantities (differences, averages of two rates) keep their pairing.
    """

    def __init__(self, clusters: np.ndarray) -> None:
        import pandas as pd

        self.codes = pd.factorize(np.asarray(clusters))[0]
        self.n = int(self.codes.max()) + 1 if self.codes.size else 0
        self.keys: list = []
        self.num: list[np.ndarray] = []
        self.den: list[np.ndarray] = []

    def add_weighted(self, key, values: np.ndarray, mask: np.ndarray) -> None:
        """Mean of ``values`` over the items in ``mask``."""
        self.keys.append(key)
        self.num.append(np.bincount(self.codes, weights=np.where(mask, values, 0.0), minlength=self.n))
        self.den.append(np.bincount(self.codes, weights=np.asarray(mask, float), minlength=self.n))

    def add(self, key, hits: np.ndarray, mask: np.ndarray) -> None:
        """Rate of ``hits`` among the items in ``mask``."""
        self.add_weighted(key, np.asarray(hits & mask, float), mask)

    def resample(self, n_resamples: int = N_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[dict, dict, dict]:
        """(point value, resampled values (n_resamples,), item count) per key."""
        if not self.keys:
            return {}, {}, {}
        point, samples = cluster_ratio_resamples(np.array(self.num), np.array(self.den), n_resamples, seed)
        return (dict(zip(self.keys, point, strict=True)), {k: samples[:, i] for i, k in enumerate(self.keys)},
                {k: int(d.sum()) for k, d in zip(self.keys, self.den, strict=True)})


def estimate(point: float, samples: np.ndarray, n: int, scale: float = 1.0, confidence: float = 0.95) -> dict:
    """``{value, ci: [lo, hi], n}`` with a percentile interval; non-finite values become None."""
    lo, hi = percentile_ci(samples, confidence)
    val = lambda x: None if x is None or not np.isfinite(x) else float(scale * x)  # noqa: E731
    return {"value": val(point), "ci": [val(lo), val(hi)], "n": n}
