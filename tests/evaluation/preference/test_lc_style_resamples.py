"""The LC win rate's and the style control's bootstrap CIs use the audit's ``--n-resamples``, as every other CI (they
were capped at 200 refits): audit.json says how many resamples were drawn (``requested``) and used
(``n_resamples``), report.md how many were used."""

from omniaudit.data_builders.preference import SyntheticSpec, build_tables, synthesize
from omniaudit.evaluation.preference import length_control, style_control
from omniaudit.evaluation.preference.audit import PreferenceAuditConfig, audit_preference
from omniaudit.evaluation.preference.report import preference_report
from omniaudit.evaluation.stats import N_RESAMPLES


def test_lc_and_style_control_refit_on_every_resample_the_audit_asks_for():
    pairs = build_tables(synthesize(SyntheticSpec(n_pairs=300, seed=2)))["pairs"]
    audit, _ = audit_preference(pairs, PreferenceAuditConfig(n_resamples=450, source_classifier=False,
                                                             controls=False))
    for section in ("length_controlled", "style_controlled"):
        boot = audit[section]["bootstrap"]
        assert boot["requested"] == 450 and boot["n_resamples"] == 450, section  # no cap, none one-class here
    report = preference_report(audit, {"win_rates": "w.png", "full_vs_counter": "f.png"}, "synthetic")
    assert "the GLM refitted on each of 450 resamples" in report and "bootstrap, 450 resamples of the" in report


def test_the_default_is_the_audits_default():
    assert length_control.LC_RESAMPLES == style_control.SC_RESAMPLES == N_RESAMPLES == 2000
