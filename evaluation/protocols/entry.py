"""The protocol audit (audio judges under blueprint, reference and pairwise protocols) as a registry entry
(:class:`omniaudit.audits.Audit`): its embedded default, the audit of judges' answers, the scorecard's lock and
label-following measures, task accuracy and what tracking logs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from omniaudit.audits import Audit
from omniaudit.results import AuditOptions, AuditResult, AuditRun, estimate_row, estimates, put

if TYPE_CHECKING:
    import pandas as pd

    from omniaudit.evaluation.scorecard.inference import Contrast

# the embedded default per size (10 of the speech set's 12 sentences per cell: label following per protocol found at
# its 0.15 minimum with at least 80% power; docs/statistics.md)
PARAMS = {"default": {"max_trials": 100, "sentences_per_cell": 10},
          "small": {"max_trials": 6, "sentences_per_cell": 1}}
METRICS = ("accuracy", "parse_rate", "rf", "rf_normalized", "lock", "gold_aligned", "p_a", "follow_cue")


class ProtocolsAudit(Audit):
    name = "protocols"
    paper = "lalm-judge-protocol-shortcuts"
    title = "Audio judges under blueprint, reference and pairwise protocols"
    item_configs = {"blueprint": ("audio",), "reference": ("audio",), "pairwise": ("audio",),
                    "cue_conflict": ("audio",)}
    headline = ("rf", "lock", "follow_cue")
    shortcuts = ("label_following", "position")
    references = {"oracle": "the gold label", "always-a": "slot A: fully locked",
                  "copy-reference": "the supplied reference: RF 1", "copy-specialist": "the specialist's label",
                  "label-follower": "any supplied label: label_following", "position-locked": "slot A: position"}
    source = "the protocol answers (blueprint, reference, pairwise, cue_conflict .jsonl) with the items"
    units = (("*", "proportion"),)
    sizes = PARAMS
    summary = ("espeak-ng speech in 4 languages x 4 voices x 4 emotions ({sentences_per_cell} sentence(s) per cell): "
               "blueprint, reference, pairwise (up to {max_trials} trials per task) and cue-conflict probes")

    def build(self, out: Path, size: str = "default", progress=None) -> Path:
        from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset

        p = PARAMS[size]
        return build_protocols_dataset(out, options=ProtocolBuildOptions(max_trials=p["max_trials"]),
                                       spec=SpeechSetSpec(sentences_per_cell=p["sentences_per_cell"]),
                                       progress=progress)

    def audit(self, out: Path, dataset: Path | str, predictions: Mapping[str, Mapping[str, Path]],
              options: AuditOptions) -> AuditResult:
        from omniaudit.evaluation.protocols.audit import ProtocolAuditConfig, run_protocols_audit

        judges = [f"{model}={file}" for model, files in predictions.items() for file in files.values()]
        resamples = {} if options.n_resamples is None else {"n_resamples": options.n_resamples}
        config = ProtocolAuditConfig(partial=options.partial, extracted=options.extracted, **resamples)
        return AuditResult.read(self.name, run_protocols_audit(out, dataset, judges, config, options.progress))

    def measures(self, run: AuditRun) -> tuple[dict[str, list], dict[str, list[dict]]]:
        """The lock and the slot-A rate over both orders per format (position) and cue following per protocol
        (label_following); slot A on identical trials and RF per placement shown."""
        from omniaudit.evaluation.audit_outputs import read_audit
        from omniaudit.evaluation.scorecard.rules import cue_measures, lock_measures, protocol_frame, shown

        df = protocol_frame(run)
        audit = read_audit(run.folder)
        position = [shown(self.name, f"slot-A rate on identical trials ({fmt})", est, 0.5, "outside",
                          note="not used: the scripted oracle picks slot A without a gold")
                    for fmt, est in sorted(((audit.get("p_a") or {}).get(run.name) or {}).items())]
        labels = [shown(self.name, f"RF {attribute} / {placement}", est, 0.0, "above")
                  for attribute, cells in sorted(((audit.get("rf") or {}).get(run.name) or {}).items())
                  for placement, est in sorted(cells.items())]
        return ({"position": lock_measures(df), "label_following": cue_measures(df)},
                {"position": position, "label_following": labels})

    def accuracy(self, run: AuditRun) -> Contrast | None:
        """Agreement with the gold label on the items no shortcut of this audit can help or hurt: those that supply
        no label and are not pairwise (a label copier is wrong by construction where the label is wrong and right
        where it is true, so counting those items made part of a remedy's accuracy gain the shortcut measure
        itself); null 1/k per item."""
        import numpy as np

        from omniaudit.evaluation.scorecard.inference import arm, contrast
        from omniaudit.evaluation.scorecard.rules import protocol_frame

        df = protocol_frame(run)
        config, cond = df["config"].to_numpy(object), df["condition"].to_numpy(object)
        label_free = (((config == "blueprint") & np.isin(cond, ("audio", "skeleton", "descriptors")))
                      | ((config == "cue_conflict") & (cond == "none")))
        gold = df["gold"].notna().to_numpy() & (df["gold"].astype(str) != "") & label_free
        right = (df["label"].astype(object).to_numpy() == df["gold"].astype(object).to_numpy()).astype(float)
        p0 = 1.0 / df["k"].to_numpy(float)
        return contrast(df["clip_id"].astype(str).to_numpy(), [arm(right, gold, p0, p0 * (1 - p0))])

    def metrics(self, audit: dict) -> dict[str, float]:
        out: dict[str, float] = {}
        for metric in METRICS:
            for path, entry in estimates(audit.get(metric, {}), (metric,)):
                put(out, "/".join(path), entry["value"])
        for judge, n in audit.get("n_answered", {}).items():
            put(out, f"n_answered/{judge}", n)
        return out

    def tables(self, audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
        import pandas as pd

        rows = [{"metric": metric, "judge": path[0], "cell": "/".join(path[1:]), **estimate_row(entry)}
                for metric in METRICS for path, entry in estimates(audit.get(metric, {}))]
        columns = ["metric", "judge", "cell", "value", "ci_low", "ci_high", "n", "k"]
        frame = pd.DataFrame(rows)
        return {"estimates": frame.reindex(columns=[c for c in columns if c in frame] +
                                           [c for c in frame if c not in columns])}
