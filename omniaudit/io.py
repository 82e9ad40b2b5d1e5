"""Output folders and files: written atomically, marked as omniaudit's, and never put over what a user owns.

Every folder omniaudit writes goes through :func:`atomic_dir`: it is built in a temporary folder beside the target
and swapped in with one rename, and it carries a small marker file (``.omniaudit.json``: version, command and the
entries written). An existing target is replaced only when it is empty, an earlier omniaudit output (its marker, or
for outputs written before the marker existed, only files omniaudit writes), or when the caller allows it
(``--overwrite`` on the command line, ``overwrite=True`` or :func:`output_policy` in Python). The current folder
(``--out .``) is written into in place: omniaudit's own earlier entries are replaced, nothing else is touched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from omniaudit import __version__
from omniaudit.errors import InputError

MARKER = ".omniaudit.json"
# Entries an output folder written before the marker existed may hold (datasets, audit reports).
LEGACY_FILES = frozenset({"README.md", "build_info.json", "audit.json", "report.md", "predictions.csv", "graded.csv"})
LEGACY_SUFFIXES = (".png",)
# Our own temporaries (a work folder or temp folder left beside or inside a target by an interrupted run).
OWN_TEMPORARY = re.compile(r"^\.(omniaudit-(tmp|old)-.*|.*\.(tmp|old|work)-[^/]*)$")


@dataclass(frozen=True)
class OutputPolicy:
    """How outputs are written in the current context: may a foreign folder be replaced, which command wrote it."""

    overwrite: bool = False
    command: str | None = None


_POLICY: ContextVar[OutputPolicy | None] = ContextVar("omniaudit_output_policy", default=None)


def current_policy() -> OutputPolicy:
    return _POLICY.get() or OutputPolicy()


@contextmanager
def output_policy(overwrite: bool = False, command: str | None = None) -> Iterator[OutputPolicy]:
    """Within the block, every :func:`atomic_dir` / :func:`check_out_file` uses this policy (the CLI sets it)."""
    policy = OutputPolicy(overwrite, command)
    token = _POLICY.set(policy)
    try:
        yield policy
    finally:
        _POLICY.reset(token)


def _overwrite(overwrite: bool | None) -> bool:
    return current_policy().overwrite if overwrite is None else overwrite


def read_marker(folder: Path) -> dict | None:
    """The folder's omniaudit marker, or None when it has none (or an unreadable one)."""
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) and marker.get("written_by") == "omniaudit" else None


def _is_legacy_output(folder: Path, entries: list[Path]) -> bool:
    """An output written before the marker existed: only files omniaudit writes, and its signature files.

    Datasets: a card that names omniaudit plus config folders holding only Parquet files (and build_info.json);
    audits: audit.json + report.md (+ figures, predictions.csv, graded.csv, a dataset/ folder of the same kind).
    """
    configs = 0
    for e in entries:
        if e.is_dir() and not e.is_symlink():
            if e.name == "dataset" and _is_legacy_output(e, list(e.iterdir())):
                continue
            inside = list(e.iterdir())
            if not inside or not all(f.is_file() and f.suffix == ".parquet" for f in inside):
                return False
            configs += 1
        elif not (e.is_file() and (e.name in LEGACY_FILES or e.suffix in LEGACY_SUFFIXES)):
            return False
    names = {e.name for e in entries}
    if {"audit.json", "report.md"} <= names:
        return True
    if "README.md" in names and configs:
        try:
            return "omniaudit" in (folder / "README.md").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    return False


def _describe(entries: list[Path], limit: int = 5) -> str:
    names = sorted(e.name + ("/" if e.is_dir() else "") for e in entries)
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def foreign_entries(folder: Path) -> list[Path]:
    """Entries of an existing folder that omniaudit did not write (empty: the folder may be replaced)."""
    entries = [e for e in folder.iterdir() if not OWN_TEMPORARY.match(e.name)]
    if not entries:
        return []
    marker = read_marker(folder)
    if marker is not None:
        ours = set(marker.get("files", [])) | {MARKER}
        return [e for e in entries if e.name not in ours]
    return [] if _is_legacy_output(folder, entries) else entries


def check_out_dir(target: str | Path, overwrite: bool | None = None) -> Path:
    """The resolved output folder, after checking that writing it destroys nothing omniaudit did not write.

    Refused (InputError naming the folder), unless ``overwrite`` (default: the current :func:`output_policy`): an
    existing file; a non-empty folder holding entries omniaudit did not write; the output of another omniaudit
    command. Always refused: a folder that contains the current folder. The current folder itself is written into
    in place, so an earlier output there may sit beside the user's own files.
    """
    given = Path(target)
    path = given.expanduser().resolve()
    cwd = Path.cwd().resolve()
    if cwd != path and cwd.is_relative_to(path):
        raise InputError(f"the output folder contains the current folder ({cwd}); writing it would replace the "
                         f"folder you are working in: choose another output folder", file=given)
    if not path.exists() or _overwrite(overwrite):
        return path
    if not path.is_dir():
        raise InputError("the output folder exists and is a file; pass --overwrite to replace it, or choose another "
                         "folder", file=given)
    marker = read_marker(path)
    command = current_policy().command
    if marker and command and marker.get("command") not in (command, "python API"):
        raise InputError(f"the output folder holds the output of `{marker.get('command')}`, not of `{command}`; "
                         f"nothing was written. Pass --overwrite to replace it, or choose another folder", file=given)
    foreign = foreign_entries(path)
    if foreign and not (marker and path == cwd):  # in place, entries omniaudit did not write are left alone
        what = "holds files omniaudit did not write" if marker else "is not empty and is not an omniaudit output"
        replace = ("write into it anyway (entries with the names omniaudit writes are replaced, the others stay)"
                   if path == cwd else "replace the folder and everything in it")
        raise InputError(f"the output folder {what} ({_describe(foreign)}); nothing was written. Pass --overwrite "
                         f"to {replace}, or choose another (new or empty) folder", file=given)
    return path


def write_marker(folder: Path, command: str | None = None) -> None:
    """Write the marker listing the folder's entries (deterministic: no time stamp, so rebuilds are identical)."""
    files = sorted(e.name for e in folder.iterdir() if e.name != MARKER)
    marker = {"written_by": "omniaudit", "version": __version__,
              "command": command or current_policy().command or "python API", "files": files}
    (folder / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


@contextmanager
def atomic_dir(target: str | Path, overwrite: bool | None = None) -> Iterator[Path]:
    """Yield a fresh temporary folder beside ``target``; on success it replaces ``target`` in one rename.

    ``target`` is checked first (:func:`check_out_dir`): a folder with entries omniaudit did not write is refused
    unless ``overwrite``. On any exception the temporary folder is removed and an existing ``target`` is left
    untouched. When ``target`` is the current folder, the new entries are moved into it one by one instead (the
    current folder is never renamed away); entries omniaudit did not write stay.
    """
    target = check_out_dir(target, overwrite)
    in_place = target == Path.cwd().resolve()
    if in_place:
        tmp = Path(tempfile.mkdtemp(prefix=".omniaudit-tmp-", dir=target))
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)  # mkdtemp makes 0700; outputs get the permissions of an ordinary folder
    try:
        yield tmp
        write_marker(tmp)
        check_out_dir(target, overwrite)  # the target may have changed while we were building
        if in_place:
            _move_into(tmp, target, overwrite)
            return
        old = None
        if target.exists() or target.is_symlink():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            target.rename(old)
        tmp.rename(target)
        if old is not None:
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink()
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _move_into(tmp: Path, target: Path, overwrite: bool | None) -> None:
    """Move ``tmp``'s entries into ``target``: omniaudit's earlier entries go, entries it did not write stay."""
    old_marker = read_marker(target)
    ours = set(old_marker.get("files", [])) | {MARKER} if old_marker else {MARKER}
    new = sorted(e.name for e in tmp.iterdir())
    clash = [n for n in new if (target / n).exists() and n not in ours]
    if clash and not _overwrite(overwrite):
        raise InputError(f"the output folder already has {', '.join(clash)}, which omniaudit did not write; pass "
                         f"--overwrite to replace them, or choose another folder", file=target)
    trash = Path(tempfile.mkdtemp(prefix=".omniaudit-old-", dir=target))
    try:
        for name in sorted(ours - set(new)) + new:  # stale entries of the earlier output, then the ones replaced
            if (target / name).exists() or (target / name).is_symlink():
                (target / name).rename(trash / name)
        for name in new:
            (tmp / name).rename(target / name)
    finally:
        shutil.rmtree(trash, ignore_errors=True)


def looks_like(path: Path, columns: set[str]) -> bool:
    """Whether a JSONL file's first record has all ``columns`` (a predictions file written by omniaudit)."""
    try:
        with path.open(encoding="utf-8") as fh:
            first = fh.readline()
        return isinstance(record := json.loads(first), dict) and columns <= set(record)
    except (OSError, ValueError):
        return False


def check_out_file(target: str | Path, ours: Callable[[Path], bool], overwrite: bool | None = None) -> Path:
    """The output file's path, after checking that writing it destroys nothing omniaudit did not write.

    An existing file is replaced only when it is empty, ``ours(path)`` recognises it as an earlier output of the
    same kind, or ``overwrite``; a folder is always refused.
    """
    path = Path(target)
    if path.is_dir():
        raise InputError("the output path is a folder; expected a file name (e.g. predictions.jsonl)", file=path)
    if path.exists() and path.stat().st_size and not ours(path) and not _overwrite(overwrite):
        raise InputError("the output file exists and was not written by omniaudit; nothing was written. Pass "
                         "--overwrite to replace it, or choose another file name", file=path)
    return path


def _json_default(obj: object) -> object:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return None if not np.isfinite(obj) else float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def to_json(obj: object) -> str:
    """Stable, readable JSON (sorted keys are NOT used: key order follows the report's structure)."""
    return json.dumps(_sanitize(obj), indent=2, default=_json_default, allow_nan=False) + "\n"


def _sanitize(obj: object) -> object:
    # NaN/inf are not JSON; write null so every reader can parse the file.
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _sanitize(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_sanitize(v) for v in obj]
    return obj
