"""Compare JSON-like records (provenance, build info): a canonical text form and the first field that differs."""

from __future__ import annotations

import json


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
