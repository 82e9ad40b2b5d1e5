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
  artifact version, so a judge run and the audit of its file share one).

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

REPORT_TO = ("none", "wandb")
AUDITS = ("preference", "interventions", "protocols", "composition")
INSTALL_HINT = "pip install 'omniaudit[track]' -c requirements/constraints.txt (the [train] extra includes it too)"
PROTOCOL_METRICS = ("accuracy", "parse_rate", "rf", "rf_normalized", "lock", "gold_aligned", "p_a", "follow_cue")
TEMPORAL = ("offset_mae", "direction_accuracy", "shift_yes_no", "sync_binary_accuracy", "sync_three_way_accuracy",
            "offset_within_tolerance")


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

def _number(value: object) -> float | None:
    """A loggable scalar: bools and ints as floats, None and non-numbers as None (NaN stays NaN)."""
    if isinstance(value, bool | int | float):
        return float(value)
    return None


def _put(out: dict[str, float], key: str, value: object) -> None:
    number = _number(value)
    if number is not None:
        out[key] = number


def estimates(tree: object, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict]]:
    """Every estimate in a nested audit.json section: a dict with a scalar ``value`` (plus ``ci``, ``n``, ...),
    with the keys that lead to it."""
    if isinstance(tree, dict):
        if "value" in tree and not isinstance(tree["value"], dict | list):
            yield path, tree
            return
        for key, sub in tree.items():
            yield from estimates(sub, (*path, str(key)))


def _ci(entry: dict, key: str = "ci") -> dict[str, float | None]:
    ci = entry.get(key)
    lo, hi = (ci if isinstance(ci, list | tuple) and len(ci) == 2 else (None, None))
    return {"ci_low": _number(lo), "ci_high": _number(hi)}


def _estimate_row(entry: dict) -> dict:
    """value, ci_low, ci_high and the estimate's other scalar fields (n, k, n_correct, ...)."""
    row = {"value": _number(entry.get("value")), **_ci(entry)}
    row.update({k: v for k, v in entry.items() if k not in ("value", "ci") and not isinstance(v, dict | list)})
    return row


def _preference_metrics(audit: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, slices in audit.get("predictors", {}).items():
        for slice_name, entry in slices.items():
            for field in ("waf", "accuracy", "prior_following"):
                _put(out, f"{field}/{name}/{slice_name}", entry.get(field))
            if "mcnemar" in entry:
                _put(out, f"mcnemar_p/{name}/{slice_name}", entry["mcnemar"].get("p"))
    for name, meta in audit.get("judges", {}).items():
        _put(out, f"judges/{name}/order_agreement", meta.get("order_agreement"))
        _put(out, f"judges/{name}/n_ties", meta.get("n_ties"))
    dataset = audit.get("dataset", {})
    for field in ("n_pairs", "n_binary", "n_same", "prior_agreement"):
        _put(out, f"dataset/{field}", dataset.get(field))
    for slice_name, n in dataset.get("slices", {}).items():
        _put(out, f"dataset/slices/{slice_name}", n)
    classifier = audit.get("source_classifier") or {}
    for field in ("accuracy_mean", "accuracy_sd", "chance", "majority"):
        _put(out, f"source_classifier/{field}", classifier.get(field))
    controls = audit.get("controls") or {}
    permutation, swap = controls.get("identity_permutation") or {}, controls.get("counterfactual_swap") or {}
    _put(out, "controls/identity_permutation/waf_mean", permutation.get("mean"))
    _put(out, "controls/identity_permutation/waf_sd", permutation.get("sd"))
    for field in ("identity_flip_rate", "length_flip_rate"):
        _put(out, f"controls/counterfactual_swap/{field}", swap.get(field))
    return out


def _interventions_metrics(audit: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for dimension, entry in audit.get("dimensions", {}).items():
        for field in ("orig", "interv", "gap"):
            _put(out, f"dimensions/{dimension}/{field}", entry.get(field))
    _put(out, "avg_gap", audit.get("avg_gap"))
    for mode, rate in audit.get("failure_modes", {}).items():
        _put(out, f"failure_modes/{mode}", rate)
    for name in TEMPORAL:
        _put(out, name, (audit.get(name) or {}).get("value"))
    for band, entry in audit.get("sync_by_offset", {}).items():
        _put(out, f"sync_by_offset/{band}", entry.get("value"))
    for path, entry in estimates(audit.get("coverage", {}), ("coverage",)):
        _put(out, "/".join(path), entry["value"])
    _put(out, "n_rows", audit.get("n_rows"))
    _put(out, "n_source_clips", audit.get("n_source_clips"))
    return out


def _protocols_metrics(audit: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for metric in PROTOCOL_METRICS:
        for path, entry in estimates(audit.get(metric, {}), (metric,)):
            _put(out, "/".join(path), entry["value"])
    for judge, n in audit.get("n_answered", {}).items():
        _put(out, f"n_answered/{judge}", n)
    return out


def _composition_metrics(audit: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    accuracy = audit.get("accuracy", {})
    overall = accuracy.get("overall", {})
    _put(out, "accuracy/overall", overall.get("mean"))
    _put(out, "accuracy/overall_sd", overall.get("sd"))
    for scope in ("by_category", "by_tier", "by_template"):
        for name, entry in accuracy.get(scope, {}).items():
            _put(out, f"accuracy/{scope}/{name}", entry.get("mean"))
    failures = audit.get("failure_modes", {}).get("overall", {})
    _put(out, "failure_modes/n_failures", failures.get("n_failures"))
    for mode, rate in failures.get("rates", {}).items():
        _put(out, f"failure_modes/{mode}", rate)
    for field in ("n_samples", "exact_match_rate", "judge_yes_rate", "n_judged", "n_unparsed_verdicts"):
        _put(out, field, audit.get(field))
    _put(out, "n_runs", len(audit.get("runs", [])))
    entropy = audit.get("entropy_gap") or {}
    for model, res in entropy.get("models", {}).items():
        _put(out, f"entropy_gap/{model}/overall", (res.get("overall") or {}).get("value"))
        for category, gap in (res.get("by_category") or {}).items():
            _put(out, f"entropy_gap/{model}/{category}", gap.get("value"))
    _put(out, "entropy_gap/pooled_z", (entropy.get("pooled_z") or {}).get("value"))
    return out


METRICS = {"preference": _preference_metrics, "interventions": _interventions_metrics,
           "protocols": _protocols_metrics, "composition": _composition_metrics}


def audit_metrics(kind: str, audit: dict) -> dict[str, float]:
    """The headline numbers of one audit's ``audit.json``, flattened to ``a/b/c`` keys (point estimates; the CIs are
    in the tables). ``kind`` is the audit: preference, interventions, protocols or composition."""
    if kind not in METRICS:
        raise InputError(f"no tracked metrics for this audit; expected one of {', '.join(AUDITS)}", value=kind)
    return METRICS[kind](audit)


def _read_csv(folder: Path, name: str) -> pd.DataFrame | None:
    path = folder / name
    return pd.read_csv(path, keep_default_na=False, na_values=[""]) if path.is_file() else None


def _preference_tables(audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
    judges = set(audit.get("judges", {}))
    rows = []
    for name, slices in audit.get("predictors", {}).items():
        for slice_name, entry in slices.items():
            test = entry.get("mcnemar") or {}
            rows.append({"predictor": name, "kind": "judge" if name in judges else "probe", "slice": slice_name,
                         "waf": entry.get("waf"), **_ci(entry), "n": entry.get("n"),
                         "accuracy": entry.get("accuracy"), "prior_following": entry.get("prior_following"),
                         "ties": entry.get("ties"), "mcnemar_reference": test.get("reference"),
                         "mcnemar_b": test.get("b"), "mcnemar_c": test.get("c"), "mcnemar_p": test.get("p")})
    tables = {"waf": pd.DataFrame(rows)}
    win_rates = audit.get("dataset", {}).get("win_rates", {})
    tables["win_rates"] = pd.DataFrame({"generator": list(win_rates), "win_rate": list(win_rates.values())})
    pairs = [{"pairing": pairing, "n": e.get("n"), "first": e.get("first"), "first_win_rate": e.get("first_win_rate"),
              **{f"accuracy/{k}": v for k, v in (e.get("accuracy") or {}).items()}}
             for pairing, e in audit.get("source_pairs", {}).items()]
    tables["source_pairs"] = pd.DataFrame(pairs)
    if (predictions := _read_csv(folder, "predictions.csv")) is not None:
        tables["predictions"] = predictions
    return tables


def _interventions_tables(audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
    from omniaudit.evaluation.interventions.audit import FAILURE_MODES

    rows = []
    for dimension, entry in audit.get("dimensions", {}).items():
        row = {"dimension": dimension, "intervention": entry.get("intervention")}
        for field in ("orig", "interv", "gap"):
            row[field] = entry.get(field)
            ci = (entry.get("ci") or {}).get(field) or [None, None]
            row[f"{field}_ci_low"], row[f"{field}_ci_high"] = ci
        row.update({f"n_{k}": v for k, v in (entry.get("n") or {}).items()}, n_clips=entry.get("n_clips"))
        rows.append(row)
    tables = {"dimensions": pd.DataFrame(rows)}
    modes = audit.get("failure_modes", {})
    ci, n = audit.get("failure_modes_ci", {}), audit.get("failure_modes_n", {})
    tables["failure_modes"] = pd.DataFrame([
        {"mode": m, "group": FAILURE_MODES.get(m, ("", ""))[0], "description": FAILURE_MODES.get(m, ("", ""))[1],
         "rate": rate, "ci_low": (ci.get(m) or [None, None])[0], "ci_high": (ci.get(m) or [None, None])[1],
         "n": n.get(m)} for m, rate in modes.items()])
    tables["sync_by_offset"] = pd.DataFrame([{"band_s": band, **_estimate_row(e)}
                                             for band, e in audit.get("sync_by_offset", {}).items()])
    tables["temporal"] = pd.DataFrame([{"metric": name, **_estimate_row(audit[name])}
                                       for name in TEMPORAL if isinstance(audit.get(name), dict)])
    tables["coverage"] = pd.DataFrame([{"dimension": path[0], "measure": path[1], **_estimate_row(e)}
                                       for path, e in estimates(audit.get("coverage", {}))])
    return tables


def _protocols_tables(audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
    rows = [{"metric": metric, "judge": path[0], "cell": "/".join(path[1:]), **_estimate_row(entry)}
            for metric in PROTOCOL_METRICS for path, entry in estimates(audit.get(metric, {}))]
    columns = ["metric", "judge", "cell", "value", "ci_low", "ci_high", "n", "k"]
    frame = pd.DataFrame(rows)
    return {"estimates": frame.reindex(columns=[c for c in columns if c in frame] +
                                       [c for c in frame if c not in columns])}


def _composition_tables(audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
    accuracy = audit.get("accuracy", {})
    rows = [{"scope": "overall", "name": "all", **accuracy.get("overall", {})}]
    rows += [{"scope": scope.removeprefix("by_"), "name": str(name), **entry}
             for scope in ("by_category", "by_tier", "by_template") for name, entry in accuracy.get(scope, {}).items()]
    tables = {"accuracy": pd.DataFrame(rows)}
    failures = audit.get("failure_modes", {})
    groups = [("all templates", failures.get("overall", {})), *failures.get("by_template", {}).items()]
    tables["failure_modes"] = pd.DataFrame(
        [{"template": name, "n_failures": g.get("n_failures"), "mode": mode, "count": count,
          "rate": (g.get("rates") or {}).get(mode)}
         for name, g in groups for mode, count in g.get("counts", {}).items()],
        columns=["template", "n_failures", "mode", "count", "rate"])
    entropy = audit.get("entropy_gap") or {}
    if entropy.get("models"):
        tables["entropy_gap"] = pd.DataFrame(
            [{"model": model, "slice": "all" if path[0] == "overall" else path[-1], **_estimate_row(e)}
             for model, res in entropy["models"].items()
             for path, e in estimates({k: v for k, v in res.items() if k in ("overall", "by_category")})])
    if (graded := _read_csv(folder, "graded.csv")) is not None:
        tables["graded"] = graded
    return tables


TABLES = {"preference": _preference_tables, "interventions": _interventions_tables,
          "protocols": _protocols_tables, "composition": _composition_tables}
ROW_TABLES = frozenset({"predictions", "graded"})  # one row per item: may be long


def audit_tables(kind: str, folder: str | Path, audit: dict | None = None) -> dict[str, pd.DataFrame]:
    """The audit's tables as DataFrames: from ``audit.json`` (one row per predictor x slice, dimension, failure mode,
    estimate, ...) and the per-row CSV files the audit wrote (``predictions.csv``, ``graded.csv``)."""
    if kind not in TABLES:
        raise InputError(f"no tracked tables for this audit; expected one of {', '.join(AUDITS)}", value=kind)
    folder = Path(folder)
    audit = read_audit(folder) if audit is None else audit
    return {name: frame for name, frame in TABLES[kind](audit, folder).items() if len(frame.columns)}


def read_audit(folder: str | Path) -> dict:
    path = Path(folder) / "audit.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError("no audit.json: not the output folder of an omniaudit audit", file=path) from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", file=path) from exc


def figures(folder: str | Path) -> list[Path]:
    """The PNG figures an audit wrote (top level of its folder), by name."""
    return sorted(p for p in Path(folder).glob("*.png") if p.is_file())


def read_predictions(path: str | Path) -> pd.DataFrame:
    """A predictions file of ``omniaudit judge`` (JSONL, one row per item, order and run), values as written."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise InputError("predictions file not found", file=path) from exc
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InputError(f"not a JSON line: {exc}", file=path, row=number) from exc
    return pd.DataFrame.from_records(rows)


def predictions_metrics(frame: pd.DataFrame) -> dict[str, float]:
    """What ``omniaudit judge`` prints, from its file: rows, items (id x order), runs; closed answers parsed
    (``parsed`` true / false) and with option probabilities; free-form answers (``parsed`` null) non-empty."""
    out = {"predictions/rows": float(len(frame))}
    if "id" in frame:
        keys = frame[["id", "order"]] if "order" in frame else frame[["id"]]
        out["predictions/items"] = float(len(keys.astype(str).drop_duplicates()))
    if "run" in frame:
        out["predictions/runs"] = float(frame["run"].nunique())
    if "parsed" in frame:
        parsed = frame["parsed"]
        closed = parsed.notna().to_numpy()
        n_closed = int(closed.sum())
        out["predictions/closed"] = float(n_closed)
        out["predictions/parsed"] = float(sum(bool(v) for v in parsed[closed]))
        if n_closed:
            out["predictions/parse_rate"] = out["predictions/parsed"] / n_closed
        if "option_probs" in frame:
            out["predictions/with_probs"] = float(frame["option_probs"][closed].notna().sum())
        free = ~closed
        out["predictions/free_form"] = float(free.sum())
        if free.any() and "raw" in frame:
            generated = sum(bool(str(v).strip()) for v in frame["raw"][free] if v is not None)
            out["predictions/generated"] = float(generated)
            out["predictions/generated_rate"] = generated / float(free.sum())
    return out


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

    def log_audit(self, kind: str, folder: str | Path, inputs: Sequence[str | Path] = ()) -> None:
        """Log an audit's output folder: headline metrics, tables, figures, and the folder (plus the prediction files
        it read) as artifacts."""
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

    def log_predictions(self, path: str | Path, metadata: dict | None = None) -> None:
        """Log a judge's predictions file: counts, the rows as a table, the file as an artifact."""
        path = Path(path)
        frame = read_predictions(path)
        metrics = predictions_metrics(frame)
        self._log(metrics, {"predictions": frame}, [])
        self.run.log_artifact(self._predictions_artifact(path, {**(metadata or {}), **metrics}))

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

    def finish(self, exit_code: int = 0) -> None:
        self.run.finish(exit_code=exit_code)


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
