"""The one error type users see for bad input: it says where (file, row, field) and what was expected."""

from __future__ import annotations

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
