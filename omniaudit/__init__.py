"""omniaudit: find and remove shortcuts in multimodal judges and omni models.

The toolkit has three jobs, one subpackage each: ``omniaudit.data_builders`` (audit datasets in the Hub layout),
``omniaudit.training`` (SFT / DPO / ODIN reward training scripts) and ``omniaudit.evaluation`` (metrics with
uncertainty, judges, audits and reports).

The Python API (:mod:`omniaudit.api`) is at the top level: ``omniaudit.scorecard(models={...}, out=...)``,
``omniaudit.audit(name, dataset=..., predictions=..., out=...)`` and ``omniaudit.build(name, out=...)``, with the
records they return (``omniaudit.ScorecardResult``, ``omniaudit.AuditResult``). They are imported when first used,
so ``import omniaudit`` loads no numerical library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from omniaudit.errors import InputError

if TYPE_CHECKING:
    from omniaudit.api import audit, build, scorecard
    from omniaudit.results import AuditResult, ScorecardResult, Verdict

__version__ = "0.1.0"
# name -> the module that defines it, imported on first use (module __getattr__, PEP 562)
LAZY = {"scorecard": "omniaudit.api", "audit": "omniaudit.api", "build": "omniaudit.api",
        "ScorecardResult": "omniaudit.results", "AuditResult": "omniaudit.results", "Verdict": "omniaudit.results"}
__all__ = ["AuditResult", "InputError", "ScorecardResult", "Verdict", "__version__", "audit", "build", "scorecard"]


def __getattr__(name: str) -> Any:
    if name not in LAZY:
        raise AttributeError(f"module 'omniaudit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(LAZY[name]), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *LAZY})
