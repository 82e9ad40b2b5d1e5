"""Old module names of ``omniaudit.evaluation`` that still import, for one release, with a DeprecationWarning.

``import omniaudit.evaluation.extract`` (or ``from omniaudit.evaluation.judges import run_judge``) gives a module that
forwards every attribute to the module's new home (``omniaudit.evaluation.interventions.extract``,
``omniaudit.evaluation.runners``). One table, one import hook: no stub files in the tree.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

E = "omniaudit.evaluation"
MOVED = {  # old name (below omniaudit.evaluation) -> new name
    "audits": None,  # a package that now holds nothing but moved names
    "audits.composition": "composition.audit", "grading": "composition.grading",
    "attention": "composition.attention", "failure_modes": "composition.failure_modes",
    "composition_report": "composition.report",
    "audits.interventions": "interventions.audit", "extract": "interventions.extract",
    "extract_labelled": "interventions.extract_labelled", "extract_gloss": "interventions.extract_gloss",
    "interventions_report": "interventions.report", "alignment_tax": "interventions.alignment_tax",
    "audits.preference": "preference.audit", "probes": "preference.probes", "controls": "preference.controls",
    "length_control": "preference.length_control", "consensus": "preference.consensus",
    "odin_report": "preference.odin_report", "judge_files": "preference.judge_files",
    "audits.protocols": "protocols.audit", "audits.protocol_modes": "protocols.modes",
    "protocols_report": "protocols.report", "protocols_run": "protocols.run",
    "judges": "runners",  # and every submodule: judges.X -> runners.X
}


def new_name(name: str) -> str | None:
    """The new full name of an old ``omniaudit.evaluation`` module name ("" for a placeholder package), else None."""
    if not name.startswith(E + "."):
        return None
    old = name[len(E) + 1:]
    if old in MOVED:
        return "" if MOVED[old] is None else f"{E}.{MOVED[old]}"
    head, _, rest = old.partition(".")
    if rest and MOVED.get(head) == "runners":
        return f"{E}.runners.{rest}"
    return None


class _Forward(types.ModuleType):
    def __init__(self, name: str, target: str) -> None:
        super().__init__(name, f"Moved to {target}.")
        self._target = target

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(object.__getattribute__(self, "_target")), attr)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        new = new_name(name)
        if new is None:
            return None
        return importlib.util.spec_from_loader(name, self, is_package=True)

    def create_module(self, spec):
        new = new_name(spec.name)
        if new:
            warnings.warn(f"{spec.name} moved to {new}; the old name will be removed in the next release",
                          DeprecationWarning, stacklevel=3)
            importlib.import_module(new)  # fail here, naming the new module, if it cannot import
            return _Forward(spec.name, new)
        return types.ModuleType(spec.name, "Moved: see omniaudit.evaluation._moved.")

    def exec_module(self, module) -> None:
        module.__path__ = []  # lets `old.package.submodule` reach this finder too


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
