"""The local evaluate modules load offline and agree with the references."""

import evaluate
import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import f1_score

from omniaudit.evaluation import stats
from omniaudit.evaluation.metrics import path


def test_waf_module_matches_sklearn():
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    metric = evaluate.load(path("waf"))
    out = metric.compute(predictions=p, references=y, bootstrap=True, n_resamples=300)
    assert out["waf"] == pytest.approx(100 * f1_score(y, p, average="weighted"))
    assert (out["ci_low"], out["ci_high"]) == pytest.approx(stats.bootstrap_waf(y, p, 300)[0].ci)


def test_exact_mcnemar_module_matches_scipy():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 120)
    p1, p2 = np.where(rng.random(120) < 0.8, y, 1 - y), np.where(rng.random(120) < 0.6, y, 1 - y)
    out = evaluate.load(path("exact_mcnemar"), module_type="comparison").compute(
        predictions1=p1, predictions2=p2, references=y)
    assert out["p"] == pytest.approx(binomtest(out["b"], out["b"] + out["c"], 0.5).pvalue)


def test_unknown_module_name():
    with pytest.raises(KeyError, match="available"):
        path("f1")
