"""How a reply to a pairwise item names a slot in other words than its letter: ordinals ("the second one", "Audio 2",
"the latter"), a bare 1 or 2 of a 1/2 set, a ranking ("Ranking:\n1. Audio 2", "1st — clip B, 2nd — clip A"), and the
answers being judged ("Answer 2 is better than Answer 1"). :func:`slot_references` rewrites them into the slot letters
the reader's rules read ("clip B", "Answer: clip B.").
"""

from __future__ import annotations

import re

from omniaudit.runners.commitment import SLOT


def slot_references(text: str, digits: bool) -> str:
    """``text`` with the slots it names in other words written as slot letters (``digits``: a 1/2 set)."""
    return _ordinals(_ranked_list(_answers_as_responses(text)), digits)


# ------------------------------------------------------------------------------------- ordinal slots (A/B, 1/2)
_SLOT_NOUN = r"(?:one|clip|audio|option|sample|recording|candidate|description|response|track|file|version|choice)"
_ORDINAL = {"first": "A", "former": "A", "second": "B", "latter": "B", "one": "A", "two": "B", "1": "A", "2": "B",
            "1st": "A", "2nd": "B",
            "a": "A", "b": "B"}
# "the first clip", "second one", "the latter" (then a verb or the end of the clause), "Audio 2", "clip (1)", "#2"
_ORDINAL_NOUN = re.compile(rf"(?i:\b(?:the\s+)?(first|second|1st|2nd|former|latter)\s+{_SLOT_NOUN}\b)"
                           r"(?!\s*\(?[AB12]\b)")
_ORDINAL_BARE = re.compile(r"(?i:\bthe\s+(first|second|former|latter)\b)(?=\s*(?:[.,;:!?)]|$|(?i:is|was|sounds?|"
                           r"seems?|has|had|wins|would|does|did|appears?|clearly|definitely|for\s+sure|please|"
                           r"because|since|as|over)\b))")
_ORDINAL_ALONE = re.compile(r"(?i:^(\W*)(?:the\s+)?(first|second|1st|2nd)(?=\W*$))")
_SLOT_NUMBER = re.compile(rf"(?i:\b(?:the\s+)?(?:{SLOT}|track|number|no\.|#)\s*\(?\s*(1|2|one|two)\b\)?)(?![.,]\d)|"
                          rf"(?i:#)\s*(1|2)\b(?![.,]\d)")
_QUANTITY = (r"(?i:\s*(?:s|sec|secs|seconds?|ms|msec|minutes?|min|mins|hours?|h|times?|db|hz|khz|x|%|/|:|\.\d|,\d|"
             r"st|nd|rd|th|star|stars|points?|of|out))\b|\s*[%:/]")
# (a scale's end, "1 = least natural", is no slot)
_BARE_DIGIT = re.compile(rf"(?<![\w.,/#-])(?<!\d:)([12])(?![\w%/]|[.,]\d)(?!{_QUANTITY})(?!\s*(?:=|means)\s*[a-zA-Z])")


def _ordinals(text: str, digits: bool) -> str:
    """Ordinal references as slot letters: "the second one" -> "clip B", "Audio 1" -> "clip A" (and, for a 1/2 set,
    a bare 1 or 2 that is not a quantity -> A / B)."""
    if digits:
        text = re.sub(r"\b([AB])\b", lambda m: m.group(1).lower(), text)  # letters name nothing in a 1/2 set
    text = _SLOT_NUMBER.sub(lambda m: f"clip {_ORDINAL[(m.group(1) or m.group(2)).lower()]}", text)
    text = _ORDINAL_NOUN.sub(lambda m: f"clip {_ORDINAL[m.group(1).lower()]}", text)
    text = _ORDINAL_BARE.sub(lambda m: f"clip {_ORDINAL[m.group(1).lower()]}", text)
    text = "\n".join(_ORDINAL_ALONE.sub(lambda m: f"{m.group(1)}clip {_ORDINAL[m.group(2).lower()]}", line)
                     for line in text.split("\n"))
    if digits:  # a slot's own value stays a number ("audio 2 = 1" is a score of 1, not slot A)
        text = _BARE_DIGIT.sub(lambda m: m.group(1) if re.search(r"clip [AB]\s*[:=]\s*$", text[:m.start()])
                               else _ORDINAL[m.group(1)], text)
    # "the B" (Spanish "la B") is B, "the option B" (Portuguese "a opção B") is option B
    return re.sub(rf"(?i:\bthe\s+)(?=(?:(?i:{SLOT}|clip)\s+)?\(?[AB]\b)", "", text)


def _answers_as_responses(text: str) -> str:
    """"Answer 2 is better than Answer 1", "the second answer": the answers judged, named like responses, not the
    reply's own answer ("Answer: 2"); a single "Answer 2" may be either and stays."""
    named = {m.group(1).upper() for m in re.finditer(r"(?i:\banswer\s+\(?([AB12])\b)(?!\s*[:=])", text)}
    if len(named) > 1:
        text = re.sub(r"(?i:\banswer(?=\s+\(?[AB12]\b(?!\s*[:=])))", "response", text)
    return re.sub(r"(?i:\b(the\s+(?:first|second))\s+answer\b)", r"\1 response", text)


_RANKED = re.compile(r"(?im)^[^\n]*\b(?:rank(?:ing|ed)?|order(?:ed)?|best\s+first|most\s+\w+\s+first)\b[^\n]*\n+"
                     r"\s*(?:1[.)]|#1[.):]?|first[.):])\s*(?P<first>[^\n]{1,40})\n\s*(?:2[.)]|#2[.):]?|second[.):])"
                     r"\s*(?P<second>[^\n]{1,40})")
_LIST_MARKER = re.compile(r"(?m)^(\s*)(?:\d{1,2}[.)]|[-*•])\s+(?=\S)")


# a ranking in one line or two: "1st — clip B, 2nd — clip A", "Rank 1: B\nRank 2: A"
_RANKS = re.compile(r"(?im)(?:^|(?<=[:.]\s))(?:1st|first|#1|no\.\s*1|rank(?:ed)?\s*(?:#\s*)?1)\s*"
                    r"(?:[-\u2014\u2013:=]|place\s*[-\u2014\u2013:]?)\s*(?P<first>[^,;\n]{1,30})\s*[,;\n]\s*(?:2nd|second|#2|no\.\s*2|"
                    r"rank(?:ed)?\s*(?:#\s*)?2)\s*(?:[-\u2014\u2013:=]|place\s*[-\u2014\u2013:]?)\s*(?P<second>[^,;\n]{1,30})")


def _ranked_list(text: str) -> str:
    """A ranked list's first item as the answer ("Ranking:\n1. Audio 2\n2. Audio 1" -> "Answer: Audio 2."); the
    markers of every other list taken off ("1. Audio 2" names no option 1)."""
    text = _RANKED.sub(lambda m: f"Answer: {m.group('first').strip()}.", text)
    text = _RANKS.sub(lambda m: f"Answer: {m.group('first').strip()}.", text)
    return _LIST_MARKER.sub(r"\1", text)


# a slot as scores name it: "A", "clip B", and a bare 1 or 2 that heads its score ("1: 4/5", "2) 3/5")
