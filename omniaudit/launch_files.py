"""Where the installed package keeps what ``accelerate launch`` needs: the training scripts, their YAML recipes and
the accelerate configs (package data, so a ``pip install omniaudit`` user has them too, not only a git checkout)."""

from __future__ import annotations

import shutil
from pathlib import Path

from omniaudit.errors import InputError


def launch_files() -> dict[str, Path]:
    """The installed folders: ``training`` (scripts, with ``recipes/``) and ``accelerate_configs``."""
    import omniaudit.accelerate_configs
    import omniaudit.training

    return {"training": Path(omniaudit.training.__file__).parent,
            "accelerate_configs": Path(omniaudit.accelerate_configs.__file__).parent}


def copy_launch_files(out: str | Path) -> list[Path]:
    """Copy the training scripts, recipes and accelerate configs into ``out`` (a new or empty folder), laid out as in
    the repository, so ``accelerate launch --config_file accelerate_configs/cpu.yaml training/dpo.py --config
    training/recipes/tiny/dpo.yaml`` runs from ``out``. Returns the files written."""
    from omniaudit.io import atomic_dir

    out = Path(out)
    written = []
    with atomic_dir(out) as tmp:
        for name, folder in launch_files().items():
            for src in sorted(folder.rglob("*")):
                if src.is_file() and src.suffix in (".py", ".yaml") and "__pycache__" not in src.parts:
                    dst = tmp / name / src.relative_to(folder)
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, dst)
                    written.append(out / name / src.relative_to(folder))
    if not written:
        raise InputError("no launch files found in the installed package (reinstall omniaudit)")
    return written
