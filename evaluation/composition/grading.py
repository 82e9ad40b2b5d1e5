"""Grading free-form answers (C3PO §3): a reply is read without a judge where it can be (:mod:`~.replies`: its
reasoning trace set aside, then the normalised exact match (:mod:`omniaudit.answer_match`), a count or a yes/no a
closed reader reads (:mod:`~.closed_answers`), or the option of the template's answer vocabulary it names
(:func:`omniaudit.runners.reading.read_answer`)); the LLM judge decides semantic equivalence for the rest
(:mod:`~.verdicts`). A reply no reader reads and no judge grades is *ungraded*: neither right nor wrong, left out of
accuracy and of every measure (never read as a wrong answer). Accuracy = #correct / #graded samples (an empty reply
is graded wrong).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pandas as pd

from omniaudit.answer_match import normalize
from omniaudit.evaluation.composition.replies import read_reply, ungraded_mask, ungraded_note
from omniaudit.evaluation.composition.verdicts import JUDGE_PROMPT, VERDICTS, parse_verdict

GRADED_COLUMNS = ["id", "template_name", "category", "tier", "question", "answer"]
VOCABULARY = "answer_vocabulary"  # the sample's template's possible answers (the builder writes them)


def grade(samples: pd.DataFrame, predictions: pd.DataFrame, judge: str | None = None,
          progress: Callable[[str], None] | None = None, **judge_options) -> pd.DataFrame:
    """One row per sample: ``prediction``, ``exact``, ``closed``, ``read_by``, ``read``, ``judge_prompt``,
    ``judge_raw``, ``judge_says``, ``correct``, ``ungraded`` and ``unread`` (and ``answer_vocabulary`` when
    ``samples`` has it).

    ``predictions`` has ``id`` and ``prediction`` (missing ids count as unanswered: graded wrong). Each reply is read
    by :func:`~.replies.read_reply` (``read``: the answer it states, normalised; ``closed``: read by a closed or
    vocabulary reader and the gold; ``read_by``: ``exact``, ``closed``, ``judge`` or None). The judge, when given, is
    asked about the replies no reader read (their text without a reasoning trace); without one they are
    ``ungraded`` (``unread``: why: the reader's reason, ``reasoning-only`` for a reply that is only a trace or a cut
    one, which is never asked about either) and ``correct`` is False for them but means nothing: every consumer
    leaves them out. ``progress`` hears the judge's "k/n". ``judge_says`` is the verdict ``parse_verdict`` reads
    (None: not asked, or unparsed; an asked row has a ``judge_prompt``), so ``unparsed_verdicts`` counts them.
    """
    from omniaudit.runners import JudgeItem, make_judge

    columns = [*GRADED_COLUMNS, *([VOCABULARY] if VOCABULARY in samples.columns else [])]
    df = samples[columns].merge(predictions[["id", "prediction"]], on="id", how="left")
    df["prediction"] = df["prediction"].fillna("").astype(str)
    vocabularies = df[VOCABULARY] if VOCABULARY in df.columns else [None] * len(df)
    reads = [read_reply(p, a, q, v) for p, a, q, v in
             zip(df["prediction"], df["answer"].astype(str), df["question"], vocabularies, strict=True)]
    df["exact"] = [r.by == "exact" for r in reads]
    df["closed"] = [r.by == "closed" and r.value == g for r, g in zip(reads, _gold(df), strict=True)]
    df["read_by"] = [r.by for r in reads]
    df["read"] = [r.value for r in reads]
    ask = df[[r.by is None and r.reason not in ("empty", "reasoning-only") for r in reads]]
    visible = pd.Series([r.visible for r in reads], index=df.index)
    df["judge_prompt"] = None
    df["judge_raw"] = None
    df["judge_says"] = None
    if judge and len(ask):
        prompts = [JUDGE_PROMPT.format(question=q, answer=a, prediction=p)
                   for q, a, p in zip(ask["question"], ask["answer"], visible[ask.index], strict=True)]
        items = [JudgeItem(id=i, prompt=t, options=list(VERDICTS)) for i, t in zip(ask["id"], prompts, strict=True)]
        raws = make_judge(judge, **judge_options).answer(items, progress)
        df.loc[ask.index, "judge_prompt"] = prompts
        df.loc[ask.index, "judge_raw"] = raws
        df.loc[ask.index, "judge_says"] = [parse_verdict(r) for r in raws]
    df.loc[df["judge_prompt"].notna(), "read_by"] = "judge"
    df["read_by"] = df["read_by"].astype(object).where(df["read_by"].notna(), None)
    df["correct"] = df["exact"] | df["closed"] | (df["judge_says"] == "Yes")
    df["ungraded"] = [pd.isna(b) and r.reason != "empty" for b, r in zip(df["read_by"], reads, strict=True)]
    df["unread"] = [r.reason if u else None for r, u in zip(reads, df["ungraded"], strict=True)]
    return df


def _gold(df: pd.DataFrame) -> list[str]:
    return [normalize(str(a)) for a in df["answer"]]


def grading_progress(progress: Callable[[str], None] | None, run: str) -> Callable[[str], None] | None:
    """The progress of grading one run ("grading r1: 40/120")."""
    return None if progress is None else (lambda message: progress(f"grading {run}: {message}"))


def unparsed_verdicts(graded: pd.DataFrame) -> int:
    """Rows the judge was asked about whose verdict could not be read (they count as wrong)."""
    return int((graded["judge_prompt"].notna() & graded["judge_says"].isna()).sum())


def accuracy(graded: pd.DataFrame) -> float | None:
    """Percent correct over the graded rows (ungraded rows left out); None when none was graded."""
    kept = graded.loc[~ungraded_mask(graded), "correct"]
    return float(100 * kept.astype(bool).mean()) if len(kept) else None


def accuracy_table(graded_runs: list[pd.DataFrame]) -> dict:
    """Accuracy (percent, over the graded samples: ungraded ones left out) overall and by template, category, tier
    and category x tier (``IC/T2``; C3PO Table 3): mean and sd over the inference runs (a run that graded none of a
    group's samples is left out of its mean; ``runs`` counts the runs that count, None its mean without one)."""
    def summarize(values: list[float | None]) -> dict:
        s = pd.Series([v for v in values if v is not None], dtype=float)
        return {"mean": float(s.mean()) if len(s) else None, "sd": float(s.std(ddof=1)) if len(s) > 1 else 0.0,
                "runs": len(s)}

    out = {"overall": summarize([accuracy(g) for g in graded_runs])}
    keyed = [g.assign(category_tier=g["category"].astype(str) + "/T" + g["tier"].astype(str)) for g in graded_runs]
    for key, column in (("by_template", "template_name"), ("by_category", "category"), ("by_tier", "tier"),
                        ("by_category_tier", "category_tier")):
        groups = sorted({str(v) for g in keyed for v in g[column]})
        out[key] = {grp: summarize([accuracy(g[g[column].astype(str) == grp]) for g in keyed]) for grp in groups}
    return out


def grading_summary(samples: list[pd.DataFrame], ablations: list[pd.DataFrame], n_rows: int,
                    judge: str | None) -> dict:
    """How much the readers and the judge graded: over ``n_rows`` answered rows (samples and ablated copies, every
    run; empty ones too), ``n_read`` (read by exact match, a closed or vocabulary reader, or asked of the judge),
    ``n_ungraded`` (neither: left out of every measure), split by ``samples`` / ``ablations`` and by ``reasons``, the
    ``coverage`` n_read / n_rows and the ``note`` the measures carry ("N of M rows ungraded: no grader; pass
    --grader SPEC")."""
    def count(frames: list[pd.DataFrame]) -> tuple[int, int]:
        return (int(sum(g["read_by"].notna().sum() for g in frames)),
                int(sum(ungraded_mask(g).sum() for g in frames)))

    (read_s, ungraded_s), (read_a, ungraded_a) = count(samples), count(ablations)
    reasons = Counter(str(r) for g in (*samples, *ablations) if "unread" in g.columns for r in g["unread"].dropna())
    n_ungraded = ungraded_s + ungraded_a
    return {"n_rows": n_rows, "n_read": read_s + read_a, "n_ungraded": n_ungraded,
            "samples": {"n_rows": int(sum(len(g) for g in samples)), "n_ungraded": ungraded_s},
            "ablations": {"n_graded": int(sum(len(g) for g in ablations)), "n_ungraded": ungraded_a},
            "reasons": dict(sorted(reasons.items())), "coverage": (read_s + read_a) / n_rows if n_rows else None,
            "note": ungraded_note(n_ungraded, n_rows, judge, reasons)}
