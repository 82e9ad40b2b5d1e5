"""Grading free-form answers (C3PO §3): normalised exact match first, then an LLM judge for semantic equivalence.

Normalisation, the same on both sides: Unicode NFKC (full-width ``ＪＡＰＡＮＥＳＥ`` is ``JAPANESE``), case folding
(``Straße`` = ``STRASSE``), Latin combining accents stripped after both are folded (``İstanbul`` folds to ``i`` +
a combining dot, so it matches ``Istanbul`` and ``istanbul``; ``México`` matches ``Mexico``), digit grouping removed
(``1,000`` = ``1000``; ``1,5`` and ``10,00`` are no grouping), number words to digits (English, and Spanish ``cero``
to ``doce`` but ``once``), punctuation and the articles a / an / the removed, whitespace collapsed. When the
normalised strings differ, a judge (any ``omniaudit judge`` SPEC) is asked whether the prediction picks out the same
entity or concept as the ground truth in the context of the question; it answers Yes or No, and the prompt is stored
with every graded row. Accuracy = #correct / #samples (an unanswered sample is wrong).

The judge's verdict is read by ``parse_verdict``: an explicit Yes / No is the verdict (a leading one stands over the
explanation after it: "No, there is no difference." is No); a final labelled or concluded one ("Final answer: No",
"..., so no") wins over the reasoning before it; two bare opposite verdicts ("No - wait, Yes", "Yes. No.") are a
contradiction, unparsed; without one, an explicit statement of (non-)equivalence is read ("There is no difference:
both name a rabbit." is Yes); a hedged, empty or echoed answer (the question or the instruction repeated) is
unparsed (None). Spanish and Chinese verdicts are read through an English gloss ("Sí", "是的", "不是", "否").
An unparsed verdict is not a Yes, so the sample counts as wrong, and audits report how many there were.

A judge that says Yes to (nearly) everything grades every answer right: :func:`verdict_yes_rate` gives the Yes rate
of the verdicts read, with a Wilson 95% interval, and flags the judge when the interval's lower bound is above
``YES_FLAG`` (0.9) or when every verdict read is a Yes (at least ``YES_FLAG_MIN`` of them).
"""

from __future__ import annotations

import re
import unicodedata

import pandas as pd

from omniaudit.evaluation.answer_language import Gloss, language, prepare

UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
# Spanish number words ("once", 11, is left out: it is an English word)
SPANISH = {"cero": 0, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8,
           "nueve": 9, "diez": 10, "doce": 12}
NUMBERS = {**{w: i for i, w in enumerate(UNITS)}, **TENS, **SPANISH}
ARTICLES = {"a", "an", "the"}
JUDGE_PROMPT = ("Question: {question}\nGround-truth answer: {answer}\nPredicted answer: {prediction}\n"
                "In the context of the question, does the predicted answer pick out exactly the same entity or "
                "concept as the ground-truth answer? Answer with exactly one of: Yes, No.")


VERDICTS = ("Yes", "No")
YES_FLAG = 0.9  # a judge whose Yes rate has a Wilson 95% lower bound above this is flagged
YES_FLAG_MIN = 5  # ... or that says Yes to every one of at least this many verdicts
_THINK = re.compile(r"<think>.*?</think>|<think>.*\Z", re.S | re.I)  # an unclosed block is unfinished reasoning
_MARKS = re.compile(r"[*`#_\"]")
_LABEL = (r"(?:final\s+answer|answer|verdict|judg(?:e)?ment|decision|conclusion|output|response|so|therefore|thus|"
          r"hence|i\s+(?:would\s+)?say|i'd\s+say)")
# a verdict that ends the text after a label / conclusion word, or alone on its line or sentence
_FINAL_LABELLED = re.compile(rf"\b{_LABEL}(?:\s+is)?\s*[:,\-]?\s*[\s(\[]*(yes|no)[\s)\].!]*\Z")
_FINAL = re.compile(r"(?:\A|\n|[.!?:;]\s)[\s(\[]*(yes|no)[\s)\].!]*\Z")
_BOTH_FINAL = re.compile(r"(?:\A|\n|[.!?:;]\s)[\s(\[]*(?:yes|no)\s*(?:and|or|/|,)\s*(?:yes|no)[\s)\].!]*\Z")
_LABELLED = re.compile(rf"(?:\b{_LABEL}(?:\s+is)?\s*[:\-]\s*[(\[]?|\b(?:answer|verdict)\s+is\s+)(yes|no)\b"
                       r"(?!\s+(?:\w+\s+)?(?:different|difference|distinct|mismatch|discrepancy|longer))")
_LEADING = re.compile(r"\A[\s(\[]*(yes|no)[\s)\]]*(?:[.,!:;\u2014\u2013-]|\n|\Z)")
# a bare verdict word anywhere ("No - wait, Yes"): after the start or a punctuation mark, before one or the end
_BARE = re.compile(r"(?:\A|[.!?;:,(\-\u2014\u2013]|\n)\s*(?:(?:wait|actually|hmm|or|oh|i mean)\W*\s*)*(yes|no)"
                   r"(?=\s*(?:[.!?;:,)\-\u2014\u2013]|\n|\Z))")
_SYNONYMS = [(re.compile(r"\b(?:yep|yeah|yup|yea|affirmative)\b"), "yes"),
             (re.compile(r"\b(?:nope|nah|negative)\b(?!\s+\w)"), "no")]
_QUESTION = re.compile(r"[^.!?\n]*\?")  # a question (the judge's prompt echoed, or a rhetorical one) is no claim
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
# Spanish and Chinese verdicts, glossed into English before the rules above
_ES_VERDICT = Gloss([
    (r"s[ií]", "yes"), (r"no", "no"), (r"(?:la |mi )?respuesta(?: final)?(?: es)?", "answer:"),
    (r"as[ií] que|por lo tanto|por tanto|entonces", "so"), (r"equivalentes?", "equivalent"),
    (r"distint[oa]s?|diferentes?", "different"), (r"iguales?|l[oa] mism[oa]|el mismo|la misma|los mismos", "the same"),
    (r"no estoy segur[oa]", "not sure"), (r"tal vez|quiz[aá]s?|a lo mejor|posiblemente", "maybe"),
    (r"correct[oa]s?", "correct"), (r"incorrect[oa]s?", "incorrect"), (r"ambos|ambas", "both"),
    (r"nombran|se refieren a|designan", "name"), (r"no hay (?:ninguna )?diferencia", "no difference"),
    (r"diferencias?", "difference"), (r"o", "or"), (r"y", "and"), (r"son|es", "are"),
])
_ZH_VERDICT = Gloss([
    ("是的", "yes"), ("对的", "yes"), ("否", "no"), ("是否", "whether"), ("答案", "answer"), ("结论", "conclusion"),
    ("相同", "the same"), ("一样", "the same"), ("同一个", "the same"), ("同一", "the same"), ("不一样", "different"),
    ("不同", "different"), ("不相同", "different"), ("不确定", "not sure"), ("不清楚", "not sure"), ("也许", "maybe"),
    ("可能", "maybe"), ("或许", "maybe"), ("或", "or"), ("还是", "or"), ("正确", "correct"), ("不正确", "incorrect"),
    ("错误", "incorrect"), ("两者都", "both"), ("两者", "both"), ("都", "both"), ("指的是", "name"), ("所以", "so"),
    ("因此", "so"), ("没有区别", "no difference"), ("没区别", "no difference"), ("区别", "difference"),
    ("不", "not"), ("是", "is"), ("的", ""), ("了", ""), ("吧", ""),
], cjk=True)
_ZH_YES_NO = [(re.compile(r"(?:\A|(?<=[:.!;]))\s*(?:不是|不对)(?=\s*(?:[,.!;:]|\Z))"), " no"),
              (re.compile(r"(?:\A|(?<=[:.!;]))\s*(?:是|对)(?=\s*(?:[,.!;:]|\Z))"), " yes")]


def _verdict_text(raw: str | None) -> str:
    """The judge's answer, lower case, without reasoning blocks and marks; Spanish and Chinese glossed."""
    text = _MARKS.sub("", _THINK.sub(" ", prepare(raw))).strip()
    lang = language(text)
    if lang == "zh":
        for pattern, word in _ZH_YES_NO:
            text = pattern.sub(word, text)
        text = _ZH_VERDICT(text)
    elif lang == "es":
        text = _ES_VERDICT(text)
    text = text.lower()
    for pattern, word in _SYNONYMS:
        text = pattern.sub(word, text)
    return text


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

    In order: an answer that ends in both ("Yes and no.", "Yes/No") is unparsed; a Yes / No that ends the answer after
    a label or conclusion ("Answer:", "so", "therefore" ...) wins over any reasoning before it; one that ends the
    answer alone on its line or sentence wins too, unless an opposite bare Yes / No came before it ("Yes. No.": a
    contradiction, unparsed); else the last labelled verdict ("Verdict: No" mid-text); else a leading Yes / No, which
    stands over the explanation after it ("No, there is no difference" is No) unless a later bare opposite verdict
    contradicts it ("No - wait, Yes": unparsed); else, for an answer without a hedge, statements of equivalence
    ("both name a rabbit", "no difference") or of difference ("not the same", "different"), when they all point one
    way. Questions (the prompt echoed back) are no claim; reasoning inside ``<think>`` blocks is ignored, and an
    unclosed one is unfinished reasoning.
    """
    text = _verdict_text(raw)
    if not text:
        return None
    verdict = {"yes": "Yes", "no": "No"}
    if _BOTH_FINAL.search(text):  # "... Yes and no." / "Yes/No": both at once
        return None
    bare = [(m.start(1), m.group(1)) for m in _BARE.finditer(text)]
    final = _FINAL_LABELLED.search(text)
    if final:
        return verdict[final.group(1)]
    final = _FINAL.search(text)
    if final:
        said = final.group(1)
        return None if any(w != said for start, w in bare if start < final.start(1)) else verdict[said]
    labelled = [(m.start(1), m.group(1)) for m in _LABELLED.finditer(text)]
    if labelled:  # the last one, unless a bare opposite verdict follows it ("The answer is no - wait, yes.")
        start, said = labelled[-1]
        return None if any(w != said for s, w in bare if s > start) else verdict[said]
    leading = _LEADING.search(text)
    if leading:
        said = leading.group(1)
        return None if any(w != said for _, w in bare) else verdict[said]
    claims = _QUESTION.sub(" ", text)
    if _HEDGE.search(claims):
        return None
    yes, no = _polarity(claims)
    return "Yes" if yes and not no else "No" if no and not yes else None


def verdict_yes_rate(says: pd.Series | list) -> dict:
    """The Yes rate of the verdicts read (``judge_says``: "Yes" / "No" / None for not asked or unparsed).

    ``{n, yes, no, rate, ci, flagged, rule}``: ``rate`` = yes / (yes + no) with a Wilson score 95% interval
    (``ci``; None without a verdict); ``flagged`` when the lower bound is above ``YES_FLAG`` or every verdict is a
    Yes (at least ``YES_FLAG_MIN`` of them): such a judge grades every non-exact answer right, so the accuracy
    reflects the judge, not the model. Reference: the Wilson score interval, as SciPy's
    ``binomtest(yes, n).proportion_ci(method="wilson")``.
    """
    values = pd.Series(list(says), dtype=object)
    yes, no = int((values == "Yes").sum()), int((values == "No").sum())
    n = yes + no
    rule = (f"flagged when the Wilson 95% lower bound of the Yes rate is above {YES_FLAG}, or when every verdict read "
            f"is a Yes ({YES_FLAG_MIN} or more)")
    if not n:
        return {"n": 0, "yes": 0, "no": 0, "rate": None, "ci": [None, None], "flagged": False, "rule": rule}
    z, p = 1.959963984540054, yes / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / (
        1 + z * z / n)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    flagged = low > YES_FLAG or (no == 0 and yes >= YES_FLAG_MIN)
    return {"n": n, "yes": yes, "no": no, "rate": p, "ci": [low, high], "flagged": bool(flagged), "rule": rule}


_ACCENTS = re.compile(r"[\u0300-\u036f]")  # Latin combining accents (kana voicing marks and others are kept)
_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,]|\.\d)")  # 1,000 and 1,000,000 (not 1,5 or 10,00)


def fold(text: str) -> str:
    """NFKC, case-folded, Latin accents stripped, recomposed: the same on both sides of a comparison."""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", str(text)).casefold())
    return unicodedata.normalize("NFKC", _ACCENTS.sub("", folded))


def normalize(text: str) -> str:
    text = _GROUPED.sub(lambda m: m.group().replace(",", ""), fold(text))
    words = [w for w in re.sub(r"[^\w\s]", " ", text.replace("-", " ")).split() if w not in ARTICLES]
    out: list[str] = []
    for w in words:
        value = NUMBERS.get(w)
        if value is not None and 0 < value < 10 and out and out[-1].isdigit() and int(out[-1]) in TENS.values():
            out[-1] = str(int(out[-1]) + value)  # "twenty one" -> 21
        else:
            out.append(str(value) if value is not None else w)
    # an answer made only of articles ("A") must not normalise to nothing
    return " ".join(out) or " ".join(text.split())


def exact_match(prediction: str, answer: str) -> bool:
    return bool(normalize(prediction)) and normalize(prediction) == normalize(answer)


def grade(samples: pd.DataFrame, predictions: pd.DataFrame, judge: str | None = None, **judge_options) -> pd.DataFrame:
    """One row per sample: ``prediction``, ``exact``, ``judge_prompt``, ``judge_raw``, ``judge_says``, ``correct``.

    ``predictions`` has ``id`` and ``prediction`` (missing ids count as unanswered). Without ``judge``, only exact
    matches are correct. ``judge_says`` is the verdict ``parse_verdict`` reads (None: not asked, or unparsed; an
    asked row has a ``judge_prompt``), so ``unparsed_verdicts`` counts them.
    """
    from omniaudit.evaluation.runners import JudgeItem, make_judge

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
