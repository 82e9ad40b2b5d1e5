"""The interventions audit (Thud: Shift / Mute / Swap) as a registry entry (:class:`omniaudit.audits.Audit`): its
embedded default, the audit of one model's answers, the scorecard's Avg Gap, task accuracy and what tracking
logs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from omniaudit.audits import Audit
from omniaudit.errors import InputError
from omniaudit.results import AuditOptions, AuditResult, AuditRun, estimate_row, put

if TYPE_CHECKING:
    import pandas as pd

    from omniaudit.evaluation.scorecard.inference import Contrast

PARAMS = {"default": {"n_clips": 90}, "small": {"n_clips": 6}}  # the embedded default per size
TEMPORAL = ("offset_mae", "direction_accuracy", "shift_yes_no", "sync_binary_accuracy", "sync_three_way_accuracy",
            "offset_within_tolerance")


class InterventionsAudit(Audit):
    name = "interventions"
    paper = "thud-vision-speaks-for-sound"
    title = "Audio grounding under Shift / Mute / Swap"
    item_configs = {"diagnostic": ("video+audio",)}
    headline = ("avg_gap", "dimensions.sync.gap", "dimensions.existence.gap", "dimensions.consistency.gap")
    shortcuts = ("visual_inference",)
    references = {"oracle": "the audio-verified answer: no gap", "random": "the gold answer or \"I don't know.\"",
                  "deaf": "synchronized, a sound, a match whatever was done to the audio: visual_inference"}
    figure = "failure_modes.png"
    source = "interventions/scored.csv (the audit's per-row correctness)"
    units = (("coverage.*", "proportion"), ("offset_mae", "seconds"), ("*", "percent"))  # Thud: percent
    sizes = PARAMS
    summary = ("{n_clips} synthetic Thud clips (a visible impact and its sound), each Original + Shift -2/+2 s, Mute "
               "and Swap")

    def build(self, out: Path, size: str = "default", progress=None) -> Path:
        from omniaudit.data_builders.interventions import SyntheticClipSpec, build_interventions_dataset

        spec = SyntheticClipSpec(n_clips=PARAMS[size]["n_clips"], width=160, height=120, fps=12)
        return build_interventions_dataset(out, spec=spec, progress=progress)

    def audit(self, out: Path, dataset: Path | str, predictions: Mapping[str, Mapping[str, Path]],
              options: AuditOptions) -> AuditResult:
        """One model's ``diagnostic`` answers (the audit compares a model with itself across interventions)."""
        from omniaudit.evaluation.interventions.audit import InterventionAuditConfig, run_interventions_audit

        files = [file for model_files in predictions.values() for file in model_files.values()]
        if len(files) != 1:
            raise InputError(f"the interventions audit reads one model's diagnostic answers, not {len(files)} files")
        resamples = {} if options.n_resamples is None else {"n_resamples": options.n_resamples}
        config = InterventionAuditConfig(partial=options.partial, **resamples)
        return AuditResult.read(self.name, run_interventions_audit(out, dataset, files[0], config, options.progress))

    def measures(self, run: AuditRun) -> tuple[dict[str, list], dict[str, list[dict]]]:
        """Avg Gap and each dimension's gap from the audit's per-row correctness; the audio dodge shown."""
        import pandas as pd

        from omniaudit.evaluation.audit_outputs import read_audit
        from omniaudit.evaluation.scorecard.rules import gap_measures, shown

        audit = read_audit(run.folder)
        tested = gap_measures(pd.read_csv(cast(Path, run.folder) / "scored.csv"))
        dodge = {"value": (audit.get("failure_modes") or {}).get("audio_dodge"),
                 "ci": (audit.get("failure_modes_ci") or {}).get("audio_dodge"),
                 "n": (audit.get("failure_modes_n") or {}).get("audio_dodge")}
        return {"visual_inference": tested}, {"visual_inference": [shown("interventions", "audio dodge rate", dodge,
                                                                          0.0, "above")]}

    def accuracy(self, run: AuditRun) -> Contrast | None:
        """Accuracy on the Original clips, each dimension against a uniform guess over its answers."""
        import numpy as np
        import pandas as pd

        from omniaudit.evaluation.scorecard.inference import arm, contrast
        from omniaudit.evaluation.scorecard.rules import THUD_CHANCE

        scored = pd.read_csv(cast(Path, run.folder) / "scored.csv")
        original = (scored["intervention"] == "original").to_numpy()
        chance = scored["dimension"].map(THUD_CHANCE).to_numpy(float)
        right = scored["correct"].fillna(0).to_numpy(float)
        if "parsed" in scored.columns:
            right = np.where(scored["parsed"].to_numpy(bool), right, 0.0)
        known = original & np.isfinite(chance)
        chance = np.nan_to_num(chance, nan=0.5)
        return contrast(scored["source_id"].astype(str).to_numpy(), [arm(right, known, chance, chance * (1 - chance))])

    def coverage(self, folder: Path) -> float | None:
        """The share of the answers the audit's extractor read (its ``coverage.<dimension>.parsed``, pooled)."""
        from omniaudit.evaluation.audit_outputs import read_audit

        coverage = read_audit(folder).get("coverage") or {}
        cells = [c["parsed"] for c in coverage.values() if c.get("parsed", {}).get("value") is not None]
        n = sum(c["n"] for c in cells)
        return sum(c["value"] * c["n"] for c in cells) / n if n else None

    def metrics(self, audit: dict) -> dict[str, float]:
        from omniaudit.results import estimates

        out: dict[str, float] = {}
        for dimension, entry in audit.get("dimensions", {}).items():
            for field in ("orig", "interv", "gap"):
                put(out, f"dimensions/{dimension}/{field}", entry.get(field))
        put(out, "avg_gap", audit.get("avg_gap"))
        for mode, rate in audit.get("failure_modes", {}).items():
            put(out, f"failure_modes/{mode}", rate)
        for name in TEMPORAL:
            put(out, name, (audit.get(name) or {}).get("value"))
        for band, entry in audit.get("sync_by_offset", {}).items():
            put(out, f"sync_by_offset/{band}", entry.get("value"))
        for path, entry in estimates(audit.get("coverage", {}), ("coverage",)):
            put(out, "/".join(path), entry["value"])
        put(out, "n_rows", audit.get("n_rows"))
        put(out, "n_source_clips", audit.get("n_source_clips"))
        return out

    def tables(self, audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
        import pandas as pd

        from omniaudit.evaluation.interventions.failure_modes import FAILURE_MODES
        from omniaudit.results import estimates

        rows = []
        for dimension, entry in audit.get("dimensions", {}).items():
            row = {"dimension": dimension, "intervention": entry.get("intervention")}
            for field in ("orig", "interv", "gap"):
                row[field] = entry.get(field)
                ci = (entry.get("ci") or {}).get(field) or [None, None]
                row[f"{field}_ci_low"], row[f"{field}_ci_high"] = ci
            row.update({f"n_{k}": v for k, v in (entry.get("n") or {}).items()}, n_clips=entry.get("n_clips"))
            rows.append(row)
        tables = {"dimensions": pd.DataFrame(rows)}
        modes = audit.get("failure_modes", {})
        ci, n = audit.get("failure_modes_ci", {}), audit.get("failure_modes_n", {})
        tables["failure_modes"] = pd.DataFrame([
            {"mode": m, "group": FAILURE_MODES.get(m, ("", ""))[0], "description": FAILURE_MODES.get(m, ("", ""))[1],
             "rate": rate, "ci_low": (ci.get(m) or [None, None])[0], "ci_high": (ci.get(m) or [None, None])[1],
             "n": n.get(m)} for m, rate in modes.items()])
        tables["sync_by_offset"] = pd.DataFrame([{"band_s": band, **estimate_row(e)}
                                                 for band, e in audit.get("sync_by_offset", {}).items()])
        tables["temporal"] = pd.DataFrame([{"metric": name, **estimate_row(audit[name])}
                                           for name in TEMPORAL if isinstance(audit.get(name), dict)])
        tables["coverage"] = pd.DataFrame([{"dimension": path[0], "measure": path[1], **estimate_row(e)}
                                           for path, e in estimates(audit.get("coverage", {}))])
        return tables
