"""What the preference audit is asked to do (:class:`PreferenceAuditConfig`) and what it always reports: the slices
every WAF is computed on and the content-blind probes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from omniaudit.evaluation.stats import BOOTSTRAP_SEED, N_RESAMPLES

SLICES = ("full", "length_matched", "counter_stereotypical")
PROBES = ("length_lr", "generator_lr", "length_generator_lr", "winrate_rule")


@dataclass
class PreferenceAuditConfig:
    n_resamples: int = N_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    reference: str = "length_generator_lr"  # McNemar reference predictor
    permutation_seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    source_classifier: bool = True
    controls: bool = True
    # judge prediction files: a Path is a file; a string is FILE or NAME=FILE (files sharing a NAME are one judge)
    judges: list[Path | str] = field(default_factory=list)
    judged_only: bool = False  # audit only the binary pairs every judge covers (e.g. predictions for some folds)
    extracted: bool = True  # count the answers `judge --extractor` / `--read-reasoning` read (--exclude-extracted)
    compare: list[str] = field(default_factory=list)  # "A:B" predictor pairs: McNemar + paired WAF-difference CI
    length_control: bool = True  # per-generator mean length, wordiest-generator check, LC win rates
    style_control: bool = True  # Chatbot Arena style control: strengths with length and markdown/prose style fixed
    annotations: Path | str | None = None  # per-annotator labels (name|id, annotator, label): consensus remedy
    odin_runs: list[Path | str] = field(default_factory=list)  # ODIN runs ([NAME=]PATH): Fig. 2a correlations
    # the built dataset whose `judge` config the runner's prediction files must have answered (its fingerprint is
    # compared with theirs); run_preference_audit sets it, None skips the comparison
    dataset: Path | str | None = None
