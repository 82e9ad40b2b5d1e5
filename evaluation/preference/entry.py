"""The preference audit (EmoPrefer) as a registry entry (:class:`omniaudit.audits.Audit`): its embedded default,
the audit of judges' predictions, the scorecard's position and style measures, task accuracy and what tracking
logs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from omniaudit.audits import Audit
from omniaudit.results import AuditOptions, AuditResult, AuditRun, ci_fields, put

if TYPE_CHECKING:
    import pandas as pd

    from omniaudit.evaluation.scorecard.inference import Contrast

# the embedded default per size: "default" sized by power (the minimum effects of omniaudit.shortcuts, 80% power under
# the family-wise control: benchmarks/scorecard_power.py), "small" for smoke runs (the card says what it can detect)
PARAMS = {"default": {"n_pairs": 500}, "small": {"n_pairs": 120}}


class PreferenceAudit(Audit):
    name = "preference"
    paper = "emoprefer-shortcut-audit"
    title = "Shortcut audit of pairwise preference judges"
    item_configs = {"judge": ("text",)}
    headline = ("predictors.length_generator_lr.full.waf", "predictors.length_generator_lr.counter_stereotypical.waf")
    shortcuts = ("style", "position")
    references = {"oracle": "the human label",
                  "always-a": "slot A in both orders: position-locked, a tie on every pair",
                  "position-locked": "the first-shown description: position",
                  "verbose": "the longer description: style"}
    figure = "waf_full_vs_counter.png"
    source = "preference/predictions.csv (the audit's per-pair table)"
    units = (("*", "percent"),)  # WAF and its differences in points, as the paper prints them
    sizes = PARAMS
    summary = ("{n_pairs} synthetic EmoPrefer-style pairs (7 generators, labels following content over the generator "
               "prior), each judged in both orders")

    def build(self, out: Path, size: str = "default", progress=None) -> Path:
        from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset

        # labels follow content (which description names the true emotion) over the planted generator prior, and no
        # label position bias: the judge's length / generator / slot preferences are then shortcuts, not the label's
        spec = SyntheticSpec(n_pairs=PARAMS[size]["n_pairs"], content_strength=4.0, position_bias=0.0)
        return build_preference_dataset(out, spec=spec)

    def audit(self, out: Path, dataset: Path | str, predictions: Mapping[str, Mapping[str, Path]],
              options: AuditOptions) -> AuditResult:
        from omniaudit.evaluation.preference.audit import PreferenceAuditConfig, run_preference_audit

        judges = [f"{model}={file}" for model, files in predictions.items() for file in files.values()]
        resamples = {} if options.n_resamples is None else {"n_resamples": options.n_resamples}
        # the generators' (length- and style-controlled) win rates, the source classifier and the permutation
        # controls are about the benchmark, not the models: left out where only the models' numbers are wanted (the
        # scorecard: the same for every model; `omniaudit audit preference --data DATASET` gives them once)
        about_the_benchmark = dict.fromkeys(("length_control", "style_control", "source_classifier", "controls"),
                                            options.benchmark)
        config = PreferenceAuditConfig(judges=judges, judged_only=options.partial,
                                       extracted=options.extracted, **about_the_benchmark, **resamples)
        return AuditResult.read(self.name, run_preference_audit(out, dataset, config=config,
                                                                progress=options.progress))

    def measures(self, run: AuditRun) -> tuple[dict[str, list], dict[str, list[dict]]]:
        """Slot-A rate (position), longer and prior picks (style); the per-order WAF gap shown."""
        from omniaudit.evaluation.audit_outputs import read_audit
        from omniaudit.evaluation.scorecard.rules import preference_measures, preference_table, shown

        tested = preference_measures(preference_table(run), run.name)
        judge = ((read_audit(run.folder).get("judges") or {}).get(run.name) or {})
        gap = judge.get("position_bias", {}).get("ab_minus_ba", {})
        return ({"position": [t for t in tested if t.spec.key == "slot_a"],
                 "style": [t for t in tested if t.spec.key != "slot_a"]},
                {"position": [shown(self.name, "per-order WAF gap, ab - ba (points)", gap.get("full"), 0.0,
                                    "outside")]})

    def accuracy(self, run: AuditRun) -> Contrast | None:
        """Agreement with the label on the binary pairs (a tie half right); null 0.5 per pair."""
        import numpy as np

        from omniaudit.evaluation import stats
        from omniaudit.evaluation.scorecard.inference import arm, contrast
        from omniaudit.evaluation.scorecard.rules import HALF, HALF_VAR, preference_table

        t = preference_table(run)
        choice = stats.decide_with_ties(t[f"p_a1__{run.name}"].to_numpy(float))  # 1 a1, 0 a2, 0.5 a tie
        choice = np.where(np.isfinite(choice), choice, 0.0)
        right = np.where((t["preference"] == "a1").to_numpy(), choice, 1.0 - choice)
        binary = (t["preference"] != "same").to_numpy()
        return contrast(t["id"].astype(str).to_numpy(), [arm(right, binary, HALF, HALF_VAR)])

    def metrics(self, audit: dict) -> dict[str, float]:
        out: dict[str, float] = {}
        for name, slices in audit.get("predictors", {}).items():
            for slice_name, entry in slices.items():
                for field in ("waf", "accuracy", "prior_following"):
                    put(out, f"{field}/{name}/{slice_name}", entry.get(field))
                if "mcnemar" in entry:
                    put(out, f"mcnemar_p/{name}/{slice_name}", entry["mcnemar"].get("p"))
        for name, meta in audit.get("judges", {}).items():
            put(out, f"judges/{name}/order_agreement", meta.get("order_agreement"))
            put(out, f"judges/{name}/n_ties", meta.get("n_ties"))
        dataset = audit.get("dataset", {})
        for field in ("n_pairs", "n_binary", "n_same", "prior_agreement"):
            put(out, f"dataset/{field}", dataset.get(field))
        for slice_name, n in dataset.get("slices", {}).items():
            put(out, f"dataset/slices/{slice_name}", n)
        classifier = audit.get("source_classifier") or {}
        for field in ("accuracy_mean", "accuracy_sd", "chance", "majority"):
            put(out, f"source_classifier/{field}", classifier.get(field))
        controls = audit.get("controls") or {}
        permutation, swap = controls.get("identity_permutation") or {}, controls.get("counterfactual_swap") or {}
        put(out, "controls/identity_permutation/waf_mean", permutation.get("mean"))
        put(out, "controls/identity_permutation/waf_sd", permutation.get("sd"))
        for field in ("identity_flip_rate", "length_flip_rate"):
            put(out, f"controls/counterfactual_swap/{field}", swap.get(field))
        return out

    def tables(self, audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
        import pandas as pd

        from omniaudit.evaluation.audit_outputs import read_csv

        judges = set(audit.get("judges", {}))
        rows = []
        for name, slices in audit.get("predictors", {}).items():
            for slice_name, entry in slices.items():
                test = entry.get("mcnemar") or {}
                rows.append({"predictor": name, "kind": "judge" if name in judges else "probe", "slice": slice_name,
                             "waf": entry.get("waf"), **ci_fields(entry), "n": entry.get("n"),
                             "accuracy": entry.get("accuracy"), "prior_following": entry.get("prior_following"),
                             "ties": entry.get("ties"), "mcnemar_reference": test.get("reference"),
                             "mcnemar_b": test.get("b"), "mcnemar_c": test.get("c"), "mcnemar_p": test.get("p")})
        tables = {"waf": pd.DataFrame(rows)}
        win_rates = audit.get("dataset", {}).get("win_rates", {})
        tables["win_rates"] = pd.DataFrame({"generator": list(win_rates), "win_rate": list(win_rates.values())})
        pairs = [{"pairing": pairing, "n": e.get("n"), "first": e.get("first"),
                  "first_win_rate": e.get("first_win_rate"),
                  **{f"accuracy/{k}": v for k, v in (e.get("accuracy") or {}).items()}}
                 for pairing, e in audit.get("source_pairs", {}).items()]
        tables["source_pairs"] = pd.DataFrame(pairs)
        if (predictions := read_csv(folder, "predictions.csv")) is not None:
            tables["predictions"] = predictions
        return tables
