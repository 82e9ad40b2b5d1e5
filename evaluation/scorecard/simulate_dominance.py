"""Simulated models on a composition dataset: the ``modality_dominance`` verdict's calibration and power.

:func:`dominance_structure` reads a composition dataset (the card's default: ``DIR/datasets/composition``) once: its
samples, ablations, each item's input (:func:`.dominance_null.input_key`) and each sample's null. :func:`simulate`
answers it with a policy, two runs as the scorecard asks (``CompositionAudit.runs``), and returns the measure the card
decides, through the audit's own functions in the audit's order (:func:`.composition.audit.run_composition_audit`,
``CompositionAudit.measures``): grading, failure decomposition, stability floor and floor check, the cohort's mode
shares (the leading modality the cell names), the per-sample dominance test and :func:`.rules.dominance_measure`.
Answers are compared by normalised exact match (no judge), the audit's default.

Content-blind policies (every answer uniform over the sample's answer vocabulary):

- ``per_input``: a greedy model that reads no content: one answer per input (a hash of the input and the model's
  seed), so byte-identical inputs (across samples, ablations and runs) get one answer and its two runs agree. Its
  failures sit on the null and its moves clear the stability floor (0): the measure counts.
- ``iid``: a sampling one: a fresh draw per item and run. Its runs disagree as often as its ablations move its
  answers, so the moves do not clear the floor and the measure does not count (never flagged by construction).

``plant = {"modality": m, "effect": delta}`` (``m``: ``audio`` or ``image``, the defaults' grounded modalities) on the
``per_input`` base: each failed sample is, with probability ``pi_i = delta / (1 - p0_i)`` (drawn once per input: both
runs and any byte-identical copy of the sample alike), *decided by m*: without ``m`` its answer moves (to the gold
answer, as ``scripted:audio-dominant``), its ``text_only`` copy moves too, and without the other modality it stays the
failed answer, which the decomposition reads as ``m`` dominance. Every other failure stays content-blind, classified as
a dominance with chance ``p0_i`` (the sample's null). So the planted model's expected share is ``E[d_i] = pi_i + (1 -
pi_i) p0_i = p0_i + delta`` on every sample: ``delta`` is an effect on the measure's own scale (share minus null);
0.20, the minimum effect of interest, is an 80%-dominant model where the null is 0.60 (on the default build it is
0.63 for a template of 3 answers and 0.46 for one of 5, about 0.48 over a model's failures: a 68%-dominant model). A
sample whose null is within ``delta`` of 1 is always decided (share 1).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.answer_match import normalize
from omniaudit.evaluation.scorecard.rules import Tested

POLICIES = ("per_input", "iid")
REMOVES = {"audio": "mute_audio", "image": "drop_image"}  # the ablation that removes a grounded modality


@dataclass(frozen=True)
class DominanceStructure:
    """A composition dataset as the simulation answers it: ``samples`` (the audit's columns and the vocabulary),
    ``ablations``, ``inputs`` (every item's input key), each sample's ``nulls`` (:func:`.dominance_null.sample_nulls`)
    and ``units`` (:func:`.dominance_null.input_units`) and, per item of ``inputs``, its sample's vocabulary and gold
    answer."""

    samples: pd.DataFrame
    ablations: pd.DataFrame
    inputs: pd.DataFrame
    nulls: dict
    units: dict
    vocabulary: list
    gold: np.ndarray


def dominance_structure(dataset: str | Path) -> DominanceStructure:
    """Read composition dataset ``dataset`` (its samples, ablations, inputs and per-sample nulls) once."""
    from omniaudit.data_builders.hub import load_config
    from omniaudit.evaluation.composition.audit import SAMPLE_COLUMNS
    from omniaudit.evaluation.composition.dominance_null import input_units, read_inputs, sample_nulls, structures

    samples = load_config(dataset, "samples", columns=[*SAMPLE_COLUMNS, "answer_vocabulary"])
    ablations = load_config(dataset, "ablations", columns=["id", "sample_id", "ablation"])
    inputs = read_inputs(dataset)
    words = {sid: [str(w) for w in v] for sid, v in zip(samples["id"], samples["answer_vocabulary"], strict=True)}
    gold = dict(zip(samples["id"], samples["answer"].astype(str), strict=True))
    return DominanceStructure(samples, ablations, inputs, sample_nulls(structures(inputs)), input_units(inputs),
                              [words[sid] for sid in inputs["sample_id"]],
                              np.array([gold[sid] for sid in inputs["sample_id"]], dtype=object))


def _draws(s: DominanceStructure, policy: str, rng: np.random.Generator, seed: int) -> np.ndarray:
    """One run's answers to every item of ``s.inputs``: uniform over the sample's vocabulary (see the module)."""
    if policy == "iid":
        u = rng.random(len(s.inputs))
    elif policy == "per_input":
        u = np.array([int.from_bytes(hashlib.sha256(f"{seed}\0{key}".encode()).digest()[:8], "big") / 2 ** 64
                      for key in s.inputs["input"]])
    else:
        raise ValueError(f"unknown policy {policy!r}; expected one of {POLICIES}")
    return np.array([w[int(x * len(w))] for w, x in zip(s.vocabulary, u, strict=True)], dtype=object)


def _plant(s: DominanceStructure, answers: np.ndarray, plant: dict, rng: np.random.Generator) -> np.ndarray:
    """``answers`` with the failures of a share of samples decided by ``plant["modality"]`` (see the module)."""
    modality, delta = plant["modality"], float(plant["effect"])
    if modality not in REMOVES:
        raise ValueError(f"unknown modality {modality!r}; expected one of {tuple(REMOVES)}")
    inputs = s.inputs
    item, sample = inputs["item"].to_numpy(object), inputs["sample_id"].to_numpy(object)
    full = pd.Series(answers[item == "full"], index=sample[item == "full"])
    gold = pd.Series(s.gold[item == "full"], index=full.index)
    key = pd.Series(inputs["input"].to_numpy(object)[item == "full"], index=full.index)
    failed = [sid for sid in full.index if normalize(str(full[sid])) != normalize(str(gold[sid]))]
    # one draw per input: a sample repeated byte for byte is the same input, answered alike
    keys = sorted({key[sid] for sid in failed})
    p0 = {key[sid]: s.nulls[sid]["worst"] for sid in failed}
    hit = dict(zip(keys, rng.random(len(keys)) < delta / (1 - np.array([p0[k] for k in keys], float)), strict=True))
    decided = {sid for sid in failed if hit[key[sid]]}
    out = answers.copy()
    where = np.isin(sample, list(decided))
    moves = where & np.isin(item, [REMOVES[modality], "text_only"])
    stays = where & np.isin(item, [a for m, a in REMOVES.items() if m != modality])
    out[moves] = s.gold[moves]
    out[stays] = full.reindex(sample[stays]).to_numpy(object)
    return out


def answer_runs(s: DominanceStructure, policy: str, rng: np.random.Generator, plant: dict | None = None,
                runs: int = 2) -> list[pd.DataFrame]:
    """One simulated model's runs: per run, ``id`` and ``prediction`` of every sample and ablation."""
    seed = int(rng.integers(2 ** 32))
    first = _draws(s, policy, rng, seed)
    if plant:
        if policy != "per_input":
            raise ValueError("a plant is made on the per_input base (a greedy model: its runs agree)")
        first = _plant(s, first, plant, rng)
    tables = [first] + [first if policy == "per_input" else _draws(s, policy, rng, seed) for _ in range(runs - 1)]
    return [pd.DataFrame({"id": s.inputs["id"], "prediction": t}) for t in tables]


def measure(s: DominanceStructure, tables: list[pd.DataFrame]) -> Tested:
    """The ``modality_dominance`` measure of one model's runs ``tables``, as the composition audit and the card
    compute it (a run whose answers equal an earlier run's is graded and decomposed once: both are deterministic)."""
    from omniaudit.evaluation.composition.dominance_null import dominance_test
    from omniaudit.evaluation.composition.entry import leading_modality
    from omniaudit.evaluation.composition.failure_modes import (
        AnswerMatcher,
        cohort_decomposition,
        decompose,
        floor_check,
        move_rates,
        stability_floor,
    )
    from omniaudit.evaluation.composition.grading import grade
    from omniaudit.evaluation.composition.replies import comparable, failed_ids
    from omniaudit.evaluation.scorecard.rules import dominance_measure

    expected = s.ablations.groupby("sample_id")["ablation"].apply(set).to_dict()
    matcher = AnswerMatcher()
    graded, per_run, done = [], [], {}
    for answers in tables:
        key = tuple(answers["prediction"])
        if key not in done:
            g = grade(s.samples, answers)
            done[key] = (g, decompose(g, s.ablations.merge(answers, on="id"), expected, matcher))
        graded.append(done[key][0])
        per_run.append(done[key][1])
    names = [f"sim#{k}" for k in range(len(tables))]
    floor = stability_floor({n: comparable(g) for n, g in zip(names, graded, strict=True)},
                            {n: failed_ids(g) for n, g in zip(names, graded, strict=True)},
                            s.samples.set_index("id")["question"], matcher)
    records = [r for d in per_run for r in d["samples"]]
    modes = pd.DataFrame(records, columns=["id", "template_name", "mode"])
    shares = cohort_decomposition({"sim": modes})["models"]["sim"]["overall"]["shares"]
    test = dominance_test(modes, s.nulls, s.units)
    status = floor_check(move_rates(records), floor)["status"]
    return dominance_measure(test["per_sample"], test["null_per_sample"], status, leading_modality(shares))


def simulate(s: DominanceStructure, policy: str, rng: np.random.Generator,
             plant: dict | None = None) -> dict[str, list[Tested]]:
    """One simulated model's tested ``modality_dominance`` measure (for :func:`.rules.decide_family`)."""
    return {"modality_dominance": [measure(s, answer_runs(s, policy, rng, plant))]}
