"""lmms-eval ``--log_samples`` files: found, read and checked once here, for every reader of them.

lmms-eval writes ``<output_path>/<model>/<date>_samples_<task>.jsonl`` (one JSON object per document: ``doc_id``,
``target``, ``filtered_resps`` and, when it differs, ``resps``, ``doc_hash``, ``input``, ... plus one key per metric
holding what the task's ``process_results`` returned; releases before 0.6 also kept ``doc`` and ``arguments``) and,
beside it, ``<date>_results.json`` (the model, its arguments, the tasks' configs). Two readers use them:

- the alignment tax (:mod:`omniaudit.evaluation.interventions.alignment_tax`) reads per-document correctness of
  standard benchmarks (:func:`read_sample_records`, :func:`find_sample_files`);
- every audit reads the log of a task written by ``omniaudit export lmms-eval``
  (:mod:`omniaudit.evaluation.lmms_eval_export`) as a predictions file: :func:`adopt_log_samples`, called by
  :func:`omniaudit.predictions.check_predictions`, turns its records into the rows ``omniaudit judge``
  writes (``id``, ``order``, ``run``, ``raw``, ``label``, ``parsed``, ``option_probs``, ``provenance``), from the
  ``omniaudit`` metric that the exported ``process_results`` logs per document (item id, order, options, prompt,
  and the dataset build's identity). The answer is ``filtered_resps`` (what lmms-eval scored, reasoning tags
  stripped), read by omniaudit's own answer reader exactly as a judge run's; a multiple_choice task's options are
  scored by their log-likelihoods (softmax: ``option_probs``; all equal: no answer). The provenance says
  ``lmms-eval:<model>`` and the task, with the model and sampling from the results file beside the samples when
  there is one, and unknown otherwise; a log of another task (no ``omniaudit`` metric), of several tasks or
  builds, or with repeats is refused.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd

from omniaudit.errors import InputError
from omniaudit.tables import jsonl_objects

SAMPLES_FILE = re.compile(r"_samples_(?P<task>.+)\.jsonl$")
# what lmms-eval / lm-evaluation-harness write beside the metrics in a samples record
RESERVED = {"doc_id", "doc", "target", "arguments", "input", "resps", "filtered_resps", "doc_hash", "prompt_hash",
            "target_hash", "filter", "metrics", "token_counts", "success", "task", "split", "input_text",
            "image_paths", "raw_filtered_resps", "input_media"}
SAMPLE_RECORD = "an lmms-eval sample record (a JSON object with doc_id; written by --log_samples)"
METRIC = "omniaudit"  # the metric of an exported task: per document, what a predictions row is rebuilt from


def task_of(file: str | Path) -> str:
    """The task a samples file is named for (``<date>_samples_<task>.jsonl``), else the file's stem."""
    m = SAMPLES_FILE.search(Path(file).name)
    return m.group("task") if m else Path(file).stem


def check_sample_records(records: list[tuple[int, dict]], file: str | Path) -> None:
    """What every samples file must be: records with a ``doc_id`` each, once each, of one filter."""
    missing = next((line for line, rec in records if "doc_id" not in rec), None)
    if missing is not None:
        raise InputError(f"expected {SAMPLE_RECORD}", file=file, row=missing)
    if not records:
        raise InputError("no samples", file=file)
    filters = {str(rec.get("filter")) for _, rec in records}
    if len(filters) > 1:
        raise InputError(f"samples of several filters ({sorted(filters)}); keep one filter's records", file=file)
    seen: set[str] = set()
    for line, rec in records:
        doc = str(rec["doc_id"])
        if doc in seen:
            raise InputError("duplicate doc_id (one record per document expected)", file=file, row=line,
                             column="doc_id", value=rec["doc_id"])
        seen.add(doc)


def read_sample_records(file: str | Path) -> list[tuple[int, dict]]:
    """(line, record) of one samples file, checked (:func:`check_sample_records`)."""
    records = list(jsonl_objects(Path(file), SAMPLE_RECORD))
    check_sample_records(records, file)
    return records


def find_sample_files(path: str | Path) -> dict[str, Path]:
    """{task: file} for an lmms-eval output folder (searched recursively) or a single samples file."""
    path = Path(path)
    if path.is_file():
        return {task_of(path): path}
    if not path.is_dir():
        raise InputError("not found (expected an lmms-eval --output_path folder or a *_samples_<task>.jsonl file)",
                         file=path)
    found: dict[str, list[Path]] = {}
    for f in sorted(path.rglob("*_samples_*.jsonl")):
        found.setdefault(task_of(f), []).append(f)
    if not found:
        raise InputError("no *_samples_<task>.jsonl here: run lmms-eval with --log_samples", file=path)
    twice = {t: fs for t, fs in found.items() if len(fs) > 1}
    if twice:
        t, fs = next(iter(twice.items()))
        raise InputError(f"task '{t}' has {len(fs)} sample files ({', '.join(str(f) for f in fs)}); keep one run per "
                         "folder or pass the file itself", file=path)
    return {t: fs[0] for t, fs in found.items()}


# ------------------------------------------------------------------------------------- log_samples as predictions
def is_log_samples(raw: pd.DataFrame) -> bool:
    """Rows as lmms-eval's ``--log_samples`` writes them (not yet predictions rows)."""
    return "doc_id" in raw.columns and bool({"filtered_resps", "resps"} & set(raw.columns)) and "id" not in raw.columns


def results_of(samples: str | Path) -> tuple[Path | None, dict]:
    """The ``<date>_results.json`` lmms-eval wrote beside a samples file (path and contents), or (None, {})."""
    samples = Path(samples)
    prefix, sep, _ = samples.name.partition("_samples_")
    path = samples.with_name(f"{prefix}_results.json")
    if not sep or not path.is_file():
        return None, {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None, {}
    return path, data if isinstance(data, dict) else {}


def _number(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _run_record(task: str, first: dict, results: dict) -> dict:
    """The provenance record of an exported task's log (see the module docstring)."""
    from omniaudit.records import redact_paths

    config = results.get("config") if isinstance(results.get("config"), dict) else {}
    task_config = (results.get("configs") or {}).get(task) or {}
    gen = task_config.get("generation_kwargs") if isinstance(task_config.get("generation_kwargs"), dict) else {}
    sampling = {"temperature": _number(gen.get("temperature")), "top_p": _number(gen.get("top_p")),
                "max_new_tokens": gen.get("max_new_tokens"), "gen_kwargs": config.get("gen_kwargs") or None,
                "runs": 1} if results else {"runs": 1}
    model = {"kind": "lmms-eval", "model": config.get("model"), "model_args": redact_paths(config.get("model_args")),
             "limit": config.get("limit")}
    # the task is the config's: in the selection, so that one lmms-eval run's logs of several configs are one run
    return {"omniaudit": first.get("omniaudit"),
            "dataset": {"name": first.get("dataset"), "config": first.get("config"),
                        "fingerprint": first.get("fingerprint")},
            "judge": f"lmms-eval:{config.get('model') or 'unknown model'}", "model": model, "sampling": sampling,
            "selection": {"task": task, "conditions": None, "formats": None, "items": first.get("items")}}


def _answer(rec: dict, metric: dict, file, row: int) -> tuple[str, dict[str, float] | None]:
    """The answer text and, for a multiple_choice task, the options' probabilities."""
    options = [str(o) for o in metric.get("options") or []]
    logliks = metric.get("option_logliks")
    if logliks is not None:  # multiple_choice: one log-likelihood per option
        values = [_number(v) for v in logliks] if isinstance(logliks, list) else []
        if len(values) != len(options) or None in values:
            raise InputError(f"expected one log-likelihood per option {options}", file=file, row=row,
                             column=f"{METRIC}.option_logliks", value=logliks)
        top = max(values)
        if min(values) == top:  # every option equally likely (a model that scores nothing): no answer, not "A"
            return "", None
        weights = [math.exp(v - top) for v in values]
        return "", {o: w / sum(weights) for o, w in zip(options, weights, strict=True)}
    resp = rec.get("filtered_resps", rec.get("resps"))
    while isinstance(resp, list) and len(resp) == 1:  # releases before 0.6 kept the per-request lists
        resp = resp[0]
    if isinstance(resp, list):
        raise InputError("several answers for one document (a task with repeats): one run per log is read",
                         file=file, row=row, column="filtered_resps")
    if resp is None or (isinstance(resp, float) and resp != resp):
        resp = metric.get("response")
    return ("" if resp is None else str(resp)), None


def sample_rows(raw: pd.DataFrame, file: str | Path, rows: list[int]) -> tuple[pd.DataFrame, str]:
    """The predictions rows (as ``omniaudit judge`` writes them) of an exported task's ``--log_samples`` records,
    and a note for the report saying where they came from."""
    from omniaudit.runners.items import JudgeItem, Sampling
    from omniaudit.runners.rows import prediction_row

    task = task_of(file)
    records = raw.to_dict("records")
    check_sample_records(list(zip(rows, records, strict=True)), file)
    metrics = [rec.get(METRIC) for rec in records]
    for row, metric in zip(rows, metrics, strict=True):
        if not isinstance(metric, dict) or "id" not in metric:
            raise InputError(f"this lmms-eval log (task '{task}') is not of a task written by `omniaudit export "
                             f"lmms-eval`: its samples lack the '{METRIC}' metric that maps them to item ids. Export "
                             f"the dataset config as a task and run lmms-eval on it", file=file, row=row)
    first = metrics[0]
    named = SAMPLES_FILE.search(Path(file).name)
    if named and first.get("task") != task:
        raise InputError(f"the file is named for task '{task}' but its samples answer task '{first.get('task')}'",
                         file=file, row=rows[0], column=METRIC)
    for row, metric in zip(rows, metrics, strict=True):
        for key in ("task", "dataset", "config", "fingerprint"):
            if metric.get(key) != first.get(key):
                raise InputError(f"samples of another {key} than row {rows[0]} ({metric.get(key)!r}, not "
                                 f"{first.get(key)!r}): one log holds one task", file=file, row=row, column=METRIC)
    results_path, results = results_of(file)
    provenance = _run_record(first.get("task") or task, first, results)
    sampling = provenance["sampling"]
    out = []
    for row, rec, metric in zip(rows, records, metrics, strict=True):
        text, probs = _answer(rec, metric, file, row)
        item = JudgeItem(id=str(metric["id"]), prompt=str(metric.get("prompt") or ""), order=metric.get("order"),
                         options=[str(o) for o in metric.get("options") or []])
        line = prediction_row(item, text, Sampling(), probs, provenance, None)
        line.update(temperature=sampling.get("temperature"), top_p=sampling.get("top_p"), seed=None)
        out.append(line)
    who = provenance["model"]["model"]
    note = (f"answers logged by lmms-eval (task {provenance['selection']['task']}, --log_samples); "
            + (f"model {who} as its {results_path.name} says" if results_path else
               "provenance unknown beyond the dataset build: model and sampling are not recorded (no lmms-eval "
               "results file beside the samples)"))
    return pd.DataFrame(out, index=raw.index), note


def adopt_log_samples(raw: pd.DataFrame, file: str | Path, rows: list[int] | None = None) -> str | None:
    """Turn an exported task's ``--log_samples`` rows into predictions rows, in place (the same rows, numbered as
    read); returns the note on their origin, or None when ``raw`` is not a samples file (left as it is)."""
    if not is_log_samples(raw):
        return None
    rows = rows or list(range(1, len(raw) + 1))
    converted, note = sample_rows(raw, file, rows)
    for column in list(raw.columns):
        del raw[column]
    for column in converted.columns:
        raw[column] = converted[column].to_numpy()
    return note


def read_log_samples(path: str | Path) -> tuple[pd.DataFrame, list[int], str]:
    """An exported task's samples file as predictions rows, their line numbers and the note on their origin."""
    records = read_sample_records(path)
    raw = pd.DataFrame([rec for _, rec in records])
    rows = [line for line, _ in records]
    note = adopt_log_samples(raw, path, rows)
    if note is None:
        raise InputError("not an lmms-eval --log_samples file (expected doc_id and filtered_resps)", file=path)
    return raw, rows, note
