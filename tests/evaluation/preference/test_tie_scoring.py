"""What a tie scores. README said a tie scores "the exact expected score of a fair coin"; that holds for
accuracy and prior-following (linear in the confusion cells) but not for WAF, which is the WAF of the coin's expected
confusion: on a one-pair slice a tie scores 66.7, a fair coin 50 in expectation. The computation is kept (seed-free,
vectorised, O(1/n) from the coin) and the claim corrected; these tests pin both numbers."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from scipy.stats import binom

from omniaudit.evaluation import stats


def coin_expected(y, d, metric):
    """Reference: every tie replaced by a fair coin, the metric's exact expectation over all outcomes."""
    y, d = np.asarray(y), np.asarray(d, float)
    tie = d == stats.TIE
    t1, t0 = int((tie & (y == 1)).sum()), int((tie & (y == 0)).sum())
    base = stats.confusion_weights(y[~tie], d[~tie]).sum(axis=0)  # tn, fp, fn, tp
    total = 0.0
    for k1 in range(t1 + 1):  # tied a1-pairs called a1
        for k0 in range(t0 + 1):  # tied a2-pairs called a1
            conf = base + np.array([t0 - k0, k0, t1 - k1, k1])
            total += binom.pmf(k1, t1, 0.5) * binom.pmf(k0, t0, 0.5) * metric(conf)
    return total


def accuracy(conf):
    return 100 * (conf[0] + conf[3]) / conf.sum()


def half_credit_waf(y, d):
    return float(stats.waf_from_confusion(stats.confusion_weights(np.asarray(y), np.asarray(d, float)).sum(0)))


def test_a_tie_on_a_one_pair_slice():
    """The input that showed it: one binary pair, a tied judge."""
    y, d = [1], [stats.TIE]
    assert half_credit_waf(y, d) == pytest.approx(200 / 3)  # 66.7: the WAF of the expected confusion
    assert coin_expected(y, d, stats.waf_from_confusion) == pytest.approx(50.0)  # a fair coin: 100 or 0
    est = stats.bootstrap_waf(np.array(y), np.array(d), n_resamples=0)[0]
    assert est.value == pytest.approx(200 / 3)
    # accuracy and prior-following: exactly a fair coin's expectation
    assert coin_expected(y, d, accuracy) == pytest.approx(50.0)
    assert stats.prior_following(np.array(d), np.array([1])) == 0.5


@pytest.mark.parametrize(("n", "bound"), [(2, 9.0), (10, 1.5), (100, 0.2),
                                          pytest.param(400, 0.05, marks=pytest.mark.slow)])
def test_half_credit_waf_is_within_o_1_over_n_of_a_fair_coin(n, bound):
    rng = np.random.default_rng(n)
    y = np.r_[1, 0, rng.integers(0, 2, n - 2)] if n > 2 else np.array([1, 0])
    for d in (np.full(n, stats.TIE), np.where(rng.random(n) < 0.5, stats.TIE, y.astype(float))):
        gap = half_credit_waf(y, d) - coin_expected(y, d, stats.waf_from_confusion)
        assert 0 <= gap < bound, (n, gap)  # never below the coin, and the gap shrinks like 1/n
        assert 100 * np.mean(np.where(d == stats.TIE, 0.5, d == y)) == pytest.approx(coin_expected(y, d, accuracy))


def test_the_contract_says_what_a_tie_scores():
    doc = inspect.getdoc(stats.decide_with_ties)
    assert "exactly a fair coin's expected score" in doc and "66.7 vs 50" in doc
    assert "expected score of a fair coin, computed exactly" not in doc  # the old, wrong claim for WAF
