"""The shortcut scorecard: any model through every registered audit, one calibrated verdict per shortcut.

``run_scorecard(out_dir, ["name=hf:...", ...])`` (``omniaudit scorecard``) builds each audit's small embedded default
(or reads ``--data``), runs every model on the audits whose item modalities it takes, audits its answers and writes
``scorecard.json``, ``scorecard.md`` and ``scorecard.html``. The rules: :mod:`.rules`; the folder: :mod:`.runner`.
"""

from omniaudit.evaluation.scorecard.rules import shortcuts
from omniaudit.evaluation.scorecard.runner import ScorecardOptions, parse_models, run_scorecard
from omniaudit.shortcuts import SHORTCUTS

__all__ = ["SHORTCUTS", "ScorecardOptions", "parse_models", "run_scorecard", "shortcuts"]
