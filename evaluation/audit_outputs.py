"""What a finished audit folder holds, read generically: its headline metrics and tables (from ``audit.json`` and
the CSV files the audit wrote, never from the Markdown report), its figures, and a predictions file's summary.

The experiment tracker (:mod:`omniaudit.evaluation.tracking`) logs these; anything else that reads finished audits
(a scorecard, a leaderboard) reads them here too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from omniaudit.errors import InputError

# re-exported: the audits' helpers and the audit.json reader
from omniaudit.results import SCHEMA_VERSION, ci_fields, estimate_row, estimates, put, read_audit  # noqa: F401

ROW_TABLES = frozenset({"predictions", "graded"})  # one row per item: may be long


def audit_metrics(kind: str, audit: dict) -> dict[str, float]:
    """The headline numbers of one audit's ``audit.json``, flattened to ``a/b/c`` keys (point estimates; the CIs are
    in the tables): the registered audit ``kind``'s :meth:`~omniaudit.audits.Audit.metrics`."""
    from omniaudit.audits import get

    return get(kind).metrics(audit)


def read_csv(folder: Path, name: str) -> pd.DataFrame | None:
    """A CSV table an audit wrote beside its ``audit.json`` (None when absent), empty cells as missing."""
    path = folder / name
    return pd.read_csv(path, keep_default_na=False, na_values=[""]) if path.is_file() else None


def audit_tables(kind: str, folder: str | Path, audit: dict | None = None) -> dict[str, pd.DataFrame]:
    """The audit's tables as DataFrames (the registered audit ``kind``'s :meth:`~omniaudit.audits.Audit.tables`:
    from ``audit.json`` and the per-row CSV files the audit wrote), empty ones left out."""
    from omniaudit.audits import get

    entry = get(kind)
    folder = Path(folder)
    audit = read_audit(folder) if audit is None else audit
    return {name: frame for name, frame in entry.tables(audit, folder).items() if len(frame.columns)}


def schema_path() -> Path:
    """The JSON Schema every ``audit.json`` validates against (shipped with the package)."""
    return Path(__file__).with_name("audit.schema.json")


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


def scorecard_verdicts(card: dict) -> tuple[dict[str, float], pd.DataFrame]:
    """The card's verdicts as summary metrics (``scorecard/<model>/<shortcut>`` its value, ``.../flagged`` 0 / 1)
    and as one table row per model and shortcut."""
    metrics: dict[str, float] = {}
    rows = []
    for model, entry in card["models"].items():
        for shortcut, v in entry["shortcuts"].items():
            if v["status"] in ("flagged", "clear"):
                put(metrics, f"scorecard/{model}/{shortcut}", v["value"])
                metrics[f"scorecard/{model}/{shortcut}/flagged"] = float(v["flagged"])
            lo, hi = v["ci"]
            rows.append({"model": model, "reference": entry["reference"], "shortcut": shortcut,
                         "status": v["status"], "value": v["value"], "ci_low": lo, "ci_high": hi,
                         "threshold": v["threshold"], "measure": v["measure"], "audit": v["audit"]})
    return metrics, pd.DataFrame(rows)


def shown_input(value: object, base: str | Path | None = None) -> str | None:
    """An input as ``audit.json`` names it, never where it lives on this machine: a local file or folder relative to
    the output folder ``base`` when inside it, else by its name (:func:`~omniaudit.evaluation.report.shown_path`);
    ``NAME=FILE`` with its FILE so; anything else (a Hub repo id, a model spec) as given, any absolute path inside it
    shown so too (``hf:/home/me/model`` -> ``hf:model``). None stays None."""
    from omniaudit.evaluation.report import shown_path, shown_paths_in

    def local(text: str) -> bool:
        try:
            return bool(text) and (Path(text).expanduser().is_absolute() or Path(text).expanduser().exists())
        except (OSError, ValueError):  # not a path this machine can hold (a name too long, a NUL)
            return False

    if value is None:
        return None
    text = str(value)
    if local(text):
        return shown_path(text, base)
    name, sep, path = text.partition("=")
    if sep and name and local(path):
        return f"{name}={shown_path(path, base)}"
    return shown_paths_in(text, base)


def schema(audit: str, dataset: object = None, predictions: object = None, base: str | Path | None = None) -> dict:
    """The record that opens every ``audit.json``: which audit wrote it, with which omniaudit and command, on which
    inputs (their provenance is in the file's ``provenance``). Readers check ``version`` before reading on.

    Inputs and arguments name local files as :func:`shown_input` does (relative to the output folder ``base``, else
    by name), never by where they live on this machine; they are a record of the run, not paths to open again."""
    import sys

    from omniaudit import __version__
    from omniaudit.evaluation.report import shown_paths_in
    from omniaudit.io import current_policy
    from omniaudit.runners.transport import redact

    command = current_policy().command
    return {"version": SCHEMA_VERSION, "audit": audit, "omniaudit": __version__, "command": command or "python API",
            "arguments": [shown_paths_in(redact(a), base) for a in sys.argv[1:]] if command else None,
            "inputs": {"dataset": shown_input(dataset, base),
                       "predictions": [shown_input(p, base) for p in predictions]
                       if isinstance(predictions, list | tuple) else shown_input(predictions, base)}}
