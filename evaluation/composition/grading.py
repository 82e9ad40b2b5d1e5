"""Grading free-form answers (C3PO §3): normalised exact match first (:mod:`omniaudit.answer_match`), a count or a
yes/no a closed reader reads (:mod:`~.closed_answers`), then an LLM judge for semantic equivalence
(:mod:`~.verdicts`). Accuracy = #correct / #samples (an unanswered sample is wrong).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from omniaudit.answer_match import exact_match, normalize
from omniaudit.evaluation.composition.closed_answers import closed_reading
from omniaudit.evaluation.composition.verdicts import JUDGE_PROMPT, VERDICTS, parse_verdict


def grade(samples: pd.DataFrame, predictions: pd.DataFrame, judge: str | None = None,
          progress: Callable[[str], None] | None = None, **judge_options) -> pd.DataFrame:
    """One row per sample: ``prediction``, ``exact``, ``closed``, ``read_by``, ``judge_prompt``, ``judge_raw``,
    ``judge_says``, ``correct``.

    ``predictions`` has ``id`` and ``prediction`` (missing ids count as unanswered). A count or a yes/no answer a
    closed reader reads (:mod:`~.closed_answers`: "There are three dogs." for gold 3) is decided without the judge
    (``closed``: whether it is the gold; ``read_by``: ``exact``, ``closed``, ``judge`` or None). Without ``judge``,
    only exact and closed matches are correct. ``progress`` hears the judge's "k/n". ``judge_says`` is the verdict
    ``parse_verdict`` reads (None: not asked, or unparsed; an asked row has a ``judge_prompt``), so
    ``unparsed_verdicts`` counts them.
    """
    from omniaudit.runners import JudgeItem, make_judge

    df = samples[["id", "template_name", "category", "tier", "question", "answer"]].merge(
        predictions[["id", "prediction"]], on="id", how="left")
    df["prediction"] = df["prediction"].fillna("").astype(str)
    df["exact"] = [exact_match(p, a) for p, a in zip(df["prediction"], df["answer"], strict=True)]
    # a count or a yes/no the closed readers read decides the row; the judge is asked about the rest only
    closed = [None if e else closed_reading(p, a, q)  # the question tells the count from times and durations
              for p, a, q, e in zip(df["prediction"], df["answer"], df["question"], df["exact"], strict=True)]
    df["closed"] = [c is not None and c == normalize(a) for c, a in zip(closed, df["answer"], strict=True)]
    df["read_by"] = ["exact" if e else "closed" if c is not None else None
                     for e, c in zip(df["exact"], closed, strict=True)]
    ask = df[df["read_by"].isna() & (df["prediction"].str.strip() != "")]
    df["judge_prompt"] = None
    df["judge_raw"] = None
    df["judge_says"] = None
    if judge and len(ask):
        prompts = [JUDGE_PROMPT.format(question=q, answer=a, prediction=p)
                   for q, a, p in zip(ask["question"], ask["answer"], ask["prediction"], strict=True)]
        items = [JudgeItem(id=i, prompt=t, options=list(VERDICTS)) for i, t in zip(ask["id"], prompts, strict=True)]
        raws = make_judge(judge, **judge_options).answer(items, progress)
        df.loc[ask.index, "judge_prompt"] = prompts
        df.loc[ask.index, "judge_raw"] = raws
        df.loc[ask.index, "judge_says"] = [parse_verdict(r) for r in raws]
    df.loc[df["judge_prompt"].notna(), "read_by"] = "judge"
    df["correct"] = df["exact"] | df["closed"] | (df["judge_says"] == "Yes")
    return df


def grading_progress(progress: Callable[[str], None] | None, run: str) -> Callable[[str], None] | None:
    """The progress of grading one run ("grading r1: 40/120")."""
    return None if progress is None else (lambda message: progress(f"grading {run}: {message}"))


def unparsed_verdicts(graded: pd.DataFrame) -> int:
    """Rows the judge was asked about whose verdict could not be read (they count as wrong)."""
    return int((graded["judge_prompt"].notna() & graded["judge_says"].isna()).sum())


def accuracy_table(graded_runs: list[pd.DataFrame]) -> dict:
    """Accuracy (percent) overall and by template, category, tier and category x tier (``IC/T2``; C3PO Table 3):
    mean and sd over the inference runs."""
    def summarize(values: list[float]) -> dict:
        s = pd.Series(values, dtype=float)
        return {"mean": float(s.mean()), "sd": float(s.std(ddof=1)) if len(s) > 1 else 0.0, "runs": len(s)}

    out = {"overall": summarize([100 * g["correct"].mean() for g in graded_runs])}
    keyed = [g.assign(category_tier=g["category"].astype(str) + "/T" + g["tier"].astype(str)) for g in graded_runs]
    for key, column in (("by_template", "template_name"), ("by_category", "category"), ("by_tier", "tier"),
                        ("by_category_tier", "category_tier")):
        groups = sorted({str(v) for g in keyed for v in g[column]})
        out[key] = {grp: summarize([100 * g.loc[g[column].astype(str) == grp, "correct"].mean()
                                    for g in keyed]) for grp in groups}
    return out
