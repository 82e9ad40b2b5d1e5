"""Grading free-form answers (C3PO §3): normalised exact match first, then an LLM judge for semantic equivalence.

Normalisation: lower case, number words to digits, punctuation and the articles a / an / the removed, whitespace
collapsed. When the normalised strings differ, a judge (any ``omniaudit judge`` SPEC) is asked whether the prediction
picks out the same entity or concept as the ground truth in the context of the question; it answers Yes or No, and
the prompt is stored with every graded row. Accuracy = #correct / #samples (an unanswered sample is wrong).

The judge's verdict is read by ``parse_verdict``: a final explicit Yes / No wins over the reasoning before it (and
over a leading one); without one, an explicit statement of (non-)equivalence is read ("There is no difference: both
name a rabbit." is Yes); a hedged, contradictory or empty answer is unparsed (None). An unparsed verdict is not a Yes,
so the sample counts as wrong, and audits report how many there were.
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


VERDICTS = ("Yes", "No")
_THINK = re.compile(r"<think>.*?</think>|<think>.*\Z", re.S | re.I)  # an unclosed block is unfinished reasoning
_MARKS = re.compile(r"[*`#_\"]")
_LABEL = (r"(?:final\s+answer|answer|verdict|judg(?:e)?ment|decision|conclusion|output|response|so|therefore|thus|"
          r"hence|i\s+(?:would\s+)?say|i'd\s+say)")
# a verdict that ends the text: alone on its line or sentence, or after a label / conclusion word
_FINAL = re.compile(rf"(?:\A|\n|[.!?:;]\s|\b{_LABEL}(?:\s+is)?\s*[:,\-]?\s*)[\s(\[]*(yes|no)[\s)\].!]*\Z")
_BOTH_FINAL = re.compile(r"(?:\A|\n|[.!?:;]\s)[\s(\[]*(?:yes|no)\s*(?:and|or|/|,)\s*(?:yes|no)[\s)\].!]*\Z")
_LABELLED = re.compile(rf"(?:\b{_LABEL}(?:\s+is)?\s*[:\-]\s*[(\[]?|\b(?:answer|verdict)\s+is\s+)(yes|no)\b"
                       r"(?!\s+(?:\w+\s+)?(?:different|difference|distinct|mismatch|discrepancy|longer))")
_LEADING = re.compile(r"\A[\s(\[]*(yes|no)[\s)\]]*(?:[.,!:;\u2014\u2013-]|\n|\Z)")
_HEDGE = re.compile(r"\b(?:maybe|perhaps|possibly|probably|unsure|uncertain|unclear|ambiguous|insufficient|"
                    r"not\s+sure|hard\s+to\s+(?:say|tell)|(?:cannot|can't|can\s+not)\s+(?:tell|determine|decide|say|be"
                    r"\s+sure|judge))\b")
_NOT = r"(?:\bnot|n't|\bnever|\bno\s+longer)"
# read in this order, each match removed before the next: negated negatives, negated positives, negatives, positives
_NEGATED_NEGATIVE = re.compile(rf"\b(?:no|without(?:\s+any)?|not\s+any|nothing)\s+(?:\w+\s+)?(?:difference|different|"
                               rf"mismatch|discrepancy|distinction|contradiction)s?\b|{_NOT}\s+(?:\w+\s+)?(?:different|"
                               rf"distinct|wrong|incorrect)\b")
_NEGATED_POSITIVE = re.compile(rf"{_NOT}\s+(?:\w+\s+){{0,2}}?(?:the\s+)?(?:same|equivalent|identical|equal|synonym"
                               rf"(?:s|ous)?|a\s+match|match(?:es|ing)?|correct|right)\b")
_NEGATIVE = re.compile(r"\b(?:different|differs?|difference|distinct|mismatch(?:es|ed)?|incorrect|wrong|unrelated|"
                       r"inequivalent|contradicts?|contradictory)\b")
_POSITIVE = re.compile(r"\b(?:equivalent|same|identical|synonym(?:s|ous)?|match(?:es|ed|ing)?|correct|equal)\b|"
                       r"\bboth\s+(?:\w+\s+)?(?:name|refer|mean|denote|describe|identify|indicate|say|give|pick)s?\b")


def _polarity(text: str) -> tuple[int, int]:
    """(statements of equivalence, statements of difference) in ``text`` (lower case), negations read first."""
    yes = no = 0
    for pattern, is_yes in ((_NEGATED_NEGATIVE, True), (_NEGATED_POSITIVE, False), (_NEGATIVE, False),
                            (_POSITIVE, True)):
        found = len(pattern.findall(text))
        text = pattern.sub(" ", text)
        yes, no = (yes + found, no) if is_yes else (yes, no + found)
    return yes, no


def parse_verdict(raw: str | None) -> str | None:
    """The grading judge's verdict, "Yes" (same entity or concept) or "No", or None when it cannot be read.

    In order: an answer that ends in both ("Yes and no.", "Yes/No") is unparsed; a Yes / No that ends the answer
    (alone, or after "Answer:", "so", "therefore" ...) wins over any reasoning before it; else the last labelled
    verdict ("Verdict: No" mid-text); else a leading Yes / No, unless what follows only argues the opposite ("No,
    there is no difference"); else, for an answer without a hedge, statements of equivalence ("both name a rabbit",
    "no difference") or of difference ("not the same", "different"), when they all point one way. Reasoning inside
    ``<think>`` blocks is ignored; an unclosed one is unfinished reasoning.
    """
    text = _MARKS.sub("", _THINK.sub(" ", str(raw or ""))).strip().lower()
    if not text:
        return None
    verdict = {"yes": "Yes", "no": "No"}
    if _BOTH_FINAL.search(text):  # "... Yes and no." / "Yes/No": both at once
        return None
    final = _FINAL.search(text)
    if final:
        return verdict[final.group(1)]
    labelled = [m.group(1) for m in _LABELLED.finditer(text)]
    if labelled:
        return verdict[labelled[-1]]
    leading = _LEADING.search(text)
    if leading:
        yes, no = _polarity(text[leading.end():])
        said = verdict[leading.group(1)]
        opposite = (said == "Yes" and no and not yes) or (said == "No" and yes and not no)
        return None if opposite else said
    if _HEDGE.search(text):
        return None
    yes, no = _polarity(text)
    return "Yes" if yes and not no else "No" if no and not yes else None


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
    matches are correct. ``judge_says`` is the verdict ``parse_verdict`` reads (None: not asked, or unparsed; an
    asked row has a ``judge_prompt``), so ``unparsed_verdicts`` counts them.
    """
    from omniaudit.evaluation.judges import JudgeItem, make_judge

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
        items = [JudgeItem(id=i, prompt=t, options=list(VERDICTS)) for i, t in zip(ask["id"], prompts, strict=True)]
        raws = make_judge(judge, **judge_options).answer(items)
        df.loc[ask.index, "judge_prompt"] = prompts
        df.loc[ask.index, "judge_raw"] = raws
        df.loc[ask.index, "judge_says"] = [parse_verdict(r) for r in raws]
    df["correct"] = df["exact"] | (df["judge_says"] == "Yes")
    return df


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
