"""Join the fold-filtered predictions of cross-fitted judges into one out-of-fold predictions file.

A cross-fitted judge is K models, model k trained without fold k (``training/sft.py --heldout_fold k``) and run on
fold k only (``omniaudit judge --folds k``). Each run's provenance records its folds (``fold=K`` in its selection's
conditions), and an audit refuses such a file alone (:func:`omniaudit.predictions.fold_filter`). The
merge checks the files belong together (one dataset build and config, the same sampling, item filters and omniaudit
version; each file complete for its folds; folds and items disjoint) and that each is one judge on its own held-out
fold (:func:`check_held_out`: one fold per file, the fold a trained judge's ``heldout_selection.json`` names, and no
judge, by spec or by model identity, answering two files: it would have trained on one of them), then writes every
row with one provenance: the dataset, sampling and version of the runs, ``judge`` ``out-of-fold:`` followed by each
fold's judge, ``model`` ``{"kind": "out-of-fold", "folds": {fold: model}}`` and a selection over all the merged
folds with ``out_of_fold`` (fold -> judge). Rows are ordered by run, then fold, then as in their file. Whether every
fold of the config is covered is left to the audit, which names any pair without an answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from omniaudit.errors import InputError
from omniaudit.io import check_out_file
from omniaudit.predictions import PROVENANCE, fold_filter
from omniaudit.records import canonical, first_difference, value_at
from omniaudit.runners.identity import SELECTION_FILE, heldout_fold
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


def _model_key(model: object) -> str:
    """What makes two runs one model: a local model's weights hash (a copied folder is the same judge), else its
    whole identity; the fold it was held out from is left out (the weights decide)."""
    if isinstance(model, dict) and model.get("sha256"):
        return f"sha256:{model['sha256']}"
    return canonical({k: v for k, v in model.items() if k != "heldout_fold"} if isinstance(model, dict) else model)


def check_held_out(folds: list[int], model: object, where: str | Path | None = None) -> None:
    """One cross-fitted judge answers exactly the one fold it was trained without: refuse several folds, and a
    trained judge (``heldout_fold`` in its identity, from its ``heldout_selection.json``) on another fold."""
    if len(folds) != 1:
        raise InputError(f"this run answers folds {folds}: one cross-fitted judge answers only the fold it was not "
                         "trained on; run `omniaudit judge --folds K` once per fold with that fold's judge",
                         file=where)
    held = model.get("heldout_fold") if isinstance(model, dict) else None
    if held is not None and folds != [held]:
        raise InputError(f"this judge was trained without fold {held} (its {SELECTION_FILE}) and so trained on fold "
                         f"{folds[0]}: its answers there are in-fold; run it with --folds {held}", file=where)


def pair_of(item_id: str, order: object = None) -> str:
    """The pair of a judge-config item (``{pair_id}/{order}``)."""
    item_id = str(item_id)
    if isinstance(order, str) and item_id.endswith(f"/{order}"):
        return item_id[:-len(order) - 1]
    return item_id.rsplit("/", 1)[0]


def read_selection(folder: str | Path) -> dict | None:
    """A cross-fitted judge's ``heldout_selection.json`` (None when the folder has none); unreadable: an error."""
    file = Path(folder) / SELECTION_FILE
    if not file.is_file():
        return None
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"not a held-out selection record ({exc})", file=file) from exc
    if not isinstance(record, dict):
        raise InputError("not a held-out selection record (expected a JSON object)", file=file)
    return record


def check_fold_record(fold: int, record: dict | None, config: str | None, fingerprint: str | None,
                      pairs, where: str | Path | None = None) -> None:
    """A cross-fitted judge's answers on ``fold`` are out-of-fold only if its held-out selection record
    (``where``) names that fold, was trained on this very build (the record's fingerprint of ``config``, the config
    answered, equals ``fingerprint``) and held out exactly the ``pairs`` it answers there: refuse otherwise, in one
    line naming the fold and the file."""
    head = f"fold {fold}: {where or SELECTION_FILE}"
    if record is None:
        raise InputError(f"{head}: the fold judge has no held-out selection record ({SELECTION_FILE}, written by "
                         "training/sft.py --heldout_fold), so nothing shows it never trained on this fold's pairs")
    if record.get("heldout_fold") != fold:
        raise InputError(f"{head}: the judge was trained without fold {record.get('heldout_fold')}, not fold {fold}")
    data = cast(dict, record.get("dataset")) if isinstance(record.get("dataset"), dict) else {}
    recorded = (data.get("fingerprints") or {}).get(config) if isinstance(data.get("fingerprints"), dict) else None
    if not recorded or recorded != fingerprint:
        raise InputError(f"{head}: the judge was trained on dataset build {data.get('name')!r} whose config "
                         f"'{config}' has fingerprint {recorded}, not {fingerprint} (the one answered): a rebuilt "
                         "dataset may put pairs it trained on in this fold; retrain the fold judges on this build")
    ids = record.get("heldout_pair_ids")
    if not isinstance(ids, list):
        raise InputError(f"{head}: the record lists no heldout_pair_ids (the pairs the judge never trained on)")
    held, answered = {str(i) for i in ids}, {str(p) for p in pairs}
    if held != answered:
        trained = sorted(answered - held)
        said = (f"answers {len(trained)} pair(s) it trained on (e.g. '{trained[0]}')" if trained else
                f"does not answer {len(held - answered)} of its {len(held)} held-out pair(s)")
        raise InputError(f"{head}: the judge {said}: its held-out pairs are not the fold's pairs answered")


def check_judge_folds(spec: str, folds: list[int] | None, dataset: str | Path | None = None,
                      config: str | None = None) -> int | None:
    """Before ``omniaudit judge --folds``: a local ``hf:`` model that records its held-out fold may answer only that
    fold (:func:`check_held_out`). Returns that fold (None: not a cross-fitted judge), also for a run over every
    fold, whose caller may warn that all but one fold are in-sample. Given the ``dataset`` and ``config`` answered,
    its record must also be of this build and hold out exactly that fold's pairs (:func:`check_fold_record`)."""
    kind, _, rest = spec.partition(":")
    held = heldout_fold(rest) if kind == "hf" and Path(rest).is_dir() else None
    if folds is not None and held is not None:
        check_held_out(sorted(folds), {"heldout_fold": held}, Path(rest) / SELECTION_FILE)
        if dataset is not None and config is not None:
            from omniaudit.data_builders.fingerprint import fingerprint_of
            from omniaudit.data_builders.hub import load_config

            table = load_config(dataset, config)
            pairs = table.loc[table["fold"] == held, "pair_id"] if {"fold", "pair_id"} <= set(table.columns) else []
            check_fold_record(held, read_selection(rest), config, fingerprint_of(dataset, config), pairs,
                              Path(rest) / SELECTION_FILE)
    return held


def check_fold_judge(fold: int, judge: object, model: object, dataset: object, ids, where: str | Path) -> None:
    """A fold file's judge (``judge`` spec, ``model`` identity, ``dataset`` provenance, ``ids`` the (id, order) of
    its rows): a local ``hf:`` model answering a fold must carry its held-out selection record (in its identity
    and, where its folder is at hand, as a file) agreeing with the build and the pairs answered."""
    if not (isinstance(judge, str) and judge.startswith("hf:")):
        return  # scripted judges never trained; a server's model cannot be checked here
    folder = Path(judge[3:])
    file = folder / SELECTION_FILE
    if not isinstance(model, dict) or model.get("heldout_fold") is None:
        raise InputError(f"fold {fold}: {file}: the fold judge {judge} had no held-out selection record when it "
                         f"answered ({where}), so nothing shows it never trained on this fold's pairs")
    if not folder.is_dir():
        return  # the identity says which fold it held out (checked by check_held_out); its file is elsewhere
    dataset = dataset if isinstance(dataset, dict) else {}
    check_fold_record(fold, read_selection(folder), dataset.get("config"), dataset.get("fingerprint"),
                      {pair_of(i, o) for i, o in ids}, file)


def _read_fold_file(path: Path) -> tuple[list[dict], dict, list[int], dict, dict]:
    """(rows, provenance, folds, selection, what every fold file of one judge shares) of one fold file: one whole
    fold-filtered judge run, not a shard."""
    rows = _rows(path)
    record = rows[0][PROVENANCE]
    for n, row in enumerate(rows, 1):
        if "shard" in row:
            raise InputError("a shard of a judge run: join shards first (merge-predictions SHARD...), then merge the "
                             "fold files", file=path, row=n)
        if canonical(row[PROVENANCE]) != canonical(record):
            raise InputError("rows of different judge runs in one fold file", file=path, row=n, column=PROVENANCE)
    folds = fold_filter(record)
    if folds is None:
        raise InputError("not a fold-filtered run (no fold=K in its provenance selection: write it with "
                         "`omniaudit judge --folds K`)", file=path)
    selection = record.get("selection") or {}
    shared = {**{k: record.get(k) for k in SHARED}, "formats": selection.get("formats"),
              "conditions": _other_conditions(selection),
              "limit": selection.get("limit"), "limit_seed": selection.get("limit_seed")}  # smoke runs apart
    return rows, record, folds, selection, shared


def _check_one_fold_each(record: dict, path: Path, judges_seen: dict[tuple[str, Any], Path]) -> None:
    """A judge (by its spec and by its model) answers one fold file only: each fold's judge was trained without
    its fold, so a judge answering two folds was trained on one of them."""
    for what, key in (("judge", record.get("judge")), ("model", _model_key(record.get("model")))):
        if (what, key) in judges_seen:
            raise InputError(f"the {what} of {judges_seen[what, key]} answers this file too "
                             f"({record.get('judge')}): one cross-fitted judge per fold, each trained without its "
                             "fold, so a judge answering two folds was trained on one of them", file=path)
        judges_seen[what, key] = path


def merge_fold_predictions(out: str | Path, files: list[str | Path]) -> dict:
    """Join the fold-filtered files of cross-fitted judges into ``out`` (atomically); see the module docstring."""
    from omniaudit.runners.rows import is_predictions_file, write_jsonl

    out = check_out_file(out, is_predictions_file)
    files = [Path(f) for f in files]
    if len(set(files)) != len(files):
        raise InputError("a fold file is given twice", file=next(f for f in files if files.count(f) > 1))
    if len(files) < 2:
        raise InputError("a cross-fitted judge has one fold file per judge: give at least two", file=files[0])
    first: tuple[dict, Path] | None = None
    by_fold: dict[int, Path] = {}
    seen_ids: dict[tuple[Any, Any], Path]  # (run, item id) -> its file
    judges_seen: dict[tuple[str, Any], Path]  # (judge | model, its key) -> its file
    judges, models, seen_ids, judges_seen = {}, {}, {}, {}
    merged: list[tuple[int, int, int, dict]] = []  # (run, first fold of the file, row number, row)
    n_items = 0
    for path in cast(list[Path], files):
        rows, record, folds, selection, shared = _read_fold_file(path)
        if first is None:
            first = (shared, path)
        elif (where := first_difference(first[0], shared)) is not None:
            raise InputError(f"this fold file does not belong with {first[1]}: its {where} is "
                             f"{value_at(shared, where)!r}, not {value_at(first[0], where)!r}; the folds of one "
                             "cross-fitted judge share the dataset build, config, sampling and item filters",
                             file=path)
        check_held_out(folds, record.get("model"), path)
        _check_one_fold_each(record, path, judges_seen)
        check_fold_judge(folds[0], record.get("judge"), record.get("model"), record.get("dataset"),
                         [(row.get("id"), row.get("order")) for row in rows], path)
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
    shared, _ = cast(tuple[dict, Path], first)  # set by the first of the (at least two) files
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
