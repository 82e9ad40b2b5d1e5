"""Audit metrics with honest uncertainty, model runners and reports: one home per audit.

- ``preference/``, ``interventions/``, ``protocols/``, ``composition/``: each audit's metrics, answer reading, report
  and figures (mirroring ``data_builders/<audit>/``);
- ``runners/``: models answering items (``hf:``, ``openai:``, ``scripted:``) and the predictions file they write;
- shared: ``stats`` (pure NumPy statistics), ``predictions`` (provenance and the checks every consumer makes),
  ``report`` (Markdown / figure helpers), ``tracking`` (wandb), ``metrics`` (``evaluate`` modules),
  ``answer_language`` (the word lists the readers share).

Importing it changes no global state (no import hook, no plotting backend). The module names of before this layout
(``omniaudit.evaluation.judges``, ``.audits.<audit>``, ``.extract``, ...) were removed in 0.2 (CHANGELOG.md).
"""
