"""What a reply says about each option side by side: per-option scores, marks and verdict words, and comparisons.

Judges often answer a pairwise question with a score per option ("A: 6/10, B: 9/10", "Response 1: 4/5\\nResponse 2:
2/5", "A ✗ B ✓", "B is wrong, A is right", ``{"score_A": 6, "score_B": 9}``) or a comparison ("Response 2 >
Response 1", "A is worse than B"). Read as a choice, the first option named would win whatever the scores say: a judge
that is always right would look locked to slot A. So these are read as what they are: the option scored highest (a
tie when two share the top), or the comparison's winner.

:func:`judged` works on the reader's prepared English text, where slots are already ``A``/``B`` ("Response 1" is
``clip A``) and labels their canonical option; it returns the reading and the text with the judgements blanked, for the
reader's rules to read the rest (a verdict after the scores must agree with them). Scores count only when every
option of a pair (two or more labels of a label set) is scored in one kind (numbers, or marks), each option once; a
number followed by a unit ("2 seconds", "3 hisses") is a quantity, not a score.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from omniaudit.runners.attribute_comparisons import (
    ATTRIBUTE_WORDS,
    DESCRIPTION,
    denied,
    described,
    on_attribute,
    option_named,
    overlapping,
)

_NUMBER = r"[-+]?\d+(?:[.,]\d+)?(?![.,]?\d)"  # whole: never the 2 of "2.8"
_SCORE = (rf"(?P<num>{_NUMBER})(?:\s*[-\u2013]\s*(?P<hi>{_NUMBER}))?"
          r"\s*(?:/\s*(?P<den>\d+(?:[.,]\d+)?)|(?P<pct>%)|\s+out\s+of\s+(?P<den2>\d+))?"
          r"(?:\s*(?i:points?|pts|stars?|mos|分|点|점|балл\w*|punt\w*|punkte?|pontos?)(?!\w))?"
          r"(?:\s+(?:clean|natural|faithful|correct|accurate|likely|likelihood|probability|confidence|match|fit)\b)?"
          r"(?=\s*(?:[,.;)\]|\n]|$|-\s|/\s|→|->|\((?!\d)|[★⭐●☆○]|(?i:from\s+me|because|since|as|for|and|but|while|"
          r"whereas|vs|"
          r"answer|so|therefore|thus|hence|verdict|final)\b)|"
          # a score on an attribute where the highest is the best ("Audio 2 scores 8/10 on prosody")
          r"\s+(?i:on|for)\s+(?i:overall\s+)?(?i:quality|clarity|naturalness|prosody|fluency|intelligibility|"
          r"expressiveness|intonation|faithfulness|accuracy|fidelity|cleanliness)\b|"
          r"\s+(?:[A-D12]\b|(?i:clip|audio|response|option|output)\b)|\s+[^\W\d]+\s*[:=]\s*\d)")
_LATE_SCORE = rf"[^\n()]{{1,40}}?\(\s*{_SCORE}"  # a score in brackets after the description: "A: natural (9/10)"
_STARS = r"(?P<stars>[★⭐●]+)\s*(?P<empty>[☆○]*)"  # "★★★★☆", "●●●○○": four, three of five
_GOOD = (r"[✓✔✅☑👍]|(?i:\b(?:correct|right|good|great|excellent|pass(?:es|ed)?|yes|true|accurate|faithful|"
         r"acceptable|strong)\b)")
_BAD = (r"[✗✘❌×✕👎]|(?i:\b(?:incorrect|wrong|bad|poor|weak|terrible|awful|fail(?:s|ed)?|no|false|inaccurate|"
        r"unfaithful|unacceptable)\b)")
_SYMBOL = r"[✓✔✅☑👍✗✘❌×✕👎]"
# a mark, or a few words then a symbol mark ("Audio 1: natural ✅")
_MARK = (rf"(?:[^\n✓✔✅☑👍✗✘❌×✕👎]{{0,40}}?\s)?(?P<mark>{_SYMBOL})|"
         rf"(?P<word>{_GOOD}|{_BAD})(?=\s*(?:[,.;)\]|\n(]|$|(?i:and|but|while|whereas)\b))")
_SEP = (r"(?:\s*(?:'s)?\s*(?i:score|rating|total)?\s*(?:[:=|\-\u2013\u2014()]|→|->|\.{2,}|…+)\s*(?:(?i:mos)\s+)?|"
        r"\s+(?i:is|was|gets?|got|scores?|scored|fits|matches|"
        r"receives?|received|earns?|rated|sounds|seems|at)\s+(?:(?i:a|an|rated|score\s+of|rating\s+of)\s+)?|"
        r"\s*[█▓▒░▇▆▅▄▃▂▁■□]+\s*|\s+)")  # a bar drawn before the score: "A ██████░░░░ 6"
_PREFIX = r"(?i:\b(?:score|rating|grade)s?\s+(?:for|of)\s+)?"
_BETTER = (r"(?:>+|≻|(?i:is\s+(?:(?:much|slightly|clearly|far|a\s+bit|somewhat|definitely)\s+)?(?:better|superior|"
           r"preferable|preferred)\s+(?:than|to|over)|beats|outperforms|outranks|outdoes|outclasses|edges\s+out|tops|"
           r"wins\s+over|is\s+ahead\s+of|(?:ranks?|ranked)\s+(?:above|over|higher\s+than)))")
_WORSE = (r"(?:<+|≺|(?i:is\s+(?:(?:much|slightly|clearly|far|a\s+bit|somewhat|definitely)\s+)?(?:worse|inferior|"
          r"less\s+(?:good|faithful|natural|clean|accurate))\s+(?:than|to)|loses\s+to|falls\s+short\s+of|trails|"
          r"lags\s+behind|is\s+behind|(?:is\s+not|isn't|is\s+nowhere\s+near)\s+as\s+(?:good|clean|natural|clear|"
          r"faithful|accurate)\s+as|(?:ranks?|ranked)\s+(?:below|under|lower\s+than)))")
_RANK = r"(?i:\b(?:i(?:'d|\s+would)?\s+)?(?:rank|put|place|rate)\s+)"


# a score of something bad ("Noise level: A 8/10, B 2/10"): higher is worse, so the highest is not the choice
_LOWER_BETTER = re.compile(r"(?i:\b(?:noise|noisy|noisiness|hiss|hum|static|crackles?|buzz|errors?|wer|cer|"
                           r"distortions?|artifacts?|artefacts?|clipping|latency|delay|lag|penalty|severity|defects?|problems?|issues?|"
                           r"mistakes?|loss|rank(?:ing)?|position|place)\b)")


def _value(m: re.Match) -> tuple[float, float]:
    """A score as an interval ``(low, high)``: a range ("6-7") is its two ends, any other score one point."""
    if "stars" in m.groupdict():  # of five where no empty star says the scale ("⭐⭐" against "⭐⭐⭐⭐⭐")
        stars, empty = len(m.group("stars")), len(m.group("empty"))
        return (stars / (stars + empty if empty else 5),) * 2
    if "mark" in m.groupdict():
        mark = m.group("mark") or m.group("word")
        return (1.0, 1.0) if re.fullmatch(_GOOD, mark) else (0.0, 0.0)
    ends = [float(v.replace(",", ".")) for v in (m.group("num"), m.group("hi") or m.group("num"))]
    den = m.group("den") or m.group("den2")
    scale = float(den.replace(",", ".")) if den else 100.0 if m.group("pct") else 1.0
    if not scale:
        return float("nan"), float("nan")
    return min(ends) / scale, max(ends) / scale


# the words a score's heading may hold for the highest score to be the best ("Overall score:", "Cleanliness -");
# a heading with other words scores an attribute whose direction is unknown ("Robotic-ness: A 2, B 7") and is not read
_PLAIN_HEADING = {
    "score", "scores", "scoring", "rating", "ratings", "rated", "rate", "grade", "grades", "overall", "total", "final",
    "weighted", "sum", "points", "result", "results", "verdict", "quality", "cleanliness", "clean", "cleaner",
    "clarity", "clear", "naturalness", "natural", "faithfulness", "faithful", "fidelity", "accuracy", "accurate",
    "correctness", "correct", "preference", "probability", "probabilities", "likelihood", "likely", "confidence",
    "match", "fit", "estimated", "estimate", "my", "the", "for", "of", "on", "a", "an", "and", "out", "i", "would",
    "give", "d",
    "audio", "clip", "clips", "response", "responses", "option", "options", "description", "descriptions",
    "candidate", "sample", "recording", "emotion", "emotions", "language", "languages", "label", "labels", "answer",
    "scale", "per", "each", "output", "outputs", "model", "system", "mos", "judge", "judgement", "judgment",
    "assessment", "evaluation", "distribution", "intensity", "strength", "prediction", "predicted", "top"}


# a heading that says the lowest score is the best ("Noise (lower is better)", "higher = noisier", "1 = most faithful")
_FAULT = (r"(?:noise|noisy|noisier|hiss|hum|errors?|distortions?|artifacts?|artefacts?|clipping|defects?|problems?|"
          r"issues?|unnatural|robotic|synthetic|artificial)")
_LOWER_WINS = re.compile(r"(?i:\b(?:lower|less|smaller|fewer)\s*(?:is|=|means|:)?\s*(?:better|best|cleaner|good)\b|"
                         r"\b(?:higher|more|larger)\s*(?:is|=|means|:)?\s*(?:worse|worst|noisier|bad)\b|"
                         rf"\b(?:higher|larger|bigger)\s*(?:is|=|means|:)?\s*(?:more\s+|very\s+)?{_FAULT}\b|"
                         r"\b(?:lower|less|smaller)\s*(?:is|=|means|:)?\s*(?:more\s+|very\s+)?(?:natural|clean|cleaner|"
                         r"clearer|faithful|accurate|realistic|human)\b|"  # "lower = more natural"
                         r"\b1\s*(?:=|is|means)\s*(?:the\s+)?(?:most|best|top|highest)\b)")


# a heading that says the highest is the best in so many words ("lower = more artifacts", "higher is better")
_HIGHER_WINS = re.compile(rf"(?i:\b(?:lower|less|smaller)\s*(?:is|=|means|:)?\s*(?:worse|worst|more\s+{_FAULT})\b|"
                          r"\b(?:higher|more|larger)\s*(?:is|=|means|:)?\s*(?:better|best|cleaner)\b)")


def _direction(heading: str) -> int:
    """+1 when the highest score under ``heading`` is the best (only :data:`_PLAIN_HEADING` words, no fault or rank,
    or said so), -1 when the heading says the lowest is, 0 when the direction is unknown ("Noise:",
    "Robotic-ness:")."""
    if _LOWER_WINS.search(heading):
        return -1
    if _HIGHER_WINS.search(heading):
        return 1
    words = re.findall(r"[a-z]+", heading.lower())
    return 1 if not _LOWER_BETTER.search(heading) and all(w in _PLAIN_HEADING for w in words) else 0


def _heading_above(text: str, line: int, every: list[tuple[int, int]]) -> str:
    """The nearest non-blank line above ``line`` that holds no score: the heading of scores that open their lines
    ("Word error rate, lower is better.\nResponse 1: 0.35\nResponse 2: 0.12"); '' when there is none."""
    while line > 0:
        start = text.rfind("\n", 0, line - 1) + 1
        above = text[start: line - 1]
        if above.strip(" \t|:-") and not any(start <= s < line for s, _ in every):  # (a table's rule is no heading)
            return above
        line = start
    return ""


# a scale defined in words ("0 = silent background, 10 = very noisy"): its direction is the reply's, not the default
_SCALE = re.compile(r"(?i:\b\d+(?:[.,]\d+)?\s*(?:=|means)\s*(?!\d)\w)")
# a scale's end described in words ("0 = silent", "10 = very noisy", "5 = least natural", "0 means no audible noise")
_END = re.compile(r"(?i:\b(?P<n>\d+(?:[.,]\d+)?)\s*(?:=|means|is)\s*(?P<phrase>[a-z][a-z' -]{0,40}))")
_RANGE = re.compile(r"(?i:\b(?P<lo>\d+)\s*(?:[-\u2013]|to)\s*(?P<hi>\d+)\s*(?:-?\s*point\s+)?scale|"
                    r"scale\s+(?:of|from)\s+(?P<lo2>\d+)\s*(?:[-\u2013]|to)\s*(?P<hi2>\d+)|\bout\s+of\s+(?P<top>\d+)|/\s*(?P<den>\d+)\b)")
_GOOD_END = {"natural", "clean", "silent", "quiet", "faithful", "accurate", "human", "best", "perfect", "excellent",
             "clear", "realistic", "good"}
_BAD_END = re.compile(rf"(?i:{_FAULT}|worst|poor|bad|terrible|inaccurate|unfaithful|noisy)")


_FEW = {"none", "minimal", "negligible", "absent", "low", "slight", "faint", "little", "no"}
_MANY = {"severe", "heavy", "high", "strong", "loud", "constant", "extreme", "lots", "overwhelming"}


def _end_sign(phrase: str, fault: bool = False) -> int:
    """+1 for a scale end described as good ("silent background", "no audible noise"), -1 as bad ("very noisy",
    "least natural"), 0 when not understood or both. On a scale of a fault (``fault``), an amount is an end too
    ("Background noise (1 = none, 5 = severe)")."""
    words = re.findall(r"[a-z]+", phrase.lower())[:5]
    good, bad = any(w in _GOOD_END for w in words), any(_BAD_END.fullmatch(w) for w in words)
    if fault and not good and not bad and words:
        few, many = words[0] in _FEW, words[0] in _MANY
        return 1 if few and not many else -1 if many and not few else 0
    if good == bad:
        return 0
    negated = any(w in ("no", "not", "least", "less", "without", "little", "zero") for w in words)
    return (1 if good else -1) * (-1 if negated else 1)


def _scale_direction(text: str) -> int:
    """+1 when a scale defined in words puts the good end at its highest number, -1 at its lowest, 0 when the reply
    defines none or its ends are not understood ("0 = silent, 10 = very noisy": -1). One end said is enough where
    the reply gives the scale's range ("Scores out of 5 (5 = least natural)")."""
    fault = bool(_LOWER_BETTER.search(text[: text.find("=")]))  # the scale measures a fault
    ends = {(float(m.group("n").replace(",", ".")), s) for m in _END.finditer(text)
            if (s := _end_sign(m.group("phrase"), fault))}
    numbers = {n for n, _ in ends}
    if len(numbers) >= 2:
        low, high = min(ends)[1], max(ends)[1]
        return high if low == -high and len(ends) == len(numbers) else 0
    tops = {float(v) for m in _RANGE.finditer(text) for v in (m.group("hi"), m.group("hi2"), m.group("top"),
                                                              m.group("den")) if v}
    bottoms = {float(v) for m in _RANGE.finditer(text) for v in (m.group("lo"), m.group("lo2")) if v} | {0.0, 1.0}
    if len(ends) != 1 or len(tops) != 1:
        return 0
    (n, sign), top = next(iter(ends)), next(iter(tops))
    return sign if n == top else -sign if n in bottoms and n < top else 0


def _score_direction(text: str, m: re.Match, every: list[tuple[int, int]]) -> int:
    """The direction of the score ``m`` (:func:`_direction`): from its heading on its line, or, for a score that
    opens its line (a one-score table row too), the line above; a direction said after the scores on the line wins
    ("Scores: A=6, B=8 (higher = noisier)"). The default (the highest is the best) is dropped, 0, when the reply
    states a direction or defines a scale anywhere else (but in a table row of several scores): what it says there
    was not understood, so not guessed."""
    line = text.rfind("\n", 0, m.start()) + 1
    heading = text[line: min([s for s, _ in every if s >= line] + [m.start()])]
    direction, above = _direction(heading), ""
    row = text[line: text.find("\n", line) if "\n" in text[line:] else None]
    if direction and not heading.strip(" \t-*•#>" + ("|" if row.count("|") <= 3 else "")):  # it opens its line
        above = _heading_above(text, line, every)
        direction = -1 if _LOWER_WINS.search(above) else 1 if _HIGHER_WINS.search(above) else \
            0 if _LOWER_BETTER.search(above) else direction
    end = text.find("\n", m.end())
    tail = text[m.end(): None if end < 0 else end]
    if _LOWER_WINS.search(tail):  # said after the scores, it decides whatever the heading ("Noise: A=6, B=2 (lower
        return -1                   # is better)")
    scale = _scale_direction(text)
    stated = _LOWER_WINS.search(heading + above) or _HIGHER_WINS.search(heading + above)
    if scale:  # a scale defined in words, its good end understood, decides unless a heading says the opposite
        return scale if direction != -scale or not stated else 0
    said = _LOWER_WINS.search(heading + above) or _HIGHER_WINS.search(heading + above + tail)
    table = row.count("|") > 3  # a row of several scores: read as several (a conflict), whatever the header says
    if direction > 0 and not said and not table and (_LOWER_WINS.search(text) or _SCALE.search(text)):
        return 0
    return direction


def _scores(text: str, ref: str, options: list[str]) -> tuple[Scores | None, list[tuple[int, int]]]:
    """Per option its one score (numbers first, else marks), or None when the scores decide nothing, and the spans of
    every score found (blanked for the rules, read or not). Scores count under a plain heading only (:func:`_plain`:
    "Noise: A 8, B 2" scores a fault, "Robotic-ness: ..." an attribute of unknown direction); they decide when every
    option of a pair (two or more labels of a set) is scored in one kind, each once (``{}``: scored twice
    differently)."""
    every: list[tuple[int, int]] = []
    for kind in (_SCORE, _LATE_SCORE, _STARS, _MARK):
        found: dict[str, set[tuple[float, float]]] = {}
        spans: list[tuple[int, int]] = []
        # "A (calm and content): 0.85": the option's description in brackets before its score
        for m in re.finditer(rf"{_PREFIX}{ref}(?:\s*\([^()\d\n]{{1,40}}\))?{_SEP}(?:{kind})", text):
            option = option_named(m.group(1), options)
            if option is None or re.search(r"(?i:\b(?:not|n't|never|no)\s*$)", text[: m.start()]):
                continue
            if kind == _MARK and m.group("word") and re.search(r"\.{2}|…", m.group(0)):
                continue  # "A over B... no, B over A": a trailing-off "no" takes back, it marks nothing
            every.append(m.span())
            direction = 1 if kind == _MARK else _score_direction(text, m, every)
            if direction:
                low, high = _value(m)
                found.setdefault(option, set()).add((low, high) if direction > 0 else (-high, -low))
                spans.append(m.span())
        enough = len(found) == len(options) if len(options) == 2 else len(found) >= 2
        if enough:
            if any(len(v) > 1 or any(x[0] != x[0] for x in v) for v in found.values()):
                return {}, every  # one option scored twice differently: no reading
            return {o: next(iter(v)) for o, v in found.items()}, every
    return _leading_marks(text, ref, options, every)


def _leading_marks(text: str, ref: str, options: list[str],
                   every: list[tuple[int, int]]) -> tuple[Scores | None, list[tuple[int, int]]]:
    """Symbol marks written before each option ("✓ A\n✗ B"), as :func:`_scores` reads marks after them."""
    found: dict[str, set[float]] = {}
    for m in re.finditer(rf"(?<![^\s(\[])({_SYMBOL})\s*{ref}(?=\s*(?:[,.;:]|\n|$|{_SYMBOL}))", text):
        option = option_named(m.group(2), options)
        if option is not None:
            found.setdefault(option, set()).add(1.0 if re.fullmatch(_GOOD, m.group(1)) else 0.0)
            every.append(m.span())
    if len(found) == len(options) if len(options) == 2 else len(found) >= 2:
        if any(len(v) > 1 for v in found.values()):
            return {}, every
        return {o: (next(iter(v)),) * 2 for o, v in found.items()}, every
    return None, every


_TABLE = re.compile(r"(?:^[ \t]*\|.*\|[ \t]*(?:\n|$))+", re.M)
_TOTAL = re.compile(r"(?i:\W*(?:(?:final|overall|total)\s*)?(?:score|rating|total|overall|sum|grade)\W*)")


Scores = dict[str, tuple[float, float]]  # option -> its score as an interval (low, high)


def _table_scores(text: str, ref: str, options: list[str]) -> tuple[Scores, list[tuple[int, int]]] | None:
    """A markdown table with the options as columns and a score row ("| Score | 8 | 3 |"), or None."""
    for table in _TABLE.finditer(text):
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.group().splitlines()]
        header = next((r for r in rows if sum(bool(re.fullmatch(ref, c)) for c in r) >= 2), None)
        total = next((r for r in rows if r and _TOTAL.fullmatch(r[0])), None)
        if header is None or total is None or len(total) != len(header):
            continue
        found: Scores = {}
        for name, cell in zip(header, total, strict=True):
            named, score = re.fullmatch(ref, name), re.fullmatch(_SCORE + r"\W*", cell)
            option = option_named(named.group(1), options) if named else None
            if option is not None and score is not None:
                found[option] = _value(score)
        if len(found) == len(options) if len(options) == 2 else len(found) >= 2:
            return found, [table.span()]
    return None


_ADVERB = r"(?:(?i:clearly|easily|narrowly|slightly|just|definitely|really|simply|obviously|comfortably)\s+)?"
_FIRST = r"(?i:first|1st|top|highest|#1|number\s+one)"


def _comparisons(text: str, ref: str, options: list[str]) -> tuple[set[str], list[tuple[int, int]]]:
    """The winner of the reply's comparisons ("A > B", "A is worse than B", "I rank B first", a chain "happy >
    surprised > neutral": the option that wins and never loses; several when they disagree) and their spans."""
    winners, losers, spans = set(), set(), []
    # (pattern, whether the first option named wins, whether the second may be absent)
    for pattern, first_wins, alone in ((rf"{ref}\s*{_ADVERB}{_BETTER}\s*{ref}", True, False),
                                       (rf"{ref}\s*{_ADVERB}{_WORSE}\s*{ref}", False, False),
                                       (rf"{_RANK}{ref}\s+{_FIRST}\b(?:\W+{ref}\s+(?i:second|2nd|last))?", True, True),
                                       (rf"{_RANK}{ref}\s+(?i:above|over|ahead\s+of|before)\s+{ref}", True, False),
                                       (rf"{_RANK}{ref}\s+(?i:below|under|behind|after)\s+{ref}", False, False)):
        for m in overlapping(pattern, text):
            a = option_named(m.group(1), options)
            b = option_named(m.group(2), options) if m.group(2) else None
            if a is None or a == b or (b is None and not (alone and m.group(2) is None)) or denied(text, m.start()):
                continue
            winners.add(a if first_wins or b is None else b)
            losers |= {b if first_wins else a} - {None}
            spans.append(m.span())
    return (winners - losers) or winners, spans


def _asked(text: str, spans: list[tuple[int, int]]) -> bool:
    """A judgement inside a question ("A > B?") is no judgement."""
    for start, _ in spans:
        ends = [i for i in (text.find(c, start) for c in ".!?\n") if i >= 0]
        if ends and text[min(ends)] == "?":
            return True
    return False


def _decided(values: dict[str, tuple[float, float]]) -> tuple[str | None, str | None]:
    """The option scored highest, ``tie`` when two share the top, ``hedged`` when the top is within 5% of the next
    ("sad 0.34, fearful 0.33": no commitment) or ranges overlap ("A: 6-8, B: 7-8")."""
    ranked = sorted(values.items(), key=lambda kv: kv[1][1], reverse=True)
    (best, (low, high)), (_, (_, runner_up)) = ranked[0], ranked[1]
    if all(v == ranked[0][1] for _, v in ranked[:2]) and low == high:
        return None, "tie"
    if low <= runner_up or high - runner_up <= 0.05 * abs(high):
        return None, "hedged"
    return best, None


class Judgement(NamedTuple):
    """What a reply's scores, comparisons and descriptions say: the ``option`` they favour (reason None), or None and
    a ``reason`` (``tie``, ``hedged``, ``conflict``; None when they decide nothing); the ``rest`` of the text with
    them blanked, for the reader's rules; and the option they call ``worse`` where a verdict must not pick it."""

    option: str | None
    reason: str | None
    rest: str
    worse: str | None = None


def judged(text: str, options: list[str], ref: str, question: str | None = None) -> Judgement:
    """The reply's :class:`Judgement`. ``ref``: a pattern whose group 1 is an option's name in ``text``;
    ``question``: the item's question sentence (an option described as clean or noisy answers "which is cleaner?",
    and on another question still forbids a verdict for the noisy one). "A: 4/10." names no choice: its score is
    blanked."""
    pair = described(text, ref, options)
    if pair is not None and set(re.findall(r"[a-z]+", (question or "").lower())) & \
            ATTRIBUTE_WORDS[pair[2]]:
        rest = re.sub(ref + DESCRIPTION + r"[^\n]*", lambda m: " " * len(m.group()), text, flags=re.I)
        return Judgement(pair[0], None, rest, pair[1])  # "Clip A: noisy\nClip B: clean" on "cleaner?"
    worse = pair[1] if pair else None
    option, reason, rest = _judged(text, options, ref, set(re.findall(r"[a-z]+", (question or "").lower())))
    return Judgement(option, reason, rest, worse)


def _judged(text: str, options: list[str], ref: str, asked: set[str]) -> tuple[str | None, str | None, str]:
    values, spans = _table_scores(text, ref, options) or _scores(text, ref, options)
    winners, compared = _comparisons(text, ref, options)
    on_it, attribute_spans = on_attribute(text, ref, options, asked)
    winners |= on_it
    spans = spans + compared + attribute_spans
    if not spans or _asked(text, spans):
        return None, None, text
    rest = text
    for start, end in sorted(spans, reverse=True):
        rest = rest[:start] + " " * (end - start) + rest[end:]
    reason = None
    if values is not None:
        if not values:
            return None, "conflict", rest
        option, reason = _decided(values)
        if option is None and not winners:
            return None, reason, rest
        winners |= {option} if option else set()
    if not winners:
        return None, None, rest
    if len(winners) != 1 or reason is not None:
        return None, "conflict", rest
    winner = next(iter(winners))
    if _praised_otherwise(rest, ref, options, winner):
        return None, "conflict", rest  # "Cleanliness: A 9, B 4. That said, B is clearly the cleaner recording."
    return winner, None, rest


_PRAISE = re.compile(r"(?i:\b(?:\w{3,}er|more|less|best|better|prefer\w*|clearly|wins?|superior)\b)")


def _praised_otherwise(rest: str, ref: str, options: list[str], winner: str) -> bool:
    """Whether the prose beside the scores compares another option in its favour's words (a sentence naming it with
    a comparative): the scores may not be the verdict."""
    for m in re.finditer(ref, rest):
        if option_named(m.group(1), options) not in (None, winner):
            left = max(rest.rfind(c, 0, m.start()) for c in ".!?;\n") + 1
            ends = [i for i in (rest.find(c, m.end()) for c in ".!?;\n") if i >= 0]
            if _PRAISE.search(rest[left: min(ends) if ends else len(rest)]):
                return True
    return False


_SCORE_KEY = re.compile(r"(?i:^(?:score|rating|grade|points?)?[\s_-]*(?:of|for)?[\s_-]*(?:response|audio|clip|option|"
                        r"candidate|output|description)?[\s_-]*\(?([A-Za-z0-9 ]+?)\)?[\s_-]*"
                        r"(?:score|rating|grade|points?)?$)")


def json_scores(obj: dict, options: list[str]) -> tuple[str | None, str | None] | None:
    """The option a JSON score object favours (``{"score_A": 6, "score_B": 9}``, ``{"scores": {"A": 7, "B": 3}}``),
    ``(None, "tie")``, or None when the object holds no score per option."""
    for key in ("scores", "score", "ratings", "rating"):
        if isinstance(obj.get(key), dict):
            obj = obj[key]
    pair = sorted(options) if sorted(options) in (["A", "B"], ["1", "2"]) else None
    slots = {"a": 0, "b": 1, "1": 0, "2": 1, "first": 0, "second": 1} if pair else {}
    names = {o.lower(): o for o in options}
    values: dict[str, tuple[float, float]] = {}
    for key, value in obj.items():
        if isinstance(value, dict):  # {"A": {"score": 4, "reason": ...}} or {"A": {"clean": 9}}: its one number
            numbers = [v for v in value.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
            value = value.get("score", numbers[0] if len(numbers) == 1 else None)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        m = _SCORE_KEY.match(str(key))
        name = m.group(1).strip().lower() if m else ""
        option = names.get(name) or (pair[slots[name]] if pair and name in slots else None)
        if option is not None:
            if option in values and values[option] != value:
                return None, "conflict"
            values[option] = (float(value), float(value))
    enough = len(values) == len(options) if len(options) == 2 else len(values) >= 2
    if not enough:
        return None
    return _decided(values)


def per_option(items: list) -> dict | None:
    """``[{"option": "A", "score": 0.4}, {"option": "B", "score": 0.7}]`` as ``{"A": 0.4, "B": 0.7}``, or None."""
    names = ("option", "label", "name", "candidate", "id", "answer")
    scores = ("score", "probability", "rating", "prob", "confidence", "likelihood")
    out = {}
    for item in items:
        if not isinstance(item, dict):
            return None
        keys = {str(k).lower(): v for k, v in item.items()}
        name = next((keys[k] for k in names if isinstance(keys.get(k), (str, int))), None)
        score = next((keys[k] for k in scores if isinstance(keys.get(k), (int, float))), None)
        if name is None or score is None or str(name) in out:
            return None
        out[str(name)] = score
    return out or None


def loads_lenient(body: str) -> tuple[object, bool]:
    """A JSON object as models write it (single quotes, a trailing comma), and whether a key repeats with another
    value (``{"answer": "A", "answer": "B"}``: a conflict, never the last value)."""
    repeated = False

    def pairs(items: list[tuple[str, object]]) -> dict:
        nonlocal repeated
        out: dict = {}
        for key, value in items:
            if key in out and out[key] != value:
                repeated = True
            out[key] = value
        return out

    attempts = (body, re.sub(r",\s*([}\]])", r"\1", body))
    for attempt in (*attempts, *(re.sub(r"'([^'\n]*)'", r'"\1"', a) for a in attempts)):
        try:
            return json.loads(attempt, object_pairs_hook=pairs), repeated
        except ValueError:
            repeated = False
    return None, False
