"""Read tabular input files (CSV / TSV / JSONL / Parquet) as string-typed records with the row numbers errors cite.

Rows are numbered from 1 in file order: CSV/Parquet count data rows (CSV line = row + 1 for the header), JSONL counts
lines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from omniaudit.errors import InputError

SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".parquet")


def fail_at(mask, message: str, file: str | Path, rows: list[int], column: str | None = None,
            values=None) -> None:
    """Raise an InputError naming the first row where ``mask`` is true (with its column and value); else nothing."""
    flags = np.asarray(mask, dtype=bool)
    if flags.any():
        i = int(np.argmax(flags))
        raise InputError(message, file=file, row=rows[i], column=column,
                         value=None if values is None else np.asarray(values, dtype=object)[i])


def parse_bool(value) -> bool | None:
    """A true/false cell: bools, "true" / "false", "yes" / "no", 1 / 0; None when empty or NaN; else ValueError."""
    if value is None or (isinstance(value, float) and value != value) or (isinstance(value, str) and
                                                                         not value.strip()):
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "1", "1.0", "yes"):
        return True
    if text in ("false", "0", "0.0", "no"):
        return False
    raise ValueError(value)


def resolve_media_path(value: str, manifest: Path, row: int, column: str) -> Path:
    """A media path from a manifest cell: relative to the manifest's folder (never escaping it) or absolute."""
    if not value.strip():
        raise InputError("expected a file path", file=manifest, row=row, column=column, value=value)
    media = Path(value.strip())
    if not media.is_absolute():
        # lexical check: "../" may not leave the folder, but symlinks placed inside it by the user are followed
        root = Path(os.path.abspath(manifest.parent))
        media = Path(os.path.normpath(root / media))
        if not media.is_relative_to(root):
            raise InputError("relative path escapes the manifest's folder (use an absolute path to point outside "
                             "it)", file=manifest, row=row, column=column, value=value)
    if not media.is_file():
        raise InputError(f"{column} file not found", file=manifest, row=row, column=column, value=value)
    return media


def read_records(path: str | Path) -> tuple[pd.DataFrame, list[int]]:
    """The file's records (CSV cells as strings, empty cells as "") and, for each, the row number errors report."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", file=path)
    return _read(path)


def _read(path: Path) -> tuple[pd.DataFrame, list[int]]:
    """The file's records and, for each, the row number errors report (CSV: data row; JSONL: line)."""
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv", ".tsv"):
            df = pd.read_csv(path, dtype=str, keep_default_na=False, sep="\t" if suffix == ".tsv" else ",")
            return df, list(range(1, len(df) + 1))
        if suffix in (".jsonl", ".ndjson"):
            return _read_jsonl(path)
        if suffix == ".parquet":
            df = pq.read_table(path).to_pandas()
            return df, list(range(1, len(df) + 1))
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError, pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read as {suffix.lstrip('.').upper()}: {type(exc).__name__}: {exc}",
                         file=path) from exc
    raise InputError(f"unsupported file type; expected one of {', '.join(SUFFIXES)}", file=path, value=path.suffix)


def jsonl_objects(path: Path, expected: str = "a JSON object per line") -> Iterator[tuple[int, dict]]:
    """(line number, object) of every non-blank line of a JSONL file; a line that is not a JSON object (or an
    unreadable file) is an InputError naming the file and line."""
    try:
        with path.open(encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"invalid JSON ({exc.msg})", file=path, row=line_no) from exc
                if not isinstance(obj, dict):
                    raise InputError(f"expected {expected}, got {json_kind(obj)}", file=path, row=line_no,
                                     value=_shortened(obj))
                yield line_no, obj
    except OSError as exc:
        raise InputError(f"cannot read: {exc}", file=path) from exc


def json_kind(value) -> str:
    """What a parsed JSON value is, in JSON's words: "a list (JSON array)", "a string", "a number", ..."""
    if isinstance(value, list):
        return "a list (JSON array)"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a JSON boolean)"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else "a JSON object"


def _shortened(value, limit: int = 80):
    """``value`` for an error message: as is when short, else its JSON text cut to ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False)
    return value if len(text) <= limit else text[: limit - 3] + "..."


def _read_jsonl(path: Path) -> tuple[pd.DataFrame, list[int]]:
    pairs = list(jsonl_objects(path))
    return pd.DataFrame([obj for _, obj in pairs]), [line for line, _ in pairs]


