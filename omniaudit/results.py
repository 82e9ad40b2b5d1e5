"""The typed records every audit hands on: what an audit is asked to do (:class:`AuditOptions`), what it gives back
(:class:`AuditResult`, its estimates typed as :class:`Estimate`) and one model's run of one audit as the scorecard
reads it (:class:`AuditRun`); and a finished scorecard (:class:`ScorecardResult`, its verdicts typed as
:class:`Verdict`). The audits (``omniaudit.evaluation.<audit>``), the scorecard, tracking and reports all import these
from here, so none of them imports another for a record type. Here too: the ``audit.json`` a finished audit leaves
(:func:`read_audit`, its :data:`SCHEMA_VERSION`). These records sit below the registry of audits
(:mod:`omniaudit.audits`), which hands each audit's units down (:func:`set_unit_lookup`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from omniaudit.errors import InputError

Progress = Callable[[str], None] | None
UnitLookup = Callable[[str, tuple[str, ...]], str | None]  # (audit name, estimate path) -> its unit, or None
SCHEMA_VERSION = 1  # the audit.json schema this omniaudit writes and reads (audit.schema.json)
_UNIT_LOOKUP: list[UnitLookup] = []  # the registry's (set_unit_lookup): an audit's units are declared on the audit
REGISTRY = "omniaudit.audits"  # the module that installs the lookup as it loads


@dataclass(frozen=True)
class AuditOptions:
    """What every audit takes beside its predictions: bootstrap resamples (None: the audit's own default), whether
    the answers are a sample of each config (``partial``: a ``--limit`` smoke run's incomplete runs), a progress
    callback, and whether the benchmark's own analyses (probes, controls) run too."""

    n_resamples: int | None = None
    partial: bool = False
    progress: Progress = None
    # the analyses about the benchmark rather than the models (the same for every model: the scorecard leaves them
    # out and reads them once per dataset)
    benchmark: bool = True
    extracted: bool = True  # count the answers `judge --extractor` / `--read-reasoning` read (--exclude-extracted)

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)


PERCENT = "percent"
PROPORTION = "proportion"


@dataclass(frozen=True)
class Estimate:
    """One estimate of an ``audit.json``: where it sits (``path``), its value, its interval, its cluster or item
    count and its ``unit``. Proportions (rates, accuracies, WAF and their differences) are on one scale, 0-1, with
    unit ``"proportion"``, whatever scale the audit writes (``audit.json`` keeps the papers' points for WAF and the
    Thud accuracies); other units are as written (``"seconds"``); None where the audit does not say."""

    path: tuple[str, ...]
    value: float | None
    ci: tuple[float | None, float | None] = (None, None)
    n: int | None = None
    unit: str | None = None


def estimates(tree: object, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict]]:
    """Every estimate in a nested audit.json section: a dict with a scalar ``value`` (plus ``ci``, ``n``, ...),
    with the keys that lead to it."""
    if isinstance(tree, dict):
        if "value" in tree and not isinstance(tree["value"], dict | list):
            yield path, tree
            return
        for key, sub in tree.items():
            yield from estimates(sub, (*path, str(key)))


def _number(value: object) -> float | None:
    """A loggable scalar: bools and ints as floats, None and non-numbers as None (NaN stays NaN)."""
    if isinstance(value, bool | int | float):
        return float(value)
    return None


def put(out: dict[str, float], key: str, value: object) -> None:
    number = _number(value)
    if number is not None:
        out[key] = number


def ci_fields(entry: dict, key: str = "ci") -> dict[str, float | None]:
    ci = entry.get(key)
    lo, hi = (ci if isinstance(ci, list | tuple) and len(ci) == 2 else (None, None))
    return {"ci_low": _number(lo), "ci_high": _number(hi)}


def estimate_row(entry: dict) -> dict:
    """value, ci_low, ci_high and the estimate's other scalar fields (n, k, n_correct, ...)."""
    row = {"value": _number(entry.get("value")), **ci_fields(entry)}
    row.update({k: v for k, v in entry.items() if k not in ("value", "ci") and not isinstance(v, dict | list)})
    return row


def set_unit_lookup(lookup: UnitLookup) -> None:
    """Where :meth:`AuditResult.estimates` finds the unit of an estimate: the registry of audits installs its lookup
    (each audit's ``units``, found by name) when it is imported, as it is wherever an audit runs or is registered. It
    sits above these records, so it is handed down rather than imported here."""
    _UNIT_LOOKUP[:] = [lookup]


def unit_lookup() -> UnitLookup:
    """The registry's unit lookup; a process that has not loaded the registry yet (a result read on its own) loads
    it by name, as the registry loads the built-in audits: these records never import it."""
    if not _UNIT_LOOKUP:
        import importlib

        importlib.import_module(REGISTRY)
    return _UNIT_LOOKUP[0]


def read_audit(folder: str | Path, newer: bool = False) -> dict:
    """A finished audit's ``audit.json`` (a JSON object). Its ``schema.version`` is checked first: a file written in
    a newer schema than this omniaudit reads (:data:`SCHEMA_VERSION`) is refused with a line saying so, unless
    ``newer`` (a reader that only reports, as ``omniaudit verify`` does); files from before the schema record are
    read as they are. The shape is described by ``audit.schema.json``
    (:func:`omniaudit.evaluation.audit_outputs.schema_path`)."""
    path = Path(folder) / "audit.json"
    try:
        audit = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError("no audit.json: not the output folder of an omniaudit audit", file=path) from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", file=path) from exc
    if not isinstance(audit, dict):
        raise InputError(f"not an audit result: a JSON {type(audit).__name__}, not an object", file=path)
    version = (audit.get("schema") or {}).get("version") if isinstance(audit.get("schema"), dict) else None
    if not newer and isinstance(version, int) and version > SCHEMA_VERSION:
        from omniaudit import __version__

        raise InputError(f"written by a newer omniaudit (audit.json schema {version}; this omniaudit "
                         f"{__version__} reads schema {SCHEMA_VERSION} and older): upgrade omniaudit to read it",
                         file=path)
    return audit


@dataclass(frozen=True)
class AuditResult:
    """A finished audit: its name, its folder (``audit.json``, ``report.md``, tables, figures) and the parsed
    ``audit.json``."""

    audit: str
    folder: Path
    data: dict = field(repr=False)

    @classmethod
    def read(cls, audit: str, folder: str | Path) -> AuditResult:
        """The result an audit left in ``folder`` (its ``audit.json`` read and version-checked)."""
        return cls(audit, Path(folder), read_audit(folder))

    def estimates(self) -> list[Estimate]:
        """Every estimate of the result, typed, proportions on the 0-1 scale (the audit's ``units`` say which, as
        the registry of audits gives them: :func:`set_unit_lookup`)."""
        out = []
        unit_of = unit_lookup()
        for path, entry in estimates(self.data):
            ci = entry.get("ci")
            lo, hi = ci if isinstance(ci, list | tuple) and len(ci) == 2 else (None, None)
            n = entry.get("n")
            unit = unit_of(self.audit, path)
            scale = 0.01 if unit == PERCENT else 1.0
            value, lo, hi = (None if x is None else scale * x for x in map(_number, (entry.get("value"), lo, hi)))
            out.append(Estimate(path, value, (lo, hi), n if isinstance(n, int) and not isinstance(n, bool) else None,
                                PROPORTION if unit == PERCENT else unit))
        return out

    def get(self, dotted: str) -> object:
        """The value at a dotted path of ``audit.json`` (``"avg_gap"``, ``"predictors.x.full.waf"``), else None."""
        node: object = self.data
        for key in dotted.split("."):
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return node


@dataclass
class AuditRun:
    """One model's run of one audit, as the scorecard's measures read it."""

    status: str  # ran | skipped | not answering | failed | answered (a shard's answers, not audited)
    folder: Path | None = None  # the audit's output folder
    dataset: Path | str | None = None
    files: dict[str, Path] = field(default_factory=dict)  # config -> predictions file
    name: str = ""  # the judge / model name inside the audit
    reason: str | None = None
    parse_rate: float | None = None  # share of the answers the audit could read
    unread: dict[str, int] = field(default_factory=dict)  # why closed answers named no option (reading.REASONS)


@dataclass(frozen=True)
class Verdict:
    """One model's verdict on one shortcut, as the card shows it: ``status`` (``flagged``, ``clear``,
    ``inconclusive``, ``not measured``, ...), and the measure that decided it: its value, interval, the value a
    content-blind model has on the same items (``null``), its name and audit (None where nothing was measured)."""

    shortcut: str
    status: str
    value: float | None = None
    ci: tuple[float | None, float | None] = (None, None)
    null: float | None = None
    measure: str | None = None
    audit: str | None = None

    @property
    def flagged(self) -> bool:
        return self.status == "flagged"


@dataclass(frozen=True)
class ScorecardResult:
    """A finished scorecard: its folder (``scorecard.json``, ``scorecard.md``, ``scorecard.html``, ``datasets/``,
    ``models/``) and the parsed ``scorecard.json``, read through typed accessors."""

    folder: Path
    data: dict = field(repr=False)

    @classmethod
    def read(cls, folder: str | Path) -> ScorecardResult:
        """The scorecard a run left in ``folder`` (``omniaudit scorecard --out FOLDER`` or
        :func:`omniaudit.scorecard`)."""
        import json

        from omniaudit.errors import InputError

        path = Path(folder) / "scorecard.json"
        if not path.is_file():
            raise InputError("no scorecard.json here: not the folder of a finished scorecard", file=folder)
        return cls(Path(folder), json.loads(path.read_text(encoding="utf-8")))

    @property
    def models(self) -> list[str]:
        """Every model on the card: the models under test and the reference models (the oracle first)."""
        return list(self.data["models"])

    @property
    def references(self) -> list[str]:
        """The reference models (``scripted:oracle`` and any planted ones) the card is calibrated against."""
        return list(self.data["references"])

    @property
    def flagged(self) -> dict[str, list[str]]:
        """Model -> the shortcuts flagged for it."""
        return {m: list(s) for m, s in self.data["flagged"].items()}

    @property
    def calibrated(self) -> bool | None:
        """Whether every reference model got its expected verdicts (None: a smoke run, not checked)."""
        return self.data["calibrated"]

    @property
    def remedies(self) -> dict[str, dict]:
        """Per shortcut flagged for a model under test: the models, what removes it, its source and commands."""
        return dict(self.data["remedies"])

    @property
    def markdown(self) -> Path:
        return self.folder / "scorecard.md"

    @property
    def html(self) -> Path:
        return self.folder / "scorecard.html"

    def _model(self, model: str) -> dict:
        from omniaudit.errors import InputError

        if model not in self.data["models"]:
            raise InputError(f"no model of this name on the card; its models are {', '.join(self.models)}",
                             value=model)
        return self.data["models"][model]

    def summary(self, model: str) -> str:
        """The card's one-line summary of ``model`` (``flags position``, ``no flag; clear on 4 of 5 ...``)."""
        return self._model(model)["summary"]

    def verdicts(self, model: str) -> dict[str, Verdict]:
        """Shortcut -> the verdict of ``model``."""
        out = {}
        for shortcut, v in self._model(model)["shortcuts"].items():
            lo, hi = v.get("ci") or (None, None)
            out[shortcut] = Verdict(shortcut, v["status"], _number(v.get("value")), (_number(lo), _number(hi)),
                                    _number(v.get("null")), v.get("measure"), v.get("audit"))
        return out

    def verdict(self, model: str, shortcut: str) -> Verdict:
        """The verdict of ``model`` on ``shortcut``."""
        from omniaudit.errors import InputError

        found = self.verdicts(model)
        if shortcut not in found:
            raise InputError(f"no shortcut of this name; the card's are {', '.join(found)}", value=shortcut)
        return found[shortcut]

    def dataset(self, audit: str) -> Path | str:
        """The dataset ``audit`` ran on: its folder under the card's ``datasets/``, or a ``--data`` dataset as the
        card names it (its folder name or Hub repo id)."""
        from omniaudit.errors import InputError

        entry = self.data["audits"].get(audit) or {}
        named = entry.get("dataset")
        if named is None:
            raise InputError(f"no dataset of this audit on the card (its audits: {', '.join(self.data['audits'])})",
                             value=audit)
        return self.folder / named if (self.folder / named).exists() else named

    def predictions(self, model: str, audit: str) -> dict[str, Path]:
        """Config -> the predictions file ``model`` answered ``audit``'s items with (``models/NAME/CONFIG.jsonl``)."""
        self._model(model)
        configs = (self.data["audits"].get(audit) or {}).get("items") or {}
        files = {c: self.folder / "models" / model / f"{c}.jsonl" for c in configs}
        return {c: f for c, f in files.items() if f.is_file()}

    def audit(self, model: str, audit: str) -> AuditResult | None:
        """The audit ``model`` got on ``audit`` (its ``audit.json`` read), None where it was not audited."""
        folder = (self._model(model)["audits"].get(audit) or {}).get("folder")
        return None if folder is None else AuditResult.read(audit, self.folder / folder)
