"""What the scorecard needs of each registered audit beyond the registry (omniaudit/audits.py): its small embedded
default, how many sampled runs each item config gets, and how to audit one model's predictions.

The registry names the item configs and their modalities; the audits' own ``run_*_audit`` functions take different
arguments (a judge file list, a config object, a progress callback), so each audit has one adapter here. A fifth
audit without an adapter is listed on the card as skipped ("no scorecard adapter").

The defaults are synthetic with known ground truth, sized by power (``size="default"``) or small for smoke runs
(``size="small"``); the card says their item counts and what each measure can detect on them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

Progress = Callable[[str], None] | None

ALL_MODALITIES = frozenset({"text", "audio", "image", "video", "video+audio"})


# the embedded defaults per size: "default" is sized by power (the minimum effects of omniaudit.shortcuts, 80% power
# under the family-wise control, where it fits on a laptop: benchmarks/scorecard_power.py prints what each detects),
# "small" the quick sets for smoke runs (the card says what they can detect)
SIZES = ("default", "small")
PARAMS = {
    "preference": {"default": {"n_pairs": 500}, "small": {"n_pairs": 120}},
    "interventions": {"default": {"n_clips": 60}, "small": {"n_clips": 6}},
    "protocols": {"default": {"max_trials": 100, "sentences_per_cell": 4},  # 4: the speech set's most
                  "small": {"max_trials": 6, "sentences_per_cell": 1}},
    "composition": {"default": {"n_synthetic": 64}, "small": {"n_synthetic": 16}},
}


def _build_preference(out: Path, progress: Progress, size: str = "default") -> Path:
    from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset

    # labels follow content (which description names the true emotion) over the planted generator prior, and no
    # label position bias: the judge's length / generator / slot preferences are then shortcuts, not the label's
    n = PARAMS["preference"][size]["n_pairs"]
    return build_preference_dataset(out, spec=SyntheticSpec(n_pairs=n, content_strength=4.0, position_bias=0.0))


def _build_interventions(out: Path, progress: Progress, size: str = "default") -> Path:
    from omniaudit.data_builders.interventions import SyntheticClipSpec, build_interventions_dataset

    n = PARAMS["interventions"][size]["n_clips"]
    return build_interventions_dataset(out, spec=SyntheticClipSpec(n_clips=n, width=160, height=120, fps=12),
                                       progress=progress)


def _build_protocols(out: Path, progress: Progress, size: str = "default") -> Path:
    from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset

    p = PARAMS["protocols"][size]
    return build_protocols_dataset(out, options=ProtocolBuildOptions(max_trials=p["max_trials"]),
                                   spec=SpeechSetSpec(sentences_per_cell=p["sentences_per_cell"]), progress=progress)


def _build_composition(out: Path, progress: Progress, size: str = "default") -> Path:
    from omniaudit.data_builders.composition import build_composition_dataset

    return build_composition_dataset(out, n_synthetic=PARAMS["composition"][size]["n_synthetic"])


def describe(audit: str, size: str) -> str:
    """What the embedded default of ``audit`` is at ``size`` (the card says it)."""
    p = PARAMS[audit][size]
    texts = {
        "preference": lambda: f"{p['n_pairs']} synthetic EmoPrefer-style pairs (7 generators, labels following "
                              "content over the generator prior), each judged in both orders",
        "interventions": lambda: f"{p['n_clips']} synthetic Thud clips (a visible impact and its sound), each "
                                 "Original + Shift -2/+2 s, Mute and Swap",
        "protocols": lambda: f"espeak-ng speech in 4 languages x 4 voices x 4 emotions ({p['sentences_per_cell']} "
                             f"sentence(s) per cell): blueprint, reference, pairwise (up to {p['max_trials']} trials "
                             "per task) and cue-conflict probes",
        "composition": lambda: f"{p['n_synthetic']} synthetic C3PO samples (a drawn image and a spoken instruction) "
                               "and their bypass ablations, answered twice (greedy runs give the stability floor)",
    }
    return texts[audit]() + ("" if size == "default" else f" ({size})")


def _audit_preference(out: Path, dataset: Path, name: str, files: dict[str, Path], n_resamples: int,
                      progress: Progress, partial: bool = False) -> Path:
    from omniaudit.evaluation.preference.audit import PreferenceAuditConfig, run_preference_audit

    # the source classifier and the permutation controls are about the benchmark, not the model: the same for every
    # model of the card, left out (`omniaudit audit preference` has them)
    config = PreferenceAuditConfig(n_resamples=n_resamples, judges=[f"{name}={f}" for f in files.values()],
                                   source_classifier=False, controls=False, judged_only=partial)
    return run_preference_audit(out, dataset, config=config, progress=progress)


def _audit_interventions(out: Path, dataset: Path, name: str, files: dict[str, Path], n_resamples: int,
                         progress: Progress, partial: bool = False) -> Path:
    from omniaudit.evaluation.interventions.audit import InterventionAuditConfig, run_interventions_audit

    return run_interventions_audit(out, dataset, files["diagnostic"],
                                   InterventionAuditConfig(n_resamples=n_resamples, partial=partial), progress)


def _audit_protocols(out: Path, dataset: Path, name: str, files: dict[str, Path], n_resamples: int,
                     progress: Progress, partial: bool = False) -> Path:
    from omniaudit.evaluation.protocols.audit import ProtocolAuditConfig, run_protocols_audit

    return run_protocols_audit(out, dataset, [f"{name}={f}" for f in files.values()],
                               ProtocolAuditConfig(n_resamples=n_resamples, partial=partial), progress)


def _audit_composition(out: Path, dataset: Path, name: str, files: dict[str, Path], n_resamples: int,
                       progress: Progress, partial: bool = False) -> Path:
    from omniaudit.evaluation.composition.audit import run_composition_audit

    return run_composition_audit(out, dataset, [f"{name}={f}" for f in files.values()], partial=partial)


def _interventions_coverage(folder: Path) -> float | None:
    """The share of the answers the audit's extractor read (its ``coverage.<dimension>.parsed``, pooled)."""
    from omniaudit.evaluation.audit_outputs import read_audit

    coverage = read_audit(folder).get("coverage") or {}
    cells = [c["parsed"] for c in coverage.values() if c.get("parsed", {}).get("value") is not None]
    n = sum(c["n"] for c in cells)
    return sum(c["value"] * c["n"] for c in cells) / n if n else None


@dataclass(frozen=True)
class Adapter:
    """One audit as the scorecard runs it."""

    build: Callable[[Path, Progress, str], Path]  # the embedded default of a size (SIZES), into a folder
    # (out, dataset, model name, config -> predictions file, resamples, progress, partial: a --limit sample's
    # incomplete runs, read as partial runs) -> the audit folder
    audit: Callable[..., Path]
    runs: dict[str, int] = field(default_factory=dict)  # config -> sampled runs (default 1)
    figure: str | None = None  # the key figure of the audit folder (the card shows it)
    # the share of answers the audit itself could read, where it reads free text (None: the runner's usable share)
    coverage: Callable[[Path], float | None] | None = None


ADAPTERS: dict[str, Adapter] = {
    "preference": Adapter(_build_preference, _audit_preference, figure="waf_full_vs_counter.png"),
    "interventions": Adapter(_build_interventions, _audit_interventions, figure="failure_modes.png",
                             coverage=_interventions_coverage),
    "protocols": Adapter(_build_protocols, _audit_protocols),
    "composition": Adapter(_build_composition, _audit_composition, runs={"samples": 2, "ablations": 2},
                           figure="template_accuracy.png"),
}


def model_accepts(spec: str, runner: dict) -> frozenset[str]:
    """The input modalities model ``spec`` takes, known before any model call: ``scripted:`` every one (it reads
    no media), ``openai:`` what its ``--dialect`` can send, ``hf:`` what the loaded model and its processor encode
    (``HFJudge.accepts``; text always). The ``hf:`` model stays loaded for its runs (``make_judge`` keeps it)."""
    from omniaudit.evaluation.runners.payload import ACCEPTS
    from omniaudit.evaluation.runners.run import make_judge

    kind = spec.partition(":")[0]
    if kind == "scripted":
        make_judge(spec)  # an unknown name fails here
        return ALL_MODALITIES
    if kind == "openai":
        return frozenset({"text", *ACCEPTS[runner.get("dialect", "vllm")]})
    return frozenset({"text", *getattr(make_judge(spec, **runner), "accepts", set())})


def dataset_modalities(dataset: str | Path, config: str) -> tuple[str, ...]:
    """The modalities the items of a built config carry (``text`` always; a video column whose rows send their own
    soundtrack is ``video+audio``), from its schema and its ``video_audio`` column."""
    import datasets

    from omniaudit.data_builders.hub import load_hub_dataset

    ds = load_hub_dataset(dataset, config)
    kinds = {datasets.Audio: "audio", datasets.Image: "image", datasets.Video: "video"}
    found = {"text"}
    for feature in ds.features.values():
        kind = kinds.get(type(feature))
        if kind is None:
            continue
        if kind == "video" and "video_audio" in ds.column_names and any(ds["video_audio"]):
            kind = "video+audio"
        found.add(kind)
    return tuple(sorted(found))
