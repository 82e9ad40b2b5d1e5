"""Local ``evaluate`` metric modules over :mod:`omniaudit.evaluation.stats` (offline, no Hub).

``evaluate.load(omniaudit.evaluation.metrics.path("waf"))`` gives a metric that plugs into a Trainer's
``compute_metrics``; ``exact_mcnemar`` is a comparison module (two prediction vectors vs the references).
"""

from __future__ import annotations

from pathlib import Path

MODULES = ("waf", "exact_mcnemar")


def path(name: str) -> str:
    """Folder of a local evaluate module, for ``evaluate.load(path(name))``."""
    if name not in MODULES:
        raise KeyError(f"unknown metric module {name!r}; available: {', '.join(MODULES)}")
    return str(Path(__file__).parent / name)
