"""JSON-like records omniaudit writes and compares: stable JSON (NaN as null), no local paths in what is published,
a canonical text form and the first field where two records differ."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np


def missing(value: object) -> bool:
    """A value a record does not have: None, or NaN (as a missing cell reads from a table)."""
    return value is None or (isinstance(value, float) and value != value)


def canonical(record: object) -> str:
    """One text per value: sorted keys, no spaces (two records are the same iff their canonical forms are)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), default=str)


def first_difference(a: object, b: object, path: str = "") -> str | None:
    """The dotted path of the first field where two records differ (None when equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            found = first_difference(a.get(key), b.get(key), f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    return None if canonical(a) == canonical(b) else (path or "(record)")


def value_at(record: object, path: str | None) -> str:
    """The value at a dotted path, as text for a message."""
    value = record
    for key in path.split(".") if path else []:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else canonical(value)

# An absolute local path inside a text (URLs' "//", relative paths and a lone " / " are left alone).
ABSOLUTE_PATH = re.compile(r"(?<![\w/.~-])~?/(?!/)(?:[^\s/\"'`()\[\]{},;|*]+/)*([^\s/\"'`()\[\]{},;|*]+)")


def local_name(path: str | Path) -> str:
    """What a card or manifest says about an input: a local file or folder by its name only, never where it lives;
    anything else (a Hub repo id such as ``me/dataset``) as given."""
    local = Path(str(path)).expanduser()
    if not (local.is_absolute() or local.exists()):
        return str(path)
    return local.resolve().name or str(path)


def redact_paths(obj: object) -> object:
    """``obj`` (JSON-like: dicts, lists, strings) with every absolute local path in a string (keys included)
    replaced by its last component, so cards and build manifests never publish where files lived on a machine."""
    if isinstance(obj, str):
        return ABSOLUTE_PATH.sub(lambda m: m.group(1), obj)
    if isinstance(obj, Path):
        return local_name(obj)
    if isinstance(obj, dict):
        return {redact_paths(k): redact_paths(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(redact_paths(v) for v in obj)
    return obj


def _json_default(obj: object) -> object:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return None if not np.isfinite(obj) else float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def to_json(obj: object) -> str:
    """Stable, readable JSON (sorted keys are NOT used: key order follows the report's structure)."""
    return json.dumps(_sanitize(obj), indent=2, default=_json_default, allow_nan=False) + "\n"


def _sanitize(obj: object) -> object:
    # NaN/inf are not JSON; write null so every reader can parse the file.
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _sanitize(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_sanitize(v) for v in obj]
    return obj
