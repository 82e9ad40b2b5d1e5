"""What an output folder is to omniaudit: the policy it is written under (:func:`output_policy`: may a folder
omniaudit did not write be replaced, which command writes) and its marker (``.omniaudit.json``: version, command and
every file written, :func:`write_marker`), which says which files are omniaudit's and which are not
(:func:`foreign_entries`)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from omniaudit import __version__
from omniaudit.errors import InputError, writing

MARKER = ".omniaudit.json"
# What an in-place swap is about to do (in its ``.omniaudit-old-*`` folder): which temporary holds the new output and
# which entries it moves in, so that a run killed halfway can be undone by the next (:func:`settle_killed_writes`).
SWAP_JOURNAL = ".omniaudit-swap.json"
# Our own temporaries and locks (a work folder, temp folder or lock left beside or inside a target by a run).
OWN_TEMPORARY = re.compile(r"^\.(omniaudit-(tmp|old)-.*|omniaudit-lock|.*\.(tmp|old|work)-[^/]*|.*\.omniaudit-lock)$")


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


def overwrite_allowed(overwrite: bool | None) -> bool:
    return current_policy().overwrite if overwrite is None else overwrite


def read_marker(folder: Path) -> dict | None:
    """The folder's omniaudit marker, or None when it has none (or an unreadable one)."""
    try:
        marker = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) and marker.get("written_by") == "omniaudit" else None


def list_files(folder: Path) -> list[str]:
    """Every file under ``folder`` (symbolic links included, never followed) as sorted relative POSIX paths, the
    folder's own marker left out."""
    folder = Path(folder)
    out = []
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        for d in [d for d in dirs if (here / d).is_symlink()]:  # a link to a folder is an entry, not a subtree
            dirs.remove(d)
            files.append(d)
        out += [(here / f).relative_to(folder).as_posix() for f in files]
    return sorted(p for p in out if p != MARKER)


def marker_files(folder: Path, marker: dict | None = None) -> list[str]:
    """The files the marker of ``folder`` says omniaudit wrote, as relative POSIX paths (InputError without one).

    Markers of omniaudit before 0.x listed top-level entries only; an entry that is a folder stands for the Parquet
    files directly inside it (the only files a build ever wrote into a subfolder), never for anything else.
    """
    folder = Path(folder)
    marker = read_marker(folder) if marker is None else marker
    if marker is None:
        raise InputError(f"no {MARKER} marker: not a folder written by omniaudit (or written by a version that did "
                         f"not mark its outputs); rebuild it with omniaudit", file=folder)
    listed = marker.get("files")
    if not isinstance(listed, list) or not all(isinstance(f, str) for f in listed):
        raise InputError(f"the {MARKER} marker has no list of files", file=folder / MARKER)
    files = []
    for rel in listed:
        path = folder / rel
        if path.is_dir() and not path.is_symlink():  # an old marker's folder entry
            files += sorted(f.relative_to(folder).as_posix() for f in path.glob("*.parquet") if f.is_file())
        else:
            files.append(rel)
    return sorted(set(files))


def write_marker(folder: Path, command: str | None = None, *, files: list[str] | None = None) -> None:
    """Write the marker listing every file under the folder (``files``: this list instead), as relative POSIX
    paths (deterministic: no time stamp, so rebuilds are identical)."""
    marker = {"written_by": "omniaudit", "version": __version__,
              "command": command or current_policy().command or "python API",
              "files": sorted(files) if files is not None else list_files(folder)}
    with writing(Path(folder) / MARKER):
        (Path(folder) / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def _covered(rel: str, listed: set[str]) -> bool:
    """Whether ``rel`` is a listed file or lies inside a listed entry (an old marker's folder entry)."""
    parts = rel.split("/")
    return any("/".join(parts[:i]) in listed for i in range(1, len(parts) + 1))


def describe_entries(folder: Path, entries: list[Path], limit: int = 5) -> str:
    names = sorted(e.relative_to(folder).as_posix() + ("/" if e.is_dir() and not e.is_symlink() else "")
                   for e in entries)
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def foreign_entries(folder: Path) -> list[Path]:
    """What in an existing folder omniaudit did not write (empty: the folder may be replaced).

    Without a marker: every top-level entry (omniaudit's own temporaries and locks aside). With one: every file
    (at any depth) that the marker does not list.
    """
    folder = Path(folder)
    entries = [e for e in folder.iterdir() if not OWN_TEMPORARY.match(e.name)]
    if not entries:
        return []
    marker = read_marker(folder)
    if marker is None:
        return entries
    listed = set(marker.get("files") or []) | {MARKER}
    tops = {f.split("/")[0] for f in listed}
    foreign = []
    for entry in entries:
        if entry.name in listed:  # a file we wrote, or an old marker's folder entry
            continue
        if entry.name in tops and entry.is_dir() and not entry.is_symlink():  # a folder we wrote files into
            foreign += [entry / f for f in list_files(entry) if not _covered(f"{entry.name}/{f}", listed)]
        else:  # nothing of ours in it: the entry as a whole
            foreign.append(entry)
    return foreign
