"""External pairwise-judge prediction files: read, validate and average orders into P(a1 preferred).

Two shapes are read, CSV or JSONL:

* pair predictions: one row per pair and presentation order: ``name`` (or ``id``), ``order`` in {ab, ba}, and either
  ``p_a1`` (probability that the dataset's a1 is preferred, whatever order it was shown in) or ``label`` in {a1, a2};
* item predictions, as ``omniaudit judge --config judge`` writes them for the preference dataset's ``judge`` config
  (recognised by the runner's ``raw`` / ``parsed`` columns): ``id`` = ``<pair id>/<order>``, ``order``, ``label`` in
  {A, B} (the option it named; null when it named none) and, where the runner had them, ``option_probs`` (a JSON
  object or dict option -> probability). The slot is mapped back to the pair by order: in ``ab`` option A is a1, in
  ``ba`` option B is a1; P(a1) is P(A) / (P(A) + P(B)) (ab) or P(B) / (P(A) + P(B)) (ba) where ``option_probs`` is
  given, else 1 or 0 from the label. An answer that names no option (null label, no probabilities) is no preference
  for that order, P(a1) = 0.5, and is counted. (Slot letters are read only here: in a pair-predictions file "a" or
  "b" would be ambiguous.)

Several sampled runs (column ``run``, ``omniaudit judge --runs N``) of one (pair, order) are averaged: mean P(a1)
over runs, which for labels is the share of runs choosing a1, i.e. a majority vote once thresholded. The orders of a
pair are then averaged (appendix B: mean of p_A(d1, d2) and 1 - p_A(d2, d1), mapped to a1) and thresholded at 0.5;
an average of exactly 0.5 is a tie (no preference), see :func:`omniaudit.evaluation.stats.decide_with_ties`.

Judges are given as ``NAME=FILE`` or ``FILE`` (name = the file's stem), the syntax of ``audit protocols
--predictions``; several files with the same NAME are one judge (e.g. its ab and ba orders in two files).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation.stats import TIE, decide_with_ties
from omniaudit.predictions import EXTRACTED, check_same_run, provenance_lines, read_prediction_file
from omniaudit.runners.reading import agreeing_probs
from omniaudit.runs import merge_sampling, sampling_sentence
from omniaudit.specs import parse_named_files

ORDERS = ("ab", "ba")
SLOTS = ("A", "B")
ITEM_COLUMNS = ("raw", "parsed")  # the runner's columns: the file holds item predictions of the judge config
EXPECTED = ("expected columns name (or id), order and p_a1 or label (pair predictions), or the predictions of "
            "`omniaudit judge --config judge` (id, order, raw, label, parsed, option_probs)")
NO_PREFERENCE = 0.5


@dataclass
class JudgeSpec:
    name: str
    files: list[Path]
    dataset: str | Path | None = None  # the dataset whose `judge` config the runner's files must have answered
    partial: bool = False  # accept one shard or an incomplete judge run (--judged-only)
    extracted: bool = True  # count the answers `judge --extractor` / `--read-reasoning` read (--exclude-extracted)


@dataclass
class JudgeScores:
    name: str
    p_a1: np.ndarray  # averaged over the orders present, aligned with the audited pairs (NaN: not judged)
    n_orders: np.ndarray  # 0 (not judged, only with allow_missing), 1 or 2 per pair
    order_agreement: float  # fraction of two-order pairs whose two decisions agree (position consistency)
    n_ties: int = 0  # judged pairs whose averaged P(a1) is exactly 0.5 (no preference, e.g. a position-locked judge)
    files: list[Path] = field(default_factory=list)
    meta: dict = field(default_factory=dict)  # how the files were read (for audit.json and the report)

    @property
    def covered(self) -> np.ndarray:
        """Pairs with at least one order judged."""
        return self.n_orders > 0


def parse_judge_specs(specs: Sequence[str | Path]) -> list[JudgeSpec]:
    """``NAME=FILE`` or ``FILE`` (name = file stem) -> judges, in the order first named.

    Each spec is read by :func:`omniaudit.specs.parse_named_file` (an existing file always wins, ``=`` and all; else
    the cut is the first ``=`` followed by an existing file; else an error naming the spec). Files given the same
    explicit NAME are one judge; two files that would get the same name any other way (``A/pred.csv B/pred.csv``, or
    a stem equal to an explicit NAME) are an error asking for ``NAME=FILE``.
    """
    judges: dict[str, JudgeSpec] = {}
    explicit: set[str] = set()
    for name, path, named in parse_named_files(specs, noun="judge file"):
        if name in judges and not (named and name in explicit):
            other = judges[name].files[0]
            raise InputError(f"two judge files would both be judge '{name}' ({other} and {path}); name them with "
                             f"NAME=FILE, e.g. --predictions A={other} B={path}", file=path)
        if path in (judges[name].files if name in judges else []):
            raise InputError(f"judge file given twice for judge '{name}'", file=path)
        judges.setdefault(name, JudgeSpec(name, [])).files.append(path)
        if named:
            explicit.add(name)
    return list(judges.values())


def _missing(value: object) -> bool:
    """An empty cell: None, NaN, or blank text (CSV cells are read as text)."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and not value.strip()


def _slot_probs(value: object, path: Path, row: int) -> tuple[float, float] | None:
    """(P(A), P(B)) from an ``option_probs`` cell (dict or JSON object; renormalised over A and B), None if empty."""
    if _missing(value):
        return None
    probs = value
    if isinstance(value, str):
        try:
            probs = json.loads(value)
        except json.JSONDecodeError:
            probs = None
    if not isinstance(probs, dict) or not set(SLOTS) <= set(probs):
        raise InputError('expected an object with the probabilities of options A and B, e.g. {"A": 0.7, "B": 0.3}',
                         file=path, row=row, column="option_probs", value=value)
    try:
        pa, pb = float(probs["A"]), float(probs["B"])
    except (TypeError, ValueError):
        pa = pb = float("nan")
    if not (pa >= 0 and pb >= 0 and math.isfinite(pa + pb) and pa + pb > 0):
        raise InputError("expected non-negative, finite probabilities for A and B (not both 0)", file=path, row=row,
                         column="option_probs", value=value)
    return pa / (pa + pb), pb / (pa + pb)


def read_judge_file(path: str | Path, dataset: str | Path | None = None, partial: bool = False,
                    extracted: bool = True) -> pd.DataFrame:
    """Validated rows ``key, order, run, p_a1, source`` (key = the pair's ``id`` or ``name``, as string; source =
    how P(a1) was read: p_a1, probs, label, unparsed, or for a label ``omniaudit judge`` did not read with its rules
    ``extractor`` / ``reasoning`` (``read_by``), ``excluded`` without ``extracted``: no preference, as unparsed).
    ``attrs``: ``key`` (id or name), ``items`` (True for the runner's item predictions), ``sampling``
    (:func:`~omniaudit.runs.sampling_settings`), ``provenance`` (checked against ``dataset``'s ``judge`` config)
    and ``row_numbers`` (each row's line or CSV row, for errors);
    the file is read by :func:`~omniaudit.predictions.read_prediction_file`, as every audit reads its files."""
    path = Path(path)
    read = read_prediction_file(path, dataset, ("judge",), partial, keys=("id", "name"),
                                needs=("p_a1", "label", "option_probs"), answer_columns=("raw",), expected=EXPECTED)
    raw, key = read.records, read.key
    items = any(c in raw.columns for c in ITEM_COLUMNS)
    if "order" not in raw.columns or (items and key != "id"):
        raise InputError(f"{EXPECTED}; the file has {list(raw.columns)}", file=path)
    n = len(raw)
    p, source, keys = np.empty(n), np.empty(n, dtype=object), np.empty(n, dtype=object)
    runs = np.asarray(read.run_numbers(), dtype=np.int64)
    by_other = read.extracted()
    orders = raw["order"].map(lambda v: "" if _missing(v) else str(v).strip().lower()).to_numpy()
    has = {c: c in raw.columns for c in ("p_a1", "label", "option_probs")}
    for i, rec in enumerate(raw.to_dict("records")):
        row, order = read.rows[i], orders[i]
        if order not in ORDERS:
            raise InputError("expected order ab or ba", file=path, row=row, column="order", value=rec["order"])
        keys[i] = read.ids.iloc[i]
        if items:  # an item id is <pair id>/<order>
            if not keys[i].lower().endswith(f"/{order}") or len(keys[i]) == len(order) + 1:
                raise InputError(f"expected an item id of the preference judge config, <pair id>/{order} (this row's "
                                 "order); were these predictions made on another config?", file=path, row=row,
                                 column="id", value=rec[key])
            keys[i] = keys[i][: -len(order) - 1]
        p[i], source[i] = _p_a1(rec, order, has, items, path, row)
        if by_other[i]:
            p[i], source[i] = (p[i], by_other[i]) if extracted else (NO_PREFERENCE, "excluded")
    rows = pd.DataFrame({"key": keys, "order": orders, "run": runs, "p_a1": p, "source": source})
    _check_one_row_each(rows, items, key, read.runs is not None, path, read.rows)
    rows.attrs["key"] = key
    rows.attrs["items"] = items
    rows.attrs["sampling"] = read.sampling
    rows.attrs["provenance"] = read.provenance
    rows.attrs["row_numbers"] = read.rows
    return rows


def _p_a1(rec: dict, order: str, has: dict[str, bool], items: bool, path: Path, row: int) -> tuple[float, str]:
    """(P(a1), how it was read: p_a1, probs, label or unparsed) of one row."""
    if has["p_a1"]:
        try:
            p = float(rec["p_a1"])
        except (TypeError, ValueError):
            p = np.nan
        if not 0.0 <= p <= 1.0:  # also catches NaN
            raise InputError("expected a probability in [0, 1]", file=path, row=row, column="p_a1", value=rec["p_a1"])
        return p, "p_a1"
    first = 0 if order == "ab" else 1  # the slot showing a1: A in order ab, B in order ba
    probs = _slot_probs(rec["option_probs"], path, row) if has["option_probs"] else None
    if probs is not None and items and "raw" in rec:  # the text wins over probabilities it contradicts
        named = None if not has["label"] or _missing(rec["label"]) else str(rec["label"]).strip().upper()
        sampled = bool(rec.get("temperature")) and not _missing(rec.get("temperature"))
        kept, _ = agreeing_probs(rec["raw"], named, dict(zip(SLOTS, probs, strict=True)), sampled)
        probs = None if kept is None else probs
    elif probs is not None and has["label"] and not _missing(rec["label"]):  # no text to settle it: refused
        named, sampled = str(rec["label"]).strip().upper(), bool(rec.get("temperature")) and not _missing(
            rec.get("temperature"))
        top = SLOTS[int(probs[1] > probs[0])]
        if named in SLOTS and probs[0] != probs[1] and top != named and not sampled:
            raise InputError(f"option_probs favour {top} but the label is {named}: a greedy answer's probabilities "
                             "cannot contradict it", file=path, row=row, column="option_probs",
                             value=rec["option_probs"])
    if probs is not None:
        return probs[first], "probs"
    label = "" if not has["label"] or _missing(rec["label"]) else str(rec["label"]).strip()
    if items and label.upper() in SLOTS:  # the option named, a slot letter
        return (1.0 if SLOTS.index(label.upper()) == first else 0.0), "label"
    if items and not label:  # the judge answered, naming no option: a declared tie, or an answer left unread
        return NO_PREFERENCE, "tie" if rec.get("unread") == "tie" else "unparsed"
    if not items and label.lower() in ("a1", "a2"):
        return (1.0 if label.lower() == "a1" else 0.0), "label"
    raise InputError(f"expected label {'A or B (the option named)' if items else 'a1 or a2'}", file=path, row=row,
                     column="label", value=rec.get("label"))


def _check_one_row_each(rows: pd.DataFrame, items: bool, key: str, with_runs: bool, path: Path,
                        row_numbers: list[int]) -> None:
    """One row per (pair, order, run): a repeat is refused, naming its first row and the repeat."""
    repeated = rows.duplicated(["key", "order", "run"])
    if not repeated.any():
        return
    again = int(np.flatnonzero(repeated)[0])
    k, o, r = rows.loc[again, ["key", "order", "run"]]
    first = int(np.flatnonzero((rows["key"] == k) & (rows["order"] == o) & (rows["run"] == r))[0])
    what = f"item '{k}/{o}' has more than one row" if items else f"{key} '{k}' has more than one row for order '{o}'"
    raise InputError(what + (f" and run {r}" if with_runs else "") + f" (again in row {row_numbers[again]})",
                     file=path, row=row_numbers[first])


def read_judge(spec: JudgeSpec) -> pd.DataFrame:
    """Validated rows of all of a judge's files; a (key, order, run) given in two files is an error naming both."""
    frames = []
    for path in spec.files:
        rows = read_judge_file(path, spec.dataset, spec.partial, spec.extracted)
        frames.append(rows.assign(file=str(path), row=rows.attrs["row_numbers"]))
    provenance = [f.attrs["provenance"] for f in frames]
    check_same_run(provenance, f"the files of judge '{spec.name}'")
    keys = {f.attrs["key"] for f in frames}
    if len(keys) > 1:
        raise InputError(f"judge '{spec.name}': its files key rows by different columns ({sorted(keys)}); use the "
                         "same one in every file", file=spec.files[-1])
    rows = pd.concat(frames, ignore_index=True)
    dup = rows.duplicated(["key", "order", "run"], keep=False)
    if dup.any():
        first, again = rows[dup].iloc[0], rows[dup].iloc[1]
        run = f" run {first.run}" if rows["run"].any() else ""
        raise InputError(f"judge '{spec.name}': {keys.pop()} '{first.key}' order '{first.order}'{run} is given twice "
                         f"(also in {again.file}, row {again.row})", file=first.file, row=int(first.row))
    rows.attrs["key"] = frames[0].attrs["key"]
    rows.attrs["items"] = any(f.attrs["items"] for f in frames)
    rows.attrs["sampling"] = merge_sampling([f.attrs["sampling"] for f in frames])
    rows.attrs["provenance"] = provenance
    return rows


def reading_meta(rows: pd.DataFrame) -> dict:
    """How a judge's rows were read, for audit.json: the file shape, where P(a1) came from (rows per source), runs,
    unparsed answers and the runner's sampling settings; ``note`` says it in one sentence for the report.

    Empty for plain pair predictions (one run, p_a1 or a1/a2 labels, no sampling columns): nothing was mapped."""
    counts = rows["source"].value_counts()
    n = {s: int(counts.get(s, 0)) for s in ("p_a1", "probs", "label", "tie", "unparsed", *EXTRACTED, "excluded")}
    runs = rows.groupby(["key", "order"])["run"].nunique()
    if not rows.attrs["items"] and runs.max() == 1 and not rows.attrs["sampling"]:
        return {}
    meta = {"predictions": "items" if rows.attrs["items"] else "pairs", "rows": len(rows),
            "p_a1_from": {k: v for k, v in n.items() if v}, "n_unparsed": n["unparsed"],
            "runs": {"min": int(runs.min()), "max": int(runs.max())},
            "provenance": [p.summary() for p in rows.attrs.get("provenance", [])]}
    if rows.attrs["sampling"]:
        meta["sampling"] = rows.attrs["sampling"]
    parts = [("item predictions of `omniaudit judge --config judge`, option A/B mapped to a1/a2 by order"
              if rows.attrs["items"] else "pair predictions")]
    parts.append("P(a1) from " + ", ".join(f"{what} on {n[s]} rows" for s, what in (
        ("p_a1", "the p_a1 column"), ("probs", "option probabilities"), ("label", "labels"),
        ("tie", "a declared tie (P(a1) = 0.5)"),
        ("extractor", "labels an extractor read (judge --extractor)"),
        ("reasoning", "labels read from the reasoning trace (judge --read-reasoning)")) if n[s]))
    if n["excluded"]:
        parts.append(f"{n['excluded']} answers read by an extractor or from a reasoning trace were left out "
                     "(--exclude-extracted) and count as no preference")
    if n["unparsed"]:
        parts.append(f"{n['unparsed']} answers named no option and count as no preference (P(a1) = 0.5 for that "
                     "order); the position measures leave them out")
    if meta["runs"]["max"] > 1:
        k = meta["runs"]
        parts.append(f"{k['min']}{'-' + str(k['max']) if k['max'] > k['min'] else ''} runs per item and order, "
                     "averaged (mean P(a1); for labels the share of runs choosing a1, a majority vote)")
    if meta.get("sampling"):
        parts.append("sampling " + sampling_sentence(meta["sampling"]))
    provenance = rows.attrs.get("provenance", [])
    if rows.attrs["items"] and provenance:
        parts.append(" ".join(line.removeprefix("- ") for line in provenance_lines(provenance)))
    meta["note"] = "; ".join(parts) + "."
    return meta


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
    meta = reading_meta(rows)
    per_order = rows.groupby(["key", "order"], as_index=False)["p_a1"].mean()  # runs averaged first
    wide = per_order.pivot(index="key", columns="order", values="p_a1").reindex(targets)
    missing = targets[wide.isna().all(axis=1).to_numpy()].tolist()
    if missing and not allow_missing:
        lacking = ""
        if "fold" in pairs.columns:  # a merge of cross-fitted judges without some folds' files
            answered = set(pairs.loc[~targets.isin(missing).to_numpy(), "fold"])
            gone = sorted(set(pairs["fold"]) - answered)
            lacking = f"; no answer at all for fold(s) {gone} (merge those folds' judge files too)" if gone else ""
        raise InputError(f"no prediction for {len(missing)} audited pair(s), e.g. {missing[:5]}{lacking}; to audit "
                         "only the pairs the judges cover, pass --judged-only", file=where)
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
                       n_ties=int((decide_with_ties(p_a1[judged]) == TIE).sum()), files=list(spec.files),
                       meta=meta)
