"""The typed records every audit hands on: what an audit is asked to do (:class:`AuditOptions`), what it gives back
(:class:`AuditResult`, its estimates typed as :class:`Estimate`) and one model's run of one audit as the scorecard
reads it (:class:`AuditRun`). The audits (``omniaudit.evaluation.<audit>``), the scorecard, tracking and reports all
import these from here, so none of them imports another for a record type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

Progress = Callable[[str], None] | None


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
        from omniaudit.evaluation.audit_outputs import read_audit

        return cls(audit, Path(folder), read_audit(folder))

    def estimates(self) -> list[Estimate]:
        """Every estimate of the result, typed, proportions on the 0-1 scale (the audit's ``units`` say which)."""
        from omniaudit.audits import AUDITS

        audit = AUDITS.get(self.audit)
        out = []
        for path, entry in estimates(self.data):
            ci = entry.get("ci")
            lo, hi = ci if isinstance(ci, list | tuple) and len(ci) == 2 else (None, None)
            n = entry.get("n")
            unit = audit.unit_of(path) if audit is not None else None
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
