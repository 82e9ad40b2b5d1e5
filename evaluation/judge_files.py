"""External pairwise-judge prediction files: read, validate and average orders into P(a1 preferred).

A file is CSV or JSONL with one row per pair and presentation order: ``name`` (or ``id``), ``order`` in {ab, ba},
and either ``p_a1`` (probability that the dataset's a1 is preferred, whatever order it was shown in) or ``label`` in
{a1, a2}. The orders of a pair are averaged (appendix B: mean of p_A(d1, d2) and 1 - p_A(d2, d1), already mapped to
a1 by the file) and thresholded at 0.5.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation.stats import decide

ORDERS = ("ab", "ba")


@dataclass
class JudgeScores:
    name: str
    p_a1: np.ndarray  # averaged over the orders present, aligned with the audited pairs
    n_orders: np.ndarray  # 1 or 2 per pair
    order_agreement: float  # fraction of two-order pairs whose two decisions agree (position consistency)


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


def judge_scores(path: str | Path, pairs: pd.DataFrame, all_ids: pd.Series | None = None) -> JudgeScores:
    """Scores of one judge file aligned with ``pairs`` (the binary pairs audited, with ``id`` and ``name``).

    Rows for pairs outside ``pairs`` but inside the dataset (``all_ids``, e.g. "same" pairs) are ignored; unknown
    keys and audited pairs without any row are errors.
    """
    path = Path(path)
    rows = read_judge_file(path)
    key = rows.attrs["key"]
    if key == "name" and not pairs["name"].is_unique:
        raise InputError("dataset names repeat, so judge rows must carry the dataset's 'id' column instead of 'name'",
                         file=path)
    targets = pairs[key].astype(str)
    known = set(all_ids.astype(str)) if all_ids is not None else set(targets)
    unknown = sorted(set(rows["key"]) - known - set(targets))
    if unknown:
        raise InputError(f"{len(unknown)} {key}(s) not in the dataset, e.g. {unknown[:5]}", file=path)
    wide = rows.pivot(index="key", columns="order", values="p_a1").reindex(targets)
    missing = targets[wide.isna().all(axis=1).to_numpy()].tolist()
    if missing:
        raise InputError(f"no prediction for {len(missing)} audited pair(s), e.g. {missing[:5]}", file=path)
    values = wide.reindex(columns=list(ORDERS)).to_numpy()
    n_orders = (~np.isnan(values)).sum(axis=1)
    both = n_orders == 2
    agree = decide(values[both, 0]) == decide(values[both, 1]) if both.any() else np.array([])
    return JudgeScores(name=path.stem, p_a1=np.nanmean(values, axis=1), n_orders=n_orders,
                       order_agreement=float(agree.mean()) if agree.size else float("nan"))
