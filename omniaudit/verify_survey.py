"""What a folder handed to ``omniaudit verify`` holds (:func:`survey`): its markers, datasets (with each config's
sealed and current fingerprint), predictions files, audits, scorecards and the temporaries of killed runs, and what
the checks learn as they go (:class:`Context`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omniaudit.errors import InputError
from omniaudit.outputs import MARKER, OWN_TEMPORARY, list_files, read_marker
from omniaudit.verify_findings import FAILED, Finding

PREDICTION_SUFFIXES = (".jsonl", ".ndjson")
JOURNAL = re.compile(r"^\..+\.journal-[^/]*\.jsonl$")  # a judge run's journal (omniaudit.runners.journal.journal_path)


# ------------------------------------------------------------------------------------------------- what is there
@dataclass
class FoundDataset:
    """A dataset folder (found in the folder checked, or given) with each config's sealed and current fingerprint."""

    folder: Path
    shown: str
    # keyed by config name (Any: looked up with a provenance's config, which may be None)
    sealed: dict[Any, str] = field(default_factory=dict)
    now: dict[Any, str | None] = field(default_factory=dict)


@dataclass
class Context:
    """What the walk found, and what the checks learnt that later checks use."""

    root: Path
    files: list[str]  # every file under root, relative POSIX paths (markers included)
    markers: list[Path] = field(default_factory=list)  # folders with a readable marker
    bad_markers: list[Path] = field(default_factory=list)  # a .omniaudit.json that is not a readable marker
    datasets: list[FoundDataset] = field(default_factory=list)  # given ones first
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


def leftover(rel: str) -> str | None:
    """The omniaudit temporary, lock or judge journal ``rel`` lies in (or is), or None."""
    parts = rel.split("/")
    for i, part in enumerate(parts):
        if OWN_TEMPORARY.match(part) or JOURNAL.match(part):
            return "/".join(parts[: i + 1])
    return None


def first_record(path: Path) -> dict | None:
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
    first = first_record(path) or {}
    return "provenance" in first or {"id", "raw"} <= set(first) or {"doc_id", "filtered_resps"} <= set(first)


def _dataset(folder: Path, shown: str) -> FoundDataset:
    """The folder as a dataset: its card's configs, their sealed and current fingerprints (InputError when its
    README.md is not a card with configs)."""
    from omniaudit.data_builders.card import card_configs
    from omniaudit.data_builders.fingerprint import config_fingerprint, sealed_fingerprints

    configs = card_configs(folder)
    return FoundDataset(folder, shown, sealed_fingerprints(folder),
                        {c: config_fingerprint(folder, c) for c in configs})


def survey(root: Path, given: Iterable[str | Path]) -> tuple[Context, list[Finding]]:
    """Walk ``root``: markers, datasets, predictions, audits, scorecards, leftovers; the datasets given are read too.
    A card that cannot be read is a failed finding."""
    if root.is_file():  # one file received (a predictions file)
        ctx = Context(root.parent, [root.name])
    else:
        ctx = Context(root, list_files(root) + ([MARKER] if (root / MARKER).exists() else []))
    findings = []
    for text in given:
        ctx.datasets.append(_given_dataset(text))
    seen = {d.folder.resolve() for d in ctx.datasets}
    for rel in ctx.files:
        if (top := leftover(rel)) is not None:
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


def _given_dataset(text: str | Path) -> FoundDataset:
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


def under_marker(ctx: Context, path: Path, below: Path | None = None) -> bool:
    """Whether ``path`` lies in a marked folder (one strictly inside ``below``, when given)."""
    return any(path != m and path.is_relative_to(m) and (below is None or (m != below and m.is_relative_to(below)))
               for m in ctx.markers)


def dataset_for(ctx: Context, meta: list[dict]) -> FoundDataset | None:
    """The dataset a provenance names: one whose files have its fingerprint, else one whose card sealed it (files
    changed since), else one of its name with its configs (another build); None when none is at hand."""
    def fingerprints(d: FoundDataset) -> bool:
        return all(m.get("fingerprint") and d.now.get(m.get("config")) == m.get("fingerprint") for m in meta)

    def sealed(d: FoundDataset) -> bool:
        return all(m.get("fingerprint") and d.sealed.get(m.get("config")) == m.get("fingerprint") for m in meta)

    def named(d: FoundDataset) -> bool:
        return all(d.folder.name == m.get("name") and m.get("config") in d.now for m in meta)

    for test in (fingerprints, sealed, named):
        found = [d for d in ctx.datasets if test(d)]
        if found:
            return found[0]
    return None
