"""What every rule of the interventions' answer reader (:mod:`~.extract`) shares, whatever the question: amounts
("about 2 s", "a second and a half", ranges), clauses and the claims that are none (questions, "whether" clauses,
hedges, the question echoed, possibilities offered as alternatives), noise, the final commitment after a correction
or a first impression, a scene described, and claims negated as a whole."""

from __future__ import annotations

import re

from omniaudit.answer_language import prepare, unreadable
from omniaudit.data_builders.interventions.extract_gloss import SCENE_MARK, english

NUMBER_WORDS = {"half a": 0.5, "a half": 0.5, "one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4,
                "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
SECONDS = r"(?:s|sec|secs|second|seconds|ms|msec|millisecond|milliseconds)\b"
# "2 s", "1.5-second", "200 ms", "half a second" (a number word needs a space or hyphen: "as" is no "a s")
NUMBER = re.compile(rf"(?:(\d+(?:\.\d+)?|\.\d+)\s*-?\s*|\b({'|'.join(sorted(NUMBER_WORDS, key=len, reverse=True))})"
                    rf"(?:\s+|\s*-\s*))({SECONDS})")
APPROX = r"(?:about|roughly|around|approximately|nearly|almost|some|maybe|perhaps|~|≈)?\s*"
BY = re.compile(rf"\b(?:by|of)\s+{APPROX}$")
AT = re.compile(rf"\bat\s+{APPROX}$")
# an amount of time, as ``NUMBER`` without its groups
_WORD_NUMBER = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
AMOUNT = rf"(?:(?:\d+(?:\.\d+)?|\.\d+)\s*-?\s*|\b(?:{_WORD_NUMBER})(?:\s+|\s*-\s*)){SECONDS}"
# a range states no one offset ("1-2 s", "1 to 2 seconds", "one or two seconds", "between 1 and 2 s", "a second or
# two", "1 s to 2 s"): the amount it ends or starts (see ``in_range``)
_RANGE_START = rf"(?:\d+(?:\.\d+)?|\.\d+|\b(?:{_WORD_NUMBER}))(?:\s*-?\s*{SECONDS})?"
_RANGE_BEFORE = re.compile(rf"{_RANGE_START}(?:-|\s+(?:to|or)\s+)$|\bbetween\s+{APPROX}{_RANGE_START}\s+and\s+$")
_RANGE_AFTER = re.compile(rf"(?:-|\s+(?:to|or)\s+)(?:{AMOUNT}|(?:\d+(?:\.\d+)?|two|three|four|five|six|seven|"
                          r"eight|nine|ten)\b(?!\s*(?:%|x\b|times\b)))")


def in_range(text: str, m: re.Match) -> bool:
    """The amount ``m`` of ``text`` is an end of a range ("1-2 s", "one or two seconds", "a second or two")."""
    return bool(_RANGE_BEFORE.search(text[max(0, m.start() - 40):m.start()]) or _RANGE_AFTER.match(text, m.end()))


_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "∼": "~"})
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
CLAUSE = re.compile(r"[.;:!?]\s|[.;:!?]$|\s-\s|,?\s+\b(?:but|while|whereas|although|though|however)\b")
# "whether/if ..." clauses report what was asked, not what was claimed ("I can't tell whether it is in sync")
_WHETHER = re.compile(r"\b(?:whether|if)\b[^.;:!?,]*")
HEDGE = re.compile(
   r"\b(?:not (?:entirely |completely |quite )?(?:sure|clear|certain)|unsure|uncertain|unclear|"
   r"hard to (?:tell|say|determine|judge)|"
   r"difficult to (?:tell|say|determine|judge)|impossible to (?:tell|say|determine|judge)|no idea|"
   r"(?:can't|cannot|can not|couldn't|could not|unable to|not able to) (?:really )?(?:tell|say|determine|judge|"
   r"decide|know|verify|confirm)|i (?:don't|do not) know)\b")
_HEDGED_CLAUSE = re.compile(HEDGE.pattern + r"(?:(?!\bbut\b)[^.;:!?,])*")
# an instruction or a sentence in question order ("Describe the audio ...", "Is the sound synchronized with ...") is
# the question echoed back, not a claim; "Answer: synchronized" (a cue with a colon) is an answer
_ECHO = re.compile(r"^\W*(?:(?:please\s+)?(?:describe|answer|say|tell|watch|listen|explain|state|determine|identify|"
                   r"indicate|respond|choose|select|decide|estimate|judge)\s+(?!:)[\w'\"]|(?:is|are|does|do|did|can|"
                   r"could|was|were|has|have)\s+(?:the|it|this|there|a|an|any|its|you|they|these|those|both)\b)")
# "synchronized or not", "early or delayed": alternatives named, nothing claimed
_ALTERNATIVE = (r"(?:synchroni[sz]ed|in sync|out of sync|aligned|synced|delayed|early|late|ahead|behind|muted|silent|"
                r"match(?:es|ed)?|mismatch(?:es|ed)?|consistent|inconsistent)")
_ALTERNATIVES = re.compile(rf"(?<!not )(?<!n't )(?<!neither )\b{_ALTERNATIVE}\s+or\s+(?:not\b(?:\s+{_ALTERNATIVE})?|"
                           rf"{_ALTERNATIVE})")
_REFUSAL = re.compile(r"\b(?:sorry|as an ai|i (?:can't|cannot|can not) (?:help|assist|answer)|"
                      r"(?:can't|cannot|can not|unable to|not able to|don't have (?:the )?ability to) (?:access|"
                      r"process|analy[sz]e|listen to|play|perceive) (?:the |any |this )?"
                      r"(?:audio|sound|video|clip)s?)\b")
# "a second and a half", "one and a half seconds", "2 and a half s": a number with a half, as digits ("1.5 seconds")
_HALF_WORDS = {"a": 1, "an": 1, **{w: v for w, v in NUMBER_WORDS.items() if " " not in w and v >= 1}}
_HALF_NUMBER = rf"(\d+|{'|'.join(sorted(_HALF_WORDS, key=len, reverse=True))})"
_AND_A_HALF = re.compile(rf"\b{_HALF_NUMBER}\s+and\s+(?:a|one)\s+half\s*-?\s*(?:seconds?|secs?|s)\b"
                         rf"|\b{_HALF_NUMBER}\s+(?:seconds?|secs?)\s+and\s+(?:a|one)\s+half\b")


def _half(m: re.Match) -> str:
    whole = m.group(1) or m.group(2)
    return f"{float(_HALF_WORDS.get(whole, whole)) + 0.5:g} seconds"


# possibilities offered as alternatives claim neither: "it might match, or it might be from another clip", "it could
# be synchronized or slightly off", "maybe early, maybe late", "either delayed or early". Such a clause (up to ".",
# ";", "but", "though") is dropped; "1 or 2 seconds", "or so" and "more or less" are no alternatives, and a doubt
# about the direction alone leaves the claim beside it ("out of sync, though I can't say whether early or late").
# Sync and consistency only: alternatives between two sounds ("birds or insects") still describe a sound
_POSSIBLE = re.compile(r"\b(?:might|may|maybe|perhaps|possibly|could(?! (?:hear|see|tell|make out|notice|detect|"
                       r"clearly|easily)\b))\b")
_NUMBER_OR = re.compile(rf"(?:\d+(?:\.\d+)?|\b(?:{'|'.join(sorted(NUMBER_WORDS, key=len, reverse=True))}))\s*"
                        r"(?:s|seconds?|ms)?\s+or\s+(?:\d|(?:half|one|two|three|four|five|six|seven|eight|nine|ten|a|an)"
                        r"\b)|\bor (?:so|rather|more|less|two)\b|\bmore or less\b|\bwhether or not\b")
_OR = re.compile(r"\bor\b")
_EITHER_OR = re.compile(r"\beither\b.*\bor\b|\b(?:maybe|perhaps)\b[^,]*,\s*(?:or\s+)?(?:maybe|perhaps)\b")
_POSSIBILITY_CLAUSE = re.compile(r"([.;!?](?:\s+|$)|,?\s+(?=\b(?:but|while|whereas|although|though|however)\b))")


def drop_possibilities(text: str) -> str:
    """``text`` without the clauses that offer possibilities as alternatives (see ``_POSSIBLE``)."""
    parts = _POSSIBILITY_CLAUSE.split(text)
    for i in range(0, len(parts), 2):
        bare = _NUMBER_OR.sub(" ", parts[i])
        if _EITHER_OR.search(bare) or (_OR.search(bare) and _POSSIBLE.search(bare)):
            parts[i] = " "
    return "".join(parts)


def clean(text: str) -> str:
    """Lower-cased answer (already glossed into English) without what is no claim: questions and the question echoed
    back, refusals ("I cannot access the audio"), "whether/if" clauses, alternatives ("synchronized or not") and
    hedged clauses ("I'm not sure what the audio contains"; a hedge ends at a comma or "but"); a number with a half
    is written in digits ("a second and a half": "1.5 seconds")."""
    text = _AND_A_HALF.sub(_half, text.translate(_QUOTES).lower())
    text = " ".join(s for s in _SENTENCES.split(text) if not s.rstrip().endswith("?")
                    and not s.lstrip().startswith("¿") and not _REFUSAL.search(s) and not _ECHO.search(s))
    return _ALTERNATIVES.sub(" ", _HEDGED_CLAUSE.sub(" ", _WHETHER.sub(" ", text)))


def content_words(text: str) -> int:
    """Words of a cleaned answer: fewer than three is no answer to classify."""
    return len(re.findall(r"[a-z]{2,}", text))


# tokenizer markers in place of text: "<unk>", "<|endoftext|>", "</s>", "[PAD]"
_SPECIAL_TOKEN = re.compile(r"<\|[^|<>]{0,40}\|>|</?(?:s|unk|pad|eos|bos|mask)>|\[(?:pad|unk|cls|sep|mask)\]", re.I)


def is_noise(response: str | None) -> bool:
    """No answer at all, whatever a rule would find in it: empty text, byte noise (``answer_language.unreadable``),
    tokenizer markers only ("<unk><unk>"), a degenerate loop of one word ("the the the the", "Yes yes yes") or words
    that are one character repeated ("ĠĠĠĠ", "aaaa"). Every extractor, rule-based or LLM, reads such a reply as
    nothing: a broken model's output is no claim about the clip."""
    text = prepare(response)
    if unreadable(text):
        return True
    words = re.findall(r"\w+", _SPECIAL_TOKEN.sub(" ", text).lower())
    if not words:
        return True
    if len(words) >= 3 and len(set(words)) == 1:
        return True
    return all(len(w) >= 3 and len(set(w)) == 1 for w in words)


# A final commitment after an earlier reading: the answer is what follows the last turn.
# - a correction ("Perfectly synced... actually no, it lags by half a second", "on closer listening, ...") starts a
#   new reading in its clause; "no" right after the cue retracts what came before;
# - a first impression ("at first", "initially", "I thought", "it seemed ..., but") is no claim: the reading is what
#   follows its clause, and when nothing follows, nothing is read (the impression alone is not the answer).
_CORRECTION = re.compile(
    r"\b(?:actually|in fact|in reality|in truth|on (?:closer|second|further|repeated|a second|another) "
    r"(?:listen\w*|inspection|look\w*|hearing|viewing|watch\w*|examination|review|thought)|"
    r"(?:after|upon|on) (?:re-?listening|re-?watching|(?:listening|watching|looking) (?:again|more closely|"
    r"closer|carefully)|a (?:second|closer) (?:listen|look))|(?:listening|looking|watching) (?:again|more closely|"
    r"closer)|correction|scratch that|let me correct(?: that| myself)?|i mean|or rather|no,? wait|"
    r"(?:just |only )?kidding|(?:my )?final answer(?: is)?|"
    r"(?<![a-z] )wait(?=\s*[,.!;:-]))"
    r"\b(?P<retract>[,:]?\s*no\b(?=\s*[,.;:!-]|\s*$|\s+(?:it|that|this|they|the|there|i)\b))?")
_IMPRESSION = re.compile(
    r"\b(?:at first|initially|first impression|on (?:the )?first (?:listen\w*|hearing|viewing|watch\w*|glance|"
    r"pass)|at first (?:glance|listen)|i (?:first |initially )?(?:thought|assumed|believed|figured(?! out))|"
    r"i was (?:going|about) to say)\b")
# a past impression that only counts as one when a contrast follows ("it seemed synchronized, but ..."); when the
# contrast claims nothing ("it seemed delayed, but only slightly"), the impression stands
_SEEMED = re.compile(r"\b(?:seemed|appeared|looked|sounded|felt)\b")
_CONTRAST = re.compile(r"\W*(?:but|however|yet|though|although|whereas)\b")
_IMPRESSION_END = re.compile(r"[,.;:!?](?:\s|$)|\s-\s|\s(?=(?:but|however|yet|though|although|whereas)\b)")


def _clause_start(text: str, at: int) -> int:
    """Start of the clause holding position ``at`` (after the last sentence, ";", ":", " - " or "but" before it)."""
    starts = [m.end() for m in CLAUSE.finditer(text) if m.end() <= at]
    return starts[-1] if starts else 0


def _impression_end(text: str, m: re.Match) -> int | None:
    """Where the clause of a first-impression cue ends: the first comma or clause break after it with two words or
    more besides the cue ("At first, it seemed in sync, but ...": not the comma after "At first"; "It looked aligned
    at first, but ...": the comma right after it)."""
    start = max(_clause_start(text, m.start()), text.rfind(",", 0, m.start()) + 1)
    for end in _IMPRESSION_END.finditer(text, m.end()):
        if len(re.findall(r"\w+", text[start:m.start()] + " " + text[m.end():end.start()])) >= 2:
            return end.end()
    return None


def _turn(text: str) -> tuple[str, bool] | None:
    """(the text after the last turn, strict) where the answer turns from an earlier reading; strict: what comes
    before may not be read in its place (a retraction or a first impression). None: no turn."""
    text = text.translate(_QUOTES).lower()
    turns = []
    for m in _CORRECTION.finditer(text):
        # "delayed by 2 s, actually more like 1 s late": after a comma the correction is its own clause
        start = m.start() if re.search(r",\s*$", text[:m.start()]) else _clause_start(text, m.start())
        turns.append((start, text[start:m.start()] + " " + text[m.end():], bool(m.group("retract"))))
    for m in _IMPRESSION.finditer(text):
        end = _impression_end(text, m)
        turns.append((len(text) if end is None else end, "" if end is None else text[end:], True))
    for m in _SEEMED.finditer(text):
        end = _impression_end(text, m)
        if end is not None and _CONTRAST.match(text, end - 1):
            turns.append((end, text[end:], False))
    if not turns:
        return None
    _, tail, strict = max(turns, key=lambda t: t[0])
    return tail, strict


def cleared(fields: dict) -> dict:
    return dict.fromkeys(fields)


def final_reading(read, response: str) -> dict:
    """``read`` (a rule reader of glossed English text) applied to the answer's final commitment: no reading for
    noise; after a turn (see ``_turn``), the reading of what follows it, unless it only restates the whole answer's
    reading with less detail ("delayed by 2 s. It actually lags a lot": delayed by 2 s). A tail that reads nothing
    leaves the whole answer's reading only when the turn was no retraction or impression and the tail no hedge
    ("before the hammer actually strikes": the "actually" corrects nothing)."""
    if is_noise(response):
        return cleared(read(""))
    text = english(response)
    whole = read(text)
    turn = _turn(text)
    if turn is None:
        return whole
    tail, strict = turn
    final = read(tail)
    if all(v is None for v in final.values()):
        return cleared(whole) if strict or HEDGE.search(tail) else whole
    if all(v is None or whole.get(k) == v for k, v in final.items()):
        return whole
    return final


# topic words name the subject of the question, not a claim about it: "Audio", "Sound", "the video"
TOPIC = {"audio", "audios", "sound", "sounds", "soundtrack", "track", "video", "videos", "clip", "clips", "visual",
         "visuals", "picture", "image", "answer", "question", "hear", "heard", "see", "seen", "unk", "endoftext",
         "eos", "pad", "bos", "im", "end", "start", "the", "an", "and", "this", "that", "it", "is", "in", "of"}
ING_NOUNS = ("nothing|something|anything|everything|thing|things|king|ring|spring|string|morning|evening|during|"
             "ceiling|meeting|feeling|wedding|pudding|sibling|darling|being|ping|sing|wing|bring")
_ACTIONS = ("walks|runs|rides|falls|jumps|drives|opens|closes|sits|stands|moves|rolls|bounces|hits|throws|kicks|"
            "catches|cooks|types|sleeps|flies|swims|dances|plays|holds|carries|waters|pours|cuts|chops|slices|"
            "climbs|eats|drinks|reads|writes|paints|waves|smiles|turns|picks|puts|pushes|pulls|lands|drops|crosses|"
            "enters|leaves|skates|skis|surfs|lifts|washes|cleans|fixes|builds|digs|kneels|lies|stares|watches|"
            "passes|chases|grabs|hugs|shakes|nods|points|spins|slides|swings|taps|wipes|stirs|bakes|fries|mows|"
            "sweeps|stops|breaks|shatters|collides|crashes|strikes|floats|sails|waits|looks|appears|"
            "hangs|rests|leans|lays|places|sets|shoots|aims|steps|approaches|arrives|exits|follows|leads|"
            "performs|practices|sings|talks|speaks|laughs|cries|barks|kisses|stretches|rises|sinks|melts|burns|"
            "prepares|wears|feeds|plants|serves|shops|sells|buys|browses")
# the answer describes the scene: a picture frame, or someone or something doing something ("a man rides a bike",
# "a dog running", "someone is cooking")
_SCENE = re.compile(
    rf"\b(?:(?:the |this )?(?:video|clip|footage|scene|image|frame|picture|camera|visual)s? (?:shows?|depicts?|"
    rf"features?|"
    rf"captures?)|i (?:can )?see|we (?:can )?see|you (?:can )?see|can be seen|(?:is|are) seen|(?:is|are) shown|"
    rf"(?:is|are) visible|on[- ]screen|visually|{SCENE_MARK})\b"
    # "the scene is a busy market", "the setting is outdoors", "the clip takes place in a kitchen"
    rf"|\b(?:the |this )?(?:scene|setting|footage|image|picture|frame|shot|view|location)s? (?:is|are|was|were) "
    rf"(?:set )?(?:a|an|of|in|at|on|inside|outside|outdoors|indoors)\b"
    rf"|\b(?:video|clip|scene|footage|action) (?:is set|was set|takes place|took place|is filmed|was filmed|is shot|"
    rf"was shot) (?:in|at|on|inside|outside|outdoors|indoors)\b"
    rf"|\b(?:a|an|the|two|three|four|some|several|many|one|someone|somebody|people|he|she|they|his|her|their)\s+"
    rf"(?:[^\W\d_][\w'-]*\s+){{0,4}}?(?:(?:is|are)\s+)?(?:{_ACTIONS}|(?!(?:{ING_NOUNS})\b)[a-z]{{2,}}ing)\b")


def describes_scene(text: str) -> bool:
    return bool(_SCENE.search(text))


def seconds(match: re.Match) -> float:
    digits, word, unit = match.group(1), match.group(2), match.group(3)
    value = float(NUMBER_WORDS[word]) if word else float(digits)
    return value / 1000 if unit.startswith(("ms", "msec", "milli")) else value


# "it's not the case that X", "it is not true that X", "I don't think X": the negation of the claim X (read by
# ``negated_claims``)
_NOT_THE_CASE = re.compile(r"\bit(?:'s| is| was)(?: not|n't) (?:the case|true)\s+that\b|\bit (?:isn't|wasn't) "
                           r"(?:the case|true)\s+that\b|\bit(?:'s| is| was) (?:untrue|false)\s+that\b"
                           r"|\bi (?:don't|do not) (?:think|believe)(?:\s+that)?\b")


def negated_claims(text: str, read, negation) -> str:
    """``text`` with each "it's not the case that <clause>" replaced by ``negation(read(clause))``: a phrase that
    claims the opposite where the opposite is one claim ("not the case that it is synchronized": out of sync), else
    nothing ("not the case that it is delayed" does not say whether it is early or in sync)."""
    out, pos = [], 0
    for m in _NOT_THE_CASE.finditer(text):
        if m.start() < pos:
            continue
        end = next((c.start() for c in CLAUSE.finditer(text, m.end())), len(text))
        out += [text[pos:m.start()], f" {negation(read(text[m.end():end]))} "]
        pos = end
    return "".join(out) + text[pos:]


def unread(fields: dict) -> bool:
    """No field read: the answers a hybrid reading (rules first) would hand to an LLM extractor."""
    return all(v is None for v in fields.values())
