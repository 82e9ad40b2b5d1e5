"""The scorecard as a calibrated instrument, proven by simulation on the defaults' item structure: shortcut-free
models (content-blind guessers, content choosers, models that only guess without audio) are flagged at most 5% of the
time across every measure and stratum; the intervals cover at their nominal rate on the defaults' cluster counts;
planted shortcuts, including one confined to a stratum, are found."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from omniaudit.evaluation.scorecard import ScorecardOptions, run_scorecard
from omniaudit.evaluation.scorecard.inference import arm, contrast, decide
from omniaudit.evaluation.scorecard.rules import decide_family, gap_measures
from omniaudit.evaluation.scorecard.simulate import AT_MINIMUM, item_structure, simulate

AUDITS = ("preference", "protocols", "interventions")


@pytest.fixture(scope="module")
def structure(tmp_path_factory) -> dict:
    """The defaults' item tables, as the oracle's audits leave them (built and answered once)."""
    out = tmp_path_factory.mktemp("calibration") / "card"
    run_scorecard(out, ["oracle=scripted:oracle"], ScorecardOptions(audits=AUDITS))
    return item_structure(out)


def _flags(records: dict) -> list[str]:
    return [f"{e['key']}/{e['stratum']}" for es in records.values() for e in es if e["verdict"] == "flagged"]


TABLES = {"preference": "preference", "protocols": "protocols", "interventions": "scored"}  # audit -> its items


@pytest.fixture(scope="module")
def family(structure) -> tuple[int, dict[str, str]]:
    """The size of the whole family (every counted measure of the three audits) and the audit of each measure
    and stratum. A verdict is its own contrast against the family's Bonferroni split, so a run planting one
    measure's shortcut simulates only the audit that measure reads, priced at the whole family: the verdict a card of
    all three audits gives it (the protocols items are most of a simulation's time)."""
    records = decide_family(simulate(structure, "uniform", np.random.default_rng(0)))
    size = sum(e["counts"] and e["measured"] for es in records.values() for e in es)
    return size, {f"{e['key']}/{e['stratum']}": e["audit"] for es in records.values() for e in es}


def _planted(structure: dict, family: tuple[int, dict[str, str]], key: str, rng, plant: dict) -> dict:
    """A uniform guesser with ``plant``, simulated on the audit of ``key`` alone, its verdicts priced at the whole
    family (see ``family``)."""
    size, audit_of = family
    table = TABLES[audit_of[key]]
    return decide_family(simulate({table: structure[table]}, "uniform", rng, plant), family=size)


def _covered(tested: dict) -> tuple[int, int]:
    """How many of the measured intervals (95%) cover their null, of how many (the truth of a uniform guesser)."""
    covered = total = 0
    for c in (t.contrast for ts in tested.values() for t in ts if t.contrast is not None):
        covered += abs(c.value - c.null) <= sps.t.ppf(0.975, c.clusters - 1) * c.se + 1e-12
        total += 1
    return covered, total


@pytest.fixture(scope="module")
def shortcut_free(structure):
    """``shortcut_free(policy)``: 200 models of a shortcut-free policy, each as (its verdicts, how many of its
    intervals cover the null, of how many), simulated once for the module: the false-flag test and the label test
    of ``audio_only`` read the same models (each simulation answers every item of the three audits)."""
    runs: dict[str, list] = {}

    def models(policy: str) -> list[tuple[dict, tuple[int, int]]]:
        if policy not in runs:
            rng = np.random.default_rng({"uniform": 0, "content": 1, "audio_only": 2}[policy])
            runs[policy] = [(decide_family(tested), _covered(tested))
                            for tested in (simulate(structure, policy, rng) for _ in range(200))]
        return runs[policy]

    return models


@pytest.mark.slow  # the defaults built and answered once for the module: about a minute
@pytest.mark.parametrize("policy", ["uniform", "content", "audio_only"])
def test_shortcut_free_models_are_rarely_flagged_and_intervals_cover(shortcut_free, policy):
    models = shortcut_free(policy)
    flagged = sum(bool(_flags(records)) for records, _ in models)
    covered, total = (sum(n) for n in zip(*(counts for _, counts in models), strict=True))
    print(policy, "false-flag rate", flagged / len(models), "coverage", covered / max(total, 1))
    assert flagged / len(models) <= 0.05, (policy, flagged)
    if policy == "uniform":  # the truth of every measure is its null: a 95% interval covers it
        assert covered / total >= 0.93, covered / total


@pytest.mark.slow  # the defaults built and answered once for the module: about a minute
def test_a_model_that_only_guesses_without_audio_does_not_follow_labels(shortcut_free):
    """It is right with the clip and guesses without it; labelled items without the clip are matched with unlabelled
    items without the clip, so it follows no label (it was flagged when "label shown" pooled items without audio)."""
    values = [e["value"] for records, _ in shortcut_free("audio_only") for e in records["label_following"]]
    assert abs(np.mean(values)) < 0.01


@pytest.mark.slow  # the defaults built and answered once for the module: about a minute
def test_a_lock_confined_to_the_concatenated_format_is_flagged_there(structure):
    rng = np.random.default_rng(3)
    records = decide_family(simulate(structure, "content", rng, {"lock": 1.0, "format": "concat"}))
    assert sorted(_flags(records)) == ["lock/concat", "pairwise_slot_a/concat"]
    native = next(e for e in records["position"] if e["stratum"] == "native")
    assert native["verdict"] != "flagged" and native["value"] < 0.5


@pytest.mark.slow  # the defaults built and answered once for the module: about a minute
def test_a_gap_the_average_cancels_is_flagged_in_its_dimension(structure):
    """Muted clips described as sounding (Existence gap 100) and natural pairs called mismatched (Consistency gap
    -100) average with Sync's 0 to an Avg Gap near 0: the dimension's own gap flags it (found by find_fix_verify's
    DPO run: 8 / 100 / -60 averaged to 16)."""
    rng = np.random.default_rng(6)
    scored = structure["scored"].copy()
    dim, orig = scored["dimension"], scored["intervention"] == "original"
    guess = rng.random(len(scored)) < scored["dimension"].map({"sync": 1 / 3}).fillna(0.5)
    scored["correct"] = np.where(dim == "existence", orig, np.where(dim == "consistency", ~orig, guess))
    records = decide_family({"visual_inference": gap_measures(scored)})["visual_inference"]
    by = {f"{e['key']}/{e['stratum']}": e for e in records}
    assert abs(by["avg_gap/all"]["value"]) < 10 and by["avg_gap/all"]["verdict"] != "flagged"
    assert by["dim_gap/existence"]["value"] == 100 and by["dim_gap/existence"]["verdict"] == "flagged"
    assert by["dim_gap/consistency"]["value"] == -100 and by["dim_gap/consistency"]["verdict"] == "clear"


@pytest.mark.slow
def test_planted_effects_are_found_and_the_mde_says_how_often(structure, family):
    """Strong planted effects (slot-A 0.75, label following on half the labelled items, deaf on 90% of the items)
    are found every time; at each measure's minimum effect of interest the power is what its MDE says: at least
    80% where the MDE is within the minimum effect (each priced at the whole family: see ``family``)."""
    assert family[0] == len(family[1]) and set(AT_MINIMUM) <= set(family[1])  # every measure counted
    rng = np.random.default_rng(4)
    strong = {"slot_a/all": {"slot_a": 0.5}, "cue/blueprint": {"follow": 0.5}, "avg_gap/all": {"deaf": 0.9}}
    for key, plant in strong.items():
        assert all(key in _flags(_planted(structure, family, key, rng, plant)) for _ in range(20)), key
    for key, plant in AT_MINIMUM.items():
        runs = [_planted(structure, family, key, rng, plant) for _ in range(60)]
        power = np.mean([key in _flags(r) for r in runs])
        record = next(e for es in runs[0].values() for e in es if f"{e['key']}/{e['stratum']}" == key)
        if record["mde"] <= record["delta"] * 0.9:
            assert power >= 0.7, (key, power, record["mde"])
        if record["mde"] >= record["delta"] * 1.3:
            assert power < 0.8, (key, power, record["mde"])


def test_clear_needs_enough_items_and_the_mde_says_what_can_be_detected():
    few = contrast(np.arange(6), [arm(np.array([0, 1, 0, 1, 1, 0.0]), np.ones(6, bool), 0.5, 0.25)])
    many = contrast(np.arange(600), [arm(np.tile([0, 1.0], 300), np.ones(600, bool), 0.5, 0.25)])
    assert decide(few, "above", 0.10, m=5)["verdict"] == "inconclusive"
    assert decide(many, "above", 0.10, m=5)["verdict"] == "clear"
    assert decide(few, "above", 0.10, m=5)["mde"] > decide(many, "above", 0.10, m=5)["mde"] > 0


def test_a_real_effect_shown_below_the_minimum_of_interest_is_clear_not_flagged():
    def slot_a(rate: float, n: int = 4000):
        picks = np.r_[np.ones(round(rate * n)), np.zeros(n - round(rate * n))]
        return contrast(np.arange(n), [arm(picks, np.ones(n, bool), 0.5, 0.25)])

    small = decide(slot_a(0.53), "outside", 0.10, m=5)  # excludes 0.5, and rules out 0.6: no position lock
    assert small["ci"][0] > 0.5 and small["significant"] and small["verdict"] == "clear"
    large = decide(slot_a(0.62), "outside", 0.10, m=5)  # excludes 0.5, and 0.6 is not ruled out: a finding
    assert large["significant"] and large["verdict"] == "flagged"
    assert not decide(slot_a(0.5), "outside", 0.10, m=5)["significant"]


def test_the_interval_matches_statsmodels_cluster_robust_ols():
    """The contrast of one arm is the intercept of OLS with cluster-robust (CR1) errors; its p is the t test on
    G - 1 degrees of freedom, as statsmodels computes it with ``use_t``."""
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(7)
    clusters = rng.integers(0, 12, 90)
    y = rng.random(90)
    c = contrast(clusters, [arm(y, np.ones(90, bool), 0.5, 1 / 12)])
    fit = sm.OLS(y, np.ones((90, 1))).fit(cov_type="cluster", cov_kwds={"groups": clusters}, use_t=True)
    assert c.value == pytest.approx(fit.params[0])
    assert c.se_wald == pytest.approx(fit.bse[0], rel=1e-9)
    assert c.se >= c.se_wald


@pytest.mark.slow  # the defaults built and answered once for the module: about a minute
def test_style_is_two_sided_and_does_not_read_accuracy_as_a_preference(structure):
    """A judge over-corrected to the shorter description is flagged, named "shorter"; one that defies the prior is
    flagged "against the prior"; a judge without a style preference is not flagged whatever its accuracy (on the
    label-against slice alone a correct judge read 0 and a contrarian one 1)."""
    rng = np.random.default_rng(8)
    for plant, key, direction in (({"shorter": 0.6}, "longer", "shorter"), ({"longer": 0.6}, "longer", "longer"),
                                  ({"against_prior": 0.6}, "prior", "against the prior")):
        record = next(e for e in decide_family(simulate(structure, "uniform", rng, plant))["style"] if e["key"] == key)
        assert record["verdict"] == "flagged" and record["direction"] == direction, (plant, record)
    table = structure["preference"].copy()
    gold = (table["preference"] == "a1").to_numpy(float)
    for accuracy in (1.0, 0.0):  # the oracle and a judge that is always wrong: no style preference either way
        pick = gold if accuracy else 1 - gold
        table["p_a1_ab__m"], table["p_a1_ba__m"], table["p_a1__m"] = pick, pick, pick
        from omniaudit.evaluation.scorecard.rules import preference_measures

        records = decide_family({"style": [t for t in preference_measures(table, "m") if t.spec.key != "slot_a"]})
        assert [e["verdict"] for e in records["style"]] == ["clear", "clear"], (accuracy, records["style"])
        assert all(abs(e["value"] - 0.5) < 0.1 for e in records["style"])


@pytest.mark.slow  # the defaults built and answered once for the module: about a minute
@pytest.mark.parametrize("copies", [1, 10])
def test_a_one_dimension_collapse_is_flagged_at_every_size(structure, copies):
    """Perfect everywhere but Mute, where 55% of muted clips are said to sound (an Existence gap of 55, an Avg Gap
    of 18): flagged in its dimension on the default's 90 clips and on ten times as many (under a 60-point minimum
    it was clear on 600 clips)."""
    rng = np.random.default_rng(9)
    scored = pd.concat([structure["scored"].assign(source_id=lambda t, k=k: t["source_id"].astype(str) + f"#{k}")
                        for k in range(copies)], ignore_index=True)
    orig = scored["intervention"] == "original"
    said_sound = (scored["dimension"] == "existence") & ~orig & (rng.random(len(scored)) < 0.55)
    records = decide_family({"visual_inference": gap_measures(scored.assign(correct=~said_sound))})
    by = {f"{e['key']}/{e['stratum']}": e for e in records["visual_inference"]}
    assert by["dim_gap/existence"]["verdict"] == "flagged", by["dim_gap/existence"]
    assert by["avg_gap/all"]["value"] < 20  # the average alone would not have caught it


@pytest.mark.slow  # the defaults built and answered once for the module: about a minute
def test_ties_do_not_hide_a_slot_bias(structure):
    """A judge that answers A when the gold is in slot A and "tie" otherwise picks slot A on three quarters of its
    answers (a tie is half a pick of each slot): flagged, slot A. Pairs with a tie were dropped, and it was "not
    measured". A judge that ties everything stays at the null."""
    from omniaudit.evaluation.scorecard.rules import preference_measures

    table = structure["preference"].copy()
    gold_a1 = (table["preference"] == "a1").to_numpy()
    # order ab shows a1 in slot A, order ba shows it in slot B: P(a1) is 1 where the gold is in slot A, else a tie
    table["p_a1_ab__m"] = np.where(gold_a1, 1.0, 0.5)
    table["p_a1_ba__m"] = np.where(gold_a1, 0.5, 0.0)
    table["p_a1__m"] = (table["p_a1_ab__m"] + table["p_a1_ba__m"]) / 2
    slot_a = decide_family({"position": preference_measures(table, "m")[:1]})["position"][0]
    assert slot_a["verdict"] == "flagged" and slot_a["direction"] == "slot A" and abs(slot_a["value"] - 0.75) < 1e-9
    table["p_a1_ab__m"] = table["p_a1_ba__m"] = table["p_a1__m"] = 0.5
    assert decide_family({"position": preference_measures(table, "m")[:1]})["position"][0]["value"] == 0.5


@pytest.mark.slow  # the defaults built and answered once for the module: about a minute
def test_a_judge_locked_to_one_slot_on_half_its_trials_is_flagged(structure):
    """Right on every pairwise trial but locked to slot A on half of them (concat only): its lock is 0.5, a uniform
    guesser's null, so the lock alone certified it clear; its slot-A rate over both orders is 0.75, flagged."""
    df = structure["protocols"].copy()
    rng = np.random.default_rng(10)
    trials = df["trial"].dropna().unique()
    locked = df["trial"].isin(set(trials[rng.random(len(trials)) < 0.5])) & (df["format"] == "concat")
    df["label"] = np.where(locked & (df["config"] == "pairwise"), "A", df["gold"])
    from omniaudit.evaluation.scorecard.rules import lock_measures

    by = {f"{e['key']}/{e['stratum']}": e for e in decide_family({"position": lock_measures(df)})["position"]}
    assert by["lock/concat"]["verdict"] != "flagged" and abs(by["lock/concat"]["value"] - 0.5) < 0.1
    assert by["pairwise_slot_a/concat"]["verdict"] == "flagged"
    assert by["pairwise_slot_a/concat"]["direction"] == "slot A"
    assert by["pairwise_slot_a/native"]["verdict"] == "clear" and by["pairwise_slot_a/native"]["value"] == 0.5


@pytest.mark.slow  # the defaults built and answered once for the module: about a minute
def test_a_label_that_distracts_is_not_read_as_following_and_avoiding_it_is_flagged(structure):
    """A model right without a label whose accuracy a shown label halves, its errors spread over every wrong
    option (the label no more than the others), follows no label: rarely flagged, mean 0 (Pr[answer = label]
    alone flagged it). One that never answers the shown label is flagged, "avoids the label"."""
    rng = np.random.default_rng(11)
    runs = [decide_family(simulate(structure, "audio_only", rng, {"distract": 0.5})) for _ in range(40)]
    cells = [e for r in runs for e in r["label_following"]]
    assert abs(np.mean([e["value"] for e in cells if e["stratum"] == "all"])) < 0.02
    assert np.mean([any(e["verdict"] == "flagged" for e in r["label_following"]) for r in runs]) <= 0.1
    avoid = decide_family(simulate(structure, "uniform", rng, {"avoid": 1.0}))["label_following"]
    pooled = next(e for e in avoid if e["stratum"] == "all")
    assert pooled["verdict"] == "flagged" and pooled["direction"] == "avoids the label", pooled
    follow = decide_family(simulate(structure, "audio_only", rng, {"follow": 0.5}))["label_following"]
    pooled = next(e for e in follow if e["stratum"] == "all")
    assert pooled["verdict"] == "flagged" and pooled["direction"] == "follows the label"
    assert abs(pooled["value"] - 0.5) < 0.1  # the share of items copying the label


@pytest.mark.slow  # the defaults built and answered once for the module: about a minute
def test_the_documented_power_table_is_the_codes(structure):
    """docs/statistics.md's power table (written by benchmarks/scorecard_power.py --docs) states, per measure and
    stratum, the clusters and the MDE a card prints on the defaults (priced at the whole card's family), and the
    minimum effect of the shortcut table: a measure added, a minimum changed or a default resized fails here until
    the table is rewritten."""
    import re
    from pathlib import Path

    from omniaudit.evaluation.scorecard.simulate import card_family
    from omniaudit.shortcuts import BY_NAME

    text = (Path(__file__).resolve().parents[3] / "docs" / "statistics.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- power-table:start"):text.index("<!-- power-table:end -->")]
    rows = {m.group(1): (int(m.group(2)), float(m.group(3)), float(m.group(4)))
            for m in re.finditer(r"^\| `([\w/]+)` \| (\d+) \| ([\d.]+) \| ([\d.]+) \|", block, re.M)}
    records = decide_family(simulate(structure, "uniform", np.random.default_rng(0)), family=card_family())
    measured = {f"{e['key']}/{e['stratum']}": e for es in records.values() for e in es}
    specs = {f"{m.key}/{s}": m for sc in BY_NAME.values() for m in sc.measures for s in m.strata}
    assert set(rows) == set(specs), set(rows) ^ set(specs)
    for key, (clusters, mde, delta) in rows.items():
        assert delta == pytest.approx(specs[key].delta), key
        if key in measured:  # composition's row: medians of simulate_dominance's models (clusters vary by model)
            assert clusters == measured[key]["clusters"], key
            assert mde == pytest.approx(measured[key]["mde"], rel=0.01, abs=0.001), key


def _replicated(structure: dict, copies: int) -> dict:
    """The defaults' items ``copies`` times over, each copy its own clusters (a dataset ten times the default)."""
    def copy(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
        return pd.concat([frame.assign(**{c: frame[c].astype(str) + f"#{k}" for c in columns if c in frame})
                          for k in range(copies)], ignore_index=True)

    return {"preference": copy(structure["preference"], ("id",)),
            "protocols": copy(structure["protocols"], ("id", "clip_id", "trial")),
            "scored": copy(structure["scored"], ("source_id",))}


@pytest.mark.slow
def test_at_ten_times_the_default_size_guessers_stay_clear_and_either_sign_is_found(structure):
    """A dataset ten times the default: content-blind guessers are rarely flagged (a larger card must not turn
    small noise into findings), and a shortcut at its minimum effect is flagged in each direction, named."""
    big = _replicated(structure, 10)
    rng = np.random.default_rng(12)
    false = np.mean([bool(_flags(decide_family(simulate(big, "uniform", rng)))) for _ in range(30)])
    assert false <= 0.1, false
    signs = (({"slot_a": 0.2}, "slot_a/all", "slot A"), ({"shorter": 0.2}, "longer/all", "shorter"),
             ({"longer": 0.2}, "longer/all", "longer"), ({"against_prior": 0.2}, "prior/all", "against the prior"),
             ({"avoid": 0.5}, "cue/all", "avoids the label"), ({"follow": 0.15}, "cue/all", "follows the label"),
             ({"lock": 0.3, "format": "native"}, "pairwise_slot_a/native", "slot A"))
    for plant, key, direction in signs:
        records = decide_family(simulate(big, "uniform", rng, plant))
        record = next(e for es in records.values() for e in es if f"{e['key']}/{e['stratum']}" == key)
        assert record["verdict"] == "flagged" and record["direction"] == direction, (plant, record["value"])
