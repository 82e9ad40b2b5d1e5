"""Rule-based extraction of structured answers from free-form responses to the intervention questions.

The paper parses free-form answers with an LLM judge (Thud appendix G.3); this is the offline, deterministic
fallback. It reads only the model's response, never the target, and returns ``None`` for a field it cannot decide
(counted as unparseable, never guessed): an empty, hedged ("hard to tell whether it is in sync") or off-topic answer
gets no class. Fields:

- sync: ``synced`` (bool), ``direction`` (delay | early | none), ``offset_s`` (signed: + = audio delayed);
- existence: ``audio_state`` (muted | audio_described | visual_only), as the paper's judge classes;
- consistency: ``match`` (match | mismatch | none: no judgement, e.g. a visual-only answer).

How phrasings are read (each rule is covered by the labelled set in ``.extract_labelled``):

- negations are claims: "no noticeable delay" says synchronized, "no mismatch" says match, "no music, only wind"
  describes wind; a whole-track silence claim ("the clip is silent") wins unless it names an exception ("except a
  faint hum"); a hypothetical sound ("would normally make a thud") is no description;
- direction follows the grammatical subject: "the audio lags" is a delay, "the video lags behind the audio" means the
  audio is early; "after"/"before" count only with a stated subject ("the thud is heard after the impact"); a noun
  after a preposition is no subject ("a gap between the audio and the video"), unless it leads an absolute clause
  ("with the audio arriving 2 s too late": the audio);
- the offset is the stated one ("by about 2 s", "200 ms"), else the difference of an audio and a visual timestamp
  ("the fall occurs at 5.0 s, the impact sound is heard at 3.1 s": early by 1.9 s), which also gives the direction;
- text inside questions and "whether/if" clauses is not a claim, so "I can't tell whether it is synchronized" stays
  unparsed; a bare "Yes"/"No" answers the sync question (synchronized / not synchronized, no direction);
- a negated synchrony claim is a desynchrony claim ("does not line up", "doesn't coincide", "do not occur at the same
  time", "non-synchronized"), and alternatives are no claim ("synchronized or not", "early or delayed");
- a claim negated as a whole ("it's not the case that ...", "it is not true that ...", "I don't think ...") is read
  as its opposite where that is one claim (synchronized <-> out of sync, match <-> mismatch) and as nothing
  otherwise ("it's not the case that the audio is delayed": early or in sync, it does not say);
- amounts: "a second and a half" / "one and a half seconds" is 1.5 s; a stated zero offset ("the offset is 0
  seconds") is synchrony; a range ("1-2 s", "by one or two seconds", "a second or two") keeps its direction and
  states no offset; a denied amount ("isn't 2 seconds late", "doesn't arrive 2 s late", "no 2-second delay") claims
  nothing, not synchrony, and "not X but Y" is Y ("not delayed by 2 s but by 1 s": delayed by 1 s);
- a negated order ("does not precede / follow / lead / trail", "doesn't come before / after") claims nothing, where
  a negated offset word ("no delay", "isn't late", "doesn't lag behind") claims synchrony; a negation covers the words
  coordinated after it ("not delayed or early": in sync; "not dubbed or replaced": a match);
- "quiet" / "silent" said of a place, a person or a scene ("the setting is a quiet kitchen", "a silent crowd") is
  no silence of the soundtrack ("the clip is quiet", "it's quiet, no sound" still are);
- what is not an answer stays unparsed: the question echoed back (a sentence in question order or an instruction:
  "Describe the audio you hear", "Answer 'synchronized' or ..."), a bare topic word ("Audio", "Sound", repeated or
  after tokenizer noise), gibberish and off-topic text. ``visual_only`` (existence) and ``none`` (consistency) need
  an answer that describes the scene (a picture frame such as "the video shows", or someone or something doing
  something: "a man rides a bike", "a dog running"), so "The capital of France is Paris." is no audio dodge;
- doubt is never read as an answer: two incompatible claims with no final word ("synchronized ... delayed by 2 s",
  "there is no sound. I hear a dog", "the audio matches the video ... is unrelated to it") read as nothing; a
  correction ("Perfectly synced... actually no, it lags by half a second", "on closer listening ...") or a first
  impression given up ("at first it seemed synchronized, but the sound is 2 s late", "initially", "I thought")
  reads the final claim, and nothing when none follows; ruling one direction out beside the other ("not delayed
  but early") claims the other, not synchrony; an incongruity ("odd for an indoor kitchen", "wouldn't expect ... in",
  "birdsong in a kitchen is strange") is a mismatch, a negated one ("nothing about the audio feels out of place") a
  match; a split verdict ("partly matches, partly doesn't", "matches the picture, but not the music") is nothing; a
  joke retracted ("just kidding, ...") or a "final answer:" reads the claim that follows;
- possibilities offered as alternatives claim neither (sync and consistency): "it might match, or it might be from
  another clip", "maybe early, maybe late", "either delayed or early";
- silence is also "the soundtrack is blank / empty" and "Nothing." as the answer to what is heard;
- a structured answer is read field by field: a JSON object (``{"synchronized": false, "direction": "delayed",
  "offset_seconds": 1.2}``; keys such as synced / in_sync / direction / offset / offset_ms / audio_state /
  sound_present / match / consistent) or key-value lines ("- Synchronized: no\n- Direction: early\n- Offset: about 1
  second"); fields that contradict each other ("synchronized": true with a direction) or the prose beside them, or a
  known key whose value cannot be read ("synchronized": "true or false"), read as nothing;
- noise is no answer (``is_noise``): empty text, byte noise, tokenizer markers, one word repeated;
- Spanish, Chinese, German and French answers are read through an English gloss of their sync, sound and scene
  phrases (``.extract_gloss``); a phrase the lexicon does not know is left untranslated, so such an answer stays
  unparsed rather than misread; an answer in a language with no gloss is not read at all (never by the English rules
  raw, where a cognate such as "correspond" would be read without its "ne ... pas").

The LLM extractor (``llm_extract``, ``--extractor``) asks a judge to pick one of ``LLM_OPTIONS`` and reads its reply
with ``read_extractor_reply`` (JSON, a quoted option, a cue, an option alone on a line; nothing when they disagree);
a noise answer is not sent. ``unread(fields)`` marks the answers the rules leave unread, the ones a hybrid reading
(rules first) would hand to the extractor.
"""

from __future__ import annotations

import re

from omniaudit.answer_language import prepare, unreadable
from omniaudit.evaluation.interventions.extract_gloss import SCENE_MARK, english

NUMBER_WORDS = {"half a": 0.5, "a half": 0.5, "one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4,
                "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_SECONDS = r"(?:s|sec|secs|second|seconds|ms|msec|millisecond|milliseconds)\b"
# "2 s", "1.5-second", "200 ms", "half a second" (a number word needs a space or hyphen: "as" is no "a s")
_NUMBER = re.compile(rf"(?:(\d+(?:\.\d+)?|\.\d+)\s*-?\s*|\b({'|'.join(sorted(NUMBER_WORDS, key=len, reverse=True))})"
                     rf"(?:\s+|\s*-\s*))({_SECONDS})")
_APPROX = r"(?:about|roughly|around|approximately|nearly|almost|some|maybe|perhaps|~|≈)?\s*"
_BY = re.compile(rf"\b(?:by|of)\s+{_APPROX}$")
_AT = re.compile(rf"\bat\s+{_APPROX}$")
# an amount of time, as ``_NUMBER`` without its groups
_WORD_NUMBER = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_AMOUNT = rf"(?:(?:\d+(?:\.\d+)?|\.\d+)\s*-?\s*|\b(?:{_WORD_NUMBER})(?:\s+|\s*-\s*)){_SECONDS}"
# a range states no one offset ("1-2 s", "1 to 2 seconds", "one or two seconds", "between 1 and 2 s", "a second or
# two", "1 s to 2 s"): the amount it ends or starts (see ``_in_range``)
_RANGE_START = rf"(?:\d+(?:\.\d+)?|\.\d+|\b(?:{_WORD_NUMBER}))(?:\s*-?\s*{_SECONDS})?"
_RANGE_BEFORE = re.compile(rf"{_RANGE_START}(?:-|\s+(?:to|or)\s+)$|\bbetween\s+{_APPROX}{_RANGE_START}\s+and\s+$")
_RANGE_AFTER = re.compile(rf"(?:-|\s+(?:to|or)\s+)(?:{_AMOUNT}|(?:\d+(?:\.\d+)?|two|three|four|five|six|seven|"
                          r"eight|nine|ten)\b(?!\s*(?:%|x\b|times\b)))")


def _in_range(text: str, m: re.Match) -> bool:
    """The amount ``m`` of ``text`` is an end of a range ("1-2 s", "one or two seconds", "a second or two")."""
    return bool(_RANGE_BEFORE.search(text[max(0, m.start() - 40):m.start()]) or _RANGE_AFTER.match(text, m.end()))


# ------------------------------------------------------------------------------------------------ shared clean-up
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "∼": "~"})
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE = re.compile(r"[.;:!?]\s|[.;:!?]$|\s-\s|,?\s+\b(?:but|while|whereas|although|though|however)\b")
# "whether/if ..." clauses report what was asked, not what was claimed ("I can't tell whether it is in sync")
_WHETHER = re.compile(r"\b(?:whether|if)\b[^.;:!?,]*")
_HEDGE = re.compile(
    r"\b(?:not (?:entirely |completely |quite )?(?:sure|clear|certain)|unsure|uncertain|unclear|"
    r"hard to (?:tell|say|determine|judge)|"
    r"difficult to (?:tell|say|determine|judge)|impossible to (?:tell|say|determine|judge)|no idea|"
    r"(?:can't|cannot|can not|couldn't|could not|unable to|not able to) (?:really )?(?:tell|say|determine|judge|"
    r"decide|know|verify|confirm)|i (?:don't|do not) know)\b")
_HEDGED_CLAUSE = re.compile(_HEDGE.pattern + r"(?:(?!\bbut\b)[^.;:!?,])*")
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


def _drop_possibilities(text: str) -> str:
    """``text`` without the clauses that offer possibilities as alternatives (see ``_POSSIBLE``)."""
    parts = _POSSIBILITY_CLAUSE.split(text)
    for i in range(0, len(parts), 2):
        bare = _NUMBER_OR.sub(" ", parts[i])
        if _EITHER_OR.search(bare) or (_OR.search(bare) and _POSSIBLE.search(bare)):
            parts[i] = " "
    return "".join(parts)


def _clean(text: str) -> str:
    """Lower-cased answer (already glossed into English) without what is no claim: questions and the question echoed
    back, refusals ("I cannot access the audio"), "whether/if" clauses, alternatives ("synchronized or not") and
    hedged clauses ("I'm not sure what the audio contains"; a hedge ends at a comma or "but"); a number with a half
    is written in digits ("a second and a half": "1.5 seconds")."""
    text = _AND_A_HALF.sub(_half, text.translate(_QUOTES).lower())
    text = " ".join(s for s in _SENTENCES.split(text) if not s.rstrip().endswith("?")
                    and not s.lstrip().startswith("¿") and not _REFUSAL.search(s) and not _ECHO.search(s))
    return _ALTERNATIVES.sub(" ", _HEDGED_CLAUSE.sub(" ", _WHETHER.sub(" ", text)))


def _content_words(text: str) -> int:
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
    starts = [m.end() for m in _CLAUSE.finditer(text) if m.end() <= at]
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


def _unread(fields: dict) -> dict:
    return dict.fromkeys(fields)


def _final_reading(read, response: str) -> dict:
    """``read`` (a rule reader of glossed English text) applied to the answer's final commitment: no reading for
    noise; after a turn (see ``_turn``), the reading of what follows it, unless it only restates the whole answer's
    reading with less detail ("delayed by 2 s. It actually lags a lot": delayed by 2 s). A tail that reads nothing
    leaves the whole answer's reading only when the turn was no retraction or impression and the tail no hedge
    ("before the hammer actually strikes": the "actually" corrects nothing)."""
    if is_noise(response):
        return _unread(read(""))
    text = english(response)
    whole = read(text)
    turn = _turn(text)
    if turn is None:
        return whole
    tail, strict = turn
    final = read(tail)
    if all(v is None for v in final.values()):
        return _unread(whole) if strict or _HEDGE.search(tail) else whole
    if all(v is None or whole.get(k) == v for k, v in final.items()):
        return whole
    return final


# topic words name the subject of the question, not a claim about it: "Audio", "Sound", "the video"
_TOPIC = {"audio", "audios", "sound", "sounds", "soundtrack", "track", "video", "videos", "clip", "clips", "visual",
          "visuals", "picture", "image", "answer", "question", "hear", "heard", "see", "seen", "unk", "endoftext",
          "eos", "pad", "bos", "im", "end", "start", "the", "an", "and", "this", "that", "it", "is", "in", "of"}


_ING_NOUNS = ("nothing|something|anything|everything|thing|things|king|ring|spring|string|morning|evening|during|"
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
    rf"(?:[^\W\d_][\w'-]*\s+){{0,4}}?(?:(?:is|are)\s+)?(?:{_ACTIONS}|(?!(?:{_ING_NOUNS})\b)[a-z]{{2,}}ing)\b")


def _describes_scene(text: str) -> bool:
    return bool(_SCENE.search(text))


def _seconds(match: re.Match) -> float:
    digits, word, unit = match.group(1), match.group(2), match.group(3)
    value = float(NUMBER_WORDS[word]) if word else float(digits)
    return value / 1000 if unit.startswith(("ms", "msec", "milli")) else value


# "it's not the case that X", "it is not true that X", "I don't think X": the negation of the claim X (read by
# ``_negated_claims``)
_NOT_THE_CASE = re.compile(r"\bit(?:'s| is| was)(?: not|n't) (?:the case|true)\s+that\b|\bit (?:isn't|wasn't) "
                           r"(?:the case|true)\s+that\b|\bit(?:'s| is| was) (?:untrue|false)\s+that\b"
                           r"|\bi (?:don't|do not) (?:think|believe)(?:\s+that)?\b")


def _negated_claims(text: str, read, negation) -> str:
    """``text`` with each "it's not the case that <clause>" replaced by ``negation(read(clause))``: a phrase that
    claims the opposite where the opposite is one claim ("not the case that it is synchronized": out of sync), else
    nothing ("not the case that it is delayed" does not say whether it is early or in sync)."""
    out, pos = [], 0
    for m in _NOT_THE_CASE.finditer(text):
        if m.start() < pos:
            continue
        end = next((c.start() for c in _CLAUSE.finditer(text, m.end())), len(text))
        out += [text[pos:m.start()], f" {negation(read(text[m.end():end]))} "]
        pos = end
    return "".join(out) + text[pos:]


# ------------------------------------------------------------------------------------------------------- sync
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
    rf"{_NEGATION}{_FREE_WORD}{{0,3}}?(?:{_DIRECTION_WORDS}(?:\s+(?:behind|ahead))?\s+(?:(?:by|of)\s+)?{_APPROX}"
    rf"{_AMOUNT}|(?:(?:by|of)\s+)?{_APPROX}{_AMOUNT}(?:\s+{_FREE_WORD}{{0,2}}?(?:{_DIRECTION_WORDS}|{_ORDER_WORD})"
    rf"(?:\s+(?:behind|ahead))?\b)?)")
_INSTEAD = re.compile(rf"\s*,?\s*(?:but|rather|instead|more like|closer to)\s+(?:rather\s+|instead\s+)?"
                      rf"(?:(?:it|that)(?:'s| is| was)\s+)?(?:only\s+|just\s+)?(?:(?:by|of)\s+)?{_APPROX}"
                      rf"(?:({_AMOUNT})|(\d+(?:\.\d+)?|\.\d+)(?!\.?\d))")
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
        clause_end = next((c.start() for c in _CLAUSE.finditer(text, instead.end())), len(text))
        if _CUE.search(text, instead.end(), clause_end):
            out.append(" ")  # "not 2 s late but 1 s early": the replacement says it all
            continue
        denied = _NUMBER.search(m.group())
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
_TIMESTAMP = re.compile(rf"\bat\s+{_APPROX}(\d+(?:\.\d+)?)\s*-?\s*(?:s|sec|secs|second|seconds)\b")


def _clauses(text: str) -> list[tuple[int, str]]:
    """(start, text) of each clause: sentences and their "but / while / whereas" parts."""
    out, start = [], 0
    for m in _CLAUSE.finditer(text):
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
_PARTICIPLE = re.compile(rf"\s+(?:\w+ly\s+)?(?!(?:{_ING_NOUNS})\b)[a-z]{{2,}}ing\b")


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


def _offset(text: str) -> float | None:
    """The offset magnitude: a stated "by <n> s" if any, else the gap between an audio and a visual timestamp, else
    the first "<n> s" that is not a timestamp ("2 seconds late", "a 200 ms delay"); None for a range ("by 1 or 2
    seconds", "1-2 s": no one offset is stated, the direction stands)."""
    numbers = list(_NUMBER.finditer(text))
    by = [m for m in numbers if _BY.search(text[max(0, m.start() - 24):m.start()])]
    if by:
        return None if _in_range(text, by[0]) else _seconds(by[0])
    pair = _timestamp_offset(text)
    if pair is not None:
        return abs(pair)
    bare = [m for m in numbers if not _AT.search(text[max(0, m.start() - 24):m.start()])
            and not re.match(r"\s*(?:-\s*)?(?:long|clip|video|into)\b", text[m.end():])]
    return None if not bare or _in_range(text, bare[0]) else _seconds(bare[0])


_OPPOSITE = {"delay": "early", "early": "delay"}
_UNREAD_SYNC = {"synced": None, "direction": None, "offset_s": None}
# a stated zero offset ("the offset is 0 seconds", "a 0 ms delay") claims synchrony: "no offset"
_ZERO_OFFSET = re.compile(
    rf"\b(?:(?:time|temporal|timing)\s+)?(?:offset|delay|lag|latency|gap|difference|desync)(?:\s+(?:is|was|of|equals)\s+|"
    rf"\s*[:=]\s*|\s+)(?:exactly\s+)?(?:0+(?:\.0+)?|zero)(?![.,]?\d)(?:\s*-?\s*{_SECONDS})?"
    rf"|\b(?:0+(?:\.0+)?|zero)(?![.,]?\d)\s*-?\s*{_SECONDS}\s*(?:of\s+)?(?:offset|delay|lag|latency|gap|difference)\b")


def _sync_negation(fields: dict) -> str:
    """The claim that negates a sync reading: synchronized <-> out of sync; a negated direction says nothing."""
    if fields["synced"] is True:
        return "out of sync"
    return "in sync" if fields["synced"] is False and fields["direction"] == "none" else ""


def _read_sync(text: str) -> dict:
    """The sync fields of an English (or glossed) answer, before any turn is looked for (see ``extract_sync``)."""
    text = _denials(_drop_possibilities(_clean(text)))
    text = _DOUBLE_NEGATION.sub(" in sync ", _ZERO_OFFSET.sub(" no offset ", text))
    text = _negated_claims(text, _read_sync, _sync_negation)
    negated = _negated_directions(text)  # "no noticeable delay": a claim of synchrony
    text = _NEGATED_OFFSET.sub(" ", text)
    not_synced = bool(_NOT_SYNCED.search(text))
    rest = _NOT_SYNCED.sub(" ", text)
    directions, strong = _directions(rest), _directions(rest, strong=True)
    # "not delayed but early": ruling one direction out beside a claim of the other is no claim of synchrony
    negated_sync = any(d is None or _OPPOSITE[d] not in strong for d in negated)
    synced_claim = negated_sync or bool(_SYNCED.search(rest))
    if synced_claim and (not_synced or strong):
        return dict(_UNREAD_SYNC)  # "synchronized" and "out of sync" / "late" with no final word: no reading
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
        magnitude = _offset(text)
        sign = {"delay": 1.0, "early": -1.0}.get(direction)
        offset = None if magnitude is None or sign is None else sign * magnitude
        return {"synced": False, "direction": direction, "offset_s": offset}
    if synced_claim:
        return {"synced": True, "direction": "none", "offset_s": 0.0}
    yes_no = _YES_NO.match(text)
    if yes_no and not _HEDGE.search(text):  # a bare yes / no to "is the sound synchronized?"
        if yes_no.group(1) == "yes":
            return {"synced": True, "direction": "none", "offset_s": 0.0}
        return {"synced": False, "direction": "none", "offset_s": None}
    return dict(_UNREAD_SYNC)


def extract_sync(response: str) -> dict:
    """``synced`` / ``direction`` / ``offset_s`` of an answer to the sync question (all None: no reading): the final
    commitment after a correction or first impression, nothing for two incompatible claims or noise."""
    return _structured_or_final("sync", _read_sync, response)


# -------------------------------------------------------------------------------------------------- existence
_SOUND_GENERIC = (r"hear|hears|heard|hearing|audible|sounds?|noises?|audio|music|musical|melody|melodies|songs?|"
                  r"voices?|vocals?|speech|speaking|spoken|speaks?|talking|talks?|narrat\w*|dialogues?|tones?|"
                  r"hum|hums|humming|buzz\w*|beep\w*|ringing|rings|chimes?|soundtrack|ambien\w*")
_SOUND_EVENT = (r"thuds?|bangs?|banging|crash\w*|clang\w*|clank\w*|knock\w*|bounc\w*|shatter\w*|footsteps?|"
                r"laugh\w*|scream\w*|bark\w*|meow\w*|chirp\w*|tweet\w*|honk\w*|roar\w*|growl\w*|whistl\w*|"
                r"siren\w*|engines?|rumbl\w*|crackl\w*|sizzl\w*|squeak\w*|squeal\w*|creak\w*|thump\w*|click\w*|"
                r"clap\w*|applau\w*|cheer\w*|sings?|singing|sang|drums?|drumming|guitars?|piano|beats?|chatter\w*|"
                r"murmur\w*|whisper\w*|shout\w*|yell\w*|cries|crying|sobs?|sobbing|hiss\w*|pops|popping|"
                r"snaps?|snapping|rustl\w*|splash\w*|drip\w*|ticking|ticks|bells?|alarms?|purr\w*|howl\w*|"
                r"quack\w*|neigh\w*|thunder\w*|rain|wind|static|whoosh\w*|slam\w*|smash\w*|boom\w*|"
                r"explosions?|impacts?|gurgl\w*|babbl\w*|hammering|clatter\w*|jingl\w*|roaring|wails?|wailing|"
                r"coughs?|coughing|sneez\w*|breathing|panting|barking|mooing|clink\w*|rattl\w*|thunk\w*|"
                r"skid\w*|screech\w*|grunt\w*|moan\w*|groan\w*|snor\w*|chant\w*|hymn\w*|bird ?song|birds")
_GENERIC = re.compile(rf"\b(?:{_SOUND_GENERIC})\b")
_EVENT = re.compile(rf"\b(?:{_SOUND_EVENT})\b")
# the answer frames itself as a picture description: a sound-making action ("a dog barking") is then seen, not heard
_VISUAL_FRAME = re.compile(r"\b(?:(?:the |this )?(?:video|clip|footage|scene|image|frame|visual)s? (?:shows?|depicts?|"
                           r"features?)|i (?:can )?see|we (?:can )?see|you (?:can )?see|can be seen|(?:is|are) seen|"
                           r"(?:is|are) shown|(?:is|are) visible|on[- ]screen|visually)\b")
_SILENCE = re.compile(
    r"\b(?:video|audio|clip|track|soundtrack|it|everything|scene|recording|footage|sound)(?:'s| is| was| seems| "
    r"appears| sounds| remains| stays)(?: to be)? (?:completely |entirely |totally |fully |almost |basically |"
    r"essentially |mostly |virtually |absolutely |just )?(?:silent|muted|mute|soundless|noiseless|silenced|absent|"
    r"missing|removed|turned off|switched off)\b"
    r"|\bno (?:audible |discernible |clear |detectable |perceptible |actual |real |recorded )?"
    r"(?:sound|audio|noise|audio content|sound content)s?\b(?! (?:of|from|effects?)\b)"
    r"|\bnothing (?:can be |could be |is |was )?(?:heard|audible)|\bnothing to (?:hear|be heard)\b|"
    r"\b(?:audio|sound|track|soundtrack)s? (?:is|are|was|were|seems|appears|remains|stays)(?: to be)? "
    r"(?:completely |entirely |totally |fully |basically |essentially |virtually |absolutely |just |simply |"
    r"utterly |)(?:empty|blank)\b|\bhear(?:d)? (?:absolutely |really |"
    r"literally |just )?nothing\b|"
    r"(?:\b(?:can't|cannot|can not|couldn't|could not|don't|do not|didn't|did not|unable to)|n't)\s+hear "
    r"(?:anything|a thing|(?:any |the )?(?:sound|audio|noise)s?\b)"
    r"|\b(?:complete|total|absolute|pure|dead|utter) silence\b|\bsilent (?:video|clip|film|footage|track)\b"
    # "Nothing.", "Nothing at all - ...", "Absolutely nothing.": nothing is what is heard (the question asks what)
    r"|^\W*(?:absolutely |really |literally |just )?nothing(?: at all| whatsoever)?\s*(?:[-.,;:!]|$)"
    r"|\bno audio track\b|\bwithout (?:any )?(?:sound|audio)\b|\bsilent throughout\b|\b(?:there is|only|just) "
    r"silence\b|\bsilence throughout\b|\b(?:has|have|contains?) no (?:sound|audio)\b")
_WEAK_SILENCE = re.compile(r"\b(?:silent|silence|muted|mute|soundless|quiet)\b")
# "quiet" / "silent" said of a place, a person or a scene ("the setting is a quiet kitchen", "a silent crowd watches",
# glossed "une cuisine silencieuse": "a kitchen silent") describes the picture, not the soundtrack; said of the
# soundtrack or the clip ("a quiet video", "the audio is quiet", "it's quiet, no sound") it still counts
_MEDIA = r"(?:video|videos|clip|clips|film|footage|track|soundtrack|recording|movie|audio|sound|sounds)"
_NOT_A_NOUN = (r"(?:and|or|but|with|except|apart|besides|throughout|in|at|on|for|to|from|of|now|here|there|overall|"
               r"too|as|so|then|is|are|was|were|one|apart|save|other|until)")
_QUIET_PLACE = re.compile(
    rf"\b(?:a|an|the|this|that|these|those|its|their|his|her|our|some)\s+(?:[\w-]+,?\s+){{0,2}}?(?:quiet|silent)"
    rf"(?:(?:,|\s+and)\s+[\w-]+)?\s+(?!{_MEDIA}\b|{_NOT_A_NOUN}\b)[a-z][\w-]*"
    rf"|\b(?:a|an|the|this|that)\s+(?!{_MEDIA}\b|{_NOT_A_NOUN}\b)[a-z][\w-]*\s+(?:quiet|silent)\b(?!\s+(?:except|apart|but|"
    rf"save)\b)")


def _weak_silence(text: str) -> bool:
    """A silence word said of the soundtrack or the clip, not of a place or a person (``_QUIET_PLACE``)."""
    return bool(_WEAK_SILENCE.search(_QUIET_PLACE.sub(" ", text)))
# "except a faint hum", "only the wind": an exception to a silence claim; after a weak one ("but", "although") only
# a hearing word counts ("silent, although the ball bounces" still reports silence)
_EXCEPT = re.compile(r"\b(?:(except|apart from|other than|besides|aside from|save for|but for|only|just)|but|although|"
                     r"though|however|yet)\b")
# "no music", "don't hear any speech", "without voices": that sound is absent, nothing is said about the others
_NEGATED_SOUND = re.compile(
    rf"(?:\b(?:(?:(?:i|we|you|one)\s+(?:can\s+|could\s+)?hear\s+)?no|not any|without(?: any)?|neither|nor|(?:can't|"
    rf"cannot|can not|couldn't|could not|don't|do not|didn't|did not) hear(?: any)?)|n't hear(?: any)?)\s+"
    rf"(?:\w+\s+){{0,3}}?(?:{_SOUND_GENERIC}|{_SOUND_EVENT})\b"
    rf"[^.;:!?]*?(?=[.;:!?]|,?\s+\b(?:but|only|just|except|although|though|however|while|whereas|yet)\b|$)")
# what a sound would be, not what is heard: "would normally make a thud", "you'd expect a bang"
_HYPOTHETICAL = re.compile(
    r"(?:\b(?:would|should)|'d)\s+(?:normally |usually |typically |expect to |otherwise )?(?:make|produce|create|"
    r"cause|expect|hear|be heard|sound|accompany|be|have)\b[^.;!?]*|\b(?:expected|expect|expects|expecting)\b[^.;!?]*")


def _sound_described(text: str) -> bool:
    """The text describes a sound: a hearing/audio word, or a sound event outside a picture description."""
    return bool(_GENERIC.search(text) or (_EVENT.search(text) and not _VISUAL_FRAME.search(text)))


def _silence(text: str) -> bool | None:
    """True: a whole-track silence claim with no exception; False: silence with an exception naming a sound; None:
    no silence claim."""
    claim = _SILENCE.search(text)
    if not claim:
        return None
    for ex in _EXCEPT.finditer(text):
        tail = _SILENCE.sub(" ", _NEGATED_SOUND.sub(" ", text[ex.start():]))
        if _GENERIC.search(tail) or (ex.group(1) and _EVENT.search(tail) and not _VISUAL_FRAME.search(tail)):
            return False
    return True


# a claim that there is sound in the topic's words alone: "I hear a sound", "there is some noise", "the audio is loud"
_HEARING = re.compile(r"\b(?:i|we|you|one)\s+(?:can\s+|could\s+|do\s+)?(?:hear|heard)\b|"
                      r"\bthere\s+(?:is|are|was|were)\s+(?:\w+\s+){0,2}?(?:sound|sounds|audio|noise)s?\b|"
                      r"\b(?:audio|sound|soundtrack|track)s?\s+(?:is|are|was|were|seems|sounds|plays)\s+"
                      r"(?!(?:\w+ly\s+)?(?:silent|muted|mute|empty|blank|absent|missing|off)\b)\w+")


def _sound_claim(text: str) -> bool:
    """A sound described outside a negation: a sound named beyond the topic words ("music", "a thud", "wind noise"),
    or a claim that there is sound ("I hear a sound"); "Audio", "Sound sound sound" or noise + "Audio" is neither."""
    described = _NEGATED_SOUND.sub(" ", text)
    if not _sound_described(described):
        return False
    specific = " ".join(w for w in re.findall(r"[a-z]+", described) if w not in _TOPIC)
    return _sound_described(specific) or bool(_HEARING.search(described))


# what can only be heard (a voice or a song can also be seen: "silent; a woman is speaking to the camera")
_AUDIBLE = re.compile(r"\b(?:audible|music|musical|melod\w+|noises?|hum|hums|humming|buzz\w*|beep\w*|ringing|"
                      r"chimes?|ambien\w*|tones?)\b")
_UNHEARD = re.compile(r"[^.;:!?,]*(?:\b(?:cannot|can not|could not|not|never)|n't)\s+(?:be\s+)?(?:heard|audible)\b"
                      r"|\binaudible\b")


def _heard_besides_silence(text: str) -> bool:
    """A hearing claim beside a whole-track silence claim ("There is no sound. I hear a dog barking."): "I hear",
    "there is a sound" or a sound that can only be heard ("music", "a hum"), outside the silence claims and negated
    sounds. A sound event or a voice alone is not one ("silent, although the ball bounces": the bounce is seen)."""
    rest = _UNHEARD.sub(" ", _NEGATED_SOUND.sub(" ", _SILENCE.sub(" ", text)))
    specific = " ".join(w for w in re.findall(r"[a-z]+", rest) if w not in _TOPIC)
    return bool(_HEARING.search(rest) or _AUDIBLE.search(specific))


def _read_existence(text: str) -> dict:
    # "it's not the case that the video is silent" names no sound: the negated clause is not read
    text = _negated_claims(_HYPOTHETICAL.sub(" ", _clean(text)), lambda _: None, lambda _: "")
    silence = _silence(text)
    if silence:
        # silence and a heard sound, no exception between them: two incompatible readings, none is read
        return {"audio_state": None if _heard_besides_silence(text) else "muted"}
    if silence is False or _sound_claim(text):
        return {"audio_state": "audio_described"}
    if _weak_silence(text):
        return {"audio_state": "muted"}
    if _content_words(text) < 3 or not _describes_scene(text):
        return {"audio_state": None}  # a hedge, a refusal, an empty or off-topic answer: unparseable, not a dodge
    return {"audio_state": "visual_only"}


def extract_existence(response: str) -> dict:
    """``audio_state`` of an answer to the existence question (None: no reading), from its final commitment."""
    return _structured_or_final("existence", _read_existence, response)


# ------------------------------------------------------------------------------------------------ consistency
_MISMATCH_WORDS = (r"mismatch\w*|inconsisten\w*|unrelated|out of place|incongru\w*|dubbed|discrepan\w*|"
                   r"incompatible|implausible|unnatural|at odds|contradict\w*|conflict\w*|disconnect\w*|"
                   r"does not belong|doesn't belong|overlaid|swapped|replaced")
# incongruity: "odd for an indoor kitchen", "out of place in", "which is strange", "wouldn't expect birds in a kitchen"
_ODD = (r"(?:odd|strange|unusual|weird|bizarre|peculiar|surprising|unexpected|atypical|uncharacteristic|misplaced|"
        r"out of place|incongruous|unlikely|inappropriate|unfitting|unsuitable)")
# "no mismatch", "not inconsistent", "nothing out of place", "nothing odd": negated, so a claim of a match. A negation
# covers the words coordinated after it: "not dubbed or replaced", "neither dubbed nor swapped", "not dubbed, swapped
# or from another clip"
_ANOTHER_SOURCE = (r"(?:to|from|of|for) (?:a |an |another |some )?(?:different|another|other|separate|unrelated) "
                   r"(?:scene|source|video|clip|recording|event|context)")
_NEGATED_MISMATCH = re.compile(
    rf"(?:\b(?:no|not|never|neither|nor|without(?: any)?|not any|nothing|hardly|barely|isn't|is not|aren't|are not|"
    rf"doesn't seem|does not seem)|n't)\s+(?:(?!(?:match|fit|correspond|belong|consistent|related))\w+\s+){{0,2}}?"
    rf"(?:{_MISMATCH_WORDS}|{_ODD})\b(?:(?:,\s+|,?\s+(?:or|nor)\s+)(?:\w+\s+)?(?:{_MISMATCH_WORDS}|{_ODD}|"
    rf"{_ANOTHER_SOURCE})\b)*"
    # "nothing about the audio feels out of place", "nothing in the soundtrack seems odd"
    rf"|\bnothing\s+(?:about|in|regarding|concerning|of)\s+(?:(?!(?:match|fit|correspond|belong|consistent|"
    rf"related|but|except|besides|apart)\b)[\w']+\s+){{1,5}}?(?:{_MISMATCH_WORDS}|{_ODD})\b")
_FIT = (r"(?:match\w*|fit\w*|correspond\w*|belong\w*|go(?:es)? with|go together|align\w* with|consistent|related|"
        r"compatible|plausible|make sense|(?:lines?|lined) up|coincid\w*)")
# "doesn't fit or match the scene": the negation covers both
_MISMATCH = re.compile(
    rf"(?:\b(?:not|never|hardly|barely|no longer)|n't)\s+(?:\w+\s+){{0,2}}?{_FIT}\b(?:,?\s+(?:or|nor)\s+{_FIT}\b)*"
    rf"|\b(?:{_MISMATCH_WORDS}|makes no sense|{_ANOTHER_SOURCE}|(?:wrong|unexpected|strange|odd|mismatched) "
    rf"(?:sound|audio|soundtrack)|(?:sound|audio|soundtrack) (?:is|seems|sounds|feels) (?:\w+ )?(?:wrong|"
    rf"incorrect|inappropriate|out of context))\b")
_INCONGRUOUS = re.compile(
    rf"\b{_ODD} (?:for|in|inside|given|considering|to (?:hear|have|find))\b"
    # a sound said to be odd: "birdsong in a kitchen is strange", "the music seems out of place"
    rf"|\b(?:{_SOUND_GENERIC}|{_SOUND_EVENT})\b[^.;:!?,]{{0,40}}?\b(?:is|are|was|were|seems|sounds|feels)(?: to be)? "
    rf"(?:very |quite |rather |a bit |somewhat |really |pretty |kind of |a little |definitely |clearly )?{_ODD}\b"
    rf"|\b(?:which|that|this|it)(?:'s| is| was| seems| sounds| feels| looks)(?: to be)? (?:very |quite |rather |"
    rf"a bit |somewhat |really |pretty |kind of |a little |definitely |clearly )?{_ODD}\b"
    rf"|(?:\b(?:not|never)|n't)\s+(?:[\w']+\s+){{0,3}}?expect\w*\b"
    rf"|\bshould(?:n't| not) (?:\w+ )?be (?:there|here|heard|present)\b|\b(?:has|have) (?:no place|nothing to do) "
    rf"(?:in|with)\b")
# a claim that the soundtrack as a whole matches the pictures ("the audio matches the video"); beside a claim of a
# mismatch, with no final word, the two are incompatible (a sound that fits one event and another that does not is
# a mismatch: "the thud fits the ball, but the birds are out of place in a kitchen")
_GLOBAL_MATCH = re.compile(
    r"\b(?:audio|sound|sounds|soundtrack|everything|it all|the two|they|both)\s+(?:\w+\s+){0,3}?(?:match(?:es)?|"
    r"fits?|(?:is|are) (?:\w+ )?consistent with|corresponds? (?:to|with)|goes with|aligns? with|belongs? (?:to|with))"
    r"\s+(?:(?:the|this|each|what)\s+)?(?:video|visuals?|pictures?|images?|scene|footage|clip|other|i see|we see|is "
    r"shown|action)\b")
_MATCH = re.compile(r"\b(?:match(?:es|ed|ing)?|consistent|corresponds?|corresponding|fits|fitting|in line with|"
                    r"coincides?|as expected|synchroni[sz]ed with|goes with|go together|aligns? with|appropriate|"
                    r"plausible|natural(?:ly)?|belongs?)\b")


# "partly matches, partly doesn't", "partially consistent, partially not", "matches the picture, but not the music":
# a split verdict, no reading
_PARTLY = re.compile(r"\b(?:partly|partially|in part)\b")
_BUT_NOT = re.compile(r"(?:,|\bbut|\bthough|\balthough)\s+not\s+(?:the|its|this|that|a|an|with|to)\b")
_ELLIPTIC_NOT = re.compile(r"(?:\b(?:does|do|did|is|are|was|were)\s+not|\b(?:doesn't|don't|didn't|isn't|aren't|"
                           r"wasn't|weren't)|\bnot)\s*(?=[.,;:!?]|$)")


def _consistency_negation(fields: dict) -> str:
    """The claim that negates a consistency reading: a match <-> a mismatch; no judgement negated says nothing."""
    return {"match": "does not match", "mismatch": "matches"}.get(fields["match"], "")


def _read_consistency(text: str, default_match: bool = True) -> dict:
    """``default_match``: a sound described without a word on its fit reads as a match (off: no judgement)."""
    text = _negated_claims(_drop_possibilities(_clean(text)), _read_consistency, _consistency_negation)
    if len(_PARTLY.findall(text)) >= 2 or (_PARTLY.search(text) and _ELLIPTIC_NOT.search(text)) or (
            _BUT_NOT.search(text) and _MATCH.search(text)):
        return {"match": None}
    negated = bool(_NEGATED_MISMATCH.search(text))
    text = _NEGATED_MISMATCH.sub(" ", text)
    if _MISMATCH.search(text) or _INCONGRUOUS.search(text):
        flagged = _INCONGRUOUS.sub(" ", _MISMATCH.sub(" ", text))
        return {"match": None if _GLOBAL_MATCH.search(flagged) else "mismatch"}
    if negated or _MATCH.search(text):
        return {"match": "match"}
    silence = _silence(text)
    if silence is None and _sound_claim(text):
        # describing the sound without flagging it treats it as a natural match
        return {"match": "match" if default_match else "none"}
    if _content_words(text) < 3 or not (silence or _weak_silence(text) or _describes_scene(text)):
        return {"match": None}  # a hedge, a refusal, an empty or off-topic answer: unparseable
    return {"match": "none"}  # a judgement-free answer: visual-only, or reporting silence


def extract_consistency(response: str) -> dict:
    """``match`` of an answer to the consistency question (None: no reading), from its final commitment."""
    return _structured_or_final("consistency", _read_consistency, response)


# ----------------------------------------------------------------------------------------- structured answers
# An answer given as fields: a JSON object ({"synchronized": false, "direction": "delayed", "offset_seconds": 1.2})
# or key-value lines ("- Synchronized: no\n- Direction: early\n- Offset: about 1 second"). Each known key of the
# question's dimension is read on its own; the answer is read when they agree, and nothing when they contradict each
# other ("synchronized": true with a direction), when a known key's value cannot be read ("synchronized": "<bool>")
# or when the prose around them claims otherwise. Without a known key the rules read the answer as prose.
_SYNC_FLAG_KEYS = {"synchronized", "synchronised", "synced", "in_sync", "is_synchronized", "is_synchronised",
                   "is_synced", "is_in_sync", "sync", "synchronization", "synchronisation", "audio_synchronized",
                   "audio_synced", "audio_in_sync", "av_sync", "audio_video_sync", "sync_status", "aligned",
                   "is_aligned", "av_synchronized"}
_DIRECTION_KEYS = {"direction", "audio_direction", "offset_direction", "sync_direction", "delay_direction",
                   "desync_direction", "audio_timing", "timing"}
_OFFSET_KEYS = {"offset", "offset_s", "offset_sec", "offset_secs", "offset_seconds", "time_offset", "audio_offset",
                "offset_in_seconds", "estimated_offset", "offset_estimate", "delay", "delay_s", "delay_sec",
                "delay_seconds", "lag", "lag_s", "lag_seconds", "offset_ms", "delay_ms", "lag_ms", "time_offset_ms",
                "audio_offset_ms", "offset_milliseconds"}
_STATE_KEYS = {"audio_state", "existence", "audio_status", "sound_status", "audio", "sound", "audio_content",
               "sound_content", "audio_description", "sound_description", "what_i_hear", "heard", "soundtrack"}
_PRESENT_KEYS = {"sound_present", "audio_present", "has_audio", "has_sound", "audio_exists", "sound_exists",
                 "audible", "audio_detected", "sound_detected", "contains_audio", "contains_sound", "audio_audible",
                 "sound_audible"}
_SILENT_KEYS = {"silent", "muted", "is_silent", "is_muted", "mute", "audio_muted", "audio_silent", "silence"}
_MATCH_KEYS = {"match", "matches", "consistent", "consistency", "is_consistent", "audio_matches",
               "audio_matches_video", "sound_matches", "sound_matches_video", "audio_video_match",
               "audio_visual_match", "av_match", "matching", "congruent", "is_match", "audio_consistent",
               "audio_fits", "sound_fits", "fits", "consistent_with_video"}
_MISMATCH_KEYS = {"mismatch", "mismatched", "is_mismatch", "inconsistent", "is_inconsistent", "incongruent"}
_KEYS = {"sync": _SYNC_FLAG_KEYS | _DIRECTION_KEYS | _OFFSET_KEYS, "existence": _STATE_KEYS | _PRESENT_KEYS |
         _SILENT_KEYS, "consistency": _MATCH_KEYS | _MISMATCH_KEYS}
_TRUE = {"yes", "true", "y"}
# a value that states nothing: "direction": "none" (with "synchronized": true), "offset": null
_NOT_STATED = {"", "none", "null", "n/a", "na", "-", "unknown", "not applicable", "nan", "not stated"}
_KEY_LINE = re.compile(r"^\s*(?:[-*•+>]|\d+[.)])?\s*([A-Za-z][A-Za-z _/-]{0,40}?)\s*[:=]\s*(.*?)\s*$")
_STATE_LABELS = {"muted": "muted", "mute": "muted", "silent": "muted", "silence": "muted", "no audio": "muted",
                 "no sound": "muted", "none": "muted", "nothing": "muted", "audio described": "audio_described",
                 "described": "audio_described", "present": "audio_described", "visual only": "visual_only"}
_MATCH_LABELS = {"match": "match", "matches": "match", "matched": "match", "consistent": "match",
                 "congruent": "match", "mismatch": "mismatch", "mismatched": "mismatch", "inconsistent": "mismatch",
                 "incongruent": "mismatch"}


def _key(text: str) -> str:
    return re.sub(r"[\s/-]+", "_", text.strip().strip("\"'`").lower()).strip("_")


def _json_pairs(text: str) -> tuple[list[tuple[str, object]], str]:
    """(key, value) of every JSON object in ``text`` (nested objects flattened), and the text without them."""
    import json

    pairs, rest, pos, decoder = [], [], 0, json.JSONDecoder()

    def flatten(obj: dict) -> None:
        for k, v in obj.items():
            if isinstance(v, dict):
                flatten(v)
            elif isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                pairs.append((_key(str(k)), "; ".join(v)))  # "audio": ["a dog barking", "wind"]
            else:
                pairs.append((_key(str(k)), v))

    for m in re.finditer(r"\{", text):
        if m.start() < pos:
            continue
        try:
            obj, end = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(obj, dict):
            flatten(obj)
            rest.append(text[pos:m.start()])
            pos = end
    return pairs, "".join(rest) + text[pos:]


def _key_lines(text: str, known: set[str]) -> list[tuple[str, str, str]]:
    """(key, value, line) of the key-value lines of ``text`` with a known key ("- **Synchronized:** no"); a key with
    no value is a heading ("**Audio description:**" above a list), not a field."""
    out = []
    for line in text.splitlines():
        m = _KEY_LINE.match(re.sub(r"\*\*|__|`", "", line))
        if m and _key(m.group(1)) in known and m.group(2).strip():
            out.append((_key(m.group(1)), m.group(2), line))
    return out


def _flag(value: object) -> bool | None:
    """A boolean value: true / false, "yes" / "no", alone or leading a sentence ("No, it lags"); not in a template
    or a choice ("true or false", "yes/no")."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        m = re.match(r"^\W*(yes|no|true|false|y|n)\s*(?:$|[,.;:!)-](?!\s*(?:yes|no|true|false)\b))", value.lower())
        if m:
            return m.group(1) in _TRUE
    return None


def _text_reading(read, value: object) -> dict | None:
    """The rules' reading of a string value (None: not a string or no reading)."""
    if not isinstance(value, str) or not value.strip():
        return None
    got = _final_reading(read, value)
    return None if unread(got) else got


_UNREADABLE = object()  # a known key whose value cannot be read


def _sync_part(key: str, value: object) -> dict | object:
    """What one sync key says: ``synced``, ``direction`` (delay | early), ``magnitude`` (s); ``_UNREADABLE``."""
    if value is None or (isinstance(value, str) and value.strip().lower() in _NOT_STATED):
        return {} if key not in _SYNC_FLAG_KEYS else _UNREADABLE
    if key in _OFFSET_KEYS:
        if isinstance(value, bool):
            return _UNREADABLE
        scale = 0.001 if key.endswith(("_ms", "milliseconds")) else 1.0
        implied = {"implied": "delay"} if key.startswith(("delay", "lag")) else {}
        if isinstance(value, int | float):
            return {"magnitude": abs(float(value)) * scale, **implied}
        if not isinstance(value, str):
            return _UNREADABLE
        text = _clean(english(value))
        stated = _offset(text)
        if stated is None and any(_in_range(text, m) for m in _NUMBER.finditer(text)):
            part = dict(implied)  # a range ("1-2 s") states no one offset
        else:
            if stated is None:
                numbers = re.findall(r"\d+(?:\.\d+)?|\.\d+", text)
                if len(numbers) != 1:
                    return _UNREADABLE
                stated = float(numbers[0]) * scale
            part = {"magnitude": abs(stated), **implied}
        reading = _read_sync(text)
        if reading["direction"] in ("delay", "early"):
            part["direction"] = reading["direction"]
        return part
    flag = _flag(value) if key in _SYNC_FLAG_KEYS else None
    reading = _text_reading(_read_sync, value)
    if reading is None:
        return _UNREADABLE if flag is None else {"synced": flag}
    if flag is not None and flag != reading["synced"]:
        return _UNREADABLE  # "No, it is perfectly in sync"
    part = {"synced": reading["synced"]}
    if reading["direction"] in ("delay", "early"):
        part["direction"] = reading["direction"]
        if reading["offset_s"] is not None:
            part["magnitude"] = abs(reading["offset_s"])
    return part


def _structured_sync(pairs: list[tuple[str, object]]) -> dict:
    parts = [_sync_part(k, v) for k, v in pairs]
    if any(p is _UNREADABLE for p in parts):
        return dict(_UNREAD_SYNC)
    synced = {p["synced"] for p in parts if "synced" in p}
    directions = {p["direction"] for p in parts if "direction" in p}
    magnitudes = {round(p["magnitude"], 6) for p in parts if "magnitude" in p}
    if len(synced) > 1 or len(directions) > 1 or len(magnitudes) > 1:
        return dict(_UNREAD_SYNC)
    magnitude = next(iter(magnitudes), None)
    # "delay": 1.2 alone: the audio is delayed by 1.2 s ("a delay of 1.2 s"); beside a direction, only its amount
    implied = {p["implied"] for p in parts if "implied" in p}
    direction = next(iter(directions), None) or (implied.pop() if magnitude and not synced - {False} else None)
    if synced:
        claim = synced.pop()
    elif direction or magnitude:
        claim = False
    elif magnitude == 0:
        claim = True  # a stated zero offset is synchrony
    else:
        return dict(_UNREAD_SYNC)
    if claim:  # "synchronized" with a direction or an offset: two claims
        return dict(_UNREAD_SYNC) if direction or magnitude else {"synced": True, "direction": "none",
                                                                   "offset_s": 0.0}
    if magnitude == 0:
        return dict(_UNREAD_SYNC)  # "not synchronized", offset 0
    sign = {"delay": 1.0, "early": -1.0}.get(direction)
    return {"synced": False, "direction": direction or "none",
            "offset_s": None if sign is None or magnitude is None else sign * magnitude}


def _class_part(dimension: str, key: str, value: object) -> str | None:
    """The class one existence or consistency key gives (None: unreadable): a flag ("sound_present": false, "match":
    "no, ..."), a class label ("muted", "mismatch") or a value the rules read ("audio": "a dog barking"); a flag and
    the rules' reading of its sentence must agree."""
    labels = _STATE_LABELS if dimension == "existence" else _MATCH_LABELS
    flagged = (_PRESENT_KEYS | _SILENT_KEYS) if dimension == "existence" else (_MATCH_KEYS | _MISMATCH_KEYS)
    yes = ("audio_described" if key in _PRESENT_KEYS else "muted") if dimension == "existence" else (
        "match" if key in _MATCH_KEYS else "mismatch")
    no = {"audio_described": "muted", "muted": "audio_described", "match": "mismatch", "mismatch": "match"}[yes]
    flag = _flag(value) if key in flagged else None
    read = _read_existence if dimension == "existence" else _read_consistency
    reading = _text_reading(read, value)
    # a class label names the class under a class key ("audio_state": "muted"), not under a flag ("silence": "none")
    label = labels.get(re.sub(r"[\s_-]+", " ", value.strip(" .!").lower())) if isinstance(value, str) and (
        key not in flagged or dimension == "consistency") else None
    got = {None if flag is None else (yes if flag else no), label,
           reading and reading["audio_state" if dimension == "existence" else "match"]} - {None, "none"}
    if flag is not None and got and got != {yes if flag else no}:
        return None  # "match": "yes, but the birds are out of place"
    return got.pop() if len(got) == 1 else None


def _structured(dimension: str, response: str) -> dict | None:
    """The fields of a structured answer (JSON or key-value lines) with a known key of ``dimension`` (all None when
    they contradict each other or the prose around them), None for an answer with no known key."""
    text = prepare(response)
    found, rest = _json_pairs(text)
    pairs = [(k, v) for k, v in found if k in _KEYS[dimension]]
    # the other string values of the object are prose beside the fields ("reason": "the birds are out of place")
    rest = "\n".join([rest, *(f"{v.strip().rstrip('.')}." for k, v in found
                               if k not in _KEYS[dimension] and isinstance(v, str) and v.strip())])
    if not pairs:
        # a key-value line whose sentence cannot be read as a field is prose ("In sync: the thud lands with the
        # ball"); a short one ("Synchronized: partially") or one whose yes / no its sentence contradicts
        # ("Synchronized: No, it is perfectly in sync") is an unreadable field
        lines = _key_lines(text, _KEYS[dimension])
        prose = {line for k, v, line in lines if len(v.split()) >= 2 and _flag(v) is None and (
            _sync_part(k, v) is _UNREADABLE if dimension == "sync" else _class_part(dimension, k, v) is None)}
        pairs = [(k, v) for k, v, line in lines if line not in prose]
        rest = "\n".join(line for line in text.splitlines() if line in prose or line not in {x[2] for x in lines})
    if not pairs:
        return None
    if dimension == "sync":
        fields = _structured_sync(pairs)
    else:
        classes = {_class_part(dimension, k, v) for k, v in pairs}
        field = "audio_state" if dimension == "existence" else "match"
        fields = {field: classes.pop() if len(classes) == 1 else None}
    if unread(fields) or not rest.strip() or is_noise(rest):
        return fields
    prose = _final_reading({"sync": _read_sync, "existence": _read_existence,
                            "consistency": lambda t: _read_consistency(t, default_match=False)}[dimension], rest)
    return dict(_UNREAD_FIELDS[dimension]) if _contradicts(dimension, prose, fields) else fields


_UNREAD_FIELDS = {"sync": _UNREAD_SYNC, "existence": {"audio_state": None}, "consistency": {"match": None}}


def _contradicts(dimension: str, prose: dict, fields: dict) -> bool:
    """The prose beside a structured answer claims otherwise: another sync claim or direction, a sound or a silence
    the fields do not give, a match or a mismatch they do not give (a scene or a sound described beside them claims
    nothing: "Audio: birdsong\nMatch: no")."""
    if dimension == "sync":
        if prose["synced"] is None:
            return False
        return prose["synced"] != fields["synced"] or (
            prose["direction"] in ("delay", "early") and prose["direction"] != fields["direction"])
    field = "audio_state" if dimension == "existence" else "match"
    return prose[field] not in (None, "visual_only", "none", fields[field])


def _structured_or_final(dimension: str, read, response: str) -> dict:
    """A structured answer's fields (``_structured``), else the rules' reading of the final commitment."""
    if is_noise(response):
        return _unread(read(""))
    structured = _structured(dimension, response)
    return dict(structured) if structured is not None else _final_reading(read, response)


EXTRACTORS = {"sync": extract_sync, "existence": extract_existence, "consistency": extract_consistency}


def extract(dimension: str, response: str) -> dict:
    """Structured fields of one response to the question of ``dimension``; a reasoning trace (``<think>...</think>``,
    :func:`~omniaudit.runners.reasoning.split_reasoning`) is never read, and a reply cut off inside one has none."""
    from omniaudit.runners.reasoning import split_reasoning

    split = split_reasoning("" if response is None else str(response))
    return EXTRACTORS[dimension]("" if split.cut else split.answer)


# LLM extraction (Thud appendix G.3: a judge turns each free-form answer into a structured prediction). The judge sees
# only the answer and the question it answered, never the target. The options are quoted in the prompt: one of them
# holds a comma.
LLM_PROMPTS = {
    "sync": ("A model was asked whether the sound of a video is synchronized with its pictures. Its answer:\n"
             "\"{response}\"\nWhat does the answer claim? Answer with exactly one of: {options}."),
    "existence": ("A model was asked: \"Describe the audio you hear in this video.\" Its answer:\n\"{response}\"\n"
                  "Does it describe audio content, report silence, or only describe the pictures? Answer with exactly "
                  "one of: {options}."),
    "consistency": ("A model was asked: \"Describe what you see in the video and what you hear in the audio.\" Its "
                    "answer:\n\"{response}\"\nDoes it treat the sound as a natural match for the pictures? Answer "
                    "with exactly one of: {options}."),
}
# the first two options of each list stay first and second (the scripted always-a / always-b judges pick by place)
OUT_OF_SYNC = "out of sync, direction unknown"
LLM_OPTIONS = {"sync": ["synchronized", "audio delayed", "audio early", OUT_OF_SYNC, "unclear"],
               "existence": ["audio_described", "muted", "visual_only"],
               "consistency": ["match", "mismatch", "none"]}
# other spellings of an option in an extractor's reply (matched after "_" / "-" become spaces, lower case)
_OPTION_ALIASES = {
    "sync": {"synchronised": "synchronized", "in sync": "synchronized", "synced": "synchronized",
             "delayed": "audio delayed", "audio is delayed": "audio delayed", "audio late": "audio delayed",
             "early": "audio early", "audio is early": "audio early", "audio ahead": "audio early",
             "out of sync": OUT_OF_SYNC, "not synchronized": OUT_OF_SYNC, "not synchronised": OUT_OF_SYNC,
             "direction unknown": OUT_OF_SYNC, "out of sync direction unknown": OUT_OF_SYNC},
    "existence": {"described": "audio_described", "silent": "muted", "silence": "muted", "visual": "visual_only"},
    "consistency": {"matches": "match", "mismatched": "mismatch", "no judgement": "none"},
}
# the keys a JSON reply may put its label under: the dimension, its field, or a generic one
_JSON_KEYS = {"sync": ("sync", "synced", "synchronization"), "existence": ("existence", "audio_state"),
              "consistency": ("consistency", "match")}
_GENERIC_KEYS = ("answer", "label", "class", "classification", "category", "prediction", "result", "verdict",
                 "choice", "output", "final_answer")
_REPLY_CUE = re.compile(r"\b(?:final answer|answer|label|classification|class|category|verdict|prediction|choice)"
                        r"(?:\s+(?:is|would be|=))?\s*[:=\-]?\s*$")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[_\-]+", " ", text.lower())).strip(" .,:;!\"'`*")


def _spellings(dimension: str) -> dict[str, str]:
    """Normalised spelling -> option: the options and their aliases."""
    return {**{_norm(o): o for o in LLM_OPTIONS[dimension]},
            **{_norm(a): o for a, o in _OPTION_ALIASES[dimension].items()}}


def _option_named(dimension: str, text: str) -> str | None:
    """The option ``text`` is, as a whole (an option or one of its spellings), else None."""
    return _spellings(dimension).get(_norm(text))


def _json_labels(dimension: str, text: str) -> set[str]:
    """The options JSON objects in the reply give: ``{"match": "mismatch"}``, ``{"answer": "muted"}``, for sync also
    ``{"synced": false, "direction": "delay"}``."""
    import json

    found, decoder = set(), json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text[m.start():])
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        obj = {str(k).lower(): v for k, v in obj.items()}
        if dimension == "sync" and isinstance(obj.get("synced"), bool):
            direction = str(obj.get("direction") or "").lower()
            found.add("synchronized" if obj["synced"] else {"delay": "audio delayed", "delayed": "audio delayed",
                                                            "early": "audio early"}.get(direction, OUT_OF_SYNC))
            continue
        for key in (*_JSON_KEYS[dimension], *_GENERIC_KEYS):
            if isinstance(obj.get(key), str) and _option_named(dimension, obj[key]):
                found.add(_option_named(dimension, obj[key]))
                break
    return found


def read_extractor_reply(dimension: str, raw: str | None) -> str | None:
    """The option of ``LLM_OPTIONS[dimension]`` an extractor's reply names, or None (noise, none, or two).

    Explicit forms, all of which must agree: a JSON object (``{"match": "mismatch"}``, ``{"answer": "muted"}``), a
    quoted option (``"audio delayed"``, ``**muted**``), a cue ("The answer is: audio delayed."), a line that is only
    the option (the last line of a reasoned reply). Without any, the one option the reply mentions (not negated:
    "not a match" names nothing). Disagreeing forms, or several options mentioned, name none: a chatty reply is
    read, a torn one is not guessed.
    """
    text = prepare(raw).strip()
    if not text or is_noise(text):
        return None
    labels = _json_labels(dimension, text)
    text = re.sub(r"\{[^{}]*\}", " ", text)
    for m in re.finditer(r"\"([^\"\n]{1,40})\"|'([^'\n]{1,40})'|`([^`\n]{1,40})`|\*\*([^*\n]{1,40})\*\*", text):
        label = _option_named(dimension, next(g for g in m.groups() if g is not None))
        labels |= {label} if label else set()
    for line in text.splitlines():  # a line that is only an option (after a cue such as "Final answer:")
        label = _option_named(dimension, re.sub(r"^.*\b(?:final answer|answer|label|classification|verdict)"
                                                r"(?:\s+is)?\s*[:=\-]\s*", "", line, flags=re.I))
        labels |= {label} if label else set()
    low = _norm(text.replace("\n", " "))
    named = _spellings(dimension)
    options = {_norm(o) for o in LLM_OPTIONS[dimension]}
    mentioned = set()
    for m in re.finditer(r"(?<!\w)(" + "|".join(re.escape(k) for k in sorted(named, key=len, reverse=True)) +
                         r")(?!\w)", low):
        if _REPLY_CUE.search(low[:m.start()]):  # "the answer is: audio delayed", "Answer: early"
            labels.add(named[m.group(1)])
        # in prose, an option's own words or a phrase ("out of sync"), not a loose word ("visual", "early")
        loose = m.group(1) not in options and " " not in m.group(1)
        if not loose and not re.search(r"(?:\b(?:not|no|never)|n't)\s+(?:(?:a|an|the|quite|really)\s+)?$",
                                       low[:m.start()]):
            mentioned.add(named[m.group(1)])
    if labels:
        return labels.pop() if len(labels) == 1 else None
    return mentioned.pop() if len(mentioned) == 1 else None


def llm_fields(dimension: str, label: str | None, response: str) -> dict:
    """Structured fields from the judge's label (None: unparseable); the offset magnitude still comes from the text.
    "out of sync, direction unknown" gives the fields the rules give a bare "not synchronized" (direction none, no
    offset); "unclear" gives none."""
    if label is None:
        return {}
    if dimension == "sync":
        if label in ("synchronized", "unclear"):
            return {"synced": True, "direction": "none", "offset_s": 0.0} if label == "synchronized" else {}
        if label == OUT_OF_SYNC:
            return {"synced": False, "direction": "none", "offset_s": None}
        direction = "delay" if label == "audio delayed" else "early"
        magnitude = _offset(_clean(english(response)))
        offset = None if magnitude is None else (magnitude if direction == "delay" else -magnitude)
        return {"synced": False, "direction": direction, "offset_s": offset}
    if dimension == "existence":
        return {"audio_state": label}
    return {"match": label}


def unread(fields: dict) -> bool:
    """No field read: the answers a hybrid reading (rules first) would hand to an LLM extractor."""
    return all(v is None for v in fields.values())


def llm_extract(rows: list[tuple[str, str, str]], judge: str, **judge_options) -> dict[str, dict]:
    """``(id, dimension, response)`` -> structured fields per id, through any ``omniaudit judge`` SPEC. A noise
    answer (``is_noise``) is not sent: its fields are ``{}``. The judge's reply is read by ``read_extractor_reply``."""
    from omniaudit.runners import JudgeItem, make_judge

    asked = [(i, d, r) for i, d, r in rows if not is_noise(r)]
    items = [JudgeItem(id=i, prompt=LLM_PROMPTS[d].format(response=r, options=", ".join(
        f'"{o}"' for o in LLM_OPTIONS[d])), options=LLM_OPTIONS[d]) for i, d, r in asked]
    raws = make_judge(judge, **judge_options).answer(items) if items else []
    out = {i: {} for i, _, _ in rows}
    out.update({i: llm_fields(d, read_extractor_reply(d, raw), r) for (i, d, r), raw in zip(asked, raws, strict=True)})
    return out
