"""The registry of audits: one entry per audit, read by the CLI (``omniaudit audits``) and by whatever runs every
audit (the scorecard). Adding a fifth audit is one package per side (``data_builders/<audit>/``,
``evaluation/<audit>/``) plus one entry here.

An entry names, as import paths (nothing heavy is imported until used):

- ``build``: the builder, ``build(out_dir) -> Path`` building the embedded synthetic default (its arguments beyond
  the folder take their defaults), and ``item_configs``: the configs a model answers, with the modalities their items
  carry (``video+audio``: a video with its own soundtrack);
- ``run``: the audit, ``run(out_dir, dataset, predictions, ...) -> Path`` (writes ``audit.json`` + ``report.md``);
- ``headline``: the dotted paths of ``audit.json`` a summary shows first;
- ``shortcuts``: what the audit measures, and ``references``: how each scripted reference model behaves on it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

from omniaudit.errors import InputError


@dataclass(frozen=True)
class Audit:
    name: str
    paper: str  # the specification in shared/papers/
    title: str
    build: str  # "module:function"
    item_configs: dict[str, tuple[str, ...]]  # config -> modalities of its items
    run: str  # "module:function"
    headline: tuple[str, ...]
    shortcuts: tuple[str, ...]
    references: dict[str, str] = field(default_factory=dict)

    def builder(self) -> Callable:
        return _load(self.build)

    def runner(self) -> Callable:
        return _load(self.run)


def _load(path: str) -> Callable:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


_D, _E = "omniaudit.data_builders", "omniaudit.evaluation"
AUDITS: dict[str, Audit] = {a.name: a for a in (
    Audit("preference", "emoprefer-shortcut-audit", "Shortcut audit of pairwise preference judges",
          f"{_D}.preference:build_preference_dataset", {"judge": ("text",)},
          f"{_E}.preference.audit:run_preference_audit",
          ("predictors.length_generator_lr.full.waf", "predictors.length_generator_lr.counter_stereotypical.waf"),
          ("style", "position"),
          {"oracle": "the human label", "always-a": "slot A in both orders: position-locked, a tie on every pair",
           "position-locked": "the first-shown description: position", "verbose": "the longer description: style"}),
    Audit("interventions", "thud-vision-speaks-for-sound", "Audio grounding under Shift / Mute / Swap",
          f"{_D}.interventions:build_interventions_dataset", {"diagnostic": ("video+audio",)},
          f"{_E}.interventions.audit:run_interventions_audit",
          ("avg_gap", "dimensions.sync.gap", "dimensions.existence.gap", "dimensions.consistency.gap"),
          ("visual_inference",),
          {"oracle": "the audio-verified answer: no gap", "random": "the gold answer or \"I don't know.\"",
           "deaf": "synchronized, a sound, a match whatever was done to the audio: visual_inference"}),
    Audit("protocols", "lalm-judge-protocol-shortcuts", "Audio judges under blueprint, reference and pairwise "
          "protocols", f"{_D}.protocols:build_protocols_dataset",
          {"blueprint": ("audio",), "reference": ("audio",), "pairwise": ("audio",), "cue_conflict": ("audio",)},
          f"{_E}.protocols.audit:run_protocols_audit", ("rf", "lock", "follow_cue"),
          ("label_following", "position"),
          {"oracle": "the gold label", "always-a": "slot A: fully locked", "copy-reference": "the supplied "
           "reference: RF 1", "copy-specialist": "the specialist's label", "label-follower": "any supplied label: "
           "label_following", "position-locked": "slot A: position"}),
    Audit("composition", "c3po-omni-composition-counterfactual", "Composition and counterfactual QA",
          f"{_D}.composition:build_composition_dataset",
          {"samples": ("text", "audio", "image", "video"), "ablations": ("text", "audio", "image", "video")},
          f"{_E}.composition.audit:run_composition_audit", ("accuracy.overall.mean", "failure_decomposition"),
          ("modality_dominance",), {"oracle": "the gold answer", "random": "the gold answer or \"I don't know.\"",
                                    "audio-dominant": "a wrong answer while the audio is there, the gold answer "
                                    "without it: modality_dominance"}),
)}


def get(name: str) -> Audit:
    """The registered audit ``name`` (InputError listing the audits otherwise)."""
    if name not in AUDITS:
        raise InputError(f"unknown audit; expected one of {', '.join(AUDITS)}", value=name)
    return AUDITS[name]
