"""Whether a reply commits to a choice: the reader's doubt rules, shared by every kind of option set.

A misreading is worse than a non-reading, so a choice the reader finds is voided by the doubt around it: a question
("maybe it's Polish?"), a hypothetical or first impression ("I would have said A", "at first, A", "could be sad"), a
negated claim ("It is not the case that A is better"), words that take it back ("Wait, no"), or a second thought
("A... or maybe B"). :func:`commitment` picks the reply's final commitment among the explicit choices
:func:`choices` found (a final answer, or an option closing the reply, outranks an earlier choice it contradicts);
:func:`no_choice` says why a reply without one names nothing. :class:`Reading` is what a reader returns and
:data:`REASONS` why a reply is left unread. ``omniaudit.runners.reading`` builds the choice patterns of each option
set on the pieces here (:data:`SLOT`, :data:`HEDGE`, :data:`CONCLUDE`, :data:`END`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

SLOT = r"(?:clip|option|candidate|slot|sample|recording|audio|response|description)"


HEDGE = (r"(?:i\s+think|i\s+believe|i'?d\s+say|i\s+would\s+say|i\s+guess|probably|definitely|clearly|likely|"
          r"certainly|obviously|surely|it'?s|it\s+is|that'?s|that\s+is|(?:(?:my|the)\s+)?(?:final\s+)?answer"
          r"(?:\s+is)?)")


CONCLUDE = (r"(?i:\b(?:so|thus|therefore|hence|overall|ultimately|finally|in\s+conclusion|in\s+summary|"
             rf"to\s+conclude)\b\s*[,:]?\s*(?:{HEDGE}\s*[:,]?\s*)?)")


END = r"(?=[^\w\n]*(?:\n|$)|\s*[.!;,)\]])"  # the option ends its clause


NEGATED = re.compile(r"(?i:(?:\bnot(?!\s+(?:only|just|merely)\b)|n't|\bnever|\bno|\bwithout)\s+(?:\w+\s+)?)$")


SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]*")


NOT_CLAUSE = r"(?!\s*(?i:which|with|that|whose|who)\b)"  # "A, which hisses, is noisier" does not lead with A


# the option a self-correction gives instead ("A. Actually no, B.", "Wait - it's B")
# corrections as chat models write them: "Edit: B", "Sorry, I meant B", "Never mind, B", "Upon re-listening, B"
CORRECTION = (r"second\s+thoughts?|hold\s+on|never\s*mind|my\s+(?:mistake|bad)|(?:sorry,?\s+)?i\s+meant|oops|"
              r"i\s+misspoke|strike\s+that|changed\s+my\s+(?:answer|mind)|(?:up)?on\s+(?:further|closer|second|"
              r"a\s+second)\s+(?:listen(?:ing)?|hearing|inspection|thought|look)|(?:after|upon|on)?\s*re-?listening|"
              r"having\s+(?:listened|heard)\s+(?:it\s+)?again|thinking\s+(?:again|more|about\s+it\s+more)|"
              r"(?:edit|update|revised|revision|corrected)\s*:")
INSTEAD = (r"(?i:\b(?:actually|wait|no|correction|i\s+mean|or\s+rather|scratch\s+that|make\s+that|on\s+second\s+"
           rf"thoughts?|{CORRECTION})(?!\w))[^\w\n]*(?:(?i:better|rather|make\s+it|i'?ll\s+(?:say|go\s+with)|it'?s|"
           r"instead)\s+)?")


ITS = r"(?i:\b(?:it'?s|it\s+is|that'?s|that\s+is|it\s+(?:must|has\s+to)\s+be)\s+)"  # "..., it's B."


class Reading(NamedTuple):
    """What a reply says: the ``option`` it names, or None and the ``reason`` (one of :data:`REASONS`)."""

    option: str | None
    reason: str | None = None


REASONS = {
    "empty": "nothing written",
    "noise": "no language (byte noise, a repeated token)",
    "none": "no option named",
    "tie": "the options judged equal, or neither chosen",
    "conflict": "several options chosen or named, none of them finally",
    "negated": "the only choice is negated (\"it is not the case that A is better\")",
    "hedged": "no commitment: a hypothetical, a question, or \"hard to tell\"",
    "reversed": "the choice is taken back (\"wait, no\", \"actually\") without a new one",
    "label": "only the supplied label is reported, neither adopted nor replaced",
    "reasoning-only": "only a reasoning trace (<think>, reasoning_content) names an option, or it was cut off",
    "language": "written in a language the readers do not gloss",
}


# the rest of a clause, up to a turn ("At first it sounds sad, but overall the emotion is angry")
SAME_CLAUSE = r"(?:(?!\b(?:but|however|yet|though|although|now|whereas)\b)[^.!?;:\n])*"


# a choice inside a hypothetical or a first impression is no commitment ("I would have said A", "at first, A")
HYPOTHETICAL = re.compile(
    r"(?i:\b(?:would\s+have\s+(?:said|chosen|picked|gone\s+with|preferred)|might\s+have\s+(?:said|chosen|picked)|"
    r"was\s+going\s+to\s+(?:say|choose|pick|go\s+with)|at\s+first(?:\s+glance)?|initially|"
    r"i\s+(?:first\s+|initially\s+|originally\s+)?(?:thought|assumed|guessed)|my\s+(?:initial|original|first)\s+(?:pick|choice|answer)\s+was|(?:my\s+)?first\s+(?:impression|guess|thought)|"
    r"i\s+had\s+thought|(?:one|someone|somebody|you)\s+(?:might|could|would)\s+(?:say|think|argue)|"
    r"maybe|perhaps|possibly|(?:it\s+)?(?:could|might|may)\s+(?:be|well\s+be|have\s+been)|"
    r"(?:probability|chance|likelihood|odds)\s+(?:that|of))\b"
    rf"{SAME_CLAUSE})$")


# a choice inside a negated claim is no choice ("It is not the case that A is better", "I don't think A is better")
NEGATED_CLAIM = re.compile(
    r"(?i:(?:\bnot\s+the\s+case|\bnot\s+true|\bisn'?t\s+true|\bdon'?t\s+think|\bdo\s+not\s+think|"
    r"\bwouldn'?t\s+say|\bwould\s+not\s+say|\bcan'?t\s+say|\bcannot\s+say|\bdisagree|\bfalse\s+that|"
    rf"\bwrong\s+to\s+say|\bnot\s+convinced|\bno\s+way)\b{SAME_CLAUSE})$")


# words that take back what came before ("Wait, no", "Actually", "On second thought", "A... no")
REVERSAL = re.compile(
    r"(?i:\b(?:wait|actually|on\s+second\s+thoughts?|correction|scratch\s+that|i\s+mean|or\s+rather|then\s+again|"
    r"(?:after|on)\s+(?:listening|hearing|thinking)(?:\s+(?:again|more|twice|it\s+over))?|on\s+reflection|"
    r"changing\s+my\s+(?:answer|mind)|i\s+take\s+(?:it|that)\s+back|let\s+me\s+(?:reconsider|revise)|"
    r"i(?:'ll|\s+will|\s+would)?(?:\s+have\s+to|\s+must|\s+should|\s+need\s+to)?\s+revise|hmm+|just\s+kidding|"
    rf"{CORRECTION}|at\s+first)(?!\w)|(?:^|[.!?;]\s*)rather\b|"
    r"(?:^|[.!?;:,]\s*|\s-+\s*|\.\.\.\s*)no(?:pe)?\s*(?:[,:;.!-]|$))")


# a second thought after a choice leaves it open ("A... or maybe B.", "B, or perhaps A"), and so does an alternative
# offered right after it ("The first one... or the second.", "A, or B")
SECOND_THOUGHT = re.compile(r"(?i:\bor\s+(?:maybe|perhaps|possibly|probably)\b|\bor\s+is\s+it\b|"
                            r"^[\s,.\u2026\-\u2013\u2014]*or\b(?!\s+rather\b|\s+not\b))")


# a final answer outranks an earlier choice it contradicts
FINAL = re.compile(r"(?i:\b(?:final(?:ly)?|answer|verdict|decision|in\s+the\s+end|ultimately|in\s+conclusion|"
                    r"to\s+conclude|overall)\b[^.!?\n]{0,24})$")


UNSURE = re.compile(r"(?i:\b(?:(?:hard|difficult|impossible)\s+to\s+(?:determine|say|tell|judge|decide|know|call)|"
                     r"can'?t\s+(?:tell|determine|say|decide|judge)|cannot\s+(?:tell|determine|say|decide|judge)|"
                     r"can'?t\s+(?:pick|choose)|cannot\s+(?:pick|choose)|not\s+sure|unsure|unclear|uncertain|"
                     r"i\s+don'?t\s+know|no\s+idea)\b)")


TIE = re.compile(r"(?i:\b(?:tie|tied|a\s+draw|equal(?:ly)?|(?:about|roughly|exactly)\s+the\s+same|no\s+difference|"
                  r"(?:both|neither)\b|can'?t\s+(?:choose|decide|pick)\s+between|indistinguishable)\b)")


ASKED_NO = re.compile(r"\?\s*(?i:no|nope)\b\W")  # "Happy? No. The speaker sounds sad.": the question is answered


UNCOMMITTED = re.compile(r"(?i:\b(?:likely|almost|possibly|probably|might|could|maybe|perhaps)\b)")


MAYBE_AFTER = re.compile(r"\w+\W*(?i:maybe|perhaps|possibly|probably\s+not|not\s+sure|i\s+guess)\b")


MAYBE = re.compile(r"(?i:\b(?:maybe|perhaps|possibly|(?:could|might|may)\s+(?:well\s+)?be)\b)")


NEGATED_MORE = re.compile(r"(?i:\b(?:anything\s+but|far\s+from|rather\s+than|instead\s+of|other\s+than|hardly|"
                           r"barely)\s+(?:\w+\s+)?|"
                           r"\bnot\s+the\s+case\s+that\s+(?:\w+\s+){0,3}|"
                           # a judgement denied: "I would not call it sad", "I don't think it's angry"
                           r"(?:\bnot|n't)\s+(?:call|say|describe|consider|think|classify|label|characteri[sz]e|find)\b"
                           r"(?:\s+(?:that|it|this|him|her|the\s+\w+|he|she|is|it's|as|was|would\s+be))*\s+|\b(?:rejected|dispreferred|loser|worse|worst|not\s+preferred|"
                           r"eliminated)\s*[:=\-]\s*(?:\w+\s*)?)$")


def sentence_of(text: str, start: int) -> tuple[int, int]:
    """Start and end of the sentence (or line) around ``start``."""
    left = max(text.rfind(c, 0, start) for c in ".!?;\n") + 1
    ends = [i for i in (text.find(c, start) for c in ".!?;\n") if i >= 0]
    return left, min(ends) + 1 if ends else len(text)


def void(text: str, start: int) -> str | None:
    """Why a choice at ``start`` is no commitment (``hedged``, ``negated``), or None."""
    left, end = sentence_of(text, start)
    before = text[left:start]
    if text[left:end].rstrip().endswith("?") or HYPOTHETICAL.search(before) or MAYBE_AFTER.match(text, start, end):
        return "hedged"
    return "negated" if NEGATED_CLAIM.search(before) else None


def commitment(text: str, spans: list[tuple[int, int, str]]) -> Reading | None:
    """The option of the reply's final commitment among the explicit choices ``spans``, or why there is none; None
    when there are no choices at all (the caller looks at bare mentions)."""
    if not spans:
        return None
    voided = [void(text, s[0]) for s in spans]
    live = [s for s, why in zip(spans, voided, strict=True) if why is None]
    if not live:
        return Reading(None, "negated" if "negated" in voided else "hedged")
    start, end, option = live[-1]
    if REVERSAL.search(text[end:]):
        return Reading(None, "reversed")  # "Description A is better. Wait, no: B is more faithful"
    if SECOND_THOUGHT.search(text[end:]) or UNSURE.search(text[end:]):
        return Reading(None, "hedged")  # "A... or maybe B.", "..., the first. Hard to call."
    final = FINAL.search(text[:start]) or closing(text, start, end)
    for s in live[:-1]:
        if s[2].lower() != option.lower() and not final and not REVERSAL.search(text[s[1]:start]):
            return Reading(None, "conflict")  # "A is better. B is better."
    return Reading(option)


def closing(text: str, start: int, end: int) -> bool:
    """The choice closes the reply on a short sentence of its own ("... weighing both. B."): a final answer."""
    left, _ = sentence_of(text, start)
    return not re.search(r"\w", text[end:]) and len(re.findall(r"\w+", text[left:start])) <= 3


def no_choice(text: str, named: set[str], negated: bool) -> Reading:
    """Why a reply without an explicit choice names no option."""
    if len(named) > 1:
        return Reading(None, "conflict")
    if UNSURE.search(text) or MAYBE.search(text):
        return Reading(None, "hedged")
    if TIE.search(text):
        return Reading(None, "tie")
    return Reading(None, "negated" if negated else "none")


def sentence_choices(text: str, ref: str) -> list[tuple[int, int, str]]:
    """Sentences (or lines) that are only the option, possibly hedged: "B.", "I think clip B.", "Answer: sad"."""
    bare = re.compile(rf"\W*(?i:{HEDGE}\W+)*{ref}[\s.,:;!?)\]\"'*_~-]*")  # punctuation only: "B: ★★☆" is a score
    found = []
    for sentence in SENTENCE.finditer(text):
        m = bare.fullmatch(sentence.group())
        if m:
            found.append((sentence.start() + m.start(1), sentence.start() + m.end(1), m.group(1)))
    return found


def negated(before: str) -> bool:
    return bool(NEGATED.search(before) or NEGATED_MORE.search(before))


def excluded(text: str, start: int, end: int, coord_ref: str) -> bool:
    """A negated or coordinated mention ("not A", "A or B", "neither A nor B", "happy/sad") names no choice."""
    before, after = text[:start], text[end:]
    if negated(before):
        return True
    joint = r"(?:[/&]|(?i:\b(?:or|and|nor|vs\.?|versus|between|either|neither|both)\b))"
    listed = re.search(rf"{coord_ref}\)?\s*,\s*\(?$", before)  # "happy, sad" but not "Not sad, happy"
    if re.search(rf"{joint}\s*(?:(?i:{SLOT})\s*)?\(?$", before) or (listed and not negated(before[:listed.start()])):
        return True
    return bool(re.match(rf"\)?\s*(?:[/&,]|(?i:(?:or|and|nor|vs\.?|versus)\b))\s*{coord_ref}", after))


def choices(text: str, patterns: list[re.Pattern], ref: str, coord_ref: str,
             extra: Iterable[tuple[int, int, str]] = ()) -> list[tuple[int, int, str]]:
    """The explicit choices ``(start, end, option)`` in order, negated and coordinated mentions left out."""
    spans = {(m.start(1), m.end(1), m.group(1)) for p in patterns for m in p.finditer(text)}
    spans |= set(sentence_choices(text, ref)) | set(extra)
    return sorted(s for s in spans if not excluded(text, s[0], s[1], coord_ref))
