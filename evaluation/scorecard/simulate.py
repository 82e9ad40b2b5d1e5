"""Simulated models on a card's real item structure: how the scorecard's calibration and power are proven.

:func:`item_structure` reads the item tables of a scorecard folder (the oracle's preference pairs, protocol items and
interventions rows: the items every model of that card answered); :func:`simulate` answers them with a policy and
returns the tested measures of :mod:`.rules` (the very functions the card uses), so a family of verdicts follows
with :func:`.rules.decide_family`. Shortcut-free policies:

- ``uniform``: a content-blind guess over each item's options (each order of a pair, each protocol item, each Thud
  row right with its dimension's chance);
- ``content``: chooses by content, right 70% of the time and the same choice in both orders of a pair;
- ``audio_only``: right when the clip is sent, a guess otherwise (worse without audio, blind to any label).

``plant`` adds a shortcut on top, each as a probability per item: ``slot_a`` (answer the first slot),
``lock`` (+ ``format``: a trial answers slot A in both orders), ``follow`` (copy the supplied label),
``distract`` (a supplied label turns the answer into any wrong option, itself no more often than the others),
``avoid`` (an answer that would be the supplied label goes to another wrong option), ``deaf``
(answer an intervened clip as its Original; + ``dimension``: in that dimension only), ``longer`` (pick the longer
description), ``shorter`` (the over-correction: pick the shorter one), ``prior`` (follow the generator prior),
``against_prior`` (defy it). :data:`AT_MINIMUM` plants each measure's minimum effect of
interest (:mod:`omniaudit.shortcuts`) on a uniform base. Composition's dominance is simulated by
:mod:`.simulate_dominance` (its answers go through the audit's own decomposition and per-sample null).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.evaluation.scorecard.rules import (
    THUD_CHANCE,
    AuditRun,
    Tested,
    cue_measures,
    gap_measures,
    lock_measures,
    preference_measures,
    preference_table,
    protocol_frame,
)
from omniaudit.shortcuts import TABLE

POLICIES = ("uniform", "content", "audio_only")
NO_AUDIO = ("skeleton", "descriptors", "true", "wrong", "no_frame")  # blueprint conditions sent without the clip
PROTOCOL_CONFIGS = ("blueprint", "reference", "pairwise", "cue_conflict")
# on a uniform base: slot-A 0.5 + q/2, lock and pairwise slot-A 0.5 + q/2, follow q, Avg Gap 100 q, picks 0.5 + q/2
AT_MINIMUM = {"slot_a/all": {"slot_a": 0.2}, "lock/concat": {"lock": 0.3, "format": "concat"},
              "lock/native": {"lock": 0.3, "format": "native"},
              **{f"pairwise_slot_a/{f}": {"lock": 0.3, "format": f} for f in ("concat", "native")},
              **{f"cue/{p}": {"follow": 0.15} for p in ("all", "blueprint", "reference", "cue_conflict")},
              "avg_gap/all": {"deaf": 0.2}, **{f"dim_gap/{d}": {"deaf": 0.3, "dimension": d} for d in THUD_CHANCE},
              "longer/all": {"longer": 0.2}, "prior/all": {"prior": 0.2}}


def card_family() -> int:
    """The family of a model that every audit of the table measured: one test per measure and stratum (what its
    card's Bonferroni split divides by, and so what its MDEs are priced at)."""
    return sum(len(m.strata) for s in TABLE for m in s.measures)


def item_structure(card: str | Path, model: str = "oracle") -> dict[str, pd.DataFrame]:
    """The item tables of scorecard folder ``card`` as ``model`` answered them (the audits it ran)."""
    card = Path(card)
    folder = card / "models" / model

    def run(audit: str, configs: tuple[str, ...]) -> AuditRun:
        return AuditRun("ran", folder / audit, card / "datasets" / audit,
                        {c: folder / f"{c}.jsonl" for c in configs}, model)

    out = {}
    if (folder / "preference" / "predictions.csv").is_file():
        out["preference"] = preference_table(run("preference", ("judge",)))
    if (folder / "protocols" / "audit.json").is_file():
        out["protocols"] = protocol_frame(run("protocols", PROTOCOL_CONFIGS))
    if (folder / "interventions" / "scored.csv").is_file():
        out["scored"] = pd.read_csv(folder / "interventions" / "scored.csv")
    return out


def _guess(rng: np.random.Generator, options: pd.Series) -> np.ndarray:
    return np.array([o[int(rng.integers(len(o)))] for o in options], dtype=object)


def _preference(t: pd.DataFrame, policy: str, rng, plant: dict) -> list[Tested]:
    t = t.copy()
    n = len(t)
    gold_a1 = (t["preference"] == "a1").to_numpy()
    if policy == "content":
        ab = ba = np.where(rng.random(n) < 0.7, gold_a1, ~gold_a1).astype(float)
    else:
        ab, ba = rng.integers(0, 2, n).astype(float), rng.integers(0, 2, n).astype(float)
    longer_a1 = (t["len1"] > t["len2"]).to_numpy().astype(float)
    prior_a1 = (t["prior_choice"] == "a1").to_numpy().astype(float)
    picks = (("longer", longer_a1), ("shorter", 1 - longer_a1), ("prior", prior_a1), ("against_prior", 1 - prior_a1))
    for key, target in picks:  # the same pick in both orders
        if key in plant:
            hit = rng.random(n) < plant[key]
            ab, ba = np.where(hit, target, ab), np.where(hit, target, ba)
    if "slot_a" in plant:  # per order, the first slot whatever it shows
        ab = np.where(rng.random(n) < plant["slot_a"], 1.0, ab)
        ba = np.where(rng.random(n) < plant["slot_a"], 0.0, ba)
    t["p_a1_ab__sim"], t["p_a1_ba__sim"], t["p_a1__sim"] = ab, ba, (ab + ba) / 2
    return preference_measures(t, "sim")


def _protocols(df: pd.DataFrame, policy: str, rng, plant: dict) -> tuple[list[Tested], list[Tested]]:
    df = df.copy()
    cond, config = df["condition"].to_numpy(object), df["config"].to_numpy(object)
    audio = ~((config == "blueprint") & np.isin(cond, NO_AUDIO))
    guess, gold = _guess(rng, df["options"]), df["gold"].to_numpy(object)
    has_gold = pd.notna(df["gold"]).to_numpy()
    if policy == "uniform":
        label = guess
    elif policy == "content":
        label = np.where(has_gold & (rng.random(len(df)) < 0.7), gold, guess)
    else:
        label = np.where(audio & has_gold, gold, guess)
    shown = (((config == "blueprint") & np.isin(cond, ["wrong_audio", "wrong", "no_frame"]))
             | ((config == "reference") & (cond == "wrong")) | ((config == "cue_conflict") & (cond != "none")))
    cue = df["cue"].to_numpy(object)
    if "follow" in plant:
        label = np.where(shown & (rng.random(len(df)) < plant["follow"]), cue, label)
    if "distract" in plant:  # a shown label costs the answer, which goes to any wrong option, the label no more
        wrong = [[o for o in opts if o != g] or list(opts) for opts, g in zip(df["options"], gold, strict=True)]
        label = np.where(shown & has_gold & (rng.random(len(df)) < plant["distract"]), _guess(rng, pd.Series(wrong)),
                         label)
    if "avoid" in plant:  # never the shown label: an answer that would be it goes to another wrong option
        other = [[o for o in opts if o not in (g, c)] or list(opts)
                 for opts, g, c in zip(df["options"], gold, cue, strict=True)]
        label = np.where(shown & (label == cue) & (rng.random(len(df)) < plant["avoid"]),
                         _guess(rng, pd.Series(other)), label)
    if "lock" in plant:  # a locked trial answers slot A in both orders
        trials = df["trial"].dropna().unique()
        locked_trials = set(trials[rng.random(len(trials)) < plant["lock"]])
        locked = (df["format"] == plant.get("format")).to_numpy() & df["trial"].isin(locked_trials).to_numpy()
        label = np.where(locked, "A", label)
    df["label"] = label
    return lock_measures(df), cue_measures(df)


def _interventions(scored: pd.DataFrame, rng, plant: dict) -> list[Tested]:
    scored = scored.copy()
    p = scored["dimension"].map(THUD_CHANCE).to_numpy(float)
    correct = rng.random(len(scored)) < p
    if "deaf" in plant:  # answered as the Original would be: right there, wrong on its interventions
        orig = (scored["intervention"] == "original").to_numpy()
        hit = rng.random(len(scored)) < plant["deaf"]
        if "dimension" in plant:  # confined to one dimension
            hit &= (scored["dimension"] == plant["dimension"]).to_numpy()
        correct = np.where(hit, orig, correct)
    scored["correct"] = correct
    return gap_measures(scored)


def simulate(structure: dict, policy: str, rng: np.random.Generator,
             plant: dict | None = None) -> dict[str, list[Tested]]:
    """One simulated model's tested measures per shortcut (see the module docstring)."""
    plant = plant or {}
    out: dict[str, list[Tested]] = {}
    if "preference" in structure:
        slot_a, longer, prior = _preference(structure["preference"], policy, rng, plant)
        out["position"], out["style"] = [slot_a], [longer, prior]
    if "protocols" in structure:
        lock, cue = _protocols(structure["protocols"], policy, rng, plant)
        out["position"] = out.get("position", []) + lock
        out["label_following"] = cue
    if "scored" in structure:
        out["visual_inference"] = _interventions(structure["scored"], rng, plant)
    return out
