"""The interventions' answer reader on the sync question (:mod:`~.extract`): synchronized or not, the direction
(the grammatical subject decides: "the audio lags" is a delay, "the video lags" an early audio), the stated or
timestamp offset, and the denials, negated orders and negated offsets that claim something else or nothing."""

from __future__ import annotations

import re

from omniaudit.data_builders.interventions.extract_phrases import (
    AMOUNT,
    APPROX,
    AT,
    BY,
    CLAUSE,
    HEDGE,
    ING_NOUNS,
    NUMBER,
    SECONDS,
    clean,
    drop_possibilities,
    in_range,
    negated_claims,
    seconds,
)

_DIRECTION_WORDS = (r"(?:delayed|delays?|lags?|lagged|lagging|late|latency|offsets?|desync\w*|early|ahead|behind|"
                    r"gaps?|mismatch\w*|discrepanc\w*|sync(?:hroni[sz]ation)? (?:issues?|problems?|errors?)|"
                    r"timing (?:issues?|problems?|errors?|mismatch\w*|differences?))")
# "no delay", "not delayed", "neither early nor late", "doesn't lag behind": negated, so a claim of synchrony. The
# words between the negation and the cue may not be sync words ("not synchronized, it lags" is no negated lag).
# A negation covers the words coordinated after it: "not delayed or early" rules both out.
_NEGATED_OFFSET = re.compile(
    rf"(?:\b(?:no|without|not any|zero|never|neither|nor|not|hardly any|barely any)|n't)\s+"
    rf"(?:(?!(?:synchroni|sync|synced|aligned|in\b|out\b))\w+\s+){{0,2}}?{_DIRECTION_WORDS}(?:\s+(?:behind|ahead))?\b"
    rf"(?:,?\s+(?:or|nor)\s+{_DIRECTION_WORDS}(?:\s+(?:behind|ahead))?\b)*")
# A denied amount claims no offset and no synchrony: "the sound isn't 2 seconds late", "doesn't arrive 2 s late",
# "not delayed by 2 seconds", "no 2-second delay" (early, in sync or late by another amount: it does not say). Followed
# by the amount it stands for ("not delayed by 2 seconds but by 1 second", "nicht 2 Sekunden zu spät, sondern 1"), it
# is read as that amount with the denied words ("delayed by 1 second"); a replacement with its own direction word
# ("not 2 s late but 1 s early") stands alone. The words between the negation and the amount may not be sync,
# direction or clause words ("not synchronized, delayed by 2 s", "isn't in sync and lags by 2 s" deny nothing), nor
# "only" / "just" ("not just 2 seconds late"), "until" ("isn't heard until 2 s later": late) or "long" ("not long
# after": soon after).
_NEGATION = r"(?:\b(?:not|never|no|without)|n't)\s+"
_FREE_WORD = (rf"(?:(?!(?:synchroni\w*|sync\w*|aligned|in|out|but|and|or|nor|rather|instead|only|just|merely|until|"
              rf"till|long|much|it|they|there|i|we|you)\b|{_DIRECTION_WORDS}\b)[\w-]+\s+)")
_ORDER_WORD = r"(?:after|before|later|earlier|sooner|first)"
_DENIED_AMOUNT = re.compile(
    rf"{_NEGATION}{_FREE_WORD}{{0,3}}?(?:{_DIRECTION_WORDS}(?:\s+(?:behind|ahead))?\s+(?:(?:by|of)\s+)?{APPROX}"
    rf"{AMOUNT}|(?:(?:by|of)\s+)?{APPROX}{AMOUNT}(?:\s+{_FREE_WORD}{{0,2}}?(?:{_DIRECTION_WORDS}|{_ORDER_WORD})"
    rf"(?:\s+(?:behind|ahead))?\b)?)")
_INSTEAD = re.compile(rf"\s*,?\s*(?:but|rather|instead|more like|closer to)\s+(?:rather\s+|instead\s+)?"
                      rf"(?:(?:it|that)(?:'s| is| was)\s+)?(?:only\s+|just\s+)?(?:(?:by|of)\s+)?{APPROX}"
                      rf"(?:({AMOUNT})|(\d+(?:\.\d+)?|\.\d+)(?!\.?\d))")
# a negated order ("the sound does not precede the picture", "doesn't follow it", "doesn't come before the impact",
# "kommt nicht vor dem Bild"): early, late or in sync, it does not say. "lag" / "delay" / "late" / "early" / "ahead"
# are offset words: negated, they claim synchrony (``_NEGATED_OFFSET``: "doesn't lag behind" is in sync)
_NEGATED_ORDER = re.compile(
    rf"{_NEGATION}{_FREE_WORD}{{0,2}}?(?:(?:precede|lead|follow|trail)(?:s|d|ed|ing)?\b(?!\s+to\b)|"
    rf"{_ORDER_WORD}\b(?!\s+all\b))(?:\s+(?:behind|ahead)\b)?")


def _denials(text: str) -> str:
    """``text`` with each denied amount and negated order taken out (see ``_DENIED_AMOUNT``, ``_NEGATED_ORDER``), or
    read as the amount that replaces it ("not delayed by 2 s but by 1 s": "delayed by 1 s")."""
    out, pos = [], 0
    for m in _DENIED_AMOUNT.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        instead = _INSTEAD.match(text, m.end())
        if instead is None:
            out.append(" ")
            continue
        clause_end = next((c.start() for c in CLAUSE.finditer(text, instead.end())), len(text))
        if _CUE.search(text, instead.end(), clause_end):
            out.append(" ")  # "not 2 s late but 1 s early": the replacement says it all
            continue
        denied = NUMBER.search(m.group())
        amount = instead.group(1) or f"{instead.group(2)} {denied.group(3)}"
        words = re.sub(rf"^{_NEGATION}", "", m.group())
        at = denied.start() - (len(m.group()) - len(words))
        out.append(f" {words[:at]}{amount}{words[at + len(denied.group()):]}")
        pos = instead.end()
    text = "".join(out) + text[pos:]
    return _NEGATED_ORDER.sub(" ", text)


_DOUBLE_NEGATION = re.compile(r"\b(?:not|n't|never|no longer)\s+(?:\w+\s+){0,2}?out of (?:sync|synch|time)\b|"
                              r"n't\s+(?:\w+\s+){0,2}?out of (?:sync|synch|time)\b")
# a negated synchrony claim ("does not line up", "doesn't coincide", "do not occur at the same time", "never match up
# in time") says the clip is desynchronized
_NOT_SYNCED = re.compile(
    r"(?:\b(?:not|isn't|is not|aren't|are not|never|no longer|hardly|barely)|n't)"
    r"(?!\s+(?:only|just|merely|doubt\w*|deny\w*|question\w*)\b)\s+(?:\w+\s+){0,3}?"
    r"(?:synchroni[sz]ed|in (?:\w+ )?(?:sync|step)|aligned|synced|in time|matched in time|simultaneous(?:ly)?|"
    r"(?:lines?|lined|lining) up|coincid\w*|match(?:es|ed)? up|(?:at|in) the same (?:time|moment|instant))\b"
    r"|\bout of (?:sync|synch|time)\b|\b(?:desynchroni[sz]ed|desynchroni[sz]ation|desynced|desync|misaligned|"
    r"non-?\s?(?:synchroni[sz]ed|synced|aligned)|unsynced|unsynchroni[sz]ed|asynchronous|mismatched timing|"
    r"timing mismatch|time offset|temporal offset|"
    r"sync(?:hroni[sz]ation)? (?:mismatch|issue|problem|error)s?|mismatch(?:ed)? (?:in|of) (?:the )?"
    r"(?:timing|sync\w*))\b|\b(?:sound|audio) (?:and|&) (?:video|picture|image)s? (?:are|is) (?:off|offset)\b"
    r"|\b(?:timing|synchroni[sz]ation|sync) (?:is|looks|seems|appears|feels)(?: to be)? (?:\w+ )?(?:off|wrong|"
    r"incorrect|broken)\b")
_SYNCED = re.compile(r"\b(?:synchroni[sz]ed|in (?:\w+ )?sync|aligned|synced|at the same (?:time|moment)|in time with|"
                     r"coincides?|simultaneous(?:ly)?|exactly when|(?:right|immediately|just) (?:after|as|when)|"
                     r"lines? up|timed (?:correctly|well|perfectly|right)|match(?:es)? up (?:\w+ )?in time|"
                     r"(?:timing|synchroni[sz]ation|sync) (?:is|looks|seems|appears|feels)(?: to be)? (?:\w+ )?"
                     r"(?:correct|right|fine|good|accurate|ok|okay|perfect|spot on|consistent)(?: to me)?)\b")
_YES_NO = re.compile(r"^\W*(yes|no)\b")
# direction cues; strong ones stand alone ("delayed by 2 s": the audio, as asked), weak ones need a stated subject
_STRONG_DELAY = r"delayed|delays?|lags?|lagged|lagging|late|latency|behind|trails?|trailing"
_STRONG_EARLY = (r"early|earlier|ahead|too soon|premature(?:ly)?|precedes?|preceding|leads?(?! to)|leading(?! to)|"
                 r"advanced")
_WEAK_DELAY = r"after|later|follows?|afterwards"
_WEAK_EARLY = r"before|sooner|first"
_CUE = re.compile(rf"(?<!right )(?<!just )(?<!immediately )\b(?:({_STRONG_DELAY})|({_STRONG_EARLY})|({_WEAK_DELAY})|"
                  rf"({_WEAK_EARLY}))\b")
_AUDIO_SUBJECT = re.compile(r"\b(?:audio|sound|sounds|noise|soundtrack|track|thud|bang|crash|clang|knock|bounce|"
                            r"clap|voice|speech|heard|hear|hears|acoustic|impact sound)\b")
_VISUAL_SUBJECT = re.compile(r"\b(?:video|videos|picture|pictures|image|images|visual|visuals|visible|visibly|"
                             r"frames?|footage|seen|see|shown|shows|lips?|mouth|motion|movement|action|view)\b")
_TIMESTAMP = re.compile(rf"\bat\s+{APPROX}(\d+(?:\.\d+)?)\s*-?\s*(?:s|sec|secs|second|seconds)\b")


def _clauses(text: str) -> list[tuple[int, str]]:
    """(start, text) of each clause: sentences and their "but / while / whereas" parts."""
    out, start = [], 0
    for m in CLAUSE.finditer(text):
        out.append((start, text[start:m.start()]))
        start = m.end()
    out.append((start, text[start:]))
    return out


_OBJECT = re.compile(r"\b(?:with|to|than|of|from|relative to|compared to|compared with|behind|ahead of|on|in|"
                     r"into|between|among)\s+(?:the |its |this |that )?$"
                     # "between the audio and the video": the second noun is an object too
                     r"|\bbetween\s+(?:the |its |this |that )?[\w-]+\s+(?:and|&)\s+(?:the |its |this |that )?$")
# "with the audio arriving late", "with the sound coming in early": an absolute clause, whose noun is the subject of
# its participle
_ABSOLUTE_WITH = re.compile(r"(?<!compared )(?<!together )\bwith\s+(?:the |its |this |that )?$")
_PARTICIPLE = re.compile(rf"\s+(?:\w+ly\s+)?(?!(?:{ING_NOUNS})\b)[a-z]{{2,}}ing\b")


def _subject(before: str, after: str = "") -> str | None:
    """audio | visual: the last audio or visual noun before a cue in its clause that is not the object of a
    preposition ("the audio is out of sync with the video, coming in early": the audio; "between the audio and the
    video": neither), unless it leads an absolute clause ("with the audio arriving late": the audio); ``after``: the
    clause from the cue on. None: no stated subject."""
    def nouns(pattern: re.Pattern) -> list[int]:
        return [m.end() for m in pattern.finditer(before) if not _OBJECT.search(before[:m.start()]) or (
            _ABSOLUTE_WITH.search(before[:m.start()]) and _PARTICIPLE.match(before[m.end():] + after))]

    audio, visual = nouns(_AUDIO_SUBJECT), nouns(_VISUAL_SUBJECT)
    if not audio and not visual:
        return None
    return "audio" if (audio[-1] if audio else -1) > (visual[-1] if visual else -1) else "visual"


def _directions(text: str, strong: bool = False) -> set[str]:
    """The audio directions the text states (delay / early); a cue whose subject is the picture counts reversed.
    ``strong``: only the cues that claim an offset on their own ("late", "ahead"), not "after" / "before"."""
    found = set()
    for _, clause in _clauses(text):
        for m in _CUE.finditer(clause):
            subject = _subject(clause[:m.start()], clause[m.start():])
            weak = bool(m.group(3) or m.group(4))
            if weak and (strong or subject is None):
                continue  # "after watching", "first," — no stated subject, no direction
            delay = bool(m.group(1) or m.group(3))
            found.add("delay" if delay == (subject != "visual") else "early")
    return found


def _negated_directions(text: str) -> list[str | None]:
    """The direction each negated offset rules out ("isn't delayed": delay; "the video doesn't lag": early), None for
    one with no direction ("no offset", "no sync issues")."""
    out = []
    for _, clause in _clauses(text):
        for m in _NEGATED_OFFSET.finditer(clause):
            # each coordinated word: "not delayed or early" rules out both
            for word in re.split(r",?\s+(?:or|nor)\s+", m.group()):
                cue = _CUE.search(word)
                if cue is None or not (cue.group(1) or cue.group(2)):
                    out.append(None)
                    continue
                delay = bool(cue.group(1))
                subject = _subject(clause[:m.start()], clause[m.start():])
                out.append("delay" if delay == (subject != "visual") else "early")
    return out


def _timestamp_offset(text: str) -> float | None:
    """Audio time minus visual time when the answer states exactly one of each ("heard at 3.1 s", "occurs at 5 s")."""
    audio, visual = [], []
    for _, clause in _clauses(re.sub(r",", ";", text)):
        for m in _TIMESTAMP.finditer(clause):
            (audio if _AUDIO_SUBJECT.search(clause) else visual).append(float(m.group(1)))
    return audio[0] - visual[0] if len(audio) == 1 and len(visual) == 1 else None


def stated_offset(text: str) -> float | None:
    """The offset magnitude: a stated "by <n> s" if any, else the gap between an audio and a visual timestamp, else
    the first "<n> s" that is not a timestamp ("2 seconds late", "a 200 ms delay"); None for a range ("by 1 or 2
    seconds", "1-2 s": no one offset is stated, the direction stands)."""
    numbers = list(NUMBER.finditer(text))
    by = [m for m in numbers if BY.search(text[max(0, m.start() - 24):m.start()])]
    if by:
        return None if in_range(text, by[0]) else seconds(by[0])
    pair = _timestamp_offset(text)
    if pair is not None:
        return abs(pair)
    bare = [m for m in numbers if not AT.search(text[max(0, m.start() - 24):m.start()])
            and not re.match(r"\s*(?:-\s*)?(?:long|clip|video|into)\b", text[m.end():])]
    return None if not bare or in_range(text, bare[0]) else seconds(bare[0])


_OPPOSITE = {"delay": "early", "early": "delay"}
UNREAD_SYNC = {"synced": None, "direction": None, "offset_s": None}
# a stated zero offset ("the offset is 0 seconds", "a 0 ms delay") claims synchrony: "no offset"
_ZERO_OFFSET = re.compile(
    rf"\b(?:(?:time|temporal|timing)\s+)?(?:offset|delay|lag|latency|gap|difference|desync)(?:\s+(?:is|was|of|equals)\s+|"
    rf"\s*[:=]\s*|\s+)(?:exactly\s+)?(?:0+(?:\.0+)?|zero)(?![.,]?\d)(?:\s*-?\s*{SECONDS})?"
    rf"|\b(?:0+(?:\.0+)?|zero)(?![.,]?\d)\s*-?\s*{SECONDS}\s*(?:of\s+)?(?:offset|delay|lag|latency|gap|difference)\b")


def _sync_negation(fields: dict) -> str:
    """The claim that negates a sync reading: synchronized <-> out of sync; a negated direction says nothing."""
    if fields["synced"] is True:
        return "out of sync"
    return "in sync" if fields["synced"] is False and fields["direction"] == "none" else ""


def read_sync(text: str) -> dict:
    """The sync fields of an English (or glossed) answer, before any turn is looked for (see ``extract_sync``)."""
    text = _denials(drop_possibilities(clean(text)))
    text = _DOUBLE_NEGATION.sub(" in sync ", _ZERO_OFFSET.sub(" no offset ", text))
    text = negated_claims(text, read_sync, _sync_negation)
    negated = _negated_directions(text)  # "no noticeable delay": a claim of synchrony
    text = _NEGATED_OFFSET.sub(" ", text)
    not_synced = bool(_NOT_SYNCED.search(text))
    rest = _NOT_SYNCED.sub(" ", text)
    directions, strong = _directions(rest), _directions(rest, strong=True)
    # "not delayed but early": ruling one direction out beside a claim of the other is no claim of synchrony
    negated_sync = any(d is None or _OPPOSITE[d] not in strong for d in negated)
    synced_claim = negated_sync or bool(_SYNCED.search(rest))
    if synced_claim and (not_synced or strong):
        return dict(UNREAD_SYNC)  # "synchronized" and "out of sync" / "late" with no final word: no reading
    # an explicit "not synchronized" wins; otherwise a "synchronized" claim outranks stray "after/before" words
    if not_synced or (directions and not synced_claim):
        direction = directions.pop() if len(directions) == 1 else "none"
        pair = _timestamp_offset(text)
        if pair is not None and abs(pair) > 1e-9:
            stamped = "delay" if pair > 0 else "early"
            if direction == "none" and not directions:
                direction = stamped  # no cue word: the timestamps give the direction
            elif direction != stamped:
                direction = "none"  # "delayed" with the sound heard before the event: the direction is in doubt
        magnitude = stated_offset(text)
        sign = {"delay": 1.0, "early": -1.0}.get(direction)
        offset = None if magnitude is None or sign is None else sign * magnitude
        return {"synced": False, "direction": direction, "offset_s": offset}
    if synced_claim:
        return {"synced": True, "direction": "none", "offset_s": 0.0}
    yes_no = _YES_NO.match(text)
    if yes_no and not HEDGE.search(text):  # a bare yes / no to "is the sound synchronized?"
        if yes_no.group(1) == "yes":
            return {"synced": True, "direction": "none", "offset_s": 0.0}
        return {"synced": False, "direction": "none", "offset_s": None}
    return dict(UNREAD_SYNC)
