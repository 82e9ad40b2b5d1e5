"""A judge with no information is measured against the WAF it gets on those very items, not against 50."""

import numpy as np
import pytest
from sklearn.metrics import f1_score

from omniaudit.evaluation.stats import waf_against_null


def _all_tie_waf(y: np.ndarray) -> float:
    """Half credit per class on every item = the mean of the WAFs of 'always a1' and 'always a2' weights; computed
    here from scikit-learn with each item counted once per class at weight 1/2."""
    yy = np.concatenate([y, y])
    pred = np.concatenate([np.ones_like(y), np.zeros_like(y)])
    return 100 * f1_score(yy, pred, average="weighted")


def test_the_null_is_the_tie_judges_waf_on_the_items_and_not_fifty():
    y = np.array([1] * 16 + [0] * 6)  # 16 of 22 a1, as the length-matched slice of the report
    est, null, diff = waf_against_null(y, np.full((1, y.size), 0.5), n_resamples=500, seed=0)
    assert null == pytest.approx(_all_tie_waf(y)) and null > 52
    assert est[0].ci[0] > 50  # the marginal CI of the tie judge sits above 50 ...
    assert diff[0]["value"] == 0 and diff[0]["ci"] == [0.0, 0.0]  # ... and its difference from the null is none


def test_random_judges_rarely_exclude_the_null_and_an_informed_one_does():
    rng = np.random.default_rng(1)
    y = (rng.random(22) < 0.73).astype(int)
    false = 0
    for seed in range(200):
        guesses = np.random.default_rng(seed).integers(0, 2, size=(1, y.size)).astype(float)
        _, _, diff = waf_against_null(y, guesses, n_resamples=300, seed=seed)
        false += diff[0]["ci"][0] > 0
    assert false / 200 <= 0.06
    informed = np.where(rng.random(y.size) < 0.9, y, 1 - y).astype(float)[None]
    _, _, diff = waf_against_null(y, informed, n_resamples=500, seed=0)
    assert diff[0]["ci"][0] > 0
