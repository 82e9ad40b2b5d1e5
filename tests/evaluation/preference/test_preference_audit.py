"""The audit on synthetic benchmarks whose findings are known in advance (positive and negative controls)."""

import numpy as np
import pandas as pd
import pytest

from omniaudit.data_builders.preference import SyntheticSpec, build_tables, synthesize
from omniaudit.errors import InputError
from omniaudit.evaluation.preference.audit import PreferenceAuditConfig, audit_preference, run_preference_audit
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


# ---------------------------------------------------------------------------------- ties, clusters, judge files
def _pairs(spec=None, **options):
    from omniaudit.data_builders.preference import PreferenceBuildOptions

    return build_tables(synthesize(spec or SyntheticSpec(n_pairs=400, seed=7)), PreferenceBuildOptions(**options))


def _binary(pairs):
    return pairs[pairs["is_binary"]].reset_index(drop=True)


def _write_judge(path, binary, label_ab, label_ba=None):
    """A label judge file: ``label_ab`` / ``label_ba`` per binary pair (already mapped to a1/a2), None = no row."""
    import pandas as pd

    rows = [{"name": n, "order": "ab", "label": lab} for n, lab in zip(binary["name"], label_ab, strict=True) if lab]
    if label_ba is not None:
        rows += [{"name": n, "order": "ba", "label": lab} for n, lab in zip(binary["name"], label_ba, strict=True)
                 if lab]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_tied_decisions_count_half_for_each_class_as_sklearn_with_weights():
    from sklearn.metrics import f1_score

    from omniaudit.evaluation import stats

    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 200)
    q = rng.choice([0.0, 0.5, 1.0], 200)
    est = stats.bootstrap_waf(y, q, n_resamples=0)[0]
    # reference: each tie becomes two rows, predicted a1 and a2, each with weight 1/2
    tie = q == 0.5
    yy = np.concatenate([y, y[tie]])
    pp = np.concatenate([np.where(tie, 1, q).astype(int), np.zeros(tie.sum(), int)])
    ww = np.concatenate([np.where(tie, 0.5, 1.0), np.full(tie.sum(), 0.5)])
    ref = 100 * f1_score(yy, pp, average="weighted", labels=[0, 1], sample_weight=ww, zero_division=0)
    assert est.value == pytest.approx(ref, abs=1e-12)
    assert stats.decide_with_ties(np.array([0.2, 0.5, (0.7 + 0.3) / 2, 0.5 + 1e-6, 1.0])).tolist() == [
        0.0, 0.5, 0.5, 1.0, 1.0]
    assert stats.prior_following(np.array([0.5, 1.0, 0.0]), np.array([1, 1, -1])) == 0.75


def test_position_locked_judge_is_not_scored_as_always_a1(tmp_path):
    """Slot A in both orders = a1 in order ab, a2 in order ba: P(a1) averages to 0.5 on every pair, a tie.

    The old threshold (p >= 0.5 -> a1) scored it as "always a1": accuracy = the a1 share (the majority class here),
    WAF of a one-class predictor, prior-following = the prior's a1 share."""
    from omniaudit.evaluation.preference.report import stratified_random_waf
    from omniaudit.evaluation.stats import waf

    pairs = _pairs()["pairs"]
    binary = _binary(pairs)
    n = len(binary)
    judge = _write_judge(tmp_path / "slot_a.csv", binary, ["a1"] * n, ["a2"] * n)
    audit, table = audit_preference(pairs, PreferenceAuditConfig(n_resamples=200, source_classifier=False,
                                                                 controls=False, judges=[judge]))
    y = (binary["preference"] == "a1").to_numpy(int)
    full = audit["predictors"]["slot_a"]["full"]
    assert audit["judges"]["slot_a"]["n_ties"] == n and full["ties"] == n
    assert audit["ties"]["counts"]["slot_a"] == n
    assert y.mean() > 0.55  # a1 is the majority class: "always a1" would score accuracy > 0.55
    assert full["accuracy"] == 0.5
    assert full["waf"] == pytest.approx(stratified_random_waf(0.5, y.mean()), abs=1e-9)  # a fair coin, exactly
    assert abs(full["waf"] - waf(y, np.ones(n, int))) > 2  # not the score of "always a1" (the old one)
    assert audit["predictors"]["slot_a"]["counter_stereotypical"]["prior_following"] == 0.5
    assert full["mcnemar"]["n_ties_excluded"] == n and full["mcnemar"]["b"] == full["mcnemar"]["c"] == 0
    assert (table["pred__slot_a"] == "tie").all()
    # a single tie among decided pairs is counted, not silently made a1
    one = ["a1" if p == "a1" else "a2" for p in binary["preference"]]
    ba = list(one)
    ba[0] = "a2" if one[0] == "a1" else "a1"
    judge = _write_judge(tmp_path / "one_tie.csv", binary, one, ba)
    audit, _ = audit_preference(pairs, PreferenceAuditConfig(n_resamples=0, source_classifier=False, controls=False,
                                                             judges=[judge]))
    assert audit["judges"]["one_tie"]["n_ties"] == 1
    assert audit["predictors"]["one_tie"]["full"]["accuracy"] == pytest.approx(1 - 0.5 / n)


def test_cluster_bootstrap_equals_a_loop_over_resampled_clusters():
    from sklearn.metrics import f1_score

    from omniaudit.evaluation import stats

    rng = np.random.default_rng(9)
    clusters = np.repeat(np.arange(40), rng.integers(1, 4, 40))
    y = rng.integers(0, 2, clusters.size)
    pred = np.where(rng.random(clusters.size) < 0.7, y, 1 - y)
    est = stats.bootstrap_waf(y, pred, n_resamples=300, seed=3, clusters=clusters)[0]
    members = [np.flatnonzero(clusters == c) for c in range(40)]
    vals = []
    for draw in stats.resample_indices(40, 300, seed=3):
        idx = np.concatenate([members[c] for c in draw])
        if 0 < y[idx].sum() < idx.size:
            vals.append(100 * f1_score(y[idx], pred[idx], average="weighted", labels=[0, 1], zero_division=0))
    assert est.n_resamples_used == len(vals)
    assert est.ci == pytest.approx(tuple(np.percentile(vals, [2.5, 97.5])), abs=1e-9)
    # one cluster per item is the plain pair bootstrap
    plain = stats.bootstrap_waf(y, pred, n_resamples=300, seed=3)[0]
    assert stats.bootstrap_waf(y, pred, n_resamples=300, seed=3, clusters=np.arange(y.size))[0] == plain


def test_dual_order_ci_is_not_narrower_than_the_pair_level_ci():
    """Both orders of a pair are one unit: resampling them independently shrank the CI by about sqrt(2)."""
    from omniaudit.evaluation.stats import bootstrap_waf, decide_with_ties

    tables = _pairs(SyntheticSpec(n_pairs=600, seed=3), dual_order=True)
    config = PreferenceAuditConfig(n_resamples=1000, source_classifier=False, controls=False)
    pairs_audit, _ = audit_preference(tables["pairs"], config)
    dual_audit, dual_table = audit_preference(tables["dual_order"], config)
    assert "both orders" in dual_audit["bootstrap"]["unit"] and pairs_audit["bootstrap"]["unit"] == "pairs"
    width = lambda e: e["ci"][1] - e["ci"][0]  # noqa: E731
    y = (dual_table["preference"] == "a1").to_numpy(int)
    for name in ("generator_lr", "winrate_rule"):
        pair_w, dual_w = width(pairs_audit["predictors"][name]["full"]), width(dual_audit["predictors"][name]["full"])
        assert dual_w > 0.9 * pair_w, (name, dual_w, pair_w)
        # the old item-level resampling of the same table: about 1/sqrt(2) as wide
        naive = bootstrap_waf(y, decide_with_ties(dual_table[f"p_a1__{name}"].to_numpy()), 1000, 0)[0]
        assert naive.ci[1] - naive.ci[0] < 0.8 * pair_w


def test_judges_named_name_eq_file_and_same_stems(tmp_path):
    from omniaudit.errors import InputError

    pairs = _pairs()["pairs"]
    binary = _binary(pairs)
    (tmp_path / "A").mkdir()
    (tmp_path / "B").mkdir()
    gold = binary["preference"].tolist()
    first = _write_judge(tmp_path / "A" / "predictions.csv", binary, gold, gold)
    second = _write_judge(tmp_path / "B" / "predictions.csv", binary, ["a1"] * len(gold))
    config = PreferenceAuditConfig(n_resamples=0, source_classifier=False, controls=False)
    with pytest.raises(InputError, match="NAME=FILE") as err:
        audit_preference(pairs, PreferenceAuditConfig(**{**config.__dict__, "judges": [str(first), str(second)]}))
    assert str(first) in str(err.value) and str(second) in str(err.value)
    audit, _ = audit_preference(pairs, PreferenceAuditConfig(**{**config.__dict__,
                                                                "judges": [f"A={first}", f"B={second}"]}))
    assert audit["judges"]["A"]["file"] == str(first) and audit["predictors"]["A"]["full"]["waf"] == 100.0
    assert audit["judges"]["B"]["n_one_order"] == len(binary)
    # the two orders of one judge in two files, joined by NAME
    ab = _write_judge(tmp_path / "ab.csv", binary, gold)
    ba = _write_judge(tmp_path / "ba.csv", binary, [None] * len(gold), gold)
    audit, _ = audit_preference(pairs, PreferenceAuditConfig(**{**config.__dict__, "judges": [f"J={ab}", f"J={ba}"]}))
    assert audit["judges"]["J"]["n_two_orders"] == len(binary) and audit["judges"]["J"]["files"] == [str(ab), str(ba)]
    for bad in (f"length_lr={ab}", "=x.csv"):
        with pytest.raises(InputError):
            audit_preference(pairs, PreferenceAuditConfig(**{**config.__dict__, "judges": [bad]}))


def test_every_judge_file_is_checked_before_any_probe_is_fitted(tmp_path, monkeypatch):
    from omniaudit.errors import InputError
    from omniaudit.evaluation.preference import audit as preference

    pairs = _pairs()["pairs"]
    binary = _binary(pairs)
    good = _write_judge(tmp_path / "good.csv", binary, binary["preference"].tolist())
    bad = tmp_path / "bad.csv"
    bad.write_text("name,order,label\n" + f"{binary['name'][0]},ab,maybe\n", encoding="utf-8")

    def no_probes(*_args, **_kwargs):
        raise AssertionError("a probe was fitted before the judge files were checked")

    monkeypatch.setattr(preference, "predictor_scores", no_probes)
    monkeypatch.setattr(preference.probes, "oof_logistic", no_probes)
    with pytest.raises(InputError, match="expected label a1 or a2") as err:
        audit_preference(pairs, PreferenceAuditConfig(n_resamples=0, judges=[good, bad]))
    assert str(bad) in str(err.value)


def test_judged_only_audits_the_covered_pairs_and_says_so(tmp_path):
    from omniaudit.errors import InputError
    from omniaudit.evaluation.stats import waf

    pairs = _pairs()["pairs"]
    binary = _binary(pairs)
    covered = binary["fold"].isin([0, 1]).to_numpy()
    labels = [p if c else None for p, c in zip(binary["preference"], covered, strict=True)]
    judge = _write_judge(tmp_path / "two_folds.csv", binary, labels)
    config = PreferenceAuditConfig(n_resamples=100, source_classifier=False, controls=False, judges=[judge])
    with pytest.raises(InputError, match="--judged-only"):
        audit_preference(pairs, config)
    with pytest.raises(InputError, match="no judge"):
        audit_preference(pairs, PreferenceAuditConfig(judged_only=True))
    out = run_preference_audit(tmp_path / "out", data=None, spec=SyntheticSpec(n_pairs=400, seed=7),
                               config=PreferenceAuditConfig(**{**config.__dict__, "judged_only": True}))
    import json

    audit = json.loads((out / "audit.json").read_text())
    jo = audit["judged_only"]
    assert jo["n_pairs"] == int(covered.sum()) and jo["n_binary"] == len(binary)
    assert jo["by_fold"]["0"]["judged"] == jo["by_fold"]["0"]["total"] > 0 and jo["by_fold"]["3"]["judged"] == 0
    assert audit["slices"]["full"]["n"] == int(covered.sum())
    assert audit["predictors"]["two_folds"]["full"]["waf"] == 100.0
    # probes are the out-of-fold predictions of the full audit, scored on the judged pairs only
    full_audit, full_table = audit_preference(pairs, PreferenceAuditConfig(n_resamples=0, source_classifier=False,
                                                                           controls=False))
    pred = (full_table["pred__generator_lr"] == "a1").to_numpy(int)[covered]
    y = (binary["preference"] == "a1").to_numpy(int)[covered]
    assert audit["predictors"]["generator_lr"]["full"]["waf"] == pytest.approx(waf(y, pred))
    report = (out / "report.md").read_text()
    assert f"Judged-only audit: every number below covers the {int(covered.sum())} of {len(binary)} binary pairs" \
        in report
    assert "fold 3: 0/" in report


def test_cli_accepts_name_eq_file_and_judged_only(tmp_path, capsys, emoprefer_csv, small_raw):
    import json

    from omniaudit.cli import main

    binary = small_raw[small_raw["preference"] != "same"].reset_index(drop=True)
    (tmp_path / "A").mkdir()
    (tmp_path / "B").mkdir()
    half = [p if i % 2 else None for i, p in enumerate(binary["preference"])]
    first = _write_judge(tmp_path / "A" / "predictions.csv", binary, binary["preference"].tolist())
    second = _write_judge(tmp_path / "B" / "predictions.csv", binary, half)
    fast = ["--n-resamples", "50", "--no-source-classifier", "--no-controls"]
    base = ["audit", "preference", "--data", str(emoprefer_csv), *fast]
    assert main([*base, "--out", str(tmp_path / "clash"), "--judges", str(first), str(second)]) == 2
    assert "NAME=FILE" in capsys.readouterr().err.replace("\n", "")
    assert main([*base, "--out", str(tmp_path / "partial"), "--judges", f"A={first}", f"B={second}"]) == 2
    assert "--judged-only" in capsys.readouterr().err.replace("\n", "")
    out = tmp_path / "ok"
    assert main([*base, "--out", str(out), "--judges", f"A={first}", f"B={second}", "--judged-only"]) == 0
    audit = json.loads((out / "audit.json").read_text())
    assert set(audit["judges"]) == {"A", "B"}
    assert audit["judged_only"]["n_pairs"] == audit["slices"]["full"]["n"] == len(binary) // 2
    assert audit["judged_only"]["per_judge"] == {"A": len(binary), "B": len(binary) // 2}


def test_copies_of_a_pair_are_resampled_as_one_unit():
    import pandas as pd

    from omniaudit.evaluation.preference.audit import bootstrap_clusters

    raw = synthesize(SyntheticSpec(n_pairs=200, seed=2))
    binary_rows = raw.index[raw["preference"] != "same"][:3]
    pairs = build_tables(pd.concat([raw, raw.loc[binary_rows]], ignore_index=True))["pairs"]
    audit, _ = audit_preference(pairs, PreferenceAuditConfig(n_resamples=50, source_classifier=False,
                                                             controls=False))
    assert audit["bootstrap"]["unit"] == "source pairs (duplicates together)"
    key, _ = bootstrap_clusters(_binary(pairs))
    assert len(key) - len(set(key)) == 3
    assert audit["dataset"]["duplicates"]["exact"] == 3


# ------------------------------------------------------------- position bias, Table 3, lengths, consensus
def _f1(y, pred):
    from sklearn.metrics import f1_score

    return 100 * f1_score(y, pred, average="weighted", labels=[0, 1], zero_division=0)


@pytest.mark.slow
def test_per_order_waf_of_a_judge_trained_in_one_order(tmp_path):
    """Right in order ab, always the first slot in order ba (a2 there): each order scored alone, by hand."""
    from omniaudit.evaluation.stats import resample_indices

    pairs = _pairs()["pairs"]
    binary = _binary(pairs)
    n = len(binary)
    judge = _write_judge(tmp_path / "one_order.csv", binary, binary["preference"].tolist(), ["a2"] * n)
    audit, table = audit_preference(pairs, PreferenceAuditConfig(n_resamples=300, source_classifier=False,
                                                                 controls=False, judges=[judge]))
    y = (binary["preference"] == "a1").to_numpy(int)
    pb = audit["judges"]["one_order"]["position_bias"]
    assert pb["orders"]["ab"]["full"]["waf"] == 100.0 and pb["orders"]["ab"]["full"]["n"] == n
    assert pb["orders"]["ba"]["full"]["waf"] == pytest.approx(_f1(y, np.zeros(n, int)), abs=1e-9)
    assert pb["orders"]["averaged"]["full"] == {k: audit["predictors"]["one_order"]["full"][k]
                                                for k in ("waf", "ci", "n")}
    assert pb["first_slot_rate"] == {"ab": pytest.approx(y.mean()), "ba": 1.0}
    lm = binary["length_matched"].to_numpy(bool)
    assert pb["orders"]["ba"]["length_matched"]["waf"] == pytest.approx(_f1(y[lm], np.zeros(lm.sum(), int)))
    # the ab - ba gap: paired over the same resamples
    gap = pb["ab_minus_ba"]["full"]
    diffs = [100 - _f1(y[i], np.zeros(n, int)) for i in resample_indices(n, 300, 0) if 0 < y[i].sum() < n]
    assert gap["value"] == pytest.approx(100 - _f1(y, np.zeros(n, int)))
    assert gap["ci"] == pytest.approx(list(np.percentile(diffs, [2.5, 97.5])), abs=1e-9)
    assert table["p_a1_ba__one_order"].eq(0.0).all() and table["p_a1_ab__one_order"].eq(y).all()
    # a judge given in one order only has no ba score and no paired gap
    ab_only = _write_judge(tmp_path / "ab_only.csv", binary, binary["preference"].tolist())
    audit, _ = audit_preference(pairs, PreferenceAuditConfig(n_resamples=50, source_classifier=False,
                                                             controls=False, judges=[ab_only]))
    pb = audit["judges"]["ab_only"]["position_bias"]
    assert pb["n_pairs"] == {"ab": n, "ba": 0} and pb["ab_minus_ba"]["full"]["n"] == 0


def _table3_judges(tmp_path, binary, b_count, c_count):
    """Two judges (ab only) that disagree on exactly b + c length-matched pairs: A alone right on b, B alone on c."""
    gold = binary["preference"].to_numpy()
    wrong = np.where(gold == "a1", "a2", "a1")
    lm = np.flatnonzero(binary["length_matched"].to_numpy(bool))
    assert lm.size > b_count + c_count
    a, b = gold.copy(), gold.copy()
    b[lm[:b_count]] = wrong[lm[:b_count]]
    a[lm[b_count:b_count + c_count]] = wrong[lm[b_count:b_count + c_count]]
    return (_write_judge(tmp_path / "A.csv", binary, a.tolist()), _write_judge(tmp_path / "B.csv", binary, b.tolist()),
            a, b)


@pytest.mark.slow
def test_several_comparisons_in_one_run_reproduce_table3_with_paired_cis(tmp_path):
    from omniaudit.evaluation.stats import resample_indices

    pairs = _pairs(SyntheticSpec(n_pairs=900, seed=3))["pairs"]
    binary = _binary(pairs)
    file_a, file_b, a, b = _table3_judges(tmp_path, binary, 38, 37)  # Table 3, first row: 38 / 37, p = 1.00
    config = PreferenceAuditConfig(n_resamples=300, source_classifier=False, controls=False,
                                   judges=[f"text={file_a}", f"omni={file_b}"],
                                   compare=["text:omni", "omni:generator_lr"])
    audit, table = audit_preference(pairs, config)
    assert [(c["a"], c["b"]) for c in audit["comparisons"]] == [("text", "omni"), ("omni", "generator_lr")]
    lm = audit["comparisons"][0]["slices"]["length_matched"]
    assert (lm["mcnemar"]["b"], lm["mcnemar"]["c"]) == (38, 37) and round(lm["mcnemar"]["p"], 2) == 1.00
    full = audit["comparisons"][0]["slices"]["full"]
    assert (full["mcnemar"]["b"], full["mcnemar"]["c"]) == (38, 37)  # they agree off the length-matched slice
    # the paired WAF difference and its CI, by hand over the same resamples of the length-matched slice
    mask = binary["length_matched"].to_numpy(bool)
    y = (binary["preference"] == "a1").to_numpy(int)[mask]
    pa, pb = (a[mask] == "a1").astype(int), (b[mask] == "a1").astype(int)
    diffs = [_f1(y[i], pa[i]) - _f1(y[i], pb[i]) for i in resample_indices(mask.sum(), 300, 0)
             if 0 < y[i].sum() < y.size]
    assert lm["difference"]["value"] == pytest.approx(_f1(y, pa) - _f1(y, pb), abs=1e-9)
    assert lm["difference"]["ci"] == pytest.approx(list(np.percentile(diffs, [2.5, 97.5])), abs=1e-9)
    assert lm["difference"]["ci"][0] < 0 < lm["difference"]["ci"][1]  # balanced gains and losses: no paired gain
    # the second comparison pairs a judge with a probe (McNemar against the probe's out-of-fold decisions)
    probe = (table["pred__generator_lr"] == "a1").to_numpy()[mask]
    right_a, right_p = pb == y, probe == y
    second = audit["comparisons"][1]["slices"]["length_matched"]["mcnemar"]
    assert (second["b"], second["c"]) == (int((right_a & ~right_p).sum()), int((~right_a & right_p).sum()))
    report = run_preference_audit(tmp_path / "out", spec=SyntheticSpec(n_pairs=900, seed=3), config=config)
    text = (report / "report.md").read_text()
    assert "## Paired comparisons (Table 3)" in text and "| text / omni | 38 / 37 | 1.000 |" in text
    with pytest.raises(InputError, match="unknown predictor 'nobody'"):
        audit_preference(pairs, PreferenceAuditConfig(**{**config.__dict__, "compare": ["text:nobody"]}))
    with pytest.raises(InputError, match="A:B"):
        audit_preference(pairs, PreferenceAuditConfig(**{**config.__dict__, "compare": ["text-omni"]}))


def test_generator_lengths_and_lc_win_rates_in_the_audit(planted):
    audit, _ = planted
    lengths, lc = audit["lengths"], audit["length_controlled"]
    win = audit["dataset"]["win_rates"]
    assert {g: v["win_rate"] for g, v in lengths["generators"].items()} == win
    wordiest = max(lengths["generators"], key=lambda g: lengths["generators"][g]["mean_length"])
    assert lengths["wordiest"]["generator"] == wordiest
    assert lengths["wordiest_wins_most"] == (wordiest == max(win, key=win.get))
    for g, v in lc["generators"].items():
        assert v["win_rate"] == pytest.approx(win[g])  # same binary pairs, same raw rate
        assert 0 < v["lc_win_rate"] < 1


def test_lengths_in_the_audit_by_hand():
    pairs = _pairs()["pairs"]
    audit, _ = audit_preference(pairs, PreferenceAuditConfig(n_resamples=0, source_classifier=False, controls=False))
    both = pd.concat([pairs[["model1", "len1"]].set_axis(["g", "len"], axis=1),
                      pairs[["model2", "len2"]].set_axis(["g", "len"], axis=1)])
    expected = both.groupby("g")["len"].mean()
    got = {g: v["mean_length"] for g, v in audit["lengths"]["generators"].items()}
    assert got == pytest.approx(expected.to_dict())
    report = _report_text(audit)
    assert "The wordiest generator, **" in report and "LC win rate" in report


def _report_text(audit):
    from omniaudit.evaluation.preference.report import preference_report

    return preference_report(audit, {"full_vs_counter": "a.png", "win_rates": "b.png"}, "test")


def test_consensus_scores_predictors_against_annotators(tmp_path):
    """Three annotators: r1 = the dataset label, r2 = the label on even rows and flipped on odd rows, r3 = always a1.
    Majority, unanimity and the dataset label's agreement follow by hand."""
    pairs = _pairs()["pairs"]
    binary = _binary(pairs)
    gold = binary["preference"].to_numpy()
    flipped = np.where(gold == "a1", "a2", "a1")
    r2 = np.where(np.arange(len(gold)) % 2 == 0, gold, flipped)
    rows = [{"name": nm, "annotator": who, "label": lab} for who, labels in (("r1", gold), ("r2", r2),
                                                                            ("r3", ["a1"] * len(gold)))
            for nm, lab in zip(binary["name"], labels, strict=True)]
    ann = tmp_path / "annotations.csv"
    pd.DataFrame(rows).to_csv(ann, index=False)
    truth = _write_judge(tmp_path / "dataset_label.csv", binary, gold.tolist())
    audit, _ = audit_preference(pairs, PreferenceAuditConfig(n_resamples=100, source_classifier=False,
                                                             controls=False, annotations=ann, judges=[truth]))
    c = audit["consensus"]
    even = np.arange(len(gold)) % 2 == 0
    unanimous = even & (gold == "a1")  # all three say a1
    majority = np.where(gold == r2, gold, "a1")  # r1 and r2 agree, else r3 (a1) breaks the tie
    assert c["n_annotators"] == 3 and c["n_pairs_annotated"] == len(gold)
    assert c["targets"]["unanimous"]["n"] == int(unanimous.sum())
    assert c["targets"]["majority"]["n"] == len(gold)
    assert c["targets"]["majority"]["agrees_with_dataset_label"] == pytest.approx(np.mean(majority == gold))
    y_major = (majority == "a1").astype(int)
    assert c["targets"]["majority"]["predictors"]["dataset_label"]["waf"] == pytest.approx(
        _f1(y_major, (gold == "a1").astype(int)))
    assert c["annotators"]["r1"]["agrees_with_majority"] == pytest.approx(np.mean(majority == gold))
    codes = np.stack([np.where(lab == "a1", 0, 1) for lab in (gold, r2, np.array(["a1"] * len(gold)))], axis=1)
    from omniaudit.evaluation.preference.consensus import counts_per_item, fleiss_kappa

    assert c["fleiss_kappa"] == pytest.approx(fleiss_kappa(counts_per_item(codes)))
    assert "## Multi-annotator consensus" in _report_text(audit)


def test_cli_compare_annotations_and_odin(tmp_path, capsys, emoprefer_csv, small_raw):
    import json

    from omniaudit.cli import main

    binary = small_raw[small_raw["preference"] != "same"].reset_index(drop=True)
    judge = _write_judge(tmp_path / "judge.csv", binary, binary["preference"].tolist(),
                         binary["preference"].tolist())
    ann = tmp_path / "ann.csv"
    pd.DataFrame([{"name": nm, "annotator": r, "label": lab} for r in ("x", "y")
                  for nm, lab in zip(binary["name"], binary["preference"], strict=True)]).to_csv(ann, index=False)
    run = tmp_path / "odin_run"
    run.mkdir()
    (run / "odin_metrics.json").write_text(json.dumps({"folds": {"fold0": {"rho_content_length": -0.2},
                                                                 "fold1": {"rho_content_length": 0.4}},
                                                       "lambda_dec": 1.0}))
    fast = ["--n-resamples", "50", "--no-source-classifier", "--no-controls"]
    out = tmp_path / "out"
    assert main(["audit", "preference", "--data", str(emoprefer_csv), *fast, "--judges", f"J={judge}",
                 "--compare", "J:generator_lr", "length_lr:winrate_rule", "--annotations", str(ann),
                 "--odin", str(run), "--out", str(out)]) == 0
    audit = json.loads((out / "audit.json").read_text())
    assert len(audit["comparisons"]) == 2 and audit["consensus"]["fleiss_kappa"] == pytest.approx(1.0)
    assert audit["odin"]["runs"]["lambda=1"]["correlations"]["rho_content_length"]["mean"] == pytest.approx(0.3)
    assert audit["judges"]["J"]["position_bias"]["orders"]["ab"]["full"]["waf"] == 100.0
    assert (out / "fig2a_odin_correlations.png").is_file()
    report = (out / "report.md").read_text()
    for section in ("position bias (per-order WAF)", "Paired comparisons", "Multi-annotator consensus",
                    "ODIN head-confound correlations", "Generator win rates and length"):
        assert section in report, section
    assert main(["audit", "preference", "--data", str(emoprefer_csv), *fast, "--compare", "length_lr",
                 "--out", str(tmp_path / "bad")]) == 2
    assert "A:B" in capsys.readouterr().err
