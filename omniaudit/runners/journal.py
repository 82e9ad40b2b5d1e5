"""A judge run's journal: its answers kept as they come, beside the predictions file (``.NAME.journal-KEY.jsonl``), so
a killed run resumes where it stopped; the kept answers are checked against the requests the rerun would send."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import IO

from omniaudit.errors import InputError
from omniaudit.records import canonical
from omniaudit.row_hashes import ROW_HASHES


def journal_path(out: Path, provenance: dict, shard: tuple[int, int] | None) -> Path:
    """Where a run keeps its answers as they come (a rerun of the same run resumes from it)."""
    key = hashlib.sha256(canonical({"provenance": provenance, "shard": shard}).encode()).hexdigest()[:16]
    return out.with_name(f".{out.name}.journal-{key}.jsonl")


class Journal:
    """A run's journal, opened (``append``: after the kept answers, else truncated) only when its first answer is
    written: a run that answers nothing, even one killed before its first answer, creates no file.

    A failed write (a full disk, a read-only folder) is raised naming the predictions file the journal belongs to
    (``out``; by default the one its name says: ``.NAME.journal-KEY.jsonl`` beside ``NAME``), never as a bare
    ``No space left on device`` (:func:`omniaudit.errors.writing`)."""

    def __init__(self, path: Path, append: bool, out: Path | None = None) -> None:
        self.fh: IO[str] | None
        self.path, self.append, self.fh = path, append, None
        self.out = out if out is not None else path.with_name(path.name[1:].rpartition(".journal-")[0] or path.name)

    def _writing(self):
        from omniaudit.errors import writing

        return writing(self.out)

    def write(self, line: str) -> None:
        with self._writing():
            if self.fh is None:
                self.fh = self.path.open("a" if self.append else "w", encoding="utf-8")
            self.fh.write(line)

    def flush(self) -> None:
        if self.fh is not None:
            with self._writing():
                self.fh.flush()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc) -> None:
        if self.fh is not None:
            with self._writing():
                self.fh.close()


def read_journal(path: Path, lines: dict[tuple[int, int], int] | None = None) -> dict[tuple[int, int], dict]:
    """Answers kept by an interrupted run: (run, position) -> row; a line torn by a kill is ignored. ``lines``, when
    given, is filled with each kept answer's line number in the journal."""
    kept: dict[tuple[int, int], dict] = {}
    if not path.is_file():
        return kept
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            entry = json.loads(line)
            key = (int(entry["run"]), int(entry["pos"]))
            kept[key] = entry["row"]
        except (ValueError, KeyError, TypeError):
            continue
        if lines is not None:
            lines[key] = n
    return kept


def check_kept_hashes(kept: dict[tuple[int, int], dict], lines: dict[tuple[int, int], int], journal: Path,
                       out: Path, expected: Callable[[int], dict[str, str]]) -> None:
    """Refuse to resume answers the journal kept for another item or request than this run would send: a kept row
    whose ``doc_hash`` / ``prompt_hash`` differs from ``expected(position)`` (or that carries none), named by its line
    in the journal. The dataset's item or the rendered prompt changed since (another template, runner option or
    omniaudit): its answers would be filed under the wrong request."""
    for key in sorted(kept, key=lambda k: lines.get(k, 0)):
        run, pos = key
        row, now = kept[key], expected(pos)
        changed = [name for name in ROW_HASHES if row.get(name) != now[name]]
        if not changed:
            continue
        what = " and ".join("the dataset's item" if n == "doc_hash" else "the rendered prompt" for n in changed)
        said = ("carries no " + " / ".join(changed) + " (kept by an omniaudit that did not record them)"
                if all(n not in row for n in changed) else
                f"has {', '.join(f'{n} {row.get(n)!r}' for n in changed)}, but this run would send "
                f"{', '.join(f'{n} {now[n]!r}' for n in changed)}: {what} changed since it was answered")
        raise InputError(f"the answer kept for item '{row.get('id')}' (run {run}) in this journal of {out} {said}. "
                         f"Its answers cannot be resumed: rerun with a fresh --out (or remove this journal)",
                         file=journal, row=lines.get(key), column=changed[0])


def drop_empty_journals(out: Path) -> None:
    """Remove the empty journals of ``out`` (a run that answered nothing: nothing to resume), under its lock."""
    try:
        entries = list(out.parent.iterdir())
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if name.startswith(f".{out.name}.journal-") and name.endswith(".jsonl") and entry.is_file() \
                and not entry.is_symlink() and not entry.stat().st_size:
            entry.unlink(missing_ok=True)

