"""The one error type users see for bad input: it says where (file, row, field) and what was expected; and a failed
write of an output (disk full, read-only, permission denied) named after the output (:func:`write_error`)."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass
class InputError(ValueError):
    """Bad input, located as precisely as we can: ``file:row: column 'x': message (found 'v')``."""

    message: str
    file: str | Path | None = None
    row: int | None = None
    column: str | None = None
    value: object = None

    def __str__(self) -> str:
        where = ":".join(str(p) for p in (self.file, f"row {self.row}" if self.row is not None else None) if p)
        parts = [f"{where}:" if where else "", f"column '{self.column}':" if self.column else "", self.message]
        if self.value is not None:
            parts.append(f"(found {self.value!r})")
        return " ".join(p for p in parts if p)


@contextmanager
def located(file: str | Path | None) -> Iterator[None]:
    """Attach ``file`` to InputErrors raised inside that do not name a file yet (e.g. too few rows to fold)."""
    try:
        yield
    except InputError as exc:
        if exc.file is None and file is not None:
            exc.file = file
        raise


class ServiceError(RuntimeError):
    """A remote service (a judge's server) kept failing; the message says what was tried and how to resume."""


# ------------------------------------------------------------------------------------------- failed writes, located
# What a failed write of an output means to whoever runs omniaudit, and what to do about it. Only these errors are
# located (named after the output being written): any other OSError (a missing input, a broken pipe) is left as is.
_WRITE_HINTS = {errno.ENOSPC: "free some space or choose another output (--out)",
                errno.EDQUOT: "free some space within your quota or choose another output (--out)",
                errno.EROFS: "choose an output on a writable disk (--out)",
                errno.EACCES: "check the folder's permissions or choose another output (--out)",
                errno.EPERM: "check the folder's permissions or choose another output (--out)"}
_LOCATED = "_omniaudit_output"  # set on an OSError once it names the output (outer writers leave it alone)
_TEMPORARIES: dict[Path, Path] = {}  # temporary file or folder being written -> the output it becomes
_TEMPORARIES_GUARD = threading.Lock()


@contextmanager
def temporary_of(tmp: str | Path, target: str | Path) -> Iterator[None]:
    """While the block runs, a failed write in ``tmp`` is named as the same path in ``target`` (what it becomes)."""
    tmp = Path(tmp)
    with _TEMPORARIES_GUARD:
        _TEMPORARIES[tmp] = Path(target)
    try:
        yield
    finally:
        with _TEMPORARIES_GUARD:
            _TEMPORARIES.pop(tmp, None)


def shown_output(path: str | Path) -> Path:
    """``path`` as the user will find it: a path inside a temporary being written, as the same path in its output."""
    path = Path(path)
    for _ in range(8):  # a temporary file inside a temporary folder: twice
        with _TEMPORARIES_GUARD:
            owner = next(((t, o) for t, o in _TEMPORARIES.items() if path == t or path.is_relative_to(t)), None)
        if owner is None:
            break
        path = owner[1] / path.relative_to(owner[0]) if path != owner[0] else owner[1]
    return path


def write_error(exc: OSError, target: str | Path) -> OSError:
    """``exc`` (an OSError raised while omniaudit wrote ``target``) as an OSError of the same kind and errno that names
    the output being written and what to do (``the disk is full (/x/out/report.md): No space left on device; free
    some space or choose another output (--out)`` on the command line). ``exc`` itself when it is not a failed write
    (another errno), names a file that is not part of this output (an input read meanwhile), or names it already.

    A path inside a temporary being written (:func:`temporary_of`) is named as the same path in its output (where
    the user will look for it). A write that names no file (``write()`` on a full disk) or names one of omniaudit's
    own temporaries or locks is named as ``target``; a folder above ``target`` (one that could not be created) as
    itself.
    """
    if exc.errno not in _WRITE_HINTS or getattr(exc, _LOCATED, False):
        return exc
    target = shown_output(target)
    named = exc.filename
    named = shown_output(os.fsdecode(named)) if isinstance(named, str | bytes | os.PathLike) else None
    if named is None or named.parent == target.parent and named.name.startswith(f".{target.name}."):
        shown = target  # no file named, or our own lock or temporary beside the target
    elif named == target or named.is_relative_to(target):
        inner = named.relative_to(target).parts
        shown = target if any(p.startswith(".omniaudit-") for p in inner) else named
    elif target.is_relative_to(named):  # a folder above the output
        shown = named
    else:
        return exc
    located = OSError(exc.errno, f"{exc.strerror or os.strerror(exc.errno)}; {_WRITE_HINTS[exc.errno]}", str(shown))
    setattr(located, _LOCATED, True)
    return located


@contextmanager
def writing(target: str | Path) -> Iterator[None]:
    """Raise a failed write inside the block as :func:`write_error` naming ``target`` (the original as its cause)."""
    try:
        yield
    except OSError as exc:
        located = write_error(exc, target)
        if located is exc:
            raise
        raise located from exc
