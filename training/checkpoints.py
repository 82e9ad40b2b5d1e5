"""Which checkpoint a training run resumes from: the run's (or the fold's) last complete one, never a torn one."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from omniaudit.errors import InputError

RESUME_AUTO = frozenset({"true", "yes", "1", "auto", "last"})
RESUME_NONE = frozenset({"", "false", "no", "0", "none"})
CHECKPOINT_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth")  # model, optimizer, scheduler, DeepSpeed states


def checkpoint_problem(path: str | Path) -> str | None:
    """Why a ``checkpoint-N`` folder cannot be resumed from (a kill mid-save left it torn), or None when it looks
    complete: ``trainer_state.json`` (the Trainer writes it last) missing, empty or not JSON; a model, optimizer or
    scheduler file (``*.safetensors``, ``*.bin``, ``*.pt``, ``*.pth``, at any depth) empty or truncated (a
    safetensors file shorter than its header says; a ``torch.save`` zip archive without its central directory)."""
    import struct
    import zipfile

    path = Path(path)
    state = path / "trainer_state.json"
    try:
        json.loads(state.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "no trainer_state.json"
    except (OSError, ValueError):
        return "trainer_state.json is empty or cut short"
    for f in sorted(path.rglob("*")):
        if f.suffix not in CHECKPOINT_WEIGHTS or not f.is_file():
            continue
        name = f.relative_to(path).as_posix()
        size = f.stat().st_size
        if size == 0:
            return f"{name} is empty"
        with f.open("rb") as fh:
            head = fh.read(8)
            if f.suffix == ".safetensors":
                n = struct.unpack("<Q", head)[0] if len(head) == 8 else size
                try:
                    header = json.loads(fh.read(n)) if 8 + n <= size else None
                    end = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
                except (ValueError, TypeError, KeyError, IndexError, AttributeError):
                    header, end = None, 0
                if header is None or 8 + n + end > size:
                    return f"{name} is cut short"
            elif head[:2] == b"PK" and not zipfile.is_zipfile(f):
                return f"{name} is cut short"
    return None


def resume_point(requested: str | bool | None, output_dir: str | Path,
                 run_dir: str | Path | None = None) -> str | None:
    """The checkpoint one run (or one fold) resumes from, or None to start afresh.

    ``requested`` is ``--resume_from_checkpoint``: ``true`` (or ``auto``) resumes from the last ``checkpoint-N`` in
    the run's own folder and starts afresh when it has none (so a job array can always pass it); a path is a
    checkpoint folder, or a run folder whose last checkpoint is meant. ``run_dir`` is the folder of one fold of a
    multi-fold run (``output_dir/foldK``): a checkpoint inside it is where that fold resumes; the other folds (and
    a path naming the whole run) resume each from its own last checkpoint.

    The last checkpoint is the last *complete* one: a torn ``checkpoint-N`` (a kill mid-save:
    :func:`checkpoint_problem`) is skipped with a warning naming it and why, and the previous one is used. A
    checkpoint named explicitly that is torn is an InputError.
    """
    import re

    def last(folder: Path) -> str | None:
        if not folder.is_dir():
            return None
        found = [(int(m.group(1)), p) for p in folder.iterdir()
                 if (m := re.fullmatch(r"checkpoint-(\d+)", p.name)) and p.is_dir()]
        for _, checkpoint in sorted(found, key=lambda x: x[0], reverse=True):
            problem = checkpoint_problem(checkpoint)
            if problem is None:
                return str(checkpoint)
            warnings.warn(f"{checkpoint}: incomplete checkpoint ({problem}; a run killed while saving it?): "
                          f"resuming from an earlier one", RuntimeWarning, stacklevel=3)
        return None

    def inside(path: Path, folder: Path) -> bool:
        return folder.resolve() in (path.resolve(), *path.resolve().parents)

    def explicit(path: Path) -> str:
        problem = checkpoint_problem(path)
        if problem is not None:
            raise InputError(f"the checkpoint is incomplete ({problem}); name an earlier checkpoint, or pass 'true' "
                             f"to resume from the last complete one", column="resume_from_checkpoint", value=text)
        return str(path)

    if requested is None or requested is False:
        return None
    text = str(requested).strip()
    run = Path(run_dir or output_dir)
    if requested is True or text.lower() in RESUME_AUTO:
        return last(run)
    if text.lower() in RESUME_NONE:
        return None
    path = Path(text)
    if not path.is_dir():
        raise InputError("no such folder: expected a checkpoint-N folder, a run folder, or 'true' (resume from the "
                         "run's last checkpoint)", column="resume_from_checkpoint", value=text)
    is_checkpoint = (path / "trainer_state.json").is_file()
    if run_dir is not None and run.resolve() != Path(output_dir).resolve():  # one fold of several
        if not inside(path, Path(output_dir)):
            raise InputError(f"a multi-fold run resumes from a checkpoint inside its fold folders "
                             f"({output_dir}/foldK) or from 'true'", column="resume_from_checkpoint", value=text)
        return explicit(path) if is_checkpoint and inside(path, run) else last(run)
    if is_checkpoint:
        return explicit(path)
    checkpoint = last(path)
    if checkpoint is None:
        raise InputError("the folder is not a checkpoint (no trainer_state.json) and holds no checkpoint-N folder "
                         "(or only incomplete ones)", column="resume_from_checkpoint", value=text)
    return checkpoint
