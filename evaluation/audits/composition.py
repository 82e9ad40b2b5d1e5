"""Composition / counterfactual audit (C3PO): graded accuracy overall and by template, category and tier.

Each predictions file is one inference run (``id`` and ``prediction`` or ``response``); accuracies are reported as
the mean and standard deviation over runs. Writes ``audit.json`` (``accuracy``), ``graded.csv`` (every graded row
with the judge's prompt and verdict), ``report.md`` and a per-template accuracy figure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation.grading import accuracy_table, grade
from omniaudit.io import atomic_dir, to_json
from omniaudit.tables import read_records

SAMPLE_COLUMNS = ["id", "template_name", "category", "tier", "question", "answer"]


def read_run(path: str | Path, samples: pd.DataFrame) -> pd.DataFrame:
    path = Path(path)
    raw, rows = read_records(path)
    column = next((c for c in ("prediction", "response") if c in raw.columns), None)
    if "id" not in raw.columns or column is None:
        raise InputError(f"expected columns id and prediction (or response); the file has {list(raw.columns)}",
                         file=path)
    ids = raw["id"].astype(str)
    unknown = ~ids.isin(samples["id"])
    if unknown.any():
        i = int(np.argmax(unknown.to_numpy()))
        raise InputError("id is not a sample of the dataset", file=path, row=rows[i], column="id", value=ids.iloc[i])
    dup = ids.duplicated()
    if dup.any():
        i = int(np.argmax(dup.to_numpy()))
        raise InputError("duplicate id", file=path, row=rows[i], column="id", value=ids.iloc[i])
    answers = raw[column].where(raw[column].notna(), "").astype(str)
    return pd.DataFrame({"id": ids, "prediction": answers})


def run_composition_audit(out_dir: str | Path, dataset: str | Path, predictions: list[str | Path],
                          judge: str | None = None, **judge_options) -> Path:
    from omniaudit.data_builders.hub import load_config
    from omniaudit.evaluation.report import markdown_table, plt

    samples = load_config(dataset, "samples", columns=SAMPLE_COLUMNS)
    graded = [grade(samples, read_run(p, samples), judge, **judge_options).assign(run=Path(p).stem)
              for p in predictions]
    accuracy = accuracy_table(graded)
    result = {"dataset": str(dataset), "runs": [Path(p).stem for p in predictions], "judge": judge,
              "accuracy": accuracy, "n_samples": len(samples),
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
        lines += ["![Accuracy per template](template_accuracy.png)", ""]
        (tmp / "report.md").write_text("\n".join(lines), encoding="utf-8")
    return out
