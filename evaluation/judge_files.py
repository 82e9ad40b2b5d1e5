"""External pairwise-judge prediction files: read, validate and average orders into P(a1 preferred).

A file is CSV or JSONL with one row per pair and presentation order: ``name`` (or ``id``), ``order`` in {ab, ba},
and either ``p_a1`` (probability that the dataset's a1 is preferred, whatever order it was shown in) or ``label`` in
{a1, a2}. The orders of a pair are averaged (appendix B: mean of p_A(d1, d2) and 1 - p_A(d2, d1), already mapped to
a1 by the file) and thresholded at 0.5; an average of exactly 0.5 is a tie (no preference), see
:func:`omniaudit.evaluation.stats.decide_with_ties`.

Judges are given as ``NAME=FILE`` or ``FILE`` (name = the file's stem), the syntax of ``audit protocols
--predictions``; several files with the same NAME are one judge (e.g. its ab and ba orders in two files).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation.stats import TIE, decide_with_ties

ORDERS = ("ab", "ba")


@dataclass
class JudgeSpec:
    name: str
    files: list[Path]


@dataclass
class JudgeScores:
    name: str
    p_a1: np.ndarray  # averaged over the orders present, aligned with the audited pairs (NaN: not judged)
    n_orders: np.ndarray  # 0 (not judged, only with allow_missing), 1 or 2 per pair
    order_agreement: float  # fraction of two-order pairs whose two decisions agree (position consistency)
    n_ties: int = 0  # judged pairs whose averaged P(a1) is exactly 0.5 (no preference, e.g. a position-locked judge)
    files: list[Path] = field(default_factory=list)

    @property
    def covered(self) -> np.ndarray:
        """Pairs with at least one order judged."""
        return self.n_orders > 0


def parse_judge_specs(specs: Sequence[str | Path]) -> list[JudgeSpec]:
    """``NAME=FILE`` or ``FILE`` (name = file stem) -> judges, in the order first named.

    A ``Path`` (or a string naming an existing file) is always a FILE. Files given the same explicit NAME are one
    judge; two files that would get the same name any other way (``A/pred.csv B/pred.csv``, or a stem equal to an
    explicit NAME) are an error asking for ``NAME=FILE``.
    """
    judges: dict[str, JudgeSpec] = {}
    explicit: set[str] = set()
    for spec in specs:
        text = str(spec)
        name, sep, file = text.partition("=")
        if isinstance(spec, Path) or not sep or Path(text).is_file() or "/" in name or "\\" in name:
            name, path, named = Path(text).stem, Path(text), False  # a path, perhaps with "=" in a folder name
        else:
            name, path, named = name.strip(), Path(file.strip()), True
            if not name or not file.strip():
                raise InputError("expected a judge as NAME=FILE or FILE", value=text)
        if name in judges and not (named and name in explicit):
            other = judges[name].files[0]
            raise InputError(f"two judge files would both be judge '{name}' ({other} and {path}); name them with "
                             f"NAME=FILE, e.g. --judges A={other} B={path}", file=path)
        if path in (judges[name].files if name in judges else []):
            raise InputError(f"judge file given twice for judge '{name}'", file=path)
        judges.setdefault(name, JudgeSpec(name, [])).files.append(path)
        if named:
            explicit.add(name)
    return list(judges.values())


def _read_rows(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        raise InputError("judge file must be .csv or .jsonl", file=path, value=path.suffix)
    try:
        if suffix == ".csv":
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        return pd.read_json(path, lines=True, dtype=False)
    except (ValueError, UnicodeDecodeError) as exc:  # pandas' EmptyDataError and ParserError are ValueErrors
        raise InputError(f"cannot read judge predictions: {type(exc).__name__}: {exc}", file=path) from exc


def read_judge_file(path: str | Path) -> pd.DataFrame:
    """Validated rows ``key, order, p_a1`` (key = the file's ``id`` or ``name`` column, as string)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("judge file not found", file=path)
    raw = _read_rows(path)
    key = "id" if "id" in raw.columns else "name"
    need = [c for c in (key, "order") if c not in raw.columns]
    if need or not ({"p_a1", "label"} & set(raw.columns)):
        raise InputError(f"expected columns name (or id), order and p_a1 or label; the file has {list(raw.columns)}",
                         file=path)
    if raw.empty:
        raise InputError("no rows", file=path)
    use_p = "p_a1" in raw.columns
    p = np.empty(len(raw))
    for i, rec in enumerate(raw.itertuples(index=False)):
        row = i + 1
        if str(rec.order).strip().lower() not in ORDERS:
            raise InputError("expected order ab or ba", file=path, row=row, column="order", value=rec.order)
        if use_p:
            try:
                p[i] = float(rec.p_a1)
            except (TypeError, ValueError):
                p[i] = np.nan
            if not 0.0 <= p[i] <= 1.0:  # also catches NaN
                raise InputError("expected a probability in [0, 1]", file=path, row=row, column="p_a1",
                                 value=rec.p_a1)
        else:
            label = str(rec.label).strip().lower()
            if label not in ("a1", "a2"):
                raise InputError("expected label a1 or a2", file=path, row=row, column="label", value=rec.label)
            p[i] = 1.0 if label == "a1" else 0.0
    rows = pd.DataFrame({"key": raw[key].astype(str).str.strip(), "order": raw["order"].str.strip().str.lower(),
                         "p_a1": p})
    dup = rows.duplicated(["key", "order"], keep=False)
    if dup.any():
        first = int(np.flatnonzero(dup)[0])
        raise InputError(f"{key} '{rows.key[first]}' has more than one row for order '{rows.order[first]}'",
                         file=path, row=first + 1)
    rows.attrs["key"] = key
    return rows


def read_judge(spec: JudgeSpec) -> pd.DataFrame:
    """Validated rows of all of a judge's files; a (key, order) given in two files is an error naming both."""
    frames = []
    for path in spec.files:
        rows = read_judge_file(path)
        frames.append(rows.assign(file=str(path), row=np.arange(1, len(rows) + 1)))
    keys = {f.attrs["key"] for f in frames}
    if len(keys) > 1:
        raise InputError(f"judge '{spec.name}': its files key rows by different columns ({sorted(keys)}); use the "
                         "same one in every file", file=spec.files[-1])
    rows = pd.concat(frames, ignore_index=True)
    dup = rows.duplicated(["key", "order"], keep=False)
    if dup.any():
        first, again = rows[dup].iloc[0], rows[dup].iloc[1]
        raise InputError(f"judge '{spec.name}': {keys.pop()} '{first.key}' order '{first.order}' is given twice "
                         f"(also in {again.file}, row {again.row})", file=first.file, row=int(first.row))
    rows.attrs["key"] = frames[0].attrs["key"]
    return rows


def judge_scores(path: str | Path | JudgeSpec, pairs: pd.DataFrame, all_ids: pd.Series | None = None,
                 allow_missing: bool = False) -> JudgeScores:
    """Scores of one judge (a file, or a :class:`JudgeSpec` of several) aligned with ``pairs`` (the binary pairs
    audited, with ``id`` and ``name``).

    Rows for pairs outside ``pairs`` but inside the dataset (``all_ids``, e.g. "same" pairs) are ignored; unknown
    keys are errors, and so are audited pairs without any row unless ``allow_missing`` (then their P(a1) is NaN and
    ``n_orders`` 0: the audit keeps only pairs every judge covers).
    """
    spec = path if isinstance(path, JudgeSpec) else JudgeSpec(Path(path).stem, [Path(path)])
    where = spec.files[0] if len(spec.files) == 1 else ", ".join(map(str, spec.files))
    rows = read_judge(spec)
    key = rows.attrs["key"]
    if key == "name" and not pairs["name"].is_unique:
        raise InputError("dataset names repeat, so judge rows must carry the dataset's 'id' column instead of 'name'",
                         file=where)
    targets = pairs[key].astype(str)
    known = set(all_ids.astype(str)) if all_ids is not None else set(targets)
    unknown = sorted(set(rows["key"]) - known - set(targets))
    if unknown:
        raise InputError(f"{len(unknown)} {key}(s) not in the dataset, e.g. {unknown[:5]}", file=where)
    wide = rows.pivot(index="key", columns="order", values="p_a1").reindex(targets)
    missing = targets[wide.isna().all(axis=1).to_numpy()].tolist()
    if missing and not allow_missing:
        raise InputError(f"no prediction for {len(missing)} audited pair(s), e.g. {missing[:5]}; to audit only the "
                         "pairs the judges cover, pass --judged-only", file=where)
    values = wide.reindex(columns=list(ORDERS)).to_numpy()
    n_orders = (~np.isnan(values)).sum(axis=1)
    both = n_orders == 2
    if both.any():
        d_ab, d_ba = decide_with_ties(values[both, 0]), decide_with_ties(values[both, 1])
        agreement = float(np.mean((d_ab == d_ba) & (d_ab != TIE)))
    else:
        agreement = float("nan")
    p_a1 = np.full(len(values), np.nan)
    judged = n_orders > 0
    p_a1[judged] = values[judged].mean(axis=1, where=~np.isnan(values[judged]))
    return JudgeScores(name=spec.name, p_a1=p_a1, n_orders=n_orders, order_agreement=agreement,
                       n_ties=int((decide_with_ties(p_a1[judged]) == TIE).sum()), files=list(spec.files))
