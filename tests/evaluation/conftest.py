"""Fixtures of the runner tests (test_openai_runner.py, test_serve.py): items in the item contract."""

from judge_items import media, mixed_dataset  # noqa: F401 - session fixtures, defined with their helpers
