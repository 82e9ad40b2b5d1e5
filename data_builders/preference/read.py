"""Read and validate pairwise preference files: the official EmoPrefer CSV or CSV / JSONL / Parquet with a mapping.

Every row is checked; the first problem raises :class:`~omniaudit.errors.InputError` naming file, row, column and
value. Rows are numbered from 1 in file order: CSV/Parquet count data rows (CSV line = row + 1 for the header),
JSONL counts lines. Generator names that differ only in case are one generator (the most frequent spelling; listed on
the card).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from omniaudit.errors import InputError
from omniaudit.tables import read_records

COLUMNS = ("name", "model1", "a1", "model2", "a2", "preference")
PREFERENCES = ("a1", "a2", "same")


def parse_column_map(items: list[str] | None) -> dict[str, str]:
    """``["model1=gen_a", ...]`` -> ``{"model1": "gen_a"}`` (canonical name -> column in the file)."""
    mapping: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or key.strip() not in COLUMNS or not value.strip():
            raise InputError(f"column mapping must look like CANONICAL=COLUMN with CANONICAL in {COLUMNS}", value=item)
        mapping[key.strip()] = value.strip()
    return mapping


def read_preference_table(path: str | Path, columns: dict[str, str] | None = None) -> pd.DataFrame:
    """Validated pairs with the canonical columns ``name, model1, a1, model2, a2, preference`` in file order."""
    path = Path(path)
    raw, row_numbers = read_records(path)
    mapping = {c: (columns or {}).get(c, c) for c in COLUMNS}
    missing = [f"{canon}" + (f" (mapped to '{src}')" if src != canon else "") for canon, src in mapping.items()
               if src not in raw.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; the file has {list(raw.columns)}", file=path)
    if raw.empty:
        raise InputError("no rows", file=path)
    warn_repeated_rows(raw, row_numbers, path)
    df = pd.DataFrame({canon: raw[src] for canon, src in mapping.items()})
    for row_no, rec in zip(row_numbers, df.itertuples(index=False), strict=True):
        for col in COLUMNS:
            value = getattr(rec, col)
            if not isinstance(value, str) or not value.strip():
                raise InputError("expected a non-empty string", file=path, row=row_no, column=mapping[col],
                                 value=value)
        pref = rec.preference.strip().lower()
        if pref not in PREFERENCES:
            raise InputError(f"expected one of {', '.join(PREFERENCES)}", file=path, row=row_no,
                             column=mapping["preference"], value=rec.preference)
    df["preference"] = df["preference"].str.strip().str.lower()
    for col in ("name", "model1", "model2"):
        df[col] = df[col].str.strip()
    df = df.reset_index(drop=True)
    df.attrs["generator_spellings"] = unify_generator_case(df)
    return df


def warn_repeated_rows(raw: pd.DataFrame, row_numbers: list[int], path: Path, shown: int = 5) -> int:
    """Warn once when rows of the file repeat an earlier row exactly (every column), naming how many and the first
    few with the row they repeat; returns how many. They are kept, not dropped: each is a pair of its own (id
    ``name#k``) that the builder puts in the fold of its first copy and the audit resamples with it as one unit, and
    the card counts them; a copy made by mistake is the user's to remove."""
    keys = [tuple(map(repr, row)) for row in raw.itertuples(index=False, name=None)]  # dict / list cells: by repr
    first: dict[tuple, int] = {}
    repeats = [(row_numbers[i], row_numbers[first[key]]) for i, key in enumerate(keys)
               if first.setdefault(key, i) != i]
    if repeats:
        listed = ", ".join(f"row {row} = row {earlier}" for row, earlier in repeats[:shown])
        more = f" and {len(repeats) - shown} more" if len(repeats) > shown else ""
        warnings.warn(f"{path}: {len(repeats)} row(s) repeat an earlier row exactly ({listed}{more}); each copy is "
                      "kept as a pair of its own (id NAME#k), in the fold of its first copy and resampled with it as "
                      "one unit, and counted under 'Duplicate pairs' on the card; remove the copies from the file if "
                      "they are not meant to be there", UserWarning, stacklevel=3)
    return len(repeats)


def unify_generator_case(df: pd.DataFrame) -> list[dict]:
    """Read generator names that differ only in case (``GPT-4o`` / ``gpt-4o``) as one generator, in place.

    As the protocols manifest does for labels: every spelling becomes the most frequent one over ``model1`` and
    ``model2`` (ties: the first in the file). Returns one record per merged name, ``{"name", "spellings": {spelling:
    rows}}``, for the card; otherwise one generator would count as two, halving its win-rate prior and splitting its
    slices."""
    counts: dict[str, dict[str, int]] = {}  # casefolded -> spelling -> mentions, in file order
    for a, b in zip(df["model1"], df["model2"], strict=True):
        for name in (a, b):
            spellings = counts.setdefault(name.casefold(), {})
            spellings[name] = spellings.get(name, 0) + 1
    canonical = {key: max(sp, key=sp.get) for key, sp in counts.items()}
    merged = [{"name": canonical[key], "spellings": dict(sp)} for key, sp in counts.items() if len(sp) > 1]
    if merged:
        for col in ("model1", "model2"):
            df[col] = [canonical[v.casefold()] for v in df[col]]
    return merged
