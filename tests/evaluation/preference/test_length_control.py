"""Length-controlled win rates are symmetric in the generators and carry a bootstrap CI."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from omniaudit.data_builders.preference import SyntheticSpec, build_tables, synthesize
from omniaudit.evaluation.preference import length_control
from omniaudit.evaluation.preference.audit import PreferenceAuditConfig, audit_preference
from omniaudit.evaluation.preference.report import preference_report
from omniaudit.evaluation.stats import percentile_ci, resample_indices


def planted(n=600, seed=1):
    """Three generators with known strengths; the wordy one gets a length bonus in the labels."""
    rng = np.random.default_rng(seed)
    names = np.array(["plain", "strong", "wordy"])
    theta = {"plain": 0.0, "strong": 1.0, "wordy": -0.5}
    mean_len = {"plain": 150.0, "strong": 150.0, "wordy": 400.0}
    i1, i2 = rng.integers(0, 3, n), rng.integers(0, 3, n)
    keep = i1 != i2
    g1, g2 = names[i1[keep]], names[i2[keep]]
    l1 = np.array([mean_len[g] for g in g1]) + rng.normal(0, 40, g1.size)
    l2 = np.array([mean_len[g] for g in g2]) + rng.normal(0, 40, g2.size)
    diff = l1 - l2
    t1, t2 = np.array([theta[g] for g in g1]), np.array([theta[g] for g in g2])
    y = (rng.random(g1.size) < 1 / (1 + np.exp(-(t1 - t2 + 2.0 * np.tanh(diff / diff.std()))))).astype(int)
    return g1, g2, l1, l2, y


def test_renaming_generators_changes_no_lc_win_rate_nor_its_ci():
    """The input that showed it: renaming 'plain' so that it no longer sorts first moved LC rates by up to 3.7
    points (plain 38.2 -> 36.2, wordy 41.8 -> 45.5) when the first generator was an unpenalised reference."""
    g1, g2, l1, l2, y = planted()
    a = length_control.length_controlled_win_rates(g1, g2, l1, l2, y, n_resamples=100)
    for rename in ({"plain": "zz_plain"}, {"strong": "a_strong"}, {"wordy": "0wordy", "plain": "p"}):
        r = lambda g, rename=rename: rename.get(g, g)  # noqa: E731
        b = length_control.length_controlled_win_rates(np.array([r(g) for g in g1]), np.array([r(g) for g in g2]),
                                                       l1, l2, y, n_resamples=100)
        for g, v in a["generators"].items():
            w = b["generators"][r(g)]
            assert w["lc_win_rate"] == pytest.approx(v["lc_win_rate"], abs=1e-9), (rename, g)
            assert w["strength"] == pytest.approx(v["strength"], abs=1e-9)
            assert w["lc_ci"] == pytest.approx(v["lc_ci"], abs=1e-9)
        assert b["length_coefficient"] == pytest.approx(a["length_coefficient"], abs=1e-9)
    # the order of the rows does not matter either (the point estimates; a CI depends on which rows are drawn)
    perm = np.random.default_rng(5).permutation(y.size)
    c = length_control.length_controlled_win_rates(g1[perm], g2[perm], l1[perm], l2[perm], y[perm], n_resamples=0)
    for g, v in a["generators"].items():
        assert c["generators"][g]["lc_win_rate"] == pytest.approx(v["lc_win_rate"], abs=1e-9)
    assert sum(v["strength"] for v in a["generators"].values()) == pytest.approx(0, abs=1e-9)  # sum-to-zero


def test_symmetric_glm_equals_sklearn_with_every_generator_penalised():
    g1, g2, l1, l2, y = planted(400, seed=3)
    gens = sorted(set(g1) | set(g2))
    x, _ = length_control.lc_design(g1, g2, l1, l2, gens)
    assert x.shape[1] == len(gens) + 1  # a column for every generator: no reference level
    ref = LogisticRegression(C=1.0, tol=1e-12, max_iter=100000).fit(x, y)
    out = length_control.length_controlled_win_rates(g1, g2, l1, l2, y, n_resamples=0)
    np.testing.assert_allclose([out["generators"][g]["strength"] for g in gens], ref.coef_[0][:-1], atol=1e-6)
    assert out["length_coefficient"] == pytest.approx(ref.coef_[0][-1], abs=1e-6)
    assert out["slot_intercept"] == pytest.approx(ref.intercept_[0], abs=1e-6)
    assert out["generators"]["plain"]["lc_ci"] == [None, None] and out["bootstrap"]["n_resamples"] == 0


def test_lc_ci_equals_a_loop_over_resamples_of_pairs():
    """Reference: refit the GLM on each resample's rows (repeated), as a Python loop; the same draws."""
    g1, g2, l1, l2, y = planted(160, seed=4)
    n_res = 40
    out = length_control.length_controlled_win_rates(g1, g2, l1, l2, y, n_resamples=n_res, seed=7)
    gens = sorted(set(g1) | set(g2))
    x, _ = length_control.lc_design(g1, g2, l1, l2, gens)  # the length scale of the full data is kept
    samples = []
    for idx in resample_indices(y.size, n_res, seed=7):
        beta = length_control.fit_logistic(x[idx], y[idx])
        theta = dict(zip(gens, beta[1:len(gens) + 1], strict=True))
        rates = []
        for g in gens:
            a, b = g1[idx], g2[idx]
            p = 1 / (1 + np.exp(-(np.array([theta[v] for v in a]) - np.array([theta[v] for v in b]))))
            rates.append((p[a == g].sum() + (1 - p[b == g]).sum()) / ((a == g).sum() + (b == g).sum()))
        samples.append(rates)
    lo, hi = percentile_ci(np.array(samples))
    for i, g in enumerate(gens):
        assert out["generators"][g]["lc_ci"] == pytest.approx([lo[i], hi[i]], abs=1e-7), g
        assert out["generators"][g]["lc_ci"][0] <= out["generators"][g]["lc_win_rate"] <= out["generators"][g][
            "lc_ci"][1]
    assert out["bootstrap"]["n_resamples"] == n_res and out["bootstrap"]["seed"] == 7


def test_lc_ci_in_audit_json_and_the_preference_report():
    pairs = build_tables(synthesize(SyntheticSpec(n_pairs=300, seed=2)))["pairs"]
    audit, _ = audit_preference(pairs, PreferenceAuditConfig(n_resamples=50, source_classifier=False,
                                                             controls=False))
    lc = audit["length_controlled"]
    assert lc["bootstrap"]["n_resamples"] > 0
    for v in lc["generators"].values():
        lo, hi = v["lc_ci"]
        assert lo <= v["lc_win_rate"] <= hi
    md = preference_report(audit, {"win_rates": "w.png", "full_vs_counter": "f.png"}, "synthetic")
    assert "LC win rate [95% CI]" in md
    g, v = next(iter(lc["generators"].items()))
    assert f"{100 * v['lc_win_rate']:.1f}% [{100 * v['lc_ci'][0]:.1f}, {100 * v['lc_ci'][1]:.1f}]" in md


def test_tiny_benchmarks_skip_one_class_resamples():
    """Seven pairs, six won by slot 1: many resamples hold one class only (no finite slot intercept); they are
    skipped, as the WAF bootstrap skips them, and the CIs stay finite."""
    g1 = np.array(["a", "b", "c", "a", "b", "c", "a"])
    g2 = np.array(["b", "c", "a", "c", "a", "b", "b"])
    l1, l2 = np.array([100, 120, 90, 300, 80, 150, 110]), np.array([90, 200, 95, 100, 120, 140, 100])
    y = np.array([1, 1, 1, 1, 1, 1, 0])
    out = length_control.length_controlled_win_rates(g1, g2, l1, l2, y, n_resamples=200)
    assert 0 < out["bootstrap"]["n_resamples"] < 200
    for v in out["generators"].values():
        assert all(np.isfinite(v["lc_ci"])) and v["lc_ci"][0] <= v["lc_win_rate"] <= v["lc_ci"][1]
