"""Closed readers for composition answers a count, a number or a yes/no decides.

A C3PO counting question ("How many dogs bark?", gold "3") or a yes/no one ("Is there a dog barking?") has one right
answer that a free reply states in many ways: "There are three dogs barking.", "3 dogs.", "Yes, a dog barks in the
background." The normalised exact match (:func:`~omniaudit.answer_match.exact_match`) takes only the bare answer;
everything else went to the LLM judge, a call each. These readers read the stated value, or abstain with a reason,
never guessing: a misreading becomes a finding, a non-reading only costs a judge call.

:func:`read_number` reads the one count a reply states, in digits or words of English, Spanish, German, French
(:func:`~omniaudit.answer_match.normalize`), Russian, Portuguese, Italian, Chinese, Japanese and Korean
(:mod:`~.number_words`: "три собаки", "dois cães", "三只狗", "3匹", "두 마리", "셋"), its unit aside ("3 dogs"):

- an explicit commitment decides ("Answer: 2", "**Final answer:** 3", "答案：三只", "Ответ: 3", a first line that is
  only the count), unless the rest of the reply states another count (``conflict``); numbers of a breakdown that sum
  to the committed answer ("Answer: 3 (2 sparrows, 1 crow)") do not contradict it;
- numbers that are no count do not compete with it: ordinals and labels ("the 2nd bark", "第二只", "두 번째",
  "Dog 1"), unless one is beyond the count ("two dogs ..., a third joins") or the question asks "which"; shares,
  prices, measures, ages and times of day ("100%", "60 dB", "a 3-year-old dog", "3 pm"); an identity partitive ("one
  of them a puppy"); a pronoun "one" ("the loudest one", "one can hear"); and, where the question is known and does
  not ask for a time, timestamps ("0:03"), durations ("in the first 10 seconds", "at 3.5 s") and, where it counts
  something else, how often ("barks 5 times"). Without the question, timestamps count as numbers except beside an
  explicit commitment, and durations always do (the question may ask for seconds);
- several counts abstain (``conflict``: "3 dogs and 2 cats", "one man and one woman"), unless one is stated as the
  total and the others sum to it ("In total 3 birds (2 sparrows, 1 crow)"), no part counting what the question asks
  and, that unknown, the total leading; so does a count beside one more thing ("then another joins", "two dogs and
  a puppy") or beside a negation ("two dogs, but they are not barking": ``negated``);
- a range ("2-3", "两三只", "두세 마리", "due o tre"), a bound ("at least 2", "大约三只", "3匹くらい"), doubt
  ("maybe 3", "наверное три", "可能") or a question ("3?") is ``hedged``; a denied number ("not 3", "不是三只")
  ``negated``;
- a reply in a language whose number words are not read (Turkish, Polish, ...) is left unread (``language``): its
  digits would be read beside words that are not;
- zero is read from "None." or its kin ("Nobody.", "Ninguno.", "没有。") and, where the question names what it counts,
  a plain statement that there is none of it ("No dogs bark.", "There are no dogs.", "Nobody speaks." to "How many
  people speak?"); never from "No." or a bare "None", which a broken pipeline also writes.

:func:`read_yes_no` reads yes or no as the closed-item reader reads a label ("Yes, a dog barks." is yes; "There is no
barking." names no answer). A reasoning trace is never read (:func:`omniaudit.runners.reasoning.split_reasoning`).
:func:`~.grading.grade` uses :func:`closed_reading` between the exact match and the judge: a value read decides the
row (``read_by: closed``), so the judge is asked only about replies no reader could read.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

from omniaudit.answer_language import language, unreadable
from omniaudit.answer_match import fold, normalize
from omniaudit.evaluation.composition import number_words as nw
from omniaudit.runners.reading import Reading, read_answer
from omniaudit.runners.reasoning import split_reasoning

_SENTENCE, _CLAUSE, _GONE = "\u25c6", "\u00a6", "\u25c7"  # symbols normalize keeps
_READ_LANGUAGES = {"en", "es", "de", "fr", "pt", "it", "ru", "zh", "ja", "ko"}  # whose number words are read
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_BREAK = re.compile(r"(?<!\d)\.|\.(?!\d)|[!?;。；！？\n]")
_COMMA = re.compile(r"(?<!\d)[,:]|[,:](?!\d)|[()\[\]{}（）【】，：]|、(?!\s*\d)|\s[-–—]+\s|—")
_MARKUP = re.compile(r"\\boxed\{([^{}]*)\}|[*`]|^\s*#+\s*|^\s*>\s*|^\s*[-•·]\s+|(?<!\w)_+|_+(?!\w)", re.M)
_ENUMERATED = re.compile(r"^(\s*)(\d+)[.)]\s+(?=\D)", re.M)
_CUE = re.compile(
    r"(?:^|(?<=[\s(]))(?:(?:so|thus|therefore|hence)\s*,?\s*)?(?:(?:the|my|our)\s+)?(?:final\s+|correct\s+|short\s+)?"
    r"(?:answer|count|total\s+count|result|number\s+of\s+\w+(?:\s+\w+)?)\s*(?:is\b|would\s+be\b|:|=|-|–)\s*"
    r"|(?:la\s+)?respuesta(?:\s+final)?\s*(?:es|:)\s*|(?:die\s+)?(?:endg[üu]ltige\s+)?antwort\s*(?:ist|lautet|:)\s*"
    r"|(?:la\s+)?r[ée]ponse(?:\s+finale)?\s*(?:est|:)\s*|(?:a\s+)?resposta(?:\s+final)?\s*(?:é|:)\s*"
    r"|(?:la\s+)?risposta(?:\s+finale)?\s*(?:è|:)\s*|(?:итоговый\s+|окончательный\s+)?ответ\s*[:—–-]\s*"
    r"|(?:最终)?(?:答案|回答)\s*(?:是|为|為|:|：)\s*|答\s*[:：]\s*|(?:答え|回答|正解)\s*(?:は|:|：)\s*"
    r"|(?:최종\s*)?(?:정답|답변|답)\s*(?:은|는|:|：)\s*",
    re.I,
)
_SEGMENT_END = re.compile(
    r"\n|(?<!\d)\.|\.(?!\d)|[!?;。；！？(（\[]|\s[—–-]\s|[—–]|,(?!\s*\d)|，|、(?!\s*\d)"
    r"|\s(?:because|since|as|but|which|with)\b|因为|由于"
)
_ABSENT = re.compile(
    r"(?:there\s(?:is|are|was|were|s)\s|(?P<neg>there\s(?:isn|aren|wasn|weren)\st\s|i\s(?:do\snot|don\st|cannot|"
    r"can\st|can\snot|did\snot|didn\st)\s(?:hear|see|detect|find|notice)\s))?"
    r"(?P<det>no|any|none\sof|nobody|no\sone)(?:\s(?P<words>.*))?"
)
_NOT_ADJECTIVE = {"other", "more", "additional", "further", "new", "extra", "else", "longer", "single", "2nd"}
_NOT_NOUNS = nw.words("can could do does did will would have has different distinct separate unique individual")
_ALLOWED = nw.words(
    "is are was were be being been can could heard audible present here at all in on within throughout during this "
    "that clip audio video recording sound scene background footage track sample it anywhere them"
)


class _Ask(NamedTuple):
    """What the question lets the reader set aside: durations (it does not ask for a time), positions (it does not
    ask "which"), repeats (it counts something else than times); the nouns it counts and its words."""

    mask_time: bool
    mask_position: bool
    repeats_aside: bool
    nouns: frozenset[str]
    words: frozenset[str]


class _Mention(NamedTuple):
    value: str
    unit: str | None
    index: int  # of its token
    total: bool  # stated as the total


class _Scan(NamedTuple):
    mentions: list[_Mention]
    flag: str | None  # hedged / negated
    listed: bool  # the same count listed for different things ("one man and one woman")
    ordinal: int  # the highest position named ("the third dog": 3), 0 for none
    doubt: str | None  # a negation or one more thing anywhere: no plain statement of one count


def _ask(question: str | None) -> _Ask:
    if not question:
        return _Ask(False, True, False, frozenset(), frozenset())
    q = " ".join(re.findall(r"[^\W_]+", fold(question)))
    asked = nw.ASKED.search(q)
    said = asked.group(1).split() if asked else []
    nouns = frozenset(w for w in said if w not in nw.UNIT_STOP and w not in _NOT_NOUNS and w.isalpha())
    repeats = bool(nouns) and not any(nw.REPEATS.match(w) for w in nouns)
    return _Ask(not nw.ASKS_TIME.search(q), not nw.ASKS_POSITION.search(q), repeats, nouns, frozenset(q.split()))


def _stem(word: str) -> str:
    return re.sub(r"(?<=..)(?:ies$|ing$|es$|s$)", lambda m: "y" if m.group(0) == "ies" else "", word)


def _same(a: str, b: str) -> bool:
    """Two words of one stem ("dog", "dogs"; "bark", "barking"; "puppy", "puppies")."""
    a, b = _stem(a), _stem(b)
    k = min(len(a), len(b), 5)
    return k >= 3 and a[:k] == b[:k]


def _named(word: str, words: frozenset[str]) -> bool:
    return any(_same(word, w) for w in words)


def _visible(raw: object) -> str | None:
    text = "" if raw is None else str(raw)
    split = split_reasoning(text)
    return None if split.cut else split.answer


def _prepared(text: str) -> str:
    """Markup and bullets removed, list numbers (two lines or more of them) as ordinals ("2." is "2nd"); "no one" is
    "nobody", "and the man" is "and a man" (normalize drops "the"); French "très" is no Spanish "tres"."""
    text = _MARKUP.sub(lambda m: m.group(1) or "", text)
    if len(_ENUMERATED.findall(text)) >= 2:
        text = _ENUMERATED.sub(lambda m: f"{m.group(1)}{m.group(2)}th ", text)
    text = re.sub(r"\b[Nn]o[\s-]one\b", "nobody", text)
    text = re.sub(r"\b(and|plus)\s+(?:the|his|her|their|its|my|our|your)\b", r"\1 a", text)  # one more thing
    text = nw.ONE_IDIOM.sub(f" {_GONE} ", text)
    return re.sub(r"\b[Tt]r[èÈ]s\b", "very", text)


def _questions_out(text: str) -> tuple[str, bool]:
    """``text`` without its questions, and whether one that is no echo of the item's holds a number ("3?", "Is it
    3?")."""
    out, asked = [], False
    for piece in re.split(r"(?<=[?？])", text):
        if not piece.rstrip().endswith(("?", "？")):
            out.append(piece)
            continue
        ends = list(_BREAK.finditer(piece.rstrip()[:-1]))
        cut = ends[-1].end() if ends else 0
        echo = nw.ECHO.search(piece[cut:])
        asked = asked or (not echo and any(_NUMBER.fullmatch(t) for t in normalize(piece[cut:]).split()))
        out.append(piece[:cut] + " . ")
    return "".join(out), asked


def _marked(text: str) -> str:
    text = _BREAK.sub(f" {_SENTENCE} ", text)
    return _COMMA.sub(f" {_CLAUSE} ", text)


def _partitive(m: re.Match, ask: _Ask) -> str:
    return m.group(0) if any(_named(w, ask.nouns) for w in m.group(0).split()) else f" {_GONE} "


def _nth(m: re.Match) -> str:
    return f" {next(g for g in m.groups() if g)}th "


def _normalised(text: str, ask: _Ask, stamps: bool) -> tuple[str, str | None]:
    """The reply normalised, its breaks and the numbers that are no count marked, its ordinals as "2nd"; "hedged"
    where a range or a question says so."""
    if stamps or ask.mask_time:
        text = nw.STAMP.sub(f" {_GONE} ", text)
    spelled = nw.ORDINAL.sub(_nth, nw.spell_digits(fold(nw.RAW_ORDINAL.sub(_nth, text))))
    if nw.PORTUGUESE.search(text):
        spelled = re.sub(r"\bn(?:o|os|a|as)\b", "em", spelled)
    spelled, asked = _questions_out(spelled)
    flag = "hedged" if asked or nw.RANGE.search(spelled) else None
    spelled = nw.LABEL.sub(lambda m: m.group(0)[: m.start(1) - m.start()] + f"{m.group(1)}th", spelled)
    norm = normalize(_marked(nw.AMOUNT.sub(f" {_GONE} ", spelled)))
    if ask.mask_time:
        norm = nw.TIME_UNIT.sub(f" {_GONE} ", norm)
    norm = nw.PRONOUN_ONE.sub(lambda m: m.group(0)[:-1] + _GONE, norm)
    norm = nw.PARTITIVE.sub(lambda m: _partitive(m, ask), norm)
    return " ".join(norm.split()), flag


def _unit(tokens: list[str], i: int) -> str | None:
    """The word after a number, where it may name what is counted."""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
    if not nxt or nxt in (_SENTENCE, _CLAUSE, _GONE) or _NUMBER.fullmatch(nxt) or nxt in nw.UNIT_STOP:
        return None
    return nxt


def _total_targets(norm: str, tokens: list[str]) -> set[int]:
    """The token indices of the numbers a total marker names: the nearest number within three tokens, in the same
    sentence (the one after it on a tie)."""
    starts = [m.start() for m in re.finditer(r"\S+", norm)]
    numbers = [i for i, t in enumerate(tokens) if _NUMBER.fullmatch(t)]
    out = set()
    for m in nw.TOTAL.finditer(norm):
        first = max(k for k, s in enumerate(starts) if s <= m.start())
        last = max(k for k, s in enumerate(starts) if s < m.end())
        near = [
            (
                n - last + 2 * tokens[last:n].count(_CLAUSE)
                if n > last
                else first - n + 2 * tokens[n:first].count(_CLAUSE),
                n < first,
                n,
            )
            for n in numbers
            if (0 < n - last <= 3 and _SENTENCE not in tokens[last:n])
            or (0 < first - n <= 3 and _SENTENCE not in tokens[n:first])
        ]
        if near:
            out.add(min(near)[2])
    return out


def _listed(tokens: list[str], mentions: list[_Mention]) -> bool:
    """Whether one count is listed for two different things ("one man and one woman", "1 dog, 1 cat", "男性1人、女性1
    人", "1 dog barks, 1 dog howls"): the same number twice in a sentence, a comma or a conjunction between, each
    with a word after it."""
    for a, b in zip(mentions, mentions[1:], strict=False):
        between = tokens[a.index + 1 : b.index]
        if a.value != b.value or len(between) > 5 or _SENTENCE in between:
            continue
        if not any(t == _CLAUSE or nw.CONJUNCTION.search(t) for t in between) or any(
            nw.CONCLUSION.match(t) for t in between
        ):
            continue
        if a.unit and b.unit:
            return True
    return False


def _scan(text: str, ask: _Ask, stamps: bool = False) -> _Scan:
    """The counts ``text`` states, and why they cannot be read (see the module docstring)."""
    norm, flag = _normalised(text, ask, stamps)
    if flag is None and any(p.search(norm) for p in (nw.HEDGE, nw.BOUND, nw.RANGE_WORDS, nw.RU_ABOUT)):
        flag = "hedged"
    if flag is None and nw.DENIED.search(norm):
        flag = "negated"
    tokens = norm.split()
    totals = _total_targets(norm, tokens)
    mentions = []
    for i, t in enumerate(tokens):
        if not _NUMBER.fullmatch(t):
            continue
        unit = _unit(tokens, i)
        if ask.repeats_aside and unit and nw.REPEATS.match(unit):
            continue
        value = str(int(t)) if t.lstrip("-").isdigit() else t
        mentions.append(_Mention(value, unit, i, i in totals))
    ordinal = max((int(n) for n in re.findall(r"\b(\d+)(?:st|nd|rd|th)\b", norm)), default=0)
    doubt = "negated" if nw.NEGATION.search(norm) else "conflict" if nw.MORE.search(norm) else None
    return _Scan(mentions, flag, _listed(tokens, mentions), ordinal, doubt)


def _sums_to(parts: list[_Mention], value: str, ask: _Ask) -> bool:
    """Whether ``parts`` break ``value`` down: counts of things (each with a word after it) that sum to it, none of
    them counting what the question asks."""
    if any(not p.unit or _named(p.unit, ask.nouns) for p in parts):
        return False
    return bool(parts) and sum(Fraction(p.value) for p in parts) == Fraction(value)


def _breakdown(mentions: list[_Mention], ask: _Ask) -> str | None:
    """The total a breakdown sums to ("In total 3 birds (2 sparrows, 1 crow)"), where no part counts what the
    question asks and the total does (its unit names it) or, that unknown, leads the reply; else None."""
    totals = {m.value for m in mentions if m.total}
    if len(totals) != 1:
        return None
    value = totals.pop()
    total = next(m for m in mentions if m.total)
    parts = [m for m in mentions if not m.total and not (m.value == value and m.unit in (None, total.unit))]
    if not _sums_to(parts, value, ask):
        return None
    return value if mentions[0].total or (total.unit and _named(total.unit, ask.nouns)) else None


def _positioned(value: str, scan: _Scan, ask: _Ask) -> bool:
    """Whether a position the reply names is beyond the count ("two dogs ..., a third joins") or is what the question
    asks ("which")."""
    return bool(scan.ordinal) and (not ask.mask_position or scan.ordinal > Fraction(value))


def _decide(scan: _Scan, ask: _Ask) -> Reading:
    """The count a reply without a commitment states (see the module docstring)."""
    values = {m.value for m in scan.mentions}
    if not values:
        return Reading(None, scan.flag or "none")
    if scan.flag or scan.doubt:
        return Reading(None, scan.flag or scan.doubt)
    value = values.pop() if len(values) == 1 and not scan.listed else _breakdown(scan.mentions, ask)
    if value is None or _positioned(value, scan, ask):
        return Reading(None, "conflict")
    return Reading(value)


def _zero(text: str, ask: _Ask, cued: bool = False) -> bool:
    """Whether ``text`` states that there is none (see the module docstring); ``cued``: it follows "Answer:"."""
    plain = normalize(text)
    if plain in nw.ZERO_ALONE:
        return cued or not re.fullmatch(r"\s*none\s*", text, re.I)
    m = _ABSENT.fullmatch(plain)
    if not m or not ask.nouns or len(_BREAK.findall(text.strip().rstrip(".!"))) > 0:
        return False
    words = (m["words"] or "").split()
    if m["det"] in ("nobody", "no one"):
        return any(_named(n, nw.PERSONS) for n in ask.nouns) and _only_allowed(words, ask)
    if (m["det"] == "any") != bool(m["neg"]):
        return False
    if m["det"] == "none of" and words[:1] == ["them"]:
        return _only_allowed(words[1:], ask)
    for k in (0, 1):
        if k < len(words) and _named(words[k], ask.nouns):
            adjectives = words[:k]
            return not any(a in _NOT_ADJECTIVE for a in adjectives) and _only_allowed(words[k + 1 :], ask)
    return False


def _only_allowed(words: list[str], ask: _Ask) -> bool:
    """Whether ``words`` say no more than where and what the question asks ("bark in the audio")."""
    return all(w in _ALLOWED or _named(w, ask.words) for w in words)


def _cued(text: str) -> list[tuple[int, int, int, bool]]:
    """The commitments of a reply, as (start, count start, end, explicit): each cue ("Answer:", "答案是") with the
    count after it, up to its clause's end; else a first line that is only a count ("3 dogs.") or a count the reply
    leads with ("3 - two at 0:03 ...")."""
    spans = []
    for m in _CUE.finditer(text):
        end = _SEGMENT_END.search(text, m.end() + 1)
        spans.append((m.start(), m.end(), end.start() if end else len(text), True))
    if spans:
        return spans
    first = re.match(r"\s*([^\n]+)\n\s*\S", text)
    lead = re.match(r"\s*([^\n]{1,30}?)(?:\s[—–-]\s|:\s|\s?[(（])(?=\D)", text)
    for m in (first, lead):
        words = normalize(m.group(1)).split() if m else []
        if m and len(words) <= 3 and sum(bool(_NUMBER.fullmatch(w)) for w in words) == 1:
            return [(m.start(1), m.start(1), m.end(1), False)]
    return []


def _committed(text: str, ask: _Ask) -> Reading | None:
    """The count the reply commits to, unless the rest of it states another (``conflict``) or doubts it; None
    where it commits to none."""
    spans, values = _cued(text), []
    for _, start, end, _ in spans:
        said = _scan(text[start:end], ask, stamps=True)
        found = {m.value for m in said.mentions} or ({"0"} if _zero(text[start:end], ask, cued=True) else set())
        if said.flag or len(found) > 1 or said.listed:
            return Reading(None, said.flag or "conflict")
        values += list(found)
    if not values:
        return None
    if len(set(values)) > 1:
        return Reading(None, "conflict")
    value, rest, last = values[0], [], 0
    for start, _, end, _ in spans:
        rest += [text[last:start], " . "]
        last = end
    others = _scan("".join(rest) + text[last:], ask, stamps=True)
    if others.flag or _positioned(value, others, ask):
        return Reading(None, others.flag or "conflict")
    differ = [m for m in others.mentions if m.value != value]
    if differ or others.listed:
        explicit = all(explicit for *_, explicit in spans)
        if not explicit or not _sums_to(differ or others.mentions, value, ask):
            return Reading(None, "conflict")
    return Reading(value)


def read_number(raw: object, question: str | None = None) -> Reading:
    """The one count ``raw`` states (as :func:`~omniaudit.answer_match.normalize` writes it), or None and why not
    (see the module docstring). ``question``, where known, says what is counted and which numbers are no count."""
    text = _visible(raw)
    if text is None:
        return Reading(None, "reasoning-only")
    if not text.strip():
        return Reading(None, "empty")
    if unreadable(text):
        return Reading(None, "noise")
    if language(text) not in _READ_LANGUAGES:  # its number words would go unread beside its digits
        return Reading(None, "language")
    ask, text = _ask(question), _prepared(text)
    if normalize(text) in nw.ZERO_ALONE and _zero(text, ask):  # "Ни одного.", "一个也没有。"
        return Reading("0")
    committed = _committed(text, ask)
    if committed is not None:
        return committed
    reading = _decide(_scan(text, ask), ask)
    if reading.reason == "none" and _zero(text, ask):
        return Reading("0")
    return reading


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


def closed_reading(prediction: str, answer: str, question: str | None = None) -> str | None:
    """The value a closed reader reads in ``prediction`` for a gold ``answer`` of its kind (normalised like the
    answer), or None: not a closed item, or the reply does not state one value. ``question``: the item's question,
    which tells the number reader what is counted (see :func:`read_number`)."""
    kind = closed_kind(answer)
    if kind is None:
        return None
    reading = read_number(prediction, question) if kind == "number" else read_yes_no(prediction)
    return None if reading.option is None else normalize(reading.option)
