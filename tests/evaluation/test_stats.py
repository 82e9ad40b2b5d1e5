"""Metrics against independent references: scikit-learn f1_score, SciPy binomtest, numbers printed in the paper."""

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import f1_score

from omniaudit.evaluation import stats


@pytest.mark.parametrize("seed", range(8))
def test_waf_matches_sklearn_weighted_f1(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    y, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    expected = 100 * f1_score(y, p, average="weighted", labels=[0, 1], zero_division=0)
    assert stats.waf(y, p) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("y", "p"), [([1, 1, 1], [1, 1, 1]), ([1, 1, 0], [0, 0, 0]), ([0, 0], [1, 1]),
                                      ([1, 0, 1, 0], [1, 0, 1, 0]), ([1, 0, 1, 0], [0, 1, 0, 1])])
def test_waf_edge_cases_match_sklearn(y, p):
    expected = 100 * f1_score(y, p, average="weighted", labels=[0, 1], zero_division=0)
    assert stats.waf(np.array(y), np.array(p)) == pytest.approx(expected)


def test_waf_rejects_non_binary_labels():
    with pytest.raises(ValueError, match="binary"):
        stats.waf(np.array([0, 1, 2]), np.array([0, 1, 1]))


def test_bootstrap_equals_naive_sklearn_loop_on_same_resamples():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 150)
    preds = np.stack([rng.integers(0, 2, 150), y ^ (rng.random(150) < 0.2)])
    estimates = stats.bootstrap_waf(y, preds, n_resamples=400, seed=5)
    idx = stats.resample_indices(150, 400, seed=5)
    for est, p in zip(estimates, preds, strict=True):
        vals = [100 * f1_score(y[i], p[i], average="weighted", labels=[0, 1], zero_division=0)
                for i in idx if 0 < y[i].sum() < 150]
        assert est.value == pytest.approx(stats.waf(y, p))
        assert est.ci == pytest.approx(tuple(np.percentile(vals, [2.5, 97.5])), abs=1e-9)
        assert est.n_resamples_used == len(vals)


def test_bootstrap_skips_one_class_resamples():
    y = np.array([1] * 9 + [0])  # many resamples miss the single negative
    est = stats.bootstrap_waf(y, y, n_resamples=500, seed=0)[0]
    idx = stats.resample_indices(10, 500, seed=0)
    assert est.n_resamples_used == int(np.sum(y[idx].sum(axis=1) < 10))
    assert 0 < est.n_resamples_used < 500
    assert est.ci == (100.0, 100.0)


def test_bootstrap_is_deterministic_per_seed():
    rng = np.random.default_rng(2)
    y, p = rng.integers(0, 2, 80), rng.integers(0, 2, 80)
    a, b = stats.bootstrap_waf(y, p, seed=0)[0], stats.bootstrap_waf(y, p, seed=0)[0]
    c = stats.bootstrap_waf(y, p, seed=1)[0]
    assert a == b and a.ci != c.ci


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (5, 5), (38, 37), (14, 13), (3, 17), (60, 20), (0, 30)])
def test_mcnemar_matches_scipy_binomtest(b, c):
    expected = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue
    assert stats.mcnemar_exact_p(b, c) == pytest.approx(expected, rel=1e-9)


def test_mcnemar_paper_table3_values():
    # Appendix A, Table 3: discordant 38/37, 14/13 and 18/17 all give exact p = 1.00.
    for b, c in [(38, 37), (14, 13), (18, 17)]:
        assert round(stats.mcnemar_exact_p(b, c), 2) == 1.00


def test_mcnemar_counts_only_discordant_pairs():
    a = np.array([1, 1, 0, 0, 1, 1], dtype=bool)
    b = np.array([1, 0, 1, 0, 0, 0], dtype=bool)
    out = stats.mcnemar_exact(a, b)
    assert (out["b"], out["c"]) == (3, 1)
    assert out["p"] == pytest.approx(binomtest(1, 4, 0.5).pvalue)


def test_mcnemar_vectorised():
    b, c = np.array([1, 10, 38]), np.array([0, 2, 37])
    expected = [binomtest(int(x), int(x + y), 0.5).pvalue for x, y in zip(b, c, strict=True)]
    np.testing.assert_allclose(stats.mcnemar_exact_p(b, c), expected)


def test_prior_following_ignores_abstentions():
    pred = np.array([1, 0, 1, 1])
    prior = np.array([1, 1, -1, 0])
    assert stats.prior_following(pred, prior) == pytest.approx(1 / 3)
    assert np.isnan(stats.prior_following(pred, np.full(4, -1)))


def test_decide_threshold():
    assert stats.decide(np.array([0.49, 0.5, 0.51])).tolist() == [0, 1, 1]


# ------------------------------------------------------------------ bounded-memory bootstrap, paired WAF difference
@pytest.mark.parametrize(("n", "chunk"), [(37, 100), (150, 1), (150, 151), (5, 10**9)])
def test_resample_weight_chunks_are_the_one_matrix_draws(n, chunk):
    full = np.stack([np.bincount(i, minlength=n) for i in stats.resample_indices(n, 333, seed=4)])
    blocks = list(stats.resample_weight_chunks(n, 333, seed=4, chunk_elements=chunk))
    assert all(b.size <= max(chunk, n) for b in blocks)
    np.testing.assert_array_equal(np.concatenate(blocks), full)
    np.testing.assert_array_equal(stats.resample_weights(n, 333, seed=4), full)


def test_chunked_bootstrap_is_unchanged_by_the_block_size(monkeypatch):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    preds = np.stack([rng.integers(0, 2, 400), np.where(rng.random(400) < 0.1, 0.5, y)])
    clusters = rng.integers(0, 150, 400)
    whole = stats.bootstrap_waf(y, preds, 500, seed=2, clusters=clusters)
    monkeypatch.setattr(stats, "BOOTSTRAP_CHUNK_ELEMENTS", 1000)  # 6 resamples of 150 clusters per block
    assert stats.bootstrap_waf(y, preds, 500, seed=2, clusters=clusters) == whole


def test_paired_waf_difference_equals_a_loop_over_the_same_resamples():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 120)
    a = np.where(rng.random(120) < 0.75, y, 1 - y)
    b = np.where(rng.random(120) < 0.65, y, 1 - y)
    out = stats.paired_waf_difference(y, a, b, n_resamples=300, seed=8)
    f1 = lambda yy, pp: 100 * f1_score(yy, pp, average="weighted", labels=[0, 1], zero_division=0)  # noqa: E731
    diffs = [f1(y[i], a[i]) - f1(y[i], b[i]) for i in stats.resample_indices(120, 300, seed=8) if 0 < y[i].sum() < 120]
    assert out["value"] == pytest.approx(f1(y, a) - f1(y, b), abs=1e-12)
    assert out["ci"] == pytest.approx(list(np.percentile(diffs, [2.5, 97.5])), abs=1e-9)
    assert out["n_resamples_used"] == len(diffs) and out["n"] == 120
    # a predictor against itself: zero, with a zero-width interval
    same = stats.paired_waf_difference(y, a, a, n_resamples=100)
    assert same["value"] == 0.0 and same["ci"] == [0.0, 0.0]


def test_paired_interval_is_narrower_than_marginal_intervals_suggest():
    # two judges that agree on most items: their marginal CIs overlap widely, the paired CI of the gap does not
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 600)
    a = np.where(rng.random(600) < 0.8, y, 1 - y)
    b = a.copy()
    flip = np.flatnonzero(a == y)[:30]  # b loses 30 items a gets right
    b[flip] = 1 - b[flip]
    ea, eb = stats.bootstrap_waf(y, np.stack([a, b]), 1000, seed=0)
    assert ea.ci[0] < eb.ci[1]  # marginal intervals overlap
    diff = stats.paired_waf_difference(y, a, b, 1000, seed=0)
    assert diff["ci"][0] > 0  # the paired interval excludes 0
