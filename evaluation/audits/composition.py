"""Composition / counterfactual audit (C3PO): graded accuracy, failure decomposition, attention entropy.

Predictions are read as the runners write them (``omniaudit judge --config samples`` and ``--config ablations``:
``id`` and the free-form answer in ``raw``), or any file with ``id`` and ``prediction`` (or ``response``).
``predictions`` lists ``[NAME=]FILE``: files sharing a NAME are one inference run (a run's samples and ablations
predictions, or its shards); a bare FILE is its own run, named by its stem (or, when bare files share a stem, by as
much of their folder path as tells them apart: ``a/run``, ``b/run``). Files holding several runs in a ``run`` column
(``omniaudit judge --runs N``) are split into runs named ``NAME#<run>`` (a single run keeps its NAME). Every run
answers every sample (its ablations may be partial: failures without every ablation answered are
``unclassified``). Accuracies are the mean and standard deviation over runs; failure modes pool the runs' failed
samples; the sampling settings each run records (``temperature``, ``top_p``, ``seed``, ...) are reported. Writes
``audit.json`` (``accuracy``, ``accuracy_by_run``, ``failure_modes``, ``runs``, ``run_files``, ``sampling``,
``n_unparsed_verdicts`` and, with attention models, ``entropy_gap``), ``graded.csv`` (every graded row with its run
and the judge's prompt and verdict), ``report.md`` and figures.

Attention models are probed against their own answers: ``attention`` lists ``MODEL=FILE`` (repeat ``MODEL=`` for
several runs of one model; its correctness is the strict majority over them) or a bare ``MODEL`` whose answers are
the ``predictions`` runs (at most one such model: two models never share one correctness).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation.failure_modes import decompose, rates_by_template
from omniaudit.evaluation.grading import accuracy_table, grade, unparsed_verdicts
from omniaudit.io import atomic_dir, to_json
from omniaudit.tables import fail_at, read_records

SAMPLE_COLUMNS = ["id", "template_name", "category", "tier", "question", "answer"]
TEXT_COLUMNS = ("prediction", "response", "raw")  # the free-form answer; ``raw`` as ``omniaudit judge`` writes it
SAMPLING = ("temperature", "top_p", "top_k", "seed", "max_tokens", "max_new_tokens")  # reported when recorded


@dataclass
class Run:
    """One inference run: its answers (``id``, ``prediction``) to the samples and any ablations."""

    name: str
    files: list[Path]
    answers: pd.DataFrame
    sampling: dict = field(default_factory=dict)
    sample_files: list[Path] = field(default_factory=list)  # the files holding its answers to samples


def run_specs(specs: list[str | Path]) -> dict[str, list[Path]]:
    """``[NAME=]FILE`` specs -> run name -> its files, in the order given.

    Files sharing a NAME are one run. A bare FILE (or any existing file, even with ``=`` in its name) is its own run,
    named by its stem; bare files sharing a stem are named by their paths' last distinct parts (``a/run``,
    ``b/run``), so they never merge into one run.
    """
    entries: list[tuple[str | None, Path]] = []  # (NAME, file); None: a bare file
    for spec in specs:
        text = str(spec)
        if isinstance(spec, Path) or "=" not in text or Path(text).is_file():
            entries.append((None, Path(text)))
            continue
        cuts = [i for i, ch in enumerate(text) if ch == "="]
        cut = next((i for i in cuts if Path(text[i + 1:]).is_file()), cuts[0])
        name, file = text[:cut], text[cut + 1:]
        if not name or not file:
            raise InputError("expected NAME=FILE or FILE", value=text)
        entries.append((name, Path(file)))
    names = {name for name, _ in entries if name is not None}
    labels = iter(_bare_labels([path for name, path in entries if name is None]))
    runs: dict[str, list[Path]] = {}
    for name, path in entries:
        if name is None:
            name = next(labels)
            if name in names:
                raise InputError(f"this bare file would be run '{name}', the NAME of other files; give it its own "
                                 f"NAME=FILE (files sharing a NAME are one run)", file=path)
        runs.setdefault(name, []).append(path)
    return runs


def _bare_labels(paths: list[Path]) -> list[str]:
    """Each bare file's run name: its stem, or as many trailing path parts as make it unique among the bare files
    (the full path, suffix included, when only the suffix differs: ``run.jsonl`` and ``run.csv``)."""
    resolved = [Path(p).resolve() for p in paths]
    for i, path in enumerate(resolved):
        if resolved.index(path) != i:
            raise InputError("the same predictions file is given twice (a run is one file, or several files under "
                             "one NAME=)", file=paths[i])
    full = [path.with_suffix("").parts for path in resolved]
    labels = []
    for i, parts in enumerate(full):
        depth = 1
        while depth <= len(parts) and any(o[-depth:] == parts[-depth:] for k, o in enumerate(full) if k != i):
            depth += 1
        labels.append(Path(*parts[-depth:]).as_posix() if depth <= len(parts) else str(resolved[i]))
    return labels


def _run_labels(raw: pd.DataFrame, path: Path, rows: list[int]) -> list[str] | None:
    """Each row's ``run`` as text (``omniaudit judge --runs N``), or None when the file has no ``run`` column."""
    if "run" not in raw.columns:
        return None
    out = []
    for row, value in zip(rows, raw["run"].tolist(), strict=True):
        if value is None or (isinstance(value, float) and np.isnan(value)) or not str(value).strip():
            raise InputError("expected a run (the file has a 'run' column, so every row needs one)", file=path,
                             row=row, column="run", value=value)
        out.append(str(int(value)) if isinstance(value, float) and value.is_integer() else str(value).strip())
    return out


def _ordered(labels: list[str]) -> list[str]:
    """Run labels in order: numerically when all are integers (2 before 10), else as text."""
    unique = list(dict.fromkeys(labels))
    return sorted(unique, key=int) if all(u.lstrip("-").isdigit() for u in unique) else sorted(unique)


def _sampling(frame: pd.DataFrame) -> dict:
    """The sampling settings recorded in ``frame`` (one value, or the sorted distinct values, per setting)."""
    out = {}
    for column in SAMPLING:
        if column not in frame.columns:
            continue
        values = {v.item() if isinstance(v, np.generic) else v for v in frame[column].tolist()
                  if v is not None and v == v and str(v).strip()}
        if values:
            distinct = sorted(values, key=str)
            out[column] = distinct[0] if len(distinct) == 1 else distinct
    return out


def _read_file(path: Path, known: pd.Series) -> pd.DataFrame:
    """``id, prediction, run, file, row`` (+ recorded sampling settings) of one predictions file."""
    raw, rows = read_records(path)
    column = next((c for c in TEXT_COLUMNS if c in raw.columns), None)
    if "id" not in raw.columns or column is None:
        raise InputError(f"expected columns id and prediction (or response, or raw as `omniaudit judge` writes); the "
                         f"file has {list(raw.columns)}", file=path)
    ids = raw["id"].astype(str)
    fail_at(~ids.isin(known), "id is not a sample of the dataset (nor an ablation)", path, rows, "id", ids)
    runs = _run_labels(raw, path, rows)
    answers = [v if isinstance(v, str) else "" if v is None or v != v else str(v) for v in raw[column].tolist()]
    out = pd.DataFrame({"id": ids, "prediction": answers, "run": runs, "file": str(path), "row": rows})
    return pd.concat([out, raw[[c for c in SAMPLING if c in raw.columns]].reset_index(drop=True)], axis=1)


def read_runs(specs: list[str | Path], known: pd.Series, samples_ids: pd.Series) -> list[Run]:
    """The inference runs of ``specs`` (see ``run_specs``), each split by its ``run`` column when the files have one.

    Refused, naming the file and row: an id that is neither a sample nor an ablation, an id answered twice in one
    run, a run without a sample's answer (every run answers every sample; write an empty answer for a refusal), and
    among the files of one NAME holding several runs, a file without a ``run`` column.
    """
    out = []
    for name, files in run_specs(specs).items():
        frames = [_read_file(Path(f), known) for f in files]
        table = pd.concat(frames, ignore_index=True)
        labels = _ordered(table["run"].dropna().tolist())
        without = [f for f, frame in zip(files, frames, strict=True) if frame["run"].isna().any()]
        if len(labels) > 1 and without:
            raise InputError(f"run '{name}': the files hold {len(labels)} sampled runs ('run' column) but this file "
                             f"has no 'run' column; give each file of one NAME the same runs", file=without[0])
        groups = ([(name, table)] if len(labels) <= 1 else
                  [(f"{name}#{r}", table[table["run"] == r]) for r in labels])
        for label, rows in groups:
            dup = rows["id"].duplicated()
            if dup.any():
                first = rows[dup].iloc[0]
                raise InputError(f"id answered twice in run '{label}'", file=first["file"], row=int(first["row"]),
                                 column="id", value=first["id"])
            missing = ~samples_ids.isin(rows["id"])
            if missing.any():
                hint = (" It answers no sample at all: give a run's samples and ablations predictions the same NAME "
                        "(NAME=samples.jsonl NAME=ablations.jsonl)." if missing.all() else "")
                raise InputError(f"run '{label}': {int(missing.sum())} sample(s) have no prediction (every run must "
                                 f"answer every sample; write an empty prediction for a refusal).{hint}",
                                 file=", ".join(str(f) for f in files), value=samples_ids[missing].iloc[0])
            answering = set(rows.loc[rows["id"].isin(samples_ids), "file"])
            out.append(Run(label, [Path(f) for f in files], rows[["id", "prediction"]].reset_index(drop=True),
                           _sampling(rows), [Path(f) for f in files if str(f) in answering]))
    return out


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
    runs = read_runs(predictions, known, samples["id"])
    graded = [grade(samples, run.answers, judge, **judge_options).assign(run=run.name) for run in runs]
    files = list(dict.fromkeys(f for run in runs for f in run.files))
    by_file: dict[Path, list[pd.DataFrame]] = {}  # a predictions file -> the graded runs it answers samples in
    for run, g in zip(runs, graded, strict=True):
        for f in run.files:
            by_file.setdefault(f.resolve(), []).extend([g] if f in run.sample_files else [])
    model_runs = attention_runs(attention, files) if attention else {}
    for model_files in model_runs.values():  # validate every attention model's answers before any model is loaded
        for f in model_files:
            if Path(f).resolve() not in by_file:
                by_file[Path(f).resolve()] = [grade(samples, r.answers, judge, **judge_options).assign(run=r.name)
                                              for r in read_runs([Path(f)], known, samples["id"])]
    accuracy = accuracy_table(graded)
    expected = ablations.groupby("sample_id")["ablation"].apply(set).to_dict()
    per_run = [decompose(g, ablations.merge(run.answers, on="id"), expected) for g, run in zip(graded, runs,
                                                                                               strict=True)]
    pooled = pd.DataFrame([s for d in per_run for s in d["samples"]], columns=["id", "template_name", "mode"])
    failure_modes = rates_by_template(pooled)
    if model_runs:
        from omniaudit.evaluation.attention import ProbeConfig

        correct = {}
        for m, model_files in model_runs.items():
            frames = list({id(g): g for f in model_files for g in by_file[Path(f).resolve()]}.values())
            correct[m] = pd.concat(frames).groupby("id")["correct"].mean() > 0.5  # a tie is not a majority
        entropy = attention_gaps(dataset, correct, ProbeConfig())
        for m, model_files in model_runs.items():
            entropy["models"][m]["runs"] = [str(f) for f in model_files]
    unparsed = [unparsed_verdicts(g) for g in graded]  # in the order of "runs"
    sampling = {run.name: run.sampling for run in runs if run.sampling}
    result = {"dataset": str(dataset), "runs": [run.name for run in runs],
              "run_files": {run.name: [str(f) for f in run.files] for run in runs}, "judge": judge,
              **({"sampling": sampling} if sampling else {}),
              "accuracy": accuracy, "accuracy_by_run": {run.name: float(100 * g["correct"].mean())
                                                        for run, g in zip(runs, graded, strict=True)},
              "failure_modes": failure_modes,
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
                 f"Dataset `{dataset}`, {len(samples)} samples, {len(runs)} run(s). Grading: normalised exact "
                 f"match, then " + (f"judge `{judge}` (Yes/No; prompts in graded.csv)." if judge else
                                    "no judge (exact matches only)."), "",
                 f"**Overall accuracy: {fmt(accuracy['overall'])}%** (exact-match rate "
                 f"{100 * result['exact_match_rate']:.1f}%).", ""]
        if judge:
            lines += [f"Judge verdicts: {result['n_judged']} non-exact answers judged, "
                      f"**{result['n_unparsed_verdicts']} unparsed** (neither a clear Yes nor a clear No; counted "
                      f"as wrong; their `judge_raw` is in graded.csv with an empty `judge_says`).", ""]
        settings = lambda r: ", ".join(f"{k}={v}" for k, v in r.sampling.items()) or "not recorded"  # noqa: E731
        lines += [markdown_table(["Run", "files", "sampling", "accuracy (%)"],
                                 [[r.name, ", ".join(f"`{f}`" for f in r.files), settings(r),
                                   f"{result['accuracy_by_run'][r.name]:.1f}"] for r in runs]), ""]
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
