"""The composition audit (C3PO: composition and counterfactual QA) as a registry entry
(:class:`omniaudit.audits.Audit`): its embedded default, the audit of models' answers, the scorecard's modality
dominance measure and what tracking logs. It has no task accuracy the card pairs (its per-item correctness is not
kept per item)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from omniaudit.audits import Audit
from omniaudit.results import AuditOptions, AuditResult, AuditRun, estimate_row, estimates, put

if TYPE_CHECKING:
    import pandas as pd

# per size; 192 (155 samples, 153 distinct inputs): the dominance MDE within its minimum effect with repeated samples
# one cluster (128: 87 inputs, MDE 0.23, simulated power 0.65; benchmarks/scorecard_power.py)
PARAMS = {"default": {"n_synthetic": 192}, "small": {"n_synthetic": 16}}


def leading_modality(shares: dict) -> str | None:
    """The modality that decides most of the classified failures (``shares``: mode -> share), e.g. "text (62%)";
    None without a dominance failure."""
    dominance = {m.removesuffix("_dominance"): v for m, v in shares.items() if m.endswith("_dominance") and v}
    if not dominance:
        return None
    top = max(sorted(dominance), key=lambda m: dominance[m])
    return f"{top} ({dominance[top]:.0%} of classified failures)"


class CompositionAudit(Audit):
    name = "composition"
    paper = "c3po-omni-composition-counterfactual"
    title = "Composition and counterfactual QA"
    item_configs = {"samples": ("text", "audio", "image", "video"), "ablations": ("text", "audio", "image", "video")}
    headline = ("accuracy.overall.mean", "failure_decomposition")
    shortcuts = ("modality_dominance",)
    references = {"oracle": "the gold answer", "random": "the gold answer or \"I don't know.\"",
                  "audio-dominant": "a wrong answer while the audio is there, the gold answer without it: "
                                    "modality_dominance"}
    runs = {"samples": 2, "ablations": 2}  # greedy runs give the stability floor
    figure = "template_accuracy.png"
    source = "composition/audit.json: failure_decomposition.models.NAME.dominance_test"
    units = (("ablation_accuracy.*", "percent"), ("*", "proportion"))  # accuracy drops in points
    sizes = PARAMS
    summary = ("{n_synthetic} synthetic C3PO samples (a drawn image and a spoken instruction) and their bypass "
               "ablations, answered twice (greedy runs give the stability floor)")
    accuracy_note = "not paired: the composition audit keeps no per-item correctness the card reads"

    def build(self, out: Path, size: str = "default", progress=None) -> Path:
        from omniaudit.data_builders.composition import build_composition_dataset

        return build_composition_dataset(out, n_synthetic=PARAMS[size]["n_synthetic"])

    def audit(self, out: Path, dataset: Path | str, predictions: Mapping[str, Mapping[str, Path]],
              options: AuditOptions) -> AuditResult:
        from omniaudit.evaluation.composition.audit import run_composition_audit

        files = [f"{model}={file}" for model, model_files in predictions.items() for file in model_files.values()]
        return AuditResult.read(self.name, run_composition_audit(out, dataset, files, partial=options.partial))

    def measures(self, run: AuditRun) -> tuple[dict[str, list], dict[str, list[dict]]]:
        """The dominance share over its per-sample null, counted where the moves clear the stability floor; its note
        says how many of the model's rows were ungraded (left out: "N of M rows ungraded: no grader; pass --grader
        SPEC")."""
        from dataclasses import replace

        from omniaudit.evaluation.audit_outputs import read_audit
        from omniaudit.evaluation.scorecard.rules import dominance_measure

        audit = read_audit(cast(Path, run.folder))
        model = (audit.get("models") or {}).get(run.name) or {}
        entry = (((audit.get("failure_decomposition") or {}).get("models") or {}).get(run.name) or {})
        test = entry.get("dominance_test") or {}
        per_sample, null = test.get("per_sample") or {}, test.get("null_per_sample") or {}
        floor = (model.get("floor_check") or {}).get("status")
        shares = ((entry.get("overall") or {}).get("shares") or {})
        measure = dominance_measure(per_sample, null, floor, leading_modality(shares))
        ungraded = (model.get("grading") or audit.get("grading") or {}).get("note")
        if ungraded:  # what the measure could not read: a verdict read off few graded rows says little
            measure = replace(measure, note="; ".join(n for n in (measure.note, ungraded) if n))
        return {"modality_dominance": [measure]}, {}

    def coverage(self, folder: Path) -> float | None:
        """The share of the answers (samples and ablated copies, every run) a reader read or the judge graded: an
        ungraded answer (no reader reads it, no judge) is unparsed, as an empty one (None: an audit written before
        the grading was counted)."""
        from omniaudit.evaluation.audit_outputs import read_audit

        return (read_audit(folder).get("grading") or {}).get("coverage")

    def metrics(self, audit: dict) -> dict[str, float]:
        out: dict[str, float] = {}
        accuracy = audit.get("accuracy", {})
        overall = accuracy.get("overall", {})
        put(out, "accuracy/overall", overall.get("mean"))
        put(out, "accuracy/overall_sd", overall.get("sd"))
        for scope in ("by_category", "by_tier", "by_template"):
            for name, entry in accuracy.get(scope, {}).items():
                put(out, f"accuracy/{scope}/{name}", entry.get("mean"))
        failures = audit.get("failure_modes", {}).get("overall", {})
        put(out, "failure_modes/n_failures", failures.get("n_failures"))
        for mode, rate in failures.get("rates", {}).items():
            put(out, f"failure_modes/{mode}", rate)
        for field in ("n_samples", "exact_match_rate", "judge_yes_rate", "n_judged", "n_unparsed_verdicts",
                      "n_ungraded"):
            put(out, field, audit.get(field))
        put(out, "n_runs", len(audit.get("runs", [])))
        entropy = audit.get("entropy_gap") or {}
        for model, res in entropy.get("models", {}).items():
            put(out, f"entropy_gap/{model}/overall", (res.get("overall") or {}).get("value"))
            for category, gap in (res.get("by_category") or {}).items():
                put(out, f"entropy_gap/{model}/{category}", gap.get("value"))
        put(out, "entropy_gap/pooled_z", (entropy.get("pooled_z") or {}).get("value"))
        return out

    def tables(self, audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
        import pandas as pd

        from omniaudit.evaluation.audit_outputs import read_csv

        accuracy = audit.get("accuracy", {})
        rows = [{"scope": "overall", "name": "all", **accuracy.get("overall", {})}]
        rows += [{"scope": scope.removeprefix("by_"), "name": str(name), **entry}
                 for scope in ("by_category", "by_tier", "by_template")
                 for name, entry in accuracy.get(scope, {}).items()]
        tables = {"accuracy": pd.DataFrame(rows)}
        failures = audit.get("failure_modes", {})
        groups = [("all templates", failures.get("overall", {})), *failures.get("by_template", {}).items()]
        tables["failure_modes"] = pd.DataFrame(
            [{"template": name, "n_failures": g.get("n_failures"), "mode": mode, "count": count,
              "rate": (g.get("rates") or {}).get(mode)}
             for name, g in groups for mode, count in g.get("counts", {}).items()],
            columns=["template", "n_failures", "mode", "count", "rate"])
        entropy = audit.get("entropy_gap") or {}
        if entropy.get("models"):
            tables["entropy_gap"] = pd.DataFrame(
                [{"model": model, "slice": "all" if path[0] == "overall" else path[-1], **estimate_row(e)}
                 for model, res in entropy["models"].items()
                 for path, e in estimates({k: v for k, v in res.items() if k in ("overall", "by_category")})])
        if (graded := read_csv(folder, "graded.csv")) is not None:
            tables["graded"] = graded
        return tables
