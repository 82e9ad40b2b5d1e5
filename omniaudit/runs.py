"""A predictions file's sampled runs (``run``: :func:`run_labels`, :func:`run_order`) and the sampling settings it
records (:func:`sampling_settings`, one value or the distinct values per setting), as every audit reports them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from omniaudit.errors import InputError

SAMPLING = ("temperature", "top_p", "top_k", "seed", "max_tokens", "max_new_tokens")  # recorded when a file has them
INTEGER_SETTINGS = ("top_k", "seed", "max_tokens", "max_new_tokens")


def is_blank(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value) or (isinstance(value, str)
                                                                                 and not value.strip())


def run_labels(raw: pd.DataFrame, path: str | Path, rows: list[int]) -> list[str] | None:
    """Each row's ``run`` as text (``omniaudit judge --runs N`` writes it), or None when the file has no ``run``
    column; a row without one is an error naming it."""
    if "run" not in raw.columns:
        return None
    out = []
    for row, value in zip(rows, raw["run"].tolist(), strict=True):
        if is_blank(value):
            raise InputError("expected a run (the file has a 'run' column, so every row needs one)", file=path,
                             row=row, column="run", value=value)
        out.append(str(int(value)) if isinstance(value, float) and value.is_integer() else str(value).strip())
    return out


def run_order(labels) -> list[str]:
    """Run labels in order: numerically when they are all integers (2 before 10), else as text."""
    unique = list(dict.fromkeys(labels))
    return sorted(unique, key=int) if all(u.lstrip("-").isdigit() for u in unique) else sorted(unique)


def sampling_settings(frame: pd.DataFrame) -> dict:
    """The sampling settings a predictions file records: per setting one value, or the sorted distinct values
    (numbers in numeric order: seed 2 before 10; integer settings read back as floats by JSONL gaps are ints)."""
    import numpy as np

    out = {}
    for column in SAMPLING:
        if column not in frame.columns:
            continue
        values = [v.item() if isinstance(v, np.generic) else v for v in frame[column].tolist() if not is_blank(v)]
        if column in INTEGER_SETTINGS:
            values = [int(v) if isinstance(v, float) and v.is_integer() else v for v in values]
        numeric = lambda v: isinstance(v, int | float) and not isinstance(v, bool)  # noqa: E731
        distinct = sorted(set(values), key=lambda v: (0, v, "") if numeric(v) else (1, 0, str(v)))
        if distinct:
            out[column] = distinct[0] if len(distinct) == 1 else distinct
    return out


def merge_sampling(settings: list[dict]) -> dict:
    """The :func:`sampling_settings` of several files of one run as one: per setting one value, or the distinct
    values in the same order."""
    frame = pd.DataFrame([{k: v} for one in settings for k, values in one.items()
                          for v in (values if isinstance(values, list) else [values])])
    return sampling_settings(frame) if not frame.empty else {}


def sampling_sentence(settings: dict) -> str:
    """:func:`sampling_settings` for a report: ``temperature 0.7, seed 0/1/2`` (several values joined by /)."""
    return ", ".join(f"{k} {'/'.join(str(x) for x in v) if isinstance(v, list) else v}" for k, v in settings.items())
