"""Judge runners: local Transformers models, OpenAI-compatible servers and scripted reference judges."""

from omniaudit.runners.factory import make_judge
from omniaudit.runners.items import Answer, JudgeItem, Sampling, load_items, parse_answer
from omniaudit.runners.run import run_judge
from omniaudit.runners.shards import merge_predictions

__all__ = ["Answer", "JudgeItem", "Sampling", "load_items", "make_judge", "merge_predictions", "parse_answer",
           "run_judge"]
