"""An Inspect eval log as a predictions file: ``omniaudit import inspect LOG --out FILE``.

The log must be of a task written by ``omniaudit export inspect`` (its metadata names the dataset build: dataset,
config, fingerprint, item count and ids digest; each sample's metadata its options, order and prompt); it is read
with :func:`inspect_ai.log.read_eval_log`. Every sample's output becomes the row ``omniaudit judge`` writes for that
item (:func:`omniaudit.runners.rows.prediction_row`: ``id``, ``order``, ``run``, ``raw``, ``label``, ``parsed``,
``option_probs``, ..., ``finish_reason``, ``provenance``), its text read by omniaudit's own answer reader; Inspect's
epochs are runs (``run`` = epoch - 1). A sample that ended in an error is left out (the audit then finds the run
incomplete, unless ``--partial``).

The provenance keeps the contract of :mod:`omniaudit.predictions` (the same record in every row; the dataset build
checked by every audit): ``judge`` ``inspect:<model>`` (``inspect:omniaudit/scripted:oracle``,
``inspect:openai/gpt-4o``), ``model`` (kind ``inspect``, the Inspect model, its arguments and base URL without
local paths or credentials, the Inspect version and, for the ``omniaudit/SPEC`` provider, the runner's own identity
and settings), ``sampling`` (the generate config the model calls ran under: temperature, top_p, seed, max_tokens;
``runs``: the epochs) and ``selection`` (the Inspect task, the log's SHA-256, eval and run ids, the config's item
count). The task and log sit in the selection, as an lmms-eval task does, so the logs of one Inspect run over
several configs are one judge run to the audits.
"""

from __future__ import annotations

import hashlib
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omniaudit.errors import InputError

SECRET_WORDS = ("key", "token", "secret", "password", "auth")  # model arguments never copied into a provenance


@dataclass(frozen=True)
class ImportedLog:
    rows: int
    skipped: int  # samples that ended in an error
    task: str
    config: str
    model: str
    runs: int


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def _omniaudit_record(sample: Any) -> dict:
    """What the omniaudit provider put in a sample's output (``metadata["omniaudit"]``), else {}."""
    meta = getattr(sample.output, "metadata", None) or {}
    record = meta.get("omniaudit")
    return record if isinstance(record, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def _generate_config(log: Any) -> dict:
    """The generate config the model calls ran under: the first model call's, else the plan's."""
    from inspect_ai.event import ModelEvent

    for sample in log.samples or ():
        for event in sample.events or ():
            if isinstance(event, ModelEvent):
                return event.config.model_dump(exclude_none=True)
    return log.plan.config.model_dump(exclude_none=True) if log.plan else {}


def _model_record(log: Any, runner: dict) -> dict:
    from omniaudit.records import redact_paths
    from omniaudit.runners.transport import redact

    args = {k: v for k, v in (log.eval.model_args or {}).items()
            if not any(word in k.lower() for word in SECRET_WORDS)}
    return {"kind": "inspect", "model": redact(log.eval.model), "model_args": redact_paths(args) or None,
            "base_url": redact(log.eval.model_base_url) if log.eval.model_base_url else None,
            "inspect_ai": (log.eval.packages or {}).get("inspect_ai"),
            "runner": runner.get("identity"), "settings": runner.get("settings")}


def log_provenance(log: Any, path: Path, identity: dict, runs: int) -> dict:
    """The provenance record of the log's rows (see the module docstring)."""
    first = next((_omniaudit_record(s) for s in log.samples or () if _omniaudit_record(s)), {})
    generate = _generate_config(log)
    temperature = _number(generate.get("temperature"))
    if temperature is None and first:  # the omniaudit provider samples greedily when no temperature is set
        temperature = 0.0
    sampling = {"temperature": temperature, "top_p": _number(generate.get("top_p")), "seed": generate.get("seed"),
                "max_tokens": generate.get("max_tokens"), "runs": runs}
    model = _model_record(log, first)
    return {"omniaudit": identity.get("omniaudit"),
            "dataset": {"name": identity.get("dataset"), "config": identity.get("config"),
                        "fingerprint": identity.get("fingerprint")},
            "judge": f"inspect:{model['model']}", "model": model, "sampling": sampling,
            "selection": {"task": log.eval.task, "log": file_hash(path), "eval_id": log.eval.eval_id,
                          "run_id": log.eval.run_id, "conditions": None, "formats": None,
                          "items": identity.get("items")}}


def _identity(log: Any, path: Path) -> dict:
    """The exported task's identity from the log's metadata; a log of another task is refused."""
    identity = (log.eval.metadata or {}).get("omniaudit")
    if not isinstance(identity, dict) or not identity.get("config"):
        raise InputError(f"this Inspect log (task '{log.eval.task}') is not of a task written by `omniaudit export "
                         "inspect`: its metadata does not name the dataset build. Export the dataset config as an "
                         "Inspect task and run that", file=path)
    if not log.samples:
        raise InputError(f"the log holds no samples (status {log.status}): run the task with its samples logged",
                         file=path)
    return identity


def log_rows(path: str | Path) -> tuple[list[dict], ImportedLog]:
    """The predictions rows of one Inspect eval log (see the module docstring) and what was imported."""
    from inspect_ai.log import read_eval_log

    from omniaudit.runners.items import JudgeItem, Sampling
    from omniaudit.runners.rows import prediction_row, served_fields

    path = Path(path)
    if not path.is_file():
        raise InputError("not found (expected an Inspect eval log, .eval or .json)", file=path)
    try:
        log = read_eval_log(str(path))
    except (ValueError, OSError, KeyError, zipfile.BadZipFile) as exc:
        raise InputError(f"not an Inspect eval log: {type(exc).__name__}: {exc}", file=path) from exc
    identity = _identity(log, path)
    samples = list(log.samples or ())
    done = [s for s in samples if s.error is None]
    runs = max([log.eval.config.epochs or 1, *(s.epoch for s in samples)])
    provenance = log_provenance(log, path, identity, runs)
    temperature = provenance["sampling"]["temperature"] or 0.0
    order = {str(i): n for n, i in enumerate(log.eval.dataset.sample_ids or ())}  # the task's item order
    rows = []
    for sample in sorted(done, key=lambda s: (s.epoch, order.get(str(s.id), len(order)))):
        meta = sample.metadata or {}
        if (meta.get("omniaudit") or {}).get("task") not in (None, identity.get("task")):
            raise InputError(f"sample '{sample.id}' answers task {meta['omniaudit'].get('task')!r}, not "
                             f"{identity.get('task')!r}: one log holds one task", file=path)
        item = JudgeItem(id=str(sample.id), prompt=str(meta.get("prompt") or ""), order=meta.get("order"),
                         options=[str(o) for o in meta.get("options") or []])
        record = _omniaudit_record(sample)
        finish = record["finish_reason"] if "finish_reason" in record else _finish_reason(sample)
        row = prediction_row(item, sample.output.completion, Sampling(temperature=temperature, run=sample.epoch - 1),
                             record.get("option_probs"), provenance, finish, served_fields(_Served(record)),
                             record.get("answer_path"))
        row.update(temperature=provenance["sampling"]["temperature"], top_p=provenance["sampling"]["top_p"],
                   seed=None)  # one seed for every epoch: the run's seed is in the provenance
        rows.append(row)
    return rows, ImportedLog(len(rows), len(samples) - len(done), log.eval.task, identity["config"],
                             log.eval.model, runs)


class _Served:
    """The served model an omniaudit provider's answer named (as a runner's Answer carries it)."""

    def __init__(self, record: dict) -> None:
        self.served_model = record.get("served_model")
        self.system_fingerprint = record.get("system_fingerprint")


def _finish_reason(sample: Any) -> str | None:
    """The stop reason of a sample's output, as a chat completion's finish reason (``max_tokens``: ``length``)."""
    choices = getattr(sample.output, "choices", None) or []
    reason = choices[0].stop_reason if choices else None
    return {"max_tokens": "length", "model_length": "length"}.get(reason or "", reason)


def import_inspect(log: str | Path, out: str | Path, overwrite: bool | None = None) -> ImportedLog:
    """Write the predictions file ``out`` (JSON lines, atomically) of the Inspect eval log ``log``; an existing
    ``out`` is replaced only when it is an earlier predictions file (or ``overwrite``)."""
    from omniaudit.io import check_out_file
    from omniaudit.runners.rows import is_predictions_file, write_jsonl

    out = check_out_file(out, is_predictions_file, overwrite)
    rows, imported = log_rows(log)
    if not rows:
        raise InputError("no sample of the log was answered without an error: nothing to write", file=log)
    write_jsonl(out, rows)
    return imported
