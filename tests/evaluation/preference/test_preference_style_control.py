"""EmoPrefer audit, issue 20: Chatbot Arena style control (a Bradley-Terry fit with length and markdown / prose style
covariates) beside the length-controlled win rate, checked against scikit-learn, a direct refit of a bootstrap
resample, a planted style preference and degenerate descriptions."""

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from omniaudit.cli import main
from omniaudit.evaluation import stats
from omniaudit.evaluation.preference import style_control as sc
from omniaudit.evaluation.preference.length_control import generator_columns


def test_style_counts_by_hand():
    texts = ["# Mood\n\nThe speaker is **very** happy. She *smiles* a lot!\n- raised brows\n- fast speech\n1. laugh",
             "Plain prose. Two sentences.", "", None, "snake_case and 2*3*4 maths", "__Bold__ and _soft_ words."]
    got = sc.style_counts(texts)
    assert list(got["headers"]) == [1, 0, 0, 0, 0, 0]
    assert list(got["list_items"]) == [3, 0, 0, 0, 0, 0]
    assert list(got["bold"]) == [1, 0, 0, 0, 0, 1]
    assert list(got["emphasis"]) == [1, 0, 0, 0, 0, 1]  # not snake_case, not 2*3*4, not the bold inside **...**
    assert list(got["sentences"]) == [2, 2, 0, 0, 0, 1]  # "1." of a numbered list is no sentence end


def _pairs(n: int, seed: int, bold_effect: float = 0.0, strengths=(0.0, 0.0, 0.0, 0.0), bold_rate=None):
    """Pairs of four generators; a description carries bold with its generator's rate; P(a1) from the planted
    strengths and ``bold_effect`` * (bold1 - bold2). Bold does not change a description's length."""
    rng = np.random.default_rng(seed)
    gens = np.array(["g0", "g1", "g2", "g3"])
    bold_rate = np.array(bold_rate or (0.15, 0.15, 0.15, 0.15))
    i1 = rng.integers(0, 4, n)
    i2 = (i1 + rng.integers(1, 4, n)) % 4
    words = rng.integers(8, 30, (n, 2))
    has_bold = rng.random((n, 2)) < bold_rate[np.stack([i1, i2], axis=1)]
    texts = [[("**Happy** " if has_bold[i, s] else "--Happy-- ") + "word " * words[i, s] + "." for s in range(2)]
             for i in range(n)]
    t1, t2 = np.array([t[0] for t in texts], dtype=object), np.array([t[1] for t in texts], dtype=object)
    logit = np.array(strengths)[i1] - np.array(strengths)[i2] + bold_effect * (has_bold[:, 0] * 1.0 - has_bold[:, 1])
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return gens[i1], gens[i2], t1, t2, np.array([len(t) for t in t1]), np.array([len(t) for t in t2]), y


def _design(g1, g2, t1, t2, l1, l2):
    z, used, _ = sc.style_features(t1, t2, l1, l2)
    return np.column_stack([generator_columns(g1, g2, sorted(set(g1) | set(g2))), z]), used


def test_fit_matches_scikit_learn_and_the_normalised_differences_are_chatbot_arenas():
    g1, g2, t1, t2, l1, l2, y = _pairs(600, 0, bold_effect=1.0, strengths=(0.5, 0.0, -0.2, -0.3))
    out = sc.style_controlled_strengths(g1, g2, t1, t2, l1, l2, y, n_resamples=0)
    x, used = _design(g1, g2, t1, t2, l1, l2)
    assert used == ["length", "sentences", "bold"] or used == ["length", "bold"]
    ratio = (l1 - l2) / (l1 + l2 + 1.0)  # Chatbot Arena: (a - b) / (a + b + 1), standardised over the pairs
    assert x[:, 4] == pytest.approx((ratio - ratio.mean()) / ratio.std())
    ref = LogisticRegression(C=1.0, tol=1e-12, max_iter=10_000).fit(x, y)  # L2 on every coefficient, b free
    theta = [out["generators"][g]["strength"] for g in ("g0", "g1", "g2", "g3")]
    assert theta == pytest.approx(list(ref.coef_[0][:4]), abs=1e-5)
    assert [out["style"][f]["coefficient"] for f in used] == pytest.approx(list(ref.coef_[0][4:]), abs=1e-5)
    assert out["slot_intercept"] == pytest.approx(ref.intercept_[0], abs=1e-5)
    assert sum(theta) == pytest.approx(0, abs=1e-8)  # symmetric penalty: no reference generator
    base = LogisticRegression(C=1.0, tol=1e-12, max_iter=10_000).fit(x[:, :4], y)
    assert out["generators"]["g0"]["strength_uncontrolled"] == pytest.approx(base.coef_[0][0], abs=1e-5)
    p = 1 / (1 + np.exp(-(np.array(theta)[:, None] - np.array(theta)[None, :])))
    mine = (g1 == "g0") | (g2 == "g0")
    opp = [int(g[1]) for g in np.where(g1 == "g0", g2, g1)[mine]]
    assert out["generators"]["g0"]["sc_win_rate"] == pytest.approx(np.mean(p[0, opp]))


def test_bootstrap_resample_is_a_direct_refit_of_the_resampled_pairs():
    g1, g2, t1, t2, l1, l2, y = _pairs(400, 1, bold_effect=0.8)
    out = sc.style_controlled_strengths(g1, g2, t1, t2, l1, l2, y, n_resamples=1, seed=11)
    x, used = _design(g1, g2, t1, t2, l1, l2)  # the full data's feature scaling is kept in every resample
    idx = stats.resample_indices(len(y), 1, 11)[0]
    ref = LogisticRegression(C=1.0, tol=1e-12, max_iter=10_000).fit(x[idx], y[idx])
    lo, hi = out["generators"]["g2"]["strength_ci"]  # one resample: the interval is that resample's value
    assert lo == pytest.approx(ref.coef_[0][2], abs=1e-5) and hi == pytest.approx(lo)
    assert out["style"]["bold"]["ci"][0] == pytest.approx(ref.coef_[0][4 + used.index("bold")], abs=1e-5)
    assert out["bootstrap"]["n_resamples"] == 1


def test_a_planted_markdown_preference_is_read_as_style_not_as_the_generator():
    # g0 writes bold in 80% of its descriptions, the others in 15%; annotators prefer bold, not g0
    g1, g2, t1, t2, l1, l2, y = _pairs(2400, 2, bold_effect=1.5, bold_rate=(0.8, 0.15, 0.15, 0.15))
    out = sc.style_controlled_strengths(g1, g2, t1, t2, l1, l2, y, n_resamples=100, seed=3)
    g0 = out["generators"]["g0"]
    assert g0["win_rate"] > 0.6 and g0["strength_uncontrolled"] > 0.4  # without control: g0 looks strong
    assert g0["strength_ci"][0] < 0 < g0["strength_ci"][1]  # with style held fixed: no g0 effect
    assert g0["sc_ci"][0] < 0.5 < g0["sc_ci"][1]
    assert out["style"]["bold"]["ci"][0] > 0.3  # the bold coefficient carries it
    # length plays no part (bold does not change it): small beside bold (a 95% CI may miss 0 by chance)
    assert abs(out["style"]["length"]["coefficient"]) < 0.2 * out["style"]["bold"]["coefficient"]
    assert out["style"]["headers"]["absent"] and out["style"]["headers"]["coefficient"] is None
    assert out["style"]["bold"]["share_of_descriptions_with_any"] == pytest.approx(
        np.mean([t.startswith("**") for t in np.concatenate([t1, t2])]))


def test_degenerate_descriptions_give_no_style_finding():
    g1, g2, _, _, _, _, y = _pairs(300, 4, strengths=(1.0, 0.3, -0.3, -1.0))
    empty = np.array([""] * len(y), dtype=object)
    zero = np.zeros(len(y))
    for t1, t2, l1, l2 in ((empty, empty, zero, zero), (np.array(["same text."] * len(y), dtype=object),) * 2
                           + (np.full(len(y), 10.0),) * 2):
        out = sc.style_controlled_strengths(g1, g2, t1, t2, l1, l2, y, n_resamples=20)
        assert out["features_used"] == [] and all(f["absent"] for f in out["style"].values())
        for e in out["generators"].values():  # no style column: the plain Bradley-Terry fit
            assert e["strength"] == pytest.approx(e["strength_uncontrolled"])


def test_cli_reports_style_control_beside_the_lc_win_rate(tmp_path, monkeypatch):
    base = ["audit", "preference", "--pairs", "240", "--generators", "4", "--n-resamples", "40",
            "--no-source-classifier", "--no-controls"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    audit = json.loads((tmp_path / "a" / "audit.json").read_text())
    sc_out, lc_out = audit["style_controlled"], audit["length_controlled"]
    assert set(sc_out["generators"]) == set(lc_out["generators"])
    for e in sc_out["generators"].values():
        assert e["strength_ci"][0] <= e["strength"] <= e["strength_ci"][1] and e["sc_ci"][0] is not None
    assert sc_out["bootstrap"]["n_resamples"] == 40 and sc_out["style"]["length"]["ci"][0] is not None
    report = (tmp_path / "a" / "report.md").read_text()
    assert "Style-controlled win rate [95% CI] |" in report and "## Style control (Chatbot Arena)" in report
    assert "| headers | absent (no variation) |" in report  # the synthetic descriptions carry no markdown
    assert main([*base, "--no-length-control", "--out", str(tmp_path / "b")]) == 0  # its semantics stay
    audit = json.loads((tmp_path / "b" / "audit.json").read_text())
    assert "length_controlled" not in audit and "style_controlled" in audit
    assert "## Style control (Chatbot Arena)" in (tmp_path / "b" / "report.md").read_text()
    from omniaudit.evaluation.preference import audit as preference_audit

    seen = {}
    monkeypatch.setattr(preference_audit, "run_preference_audit",
                        lambda out, *a, **k: seen.setdefault("config", a[3]) and Path(out))
    assert main([*base, "--no-style-control", "--out", str(tmp_path / "c")]) == 0
    assert seen["config"].style_control is False and seen["config"].length_control is True
