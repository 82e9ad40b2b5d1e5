"""Audit metrics with honest uncertainty and reports: one home per audit.

- ``preference/``, ``interventions/``, ``protocols/``, ``composition/``: each audit's metrics, answer reading, report,
  figures and registry entry (``entry.py``: the :class:`omniaudit.audits.Audit` it implements), mirroring
  ``data_builders/<audit>/``;
- ``scorecard/``: every registered audit, one calibrated verdict per shortcut;
- shared: ``stats`` (pure NumPy statistics), ``report`` (Markdown / figure helpers), ``audit_outputs`` (a finished
  audit folder read generically), ``tracking`` (wandb), ``metrics`` (``evaluate`` modules).

The models that answer items (``omniaudit.runners``), the provenance checks every consumer makes
(``omniaudit.predictions``) and the readers' word lists (``omniaudit.answer_language``) are in the core, below both
the builders and the audits.

Importing it changes no global state (no import hook, no plotting backend). The module names of before this layout
(``omniaudit.evaluation.judges``, ``.audits.<audit>``, ``.extract``, ...) were removed in 0.2 (CHANGELOG.md).
"""
