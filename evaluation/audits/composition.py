"""Composition / counterfactual audit (C3PO): graded accuracy, failure decomposition, attention entropy.

Each predictions file is one inference run: ``id`` and ``prediction`` (or ``response``), for the samples and, when
the run also answered them, the ``ablations`` rows (their ids). Accuracies are the mean and standard deviation over
runs; failure modes pool the runs' failed samples. Writes ``audit.json`` (``accuracy``, ``failure_modes`` and, with
an attention model, ``entropy_gap``), ``graded.csv`` (every graded row with the judge's prompt and verdict),
``report.md`` and figures.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation.failure_modes import decompose, rates_by_template
from omniaudit.evaluation.grading import accuracy_table, grade
from omniaudit.io import atomic_dir, to_json
from omniaudit.tables import check_ids, read_records

SAMPLE_COLUMNS = ["id", "template_name", "category", "tier", "question", "answer"]


def read_run(path: str | Path, known: pd.Series, samples_ids: pd.Series) -> pd.DataFrame:
    """``id, prediction`` of one run; every id must be a sample or an ablation, every sample must be answered."""
    path = Path(path)
    raw, rows = read_records(path)
    column = next((c for c in ("prediction", "response", "raw") if c in raw.columns), None)
    if "id" not in raw.columns or column is None:
        raise InputError(f"expected columns id and prediction (or response, or raw as `omniaudit judge` writes); the "
                         f"file has {list(raw.columns)}", file=path)
    ids = raw["id"].astype(str)
    check_ids(ids, known, path, rows, "id is not a sample of the dataset")
    answers = raw[column].where(raw[column].notna(), "").astype(str)
    missing = ~samples_ids.isin(ids)
    if missing.any():
        raise InputError(f"{int(missing.sum())} sample(s) have no prediction (every run must answer every sample; "
                         f"write an empty prediction for a refusal)", file=path, value=samples_ids[missing].iloc[0])
    return pd.DataFrame({"id": ids, "prediction": answers})


def attention_gaps(dataset: str | Path, models: list[str], correct: pd.Series, config) -> dict:
    """Mid-layer entropy per sample for each model; dH (correct - incorrect) per model and category, and pooled."""
    import datasets

    from omniaudit.evaluation.attention import AttentionProbe, entropy_gap, pooled_gap

    ds = datasets.load_dataset(str(dataset), "samples", split="train")
    for col in ("image", "audio", "video"):
        ds = ds.cast_column(col, type(ds.features[col])(decode=False))
    rows = [r for r in ds if r["image"] is not None or r["audio"] is not None]
    ok = np.array([bool(correct.get(r["id"], False)) for r in rows])
    category = np.array([r["category"] for r in rows])
    out, per_model = {"models": {}}, {}
    for model in models:
        probe = AttentionProbe(model, config)
        h = np.array([probe.sample(r["id"], r["question"], r["image"] and r["image"]["bytes"],
                                   r["audio"] and r["audio"]["bytes"])["h_mid"] for r in rows])
        per_model[model] = (h, ok)
        out["models"][model] = {
            "overall": entropy_gap(h, ok, config.n_resamples, config.seed),
            "by_category": {c: entropy_gap(h[category == c], ok[category == c], config.n_resamples, config.seed)
                            for c in sorted(set(category))},
            "mean_h_mid": float(h.mean())}
    out["pooled_z"] = pooled_gap(per_model, config.n_resamples, config.seed)
    out["pooled_z_by_category"] = {
        c: pooled_gap({m: (h[category == c], o[category == c]) for m, (h, o) in per_model.items()},
                      config.n_resamples, config.seed) for c in sorted(set(category))}
    out["depth_range"] = list(config.depth_range)
    out["correctness"] = "majority over runs of the graded answers"
    return out


def run_composition_audit(out_dir: str | Path, dataset: str | Path, predictions: list[str | Path],
                          judge: str | None = None, attention: list[str] | None = None, **judge_options) -> Path:
    from omniaudit.data_builders.hub import load_config
    from omniaudit.evaluation.report import markdown_table, plt

    samples = load_config(dataset, "samples", columns=SAMPLE_COLUMNS)
    ablations = load_config(dataset, "ablations", columns=["id", "sample_id", "ablation"])
    runs = [read_run(p, pd.concat([samples["id"], ablations["id"]]), samples["id"]) for p in predictions]
    graded = [grade(samples, run, judge, **judge_options).assign(run=Path(p).stem)
              for p, run in zip(predictions, runs, strict=True)]
    accuracy = accuracy_table(graded)
    expected = ablations.groupby("sample_id")["ablation"].apply(set).to_dict()
    per_run = [decompose(g, ablations.merge(run, on="id"), expected) for g, run in zip(graded, runs, strict=True)]
    pooled = pd.DataFrame([s for d in per_run for s in d["samples"]], columns=["id", "template_name", "mode"])
    failure_modes = rates_by_template(pooled)
    if attention:
        from omniaudit.evaluation.attention import ProbeConfig

        majority = pd.concat(graded).groupby("id")["correct"].mean() > 0.5  # a tie is not a majority
        entropy = attention_gaps(dataset, attention, majority, ProbeConfig())
    result = {"dataset": str(dataset), "runs": [Path(p).stem for p in predictions], "judge": judge,
              "accuracy": accuracy, "failure_modes": failure_modes,
              **({"entropy_gap": entropy} if attention else {}), "n_samples": len(samples),
              "exact_match_rate": float(np.mean([g["exact"].mean() for g in graded])),
              "judge_yes_rate": float(np.mean([(g["judge_says"] == "Yes").mean() for g in graded]))}
    out = Path(out_dir)
    with atomic_dir(out) as tmp:
        (tmp / "audit.json").write_text(to_json(result), encoding="utf-8")
        pd.concat(graded).to_csv(tmp / "graded.csv", index=False)
        templates = accuracy["by_template"]
        names = sorted(templates, key=lambda t: templates[t]["mean"])
        fig, ax = plt.subplots(figsize=(6.4, 0.42 * len(names) + 1.4), dpi=120)
        ax.barh(names, [templates[t]["mean"] for t in names], xerr=[templates[t]["sd"] for t in names],
                color="#4C72B0", capsize=3)
        ax.set(xlim=(0, 100), xlabel="accuracy (%), mean ± sd over runs", title="Accuracy per template")
        fig.tight_layout()
        fig.savefig(tmp / "template_accuracy.png")
        plt.close(fig)
        fmt = lambda e: f"{e['mean']:.1f} ± {e['sd']:.1f}"  # noqa: E731
        lines = ["# Composition and counterfactual audit", "",
                 f"Dataset `{dataset}`, {len(samples)} samples, {len(predictions)} run(s). Grading: normalised exact "
                 f"match, then " + (f"judge `{judge}` (Yes/No; prompts in graded.csv)." if judge else
                                    "no judge (exact matches only)."), "",
                 f"**Overall accuracy: {fmt(accuracy['overall'])}%** (exact-match rate "
                 f"{100 * result['exact_match_rate']:.1f}%).", ""]
        for title, key in (("Category", "by_category"), ("Tier", "by_tier"), ("Template", "by_template")):
            lines += [markdown_table([title, "accuracy (%)"], [[k, fmt(v)] for k, v in accuracy[key].items()]), ""]
        lines += ["![Accuracy per template](template_accuracy.png)", "",
                  "## Failure modes", "",
                  "Failed samples, classified from the answers to the bypass-test ablations: text / audio / image / "
                  "video dominance (the wrong answer follows one input and ignores the others) or incomplete "
                  "fusion.", ""]
        modes = sorted({m for v in [failure_modes["overall"]] + list(failure_modes["by_template"].values())
                        for m in v["counts"]})
        rows = [[name, v["n_failures"]] + [f"{100 * v['rates'].get(m, 0):.0f}%" for m in modes]
                for name, v in [("all templates", failure_modes["overall"]), *failure_modes["by_template"].items()]]
        lines += [markdown_table(["Template", "failures", *modes], rows) if modes else "_no failures_", ""]
        if attention:
            lines += _entropy_section(entropy, tmp)
        (tmp / "report.md").write_text("\n".join(lines), encoding="utf-8")
    return out


def _entropy_section(entropy: dict, folder: Path) -> list[str]:
    from omniaudit.evaluation.report import fmt, markdown_table, plt

    rows, labels, values, errs = [], [], [], []
    for model, res in entropy["models"].items():
        for name, gap in [("all", res["overall"]), *res["by_category"].items()]:
            lo, hi = gap["ci"]
            rows.append([model, name, fmt(gap["value"], 3), f"[{fmt(lo, 3)}, {fmt(hi, 3)}]", gap["n_correct"],
                         gap["n_incorrect"]])
            if gap["value"] is not None:
                labels.append(f"{Path(model).name} / {name}")
                values.append(gap["value"])
                errs.append([gap["value"] - lo, hi - gap["value"]])
    if values:
        fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(values) + 1.4), dpi=120)
        ax.errorbar(values, range(len(values)), xerr=np.array(errs).T, fmt="o", capsize=3)
        ax.axvline(0, ls="--", color="grey", lw=1)
        ax.set_yticks(range(len(values)), labels)
        ax.set(xlabel="dH = H_mid(correct) - H_mid(incorrect) (bits)", title="Mid-layer attention entropy gap")
        fig.tight_layout()
        fig.savefig(folder / "entropy_gap.png")
        plt.close(fig)
    pooled = entropy["pooled_z"]
    return ["## Attention entropy", "",
            f"Mid-layer (relative depth {entropy['depth_range'][0]}-{entropy['depth_range'][1]}) entropy of the "
            "answer position's attention over text, audio and image spans; dH with a two-sample bootstrap 95% CI. "
            f"Pooled over models (within-model z-scores): {fmt(pooled['value'], 3)} sd "
            f"[{fmt(pooled['ci'][0], 3)}, {fmt(pooled['ci'][1], 3)}].", "",
            markdown_table(["Model", "slice", "dH (bits)", "95% CI", "correct", "incorrect"], rows), "",
            "![Entropy gap](entropy_gap.png)" if values else "", ""]
