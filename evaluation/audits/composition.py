"""Composition / counterfactual audit (C3PO): graded accuracy, failure decomposition, attention entropy.

Each predictions file is one inference run: ``id`` and ``prediction`` (or ``response``), for the samples and, when
the run also answered them, the ``ablations`` rows (their ids). Accuracies are the mean and standard deviation over
runs; failure modes pool the runs' failed samples. Writes ``audit.json`` (``accuracy``, ``failure_modes``,
``n_unparsed_verdicts`` and, with attention models, ``entropy_gap``), ``graded.csv`` (every graded row with the
judge's prompt and verdict), ``report.md`` and figures.

Attention models are probed against their own answers: ``attention`` lists ``MODEL=FILE`` (repeat ``MODEL=`` for
several runs of one model; its correctness is the strict majority over them) or a bare ``MODEL`` whose answers are
the ``predictions`` runs (at most one such model: two models never share one correctness).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation.failure_modes import decompose, rates_by_template
from omniaudit.evaluation.grading import accuracy_table, grade, unparsed_verdicts
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


def attention_runs(attention: list[str] | dict[str, list[str | Path]],
                   predictions: list[str | Path]) -> dict[str, list[Path]]:
    """Model -> the prediction runs that say which samples it answered right.

    ``MODEL=FILE`` (the split is the ``=`` after which an existing file follows, so a model path may hold ``=``),
    repeated for several runs; a bare ``MODEL`` (or an existing model path) takes ``predictions``.
    """
    if isinstance(attention, dict):
        runs = {m: [Path(f) for f in ([files] if isinstance(files, str | Path) else files)]
                for m, files in attention.items()}
    else:
        runs = {}
        for spec in attention:
            model, files = str(spec), None
            if "=" in model and not Path(model).exists():
                cuts = [i for i, ch in enumerate(model) if ch == "="]
                cut = next((i for i in cuts if Path(model[i + 1:]).is_file()), cuts[0])
                model, files = model[:cut], [Path(model[cut + 1:])]
            if not model or files == [Path("")]:
                raise InputError("expected MODEL=PREDICTIONS (or a bare MODEL, probed against --predictions)",
                                 value=spec)
            runs.setdefault(model, []).extend(files if files is not None else [None])
        bare = [m for m, files in runs.items() if None in files]
        if len(bare) > 1:
            raise InputError(f"attention models {bare} would all be scored against the same --predictions runs; "
                             f"name each model's own answers: MODEL=PREDICTIONS (repeat for several runs)")
        for model in bare:
            if runs[model] != [None] * len(runs[model]):
                raise InputError(f"give attention model {model} either as MODEL=PREDICTIONS or bare, not both",
                                 value=model)
            runs[model] = [Path(p) for p in predictions]
    for model, files in runs.items():
        if not files:
            raise InputError("an attention model needs at least one predictions file", value=model)
    return runs


def attention_gaps(dataset: str | Path, correct: dict[str, pd.Series], config) -> dict:
    """Mid-layer entropy per sample for each model; dH (correct - incorrect) per model and category, and pooled,
    each model's entropies split by its own correctness (``correct``: model -> bool per sample id)."""
    from omniaudit.data_builders.hub import load_config
    from omniaudit.evaluation.attention import AttentionProbe, entropy_gaps

    # media stay encoded ({"bytes", "path"} cells); videos are left out, as in the paper
    table = load_config(dataset, "samples", columns=["id", "question", "category", "image", "audio"])
    rows = [r for r in table.to_dict("records") if r["image"] is not None or r["audio"] is not None]
    ids = [r["id"] for r in rows]
    ok = {}
    for model, series in correct.items():
        values = series.reindex(ids)
        if values.isna().any():
            raise InputError(f"no graded answer of attention model {model} for sample "
                             f"'{values.index[values.isna()][0]}'", file=dataset)
        ok[model] = values.to_numpy(bool)
    category = np.array([r["category"] for r in rows])
    h_mid = {}
    for model in correct:
        probe = AttentionProbe(model, config)
        h_mid[model] = np.array([probe.sample(r["id"], r["question"], r["image"] and r["image"]["bytes"],
                                              r["audio"] and r["audio"]["bytes"])["h_mid"] for r in rows])
    out = entropy_gaps(h_mid, ok, category, config.n_resamples, config.seed)
    out["depth_range"] = list(config.depth_range)
    out["correctness"] = "per model: strict majority over that model's own graded runs"
    return out


def run_composition_audit(out_dir: str | Path, dataset: str | Path, predictions: list[str | Path],
                          judge: str | None = None, attention: list[str] | dict[str, list[str | Path]] | None = None,
                          **judge_options) -> Path:
    from omniaudit.data_builders.hub import load_config
    from omniaudit.evaluation.report import markdown_table, plt

    samples = load_config(dataset, "samples", columns=SAMPLE_COLUMNS)
    ablations = load_config(dataset, "ablations", columns=["id", "sample_id", "ablation"])
    known = pd.concat([samples["id"], ablations["id"]])
    runs = [read_run(p, known, samples["id"]) for p in predictions]
    graded = [grade(samples, run, judge, **judge_options).assign(run=Path(p).stem)
              for p, run in zip(predictions, runs, strict=True)]
    by_file = {Path(p).resolve(): g for p, g in zip(predictions, graded, strict=True)}
    model_runs = attention_runs(attention, predictions) if attention else {}
    for files in model_runs.values():  # validate every attention model's answers before any model is loaded
        for f in files:
            if Path(f).resolve() not in by_file:
                by_file[Path(f).resolve()] = grade(samples, read_run(f, known, samples["id"]), judge,
                                                   **judge_options).assign(run=Path(f).stem)
    accuracy = accuracy_table(graded)
    expected = ablations.groupby("sample_id")["ablation"].apply(set).to_dict()
    per_run = [decompose(g, ablations.merge(run, on="id"), expected) for g, run in zip(graded, runs, strict=True)]
    pooled = pd.DataFrame([s for d in per_run for s in d["samples"]], columns=["id", "template_name", "mode"])
    failure_modes = rates_by_template(pooled)
    if model_runs:
        from omniaudit.evaluation.attention import ProbeConfig

        # a tie is not a majority
        correct = {m: pd.concat([by_file[Path(f).resolve()] for f in files]).groupby("id")["correct"].mean() > 0.5
                   for m, files in model_runs.items()}
        entropy = attention_gaps(dataset, correct, ProbeConfig())
        for m, files in model_runs.items():
            entropy["models"][m]["runs"] = [str(f) for f in files]
    unparsed = [unparsed_verdicts(g) for g in graded]  # in the order of "runs"
    result = {"dataset": str(dataset), "runs": [Path(p).stem for p in predictions], "judge": judge,
              "accuracy": accuracy, "failure_modes": failure_modes,
              **({"entropy_gap": entropy} if model_runs else {}), "n_samples": len(samples),
              "exact_match_rate": float(np.mean([g["exact"].mean() for g in graded])),
              "judge_yes_rate": float(np.mean([(g["judge_says"] == "Yes").mean() for g in graded])),
              "n_judged": int(sum(g["judge_prompt"].notna().sum() for g in graded)),
              "n_unparsed_verdicts": int(sum(unparsed)), "unparsed_verdicts_by_run": unparsed}
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
        if judge:
            lines += [f"Judge verdicts: {result['n_judged']} non-exact answers judged, "
                      f"**{result['n_unparsed_verdicts']} unparsed** (neither a clear Yes nor a clear No; counted "
                      f"as wrong; their `judge_raw` is in graded.csv with an empty `judge_says`).", ""]
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
        if model_runs:
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
            f"[{fmt(pooled['ci'][0], 3)}, {fmt(pooled['ci'][1], 3)}]. Each model's samples are split by its own "
            "answers (strict majority over its runs: "
            + "; ".join(f"{Path(m).name}: {', '.join(Path(f).name for f in r.get('runs', []))}"
                        for m, r in entropy["models"].items()) + ").", "",
            markdown_table(["Model", "slice", "dH (bits)", "95% CI", "correct", "incorrect"], rows), "",
            "![Entropy gap](entropy_gap.png)" if values else "", ""]
