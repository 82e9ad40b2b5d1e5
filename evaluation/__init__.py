"""Audit metrics with honest uncertainty, model runners and reports: one home per audit.

- ``preference/``, ``interventions/``, ``protocols/``, ``composition/``: each audit's metrics, answer reading, report
  and figures (mirroring ``data_builders/<audit>/``);
- ``runners/``: models answering items (``hf:``, ``openai:``, ``scripted:``) and the predictions file they write;
- shared: ``stats`` (pure NumPy statistics), ``predictions`` (provenance and the checks every consumer makes),
  ``report`` (Markdown / figure helpers), ``tracking`` (wandb), ``metrics`` (``evaluate`` modules),
  ``answer_language`` (the word lists the readers share).

The modules' earlier homes (``omniaudit.evaluation.judges``, ``.audits.<audit>``, ``.extract``, ``.grading``, ...)
still import for one release, with a DeprecationWarning naming the new place (:mod:`omniaudit.evaluation._moved`).
"""

from omniaudit.evaluation import _moved

_moved.install()
