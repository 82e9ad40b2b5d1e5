"""How the command line names its input files: ``[NAME=]FILE``, read by one rule everywhere.

Every option that takes named files (``audit preference --predictions``, ``audit protocols --predictions``, ``audit
composition --predictions`` / ``--attention``, ``report odin``, ``report alignment-tax``, the tracker's input list)
reads its arguments with :func:`parse_named_files`, in this order:

1. the whole text names an existing file (or, where a command takes folders, an existing folder): it is that path,
   unnamed, whatever it holds (``sweep/lr=1e-4/omni.reference.jsonl`` is a file, not ``sweep/lr`` = ``1e-4/...``);
   its name is the caller's default (the file's stem);
2. otherwise the text is cut at the first ``=`` whose right-hand side names an existing file (folder): ``NAME=FILE``.
   NAME may hold ``/`` (``Qwen/Qwen2.5-Omni-7B=run.jsonl``); it must not be empty;
3. otherwise it is an error naming the spec (no such file, as a whole nor after any ``=``).

A :class:`pathlib.Path` argument is always a path (rule 1), never cut. Each caller keeps its own grouping (files with
one NAME are one judge, one run); only the reading of a spec is shared.

Composition runs name their model: ``NAME@RUN`` (:func:`split_model_run`) makes run RUN of model NAME, cut at the
*last* ``@``, so NAME may hold ``/`` (a Hub repo id: ``Qwen/Qwen2.5-Omni-7B@r1=run1.jsonl``); a NAME without ``@`` is
its own model.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from omniaudit.errors import InputError


class NamedFile(NamedTuple):
    """One ``[NAME=]FILE`` spec: ``name`` (the NAME given, else the path's stem), ``path`` and ``explicit`` (a NAME was
    given)."""

    name: str
    path: Path
    explicit: bool


def _exists(path: Path, folders: bool) -> bool:
    return path.is_file() or (folders and path.is_dir())


def _cut(text: str, folders: bool, what: str) -> NamedFile | None:
    """``NAME=PATH`` cut at the first ``=`` whose right-hand side exists, or None."""
    for cut, char in enumerate(text):
        rest = text[cut + 1:]
        if char == "=" and rest and _exists(Path(rest), folders):
            name = text[:cut].strip()
            if not name:
                raise InputError(f"expected NAME={what} with a non-empty NAME", value=text)
            return NamedFile(name, Path(rest), True)
    return None


def parse_named_file(spec: str | Path, *, folders: bool = False, what: str = "FILE",
                     noun: str | None = None) -> NamedFile:
    """One spec by the rule of the module docstring (``folders``: an existing folder counts as a path too; ``what``:
    how the syntax calls the path, e.g. ``PATH``; ``noun``: what the error calls it, e.g. ``judge file``)."""
    kind = "file or folder" if folders else "file"
    noun = noun or kind
    if isinstance(spec, Path):
        if not _exists(spec, folders):
            raise InputError(f"{noun} not found", file=spec)
        return NamedFile(spec.stem, spec, False)
    text = str(spec)
    if text and _exists(Path(text), folders):
        return NamedFile(Path(text).stem, Path(text), False)
    named = _cut(text, folders, what)
    if named is not None:
        return named
    after = [text[i + 1:] for i, c in enumerate(text) if c == "="]
    tried = f", nor is any part after an '=' ({', '.join(repr(a) for a in after)})" if after else ""
    raise InputError(f"{noun} not found: '{text}' is no existing {kind}{tried}; expected {what} or NAME={what}")


def parse_named_files(specs: str | Path | Iterable[str | Path] | None, *, folders: bool = False,
                      what: str = "FILE", noun: str | None = None) -> list[NamedFile]:
    """Every spec in order (one string or path is one spec; None is none); see :func:`parse_named_file`."""
    if specs is None:
        return []
    if isinstance(specs, str | Path):
        specs = [specs]
    return [parse_named_file(s, folders=folders, what=what, noun=noun) for s in specs]


def split_model_run(name: str) -> tuple[str, str | None]:
    """``MODEL@RUN`` -> (MODEL, RUN), cut at the last ``@``; a name without ``@`` -> (name, None). MODEL may hold
    ``/`` and ``@``; both parts must be non-empty."""
    model, at, run = name.rpartition("@")
    if not at:
        return name, None
    if not model.strip() or not run.strip():
        raise InputError("expected MODEL@RUN with a non-empty MODEL and RUN (MODEL may be a Hub repo id such as "
                         "Qwen/Qwen2.5-Omni-7B)", value=name)
    return model, run


def model_or_named_file(spec: str | Path) -> tuple[str, Path | None]:
    """``MODEL=FILE`` or a bare ``MODEL`` (``--attention``): an existing path (file or folder: a model folder may
    hold ``=``) is a bare MODEL; else the text is cut at the first ``=`` whose right-hand side is an existing file;
    a text with ``=`` and no such file is an error (a Hub repo id holds no ``=``); otherwise a bare MODEL (a repo
    id). Returns (MODEL, FILE or None)."""
    text = str(spec)
    if isinstance(spec, Path) or Path(text).exists() or "=" not in text:
        if not text.strip():
            raise InputError("expected MODEL or MODEL=PREDICTIONS", value=text)
        return text, None
    named = _cut(text, False, "PREDICTIONS")
    if named is None:
        raise InputError("expected MODEL=PREDICTIONS naming an existing predictions file, or a bare MODEL (a model "
                         "folder or Hub repo id, which holds no '=')", value=text)
    return named.name, named.path
