"""The protocols audit's LLM extractor: a judge model reads the free-text answers the rules left unread (and the ones
they read, to measure their agreement), seeing the answer and the valid options only."""

from __future__ import annotations

import pandas as pd

# The extractor sees the answer and the valid options only (never the gold label or the cue).
EXTRACT_PROMPT = ("A judge was asked a question whose valid answers are: {options}. Its answer:\n\"{raw}\"\n"
                  "Which of the valid answers does it give? Answer with exactly one of: {choices}.")
NO_ANSWER = "none of them"


def extract_labels(pred: pd.DataFrame, options: pd.Series, extractor: str, **judge_options) -> pd.DataFrame:
    """Labels for the unparsed free-text answers, read by the judge ``extractor``. The answers the rule reader read
    are asked too (``extractor_label``), so the extractor's agreement with the rule reader is measured; their labels
    stay the rule reader's."""
    from omniaudit.runners import JudgeItem, make_judge, parse_answer

    text = pred["raw"].fillna("").astype(str).str.strip().ne("")
    todo = pred.index[pred["source"].isin(["unparsed", "rule"]) & text]
    pred = pred.assign(extracted=False, extractor_label=None)
    if not len(todo):
        return pred
    queries = []
    for i in todo:
        opts = list(options[pred.at[i, "id"]])
        choices = [*opts, NO_ANSWER]
        queries.append(JudgeItem(id=f"{pred.at[i, 'id']}#run={pred.at[i, 'run']}", options=choices,
                                 prompt=EXTRACT_PROMPT.format(options=", ".join(opts), raw=pred.at[i, "raw"],
                                                              choices=", ".join(choices))))
    answers = make_judge(extractor, **judge_options).answer(queries)
    for i, query, answer in zip(todo, queries, answers, strict=True):
        label = parse_answer(str(answer), query.options)
        if label is not None and label != NO_ANSWER:
            pred.at[i, "extractor_label"] = label
            if pred.at[i, "source"] == "unparsed":
                pred.at[i, "label"], pred.at[i, "extracted"], pred.at[i, "source"] = label, True, "extractor"
    return pred
