"""Who is writing an output right now, and what a killed run left behind.

:func:`output_lock` (a ``.NAME.omniaudit-lock`` file beside the target, ``fcntl.flock``-ed) makes a second process (or
thread) writing the same output fail at once with a clear message instead of racing the first. Temporaries are named
after the process writing them (``.NAME.tmp-PID-XXXX``); those of a process no longer alive are removed by the next
run that writes the same target (:func:`clean_stale_temporaries`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from omniaudit.errors import InputError, writing

LOCK_SUFFIX = ".omniaudit-lock"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, someone else's
        return True
    return True


def remove_path(path: Path) -> None:
    """Remove a file, link or folder (gone already: nothing to do)."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass


def clean_stale_temporaries(target: str | Path, inside: bool = False) -> list[Path]:
    """Remove what a killed run left while writing ``target``: ``.NAME.tmp-PID-*`` / ``.NAME.old-PID-*`` beside it
    (``inside``: ``.omniaudit-tmp-PID-*`` / ``.omniaudit-old-PID-*`` in it) whose process PID is no longer alive.

    A stale ``.old-`` folder whose target is missing (a run killed between the two renames of the swap) is put back
    as the target rather than removed. Inside, a ``.omniaudit-old-PID-*`` folder (the earlier output of a run killed
    while swapping in place) and the ``.omniaudit-tmp-PID-*`` of the same run are left for
    :func:`omniaudit.io.settle_killed_writes`, which puts the earlier output back or finishes the swap. Returns what
    was removed or restored.
    """
    target = Path(target)
    if inside:
        folder, pattern = target, re.compile(r"^\.omniaudit-(tmp|old)-(\d+)-")
    else:
        folder, pattern = target.parent, re.compile(rf"^\.{re.escape(target.name)}\.(tmp|old)-(\d+)-")
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    olds = [m for e in entries if (m := pattern.match(e.name)) and m.group(1) == "old"] if inside else []
    swapping = {m.group(2) for m in olds}  # in place: swaps io.settle_killed_writes settles
    done = []
    for entry in entries:
        m = pattern.match(entry.name)
        if not m or _pid_alive(int(m.group(2))) or m.group(2) in swapping:
            continue
        if m.group(1) == "old" and not inside and not (target.exists() or target.is_symlink()):
            entry.rename(target)
        else:
            remove_path(entry)
        done.append(entry)
    return done


_HELD: dict[str, list[int]] = {}  # resolved target -> [owning thread, depth]
_HELD_GUARD = threading.Lock()


def lock_path(target: str | Path) -> Path:
    """The lock file of an output: ``.NAME.omniaudit-lock`` beside it."""
    target = Path(target).expanduser().resolve()
    return target / LOCK_SUFFIX if target.name == "" else target.parent / f".{target.name}{LOCK_SUFFIX}"


def _refuse(target: Path, lock: Path, holder: str) -> InputError:
    who = f" (process {holder})" if holder.isdigit() else ""
    return InputError(f"another omniaudit run{who} is writing this output right now (lock file {lock.name}); nothing "
                      f"was written. Wait for it to finish, or choose another output", file=target)


def _acquire(lock: Path, target: Path) -> int:
    """An open descriptor of ``lock`` holding its exclusive flock (the file still at its path), or InputError.

    On any failure nothing is left held: the descriptor is closed, and a lock file we hold the flock of is removed
    (a disk-full or interrupted acquisition leaves no lock behind). Our PID is written into the file for a refused
    second run to name; on a full disk the lock works without it (the write of the output then says what failed).
    """
    for _ in range(20):
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            raise _refuse(target, lock, holder) from None
        except BaseException:
            os.close(fd)
            raise
        current = None
        try:
            try:
                current = os.stat(lock)
            except FileNotFoundError:
                current = None
            if current is not None and os.path.samestat(os.fstat(fd), current):
                os.ftruncate(fd, 0)
                try:
                    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                except OSError as exc:
                    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                        raise
                return fd
        except BaseException:
            if current is not None:
                _unlink_held(lock, fd)
            os.close(fd)
            raise
        os.close(fd)  # the previous holder removed the file after we opened it: take the new one
    raise _refuse(target, lock, "")


def _unlink_held(lock: Path, fd: int) -> None:
    """Remove ``lock`` if it is still the file ``fd`` holds the flock of (never another process's lock file)."""
    try:
        if os.path.samestat(os.fstat(fd), os.stat(lock)):
            os.unlink(lock)
    except OSError:
        pass


@contextmanager
def output_lock(target: str | Path) -> Iterator[Path]:
    """Hold the exclusive lock of an output (a folder or a file) for the block; yields the lock file's path.

    The lock is ``.NAME.omniaudit-lock`` beside ``target`` (``fcntl.flock``: released by the kernel when the process
    dies, so a killed run never blocks the next one; inside an existing target folder whose parent is not writable)
    and removed when the block ends. Another process, or another
    thread of this one, that asks for the same target meanwhile gets an InputError ("another omniaudit run is writing
    this output ...") at once; the same thread may nest it (re-entrant). Folders created for the lock file and still
    empty afterwards are removed again.
    """
    target = Path(target).expanduser().resolve()
    key, me = str(target), threading.get_ident()
    lock = lock_path(target)
    with _HELD_GUARD:
        held = _HELD.get(key)
        if held is not None and held[0] == me:
            held[1] += 1
            nested = True
        elif held is not None:
            raise _refuse(target, lock, str(os.getpid()))
        else:
            nested = False
    if nested:
        try:
            yield lock
        finally:
            with _HELD_GUARD:
                _HELD[key][1] -= 1
        return
    created = [p for p in (lock.parent, *lock.parent.parents) if not p.exists()]
    try:
        with writing(target):  # a full disk or a read-only folder: one line naming the output
            lock.parent.mkdir(parents=True, exist_ok=True)
            fd = _acquire(lock, target)
    except PermissionError:
        _remove_empty(created)
        if not target.is_dir():
            raise
        created, lock = [], target / LOCK_SUFFIX  # e.g. `--out .` in a folder whose parent is not writable
        with writing(target):
            fd = _acquire(lock, target)
    except BaseException:
        _remove_empty(created)
        raise
    with _HELD_GUARD:
        if key in _HELD:  # another thread of this process took it between our check and the flock
            os.close(fd)
            raise _refuse(target, lock, str(os.getpid()))
        _HELD[key] = [me, 1]
    try:
        yield lock
    finally:
        with _HELD_GUARD:
            _HELD.pop(key, None)
        try:
            os.unlink(lock)  # while still holding it, so a waiting process notices the file is gone and retries
        except OSError:  # gone already, or not removable now: the flock goes with the descriptor, never blocks
            pass
        finally:
            os.close(fd)
        _remove_empty(created)


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:  # deepest first
        try:
            folder.rmdir()
        except OSError:
            return
