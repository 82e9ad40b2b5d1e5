"""``omniaudit verify``'s checks of the data: a dataset's files against the fingerprint sealed in its card (and a
path-mode config's clips against their digests), and a predictions file against its provenance, the dataset build it
names and its rows' hashes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.verify_findings import CANNOT, FAILED, VERIFIED, Finding, refused, some_names
from omniaudit.verify_survey import Context, FoundDataset, dataset_for

NO_DIGEST = ("its rows carry no digest: an answer edited in a way that agrees with its provenance (a label and its "
             "raw reply changed together) cannot be detected")


def check_dataset(ctx: Context, dataset: FoundDataset) -> list[Finding]:
    """Each config's files against the fingerprint sealed in the card; a path-mode config's clips against the
    digests its rows record."""
    from omniaudit.data_builders.card import card_configs
    from omniaudit.data_builders.fingerprint import config_files

    findings = []
    patterns = card_configs(dataset.folder)
    for config, now in dataset.now.items():
        sealed, files = dataset.sealed.get(config), config_files(dataset.folder, config)
        ctx.examined.update(files)
        said = lambda status, text, c=config: findings.append(  # noqa: E731
            Finding(status, "dataset", dataset.shown, f"config '{c}': {text}"))
        if now is None:
            said(FAILED, f"no Parquet file matches its data files ({', '.join(p for _, p in patterns[config])}): its "
                         "files are missing")
            continue
        if sealed is None:
            said(CANNOT, "the card carries no sealed fingerprint (not written by omniaudit, or by a version before "
                         f"sealing), so its files cannot be checked against the build (they are {now})")
        elif sealed != now:
            names = [f.relative_to(dataset.folder).as_posix() for f in files]
            said(FAILED, f"its files changed after the build (the card sealed {sealed}, the files are {now}; "
                         f"{some_names(names)})")
        else:
            said(VERIFIED, f"its {len(files)} Parquet file(s) are as built ({now})")
        if any(p.startswith("media/") for _, p in patterns[config]):
            findings.append(_check_media(ctx, dataset, config))
    ctx.examined.add(dataset.folder / "README.md")
    return findings


def _check_media(ctx: Context, dataset: FoundDataset, config: str) -> Finding:
    """A path-mode config: every clip its rows name against the SHA-256 the row records."""
    from omniaudit.data_builders.media_store import MEDIA_DIR, verify_media

    ctx.examined.update((dataset.folder / MEDIA_DIR).glob("*"))
    try:
        n = verify_media(dataset.folder, config)
    except (InputError, ValueError, KeyError, OSError) as exc:  # pyarrow's errors are ValueErrors or OSErrors
        return Finding(FAILED, "media", dataset.shown, f"config '{config}': {exc}")
    return Finding(VERIFIED, "media", dataset.shown, f"config '{config}': the {n} clip(s) its rows name match the "
                                                     "SHA-256 each row records")


def check_predictions_file(ctx: Context, path: Path) -> list[Finding]:
    """One predictions file: its rows (one run, none contradicting its provenance, every item of every run) and the
    dataset build it names, when that dataset is at hand."""
    from omniaudit.evaluation.lmms_eval import adopt_log_samples
    from omniaudit.predictions import PROVENANCE, UNKNOWN, check_predictions
    from omniaudit.tables import read_records

    where = ctx.shown(path)
    ctx.examined.add(path)
    try:
        raw, rows = read_records(path)
        adopt_log_samples(raw, where, rows)  # an lmms-eval samples file: its predictions rows (as every audit reads)
    except InputError as exc:
        return [Finding(FAILED, "predictions", where, refused(exc, where))]
    if PROVENANCE not in raw.columns:
        return [Finding(CANNOT, "predictions", where, UNKNOWN)]
    records = list(_provenance_records(raw, PROVENANCE))
    configs = tuple(dict.fromkeys(str((r.get("dataset") or {}).get("config")) for r in records))
    made_on = _made_on(ctx, where, raw[[PROVENANCE]], rows, configs, records)
    try:
        checked = check_predictions(raw, where, None, configs, partial=True, rows=rows)
    except InputError as exc:  # the dataset's finding too, unless it is the same refusal (rows of several runs)
        what = refused(exc, where)
        return [Finding(FAILED, "predictions", where, what)] + ([made_on] if made_on.what != what else [])
    record = checked.record or {}
    sampling = record.get("sampling") or {}
    findings = [Finding(VERIFIED, "predictions", where, f"one run of {record.get('judge')}: its {checked.rows} rows "
                        f"agree with their provenance (temperature {sampling.get('temperature')}, "
                        f"{sampling.get('runs')} run(s), seeds, labels)"),
                _completeness(where, checked, records), made_on, *_row_hashes(ctx, where, raw, rows, records)]
    if path not in ctx.digested:
        findings.append(Finding(CANNOT, "predictions", where, NO_DIGEST))
    return findings


def _provenance_records(raw, column: str) -> Iterator[dict]:
    """The distinct provenance records of a predictions file's rows."""
    if column not in raw.columns:
        return
    seen = set()
    for value in raw[column].tolist():
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                continue
        if isinstance(value, dict) and (key := json.dumps(value, sort_keys=True, default=str)) not in seen:
            seen.add(key)
            yield value


def _completeness(where: str, checked, records: list[dict]) -> Finding:
    """Every item of every run answered, as the provenance says (a shard, a fold filter or a smoke run is not)."""
    from omniaudit.predictions import fold_filter

    selection = (records[0].get("selection") or {}) if records else {}
    if checked.shard:
        return Finding(CANNOT, "predictions", where, f"one shard ({checked.shard}) of a judge run: the whole run is "
                                                     "not here (merge the shards with `omniaudit merge-predictions`)")
    if any(fold_filter(r) is not None for r in records):
        return Finding(CANNOT, "predictions", where, "the answers of a fold-filtered run (judge --folds): the other "
                                                     "folds' answers are not here")
    if checked.missing and selection.get("limit") is not None:
        return Finding(CANNOT, "predictions", where, f"a smoke run (judge --limit {selection['limit']}): "
                                                     f"{checked.missing} answers of the whole run were never asked")
    if checked.missing:
        return Finding(FAILED, "predictions", where, f"incomplete: {checked.missing} of the answers its provenance "
                                                     "asks for (items x runs) are missing (a truncated file?)")
    if checked.complete:
        runs = (records[0].get("sampling") or {}).get("runs")
        shape = (f"{selection.get('items')} items x {runs} run(s)" if len(records) == 1 else
                 f"every item x run of its {len(records)} configs")
        return Finding(VERIFIED, "predictions", where, f"complete: all {checked.rows} answers ({shape})")
    return Finding(CANNOT, "predictions", where, "its provenance does not record its items and runs: whether every "
                                                 "answer is there cannot be told")


def _made_on(ctx: Context, where: str, provenance, rows: list[int], configs: tuple[str, ...],
             records: list[dict]) -> Finding:
    """The answers were made on the build of the dataset at hand (``check_predictions`` on the provenance alone)."""
    from omniaudit.predictions import check_predictions

    meta = [r.get("dataset") or {} for r in records]
    dataset = dataset_for(ctx, meta)
    names = ", ".join(f"config '{m.get('config')}' of {m.get('name')} ({m.get('fingerprint')})" for m in meta)
    if dataset is None:
        return Finding(CANNOT, "predictions", where, f"dataset not at hand: the answers were made on {names}; put "
                                                     "the dataset in the folder or pass --dataset PATH")
    try:
        checked = check_predictions(provenance.copy(), where, dataset.folder, configs, partial=True, rows=rows)
    except InputError as exc:
        return Finding(FAILED, "predictions", where, refused(exc, where))
    absent = [n for n in checked.notes if "not at hand" in n]
    if absent:
        return Finding(CANNOT, "predictions", where, absent[0])
    return Finding(VERIFIED, "predictions", where, f"made on this build of {dataset.shown}: {names}")


def _row_hashes(ctx: Context, where: str, raw, rows: list[int], records: list[dict]) -> list[Finding]:
    """The rows' ``doc_hash`` / ``prompt_hash``: what they bind (:func:`~omniaudit.predictions.
    check_row_hashes`; their presence and agreement among an item's rows were checked with the file). Each row's
    ``doc_hash`` is recomputed when the dataset build the provenance names is at hand; ``prompt_hash`` never is."""
    from omniaudit.predictions import PROVENANCE
    from omniaudit.row_hashes import ROW_HASHES, check_row_hashes

    if not any(name in raw.columns for name in ROW_HASHES):
        return [Finding(CANNOT, "predictions", where, "its rows carry no doc_hash / prompt_hash (written before "
                                                      "omniaudit recorded them): which item and prompt each answer "
                                                      "was made for rests on the provenance alone")]
    prompt = Finding(CANNOT, "predictions", where, "each row's prompt_hash is not recomputed (that needs the judge's "
                                                   "runner): only that every row of an item has the same one")
    meta = [r.get("dataset") or {} for r in records]
    dataset = dataset_for(ctx, meta)
    if dataset is None or not all(m.get("fingerprint") and dataset.now.get(m.get("config")) == m.get("fingerprint")
                                  for m in meta):
        why = "is not at hand" if dataset is None else f"is not the build at hand ({dataset.shown})"
        return [Finding(CANNOT, "predictions", where, f"row hashes: every row carries doc_hash and prompt_hash, one "
                                                      f"per item; the dataset the answers were made on {why}, so no "
                                                      "doc_hash was recomputed"), prompt]
    columns = [c for c in (PROVENANCE, "id", "order", *ROW_HASHES) if c in raw.columns]
    provenance = [json.loads(v) if isinstance(v, str) else v for v in raw[PROVENANCE].tolist()]
    try:
        check_row_hashes(raw[columns].copy(), where, rows, provenance, dataset.folder)
    except InputError as exc:
        return [Finding(FAILED, "predictions", where, refused(exc, where)), prompt]
    return [Finding(VERIFIED, "predictions", where, f"row hashes: each row's doc_hash is its item's in "
                                                    f"{dataset.shown}, recomputed from the dataset's rows (the item's "
                                                    "text, options, labels and media sizes)"), prompt]
