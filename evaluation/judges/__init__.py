"""Judge runners: local Transformers models, OpenAI-compatible servers and scripted reference judges."""

from omniaudit.evaluation.judges.items import JudgeItem, load_items, parse_answer
from omniaudit.evaluation.judges.run import make_judge, run_judge

__all__ = ["JudgeItem", "load_items", "make_judge", "parse_answer", "run_judge"]
