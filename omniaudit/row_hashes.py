"""The row hashes of a predictions file (``doc_hash`` / ``prompt_hash``, :func:`omniaudit.runners.rows.row_hashes`):
the item each answer was made for and the request it was sent. Every row carries both or none does, the rows of one
item agree (:class:`RowHashes`), and with the dataset at hand each row's ``doc_hash`` is recomputed from its item
(:func:`check_row_hashes`); files written before the fields existed pass unchecked."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from omniaudit.errors import InputError
from omniaudit.records import missing

ROW_HASHES = ("doc_hash", "prompt_hash")  # per row: the item it answers and the request it was sent (runners.rows)


def _is_digest(value) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def row_item(row: dict, config: str | None = None) -> tuple:
    """The item a predictions row answers, as its rows are joined: (config, id, order), ids as text, a missing order
    as None."""
    order = row.get("order")
    return (config, str(row.get("id")), None if missing(order) else str(order))


class RowHashes:
    """The row hashes (:data:`ROW_HASHES`) of a predictions file's rows, or of the parts of one run, fed row by row
    (:meth:`add`): refused (InputError naming the file and row) when some rows carry them and others do not, when a
    value is not a SHA-256 hex digest, or when two rows of one item (:func:`row_item`, or the ``key`` given) disagree
    on either hash (answers made for another version of the item, or another prompt, spliced in). Rows without any
    (files written before the fields existed) are accepted as they are."""

    def __init__(self, what: str = "row") -> None:
        self.what = what
        self.first: tuple[bool, str, int | None] | None = None  # (carries the hashes, file, row) of the first row
        self.seen: dict[tuple, tuple[dict[str, str], str, int | None]] = {}

    @property
    def present(self) -> bool:
        return bool(self.first and self.first[0])

    def add(self, row: dict, file: str | Path, n: int | None, key: tuple | None = None) -> None:
        file = str(file)
        have = [name for name in ROW_HASHES if not missing(row.get(name))]
        if have and len(have) < len(ROW_HASHES):
            lacks = next(name for name in ROW_HASHES if name not in have)
            raise InputError(f"this {self.what} has {have[0]} but no {lacks}: a row carries both or neither",
                             file=file, row=n, column=lacks)
        carries = bool(have)
        if self.first is None:
            self.first = (carries, file, n)
        elif carries != self.first[0]:
            with_, without = ((file, n), self.first[1:]) if carries else (self.first[1:], (file, n))
            raise InputError(f"some rows carry doc_hash / prompt_hash and others do not (row {with_[1]} of "
                             f"{with_[0]} does, row {without[1]} of {without[0]} does not): rows written by "
                             "different omniaudit versions, or edited, are not one run", file=file, row=n,
                             column="doc_hash")
        if not carries:
            return
        for name in ROW_HASHES:
            if not _is_digest(row[name]):
                raise InputError(f"expected {name} to be a SHA-256 hex digest (64 lowercase hex characters)",
                                 file=file, row=n, column=name, value=row[name])
        key = row_item(row) if key is None else key
        hashes = {name: row[name] for name in ROW_HASHES}
        earlier = self.seen.setdefault(key, (hashes, file, n))
        for name in ROW_HASHES:
            if earlier[0][name] != hashes[name]:
                where = f"row {earlier[2]}" + ("" if earlier[1] == file else f" of {earlier[1]}")
                thing = "item" if name == "doc_hash" else "rendered prompt"
                raise InputError(f"item '{row.get('id')}' has {name} {hashes[name]!r} here but {earlier[0][name]!r} "
                                 f"in {where}: its answers were made for another version of the {thing}; the rows "
                                 "of one item must agree", file=file, row=n, column=name)


_DOC_HASHES: dict[tuple, dict] = {}  # (dataset, config, fingerprint) -> items.doc_hashes, kept for this process


def _dataset_doc_hashes(dataset: str | Path, config: str) -> dict | None:
    """:func:`~omniaudit.runners.items.doc_hashes` of a config at hand (None when its fingerprint cannot be
    computed: not at hand), computed once per build in this process."""
    from omniaudit.data_builders.fingerprint import fingerprint_of
    from omniaudit.runners.items import doc_hashes

    fingerprint = fingerprint_of(dataset, config)
    if fingerprint is None:
        return None
    key = (str(Path(dataset).resolve()) if Path(dataset).exists() else str(dataset), config, fingerprint)
    if key not in _DOC_HASHES:
        if len(_DOC_HASHES) >= 8:
            _DOC_HASHES.clear()
        _DOC_HASHES[key] = doc_hashes(dataset, config)
    return _DOC_HASHES[key]


def check_row_hashes(raw: pd.DataFrame, file: str | Path, rows: list[int], records: list | None = None,
                     dataset: str | Path | None = None) -> bool:
    """The rows' ``doc_hash`` / ``prompt_hash`` (``omniaudit judge`` writes them, see
    :func:`~omniaudit.runners.rows.row_hashes`): every row carries both or none does (:class:`RowHashes`:
    files written before the fields existed pass unchecked), the rows of one item agree, and, with ``dataset`` at
    hand, each row's ``doc_hash`` is that of its item (config, id, order) in the dataset, recomputed
    (:func:`~omniaudit.runners.items.doc_hashes`): a row whose item has changed is refused, naming the file
    and row. A row whose item the dataset lacks is left to the audit's own join. ``prompt_hash`` is not recomputed
    (that needs the runner). ``records``: each row's provenance (its config), where known. Returns whether the rows
    carry the hashes."""
    if not any(name in raw.columns for name in ROW_HASHES):
        return False
    file = str(file)
    configs = [(r.get("dataset") or {}).get("config") if isinstance(r, dict) else None for r in records] \
        if records is not None else [None] * len(raw)
    checked = RowHashes()
    table = raw.to_dict("records")
    for i, row in enumerate(table):
        checked.add(row, file, rows[i], row_item(row, configs[i]))
    if not checked.present or dataset is None:
        return checked.present
    expected: dict[str, dict | None] = {}
    for i, row in enumerate(table):
        config = configs[i]
        if config is None:
            continue
        if config not in expected:
            expected[config] = _dataset_doc_hashes(dataset, config)
        items = expected[config]
        key = row_item(row)[1:]
        if items is None or key not in items:
            continue
        if row["doc_hash"] not in items[key]:
            order = f" (order {key[1]})" if key[1] is not None else ""
            raise InputError(f"item '{key[0]}'{order} of config '{config}' is not the item this answer was made for: "
                             f"the row's doc_hash {row['doc_hash']!r} is not the dataset's "
                             f"{', '.join(map(repr, sorted(items[key])))} (its text, options, labels or media "
                             f"changed since the answers were made). Rerun `omniaudit judge` on this dataset, or "
                             "audit the build the answers were made on", file=file, row=rows[i], column="doc_hash")
    return True
