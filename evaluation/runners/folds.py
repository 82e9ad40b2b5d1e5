"""Join the fold-filtered predictions of cross-fitted judges into one out-of-fold predictions file.

A cross-fitted judge is K models, model k trained without fold k (``training/sft.py --heldout_fold k``) and run on
fold k only (``omniaudit judge --folds k``). Each run's provenance records its folds (``fold=K`` in its selection's
conditions), and an audit refuses such a file alone (:func:`omniaudit.evaluation.predictions.fold_filter`). The
merge checks the files belong together (one dataset build and config, the same sampling, item filters and omniaudit
version; each file complete for its folds; folds and items disjoint), then writes every row with one provenance: the
dataset, sampling and version of the runs, ``judge`` ``out-of-fold:`` followed by each fold's judge, ``model``
``{"kind": "out-of-fold", "folds": {fold: model}}`` and a selection over all the merged folds with ``out_of_fold``
(fold -> judge). Rows are ordered by run, then fold, then as in their file. Whether every fold of the config is
covered is left to the audit, which names any pair without an answer.
"""

from __future__ import annotations

import json
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.evaluation.predictions import PROVENANCE, fold_filter
from omniaudit.io import check_out_file
from omniaudit.records import canonical, first_difference, value_at
from omniaudit.tables import jsonl_objects

SHARED = ("omniaudit", "dataset", "sampling")  # provenance fields every fold's run must share


def _rows(path: Path) -> list[dict]:
    rows = []
    for n, row in jsonl_objects(path, "a predictions row (a JSON object) per line"):
        if not isinstance(row.get(PROVENANCE), dict):
            raise InputError("not a row of `omniaudit judge` (no provenance record)", file=path, row=n)
        rows.append(row)
    if not rows:
        raise InputError("empty predictions file", file=path)
    return rows


def is_fold_file(path: str | Path) -> bool:
    """Whether a predictions file is a fold-filtered run (``judge --folds``), judged by its first row."""
    try:
        with Path(path).open(encoding="utf-8") as fh:
            row = json.loads(fh.readline())
    except (OSError, ValueError):
        return False
    return isinstance(row, dict) and "shard" not in row and isinstance(row.get(PROVENANCE), dict) \
        and fold_filter(row[PROVENANCE]) is not None


def _other_conditions(selection: dict) -> list[str] | None:
    rest = [c for c in selection.get("conditions") or () if not str(c).startswith("fold=")]
    return rest or None


def merge_fold_predictions(out: str | Path, files: list[str | Path]) -> dict:
    """Join the fold-filtered files of cross-fitted judges into ``out`` (atomically); see the module docstring."""
    from omniaudit.evaluation.runners.run import is_predictions_file, write_jsonl

    out = check_out_file(out, is_predictions_file)
    files = [Path(f) for f in files]
    if len(set(files)) != len(files):
        raise InputError("a fold file is given twice", file=next(f for f in files if files.count(f) > 1))
    if len(files) < 2:
        raise InputError("a cross-fitted judge has one fold file per judge: give at least two", file=files[0])
    first: tuple[dict, Path] | None = None
    by_fold: dict[int, Path] = {}
    judges, models, seen_ids = {}, {}, {}
    merged: list[tuple[int, int, int, dict]] = []  # (run, first fold of the file, row number, row)
    n_items = 0
    for path in files:
        rows = _rows(path)
        record = rows[0][PROVENANCE]
        for n, row in enumerate(rows, 1):
            if "shard" in row:
                raise InputError("a shard of a judge run: join shards first (merge-predictions SHARD...), then "
                                 "merge the fold files", file=path, row=n)
            if canonical(row[PROVENANCE]) != canonical(record):
                raise InputError("rows of different judge runs in one fold file", file=path, row=n, column=PROVENANCE)
        folds = fold_filter(record)
        if folds is None:
            raise InputError("not a fold-filtered run (no fold=K in its provenance selection: write it with "
                             "`omniaudit judge --folds K`)", file=path)
        selection = record.get("selection") or {}
        shared = {**{k: record.get(k) for k in SHARED}, "formats": selection.get("formats"),
                  "conditions": _other_conditions(selection)}
        if first is None:
            first = (shared, path)
        elif (where := first_difference(first[0], shared)) is not None:
            raise InputError(f"this fold file does not belong with {first[1]}: its {where} is "
                             f"{value_at(shared, where)!r}, not {value_at(first[0], where)!r}; the folds of one "
                             "cross-fitted judge share the dataset build, config, sampling and item filters",
                             file=path)
        for k in folds:
            if k in by_fold:
                raise InputError(f"fold {k} is answered by two files ({by_fold[k]} and {path})", file=path)
            by_fold[k] = path
            judges[str(k)], models[str(k)] = record.get("judge"), record.get("model")
        items, runs = selection.get("items"), (record.get("sampling") or {}).get("runs")
        if isinstance(items, int) and isinstance(runs, int) and len(rows) != items * runs:
            raise InputError(f"the run is incomplete: {items} items x {runs} run(s) = {items * runs} answers "
                             f"asked and the file has {len(rows)}; rerun `omniaudit judge` (it resumes)", file=path)
        n_items += items if isinstance(items, int) else len(rows)
        for n, row in enumerate(rows, 1):
            key = (row.get("run", 0), row.get("id"))
            if key in seen_ids:
                raise InputError(f"item '{row.get('id')}' (run {key[0]}) is answered by two files "
                                 f"({seen_ids[key]} and {path})", file=path, row=n)
            seen_ids[key] = path
            merged.append((row.get("run", 0), folds[0], n, row))
    shared, _ = first
    record = {"omniaudit": shared["omniaudit"], "dataset": shared["dataset"],
              "judge": "out-of-fold:" + ",".join(f"{k}={judges[k]}" for k in sorted(judges, key=int)),
              "model": {"kind": "out-of-fold", "folds": {k: models[k] for k in sorted(models, key=int)}},
              "sampling": shared["sampling"],
              "selection": {"conditions": shared["conditions"], "formats": shared["formats"], "items": n_items,
                            "folds": sorted(by_fold), "out_of_fold": {k: judges[k] for k in sorted(judges, key=int)}}}
    merged.sort(key=lambda m: m[:3])
    out.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(out, [{**row, PROVENANCE: record} for *_, row in merged])
    runs = sorted({m[0] for m in merged})
    return {"files": len(files), "folds": sorted(by_fold), "items": n_items, "runs": len(runs), "rows": len(merged)}
