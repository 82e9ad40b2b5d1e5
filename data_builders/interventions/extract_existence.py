"""The interventions' answer reader on the existence question (:mod:`~.extract`): a sound described
(``audio_described``), a whole-track silence claimed (``muted``, unless it names an exception) or only the scene
described (``visual_only``); a hypothetical sound or a quiet place is no description."""

from __future__ import annotations

import re

from omniaudit.data_builders.interventions.extract_phrases import (
    TOPIC,
    clean,
    content_words,
    describes_scene,
    negated_claims,
)

SOUND_GENERIC = (r"hear|hears|heard|hearing|audible|audibly|sounds?|noises?|audio|music|musical|melody|melodies|"
                 r"songs?|"
                 r"voices?|vocals?|speech|speaking|spoken|speaks?|talking|talks?|narrat\w*|dialogues?|tones?|"
                 r"hum|hums|humming|buzz\w*|beep\w*|ringing|rings|chimes?|soundtrack|ambien\w*")
SOUND_EVENT = (r"thuds?|bangs?|banging|crash\w*|clang\w*|clank\w*|knock\w*|bounc\w*|shatter\w*|footsteps?|"
               r"laugh\w*|scream\w*|bark\w*|meow\w*|chirp\w*|tweet\w*|honk\w*|roar\w*|growl\w*|whistl\w*|"
               r"siren\w*|engines?|rumbl\w*|crackl\w*|sizzl\w*|squeak\w*|squeal\w*|creak\w*|thump\w*|click\w*|"
               r"clap\w*|applau\w*|cheer\w*|sings?|singing|sang|drums?|drumming|guitars?|piano|beats?|chatter\w*|"
               r"murmur\w*|whisper\w*|shout\w*|yell\w*|cries|crying|sobs?|sobbing|hiss\w*|pops|popping|"
               r"snaps?|snapping|rustl\w*|splash\w*|drip\w*|ticking|ticks|bells?|alarms?|purr\w*|howl\w*|"
               r"quack\w*|neigh\w*|thunder\w*|rain|wind|static|whoosh\w*|slam\w*|smash\w*|boom\w*|"
               r"explosions?|impacts?|gurgl\w*|babbl\w*|hammering|clatter\w*|jingl\w*|roaring|wails?|wailing|"
               r"coughs?|coughing|sneez\w*|breathing|panting|barking|mooing|clink\w*|rattl\w*|thunk\w*|"
               r"skid\w*|screech\w*|grunt\w*|moan\w*|groan\w*|snor\w*|chant\w*|hymn\w*|bird ?song|birds")
_GENERIC = re.compile(rf"\b(?:{SOUND_GENERIC})\b")
_EVENT = re.compile(rf"\b(?:{SOUND_EVENT})\b")
# someone speaking can be seen as well as heard: in a picture description ("the video shows a man talking", "I see a
# woman speaking") it is, like a sound event, no sound described; "I hear a man talking" and "his voice" still are
_SPEAKING = re.compile(r"\b(?:speaking|speaks?|talking|talks?)\b")
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


def weak_silence(text: str) -> bool:
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
    rf"(?:\w+\s+){{0,3}}?(?:{SOUND_GENERIC}|{SOUND_EVENT})\b"
    rf"[^.;:!?]*?(?=[.;:!?]|,?\s+\b(?:but|only|just|except|although|though|however|while|whereas|yet)\b|$)")
# what a sound would be, not what is heard: "would normally make a thud", "you'd expect a bang"
_HYPOTHETICAL = re.compile(
    r"(?:\b(?:would|should)|'d)\s+(?:normally |usually |typically |expect to |otherwise )?(?:make|produce|create|"
    r"cause|expect|hear|be heard|sound|accompany|be|have)\b[^.;!?]*|\b(?:expected|expect|expects|expecting)\b[^.;!?]*")


def _sound_described(text: str) -> bool:
    """The text describes a sound: a hearing/audio word, or a sound event (someone speaking) outside a picture
    description."""
    if _VISUAL_FRAME.search(text):
        return bool(_GENERIC.search(_SPEAKING.sub(" ", text)))
    return bool(_GENERIC.search(text) or _EVENT.search(text))


def silence_claim(text: str) -> bool | None:
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


def sound_claim(text: str) -> bool:
    """A sound described outside a negation: a sound named beyond the topic words ("music", "a thud", "wind noise"),
    or a claim that there is sound ("I hear a sound"); "Audio", "Sound sound sound" or noise + "Audio" is neither."""
    described = _NEGATED_SOUND.sub(" ", text)
    if not _sound_described(described):
        return False
    specific = " ".join(w for w in re.findall(r"[a-z]+", described) if w not in TOPIC)
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
    specific = " ".join(w for w in re.findall(r"[a-z]+", rest) if w not in TOPIC)
    return bool(_HEARING.search(rest) or _AUDIBLE.search(specific))


def read_existence(text: str) -> dict:
    # "it's not the case that the video is silent" names no sound: the negated clause is not read
    text = negated_claims(_HYPOTHETICAL.sub(" ", clean(text)), lambda _: None, lambda _: "")
    silence = silence_claim(text)
    if silence:
        # silence and a heard sound, no exception between them: two incompatible readings, none is read
        return {"audio_state": None if _heard_besides_silence(text) else "muted"}
    if silence is False or sound_claim(text):
        return {"audio_state": "audio_described"}
    if weak_silence(text):
        return {"audio_state": "muted"}
    if content_words(text) < 3 or not describes_scene(text):
        return {"audio_state": None}  # a hedge, a refusal, an empty or off-topic answer: unparseable, not a dodge
    return {"audio_state": "visual_only"}
