"""Output folders and files: written atomically, marked as omniaudit's, and never put over what a user owns.

Every folder omniaudit writes goes through :func:`atomic_dir`: it is built in a temporary folder beside the target
(``.NAME.tmp-PID-XXXX``, unique per process) and swapped in with one rename, and it carries a small marker file
(``.omniaudit.json``: version, command and every file written, as paths relative to the folder). An existing target
is replaced only when it is empty, when its marker says omniaudit wrote it for the same command and it holds no file
the marker does not list, or when the caller allows it (``--overwrite`` on the command line, ``overwrite=True`` or
:func:`output_policy` in Python). A folder without a marker (a user's folder, a dataset downloaded from the Hub) is
never replaced without ``--overwrite``. The current folder (``--out .``) is written into in place: omniaudit's own
earlier entries are replaced, nothing else is touched. A run killed halfway through that in-place swap is undone (or,
when its new output was already whole, finished) by the next command that checks the folder
(:func:`settle_killed_writes`): the folder always ends as one whole output, the earlier or the new.

Single files go through :func:`atomic_file` (a unique temporary file beside the target, renamed over it on success,
removed on failure). :func:`output_lock` (a ``.NAME.omniaudit-lock`` file beside the target, ``fcntl.flock``-ed) makes
a second process (or thread) writing the same output fail at once with a clear message instead of racing the first;
:func:`atomic_dir` holds it while it writes. Temporaries left by a killed run (their PID, in the name, is no longer
alive) are removed by the next run that writes the same target (:func:`clean_stale_temporaries`).

A write that fails for want of space, quota or permission (ENOSPC, EDQUOT, EROFS, EACCES, EPERM) is raised as an
OSError of the same kind naming the output file as the user will find it (not omniaudit's temporary) and what to do
(:func:`omniaudit.errors.write_error`); the command line prints it in one line and exits with 2.

The marker and the output policy are :mod:`omniaudit.outputs`, the in-place swap and its settling
:mod:`omniaudit.in_place`, the locks :mod:`omniaudit.locks`; their names are read through this module too.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from omniaudit.errors import InputError, temporary_of, writing
from omniaudit.in_place import move_into, settle_killed_writes, swap_pending
from omniaudit.locks import LOCK_SUFFIX, _pid_alive, clean_stale_temporaries, output_lock, remove_path  # noqa: F401
from omniaudit.outputs import (  # noqa: F401 - re-exported: the marker and the policy, read through omniaudit.io
    MARKER,
    OWN_TEMPORARY,
    SWAP_JOURNAL,
    OutputPolicy,
    current_policy,
    describe_entries,
    foreign_entries,
    list_files,
    marker_files,
    output_policy,
    overwrite_allowed,
    read_marker,
    write_marker,
)
from omniaudit.records import local_name, redact_paths, to_json  # noqa: F401 - re-exported


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


@contextmanager
def atomic_file(path: str | Path, *, lock: bool = False) -> Iterator[Path]:
    """Yield a unique temporary path beside ``path`` (``.NAME.tmp-PID-XXXX`` + the same suffix, so writers that
    pick a format from the name still work); on success it is renamed over ``path``, on any exception removed.

    The parent folder is created. Temporaries of ``path`` left by killed runs are removed first. ``lock``: hold
    :func:`output_lock` on ``path`` meanwhile (a second writer of the same file is refused). No overwrite check: pair
    it with :func:`check_out_file` where a user's file may be in the way.
    """
    path = Path(path)
    with writing(path), output_lock(path) if lock else nullcontext():  # a full disk: one line naming ``path``
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_stale_temporaries(path)
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.tmp-{os.getpid()}-", suffix=path.suffix, dir=path.parent)
        os.close(fd)
        tmp = Path(name)
        try:
            with temporary_of(tmp, path), writing(path):
                tmp.chmod(0o666 & ~_umask())  # mkstemp makes 0600; outputs get the permissions of an ordinary file
                yield tmp
                os.replace(tmp, path)
        finally:
            if tmp.exists() or tmp.is_symlink():
                remove_path(tmp)


# ---------------------------------------------------------------------------------------------------- out folders
def check_out_dir(target: str | Path, overwrite: bool | None = None) -> Path:
    """The resolved output folder, after checking that writing it destroys nothing omniaudit did not write.

    Refused (InputError naming the folder), unless ``overwrite`` (default: the current :func:`output_policy`): an
    existing file; a non-empty folder without an omniaudit marker; a marked folder holding files its marker does not
    list; the output of another omniaudit command. Always refused: a folder that contains the current folder. The
    current folder itself is written into in place, so an earlier output there may sit beside the user's own files
    (but not inside the entries omniaudit replaces).
    """
    given = Path(target)
    path = given.expanduser().resolve()
    cwd = Path.cwd().resolve()
    if cwd != path and cwd.is_relative_to(path):
        raise InputError(f"the output folder contains the current folder ({cwd}); writing it would replace the "
                         f"folder you are working in: choose another output folder", file=given)
    settle_killed_writes(path)  # a run killed while replacing it: one whole output again (the earlier or the new)
    if not path.exists() or overwrite_allowed(overwrite):
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
    if foreign and marker and path == cwd:  # in place: the user's files stay, unless inside an entry we replace
        foreign = [e for e in foreign if e.parent != path]
    if foreign:
        what = (f"holds files omniaudit did not write ({describe_entries(path, foreign)})" if marker else
                f"is not empty and is not an omniaudit output (it holds {describe_entries(path, foreign)} and no "
                f"{MARKER} marker)")
        replace = ("write into it anyway (entries with the names omniaudit writes are replaced, the others stay)"
                   if path == cwd else "replace the folder and everything in it")
        raise InputError(f"the output folder {what}; nothing was written. Pass --overwrite to {replace}, or choose "
                         f"another (new or empty) folder", file=given)
    return path


@contextmanager
def atomic_dir(target: str | Path, overwrite: bool | None = None) -> Iterator[Path]:
    """Yield a fresh temporary folder beside ``target``; on success it replaces ``target`` in one rename.

    ``target`` is checked first (:func:`check_out_dir`): a folder with entries omniaudit did not write is refused
    unless ``overwrite``. The target's :func:`output_lock` is held throughout (a second writer is refused), and
    temporaries of killed runs are removed first. On any exception the temporary folder is removed and an existing
    ``target`` is left untouched. Before the swap, a Hub dataset card (``README.md`` with YAML ``configs``) gets its
    data fingerprint (:func:`omniaudit.data_builders.fingerprint.seal_card`) and the marker is written. When ``target``
    is the current folder, the new entries are moved into it one by one instead (the current folder is never renamed
    away); entries omniaudit did not write stay.
    """
    target = check_out_dir(target, overwrite)
    in_place = target == Path.cwd().resolve()
    with writing(target), output_lock(target):  # the lock creates the parent folder; a full disk: one line
        clean_stale_temporaries(target, inside=in_place)
        target = check_out_dir(target, overwrite)  # under the lock: what we check is what we replace
        if in_place:
            tmp = Path(tempfile.mkdtemp(prefix=f".omniaudit-tmp-{os.getpid()}-", dir=target))
        else:
            tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=target.parent))
        try:
            with temporary_of(tmp, target), writing(target):  # a failed write names the file as it will be
                tmp.chmod(0o777 & ~_umask())  # mkdtemp makes 0700; outputs get the permissions of an ordinary folder
                yield tmp
                if (tmp / "README.md").is_file():
                    from omniaudit.data_builders.fingerprint import seal_card

                    seal_card(tmp)
                write_marker(tmp)
            check_out_dir(target, overwrite)  # the target may have changed while we were building
            if in_place:
                move_into(tmp, target, overwrite)
                return
            old = None
            if target.exists() or target.is_symlink():
                old = target.with_name(f".{target.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
                target.rename(old)
            try:
                tmp.rename(target)
            except BaseException:
                if old is not None:
                    old.rename(target)
                raise
            if old is not None:
                remove_path(old)
        finally:
            if tmp.exists() and not swap_pending(target, tmp):
                shutil.rmtree(tmp, ignore_errors=True)


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
    if path.exists() and path.stat().st_size and not ours(path) and not overwrite_allowed(overwrite):
        raise InputError("the output file exists and was not written by omniaudit; nothing was written. Pass "
                         "--overwrite to replace it, or choose another file name", file=path)
    return path
