"""``omniaudit verify``'s checks of an ``audit.json``: the omniaudit version that wrote it, and every predictions file
and dataset build its provenance names against the files found here (its numbers are not recomputed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import cast

from omniaudit.errors import InputError
from omniaudit.verify_findings import CANNOT, FAILED, VERIFIED, Finding, code_version
from omniaudit.verify_survey import Context, dataset_for, first_record

NOT_RECOMPUTED = ("its numbers are not recomputed, and it records no digest of the files it read: rerun the audit on "
                  "these inputs to reproduce them")


def check_audit(ctx: Context, path: Path) -> list[Finding]:
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
    findings = [code_version(where, schema.get("omniaudit"), f"`{schema.get('command')}`")]
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


def _audit_read(ctx: Context, where: str, summary: dict, near: Path) -> Finding:
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
    first = first_record(here) or {}
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


def _locate(ctx: Context, recorded: str, near: Path) -> Path | None:
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


def _audit_dataset(ctx: Context, where: str, meta: dict) -> Finding:
    """The dataset build an audit's answers were made on against the dataset found here."""
    config, fingerprint = meta.get("config"), meta.get("fingerprint")
    what = f"config '{config}' of {meta.get('name')} ({fingerprint})"
    dataset = dataset_for(ctx, [meta])
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
