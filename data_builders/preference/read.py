"""Read and validate pairwise preference files: the official EmoPrefer CSV or CSV / JSONL / Parquet with a mapping.

Every row is checked; the first problem raises :class:`~omniaudit.errors.InputError` naming file, row, column and
value. Rows are numbered from 1 in file order: CSV/Parquet count data rows (CSV line = row + 1 for the
header), JSONL counts lines.
"""

from __future__ import annotations

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
    return df.reset_index(drop=True)
