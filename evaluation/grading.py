"""Grading free-form answers (C3PO §3): normalised exact match first, then an LLM judge for semantic equivalence.

Normalisation: lower case, number words to digits, punctuation and the articles a / an / the removed, whitespace
collapsed. When the normalised strings differ, a judge (any ``omniaudit judge`` SPEC) is asked whether the prediction
picks out the same entity or concept as the ground truth in the context of the question; it answers Yes or No, and
the prompt is stored with every graded row. Accuracy = #correct / #samples (an unanswered sample is wrong).
"""

from __future__ import annotations

import re

import pandas as pd

UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
NUMBERS = {**{w: i for i, w in enumerate(UNITS)}, **TENS}
ARTICLES = {"a", "an", "the"}
JUDGE_PROMPT = ("Question: {question}\nGround-truth answer: {answer}\nPredicted answer: {prediction}\n"
                "In the context of the question, does the predicted answer pick out exactly the same entity or "
                "concept as the ground-truth answer? Answer with exactly one of: Yes, No.")


def normalize(text: str) -> str:
    words = [w for w in re.sub(r"[^\w\s]", " ", str(text).lower().replace("-", " ")).split() if w not in ARTICLES]
    out: list[str] = []
    for w in words:
        value = NUMBERS.get(w)
        if value is not None and 0 < value < 10 and out and out[-1].isdigit() and int(out[-1]) in TENS.values():
            out[-1] = str(int(out[-1]) + value)  # "twenty one" -> 21
        else:
            out.append(str(value) if value is not None else w)
    # an answer made only of articles ("A") must not normalise to nothing
    return " ".join(out) or " ".join(str(text).lower().split())


def exact_match(prediction: str, answer: str) -> bool:
    return bool(normalize(prediction)) and normalize(prediction) == normalize(answer)


def grade(samples: pd.DataFrame, predictions: pd.DataFrame, judge: str | None = None, **judge_options) -> pd.DataFrame:
    """One row per sample: ``prediction``, ``exact``, ``judge_prompt``, ``judge_raw``, ``judge_says``, ``correct``.

    ``predictions`` has ``id`` and ``prediction`` (missing ids count as unanswered). Without ``judge``, only exact
    matches are correct.
    """
    from omniaudit.evaluation.judges import JudgeItem, make_judge, parse_answer

    df = samples[["id", "template_name", "category", "tier", "question", "answer"]].merge(
        predictions[["id", "prediction"]], on="id", how="left")
    df["prediction"] = df["prediction"].fillna("").astype(str)
    df["exact"] = [exact_match(p, a) for p, a in zip(df["prediction"], df["answer"], strict=True)]
    ask = df[~df["exact"] & (df["prediction"].str.strip() != "")]
    df["judge_prompt"] = None
    df["judge_raw"] = None
    df["judge_says"] = None
    if judge and len(ask):
        prompts = [JUDGE_PROMPT.format(question=q, answer=a, prediction=p)
                   for q, a, p in zip(ask["question"], ask["answer"], ask["prediction"], strict=True)]
        items = [JudgeItem(id=i, prompt=t, options=["Yes", "No"]) for i, t in zip(ask["id"], prompts, strict=True)]
        raws = make_judge(judge, **judge_options).answer(items)
        df.loc[ask.index, "judge_prompt"] = prompts
        df.loc[ask.index, "judge_raw"] = raws
        df.loc[ask.index, "judge_says"] = [parse_answer(r, ["Yes", "No"]) for r in raws]
    df["correct"] = df["exact"] | (df["judge_says"] == "Yes")
    return df


def accuracy_table(graded_runs: list[pd.DataFrame]) -> dict:
    """Accuracy (percent) overall and by template, category and tier: mean and sd over the inference runs."""
    def summarize(values: list[float]) -> dict:
        s = pd.Series(values, dtype=float)
        return {"mean": float(s.mean()), "sd": float(s.std(ddof=1)) if len(s) > 1 else 0.0, "runs": len(s)}

    out = {"overall": summarize([100 * g["correct"].mean() for g in graded_runs])}
    for key, column in (("by_template", "template_name"), ("by_category", "category"), ("by_tier", "tier")):
        groups = sorted({str(v) for g in graded_runs for v in g[column]})
        out[key] = {grp: summarize([100 * g.loc[g[column].astype(str) == grp, "correct"].mean()
                                    for g in graded_runs]) for grp in groups}
    return out
