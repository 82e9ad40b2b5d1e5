"""Rule-based extraction of structured answers from free-form responses to the intervention questions.

The paper parses free-form answers with an LLM judge (Thud appendix G.3); this is the offline, deterministic
fallback. It reads only the model's response, never the target, and returns ``None`` for a field it cannot decide
(counted as unparseable, never guessed): an empty, hedged ("hard to tell whether it is in sync") or off-topic answer
gets no class. Fields:

- sync: ``synced`` (bool), ``direction`` (delay | early | none), ``offset_s`` (signed: + = audio delayed);
- existence: ``audio_state`` (muted | audio_described | visual_only), as the paper's judge classes;
- consistency: ``match`` (match | mismatch | none: no judgement, e.g. a visual-only answer).

How phrasings are read (each rule is covered by the labelled set in ``omniaudit.evaluation.extract_labelled``):

- negations are claims: "no noticeable delay" says synchronized, "no mismatch" says match, "no music, only wind"
  describes wind; a whole-track silence claim ("the clip is silent") wins unless it names an exception ("except a
  faint hum"); a hypothetical sound ("would normally make a thud") is no description;
- direction follows the grammatical subject: "the audio lags" is a delay, "the video lags behind the audio" means the
  audio is early; "after"/"before" count only with a stated subject ("the thud is heard after the impact");
- the offset is the stated one ("by about 2 s", "200 ms"), else the difference of an audio and a visual timestamp
  ("the fall occurs at 5.0 s, the impact sound is heard at 3.1 s": early by 1.9 s), which also gives the direction;
- text inside questions and "whether/if" clauses is not a claim, so "I can't tell whether it is synchronized" stays
  unparsed; a bare "Yes"/"No" answers the sync question (synchronized / not synchronized, no direction).
"""

from __future__ import annotations

import re

NUMBER_WORDS = {"half a": 0.5, "a half": 0.5, "one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4,
                "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_SECONDS = r"(?:s|sec|secs|second|seconds|ms|msec|millisecond|milliseconds)\b"
# "2 s", "1.5-second", "200 ms", "half a second" (a number word needs a space or hyphen: "as" is no "a s")
_NUMBER = re.compile(rf"(?:(\d+(?:\.\d+)?|\.\d+)\s*-?\s*|\b({'|'.join(sorted(NUMBER_WORDS, key=len, reverse=True))})"
                     rf"(?:\s+|\s*-\s*))({_SECONDS})")
_APPROX = r"(?:about|roughly|around|approximately|nearly|almost|some|maybe|perhaps|~|≈)?\s*"
_BY = re.compile(rf"\b(?:by|of)\s+{_APPROX}$")
_AT = re.compile(rf"\bat\s+{_APPROX}$")

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
_REFUSAL = re.compile(r"\b(?:sorry|as an ai|i (?:can't|cannot|can not) (?:help|assist|answer)|"
                      r"(?:can't|cannot|can not|unable to|not able to|don't have (?:the )?ability to) (?:access|"
                      r"process|analy[sz]e|listen to|play|perceive) (?:the |any |this )?"
                      r"(?:audio|sound|video|clip)s?)\b")


def _clean(response: str) -> str:
    """Lower-cased answer without what is no claim: questions, refusals ("I cannot access the audio"), "whether/if"
    clauses and hedged clauses ("I'm not sure what the audio contains"; a hedge ends at a comma or "but")."""
    text = response.translate(_QUOTES).lower()
    text = " ".join(s for s in _SENTENCES.split(text) if not s.rstrip().endswith("?") and not _REFUSAL.search(s))
    return _HEDGED_CLAUSE.sub(" ", _WHETHER.sub(" ", text))


def _content_words(text: str) -> int:
    """Words of a cleaned answer: fewer than three is no answer to classify."""
    return len(re.findall(r"[a-z]{2,}", text))


def _seconds(match: re.Match) -> float:
    digits, word, unit = match.group(1), match.group(2), match.group(3)
    value = float(NUMBER_WORDS[word]) if word else float(digits)
    return value / 1000 if unit.startswith(("ms", "msec", "milli")) else value


# ------------------------------------------------------------------------------------------------------- sync
_DIRECTION_WORDS = (r"(?:delayed|delays?|lags?|lagged|lagging|late|latency|offsets?|desync\w*|early|ahead|behind|"
                    r"gaps?|mismatch\w*|discrepanc\w*|sync(?:hroni[sz]ation)? (?:issues?|problems?|errors?)|"
                    r"timing (?:issues?|problems?|errors?|mismatch\w*|differences?))")
# "no delay", "not delayed", "neither early nor late", "doesn't lag behind": negated, so a claim of synchrony. The
# words between the negation and the cue may not be sync words ("not synchronized, it lags" is no negated lag).
_NEGATED_OFFSET = re.compile(
    rf"(?:\b(?:no|without|not any|zero|never|neither|nor|not|hardly any|barely any)|n't)\s+"
    rf"(?:(?!(?:synchroni|sync|synced|aligned|in\b|out\b))\w+\s+){{0,2}}?{_DIRECTION_WORDS}(?:\s+(?:behind|ahead))?\b")
_DOUBLE_NEGATION = re.compile(r"\b(?:not|n't|never|no longer)\s+(?:\w+\s+){0,2}?out of (?:sync|synch|time)\b|"
                              r"n't\s+(?:\w+\s+){0,2}?out of (?:sync|synch|time)\b")
_NOT_SYNCED = re.compile(
    r"(?:\b(?:not|isn't|is not|aren't|are not|never|no longer)|n't)\s+(?:\w+\s+){0,2}?"
    r"(?:synchroni[sz]ed|in (?:\w+ )?sync|aligned|synced|in time|matched in time|simultaneous)\b"
    r"|\bout of (?:sync|synch|time)\b|\b(?:desynchroni[sz]ed|desynchroni[sz]ation|desynced|desync|misaligned|"
    r"unsynchroni[sz]ed|asynchronous|mismatched timing|timing mismatch|time offset|temporal offset|"
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
                     r"into)\s+(?:the |its |this |that )?$")


def _subject(before: str) -> str | None:
    """audio | visual: the last audio or visual noun before a cue in its clause that is not the object of a
    preposition ("the audio is out of sync with the video, coming in early": the audio), None: no stated subject."""
    def nouns(pattern: re.Pattern) -> list[int]:
        return [m.end() for m in pattern.finditer(before) if not _OBJECT.search(before[:m.start()])]

    audio, visual = nouns(_AUDIO_SUBJECT), nouns(_VISUAL_SUBJECT)
    if not audio and not visual:
        return None
    return "audio" if (audio[-1] if audio else -1) > (visual[-1] if visual else -1) else "visual"


def _directions(text: str) -> set[str]:
    """The audio directions the text states (delay / early); a cue whose subject is the picture counts reversed."""
    found = set()
    for _, clause in _clauses(text):
        for m in _CUE.finditer(clause):
            subject = _subject(clause[:m.start()])
            if (m.group(3) or m.group(4)) and subject is None:
                continue  # "after watching", "first," — no stated subject, no direction
            delay = bool(m.group(1) or m.group(3))
            found.add("delay" if delay == (subject != "visual") else "early")
    return found


def _timestamp_offset(text: str) -> float | None:
    """Audio time minus visual time when the answer states exactly one of each ("heard at 3.1 s", "occurs at 5 s")."""
    audio, visual = [], []
    for _, clause in _clauses(re.sub(r",", ";", text)):
        for m in _TIMESTAMP.finditer(clause):
            (audio if _AUDIO_SUBJECT.search(clause) else visual).append(float(m.group(1)))
    return audio[0] - visual[0] if len(audio) == 1 and len(visual) == 1 else None


def _offset(text: str) -> float | None:
    """The offset magnitude: a stated "by <n> s" if any, else the gap between an audio and a visual timestamp, else
    the first "<n> s" that is not a timestamp ("2 seconds late", "a 200 ms delay")."""
    numbers = list(_NUMBER.finditer(text))
    by = [m for m in numbers if _BY.search(text[max(0, m.start() - 24):m.start()])]
    if by:
        return _seconds(by[0])
    pair = _timestamp_offset(text)
    if pair is not None:
        return abs(pair)
    bare = [m for m in numbers if not _AT.search(text[max(0, m.start() - 24):m.start()])
            and not re.match(r"\s*(?:-\s*)?(?:long|clip|video|into)\b", text[m.end():])]
    return _seconds(bare[0]) if bare else None


def extract_sync(response: str) -> dict:
    text = _DOUBLE_NEGATION.sub(" in sync ", _clean(response))
    negated = bool(_NEGATED_OFFSET.search(text))  # "no noticeable delay": a claim of synchrony
    text = _NEGATED_OFFSET.sub(" ", text)
    not_synced = bool(_NOT_SYNCED.search(text))
    synced_claim = negated or bool(_SYNCED.search(_NOT_SYNCED.sub(" ", text)))
    directions = _directions(_NOT_SYNCED.sub(" ", text))
    # an explicit "not synchronized" wins; otherwise a "synchronized" claim outranks stray direction words
    if not_synced or (directions and not synced_claim):
        direction = directions.pop() if len(directions) == 1 else "none"
        pair = _timestamp_offset(text)
        if direction == "none" and not directions and pair is not None and abs(pair) > 1e-9:
            direction = "delay" if pair > 0 else "early"  # no cue word: the timestamps give the direction
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
    return {"synced": None, "direction": None, "offset_s": None}


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
_VISUAL_FRAME = re.compile(r"\b(?:(?:the |this )?(?:video|clip|footage|scene|image|frame)s? (?:shows?|depicts?|"
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
    r"\b(?:audio|sound|track|soundtrack) (?:is|seems|appears)(?: to be)? empty\b|\bhear(?:d)? nothing\b|"
    r"(?:\b(?:can't|cannot|can not|couldn't|could not|don't|do not|didn't|did not|unable to)|n't)\s+hear "
    r"(?:anything|a thing|(?:any |the )?(?:sound|audio|noise)s?\b)"
    r"|\b(?:complete|total|absolute|pure|dead|utter) silence\b|\bsilent (?:video|clip|film|footage|track)\b"
    r"|\bno audio track\b|\bwithout (?:any )?(?:sound|audio)\b|\bsilent throughout\b|\b(?:there is|only|just) "
    r"silence\b|\bsilence throughout\b|\b(?:has|have|contains?) no (?:sound|audio)\b")
_WEAK_SILENCE = re.compile(r"\b(?:silent|silence|muted|mute|soundless|quiet)\b")
# "except a faint hum", "only the wind": an exception to a silence claim; after a weak one ("but", "although") only
# a hearing word counts ("silent, although the ball bounces" still reports silence)
_EXCEPT = re.compile(r"\b(?:(except|apart from|other than|besides|aside from|save for|but for|only|just)|but|although|"
                     r"though|however|yet)\b")
# "no music", "don't hear any speech", "without voices": that sound is absent, nothing is said about the others
_NEGATED_SOUND = re.compile(
    rf"(?:\b(?:no|not any|without(?: any)?|neither|nor|(?:can't|cannot|can not|couldn't|could not|don't|do not|"
    rf"didn't|did not) hear(?: any)?)|n't hear(?: any)?)\s+(?:\w+\s+){{0,3}}?(?:{_SOUND_GENERIC}|{_SOUND_EVENT})\b"
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


def extract_existence(response: str) -> dict:
    text = _HYPOTHETICAL.sub(" ", _clean(response))
    silence = _silence(text)
    if silence:
        return {"audio_state": "muted"}
    if silence is False or _sound_described(_NEGATED_SOUND.sub(" ", text)):
        return {"audio_state": "audio_described"}
    if _WEAK_SILENCE.search(text):
        return {"audio_state": "muted"}
    if _content_words(text) < 3:
        return {"audio_state": None}  # a hedge, a refusal or an empty answer: unparseable, not a visual-only dodge
    return {"audio_state": "visual_only"}


# ------------------------------------------------------------------------------------------------ consistency
_MISMATCH_WORDS = (r"mismatch\w*|inconsisten\w*|unrelated|out of place|incongru\w*|dubbed|discrepan\w*|"
                   r"incompatible|implausible|unnatural|at odds|contradict\w*|conflict\w*|disconnect\w*|"
                   r"does not belong|doesn't belong|overlaid|swapped|replaced")
# "no mismatch", "not inconsistent", "nothing out of place": negated, so a claim of a match
_NEGATED_MISMATCH = re.compile(
    rf"(?:\b(?:no|not|never|without(?: any)?|not any|nothing|hardly|barely|isn't|is not|aren't|are not|doesn't "
    rf"seem|does not seem)|n't)\s+(?:(?!(?:match|fit|correspond|belong|consistent|related))\w+\s+){{0,2}}?"
    rf"(?:{_MISMATCH_WORDS})\b")
_MISMATCH = re.compile(
    rf"(?:\b(?:not|never|hardly|barely|no longer)|n't)\s+(?:\w+\s+){{0,2}}?(?:match\w*|fit\w*|correspond\w*|"
    rf"belong\w*|go(?:es)? with|go together|align\w* with|consistent|related|compatible|plausible|make sense)\b"
    rf"|\b(?:{_MISMATCH_WORDS}|makes no sense|(?:to|from|of|for) (?:a |an |another |some )?(?:different|another|"
    rf"other|separate|unrelated) "
    rf"(?:scene|source|video|clip|recording|event|context)|(?:wrong|unexpected|strange|odd|mismatched) "
    rf"(?:sound|audio|soundtrack)|(?:sound|audio|soundtrack) (?:is|seems|sounds|feels) (?:\w+ )?(?:wrong|"
    rf"incorrect|inappropriate|out of context))\b")
_MATCH = re.compile(r"\b(?:match(?:es|ed|ing)?|consistent|corresponds?|corresponding|fits|fitting|in line with|"
                    r"as expected|synchroni[sz]ed with|goes with|go together|aligns? with|appropriate|plausible|"
                    r"natural(?:ly)?|belongs?)\b")


def extract_consistency(response: str) -> dict:
    text = _clean(response)
    negated = bool(_NEGATED_MISMATCH.search(text))
    text = _NEGATED_MISMATCH.sub(" ", text)
    if _MISMATCH.search(text):
        return {"match": "mismatch"}
    if negated or _MATCH.search(text):
        return {"match": "match"}
    if _silence(text) is None and _sound_described(_NEGATED_SOUND.sub(" ", text)):
        return {"match": "match"}  # describing the sound without flagging it treats it as a natural match
    if _content_words(text) < 3:
        return {"match": None}  # a hedge, a refusal or an empty answer: unparseable
    return {"match": "none"}  # a judgement-free answer: visual-only, or reporting silence


EXTRACTORS = {"sync": extract_sync, "existence": extract_existence, "consistency": extract_consistency}


def extract(dimension: str, response: str) -> dict:
    """Structured fields of one response to the question of ``dimension``."""
    return EXTRACTORS[dimension](response)


# LLM extraction (Thud appendix G.3: a judge turns each free-form answer into a structured prediction). The judge sees
# only the answer and the question it answered, never the target.
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
LLM_OPTIONS = {"sync": ["synchronized", "audio delayed", "audio early", "unclear"],
               "existence": ["audio_described", "muted", "visual_only"],
               "consistency": ["match", "mismatch", "none"]}


def llm_fields(dimension: str, label: str | None, response: str) -> dict:
    """Structured fields from the judge's label (None: unparseable); the offset magnitude still comes from the text."""
    if label is None:
        return {}
    if dimension == "sync":
        if label in ("synchronized", "unclear"):
            return {"synced": True, "direction": "none", "offset_s": 0.0} if label == "synchronized" else {}
        direction = "delay" if label == "audio delayed" else "early"
        magnitude = _offset(_clean(response))
        offset = None if magnitude is None else (magnitude if direction == "delay" else -magnitude)
        return {"synced": False, "direction": direction, "offset_s": offset}
    if dimension == "existence":
        return {"audio_state": label}
    return {"match": label}


def llm_extract(rows: list[tuple[str, str, str]], judge: str, **judge_options) -> dict[str, dict]:
    """``(id, dimension, response)`` -> structured fields per id, through any ``omniaudit judge`` SPEC."""
    from omniaudit.evaluation.judges import JudgeItem, make_judge, parse_answer

    items = [JudgeItem(id=i, prompt=LLM_PROMPTS[d].format(response=r, options=", ".join(LLM_OPTIONS[d])),
                       options=LLM_OPTIONS[d]) for i, d, r in rows]
    raws = make_judge(judge, **judge_options).answer(items) if items else []
    return {i: llm_fields(d, parse_answer(raw, LLM_OPTIONS[d]), r)
            for (i, d, r), raw in zip(rows, raws, strict=True)}
