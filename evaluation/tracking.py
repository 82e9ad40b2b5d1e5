"""Experiment tracking for ``omniaudit judge`` and ``omniaudit audit ...`` (``--report-to wandb``).

The audits never import a tracker (metrics never import trackers; the data flow stays one-way): the CLI opens a run
before the command starts (so a missing login fails before a long judge run, not after it), the command writes its
output as it always does, and :class:`TrackingRun` then reads what was written and logs it:

- headline metrics, flattened from ``audit.json`` (``waf/<predictor>/<slice>``, ``dimensions/sync/gap``,
  ``failure_modes/<mode>``, ``rf/<judge>/<attribute>/<placement>``, ``accuracy/overall``; see
  :func:`audit_metrics`), as the run's summary (one evaluation, not a training curve: compare runs in the runs
  table);
- the audit's tables as ``wandb.Table`` under ``tables/<name>``, built from ``audit.json`` and the CSV files the
  audit wrote (never parsed from the Markdown report; see :func:`audit_tables`);
- every PNG figure of the output folder as a ``wandb.Image`` under ``figures/<stem>``;
- artifacts: the audit folder's files (type ``audit``), the predictions file of ``judge --out`` and the prediction
  files an audit read (type ``predictions``, named ``predictions-<file stem>``: the same name and content is the same
  artifact version, so a judge run and the audit of its file share one);
- in the run's config, beside the command line, what the predictions' provenance records of where the answers came
  from (:func:`provenance_config`): ``dataset_fingerprints`` and ``model_identities`` (each distinct one once, for
  filtering and grouping runs) and ``provenance``, per predictions file, its dataset builds (name, config,
  fingerprint), judge spec and model identity. Files without a provenance (other harnesses) add nothing.

A per-row table longer than ``wandb.Table.MAX_ROWS`` (10,000 rows) goes into an artifact of type ``tables`` instead
of the run's media (artifact tables hold up to 200,000 rows). wandb's own environment applies, as for the trainers:
``WANDB_MODE=offline`` logs with no network (``wandb sync DIR`` uploads later), ``WANDB_DIR`` says where runs are
written, ``WANDB_PROJECT`` (default ``omniaudit``), ``WANDB_ENTITY`` and ``WANDB_RUN_GROUP`` name the project, team
and group.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from omniaudit.errors import InputError, ServiceError
from omniaudit.evaluation.audit_outputs import (  # noqa: F401 - re-exported: the tracker's view of an audit
    ROW_TABLES,
    audit_metrics,
    audit_tables,
    estimates,
    figures,
    predictions_metrics,
    read_audit,
    read_predictions,
    scorecard_verdicts,
)

REPORT_TO = ("none", "wandb")
INSTALL_HINT = "pip install 'omniaudit[track]' -c requirements/constraints.txt (the [train] extra includes it too)"
@dataclass(frozen=True)
class TrackingOptions:
    """Where a command's results are reported: ``report_to`` is ``none`` or ``wandb``; ``project`` defaults to
    ``$WANDB_PROJECT`` or ``omniaudit``; ``run_name`` defaults to ``<audit or judge>-<output name>``."""

    report_to: str = "none"
    project: str | None = None
    run_name: str | None = None


def require_tracker(report_to: str) -> None:
    """Fail before any work when the tracker is unknown or its package is not installed."""
    if report_to not in REPORT_TO:
        raise InputError(f"unknown tracker; expected one of {', '.join(REPORT_TO)}", column="report_to",
                         value=report_to)
    if report_to == "wandb":
        try:
            import wandb  # noqa: F401
        except ImportError as exc:
            raise InputError(f"--report-to wandb needs the wandb package, which is not installed: {INSTALL_HINT}"
                             ) from exc


# --- what an audit wrote, as numbers and tables (pure: no tracker needed) --------------------------------------------

def named_files(specs: str | Sequence[str] | None) -> list[Path]:
    """The files of ``FILE`` / ``NAME=FILE`` arguments, read by :func:`omniaudit.specs.parse_named_files` (the rule
    every audit uses: an existing path is always a file, ``=`` and all)."""
    from omniaudit.specs import parse_named_files

    return [named.path for named in parse_named_files(specs)]


def artifact_name(prefix: str, path: str | Path) -> str:
    """A valid artifact name (letters, digits, ``-``, ``_``, ``.``) from a prefix and a file or folder name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"{prefix}-{Path(path).stem or 'out'}").strip("-.")[:128]


def _loggable(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells wandb's typed tables accept (one type per column): missing values as None, dicts and lists as JSON
    text, a column mixing types (text and numbers) as text."""
    out = pd.DataFrame(index=frame.index)
    for i, column in enumerate(frame.columns):
        values = frame.iloc[:, i]
        if not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)):  # text, objects
            cells = [None if _missing(v) else json.dumps(v) if isinstance(v, dict | list) else v for v in values]
            if len({type(v) for v in cells if v is not None}) > 1:
                cells = [None if v is None else str(v) for v in cells]
            values = pd.Series(cells, index=frame.index, dtype=object)
        out[str(column)] = values
    return out


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def file_provenance(path: str | Path) -> dict | None:
    """What a predictions file's provenance records of its answers' origin: ``judge``, ``model`` (the identity) and
    ``datasets``, each build it answered once (``name``, ``config``, ``fingerprint``); None for a file that is not
    JSON lines with a provenance (a CSV, another harness's answers, a file that cannot be read)."""
    path = Path(path)
    if not path.is_file() or path.suffix.lower() not in (".jsonl", ".json"):
        return None
    found: dict | None = None
    datasets: dict[str, dict] = {}
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                record = json.loads(line).get("provenance")
                if not isinstance(record, dict):
                    return None
                found = found or {"judge": record.get("judge"), "model": record.get("model")}
                data = record.get("dataset") if isinstance(record.get("dataset"), dict) else {}
                entry = {k: data.get(k) for k in ("name", "config", "fingerprint")}
                datasets.setdefault(json.dumps(entry, sort_keys=True), entry)
    except (OSError, ValueError, AttributeError):
        return None
    return None if found is None else {**found, "datasets": list(datasets.values())}


def provenance_config(files: Sequence[str | Path], root: str | Path | None = None) -> dict:
    """The run-config entries for the predictions ``files`` (see the module docstring): ``provenance`` by file
    (its path relative to ``root`` without the suffix, e.g. ``pos/blueprint`` under a scorecard's ``models/``; else
    its stem, ``FOLDER/STEM`` where two files share a stem), ``dataset_fingerprints`` and ``model_identities``; empty
    when no file has a provenance."""
    records = {Path(f): r for f in dict.fromkeys(files) if (r := file_provenance(f)) is not None}
    if not records:
        return {}
    root = Path(root) if root is not None else None

    def key(path: Path) -> str:
        if root is not None and path.is_relative_to(root):
            return path.relative_to(root).with_suffix("").as_posix()
        stems = [p.stem for p in records]  # never an absolute local path: the folder's name where stems repeat
        return path.stem if stems.count(path.stem) == 1 else f"{path.parent.name}/{path.stem}"

    fingerprints = sorted({d["fingerprint"] for r in records.values() for d in r["datasets"] if d["fingerprint"]})
    models = {json.dumps(r["model"], sort_keys=True): r["model"] for r in records.values() if r["model"]}
    return {"provenance": {key(p): r for p, r in records.items()}, "dataset_fingerprints": fingerprints,
            "model_identities": list(models.values())}


# --- the wandb run ---------------------------------------------------------------------------------------------------

class TrackingRun:
    """One tracking run around one command: :func:`tracking_run` opens it; ``log_audit`` / ``log_predictions`` log
    what the command wrote."""

    def __init__(self, run) -> None:
        self.run = run

    def _log(self, metrics: dict[str, float], tables: dict[str, pd.DataFrame], images: list[Path]) -> None:
        import wandb

        self.run.summary.update(metrics)  # one evaluation: the run's summary (runs table, bar charts), not a history
        payload: dict[str, object] = {}
        overflow = None  # per-row tables past Table.MAX_ROWS: an artifact of their own (up to MAX_ARTIFACT_ROWS)
        for name, frame in tables.items():
            table = wandb.Table(dataframe=_loggable(frame))
            if len(frame) > wandb.Table.MAX_ROWS and name in ROW_TABLES:
                overflow = overflow or wandb.Artifact(artifact_name("tables", self.run.name or self.run.id),
                                                      type="tables", description="per-row tables of an omniaudit run")
                overflow.add(table, f"tables/{name}")
            else:
                payload[f"tables/{name}"] = table
        for path in images:
            payload[f"figures/{path.stem}"] = wandb.Image(str(path))
        if payload:
            self.run.log(payload)
        if overflow is not None:
            self.run.log_artifact(overflow)

    def log_provenance(self, files: Sequence[str | Path], root: str | Path | None = None) -> None:
        """Add the predictions ``files``' provenance to the run's config (:func:`provenance_config`)."""
        config = provenance_config(files, root)
        if config:
            self.run.config.update(config, allow_val_change=True)

    def log_audit(self, kind: str, folder: str | Path, inputs: Sequence[str | Path] = ()) -> None:
        """Log an audit's output folder: headline metrics, tables, figures, and the folder (plus the prediction files
        it read) as artifacts; the files' provenance goes into the run's config."""
        import wandb

        folder = Path(folder)
        audit = read_audit(folder)
        metrics = audit_metrics(kind, audit)
        artifact = wandb.Artifact(artifact_name(f"audit-{kind}", folder), type="audit",
                                  description=f"omniaudit audit {kind}: audit.json, report.md, figures and tables",
                                  metadata={"audit": kind, "folder": str(folder), "metrics": metrics})
        for path in sorted(folder.iterdir()):
            if path.is_file() and not path.name.startswith("."):
                artifact.add_file(str(path), name=path.name)
        self._log(metrics, audit_tables(kind, folder, audit), figures(folder))
        self.run.log_artifact(artifact)
        for path in dict.fromkeys(Path(p) for p in inputs):
            self._log_predictions_artifact(path)
        self.log_provenance(inputs)

    def log_predictions(self, path: str | Path, metadata: dict | None = None) -> None:
        """Log a judge's predictions file: counts, the rows as a table, the file as an artifact, its provenance in the
        run's config."""
        path = Path(path)
        frame = read_predictions(path)
        metrics = predictions_metrics(frame)
        self._log(metrics, {"predictions": frame}, [])
        self.run.log_artifact(self._predictions_artifact(path, {**(metadata or {}), **metrics}))
        self.log_provenance([path])

    def _predictions_artifact(self, path: Path, metadata: dict | None = None):
        import wandb

        artifact = wandb.Artifact(artifact_name("predictions", path), type="predictions",
                                  description="omniaudit predictions (one row per item, order and run)",
                                  metadata={"file": str(path), **(metadata or {})})
        artifact.add_file(str(path), name=path.name)
        return artifact

    def _log_predictions_artifact(self, path: Path) -> None:
        if path.is_file():
            self.run.log_artifact(self._predictions_artifact(path))

    def log_scorecard(self, folder: str | Path) -> None:
        """Log a scorecard folder: per model and shortcut the verdict's value and flag (summary), the verdict table,
        the card's figures, the card (``scorecard.json`` / ``.md`` / ``.html``) as an artifact of type ``scorecard``
        and every model's predictions as ``predictions`` artifacts, their provenance in the run's config (by
        ``MODEL/CONFIG``). A shard run (no card yet) logs its predictions."""
        import wandb

        folder = Path(folder)
        answers = scorecard_predictions(folder)
        if (folder / "scorecard.json").is_file():
            card = json.loads((folder / "scorecard.json").read_text(encoding="utf-8"))
            metrics, rows = scorecard_verdicts(card)
            artifact = wandb.Artifact(artifact_name("scorecard", folder), type="scorecard",
                                      description="omniaudit scorecard: one verdict per model and shortcut",
                                      metadata={"flagged": card["flagged"], "references": card["references"]})
            for name in ("scorecard.json", "scorecard.md", "scorecard.html"):
                artifact.add_file(str(folder / name), name=name)
            self._log(metrics, {"verdicts": rows}, sorted((folder / "figures").glob("*.png")))
            self.run.log_artifact(artifact)
        for path in answers:
            self._log_predictions_artifact(path)
        self.log_provenance(answers, folder / "models")

    def finish(self, exit_code: int = 0) -> None:
        self.run.finish(exit_code=exit_code)


def scorecard_predictions(folder: Path) -> list[Path]:
    """The predictions files this card (or shard run) read: each of its models' ``status.json`` entries, never a
    journal, a file of a model no longer on the card or of an audit now not answering."""
    listing = folder / ("scorecard.json" if (folder / "scorecard.json").is_file() else "shard.json")
    models = json.loads(listing.read_text(encoding="utf-8")).get("models", {})
    files = []
    for model in models:
        try:
            status = json.loads((folder / "models" / model / "status.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for entry in status.values():
            files += [folder / "models" / model / f"{config}.jsonl" for config in entry.get("predictions") or {}]
    return sorted(f for f in dict.fromkeys(files) if f.is_file())


@contextmanager
def tracking_run(options: TrackingOptions, *, job: str, kind: str | None = None, out: str | Path | None = None,
                 config: dict | None = None) -> Iterator[TrackingRun | None]:
    """A tracking run around one command (None with ``report_to='none'``): opened on entry, before any work, and
    finished on exit, marked failed (exit code 1) when the command raised."""
    require_tracker(options.report_to)
    if options.report_to == "none":
        yield None
        return
    import os

    import wandb

    name = options.run_name or artifact_name(kind or job, out or job)
    outer = wandb.run  # a run the caller holds open (e.g. in a notebook) keeps its wandb service
    try:
        try:
            run = wandb.init(project=options.project or os.environ.get("WANDB_PROJECT") or "omniaudit", name=name,
                             job_type=job, tags=[t for t in (job, kind) if t], config=config or {},
                             reinit="create_new")
        except wandb.errors.Error as exc:
            raise ServiceError(f"wandb could not start a run: {str(exc).rstrip('.')}. Log in with `wandb login` "
                               f"(or set WANDB_API_KEY), or set WANDB_MODE=offline to log locally and `wandb sync` "
                               f"later") from exc
        tracker = TrackingRun(run)
        try:
            yield tracker
        except BaseException:
            tracker.finish(exit_code=1)
            raise
        tracker.finish()
    finally:
        if outer is None:  # wandb keeps its settings in a process-wide singleton: the next command in this process
            wandb.teardown()  # (tests, notebooks) reads WANDB_DIR, WANDB_MODE, ... afresh
