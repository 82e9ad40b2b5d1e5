"""Recheck a folder you received (``omniaudit verify DIR``): is it what it claims to be, and what cannot be told?

A folder that reaches you (a built dataset, a judge's predictions file, an audit output, a scorecard ``OUT``, or a
folder holding several of them) carries its own records: the ``.omniaudit.json`` marker of every folder omniaudit
wrote (:mod:`omniaudit.io`), the data fingerprint sealed into a dataset card (:mod:`omniaudit.data_builders.hub`),
the SHA-256 of every clip a path-mode dataset keeps beside its rows (:mod:`omniaudit.data_builders.media_store`), the
provenance of every predictions row (:mod:`omniaudit.predictions`), the inputs and provenance an
``audit.json`` records (:mod:`omniaudit.evaluation.audit_outputs`), and the digests of the predictions files a
scorecard read (``models/NAME/status.json``). :func:`verify` walks the folder, rechecks each record against the files
with the project's own functions, and returns one :class:`Finding` per check, each **verified**, **failed** or
**cannot vouch** (with why):

- markers: every file a marker lists is there (no symbolic link in their place), the marker itself is whole, and
  files beside them that it does not list are named (not ours);
- datasets: each config's fingerprint, recomputed (:func:`~omniaudit.data_builders.fingerprint.config_fingerprint`),
  equals the one sealed in the card (else its files changed after the build); a path-mode config's clips match the
  digests its rows record (:func:`~omniaudit.data_builders.media_store.verify_media`);
- predictions (``*.jsonl`` of ``omniaudit judge``): :func:`~omniaudit.predictions.check_predictions`
  (one run per file, no row contradicting its provenance, every item of every run) and, when the dataset the
  provenance names is in the folder or given (``datasets``), that the answers were made on this build of it; the
  rows' ``doc_hash`` / ``prompt_hash`` (in every row or none, one per item) and, with that build at hand, each row's
  ``doc_hash`` recomputed from the dataset's item (:func:`~omniaudit.predictions.check_row_hashes`);
- audit outputs (``audit.json``): every predictions file and dataset build its provenance names matches the files
  found here; the omniaudit version that wrote it against this one;
- scorecards (``scorecard.json``): each predictions file's SHA-256 recorded in ``models/NAME/status.json``; every
  verdict decided again from the numbers the card keeps, ``measures.json`` against the card, and ``scorecard.md`` /
  ``scorecard.html`` rendered again from ``scorecard.json`` (:mod:`omniaudit.verify_card`): a card whose verdicts
  were edited fails.

What it cannot vouch for, and says so: a dataset or predictions file that is not at hand; rows without
``doc_hash`` / ``prompt_hash`` (written before omniaudit recorded them) and every row's ``prompt_hash`` (recomputing
it needs the judge's runner: it is checked only for agreement among an item's rows); a predictions file's answers
edited in a way that agrees with their provenance (rows carry no digest of their answers; a scorecard's status.json
digests are the exception); the numbers of an audit (not recomputed: rerun it); the contents of files the marker
only names (reports, figures, ``build_info.json``); and who wrote any of it: fingerprints and digests are unkeyed
hashes kept beside the data, so files edited and re-sealed by hand would pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from omniaudit import __version__
from omniaudit.errors import InputError
from omniaudit.io import MARKER, OWN_TEMPORARY, foreign_entries, list_files, marker_files, read_marker

VERIFIED, FAILED, CANNOT = "verified", "failed", "cannot vouch"
HEADINGS = {VERIFIED: "verified", FAILED: "failed", CANNOT: "cannot vouch for"}
PREDICTION_SUFFIXES = (".jsonl", ".ndjson")
JOURNAL = re.compile(r"^\..+\.journal-[^/]*\.jsonl$")  # a judge run's journal (omniaudit.runners.run._journal)
STATUS = "status.json"  # evaluation.scorecard.runner.STATUS (not imported: that module pulls in the runners)
NO_DIGEST = ("its rows carry no digest: an answer edited in a way that agrees with its provenance (a label and its "
             "raw reply changed together) cannot be detected")
NOT_RECOMPUTED = ("its numbers are not recomputed, and it records no digest of the files it read: rerun the audit on "
                  "these inputs to reproduce them")
AUTHORSHIP = ("who wrote it: fingerprints and digests are unkeyed SHA-256 hashes kept beside the data; they show "
              "the files agree with their records, not that omniaudit wrote them (files edited and re-sealed by hand "
              "pass)")


@dataclass(frozen=True)
class Finding:
    """One check's outcome: ``status`` (verified / failed / cannot vouch), the ``check`` (marker, dataset, media,
    predictions, audit, scorecard, files, authorship), the ``path`` it concerns (relative to the folder checked) and
    ``what`` was found, in a sentence."""

    status: str
    check: str
    path: str
    what: str


@dataclass
class Verification:
    """Every finding of one :func:`verify`."""

    folder: Path
    findings: list[Finding] = field(default_factory=list)

    def of(self, status: str) -> list[Finding]:
        return [f for f in self.findings if f.status == status]

    @property
    def ok(self) -> bool:
        """Nothing failed (what cannot be vouched for does not fail)."""
        return not self.of(FAILED)

    def counts(self) -> dict[str, int]:
        return {status: len(self.of(status)) for status in HEADINGS}

    def to_dict(self) -> dict:
        return {"folder": str(self.folder), "omniaudit": __version__, "ok": self.ok,
                "counts": {k.replace(" ", "_"): v for k, v in self.counts().items()},
                "findings": [asdict(f) for f in self.findings]}

    def lines(self) -> list[str]:
        """The findings grouped as verified / failed / cannot vouch for, one line each."""
        n = self.counts()
        out = [f"{self.folder}: {n[VERIFIED]} verified, {n[FAILED]} failed, {n[CANNOT]} cannot vouch for"]
        for status, heading in HEADINGS.items():
            found = self.of(status)
            out.append(f"{heading}:")
            out += [f"  {f.path}: {f.what}" for f in found] or ["  (none)"]
        return out


# ------------------------------------------------------------------------------------------------- what is there
@dataclass
class _Dataset:
    """A dataset folder (found in the folder checked, or given) with each config's sealed and current fingerprint."""

    folder: Path
    shown: str
    # keyed by config name (Any: looked up with a provenance's config, which may be None)
    sealed: dict[Any, str] = field(default_factory=dict)
    now: dict[Any, str | None] = field(default_factory=dict)


@dataclass
class _Context:
    """What the walk found, and what the checks learnt that later checks use."""

    root: Path
    files: list[str]  # every file under root, relative POSIX paths (markers included)
    markers: list[Path] = field(default_factory=list)  # folders with a readable marker
    bad_markers: list[Path] = field(default_factory=list)  # a .omniaudit.json that is not a readable marker
    datasets: list[_Dataset] = field(default_factory=list)  # given ones first
    predictions: list[Path] = field(default_factory=list)
    audits: list[Path] = field(default_factory=list)  # audit.json files
    scorecards: list[Path] = field(default_factory=list)  # folders with scorecard.json
    leftovers: list[str] = field(default_factory=list)  # omniaudit temporaries and locks
    examined: set[Path] = field(default_factory=set)  # files whose contents a check covered
    digested: set[Path] = field(default_factory=set)  # predictions files a scorecard's recorded digest matched

    def shown(self, path: Path, folder: bool = False) -> str:
        """A path as the findings name it: relative to the folder checked (folders with a trailing /)."""
        try:
            rel = path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)
        return "." if rel == "." else rel + ("/" if folder else "")


def _leftover(rel: str) -> str | None:
    """The omniaudit temporary, lock or judge journal ``rel`` lies in (or is), or None."""
    parts = rel.split("/")
    for i, part in enumerate(parts):
        if OWN_TEMPORARY.match(part) or JOURNAL.match(part):
            return "/".join(parts[: i + 1])
    return None


def _first_record(path: Path) -> dict | None:
    """The first JSON object of a JSONL file (None when it has none or cannot be read)."""
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    record = json.loads(line)
                    return record if isinstance(record, dict) else None
    except (OSError, ValueError):
        return None
    return None


def _is_predictions(path: Path) -> bool:
    """A predictions file: rows of ``omniaudit judge`` (provenance), of another harness (id + raw), or an lmms-eval
    ``--log_samples`` file (doc_id + filtered_resps)."""
    if path.suffix.lower() not in PREDICTION_SUFFIXES or not path.is_file():
        return False
    first = _first_record(path) or {}
    return "provenance" in first or {"id", "raw"} <= set(first) or {"doc_id", "filtered_resps"} <= set(first)


def _dataset(folder: Path, shown: str) -> _Dataset:
    """The folder as a dataset: its card's configs, their sealed and current fingerprints (InputError when its
    README.md is not a card with configs)."""
    from omniaudit.data_builders.fingerprint import config_fingerprint
    from omniaudit.data_builders.hub import card_configs, sealed_fingerprints

    configs = card_configs(folder)
    return _Dataset(folder, shown, sealed_fingerprints(folder), {c: config_fingerprint(folder, c) for c in configs})


def _survey(root: Path, given: Iterable[str | Path]) -> tuple[_Context, list[Finding]]:
    """Walk ``root``: markers, datasets, predictions, audits, scorecards, leftovers; the datasets given are read too.
    A card that cannot be read is a failed finding."""
    if root.is_file():  # one file received (a predictions file)
        ctx = _Context(root.parent, [root.name])
    else:
        ctx = _Context(root, list_files(root) + ([MARKER] if (root / MARKER).exists() else []))
    findings = []
    for text in given:
        ctx.datasets.append(_given_dataset(text))
    seen = {d.folder.resolve() for d in ctx.datasets}
    for rel in ctx.files:
        if (top := _leftover(rel)) is not None:
            if top not in ctx.leftovers:
                ctx.leftovers.append(top)
            continue
        path = ctx.root / rel
        if path.name == MARKER:
            (ctx.markers if read_marker(path.parent) is not None else ctx.bad_markers).append(path.parent)
        elif path.name == "README.md" and path.parent.resolve() not in seen:
            try:
                found = _dataset(path.parent, ctx.shown(path.parent, folder=True))
            except InputError as exc:  # a card (YAML front matter) beside Parquet files, unreadable: a failure
                card = path.read_text(encoding="utf-8", errors="replace").startswith("---\n")
                if card and any(f.startswith(rel.removesuffix("README.md")) and f.endswith(".parquet")
                                for f in ctx.files):
                    findings.append(Finding(FAILED, "dataset", ctx.shown(path.parent, True), f"its card: {exc}"))
                continue
            ctx.datasets.append(found)
        elif path.name == "audit.json":
            ctx.audits.append(path)
        elif path.name == "scorecard.json":
            ctx.scorecards.append(path.parent)
        elif _is_predictions(path):
            ctx.predictions.append(path)
    return ctx, findings


def _given_dataset(text: str | Path) -> _Dataset:
    """A dataset given with --dataset: a folder, or a Hub repo id in the local cache (InputError otherwise)."""
    from omniaudit.data_builders.fingerprint import local_dataset

    folder = local_dataset(text)
    if folder is None:
        raise InputError("--dataset: not a folder, nor a Hub dataset repo in the local cache", file=text)
    try:
        found = _dataset(folder, str(text))
    except InputError as exc:
        raise InputError(f"--dataset: not a dataset folder written by omniaudit ({exc.message})", file=text) from exc
    return found


# ----------------------------------------------------------------------------------------------------- the checks
def check_marker(ctx: _Context, folder: Path) -> list[Finding]:
    """A marker's own consistency, and every file it lists present (no symbolic link in its place)."""
    where = ctx.shown(folder, folder=True)
    marker = read_marker(folder) or {}
    try:
        files = marker_files(folder, marker)
    except InputError as exc:
        return [Finding(FAILED, "marker", where, f"marker: {exc.message}")]
    listed = marker["files"]
    outside = [f for f in listed if f.startswith("/") or ".." in f.split("/")]
    if outside:
        return [Finding(FAILED, "marker", where, f"marker: lists paths outside its folder ({_names(outside)})")]
    findings = []
    missing = [f for f in files if not (folder / f).exists() and not (folder / f).is_symlink()]
    links = [f for f in files if (folder / f).is_symlink()]
    if missing:
        findings.append(Finding(FAILED, "marker", where, f"marker: {len(missing)} of the {len(files)} files it lists "
                                                         f"are missing ({_names(missing)})"))
    if links:
        findings.append(Finding(FAILED, "marker", where, f"marker: listed files are symbolic links, which omniaudit "
                                                         f"never writes ({_names(links)})"))
    if not findings:
        findings.append(Finding(VERIFIED, "marker", where, f"marker: all {len(files)} files it lists are present "
                                                           f"(written by omniaudit {marker.get('version')}, "
                                                           f"`{marker.get('command')}`)"))
    return findings


def check_not_ours(ctx: _Context, folder: Path) -> list[Finding]:
    """Files in a marked folder that its marker does not list (and no marker inside it claims)."""
    findings = []
    for entry in foreign_entries(folder):
        rel = ctx.shown(entry)
        if _leftover(rel) is not None or _under_marker(ctx, entry, below=folder):
            continue
        nested = [m for m in ctx.markers if m.is_relative_to(entry)]
        strays = ([entry / f for f in list_files(entry) if not any((entry / f).is_relative_to(m) for m in nested)]
                  if nested else [entry])
        for stray in strays:
            kind = " (a folder)" if stray.is_dir() and not stray.is_symlink() else ""
            findings.append(Finding(CANNOT, "files", ctx.shown(stray, folder=bool(kind)),
                                    f"not ours{kind}: the marker of {ctx.shown(folder, folder=True)} does not list "
                                    "it (added after omniaudit wrote the folder)"))
    return findings


def check_dataset(ctx: _Context, dataset: _Dataset) -> list[Finding]:
    """Each config's files against the fingerprint sealed in the card; a path-mode config's clips against the
    digests its rows record."""
    from omniaudit.data_builders.fingerprint import config_files
    from omniaudit.data_builders.hub import card_configs

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
                         f"{_names(names)})")
        else:
            said(VERIFIED, f"its {len(files)} Parquet file(s) are as built ({now})")
        if any(p.startswith("media/") for _, p in patterns[config]):
            findings.append(_check_media(ctx, dataset, config))
    ctx.examined.add(dataset.folder / "README.md")
    return findings


def _check_media(ctx: _Context, dataset: _Dataset, config: str) -> Finding:
    """A path-mode config: every clip its rows name against the SHA-256 the row records."""
    from omniaudit.data_builders.media_store import MEDIA_DIR, verify_media

    ctx.examined.update((dataset.folder / MEDIA_DIR).glob("*"))
    try:
        n = verify_media(dataset.folder, config)
    except (InputError, ValueError, KeyError, OSError) as exc:  # pyarrow's errors are ValueErrors or OSErrors
        return Finding(FAILED, "media", dataset.shown, f"config '{config}': {exc}")
    return Finding(VERIFIED, "media", dataset.shown, f"config '{config}': the {n} clip(s) its rows name match the "
                                                     "SHA-256 each row records")


def check_predictions_file(ctx: _Context, path: Path) -> list[Finding]:
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
        return [Finding(FAILED, "predictions", where, _refused(exc, where))]
    if PROVENANCE not in raw.columns:
        return [Finding(CANNOT, "predictions", where, UNKNOWN)]
    records = list(_provenance_records(raw, PROVENANCE))
    configs = tuple(dict.fromkeys(str((r.get("dataset") or {}).get("config")) for r in records))
    made_on = _made_on(ctx, where, raw[[PROVENANCE]], rows, configs, records)
    try:
        checked = check_predictions(raw, where, None, configs, partial=True, rows=rows)
    except InputError as exc:  # the dataset's finding too, unless it is the same refusal (rows of several runs)
        what = _refused(exc, where)
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


def _made_on(ctx: _Context, where: str, provenance, rows: list[int], configs: tuple[str, ...],
             records: list[dict]) -> Finding:
    """The answers were made on the build of the dataset at hand (``check_predictions`` on the provenance alone)."""
    from omniaudit.predictions import check_predictions

    meta = [r.get("dataset") or {} for r in records]
    dataset = _dataset_for(ctx, meta)
    names = ", ".join(f"config '{m.get('config')}' of {m.get('name')} ({m.get('fingerprint')})" for m in meta)
    if dataset is None:
        return Finding(CANNOT, "predictions", where, f"dataset not at hand: the answers were made on {names}; put "
                                                     "the dataset in the folder or pass --dataset PATH")
    try:
        checked = check_predictions(provenance.copy(), where, dataset.folder, configs, partial=True, rows=rows)
    except InputError as exc:
        return Finding(FAILED, "predictions", where, _refused(exc, where))
    absent = [n for n in checked.notes if "not at hand" in n]
    if absent:
        return Finding(CANNOT, "predictions", where, absent[0])
    return Finding(VERIFIED, "predictions", where, f"made on this build of {dataset.shown}: {names}")


def _row_hashes(ctx: _Context, where: str, raw, rows: list[int], records: list[dict]) -> list[Finding]:
    """The rows' ``doc_hash`` / ``prompt_hash``: what they bind (:func:`~omniaudit.predictions.
    check_row_hashes`; their presence and agreement among an item's rows were checked with the file). Each row's
    ``doc_hash`` is recomputed when the dataset build the provenance names is at hand; ``prompt_hash`` never is."""
    from omniaudit.predictions import PROVENANCE, ROW_HASHES, check_row_hashes

    if not any(name in raw.columns for name in ROW_HASHES):
        return [Finding(CANNOT, "predictions", where, "its rows carry no doc_hash / prompt_hash (written before "
                                                      "omniaudit recorded them): which item and prompt each answer "
                                                      "was made for rests on the provenance alone")]
    prompt = Finding(CANNOT, "predictions", where, "each row's prompt_hash is not recomputed (that needs the judge's "
                                                   "runner): only that every row of an item has the same one")
    meta = [r.get("dataset") or {} for r in records]
    dataset = _dataset_for(ctx, meta)
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
        return [Finding(FAILED, "predictions", where, _refused(exc, where)), prompt]
    return [Finding(VERIFIED, "predictions", where, f"row hashes: each row's doc_hash is its item's in "
                                                    f"{dataset.shown}, recomputed from the dataset's rows (the item's "
                                                    "text, options, labels and media sizes)"), prompt]


def _dataset_for(ctx: _Context, meta: list[dict]) -> _Dataset | None:
    """The dataset a provenance names: one whose files have its fingerprint, else one whose card sealed it (files
    changed since), else one of its name with its configs (another build); None when none is at hand."""
    def fingerprints(d: _Dataset) -> bool:
        return all(m.get("fingerprint") and d.now.get(m.get("config")) == m.get("fingerprint") for m in meta)

    def sealed(d: _Dataset) -> bool:
        return all(m.get("fingerprint") and d.sealed.get(m.get("config")) == m.get("fingerprint") for m in meta)

    def named(d: _Dataset) -> bool:
        return all(d.folder.name == m.get("name") and m.get("config") in d.now for m in meta)

    for test in (fingerprints, sealed, named):
        found = [d for d in ctx.datasets if test(d)]
        if found:
            return found[0]
    return None


def check_audit(ctx: _Context, path: Path) -> list[Finding]:
    """An audit.json: the omniaudit version that wrote it, and the predictions and dataset builds its provenance
    names against the files found here."""
    from omniaudit.evaluation.audit_outputs import SCHEMA_VERSION, read_audit

    where = ctx.shown(path)
    ctx.examined.add(path)
    try:
        audit = read_audit(path.parent, newer=True)
    except InputError as exc:
        return [Finding(FAILED, "audit", where, exc.message)]
    schema = audit.get("schema") if isinstance(audit, dict) else None
    if not isinstance(schema, dict):
        return [Finding(CANNOT, "audit", where, "no schema record (written before audit.json recorded its inputs): "
                                                "its inputs cannot be checked"), Finding(CANNOT, "audit", where,
                                                                                         NOT_RECOMPUTED)]
    findings = [_code_version(where, schema.get("omniaudit"), f"`{schema.get('command')}`")]
    if isinstance(schema.get("version"), int) and schema["version"] > SCHEMA_VERSION:
        findings.append(Finding(CANNOT, "audit", where, f"written in audit.json schema {schema['version']}, newer "
                                                        f"than the {SCHEMA_VERSION} this omniaudit reads"))
    summaries = list(_summaries(audit))
    for summary in summaries:
        findings.append(_audit_read(ctx, where, summary, path.parent))
    builds = {(str(s["dataset"].get("config")), str(s["dataset"].get("fingerprint"))): s["dataset"]
              for s in summaries if s.get("known") and isinstance(s.get("dataset"), dict)}
    findings += [_audit_dataset(ctx, where, meta) for meta in builds.values()]
    recorded = {Path(str(s.get("file"))).name for s in summaries}
    for name in _input_names((schema.get("inputs") or {}).get("predictions")):
        if Path(name).name not in recorded:
            findings.append(Finding(CANNOT, "audit", where, f"input {name}: audit.json records no provenance of it, "
                                                            "so it cannot be matched to a file here"))
    return [*findings, Finding(CANNOT, "audit", where, NOT_RECOMPUTED)]


def _code_version(where: str, version, who: str) -> Finding:
    if version == __version__:
        return Finding(VERIFIED, "audit", where, f"written by omniaudit {version} ({who}), the version here")
    return Finding(CANNOT, "audit", where, f"written by omniaudit {version} ({who}); this is omniaudit {__version__}: "
                                           "rerun here, its numbers may differ")


def _summaries(tree) -> Iterator[dict]:
    """Every predictions file's provenance summary in an audit.json (``FileProvenance.summary``), wherever the audit
    keeps them."""
    if isinstance(tree, dict):
        if {"file", "known", "rows"} <= set(tree):
            yield tree
            return
        for value in tree.values():
            yield from _summaries(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _summaries(value)


def _input_names(predictions) -> list[str]:
    """The predictions files a schema's inputs name (``NAME=PATH`` entries as their path)."""
    items = predictions if isinstance(predictions, list) else [predictions] if predictions else []
    return [str(p).split("=", 1)[1] if "=" in str(p) and "/" not in str(p).split("=", 1)[0] else str(p)
            for p in items]


def _audit_read(ctx: _Context, where: str, summary: dict, near: Path) -> Finding:
    """The predictions file an audit read (as its provenance summary records it) against the file found here."""
    from omniaudit.records import first_difference, value_at

    name = str(summary.get("file"))
    if not summary.get("known"):
        return Finding(CANNOT, "audit", where, f"it read {name} without provenance (not written by `omniaudit "
                                               "judge`): it cannot be matched to a run or a dataset build")
    here = _locate(ctx, name, near)
    if here is None:
        return Finding(CANNOT, "audit", where, f"predictions not at hand: it read {name} ({summary.get('judge')}, "
                                               f"config '{(summary.get('dataset') or {}).get('config')}'), which is "
                                               "not in the folder")
    first = _first_record(here) or {}
    record = cast(dict, first.get("provenance")) if isinstance(first.get("provenance"), dict) else {}
    fields = ("omniaudit", "dataset", "judge", "model", "sampling")
    said = {k: summary.get(k) for k in fields}
    found = {k: record.get(k) for k in fields}
    diff = first_difference(said, found)
    rows = _count_rows(here)
    if diff is not None:
        return Finding(FAILED, "audit", where, f"it read {name} with {diff} {value_at(said, diff)!r}; "
                                               f"{ctx.shown(here)} has {value_at(found, diff)!r}: not the file the "
                                               "audit read")
    if rows != summary.get("rows"):
        return Finding(FAILED, "audit", where, f"it read {summary.get('rows')} rows of {name}; {ctx.shown(here)} has "
                                               f"{rows}: not the file the audit read")
    return Finding(VERIFIED, "audit", where, f"it read {ctx.shown(here)}: the same run ({summary.get('judge')}, "
                                             f"dataset build, sampling) and the same {rows} rows")


def _locate(ctx: _Context, recorded: str, near: Path) -> Path | None:
    """The predictions file found here that an audit in ``near`` recorded: the path relative to the audit's folder
    (how audit.json names a file inside it), else a file of the same name, the one with the longest common tail of
    the recorded path (``models/NAME/reference.jsonl``), then the nearest to the audit's folder (a scorecard's
    ``models/NAME/AUDIT/`` read ``models/NAME/*.jsonl``; every model has a ``reference.jsonl``)."""
    if not Path(recorded).is_absolute() and (near / recorded) in ctx.predictions:
        return near / recorded
    tail = Path(recorded).parts

    def common(a: tuple[str, ...], b: tuple[str, ...]) -> int:
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    scored = [((common(p.parts[::-1], tail[::-1]), common(p.parent.parts, near.parts)), p) for p in ctx.predictions
              if tail and p.name == tail[-1]]
    return max(scored, key=lambda s: s[0])[1] if scored else None


def _count_rows(path: Path) -> int:
    with path.open(encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())


def _audit_dataset(ctx: _Context, where: str, meta: dict) -> Finding:
    """The dataset build an audit's answers were made on against the dataset found here."""
    config, fingerprint = meta.get("config"), meta.get("fingerprint")
    what = f"config '{config}' of {meta.get('name')} ({fingerprint})"
    dataset = _dataset_for(ctx, [meta])
    if not fingerprint:
        return Finding(CANNOT, "audit", where, f"the build of {what} is not recorded")
    if dataset is None:
        return Finding(CANNOT, "audit", where, f"dataset not at hand: the answers it read were made on {what}")
    now = dataset.now.get(config)
    if now != fingerprint:
        return Finding(FAILED, "audit", where, f"the answers it read were made on {what}; {dataset.shown} has "
                                               f"{now}")
    return Finding(VERIFIED, "audit", where, f"the answers it read were made on this build of {dataset.shown}: "
                                             f"{what}")


def check_scorecard(ctx: _Context, folder: Path) -> list[Finding]:
    """A scorecard OUT: the version that wrote it, and each model's predictions files against the SHA-256 its
    status.json recorded when the audits read them."""
    from omniaudit.data_builders.fingerprint import file_digest

    where = ctx.shown(folder / "scorecard.json")
    ctx.examined.add(folder / "scorecard.json")
    try:
        card = json.loads((folder / "scorecard.json").read_text(encoding="utf-8"))
        models = list(card.get("models") or {})
    except (OSError, ValueError, AttributeError) as exc:
        return [Finding(FAILED, "scorecard", where, f"not a readable scorecard.json ({exc})")]
    findings = [_code_version(where, card.get("omniaudit"), "`omniaudit scorecard`")]
    from omniaudit.verify_card import card_findings

    findings += card_findings(folder, where, card)
    kept = sorted(p.parent.name for p in (folder / "models").glob(f"*/{STATUS}"))
    for name in dict.fromkeys(models + kept):
        status = folder / "models" / name / STATUS
        shown = ctx.shown(status)
        ctx.examined.add(status)
        try:
            entries = json.loads(status.read_text(encoding="utf-8"))
            if not isinstance(entries, dict) or not all(isinstance(e, dict) for e in entries.values()):
                raise ValueError("expected an object of audits, each an object")
        except FileNotFoundError:
            findings.append(Finding(CANNOT, "scorecard", ctx.shown(status.parent, folder=True), f"model {name}: no "
                                    f"{STATUS}, so the digests of the predictions it was scored on are not recorded"))
            continue
        except (OSError, ValueError) as exc:
            findings.append(Finding(FAILED, "scorecard", shown, f"not a readable {STATUS} ({exc})"))
            continue
        for audit, entry in sorted(entries.items()):
            for config, digest in sorted((entry.get("predictions") or {}).items()):
                file = status.parent / f"{config}.jsonl"
                if not file.is_file():
                    findings.append(Finding(FAILED, "scorecard", ctx.shown(file), f"missing: {shown} records it as "
                                                                                  f"the {audit} answers of {name}"))
                elif file_digest(file) != digest:
                    findings.append(Finding(FAILED, "scorecard", ctx.shown(file), f"changed after the scorecard read "
                                            f"it: {shown} records SHA-256 {digest[:16]}..., the file is "
                                            f"{file_digest(file)[:16]}..."))
                else:
                    ctx.digested.add(file)
                    findings.append(Finding(VERIFIED, "scorecard", ctx.shown(file), f"the file the {audit} audit of "
                                            f"{name} read (SHA-256 as {shown} records)"))
    return findings


def check_unchecked(ctx: _Context, folder: Path) -> list[Finding]:
    """The files a marker lists whose contents no check covered (the marker names files; it holds no digests)."""
    try:
        files = [folder / f for f in marker_files(folder)]
    except InputError:
        return []
    left = [f for f in files if f.is_file() and f not in ctx.examined and f.name != MARKER
            and not _under_marker(ctx, f, below=folder)]
    if not left:
        return []
    return [Finding(CANNOT, "files", ctx.shown(folder, folder=True), f"contents of {len(left)} listed file(s) are not "
                    f"checked (the marker lists names, not digests): "
                    f"{_names([f.relative_to(folder).as_posix() for f in left])}")]


def check_unmarked(ctx: _Context) -> list[Finding]:
    """Files no marker covers and no check recognised (not a predictions file, not a dataset's card or data)."""
    findings = []
    known = set(ctx.predictions) | ctx.examined | {d.folder / "README.md" for d in ctx.datasets}
    for rel in ctx.files:
        path = ctx.root / rel
        if (_leftover(rel) is not None or path in known or _under_marker(ctx, path)
                or any(path.is_relative_to(m) for m in ctx.bad_markers)):
            continue
        findings.append(Finding(CANNOT, "files", rel, "not ours: no omniaudit marker lists it, and it is neither a "
                                                      "predictions file nor a dataset's card or data"))
    return findings


def _under_marker(ctx: _Context, path: Path, below: Path | None = None) -> bool:
    """Whether ``path`` lies in a marked folder (one strictly inside ``below``, when given)."""
    return any(path != m and path.is_relative_to(m) and (below is None or (m != below and m.is_relative_to(below)))
               for m in ctx.markers)


def _refused(exc: InputError, where: str) -> str:
    """An InputError about the file a finding names, without that name again (``row 5: column 'x': ...``)."""
    return str(exc).removeprefix(f"{where}:").strip()


def _names(names: list[str], limit: int = 5) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


# ------------------------------------------------------------------------------------------------------- verify
def verify(folder: str | Path, datasets: Iterable[str | Path] = ()) -> Verification:
    """Recheck ``folder`` (or one predictions file): every record it carries against its files (see the module
    docstring). ``datasets``: dataset folders (or cached Hub repo ids) the predictions may have been made on, beside
    those found in the folder. InputError when the folder or a dataset given is missing."""
    root = Path(folder)
    if not root.exists():
        raise InputError("not found: expected a folder (or a predictions file) to verify", file=folder)
    ctx, findings = _survey(root, datasets)
    for dataset in ctx.datasets:
        findings += check_dataset(ctx, dataset)
    for card in ctx.scorecards:  # first: the predictions checks need to know which files a digest vouches for
        findings += check_scorecard(ctx, card)
    for path in ctx.predictions:
        findings += check_predictions_file(ctx, path)
    for path in ctx.audits:
        findings += check_audit(ctx, path)
    for marked in ctx.markers:
        findings += check_marker(ctx, marked) + check_not_ours(ctx, marked)
    for marked in ctx.bad_markers:
        findings.append(Finding(FAILED, "marker", ctx.shown(marked, folder=True), f"marker: its {MARKER} is not a "
                                "readable omniaudit marker (not JSON, or not written by omniaudit)"))
    for marked in ctx.markers:
        findings += check_unchecked(ctx, marked)
    findings += check_unmarked(ctx)
    findings += [Finding(CANNOT, "files", top, "an omniaudit temporary or lock, left by a run that was killed (or is "
                                               "still running): part of no output") for top in ctx.leftovers]
    if any(f.status == VERIFIED for f in findings):
        findings.append(Finding(CANNOT, "authorship", ".", AUTHORSHIP))
    order = {"marker": 0, "dataset": 1, "media": 1, "scorecard": 2, "predictions": 3, "audit": 4, "files": 5}
    findings.sort(key=lambda f: (f.path.rstrip("/").split("/"), order.get(f.check, 9)))
    return Verification(root, findings)
