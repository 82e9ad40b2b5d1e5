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
  audio is early; "after"/"before" count only with a stated subject ("the thud is heard after the impact");
- the offset is the stated one ("by about 2 s", "200 ms"), else the difference of an audio and a visual timestamp
  ("the fall occurs at 5.0 s, the impact sound is heard at 3.1 s": early by 1.9 s), which also gives the direction;
- text inside questions and "whether/if" clauses is not a claim, so "I can't tell whether it is synchronized" stays
  unparsed; a bare "Yes"/"No" answers the sync question (synchronized / not synchronized, no direction);
- a negated synchrony claim is a desynchrony claim ("does not line up", "doesn't coincide", "do not occur at the same
  time"), and alternatives are no claim ("synchronized or not", "early or delayed");
- what is not an answer stays unparsed: the question echoed back (a sentence in question order or an instruction:
  "Describe the audio you hear", "Answer 'synchronized' or ..."), a bare topic word ("Audio", "Sound", repeated or
  after tokenizer noise), gibberish and off-topic text. ``visual_only`` (existence) and ``none`` (consistency) need
  an answer that describes the scene (a picture frame such as "the video shows", or someone or something doing
  something: "a man rides a bike", "a dog running"), so "The capital of France is Paris." is no audio dodge;
- Spanish and Chinese answers are read through an English gloss of their sync, sound and scene phrases
  (``.extract_gloss``); a phrase the lexicon does not know is left untranslated, so such an
  answer stays unparsed rather than misread.
"""

from __future__ import annotations

import re

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


def _clean(response: str) -> str:
    """Lower-cased answer (Spanish and Chinese through the English gloss) without what is no claim: questions and the
    question echoed back, refusals ("I cannot access the audio"), "whether/if" clauses, alternatives ("synchronized
    or not") and hedged clauses ("I'm not sure what the audio contains"; a hedge ends at a comma or "but")."""
    text = english(response).translate(_QUOTES).lower()
    text = " ".join(s for s in _SENTENCES.split(text) if not s.rstrip().endswith("?")
                    and not s.lstrip().startswith("¿") and not _REFUSAL.search(s) and not _ECHO.search(s))
    return _ALTERNATIVES.sub(" ", _HEDGED_CLAUSE.sub(" ", _WHETHER.sub(" ", text)))


def _content_words(text: str) -> int:
    """Words of a cleaned answer: fewer than three is no answer to classify."""
    return len(re.findall(r"[a-z]{2,}", text))


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
            "performs|practices|sings|talks|speaks|laughs|cries|barks|kisses|stretches|rises|sinks|melts|burns")
# the answer describes the scene: a picture frame, or someone or something doing something ("a man rides a bike",
# "a dog running", "someone is cooking")
_SCENE = re.compile(
    rf"\b(?:(?:the |this )?(?:video|clip|footage|scene|image|frame|picture|camera)s? (?:shows?|depicts?|features?|"
    rf"captures?)|i (?:can )?see|we (?:can )?see|you (?:can )?see|can be seen|(?:is|are) seen|(?:is|are) shown|"
    rf"(?:is|are) visible|on[- ]screen|visually|{SCENE_MARK})\b"
    rf"|\b(?:a|an|the|two|three|four|some|several|many|one|someone|somebody|people|he|she|they|his|her|their)\s+"
    rf"(?:[a-z'-]+\s+){{0,4}}?(?:(?:is|are)\s+)?(?:{_ACTIONS}|(?!(?:{_ING_NOUNS})\b)[a-z]{{2,}}ing)\b")


def _describes_scene(text: str) -> bool:
    return bool(_SCENE.search(text))


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
# a negated synchrony claim ("does not line up", "doesn't coincide", "do not occur at the same time", "never match up
# in time") says the clip is desynchronized
_NOT_SYNCED = re.compile(
    r"(?:\b(?:not|isn't|is not|aren't|are not|never|no longer|hardly|barely)|n't)"
    r"(?!\s+(?:only|just|merely|doubt\w*|deny\w*|question\w*)\b)\s+(?:\w+\s+){0,3}?"
    r"(?:synchroni[sz]ed|in (?:\w+ )?(?:sync|step)|aligned|synced|in time|matched in time|simultaneous(?:ly)?|"
    r"(?:lines?|lined|lining) up|coincid\w*|match(?:es|ed)? up|(?:at|in) the same (?:time|moment|instant))\b"
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


# a claim that there is sound in the topic's words alone: "I hear a sound", "there is some noise", "the audio is loud"
_HEARING = re.compile(r"\b(?:i|we|you|one)\s+(?:can\s+|could\s+|do\s+)?(?:hear|heard)\b|"
                      r"\bthere\s+(?:is|are|was|were)\s+(?:\w+\s+){0,2}?(?:sound|sounds|audio|noise)s?\b|"
                      r"\b(?:audio|sound|soundtrack|track)s?\s+(?:is|are|was|were|seems|sounds|plays)\s+"
                      r"(?!silent|muted|mute|empty|absent|missing|off)\w+")


def _sound_claim(text: str) -> bool:
    """A sound described outside a negation: a sound named beyond the topic words ("music", "a thud", "wind noise"),
    or a claim that there is sound ("I hear a sound"); "Audio", "Sound sound sound" or noise + "Audio" is neither."""
    described = _NEGATED_SOUND.sub(" ", text)
    if not _sound_described(described):
        return False
    specific = " ".join(w for w in re.findall(r"[a-z]+", described) if w not in _TOPIC)
    return _sound_described(specific) or bool(_HEARING.search(described))


def extract_existence(response: str) -> dict:
    text = _HYPOTHETICAL.sub(" ", _clean(response))
    silence = _silence(text)
    if silence:
        return {"audio_state": "muted"}
    if silence is False or _sound_claim(text):
        return {"audio_state": "audio_described"}
    if _WEAK_SILENCE.search(text):
        return {"audio_state": "muted"}
    if _content_words(text) < 3 or not _describes_scene(text):
        return {"audio_state": None}  # a hedge, a refusal, an empty or off-topic answer: unparseable, not a dodge
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
    rf"belong\w*|go(?:es)? with|go together|align\w* with|consistent|related|compatible|plausible|make sense|"
    rf"(?:lines?|lined) up|coincid\w*)\b"
    rf"|\b(?:{_MISMATCH_WORDS}|makes no sense|(?:to|from|of|for) (?:a |an |another |some )?(?:different|another|"
    rf"other|separate|unrelated) "
    rf"(?:scene|source|video|clip|recording|event|context)|(?:wrong|unexpected|strange|odd|mismatched) "
    rf"(?:sound|audio|soundtrack)|(?:sound|audio|soundtrack) (?:is|seems|sounds|feels) (?:\w+ )?(?:wrong|"
    rf"incorrect|inappropriate|out of context))\b")
_MATCH = re.compile(r"\b(?:match(?:es|ed|ing)?|consistent|corresponds?|corresponding|fits|fitting|in line with|"
                    r"coincides?|as expected|synchroni[sz]ed with|goes with|go together|aligns? with|appropriate|"
                    r"plausible|natural(?:ly)?|belongs?)\b")


def extract_consistency(response: str) -> dict:
    text = _clean(response)
    negated = bool(_NEGATED_MISMATCH.search(text))
    text = _NEGATED_MISMATCH.sub(" ", text)
    if _MISMATCH.search(text):
        return {"match": "mismatch"}
    if negated or _MATCH.search(text):
        return {"match": "match"}
    silence = _silence(text)
    if silence is None and _sound_claim(text):
        return {"match": "match"}  # describing the sound without flagging it treats it as a natural match
    if _content_words(text) < 3 or not (silence or _WEAK_SILENCE.search(text) or _describes_scene(text)):
        return {"match": None}  # a hedge, a refusal, an empty or off-topic answer: unparseable
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
    from omniaudit.evaluation.runners import JudgeItem, make_judge, parse_answer

    items = [JudgeItem(id=i, prompt=LLM_PROMPTS[d].format(response=r, options=", ".join(LLM_OPTIONS[d])),
                       options=LLM_OPTIONS[d]) for i, d, r in rows]
    raws = make_judge(judge, **judge_options).answer(items) if items else []
    return {i: llm_fields(d, parse_answer(raw, LLM_OPTIONS[d]), r)
            for (i, d, r), raw in zip(rows, raws, strict=True)}
