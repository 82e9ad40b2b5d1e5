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
from omniaudit.evaluation.scorecard.rules import (
    AuditRun,
    avg_gap_measure,
    cue_measures,
    decide_family,
    lock_measures,
    preference_measures,
    preference_table,
    protocol_frame,
)

AUDITS = ("preference", "protocols", "interventions")
NO_AUDIO = ("skeleton", "descriptors", "true", "wrong", "no_frame")  # blueprint conditions sent without the clip
CHANCE = {"sync": 1 / 3, "existence": 1 / 2, "consistency": 1 / 2}


@pytest.fixture(scope="module")
def structure(tmp_path_factory) -> dict:
    """The defaults' item tables, as the oracle's audits leave them (built and answered once)."""
    out = tmp_path_factory.mktemp("calibration") / "card"
    run_scorecard(out, ["oracle=scripted:oracle"], ScorecardOptions(audits=AUDITS))
    folder = out / "models" / "oracle"

    def run(audit: str, configs: tuple[str, ...]) -> AuditRun:
        return AuditRun("ran", folder / audit, out / "datasets" / audit,
                        {c: folder / f"{c}.jsonl" for c in configs}, "oracle")

    protocols = protocol_frame(run("protocols", ("blueprint", "reference", "pairwise", "cue_conflict")))
    return {"preference": preference_table(run("preference", ("judge",))), "protocols": protocols,
            "scored": pd.read_csv(folder / "interventions" / "scored.csv"), "out": out}


def _uniform_pick(rng, options: pd.Series) -> list:
    return [o[int(rng.integers(len(o)))] for o in options]


def simulate(structure: dict, policy: str, rng: np.random.Generator, plant: dict | None = None) -> dict:
    """One simulated model's tested measures. Shortcut-free policies: ``uniform`` (a content-blind guess on every
    item), ``content`` (chooses by content, right 70% of the time, the same in both orders), ``audio_only`` (right
    when the clip is sent, a guess otherwise: worse without audio, blind to the label). ``plant`` adds a shortcut:
    ``slot_a`` (P(first slot)), ``lock`` and the format it is confined to, ``follow`` (Pr[copy the supplied label]),
    ``deaf`` (Pr[an intervened item answered as its Original])."""
    plant = plant or {}
    t = structure["preference"].copy()
    n = len(t)
    gold_a1 = (t["preference"] == "a1").to_numpy()
    if policy == "content":
        choice = np.where(rng.random(n) < 0.7, gold_a1, ~gold_a1).astype(float)
        ab = ba = choice
    else:
        ab, ba = rng.integers(0, 2, n).astype(float), rng.integers(0, 2, n).astype(float)
    if "slot_a" in plant:  # with this probability per order, the first slot whatever it shows
        ab = np.where(rng.random(n) < plant["slot_a"], 1.0, ab)
        ba = np.where(rng.random(n) < plant["slot_a"], 0.0, ba)
    t["p_a1_ab__sim"], t["p_a1_ba__sim"], t["p_a1__sim"] = ab, ba, (ab + ba) / 2

    df = structure["protocols"].copy()
    audio = ~((df["config"] == "blueprint") & df["condition"].isin(NO_AUDIO)).to_numpy()
    guess = np.array(_uniform_pick(rng, df["options"]), dtype=object)
    gold = df["gold"].to_numpy(object)
    has_gold = pd.notna(df["gold"]).to_numpy()
    if policy == "uniform":
        label = guess
    elif policy == "content":
        label = np.where(has_gold & (rng.random(len(df)) < 0.7), gold, guess)
    else:
        label = np.where(audio & has_gold, gold, guess)
    if "follow" in plant:
        cond = df["condition"].to_numpy(object)
        shown = (((df["config"] == "blueprint") & np.isin(cond, ["wrong_audio", "wrong", "no_frame"]))
                 | ((df["config"] == "reference") & (cond == "wrong"))
                 | ((df["config"] == "cue_conflict") & (cond != "none"))).to_numpy(bool)
        label = np.where(shown & (rng.random(len(df)) < plant["follow"]), df["cue"].to_numpy(object), label)
    if "lock" in plant:  # with this probability, a trial of the format answers slot A in both orders
        trial_lock = {tr: rng.random() < plant["lock"] for tr in df["trial"].dropna().unique()}
        locked = (df["format"] == plant.get("format", df["format"])).to_numpy() & df["trial"].map(
            lambda tr: trial_lock.get(tr, False)).to_numpy(bool)
        label = np.where(locked, "A", label)
    df["label"] = label

    scored = structure["scored"].copy()
    p = scored["dimension"].map(CHANCE).to_numpy(float)
    correct = rng.random(len(scored)) < p
    if "deaf" in plant:  # an intervened item answered as its Original would be: wrong
        deaf = (scored["intervention"] != "original").to_numpy() & (rng.random(len(scored)) < plant["deaf"])
        orig = (scored["intervention"] == "original").to_numpy() & (rng.random(len(scored)) < plant["deaf"])
        correct = np.where(deaf, False, np.where(orig, True, correct))
    scored["correct"] = correct
    return {"position": preference_measures(t, "sim")[:1] + lock_measures(df),
            "style": preference_measures(t, "sim")[1:], "label_following": cue_measures(df),
            "visual_inference": [avg_gap_measure(scored)]}


def _flags(records: dict) -> list[str]:
    return [f"{e['key']}/{e['stratum']}" for es in records.values() for e in es if e["verdict"] == "flagged"]


@pytest.mark.parametrize("policy", ["uniform", "content", "audio_only"])
def test_shortcut_free_models_are_rarely_flagged_and_intervals_cover(structure, policy):
    rng = np.random.default_rng({"uniform": 0, "content": 1, "audio_only": 2}[policy])
    models, flagged, covered, total = 200, 0, 0, 0
    for _ in range(models):
        tested = simulate(structure, policy, rng)
        flagged += bool(_flags(decide_family(tested)))
        if policy == "uniform":  # the truth of every measure is its null: a 95% interval covers it
            for t in (t for ts in tested.values() for t in ts if t.contrast is not None):
                c = t.contrast
                half = sps.t.ppf(0.975, c.clusters - 1) * c.se
                covered += abs(c.value - c.null) <= half + 1e-12
                total += 1
    print(policy, "false-flag rate", flagged / models, "coverage", covered / max(total, 1))
    assert flagged / models <= 0.05, (policy, flagged)
    if policy == "uniform":
        assert covered / total >= 0.93, covered / total


def test_a_model_that_only_guesses_without_audio_does_not_follow_labels(structure):
    rng = np.random.default_rng(5)
    values = [e["value"] for _ in range(100) for e in decide_family(
        {"label_following": cue_measures(_answers(structure, rng))})["label_following"]]
    assert abs(np.mean(values)) < 0.01  # matched arms: the same media with and without the label


def _answers(structure: dict, rng) -> pd.DataFrame:
    df = structure["protocols"].copy()
    audio = ~((df["config"] == "blueprint") & df["condition"].isin(NO_AUDIO)).to_numpy()
    guess = np.array(_uniform_pick(rng, df["options"]), dtype=object)
    df["label"] = np.where(audio & pd.notna(df["gold"]).to_numpy(), df["gold"].to_numpy(object), guess)
    return df


def test_a_lock_confined_to_the_concatenated_format_is_flagged_there(structure):
    rng = np.random.default_rng(3)
    records = decide_family(simulate(structure, "content", rng, {"lock": 1.0, "format": "concat"}))
    assert _flags(records) == ["lock/concat"]
    native = next(e for e in records["position"] if e["stratum"] == "native")
    assert native["verdict"] != "flagged" and native["value"] < 0.5


def test_planted_effects_at_the_stated_size_are_found(structure):
    """Power at the planted size, measured on the defaults: a slot-A lock on a share of the answers that moves the
    rate to 0.75, label following on half the labelled items, a model deaf on 90% of the items."""
    rng = np.random.default_rng(4)
    found = {"slot_a/all": 0, "cue/blueprint": 0, "avg_gap/all": 0}
    plants = {"slot_a/all": {"slot_a": 0.5}, "cue/blueprint": {"follow": 0.5}, "avg_gap/all": {"deaf": 0.9}}
    for _ in range(50):
        for key, plant in plants.items():
            found[key] += key in _flags(decide_family(simulate(structure, "content", rng, plant)))
    assert all(k / 50 >= 0.8 for k in found.values()), found


def test_clear_needs_enough_items_and_the_mde_says_what_can_be_detected():
    few = contrast(np.arange(6), [arm(np.array([0, 1, 0, 1, 1, 0.0]), np.ones(6, bool), 0.5, 0.25)])
    many = contrast(np.arange(600), [arm(np.tile([0, 1.0], 300), np.ones(600, bool), 0.5, 0.25)])
    assert decide(few, "above", 0.10, m=5)["verdict"] == "inconclusive"
    assert decide(many, "above", 0.10, m=5)["verdict"] == "clear"
    assert decide(few, "above", 0.10, m=5)["mde"] > decide(many, "above", 0.10, m=5)["mde"] > 0


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
