"""The audit on synthetic benchmarks whose findings are known in advance (positive and negative controls)."""

import numpy as np
import pytest

from omniaudit.data_builders.preference import SyntheticSpec, build_tables, synthesize
from omniaudit.evaluation.audits.preference import PreferenceAuditConfig, audit_preference, run_preference_audit
from omniaudit.io import to_json

FAST = PreferenceAuditConfig(n_resamples=300, source_classifier=False, controls=False)


def _audit(spec, config=FAST):
    return audit_preference(build_tables(synthesize(spec))["pairs"], config)


@pytest.fixture(scope="module")
def planted():
    return _audit(SyntheticSpec(n_pairs=1200, prior_strength=1.2, seed=11),
                  PreferenceAuditConfig(n_resamples=300))


def test_probes_recover_a_planted_prior(planted):
    audit, _ = planted
    p = audit["predictors"]
    floor = audit["controls"]["identity_permutation"]
    for name in ("generator_lr", "length_generator_lr", "winrate_rule"):
        assert p[name]["full"]["ci"][0] > floor["mean"] + 3 * floor["sd"], name
        assert p[name]["full"]["waf"] > 65
        # prior-driven predictors collapse where the label contradicts the prior ...
        assert p[name]["counter_stereotypical"]["waf"] < 35
        assert p[name]["counter_stereotypical"]["prior_following"] > 0.6
    # ... and the win-rate rule scores exactly 0 there by construction
    assert p["winrate_rule"]["counter_stereotypical"]["waf"] == 0.0
    assert p["winrate_rule"]["counter_stereotypical"]["prior_following"] == 1.0


def test_controls_point_at_identity(planted):
    audit, _ = planted
    ctrl = audit["controls"]
    assert 40 < ctrl["identity_permutation"]["mean"] < 56
    cf = ctrl["counterfactual_swap"]
    assert cf["identity_flip_rate"] > cf["length_flip_rate"]
    assert cf["mcnemar"]["p"] < 0.001


def test_style_reveals_the_generator(planted):
    sc = planted[0]["source_classifier"]
    assert sc["accuracy_mean"] > 0.95 and sc["chance"] == pytest.approx(1 / 7)
    assert len(sc["fold_accuracy"]) == 5


def test_probes_fall_to_the_floor_without_a_prior():
    audit, _ = _audit(SyntheticSpec(n_pairs=1200, prior_strength=0.0, seed=12),
                      PreferenceAuditConfig(n_resamples=300, source_classifier=False))
    floor = audit["controls"]["identity_permutation"]
    for name in ("generator_lr", "length_generator_lr"):
        waf = audit["predictors"][name]["full"]["waf"]
        assert abs(waf - floor["mean"]) < 6, (name, waf, floor)
        assert audit["predictors"][name]["full"]["ci"][0] < 56


def test_length_probe_is_blind_to_identity(planted):
    # lengths carry only the little prior that leaks through verbosity: far below the generator probe
    p = planted[0]["predictors"]
    assert p["length_lr"]["full"]["waf"] < p["generator_lr"]["full"]["waf"] - 5


def test_audit_is_deterministic(small_raw):
    pairs = build_tables(small_raw)["pairs"]
    a = to_json(audit_preference(pairs, PreferenceAuditConfig(n_resamples=200))[0])
    b = to_json(audit_preference(pairs, PreferenceAuditConfig(n_resamples=200))[0])
    assert a == b


def test_run_writes_identical_files_twice(tmp_path):
    spec = SyntheticSpec(n_pairs=300, seed=4)
    config = PreferenceAuditConfig(n_resamples=100)
    one = run_preference_audit(tmp_path / "one", spec=spec, config=config)
    two = run_preference_audit(tmp_path / "two", spec=spec, config=config)
    for name in ("audit.json", "report.md", "predictions.csv", "dataset/pairs/train-00000-of-00001.parquet"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name


def test_predictions_table_matches_audit(planted):
    audit, table = planted
    y = (table["preference"] == "a1").to_numpy()
    for name in ("length_lr", "winrate_rule"):
        acc = np.mean((table[f"pred__{name}"] == "a1").to_numpy() == y)
        assert acc == pytest.approx(audit["predictors"][name]["full"]["accuracy"])


@pytest.mark.slow
def test_full_default_audit_reproduces_the_paper_signature(tmp_path):
    """The README's main job at full scale (2,096 pairs, 2,000 resamples): the EmoPrefer shortcut signature."""
    import json

    out = run_preference_audit(tmp_path / "demo")
    audit = json.loads((out / "audit.json").read_text())
    assert audit["dataset"]["n_pairs"] == 2096 and len(audit["dataset"]["generators"]) == 7
    p = audit["predictors"]
    # identity beats length; identity probes match the win-rate rule; all collapse on counter-stereotypical pairs
    assert p["generator_lr"]["full"]["waf"] > p["length_lr"]["full"]["waf"] + 10
    assert "mcnemar" not in p["length_generator_lr"]["full"]  # the default McNemar reference
    assert p["winrate_rule"]["length_matched"]["mcnemar"]["p"] > 0.05
    assert p["winrate_rule"]["counter_stereotypical"]["waf"] == 0.0
    assert audit["source_classifier"]["accuracy_mean"] > 0.95
    assert audit["controls"]["identity_permutation"]["mean"] < 50
    for slice_name in ("full", "length_matched", "counter_stereotypical"):
        lo, hi = p["generator_lr"][slice_name]["ci"]
        assert lo < p["generator_lr"][slice_name]["waf"] < hi


def test_source_balanced_remedy_removes_the_identity_shortcut():
    from omniaudit.data_builders.preference import PreferenceBuildOptions

    tables = build_tables(synthesize(SyntheticSpec(n_pairs=1500, prior_strength=1.2, seed=5)),
                          PreferenceBuildOptions(source_balanced=True))
    before, _ = audit_preference(tables["pairs"], FAST)
    after, _ = audit_preference(tables["source_balanced"], FAST)
    assert before["predictors"]["generator_lr"]["full"]["waf"] > 65
    assert after["predictors"]["generator_lr"]["full"]["waf"] < 56
    assert after["predictors"]["winrate_rule"]["full"]["waf"] < 56
