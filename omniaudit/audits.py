"""The one Audit contract and the registry of audits, read by the CLI (``omniaudit audits``), the scorecard and
tracking. Nothing else lists audits: a fifth audit is one :class:`Audit` subclass, registered in code
(:func:`register_audit`) or installed as an entry point of the group ``omniaudit.audits`` (a package's
``[project.entry-points."omniaudit.audits"]``, ``name = "module:AuditClass"``).

An audit declares what it is (``name``, ``paper``, ``title``), the dataset configs a model answers with the
modalities of their items (``item_configs``; ``video+audio``: a video with its own soundtrack), how many sampled runs
each config gets (``runs``), the dotted paths of ``audit.json`` a summary shows first (``headline``), the shortcuts it
measures and how each scripted reference model behaves on it; and it does four things with one signature for all:

- :meth:`Audit.build` writes its embedded synthetic default (``size``: ``default`` sized by power, ``small`` for
  smoke runs) in the Hub layout;
- :meth:`Audit.audit` audits predictions files (``{model: {config: file}}``) into a folder (``audit.json`` +
  ``report.md``) and returns the :class:`~omniaudit.results.AuditResult`;
- :meth:`Audit.measures` gives the scorecard the matched contrasts of its shortcuts from one model's run;
- :meth:`Audit.metrics` / :meth:`Audit.tables` give tracking its scalars and tables.

The four built-in audits live in ``omniaudit.evaluation.<audit>.entry`` and are imported when first asked for (a
listing imports no heavy library).
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from omniaudit.errors import InputError
from omniaudit.results import AuditOptions, AuditResult, AuditRun, estimates, set_unit_lookup

if TYPE_CHECKING:
    import pandas as pd

ENTRY_POINT_GROUP = "omniaudit.audits"
SIZES = ("default", "small")  # the embedded defaults: sized by power, or small for smoke runs


class Audit:
    """One audit (see the module docstring). Subclasses set the class attributes and implement :meth:`build` and
    :meth:`audit`; the scorecard and tracking hooks have neutral defaults (no measures, every estimate tracked)."""

    name: ClassVar[str]
    paper: ClassVar[str]  # the specification: a paper's title, or where the protocol is described
    title: ClassVar[str]
    item_configs: ClassVar[dict[str, tuple[str, ...]]]  # config -> modalities of its items
    headline: ClassVar[tuple[str, ...]] = ()
    shortcuts: ClassVar[tuple[str, ...]] = ()
    references: ClassVar[dict[str, str]] = {}  # scripted reference model -> how it behaves on this audit
    runs: ClassVar[dict[str, int]] = {}  # config -> sampled runs per item (default 1)
    figure: ClassVar[str | None] = None  # the key figure of its folder (the card shows it)
    source: ClassVar[str] = "the audit's predictions"  # what its scorecard measures are computed from (a card trace)
    sizes: ClassVar[dict[str, dict]] = {}  # the embedded default's build parameters per size (SIZES)
    summary: ClassVar[str] = "the {name} default"  # what the default holds, formatted with its parameters
    accuracy_note: ClassVar[str | None] = None  # why it pairs no task accuracy, where it has none
    # the unit of audit.json's estimates, by dotted-path pattern (fnmatch; the first match wins): "proportion"
    # (0-1), "percent" (0-100, as a paper's tables print them; differences in points too) or another unit as
    # written ("seconds"); AuditResult.estimates() puts every proportion on the 0-1 scale
    units: ClassVar[tuple[tuple[str, str], ...]] = ()

    def unit_of(self, path: tuple[str, ...]) -> str | None:
        """The unit of the estimate at ``path`` (see ``units``); None when the audit does not say."""
        dotted = ".".join(path)
        return next((unit for pattern, unit in self.units if fnmatch.fnmatchcase(dotted, pattern)), None)

    def build(self, out: Path, size: str = "default", progress: Any = None) -> Path:
        """Write the embedded synthetic default of ``size`` into ``out`` (a Hub-layout dataset); returns it."""
        raise NotImplementedError

    def describe(self, size: str = "default") -> str:
        """What the embedded default of ``size`` holds (the card says it): ``summary`` with its parameters."""
        return self.summary.format(name=self.name, **self.build_parameters(size)) + (
            "" if size == "default" else f" ({size})")

    def build_parameters(self, size: str = "default") -> dict:
        """The parameters the default of ``size`` is built with (a changed one rebuilds a kept default)."""
        return dict(self.sizes.get(size, {}))

    def audit(self, out: Path, dataset: Path | str, predictions: Mapping[str, Mapping[str, Path]],
              options: AuditOptions) -> AuditResult:
        """Audit the predictions files of each model (``{model: {config: file}}``) into ``out``."""
        raise NotImplementedError

    def measures(self, run: AuditRun) -> tuple[dict[str, list], dict[str, list[dict]]]:
        """The scorecard's view of one model's run: per shortcut, its tested measures
        (:class:`~omniaudit.evaluation.scorecard.rules.Tested`) and the informational evidence shown beside them."""
        return {}, {}

    def accuracy(self, run: AuditRun) -> Any:
        """Task accuracy on this audit's items as a scorecard contrast (the alignment tax of a remedy); None: the
        audit has no task accuracy."""
        return None

    def coverage(self, folder: Path) -> float | None:
        """The share of answers the audit itself could read, where it reads free text (None: the runner's share)."""
        return None

    def metrics(self, audit: dict) -> dict[str, float]:
        """The scalars tracking logs: every estimate of ``audit.json`` (``a/b/c`` paths) by default."""
        return {"/".join(path): float(e["value"]) for path, e in estimates(audit)
                if isinstance(e["value"], int | float)}

    def tables(self, audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
        """The tables tracking logs (name -> frame); none by default."""
        return {}

    def to_dict(self) -> dict:
        """The registry entry as data (``omniaudit audits --json``)."""
        return {"name": self.name, "paper": self.paper, "title": self.title,
                "item_configs": {c: list(m) for c, m in self.item_configs.items()}, "headline": list(self.headline),
                "shortcuts": list(self.shortcuts), "references": dict(self.references),
                "runs": {c: self.runs.get(c, 1) for c in self.item_configs}}


_E = "omniaudit.evaluation"
BUILT_IN = {"preference": f"{_E}.preference.entry:PreferenceAudit",
            "interventions": f"{_E}.interventions.entry:InterventionsAudit",
            "protocols": f"{_E}.protocols.entry:ProtocolsAudit",
            "composition": f"{_E}.composition.entry:CompositionAudit"}


def _instance(found: object, where: str) -> Audit:
    audit = found() if isinstance(found, type) else found
    if not isinstance(audit, Audit):
        raise InputError(f"not an omniaudit Audit: {where} gives a {type(audit).__name__} (subclass "
                         "omniaudit.audits.Audit)")
    for attribute in ("name", "paper", "title", "item_configs"):
        if not hasattr(audit, attribute):
            raise InputError(f"the audit {where} declares no {attribute}")
    return audit


class _Registry(Mapping[str, Audit]):
    """name -> Audit: the built-ins (imported when first read), those registered in code, and the installed entry
    points of ``omniaudit.audits`` (a built-in's name is never taken over)."""

    def __init__(self) -> None:
        self._loaded: dict[str, Audit] = {}
        self._extra: dict[str, Audit] = {}
        self._plugins: dict[str, str] | None = None

    def _entry_points(self) -> dict[str, str]:
        if self._plugins is None:
            from importlib.metadata import entry_points

            self._plugins = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)
                             if ep.name not in BUILT_IN}
        return self._plugins

    def names(self) -> list[str]:
        return [*BUILT_IN, *self._extra, *(n for n in self._entry_points() if n not in self._extra)]

    def __getitem__(self, name: str) -> Audit:
        if name in self._extra:
            return self._extra[name]
        if name not in self._loaded:
            path = BUILT_IN.get(name) or self._entry_points().get(name)
            if path is None:
                raise KeyError(name)
            module, _, attribute = path.partition(":")
            audit = _instance(getattr(importlib.import_module(module), attribute), path)
            if audit.name != name:
                raise InputError(f"the audit {path} is registered as '{name}' but calls itself '{audit.name}'")
            self._loaded[name] = audit
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def add(self, audit: Audit) -> None:
        if audit.name in BUILT_IN:
            raise InputError("a built-in audit has this name: choose another", value=audit.name)
        self._extra[audit.name] = audit

    def remove(self, name: str) -> None:
        self._extra.pop(name, None)


AUDITS = _Registry()


def register_audit(audit: Audit | type[Audit]) -> Audit:
    """Register an audit (an :class:`Audit` subclass or instance) under its ``name`` for this process: the CLI's
    ``--audits``, the scorecard and tracking then run it like the built-ins. Returns the instance."""
    found = _instance(audit, getattr(audit, "__name__", type(audit).__name__))
    AUDITS.add(found)
    return found


def unregister_audit(name: str) -> None:
    """Forget an audit registered in code (built-ins and entry points stay)."""
    AUDITS.remove(name)


def get(name: str) -> Audit:
    """The registered audit ``name`` (InputError listing the audits otherwise)."""
    try:
        return AUDITS[name]
    except KeyError:
        raise InputError(f"unknown audit; expected one of {', '.join(AUDITS)}", value=name) from None


def _unit_of(audit: str, path: tuple[str, ...]) -> str | None:
    """The unit of the estimate at ``path`` of the registered audit ``audit`` (None: not registered, or unsaid)."""
    found = AUDITS.get(audit)
    return found.unit_of(path) if found is not None else None


set_unit_lookup(_unit_of)  # AuditResult.estimates() (omniaudit.results, below this registry) reads units through it
