"""Alignment tax (Thud §3.3, Table 2): accuracy of checkpoints on standard video benchmarks, from lmms-eval logs.

lmms-eval is the usual harness for Video-MME, LVBench, WorldSense or Daily-Omni, but it cannot be an extra of this
package: its releases 0.6-0.7 require ``av<16`` (omniaudit's media code pins av 18) and older ones pin
``numpy==1.26.4`` / ``datasets==2.16.1``. Run it in its own environment with ``--log_samples`` and read its
per-sample files here::

    python -m lmms_eval --model qwen2_5_omni --model_args pretrained=CKPT --tasks videomme,worldsense \\
        --batch_size 1 --log_samples --output_path logs/ours

lmms-eval writes ``<output_path>/<model>/<date>_samples_<task>.jsonl``, one JSON object per document: ``doc_id``,
``target``, ``filtered_resps`` / ``resps``, ``doc_hash``, ... and one key per metric holding what the task's
``process_results`` returned for that document. The per-sample correctness read from that metric value:

- a number or bool (``lvbench_score: true``, ``exact_match: 1.0``): the value, which must lie in [0, 1];
- a dict (``videomme_perception_score: {pred_answer, answer, ...}``): its ``score`` or ``correct`` when present,
  else ``pred_answer == answer`` (trimmed, case-insensitive; an unparsed prediction "" is wrong).

The metric key is found automatically when a record has exactly one (else name it: ``--metric KEY`` or
``--metric TASK=KEY``). Samples are clustered by video (Video-MME asks three questions per video): the first of
``videoID`` / ``video_id`` / ``video`` that every record has in its ``doc`` (the task's document, where lmms-eval keeps
Video-MME's ``videoID``), else in its metric dict; else a ``question_id`` of the form ``VIDEO-N`` (Video-MME's
``001-2``) in ``doc`` or the metric dict, clustered by ``VIDEO``; else by ``doc_id``. The accuracy CI is a percentile
cluster bootstrap
(:class:`~omniaudit.evaluation.stats.ClusterRatios`). Comparisons with the first run (the base checkpoint) are paired
on the documents both runs answered: the difference of accuracies with a paired cluster-bootstrap CI and, for 0/1
correctness, the exact McNemar test. The macro average over tasks (Table 2's "Avg.") averages per-task accuracies;
its CI averages the per-task resamples (tasks are independent samples).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from omniaudit.errors import InputError
from omniaudit.evaluation.lmms_eval import RESERVED, find_sample_files, read_sample_records, task_of
from omniaudit.evaluation.stats import BOOTSTRAP_SEED, N_RESAMPLES, ClusterRatios, estimate, mcnemar_exact

__all__ = ["alignment_tax", "find_sample_files", "parse_metric_option", "parse_runs", "read_samples"]

CLUSTER_KEYS = ("videoID", "video_id", "video")
PRED_KEYS = ("pred_answer", "pred", "prediction", "parsed_pred")
GOLD_KEYS = ("answer", "gt_answer", "ground_truth", "gold", "target")


@dataclass
class TaskSamples:
    task: str
    file: Path
    metric: str
    doc_ids: np.ndarray  # str
    correct: np.ndarray  # float in [0, 1]
    clusters: np.ndarray  # str
    cluster_key: str  # what clustered them: videoID / video_id / question_id prefix / doc_id ...


def parse_metric_option(values: Sequence[str] | None) -> dict[str | None, str]:
    """``--metric KEY`` (every task) and ``--metric TASK=KEY`` -> {task or None: key}."""
    out: dict[str | None, str] = {}
    for v in values or ():
        task, sep, key = str(v).partition("=")
        task, key = (task.strip(), key.strip()) if sep else (None, task.strip())
        if not key or (sep and not task):
            raise InputError("expected --metric KEY or --metric TASK=KEY", value=v)
        out[task] = key
    return out


QUESTION_KEYS = ("question_id",)
QUESTION_OF_VIDEO = re.compile(r"^(?P<video>.+)-\d+$")  # Video-MME: "001-2" is question 2 of video 001


def _cluster_candidates(rec: dict, metric: str) -> dict[str, str]:
    """{"doc.videoID": "...", "videomme_perception_score.video_id": "...", "doc.question_id": "001", ...}: every
    value in this record that could name its video, keyed by where it was found (question ids cut to their video)."""
    out: dict[str, str] = {}
    places = [("doc", rec.get("doc")), (metric, rec.get(metric))]
    for where, d in places:
        if isinstance(d, dict):
            for k in CLUSTER_KEYS:
                v = d.get(k)
                if isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip():
                    out[f"{where}.{k}"] = str(v).strip()
    for where, d in places:
        if isinstance(d, dict):
            for k in QUESTION_KEYS:
                m = QUESTION_OF_VIDEO.match(str(d.get(k) or "").strip())
                if m:
                    out[f"{where}.{k}"] = m.group("video")
    return out


def _correct(value, file: Path, row: int, metric: str) -> float:
    """Per-sample correctness in [0, 1] of one metric value."""
    if isinstance(value, dict):
        if "score" in value or "correct" in value:
            value = value["score"] if "score" in value else value["correct"]
        else:
            pred = next((value[k] for k in PRED_KEYS if k in value), None)
            gold = next((value[k] for k in GOLD_KEYS if k in value), None)
            if pred is None or gold is None:
                raise InputError(f"metric '{metric}' is a dict without score, correct or a prediction/answer pair "
                                 f"({', '.join(PRED_KEYS)} / {', '.join(GOLD_KEYS)}); keys: {sorted(value)}",
                                 file=file, row=row, column=metric)
            return float(str(pred).strip().upper() == str(gold).strip().upper())
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and np.isfinite(value) and 0 <= value <= 1:
        return float(value)
    raise InputError("expected a per-sample correctness (bool or number in [0, 1]) or a dict holding one",
                     file=file, row=row, column=metric, value=value)


def read_samples(file: str | Path, task: str | None = None, metric: str | None = None) -> TaskSamples:
    """One lmms-eval ``*_samples_<task>.jsonl`` file: per-document correctness, doc ids and clusters."""
    file = Path(file)
    task = task_of(file) if task is None else task
    records = read_sample_records(file)
    first_row, first = records[0]
    if metric is None:
        listed = first.get("metrics")
        candidates = list(listed) if isinstance(listed, list) else [k for k in first if k not in RESERVED]
        if len(candidates) != 1:
            raise InputError(f"cannot tell which key holds task '{task}''s per-sample metric (candidates: "
                             f"{candidates or 'none'}); pass --metric {task}=KEY", file=file, row=first_row)
        metric = candidates[0]
    doc_ids, correct, clusters = [], [], []
    for line_no, rec in records:
        if metric not in rec:
            raise InputError(f"record lacks the metric '{metric}'", file=file, row=line_no, column=metric)
        doc_ids.append(str(rec["doc_id"]))
        correct.append(_correct(rec[metric], file, line_no, metric))
        clusters.append(_cluster_candidates(rec, metric))
    # the first place (doc before metric dict, video ids before question ids) that every record fills
    order = list(clusters[0])
    key = next((k for k in order if all(k in c for c in clusters)), None)
    return TaskSamples(task, file, metric, np.array(doc_ids), np.array(correct, np.float64),
                       np.array([c[key] for c in clusters] if key else doc_ids), _key_name(key))


def _key_name(key: str | None) -> str:
    """The key as reported: ``videoID`` (from doc or the metric dict), ``question_id prefix``, ``doc_id``."""
    if key is None:
        return "doc_id"
    name = key.rpartition(".")[2]
    return f"{name} prefix" if name in QUESTION_KEYS else name


def parse_runs(specs: Sequence[str]) -> dict[str, Path]:
    """``NAME=PATH`` (or ``PATH``, named after its folder) -> {name: path}; names must be distinct. Each spec is read
    by :func:`omniaudit.specs.parse_named_file` (an existing path always wins, ``=`` and all)."""
    from omniaudit.specs import parse_named_file

    runs: dict[str, Path] = {}
    for spec in specs:
        name, path, named = parse_named_file(spec, folders=True, what="PATH", noun="lmms-eval run")
        name = name if named else (path.stem if path.is_file() else path.name)
        if not name:
            raise InputError("expected a run as NAME=PATH", value=spec)
        if name in runs:
            raise InputError(f"two runs would both be '{name}'; name them with NAME=PATH (e.g. base=... ours=...)",
                             value=spec)
        runs[name] = path
    if not runs:
        raise InputError("give at least one lmms-eval run")
    return runs


def alignment_tax(runs: Sequence[str] | dict[str, Path], metric: Sequence[str] | dict | None = None,
                  n_resamples: int = N_RESAMPLES, seed: int = BOOTSTRAP_SEED, confidence: float = 0.95) -> dict:
    """Per run and task: accuracy with a cluster-bootstrap CI; per later run: paired Δ vs the first run (CI, exact
    McNemar) and the macro average over the tasks every run has. Accuracies are in percent."""
    files = runs if isinstance(runs, dict) else parse_runs(runs)
    metrics = metric if isinstance(metric, dict) else parse_metric_option(metric)
    samples = {name: {task: read_samples(f, task, metrics.get(task, metrics.get(None)))
                      for task, f in find_sample_files(p).items()} for name, p in files.items()}
    names = list(samples)
    base = names[0]
    common = [t for t in samples[base] if all(t in samples[n] for n in names)]
    out: dict = {"base": base, "confidence": confidence, "n_resamples": n_resamples, "seed": seed,
                 "statistic": "accuracy (%) with a percentile cluster-bootstrap CI; deltas paired on shared doc_ids",
                 "runs": {}, "deltas": {}, "average": {}}
    resampled: dict[str, dict[str, np.ndarray]] = {n: {} for n in names}
    for name in names:
        out["runs"][name] = {"path": str(files[name]), "tasks": {}}
        for task, s in samples[name].items():
            ratios = ClusterRatios(s.clusters)
            ratios.add_weighted("acc", s.correct, np.ones(s.correct.size, bool))
            point, boot, n = ratios.resample(n_resamples, seed)
            resampled[name][task] = boot["acc"]
            out["runs"][name]["tasks"][task] = {**estimate(point["acc"], boot["acc"], n["acc"], 100.0, confidence),
                                                "metric": s.metric, "clusters": ratios.n, "cluster_key": s.cluster_key,
                                                "file": str(s.file)}
    for name in names:
        if common:
            avg_point = float(np.mean([out["runs"][name]["tasks"][t]["value"] for t in common])) / 100
            avg_boot = np.mean([resampled[name][t] for t in common], axis=0)
            out["average"][name] = {**estimate(avg_point, avg_boot, len(common), 100.0, confidence), "tasks": common}
    for name in names[1:]:
        out["deltas"][name] = {}
        for task in common:
            a, b = samples[base][task], samples[name][task]
            shared = np.intersect1d(a.doc_ids, b.doc_ids)
            ia = dict(zip(a.doc_ids, range(a.doc_ids.size), strict=True))
            ib = dict(zip(b.doc_ids, range(b.doc_ids.size), strict=True))
            pa, pb = np.array([ia[d] for d in shared], int), np.array([ib[d] for d in shared], int)
            ratios = ClusterRatios(a.clusters[pa])
            every = np.ones(shared.size, bool)
            ratios.add_weighted("base", a.correct[pa], every)
            ratios.add_weighted("run", b.correct[pb], every)
            point, boot, _ = ratios.resample(n_resamples, seed)
            entry = {**estimate(point["run"] - point["base"], boot["run"] - boot["base"], int(shared.size), 100.0,
                                confidence), "only_in_base": int(a.doc_ids.size - shared.size),
                     "only_in_run": int(b.doc_ids.size - shared.size)}
            binary = np.isin(a.correct[pa], (0.0, 1.0)).all() and np.isin(b.correct[pb], (0.0, 1.0)).all()
            entry["mcnemar"] = mcnemar_exact(b.correct[pb] == 1, a.correct[pa] == 1) if binary else None
            out["deltas"][name][task] = entry
        if common:
            d_point = (out["average"][name]["value"] - out["average"][base]["value"]) / 100
            d_boot = np.mean([resampled[name][t] for t in common], axis=0) - np.mean(
                [resampled[base][t] for t in common], axis=0)
            out["deltas"][name]["average"] = estimate(d_point, d_boot, len(common), 100.0, confidence)
    return out


def _cell(e: dict | None, signed: bool = False) -> str:
    if not e or e.get("value") is None:
        return "—"
    lo, hi = e["ci"]
    fmt = "{:+.1f}" if signed else "{:.1f}"
    ci = f" [{fmt.format(lo)}, {fmt.format(hi)}]" if lo is not None and hi is not None else ""
    return fmt.format(e["value"]) + ci


def plot_alignment_tax(result: dict, path: Path) -> Path:
    """Grouped bars: one group per task (and the average), one bar per run, error bars the bootstrap CI."""
    from omniaudit.evaluation.report import plt, save_figure

    runs = result["runs"]
    tasks = sorted({t for r in runs.values() for t in r["tasks"]}) + (["average"] if result["average"] else [])
    width = 0.8 / len(runs)
    fig, ax = plt.subplots(figsize=(1.4 * len(tasks) + 2.4, 3.8), dpi=120)
    for j, (name, run) in enumerate(runs.items()):
        cells = [(i, run["tasks"].get(t) if t != "average" else result["average"].get(name))
                 for i, t in enumerate(tasks)]
        cells = [(i, e) for i, e in cells if e and e["value"] is not None]
        xs = np.array([i for i, _ in cells]) + (j - (len(runs) - 1) / 2) * width
        vals = np.array([e["value"] for _, e in cells])
        err = np.array([[v - (e["ci"][0] if e["ci"][0] is not None else v) for (_, e), v in zip(cells, vals,
                                                                                                strict=True)],
                        [(e["ci"][1] if e["ci"][1] is not None else v) - v for (_, e), v in zip(cells, vals,
                                                                                                 strict=True)]])
        ax.bar(xs, vals, width, yerr=err, capsize=3, label=name)
    ax.set_xticks(range(len(tasks)), tasks, rotation=20, ha="right")
    ax.set(ylabel="accuracy (%)", ylim=(0, 100), title="General benchmarks per checkpoint (error bars: CI)")
    ax.legend(fontsize=8)
    save_figure(fig, path)
    return path


def run_alignment_tax_report(out_dir: str | Path, runs: Sequence[str], metric: Sequence[str] | None = None,
                             n_resamples: int = N_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> Path:
    """Write ``alignment_tax.json``, ``report.md`` and ``alignment_tax.png`` (atomically)."""
    from omniaudit.evaluation.report import markdown_table
    from omniaudit.io import atomic_dir, to_json

    result = alignment_tax(runs, metric, n_resamples, seed)
    names = list(result["runs"])
    tasks = sorted({t for r in result["runs"].values() for t in r["tasks"]})
    rows = [[t, *[_cell(result["runs"][n]["tasks"].get(t)) for n in names]] for t in tasks]
    if result["average"]:
        rows.append(["**average**", *[_cell(result["average"].get(n)) for n in names]])
    lines = ["# Alignment tax on general benchmarks", "",
             f"Accuracy (%) per task from lmms-eval per-sample logs, {int(100 * result['confidence'])}% cluster-"
             f"bootstrap CI ({result['n_resamples']} resamples, seed {result['seed']}). Base: `{result['base']}`.",
             "", markdown_table(["Task", *names], rows), "", "![accuracy per task](alignment_tax.png)", ""]
    for name, deltas in result["deltas"].items():
        drows = []
        for task, d in deltas.items():
            mc = d.get("mcnemar")
            drows.append([task, _cell(d, signed=True), d["n"], f"{mc['b']} / {mc['c']}, p = {mc['p']:.3g}" if mc
                          else "—"])
        lines += [f"## `{name}` − `{result['base']}` (paired on shared documents)", "",
                  markdown_table(["Task", "Δ accuracy (pp) [CI]", "n", "McNemar (run only / base only)"], drows),
                  "", "A CI below zero is an alignment tax; above zero, a gain.", ""]
    meta = [[n, t, e["metric"], e["n"], f"{e['clusters']} ({e['cluster_key']})", e["file"]]
            for n in names for t, e in result["runs"][n]["tasks"].items()]
    lines += ["## Inputs", "", markdown_table(["Run", "Task", "Metric key", "Samples", "Clusters", "File"], meta,
                                              "lllrrl"), ""]
    with atomic_dir(out_dir) as tmp:
        plot_alignment_tax(result, tmp / "alignment_tax.png")
        (tmp / "alignment_tax.json").write_text(to_json(result), encoding="utf-8")
        (tmp / "report.md").write_text("\n".join(lines), encoding="utf-8")
    return Path(out_dir)
