"""Composition / counterfactual audit (C3PO): graded accuracy, failure decomposition, attention entropy.

Predictions are read as the runners write them (``omniaudit judge --config samples`` and ``--config ablations``:
``id`` and the free-form answer in ``raw``), or any file with ``id`` and ``prediction`` (or ``response``).
``predictions`` lists ``[NAME=]FILE``: files sharing a NAME are one inference run (a run's samples and ablations
predictions, or its shards); a bare FILE is its own run, named by its stem (or, when bare files share a stem, by as
much of their folder path as tells them apart: ``a/run``, ``b/run``). Files holding several runs in a ``run`` column
(``omniaudit judge --runs N``) are split into runs named ``NAME#<run>`` (a single run keeps its NAME). Every run
answers every sample (its ablations may be partial: failures without every ablation answered are
``unclassified``). Answers are graded by :func:`.grading.grade` (the readers of :mod:`.replies`, then the judge); an
answer no reader reads and no judge grades is *ungraded*: left out of every measure (a sample whose own or an
ablated answer is ungraded drops out of the measures that need it), counted in ``grading`` (overall and per model:
``n_rows``, ``n_read``, ``n_ungraded``, ``reasons``, ``coverage`` and the ``note`` "N of M rows ungraded: no grader;
pass --grader SPEC" that the dominance measure carries). Accuracies are the mean and standard deviation over runs
(of the graded samples); failure modes pool the runs' failed
samples; the sampling settings each run records (``temperature``, ``top_p``, ``seed``, ...) are reported.

Specs are read by :mod:`omniaudit.specs` (an existing file always wins, ``=`` and all; else NAME=FILE cut at the
first ``=`` followed by an existing file). Several models in one audit: ``MODEL@RUN=FILE`` makes run ``MODEL@RUN`` a
run of MODEL, cut at the last ``@``, so MODEL may be a Hub repo id (``Qwen/Qwen2.5-Omni-7B@r1=run1.jsonl``); a
``/`` is part of a name, never a separator. A plain NAME, or a bare FILE, is its own model, with its sampled runs
``NAME#r``. Per model: accuracy by template, category, tier and category x tier (C3PO Fig. 1 heatmap, Table 3; the
report's headline and tables are per model, never pooled over models), failure modes, each ablation's move rate and
the stability floor (how often another sampled run's answer to the same full input is not the same answer as a
failed one: the noise floor of "an ablation moved the answer"; :mod:`.failure_modes` compares
answers by the grader's rule and flags a decomposition whose moves do not clear the floor); across models, each
mode's share of the classified failures and the combined dominance share, the mean over models (Table 12). Per model,
``failure_decomposition.models.<m>.dominance_test`` sets the dominance share against a matched content-blind null
(:mod:`.dominance_null`): ``per_sample`` (sample id -> the share of its classified failed runs that are a dominance),
``null_per_sample`` (sample id -> the chance a content-blind, prior-free model's failure on that sample reads as
dominance, exact), ``merged``, ``value`` and ``null`` (their means over the same samples), ``null_by_policy``,
``n_samples`` and ``method``; each sample weighs once, whatever number of runs failed it, and samples with
byte-identical inputs are one sample (``merged``: its first id -> the ids it pools).

Every answered ablated copy is graded like the samples (:mod:`.ablation_accuracy`): ``ablation_accuracy`` per model
and ablation kind, with its CI and the paired drop from the intact accuracy on the same samples.

Writes ``audit.json`` (``accuracy`` over all runs (one model: its accuracy; per model: ``models.<m>.accuracy``),
``accuracy_by_run``, ``ablation_accuracy`` and ``ablation_judging``, ``failure_modes``, ``models``,
``failure_decomposition`` (per model: shares, stability floor, move rates, floor check, swap agreement and
``dominance_test``), ``runs``, ``run_files``, ``sampling``, ``n_unparsed_verdicts`` and, with attention models,
``entropy_gap`` with ``routing`` and ``probe_inputs``), ``graded.csv`` (every graded row with its run, model and the
judge's prompt and verdict), ``graded_ablations.csv`` (every graded ablated copy), ``attention_samples.csv`` (per model
and probed sample: alpha per modality, H_mid, commit depth), the per-layer attention tables and figures of
:mod:`.figures`, ``failure_decomposition.csv``, ``report.md`` and figures.

Attention models are probed against their own answers: ``attention`` lists ``MODEL=FILE`` (repeat ``MODEL=`` for
several runs of one model; its correctness is the strict majority over them) or a bare ``MODEL`` whose answers are the
``predictions`` runs (at most one such model, and only when those runs are one model's: two models never share one
correctness). Every attention model is loaded, its layers checked against ``depth_range`` and its inputs against the
modalities of the samples it probes before any judge call. The probe reads the graded item's own ``system`` and
``prompt`` with its image and audio; samples with a video are left out (counted in ``probe_inputs``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation.audit_outputs import schema, shown_input
from omniaudit.evaluation.composition.ablation_accuracy import (
    ablation_accuracy,
    ablation_frame,
    grade_ablations,
    judging,
)
from omniaudit.evaluation.composition.failure_modes import decompose, rates_by_template
from omniaudit.evaluation.composition.grading import (
    VOCABULARY,
    accuracy,
    accuracy_table,
    grade,
    grading_progress,
    grading_summary,
    unparsed_verdicts,
)
from omniaudit.evaluation.composition.probe_audit import (
    attention_of,
    check_attention_models,
    probe_modalities,
    probe_samples,
)
from omniaudit.evaluation.composition.replies import comparable, failed_ids, ungraded_mask
from omniaudit.evaluation.composition.verdicts import verdict_yes_rate
from omniaudit.io import atomic_dir, to_json
from omniaudit.predictions import ANSWER_COLUMNS, check_same_run, provenance_section, read_prediction_file
from omniaudit.runs import SAMPLING, run_order, sampling_settings
from omniaudit.specs import model_or_named_file, parse_named_files, split_model_run

SAMPLE_COLUMNS = ["id", "template_name", "category", "tier", "question", "answer"]


@dataclass
class Run:
    """One inference run: its answers (``id``, ``prediction``) to the samples and any ablations."""

    name: str
    files: list[Path]
    answers: pd.DataFrame
    sampling: dict = field(default_factory=dict)
    sample_files: list[Path] = field(default_factory=list)  # the files holding its answers to samples
    model: str = ""  # the model the run belongs to (``MODEL@RUN=FILE``); "": its own name
    provenance: list = field(default_factory=list)  # per file, what it says of its origin (FileProvenance)

    def __post_init__(self) -> None:
        self.model = self.model or self.name


def run_specs(specs: list[str | Path]) -> dict[str, list[Path]]:
    """``[NAME=]FILE`` specs -> run name -> its files, in the order given (read by :mod:`omniaudit.specs`).

    Files sharing a NAME are one run. A bare FILE (any existing file, even with ``=`` in its path) is its own run,
    named by its stem; bare files sharing a stem are named by their paths' last distinct parts (``a/run``,
    ``b/run``), so they never merge into one run.
    """
    entries = _entries(specs)
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


def _entries(specs: list[str | Path]) -> list[tuple[str | None, Path]]:
    """``(NAME, file)`` per spec; NAME None for a bare file. A NAME of the form ``MODEL@RUN`` is checked here."""
    entries: list[tuple[str | None, Path]] = []
    for named in parse_named_files(specs):
        if named.explicit:
            split_model_run(named.name)  # MODEL@RUN: both parts non-empty
        entries.append((named.name if named.explicit else None, named.path))
    return entries


def run_models(specs: list[str | Path]) -> dict[str, str]:
    """Run name (as ``run_specs`` names it) -> its model: the MODEL of an explicit ``MODEL@RUN=FILE`` (cut at the last
    ``@``; MODEL may hold ``/``, e.g. ``Qwen/Qwen2.5-Omni-7B@r1``); an explicit NAME without ``@`` and a bare FILE
    are their own model (their sampled runs ``NAME#r`` belong to it)."""
    explicit = {name for name, _ in _entries(specs) if name is not None}
    return {name: split_model_run(name)[0] if name in explicit else name for name in run_specs(specs)}


def _bare_labels(paths: list[Path]) -> list[str]:
    """Each bare file's run name: its stem, or as many trailing path parts as make it unique among the bare files
    (suffix included when only the suffix differs: ``run.jsonl`` and ``run.csv``); never the whole path where it
    lives on this machine (run names are keys of ``audit.json``)."""
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
        if depth > len(parts):  # only the suffix tells it apart: as many trailing parts of the file's name
            whole, depth = resolved[i].parts, 1
            while any(o.parts[-depth:] == whole[-depth:] for k, o in enumerate(resolved) if k != i):
                depth += 1
            parts = whole
        labels.append(Path(*parts[-depth:]).as_posix())
    return labels


def _read_file(path: Path, known: pd.Series, dataset: str | Path | None = None,
               partial: bool = False) -> pd.DataFrame:
    """``id, prediction, run, file, row`` (+ recorded sampling settings) of one predictions file; its provenance
    (checked against ``dataset``) in ``.attrs["provenance"]``."""
    read = read_prediction_file(path, dataset, ("samples", "ablations"), partial, needs=ANSWER_COLUMNS, known=known,
                                unknown="id is not a sample of the dataset (nor an ablation)",
                                expected="expected columns id and prediction (or response, or raw as `omniaudit "
                                         "judge` writes)")
    out = pd.DataFrame({"id": read.ids, "prediction": read.answers, "run": read.runs, "file": str(path),
                        "row": read.rows})
    out = pd.concat([out, read.records[[c for c in SAMPLING if c in read.records.columns]].reset_index(drop=True)],
                    axis=1)
    out.attrs["provenance"] = read.provenance
    return out


def read_runs(specs: list[str | Path], known: pd.Series, samples_ids: pd.Series, dataset: str | Path | None = None,
              partial: bool = False) -> list[Run]:
    """The inference runs of ``specs`` (see ``run_specs``), each split by its ``run`` column when the files have one.

    Refused, naming the file and row: an id that is neither a sample nor an ablation, an id answered twice in one
    run, a run without a sample's answer (every run answers every sample; write an empty answer for a refusal), and
    among the files of one NAME holding several runs, a file without a ``run`` column; a file made on another build
    of ``dataset``, one shard or an incomplete judge run (unless ``partial``), and files of one NAME from different
    judge runs (:mod:`omniaudit.predictions`).
    """
    out = []
    models = run_models(specs)
    for name, files in run_specs(specs).items():
        frames = [_read_file(Path(f), known, dataset, partial) for f in files]
        provenance = [f.attrs["provenance"] for f in frames]
        check_same_run(provenance, f"the files of run '{name}'")
        table = pd.concat(frames, ignore_index=True)
        labels = run_order(table["run"].dropna().tolist())
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
                           sampling_settings(rows), [Path(f) for f in files if str(f) in answering], models[name],
                           provenance))
    return out


def attention_runs(attention: list[str] | dict[str, list[str | Path]],
                   predictions: list[str | Path], prediction_models: list[str] | None = None) -> dict[str, list[Path]]:
    """Model -> the prediction runs that say which samples it answered right.

    ``MODEL=FILE`` (:func:`omniaudit.specs.model_or_named_file`: an existing path is a bare model, so a model folder
    may hold ``=``; else the cut is the first ``=`` after which an existing file follows), repeated for several runs;
    a bare ``MODEL`` takes ``predictions``, which must then hold one model's runs: ``prediction_models`` (the models
    of the ``--predictions`` runs) naming several models is refused, since their correctness would be mixed.
    """
    if isinstance(attention, dict):
        runs = {m: [Path(f) for f in ([files] if isinstance(files, str | Path) else files)]
                for m, files in attention.items()}
    else:
        runs = {}
        for spec in attention:
            model, file = model_or_named_file(spec)
            runs.setdefault(model, []).append(file)
        bare = [m for m, files in runs.items() if None in files]
        if len(bare) > 1:
            raise InputError(f"attention models {bare} would all be scored against the same --predictions runs; "
                             f"name each model's own answers: MODEL=PREDICTIONS (repeat for several runs)")
        for model in bare:
            if runs[model] != [None] * len(runs[model]):
                raise InputError(f"give attention model {model} either as MODEL=PREDICTIONS or bare, not both",
                                 value=model)
            several = list(dict.fromkeys(prediction_models or []))
            if len(several) > 1:
                raise InputError(f"a bare attention model ({model}) is scored by the --predictions runs, but they are "
                                 f"the runs of {len(several)} models ({', '.join(several)}): their correctness would "
                                 f"be mixed; give its own answers as MODEL=PREDICTIONS", value=model)
            runs[model] = [Path(p) for p in predictions]
    for model, files in runs.items():
        if not files:
            raise InputError("an attention model needs at least one predictions file", value=model)
    return runs


def _closed_rate(graded: list[pd.DataFrame]) -> dict[str, float]:
    """The share of answers a closed reader decided (a count or a yes/no read, no judge asked)."""
    return {"closed_read_rate": float(np.mean([(g["read_by"] == "closed").mean() for g in graded]))}


MOVED = ("an ablated (or re-run) answer moved when it is not the same answer as the failed one: the answers the "
         "readers read (a reasoning trace set aside; normalised exact match, a count, a yes/no or the template's "
         "vocabulary), then the judge when one is given (the grader's rule); an answer neither grades is left out")


def read_samples(dataset: str | Path) -> pd.DataFrame:
    """The samples the audit grades: :data:`SAMPLE_COLUMNS` and, where the build wrote it, each sample's
    ``answer_vocabulary`` (its template's possible answers, which the vocabulary reader reads replies by)."""
    from omniaudit.data_builders.hub import load_config

    try:
        return load_config(dataset, "samples", columns=[*SAMPLE_COLUMNS, VOCABULARY])
    except InputError:  # a dataset built before the vocabulary was written
        return load_config(dataset, "samples", columns=SAMPLE_COLUMNS)


def run_composition_audit(out_dir: str | Path, dataset: str | Path, predictions: list[str | Path],
                          judge: str | None = None, attention: list[str] | dict[str, list[str | Path]] | None = None,
                          depth_range: tuple[float, float] = (0.25, 0.75), partial: bool = False,
                          progress: Callable[[str], None] | None = None, **judge_options) -> Path:
    """Grade every run, decompose the failures, summarise per model (``MODEL@RUN=FILE``) and across models, and
    probe the attention models; see the module docstring. ``progress`` hears the grading ("grading r1: 40/120")."""
    from omniaudit.data_builders.hub import load_config
    from omniaudit.evaluation.composition import dominance_null as null
    from omniaudit.evaluation.composition.attention import ProbeConfig
    from omniaudit.evaluation.composition.failure_modes import AnswerMatcher, cohort_decomposition

    config = ProbeConfig(depth_range=tuple(depth_range))
    samples = read_samples(dataset)
    ablations = load_config(dataset, "ablations", columns=["id", "sample_id", "ablation"])
    known = pd.concat([samples["id"], ablations["id"]])
    runs = read_runs(predictions, known, samples["id"], dataset, partial)
    files = list(dict.fromkeys(f for run in runs for f in run.files))
    model_runs = attention_runs(attention, files, [run.model for run in runs]) if attention else {}
    extra = _attention_only_runs(model_runs, files, known, samples["id"], dataset, partial)
    if model_runs:  # before any paid judge call
        check_attention_models(list(model_runs), config, probe_modalities(probe_samples(dataset)[0]))
    graded = [grade(samples, run.answers, judge, grading_progress(progress, run.name), **judge_options)
              .assign(run=run.name) for run in runs]
    by_file: dict[Path, list[pd.DataFrame]] = {}  # a predictions file -> the graded runs it answers samples in
    for run, g in zip(runs, graded, strict=True):
        for f in run.files:
            by_file.setdefault(f.resolve(), []).extend([g] if f in run.sample_files else [])
    for path, extra_runs in extra.items():
        by_file[path] = [grade(samples, r.answers, judge, **judge_options).assign(run=r.name) for r in extra_runs]
    copies = ablation_frame(samples, ablations)  # every answered ablated copy, graded like the samples
    graded_ablations = [grade_ablations(copies, run.answers, judge, **judge_options).assign(run=run.name)
                        for run in runs]
    matcher = AnswerMatcher(judge, **judge_options)  # "the answer moved": not the same answer by the grader's rule
    per_run = [decompose(g, ablations.merge(run.answers, on="id"),
                         ablations.groupby("sample_id")["ablation"].apply(set).to_dict(), matcher)
               for g, run in zip(graded, runs, strict=True)]
    models, model_modes = _per_model(runs, graded, graded_ablations, per_run, samples, ablations, matcher, config,
                                     judge)
    decomposition = cohort_decomposition(model_modes)
    inputs = null.read_inputs(dataset)  # each sample's content-blind null (its inputs hashed); repeats are one
    nulls, units = null.sample_nulls(null.structures(inputs)), null.input_units(inputs)
    for m, entry in decomposition["models"].items():
        entry.update({k: models[m][k] for k in ("stability_floor", "move_rates", "floor_check", "swap_agreement")})
        entry["dominance_test"] = null.dominance_test(model_modes[m], nulls, units)
    out = Path(out_dir)
    decomposition["answer_comparison"] = {"rule": MOVED, "judge": shown_input(judge, out),
                                          "n_judged": matcher.n_judged}
    entropy, probed, layers = attention_of(model_runs, by_file, dataset, config, out) if model_runs else (None,) * 3
    result = _result(out, dataset, judge, runs, graded, graded_ablations, models, per_run, decomposition)
    result.update({"n_samples": len(samples), **({"entropy_gap": entropy} if model_runs else {})})
    _write_outputs(out, {"schema": schema("composition", dataset, predictions, out), **result}, runs, graded,
                   graded_ablations, decomposition, probed, layers, len(samples))
    return out


def _per_model(runs: list[Run], graded: list[pd.DataFrame], graded_ablations: list[pd.DataFrame],
               per_run: list[dict], samples: pd.DataFrame, ablations: pd.DataFrame, matcher, config,
               judge: str | None) -> tuple[dict[str, dict], dict[str, pd.DataFrame]]:
    """Per model: its summary (:func:`_model_summary`) and its failed samples' modes over its runs."""
    columns = ["id", "template_name", "mode"]
    models: dict[str, dict] = {}
    model_modes: dict[str, pd.DataFrame] = {}
    for m in dict.fromkeys(run.model for run in runs):
        idx = [k for k, run in enumerate(runs) if run.model == m]
        model_modes[m] = pd.DataFrame([s for k in idx for s in per_run[k]["samples"]], columns=columns)
        models[m] = _model_summary([runs[k] for k in idx], [graded[k] for k in idx],
                                   [graded_ablations[k] for k in idx], [per_run[k] for k in idx], model_modes[m],
                                   samples, ablations, matcher, config)
        models[m]["grading"] = grading_summary([graded[k] for k in idx], [graded_ablations[k] for k in idx],
                                               sum(len(runs[k].answers) for k in idx), judge)
    return models, model_modes


def _result(out: Path, dataset, judge: str | None, runs: list[Run], graded: list[pd.DataFrame],
            graded_ablations: list[pd.DataFrame], models: dict, per_run: list[dict], decomposition: dict) -> dict:
    """``audit.json``'s sections (see the module docstring), the attention probe and sample count aside."""
    unparsed = [unparsed_verdicts(g) for g in graded]  # in the order of "runs"
    sampling = {run.name: run.sampling for run in runs if run.sampling}
    columns = ["id", "template_name", "mode"]
    grading = grading_summary(graded, graded_ablations, sum(len(run.answers) for run in runs), judge)
    grading["samples"]["by_run"] = {run.name: int(ungraded_mask(g).sum()) for run, g in zip(runs, graded, strict=True)}
    return {"dataset": shown_input(dataset, out), "runs": [run.name for run in runs],
            "run_files": {run.name: [shown_input(f, out) for f in run.files] for run in runs},
            "judge": shown_input(judge, out),
            **({"sampling": sampling} if sampling else {}),
            "accuracy": accuracy_table(graded),
            "ablation_accuracy": {m: models[m].pop("ablation_accuracy") for m in models},
            "ablation_judging": judging(graded_ablations),
            "accuracy_by_run": {run.name: accuracy(g) for run, g in zip(runs, graded, strict=True)},
            "failure_modes": rates_by_template(pd.DataFrame([s for d in per_run for s in d["samples"]],
                                                            columns=columns)),
            "models": models, "failure_decomposition": decomposition, "grading": grading,
            "n_ungraded": grading["n_ungraded"],
            "exact_match_rate": float(np.mean([g["exact"].mean() for g in graded])), **_closed_rate(graded),
            "judge_yes_rate": float(np.mean([(g["judge_says"] == "Yes").mean() for g in graded])),
            "judge_verdicts": verdict_yes_rate(pd.concat([g["judge_says"] for g in graded])),  # yes-rate flag
            "n_judged": int(sum(g["judge_prompt"].notna().sum() for g in graded)),
            "n_unparsed_verdicts": int(sum(unparsed)), "unparsed_verdicts_by_run": unparsed,
            "provenance": {run.name: [p.summary(out) for p in run.provenance] for run in runs}}


def _attention_only_runs(model_runs: dict, files: list[Path], known: pd.Series, sample_ids: pd.Series, dataset,
                         partial: bool) -> dict[Path, list[Run]]:
    """The runs of the attention models' own answers not among the audited files, read (and validated) before any
    judge call or model load."""
    audited = {g.resolve() for g in files}
    extra: dict[Path, list[Run]] = {}
    for model_files in model_runs.values():
        for f in model_files:
            path = Path(f).resolve()
            if path not in audited and path not in extra:
                extra[path] = read_runs([Path(f)], known, sample_ids, dataset, partial)
    return extra


def _model_summary(runs: list[Run], graded: list[pd.DataFrame], graded_ablations: list[pd.DataFrame],
                   per_run: list[dict], modes: pd.DataFrame, samples: pd.DataFrame, ablations: pd.DataFrame,
                   matcher, config) -> dict:
    """One model's runs: accuracy, failure modes, the stability floor its moves must clear, move rates, swap
    agreement and the accuracy under each ablation."""
    from omniaudit.evaluation.composition.failure_modes import floor_check, move_rates, stability_floor, swap_agreement

    # answers compared by what the readers read in them; ungraded answers are in no pair
    floor = stability_floor({r.name: comparable(g) for r, g in zip(runs, graded, strict=True)},
                            {r.name: failed_ids(g) for r, g in zip(runs, graded, strict=True)},
                            samples.set_index("id")["question"], matcher)
    records = [s for d in per_run for s in d["samples"]]
    moves = move_rates(records)
    return {"runs": [r.name for r in runs], "accuracy": accuracy_table(graded),
            "failure_modes": rates_by_template(modes), "stability_floor": floor, "move_rates": moves,
            "floor_check": floor_check(moves, floor), "swap_agreement": swap_agreement(records),
            "ablation_accuracy": ablation_accuracy(graded, graded_ablations, ablations, config.n_resamples,
                                                   config.seed)}


def _write_outputs(out: Path, result: dict, runs: list[Run], graded: list[pd.DataFrame],
                   graded_ablations: list[pd.DataFrame], decomposition: dict, probed, layers, n_samples: int) -> None:
    """``audit.json``, the graded tables, the figures and ``report.md``, all or nothing."""
    from omniaudit.evaluation.composition.figures import write_attention_tables, write_decomposition
    from omniaudit.evaluation.composition.report import write_report

    with atomic_dir(out) as tmp:
        (tmp / "audit.json").write_text(to_json(result), encoding="utf-8")
        pd.concat(graded).assign(model=[r.model for r, g in zip(runs, graded, strict=True) for _ in range(len(g))]
                                 ).drop(columns=VOCABULARY, errors="ignore").to_csv(tmp / "graded.csv", index=False)
        pd.concat(graded_ablations).drop(columns=VOCABULARY, errors="ignore").to_csv(tmp / "graded_ablations.csv",
                                                                                     index=False)
        figures = {"failure_decomposition": write_decomposition(tmp, decomposition)}
        if probed is not None:
            probed.to_csv(tmp / "attention_samples.csv", index=False)
            figures["attention"] = write_attention_tables(tmp, layers, probed)
        write_report(tmp, result, runs, n_samples, figures)
        files_seen = list({p.file: p for run in runs for p in run.provenance}.values())
        with (tmp / "report.md").open("a", encoding="utf-8") as fh:
            fh.write(provenance_section(files_seen))
