"""Closed readers for composition answers a count, a number or a yes/no decides.

A C3PO counting question ("How many dogs bark?", gold "3") or a yes/no one ("Is there a dog barking?") has one right
answer that a free reply states in many ways: "There are three dogs barking.", "3 dogs.", "Yes, a dog barks in the
background." The normalised exact match (:func:`~omniaudit.answer_match.exact_match`) takes only the bare answer;
everything else went to the LLM judge, a call each. These readers read the stated value, or abstain with a reason,
never guessing:

- :func:`read_number`: the one number a reply states, in digits or words ("three" is 3,
  :func:`~omniaudit.answer_match.normalize`), its unit aside ("3 dogs"); none when it states several ("3 dogs, maybe
  4": ``conflict``), a range ("2-3", "2 or 3") or a bound ("at least 2", "about 3": ``hedged``), or denies it ("not
  3": ``negated``);
- :func:`read_yes_no`: yes or no as the closed-item reader reads a label ("Yes, a dog barks." is yes; "There is no
  barking." names no answer).

A reasoning trace is never read (:func:`omniaudit.runners.reasoning.split_reasoning`). :func:`~.grading.grade`
uses :func:`closed_reading` between the exact match and the judge: a value read decides the row (``read_by:
closed``), so the judge is asked only about replies no reader could read.
"""

from __future__ import annotations

import re

from omniaudit.answer_language import unreadable
from omniaudit.answer_match import normalize
from omniaudit.runners.reading import Reading, read_answer
from omniaudit.runners.reasoning import split_reasoning

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\d)")
_BOUND = re.compile(r"\b(?:at\s+least|at\s+most|more\s+than|less\s+than|fewer\s+than|over|under|about|around|"
                    r"approximately|roughly|maybe|perhaps|probably|possibly|or\s+so|up\s+to|nearly|almost|"
                    r"several|some)\b|~|\+(?=\s|$)")
_RANGE = re.compile(r"\d\s*(?:-|\u2013|to|or|and)\s*-?\d")
_DENIED = re.compile(r"\b(?:not|no|never|isn't|aren't|wasn't)\s+(?:\w+\s+)?-?\d")


def _visible(raw: object) -> str | None:
    text = "" if raw is None else str(raw)
    split = split_reasoning(text)
    return None if split.cut else split.answer


def read_number(raw: object) -> Reading:
    """The one number ``raw`` states (as :func:`~omniaudit.answer_match.normalize` writes it), or None and why not
    (see the module docstring)."""
    text = _visible(raw)
    if text is None:
        return Reading(None, "reasoning-only")
    if not text.strip():
        return Reading(None, "empty")
    if unreadable(text):
        return Reading(None, "noise")
    norm = normalize(text)
    spelled = re.sub(r"\s+", " ", text.lower())
    numbers = _NUMBER.findall(norm)
    if not numbers:
        return Reading(None, "none")
    if _BOUND.search(norm) or _RANGE.search(spelled):
        return Reading(None, "hedged")
    if _DENIED.search(norm):
        return Reading(None, "negated")
    if len(set(numbers)) > 1:
        return Reading(None, "conflict")
    return Reading(numbers[0])


def read_yes_no(raw: object) -> Reading:
    """``yes`` or ``no`` as ``raw`` states it, or None and why not."""
    return read_answer(raw, ["yes", "no"])


def closed_kind(answer: str) -> str | None:
    """``number`` when a gold answer is a bare number, ``yes_no`` when it is yes or no, else None (the exact match
    and the judge decide)."""
    norm = normalize(answer)
    if re.fullmatch(r"-?\d+(?:\.\d+)?", norm):
        return "number"
    return "yes_no" if norm in ("yes", "no") else None


def closed_reading(prediction: str, answer: str) -> str | None:
    """The value a closed reader reads in ``prediction`` for a gold ``answer`` of its kind (normalised like the
    answer), or None: not a closed item, or the reply does not state one value."""
    kind = closed_kind(answer)
    if kind is None:
        return None
    reading = read_number(prediction) if kind == "number" else read_yes_no(prediction)
    return None if reading.option is None else normalize(reading.option)
