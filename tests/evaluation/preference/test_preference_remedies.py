"""Length control, multi-annotator consensus and the Fig. 2a ODIN report, against hand computations and references."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression

from omniaudit.errors import InputError
from omniaudit.evaluation.preference import consensus, length_control, odin_report


# ----------------------------------------------------------------------------------------------- lengths, LC
def test_length_by_generator_by_hand():
    gen1 = np.array(["a", "b", "c", "a"])
    gen2 = np.array(["b", "c", "a", "c"])
    len1, len2 = np.array([100, 300, 50, 150]), np.array([200, 90, 60, 30])
    win_rates = {"a": 0.25, "b": 0.75, "c": 0.5}
    out = length_control.length_by_generator(gen1, gen2, len1, len2, win_rates)
    g = out["generators"]
    # a wrote 100, 150 and 60; b wrote 300 and 200; c wrote 50, 90 and 30
    assert g["a"]["mean_length"] == pytest.approx(310 / 3) and g["a"]["n_descriptions"] == 3
    assert g["b"]["mean_length"] == 250 and g["c"]["mean_length"] == pytest.approx(170 / 3)
    assert out["wordiest"] == {"generator": "b", "mean_length": 250.0, "win_rate": 0.75, "win_rank": 1}
    assert out["wordiest_wins_most"] is True and out["win_rate_span"] == [0.25, 0.75]
    assert out["spearman"] == pytest.approx(spearmanr([310 / 3, 250, 170 / 3], [0.25, 0.75, 0.5]).statistic)
    # the paper's case: the wordiest generator is not the one that wins most
    out = length_control.length_by_generator(gen1, gen2, len1, len2, {"a": 0.9, "b": 0.6, "c": 0.1})
    assert out["wordiest"]["win_rank"] == 2 and not out["wordiest_wins_most"]
    assert out["most_winning"] == {"generator": "a", "win_rate": 0.9}


def test_glm_fit_equals_sklearn_logistic_regression():
    rng = np.random.default_rng(0)
    gens = np.array(["g0", "g1", "g2", "g3"])
    g1, g2 = gens[rng.integers(0, 4, 500)], gens[rng.integers(0, 4, 500)]
    l1, l2 = rng.integers(50, 400, 500), rng.integers(50, 400, 500)
    y = rng.integers(0, 2, 500)
    x, _ = length_control.lc_design(g1, g2, l1, l2, list(gens))
    for ridge in (1.0, 0.1):
        beta = length_control.fit_logistic(x, y, ridge=ridge)
        ref = LogisticRegression(C=1 / ridge, tol=1e-12, max_iter=100000).fit(x, y)
        np.testing.assert_allclose(beta, [ref.intercept_[0], *ref.coef_[0]], atol=1e-6)


def test_length_controlled_win_rate_removes_a_planted_verbosity_bonus():
    """Three generators with known strengths; the wordy one gets a large length bonus in the labels. Its raw win
    rate is inflated; the LC win rate recovers the rate its strength alone implies (computed from the truth)."""
    rng = np.random.default_rng(1)
    n = 20000
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
    logit = t1 - t2 + 2.0 * np.tanh(diff / diff.std())
    y = (rng.random(g1.size) < 1 / (1 + np.exp(-logit))).astype(int)
    out = length_control.length_controlled_win_rates(g1, g2, l1, l2, y)
    assert out["length_coefficient"] == pytest.approx(2.0, abs=0.15)
    p_true = 1 / (1 + np.exp(-(t1 - t2)))
    for g in names:
        first, second = g1 == g, g2 == g
        true_lc = (p_true[first].sum() + (1 - p_true[second]).sum()) / (first.sum() + second.sum())
        raw = (y[first].sum() + (1 - y[second]).sum()) / (first.sum() + second.sum())
        assert out["generators"][g]["win_rate"] == pytest.approx(raw)
        assert out["generators"][g]["lc_win_rate"] == pytest.approx(true_lc, abs=0.02), g
    wordy = out["generators"]["wordy"]
    assert wordy["win_rate"] > 0.55 > 0.45 > wordy["lc_win_rate"]  # verbosity made a weak generator look strong


# ----------------------------------------------------------------------------------------------- consensus
def test_fleiss_kappa_reproduces_the_worked_example():
    # Fleiss (1971) style worked example (10 items, 14 raters, 5 categories): kappa = 0.210
    table = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                      [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    assert round(consensus.fleiss_kappa(table), 3) == 0.210
    assert consensus.fleiss_kappa(np.array([[3, 0], [0, 3]])) == 1.0
    assert np.isnan(consensus.fleiss_kappa(np.array([[1, 0], [0, 1]])))  # no item with two ratings


def test_majority_vote_by_hand():
    label, share = consensus.majority_vote(np.array([[2, 1, 0], [1, 1, 0], [0, 0, 3], [0, 0, 0]]))
    assert label.tolist() == [0, -1, 2, -1]
    np.testing.assert_allclose(share[:3], [2 / 3, 0.5, 1.0])


def test_dawid_skene_recovers_planted_annotator_accuracies():
    rng = np.random.default_rng(2)
    n, acc = 3000, np.array([0.92, 0.85, 0.75, 0.6, 0.55])
    truth = rng.integers(0, 2, n)
    right = rng.random((n, acc.size)) < acc
    codes = np.where(right, truth[:, None], 1 - truth[:, None])
    codes[rng.random(codes.shape) < 0.2] = -1  # some annotators skip some pairs
    ds = consensus.dawid_skene(codes, n_classes=2)
    est = np.array([ds["prior"] @ np.diag(c) for c in ds["confusion"]])
    np.testing.assert_allclose(est, acc, atol=0.03)
    majority, _ = consensus.majority_vote(consensus.counts_per_item(codes, 2))
    decided = majority >= 0
    assert np.mean(ds["label"] == truth) > np.mean(majority[decided] == truth[decided])


def test_read_annotations_names_the_bad_row(tmp_path):
    pairs = pd.DataFrame({"id": ["p0", "p1"], "name": ["s0", "s1"]})
    good = tmp_path / "ann.csv"
    good.write_text("name,annotator,label\ns0,r1,a1\ns0,r2,A2\ns1,r1,same\n", encoding="utf-8")
    rows = consensus.read_annotations(good, pairs)
    assert rows["label"].tolist() == ["a1", "a2", "same"] and rows.attrs["key"] == "name"
    for body, match, row in [("s0,r1,maybe\n", "expected a label", 1), ("s9,r1,a1\n", "not in the dataset", 1),
                             ("s0,r1,a1\ns0,r1,a2\n", "already labelled", 2), ("s0,,a1\n", "annotator", 1)]:
        bad = tmp_path / "bad.csv"
        bad.write_text("name,annotator,label\n" + body, encoding="utf-8")
        with pytest.raises(InputError, match=match) as err:
            consensus.read_annotations(bad, pairs)
        assert err.value.row == row and str(bad) in str(err.value)


# ----------------------------------------------------------------------------------------------- Fig. 2a
def _odin_run(folder, lambda_dec, folds):
    folder.mkdir(parents=True)
    summary = {k: float(np.mean([f[k] for f in folds.values()])) for k in next(iter(folds.values()))}
    (folder / "odin_metrics.json").write_text(json.dumps({**summary, "folds": folds, "lambda_dec": lambda_dec,
                                                          "lambda_orth": 1.0}), encoding="utf-8")
    return folder


def test_odin_report_mean_abs_rho_and_sd_across_folds(tmp_path):
    lam0 = _odin_run(tmp_path / "lam0", 0.0, {
        "fold0": {"rho_content_length": 0.42, "rho_content_prior": -0.50, "content_accuracy": 0.6},
        "fold1": {"rho_content_length": -0.38, "rho_content_prior": 0.58, "content_accuracy": 0.6},
        "fold2": {"rho_content_length": 0.40, "rho_content_prior": 0.54, "content_accuracy": 0.6}})
    lam1 = _odin_run(tmp_path / "lam1", 1.0, {
        "fold0": {"rho_content_length": 0.05, "rho_content_prior": -0.02, "rho_length_head_length": 0.9},
        "fold1": {"rho_content_length": -0.09, "rho_content_prior": 0.04, "rho_length_head_length": 0.8}})
    result = odin_report.odin_correlations([str(lam0), str(lam1)])
    assert list(result["runs"]) == ["lambda=0", "lambda=1"]
    c = result["runs"]["lambda=0"]["correlations"]["rho_content_length"]
    assert c["folds"] == {"fold0": 0.42, "fold1": 0.38, "fold2": 0.40}  # absolute values, per fold kept
    assert c["mean"] == pytest.approx(0.40) and c["sd"] == pytest.approx(0.02)  # sample SD of 0.42, 0.38, 0.40
    c = result["runs"]["lambda=1"]["correlations"]["rho_content_prior"]
    assert c["mean"] == pytest.approx(0.03) and c["sd"] == pytest.approx(np.std([0.02, 0.04], ddof=1))
    assert "rho_length_head_length" not in result["runs"]["lambda=0"]["correlations"]
    out = odin_report.run_odin_report(tmp_path / "out", [f"nodec={lam0}", f"odin={lam1 / 'odin_metrics.json'}"])
    written = json.loads((out / "odin.json").read_text())
    assert list(written["runs"]) == ["nodec", "odin"]
    report = (out / "report.md").read_text()
    assert "0.400 ± 0.020 (3)" in report and "fold1: 0.380" in report
    assert (out / "fig2a_odin_correlations.png").stat().st_size > 1000


def test_odin_report_rejects_bad_runs(tmp_path):
    run = _odin_run(tmp_path / "a", 1.0, {"fold0": {"rho_content_length": 1.7}})
    with pytest.raises(InputError, match=r"correlation in \[-1, 1\]"):
        odin_report.odin_correlations([str(run)])
    with pytest.raises(InputError, match="odin_metrics.json"):
        odin_report.odin_correlations([str(tmp_path)])
    same = _odin_run(tmp_path / "b", 1.0, {"fold0": {"rho_content_length": 0.1}})
    other = _odin_run(tmp_path / "c", 1.0, {"fold0": {"rho_content_length": 0.2}})
    with pytest.raises(InputError, match="NAME=PATH"):
        odin_report.parse_runs([str(same), str(other)])
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "odin_metrics.json").write_text(json.dumps({"rho_content_length": 0.1}))
    with pytest.raises(InputError, match="per-fold"):
        odin_report.odin_correlations([str(tmp_path / "d")])


def test_cli_report_odin(tmp_path, capsys):
    from omniaudit.cli import main

    fold = lambda rho: {"rho_content_length": rho}  # noqa: E731
    lam0 = _odin_run(tmp_path / "r0", 0.0, {"fold0": fold(0.3), "fold1": fold(0.5)})
    lam1 = _odin_run(tmp_path / "r1", 1.0, {"fold0": fold(0.1), "fold1": fold(0.0)})
    assert main(["report", "odin", str(lam0), str(lam1), "--out", str(tmp_path / "fig")]) == 0
    result = json.loads((tmp_path / "fig" / "odin.json").read_text())
    assert result["runs"]["lambda=0"]["correlations"]["rho_content_length"]["mean"] == pytest.approx(0.4)
    assert main(["report", "odin", str(tmp_path / "nothing"), "--out", str(tmp_path / "x")]) == 2
    assert "odin_metrics.json" in capsys.readouterr().err
