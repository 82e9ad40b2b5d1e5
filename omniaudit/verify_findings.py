"""What ``omniaudit verify`` says: one :class:`Finding` per check (verified, failed or cannot vouch, with why), the
:class:`Verification` that holds them, and how a finding names files and refusals."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from omniaudit import __version__
from omniaudit.errors import InputError

VERIFIED, FAILED, CANNOT = "verified", "failed", "cannot vouch"
HEADINGS = {VERIFIED: "verified", FAILED: "failed", CANNOT: "cannot vouch for"}


@dataclass(frozen=True)
class Finding:
    """One check's outcome: ``status`` (verified / failed / cannot vouch), the ``check`` (marker, dataset, media,
    predictions, audit, scorecard, files, authorship), the ``path`` it concerns (relative to the folder checked) and
    ``what`` was found, in a sentence."""

    status: str
    check: str
    path: str
    what: str


@dataclass
class Verification:
    """Every finding of one :func:`verify`."""

    folder: Path
    findings: list[Finding] = field(default_factory=list)

    def of(self, status: str) -> list[Finding]:
        return [f for f in self.findings if f.status == status]

    @property
    def ok(self) -> bool:
        """Nothing failed (what cannot be vouched for does not fail)."""
        return not self.of(FAILED)

    def counts(self) -> dict[str, int]:
        return {status: len(self.of(status)) for status in HEADINGS}

    def to_dict(self) -> dict:
        return {"folder": str(self.folder), "omniaudit": __version__, "ok": self.ok,
                "counts": {k.replace(" ", "_"): v for k, v in self.counts().items()},
                "findings": [asdict(f) for f in self.findings]}

    def lines(self) -> list[str]:
        """The findings grouped as verified / failed / cannot vouch for, one line each."""
        n = self.counts()
        out = [f"{self.folder}: {n[VERIFIED]} verified, {n[FAILED]} failed, {n[CANNOT]} cannot vouch for"]
        for status, heading in HEADINGS.items():
            found = self.of(status)
            out.append(f"{heading}:")
            out += [f"  {f.path}: {f.what}" for f in found] or ["  (none)"]
        return out


def code_version(where: str, version, who: str) -> Finding:
    if version == __version__:
        return Finding(VERIFIED, "audit", where, f"written by omniaudit {version} ({who}), the version here")
    return Finding(CANNOT, "audit", where, f"written by omniaudit {version} ({who}); this is omniaudit {__version__}: "
                                           "rerun here, its numbers may differ")


def refused(exc: InputError, where: str) -> str:
    """An InputError about the file a finding names, without that name again (``row 5: column 'x': ...``)."""
    return str(exc).removeprefix(f"{where}:").strip()


def some_names(names: list[str], limit: int = 5) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more
