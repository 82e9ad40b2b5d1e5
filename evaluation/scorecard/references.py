"""The reference models a card is calibrated by, in two tiers beside ``scripted:oracle`` (which always runs):

- ``scripted``: one rule per shortcut that imitates it (``omniaudit.runners.scripted``);
- ``learned``: tiny models whose shortcut comes from gradient descent on data biased so that it pays, shipped in
  ``learned/`` with a manifest of how each was trained (``python benchmarks/find_fix_verify.py --save-references``).

A card holding a reference checks it: the oracle flagged for nothing, a planted reference flagged for its own
shortcut (``card.calibration``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.shortcuts import REFERENCE_NAMES, SHORTCUTS, TABLE

ORACLE = "scripted:oracle"
TIERS = ("scripted", "learned")
LEARNED = Path(__file__).resolve().parent / "learned"
MANIFEST = "manifest.json"
RUNNERS = ("hf", "reward")  # how a learned model judges: hf:FOLDER, or reward:FOLDER@BASE (a reward model's head)


@dataclass(frozen=True)
class Reference:
    """A calibration model: its card name, its runner spec and the shortcut planted in it (None: the oracle)."""

    name: str
    spec: str
    shortcut: str | None
    tier: str


THE_ORACLE = Reference("oracle", ORACLE, None, "scripted")  # always on a card


def tiers_of(value: bool | str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """``--references`` as the tiers it adds: True or "scripted" -> ("scripted",), "all" -> both, a sequence as is;
    InputError for a tier that does not exist."""
    if value is None or value is False:
        return ()
    if value is True:
        return ("scripted",)
    names = [value] if isinstance(value, str) else list(value)
    names = list(TIERS) if "all" in names else names
    unknown = [n for n in names if n not in TIERS]
    if unknown:
        raise InputError(f"references: no tier {', '.join(unknown)} (tiers: {', '.join(TIERS)} or all)")
    return tuple(t for t in TIERS if t in names)


def scripted() -> list[Reference]:
    """The planted rule of every shortcut of the table."""
    return [Reference(REFERENCE_NAMES[s.name], f"scripted:{s.reference}", s.name, "scripted") for s in TABLE]


@cache
def learned(folder: Path = LEARNED) -> tuple[Reference, ...]:
    """The learned models of ``folder``'s manifest, each named ``learned-<card name of its shortcut>``; none where
    the folder holds no manifest. A manifest naming an unknown shortcut, runner or missing folder is an InputError."""
    path = folder / MANIFEST
    if not path.is_file():
        return ()
    out = []
    for entry in json.loads(path.read_text(encoding="utf-8"))["models"]:
        shortcut, runner = entry.get("shortcut"), entry.get("runner")
        if shortcut not in SHORTCUTS or runner not in RUNNERS:
            raise InputError(f"a learned reference names shortcut {shortcut!r} and runner {runner!r} (shortcuts: "
                             f"{', '.join(SHORTCUTS)}; runners: {', '.join(RUNNERS)})", file=path)
        model = folder / entry["path"]
        base = folder / entry["base_path"] if runner == "reward" else None
        for needed in filter(None, (model, base)):
            if not (needed / "config.json").is_file() and not (needed / "adapter_config.json").is_file():
                raise InputError(f"a learned reference's model folder holds no model: {needed}", file=path)
        spec = f"hf:{model}" if base is None else f"reward:{model}@{base}"
        out.append(Reference(f"learned-{REFERENCE_NAMES[shortcut]}", spec, shortcut, "learned"))
    return tuple(out)


def reference_models(tiers: tuple[str, ...] = ()) -> list[Reference]:
    """The oracle, then the references of each tier asked for."""
    out = [THE_ORACLE]
    if "scripted" in tiers:
        out += scripted()
    if "learned" in tiers:
        if not learned():
            raise InputError(f"no learned reference models are installed ({LEARNED / MANIFEST} is missing)")
        out += learned()
    return out


def _every() -> list[Reference]:
    return [THE_ORACLE, *scripted(), *learned()]


def reference_specs() -> set[str]:
    """Every reference's spec, of every tier installed: a model of a card with one of these is a reference."""
    return {r.spec for r in _every()}


def planted(spec: str) -> str | None:
    """The shortcut planted in the reference model ``spec`` (None: the oracle, or not a reference)."""
    return next((r.shortcut for r in _every() if r.spec == spec), None)
