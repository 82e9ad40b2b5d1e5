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
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from omniaudit import __version__
from omniaudit.errors import InputError, temporary_of, writing
from omniaudit.locks import LOCK_SUFFIX, _pid_alive, clean_stale_temporaries, output_lock, remove_path  # noqa: F401
from omniaudit.records import local_name, redact_paths, to_json  # noqa: F401 - re-exported

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


def _overwrite(overwrite: bool | None) -> bool:
    return current_policy().overwrite if overwrite is None else overwrite


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


# ------------------------------------------------------------------------------------------------------ the marker
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


def _describe(folder: Path, entries: list[Path], limit: int = 5) -> str:
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
    if foreign and marker and path == cwd:  # in place: the user's files stay, unless inside an entry we replace
        foreign = [e for e in foreign if e.parent != path]
    if foreign:
        what = (f"holds files omniaudit did not write ({_describe(path, foreign)})" if marker else
                f"is not empty and is not an omniaudit output (it holds {_describe(path, foreign)} and no {MARKER} "
                f"marker)")
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
    data fingerprint (:func:`omniaudit.data_builders.hub.seal_card`) and the marker is written. When ``target`` is
    the current folder, the new entries are moved into it one by one instead (the current folder is never renamed
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
                    from omniaudit.data_builders.hub import seal_card

                    seal_card(tmp)
                write_marker(tmp)
            check_out_dir(target, overwrite)  # the target may have changed while we were building
            if in_place:
                _move_into(tmp, target, overwrite)
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
            if tmp.exists() and not _swap_pending(target, tmp):
                shutil.rmtree(tmp, ignore_errors=True)


def _move_into(tmp: Path, target: Path, overwrite: bool | None) -> None:
    """Move ``tmp``'s entries into ``target``: omniaudit's earlier entries go, entries it did not write stay.

    The earlier entries are first moved into a ``.omniaudit-old-PID-*`` folder in ``target`` (with a journal of the
    swap), then the new ones in, the new marker last: ``target`` holds the new output once its marker is there. On
    any exception (Ctrl-C included) the swap is undone at once; a run killed halfway is undone (or, when the new output
    was complete, finished) by the next run (:func:`settle_killed_writes`). Never a mix of the two outputs.
    """
    old_marker = read_marker(target)
    ours = {f.split("/")[0] for f in old_marker.get("files", [])} | {MARKER} if old_marker else {MARKER}
    new = sorted(e.name for e in tmp.iterdir())
    clash = [n for n in new if (target / n).exists() and n not in ours]
    inside = [e for e in (foreign_entries(target) if old_marker else []) if e.parent != target]  # in our folders
    if (clash or inside) and not _overwrite(overwrite):
        what = ", ".join(clash + [e.relative_to(target).as_posix() for e in inside])
        raise InputError(f"the output folder already has {what}, which omniaudit did not write; pass --overwrite to "
                         f"replace them, or choose another folder", file=target)
    trash = Path(tempfile.mkdtemp(prefix=f".omniaudit-old-{os.getpid()}-", dir=target))
    done = False
    try:
        (trash / SWAP_JOURNAL).write_text(json.dumps({"tmp": tmp.name, "new": new}) + "\n", encoding="utf-8")
        for name in sorted(ours - set(new)) + new:  # stale entries of the earlier output, then the ones replaced
            if _exists(target / name):
                (target / name).rename(trash / name)
        for name in [n for n in new if n != MARKER] + [MARKER]:  # the marker last: then the new output is whole
            (tmp / name).rename(target / name)
        done = True
    except BaseException:
        kept = _undo_swap(target, trash, tmp, new)[2]  # the earlier output back; if that fails, the next run does it
        if kept is not None:  # something of that name appeared meanwhile
            warnings.warn(f"{target}: the earlier output could not be put back whole after the write was interrupted: "
                          f"{', '.join(sorted(_entries_named(kept)))} are in {kept.name}", UserWarning, stacklevel=4)
        raise
    finally:
        if done:
            remove_path(trash)


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _swap_pending(target: Path, tmp: Path) -> bool:
    """Whether an in-place swap from ``tmp`` into ``target`` was interrupted and not undone (``tmp`` is then kept
    for :func:`settle_killed_writes`)."""
    if tmp.parent != target:
        return False
    for trash in target.glob(f".omniaudit-old-{os.getpid()}-*"):
        journal = _read_journal(trash)
        if journal is None or journal["tmp"] == tmp.name:
            return True
    return False


def _read_journal(trash: Path) -> dict | None:
    try:
        journal = json.loads((trash / SWAP_JOURNAL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(journal, dict) and isinstance(journal.get("tmp"), str) and isinstance(journal.get("new"), list)
    return journal if ok else None


def _undo_swap(target: Path, trash: Path, tmp: Path | None,
               new: list[str]) -> tuple[list[str], list[str], Path | None]:
    """Undo an interrupted in-place swap: the new entries already moved into ``target`` go back into ``tmp``, the
    earlier ones come back from ``trash`` (then removed, with ``tmp``). Returns (new entries taken out, earlier
    entries put back, where earlier entries that could not come back are kept: an entry of that name is in
    ``target`` again). That folder (``.omniaudit-kept-*``) is not omniaudit's to remove: it counts as the user's."""
    taken, back, stuck = [], [], []
    if tmp is not None and tmp.is_dir():
        for name in reversed(new):  # moved into target = no longer in tmp (an entry still in tmp was never moved)
            if not _exists(tmp / name) and _exists(target / name):
                (target / name).rename(tmp / name)
                taken.append(name)
    for entry in sorted(trash.iterdir()):
        if entry.name == SWAP_JOURNAL:
            continue
        if _exists(target / entry.name):
            stuck.append(entry.name)
        else:
            entry.rename(target / entry.name)
            back.append(entry.name)
    kept = None
    if not stuck:
        remove_path(trash)
    else:  # never taken for a finished swap and removed: a folder that blocks a replacement until someone looks
        remove_path(trash / SWAP_JOURNAL)
        kept = trash.with_name(trash.name.replace(".omniaudit-old-", ".omniaudit-kept-", 1))
        trash.rename(kept)
    if tmp is not None:
        remove_path(tmp)
    return taken, back, kept


def _entries_named(folder: Path) -> list[str]:
    return [e.name for e in _entries(folder)]


def _tops(marker: dict | None) -> list[str]:
    files = marker.get("files") if marker else None
    return sorted({f.split("/")[0] for f in files if isinstance(f, str)} | {MARKER}) if isinstance(files, list) \
        else [MARKER]


def settle_killed_writes(folder: str | Path) -> list[Path]:
    """Finish what runs killed while replacing the output ``folder`` left half done, so the folder holds one whole
    output again (the earlier one or the new one, never a mix) and the next run is not refused. Returns what was
    settled; each output put back gets one warning naming the folder.

    A run killed between the two renames of a swap: the earlier output (``.NAME.old-PID-*`` beside ``folder``) is
    put back when ``folder`` is missing (:func:`clean_stale_temporaries`). A run killed while swapping its output
    into the folder in place (``--out .``): the earlier entries wait in ``.omniaudit-old-PID-*``; when the new output
    was incomplete (its marker not moved in yet) they are put back and the new entries removed, when it was complete
    the earlier copy is removed. Only leftovers of processes no longer alive are touched; a live run's are its own.
    """
    folder = Path(folder)
    beside = re.compile(rf"^\.{re.escape(folder.name)}\.old-(\d+)-")
    killed = [e for e in _entries(folder) if _killed(e.name, r"^\.omniaudit-old-(\d+)-") and e.is_dir()]
    restore = not _exists(folder) and any(_killed(e.name, beside) for e in _entries(folder.parent))
    if not killed and not restore:
        return []
    settled = []
    with output_lock(folder):
        if restore:
            settled += clean_stale_temporaries(folder)
            if _exists(folder):
                warnings.warn(f"{folder}: an omniaudit run was killed while replacing this output; the earlier "
                              f"output was put back", UserWarning, stacklevel=3)
        for trash in killed:
            if trash.is_dir():
                settled += _settle_in_place(folder, trash)
    return settled


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _killed(name: str, pattern: str | re.Pattern) -> bool:
    m = re.match(pattern, name)
    return m is not None and not _pid_alive(int(m.group(1)))


def _settle_in_place(folder: Path, trash: Path) -> list[Path]:
    """One interrupted in-place swap (``trash``: its ``.omniaudit-old-PID-*`` folder): undone or finished."""
    pid = trash.name.split("-")[2]
    journal = _read_journal(trash)
    if journal is not None:
        tmp = folder / journal["tmp"]
    else:  # killed before its journal was whole (nothing moved yet), or an omniaudit that kept none
        tmps = [e for e in _entries(folder) if e.name.startswith(f".omniaudit-tmp-{pid}-") and e.is_dir()]
        tmp = tmps[0] if len(tmps) == 1 else None
    tmp = tmp if tmp is not None and tmp.is_dir() and not tmp.is_symlink() else None
    waiting = tmp is not None and (tmp / MARKER).is_file()  # the new marker not moved in yet: the new output is not
    if tmp is None:  # the new output is gone: put back what is there of the earlier one (never over anything)
        new, complete = [], not [e for e in trash.iterdir() if e.name != SWAP_JOURNAL]
    elif journal is not None:
        new, complete = [str(n) for n in journal["new"]], not waiting
    elif waiting:  # no journal: earlier versions moved the new marker first, so nothing new was moved in yet
        new, complete = _tops(read_marker(tmp)), False
    else:  # no journal, the new marker moved in: complete once the temporary is empty
        new, complete = _tops(read_marker(folder)), not _entries(tmp)
    if complete:
        remove_path(trash)
        if tmp is not None:
            remove_path(tmp)
        return [trash]
    taken, back, kept = _undo_swap(folder, trash, tmp, new)
    killed = f"{folder}: an omniaudit run was killed while replacing its output here"
    if kept is not None:
        warnings.warn(f"{killed}; its incomplete output was removed, but {', '.join(sorted(_entries_named(kept)))} "
                      f"of the earlier output could not be put back (an entry of that name is here again): they are "
                      f"in {kept.name}", UserWarning, stacklevel=4)
    elif back:
        warnings.warn(f"{killed}; its output was incomplete: the earlier output was put back", UserWarning,
                      stacklevel=4)
    elif taken:
        warnings.warn(f"{killed}; its output was incomplete and was removed (there was no earlier output)",
                      UserWarning, stacklevel=4)
    return [trash]  # nothing moved yet: the folder was as it was, nothing to say


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
