"""The interventions' answer reader on the consistency question (:mod:`~.extract`): the audio matches the scene, or
it does not (mismatch words, incongruities, another source), or no judgement; split and negated verdicts."""

from __future__ import annotations

import re

from omniaudit.data_builders.interventions.extract_existence import (
    SOUND_EVENT,
    SOUND_GENERIC,
    silence_claim,
    sound_claim,
    weak_silence,
)
from omniaudit.data_builders.interventions.extract_phrases import (
    clean,
    content_words,
    describes_scene,
    drop_possibilities,
    negated_claims,
)

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
        r"compatible|plausible|make sense|(?:lines?|lined) up|coincid\w*|suit(?:s|ed)?)")
# "doesn't fit or match the scene": the negation covers both
_MISMATCH = re.compile(
    rf"(?:\b(?:not|never|hardly|barely|no longer)|n't)\s+(?:\w+\s+){{0,2}}?{_FIT}\b(?:,?\s+(?:or|nor)\s+{_FIT}\b)*"
    rf"|\b(?:{_MISMATCH_WORDS}|makes no sense|{_ANOTHER_SOURCE}|(?:wrong|unexpected|strange|odd|mismatched) "
    rf"(?:sound|audio|soundtrack)|(?:sound|audio|soundtrack) (?:is|seems|sounds|feels) (?:\w+ )?(?:wrong|"
    rf"incorrect|inappropriate|out of context))\b")
_INCONGRUOUS = re.compile(
    rf"\b{_ODD} (?:for|in|inside|given|considering|to (?:hear|have|find))\b"
    # a sound said to be odd: "birdsong in a kitchen is strange", "the music seems out of place"
    rf"|\b(?:{SOUND_GENERIC}|{SOUND_EVENT})\b[^.;:!?,]{{0,40}}?\b(?:is|are|was|were|seems|sounds|feels)(?: to be)? "
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
                    r"plausible|natural(?:ly)?|belongs?|(?:lines?|lined) up with|suits|suited (?:to|for)|"
                    r"makes sense)\b")
# a verdict word as an attribute of what is seen or heard is no verdict: "players in matching jerseys", "a natural
# landscape", "natural sounds" (of nature), "a consistent beat", "appropriate attire"; "a natural fit", "matching the
# action", "consistent with", "a fitting soundtrack" still are
_NOT_ATTRIBUTED = (r"fit|fits|match|matches|choice|pairing|combination|accompaniment|result|with|to|for|in|and|or|nor|"
                   r"given|here|there|overall|enough|throughout|as|but|so|at|on|the|this|that|these|those|what|a|an|"
                   r"its|his|her|their|each|every|it|them|both|is|are|was|were")
_ATTRIBUTE = re.compile(
    rf"\b(?:matching|consistent|corresponding|fitting|appropriate|plausible)\s+(?!(?:{_NOT_ATTRIBUTED}|sounds?|"
    rf"noises?|audio|soundtrack|music|ambien\w*)\b)[a-z]+|\bnatural\s+(?!(?:{_NOT_ATTRIBUTED})\b)[a-z]+")
# "partly matches, partly doesn't", "partially consistent, partially not", "matches the picture, but not the music":
# a split verdict, no reading
_PARTLY = re.compile(r"\b(?:partly|partially|in part)\b")
_BUT_NOT = re.compile(r"(?:,|\bbut|\bthough|\balthough)\s+not\s+(?:the|its|this|that|a|an|with|to)\b")
_ELLIPTIC_NOT = re.compile(r"(?:\b(?:does|do|did|is|are|was|were)\s+not|\b(?:doesn't|don't|didn't|isn't|aren't|"
                           r"wasn't|weren't)|\bnot)\s*(?=[.,;:!?]|$)")

# A sound described beside the scene states no verdict on their fit ("I see a red ball hit the floor, and I hear glass
# shattering": the reader abstains), unless the sound heard is named as the sound of what is seen: its source or its
# event is a word of the scene ("I see a ball bounce and I hear a bounce", "a man hammering a nail, and I hear the
# hammer hitting it", "I see a dog and hear a dog barking") or refers back to it ("a man speaks and I hear his
# voice", "the glass breaks and I hear it shatter"): the answer attributes the soundtrack to the picture, a match.
# Every sound heard must be so named ("I hear a bounce and glass shattering" abstains).
_HEARD = re.compile(r"\b(?:hears?|heard|hearing)\b|\b(?:audio|sound|soundtrack|track)s?\s+(?:is|are|was|were|has|have|"
                    r"contains?|features?|includes?|consists of)\b")
_HEARD_END = re.compile(r"[.;:!?,]|\s-\s|\b(?:but|while|whereas|although|though|however|which|that|when|whenever|as|"
                        r"because|so|then|each time|every time|after|before|from|in the|on the)\b")
_CONJUNCT = re.compile(r"\s+(?:and|plus|as well as|along with|together with|followed by)\s+")
# words before the sound's name: articles, amounts, qualities, "the sound of", "what sounds like"
_LEAD = {"a", "an", "the", "some", "any", "one", "two", "three", "four", "five", "several", "many", "multiple", "few",
         "various", "repeated", "single", "loud", "faint", "soft", "quiet", "distant", "clear", "clearly", "low",
         "high", "sharp", "dull", "metallic", "muffled", "rhythmic", "constant", "continuous", "occasional",
         "background", "brief", "short", "long", "sudden", "steady", "heavy", "light", "gentle", "deep", "little",
         "big", "small", "hollow", "crisp", "rapid", "slow", "also", "only", "just", "then", "now", "what", "sounds",
         "sound", "noise", "noises", "like", "of", "seems", "to", "be", "kind", "sort", "type", "audio",
         "distinct", "distinctly", "definitely", "can", "could", "is", "are", "there", "clip", "recording"}
_BACK = {"it", "its", "them", "their", "his", "her", "same"}
_SUBJECT = {"i", "we", "you", "he", "she", "they", "this", "these", "those", "which", "who"}
# words of a picture frame, not of what is seen (and those of ``SCENE_MARK``, the mark of a glossed scene)
_SCENE_STOP = {"the", "and", "see", "sees", "saw", "seen", "video", "videos", "shows", "show", "scene", "clip",
               "footage", "image", "picture", "visual", "visuals", "visually", "screen", "described", "can", "there",
               "that", "this", "with", "from", "into", "onto", "then", "while", "what", "also", "who", "which"}


def _stem(word: str) -> str:
    return re.sub(r"(?:'s|ing|ed|es|er|ers|s)$", "", word) or word


def _related(a: str, b: str) -> bool:
    """Two words of one stem ("bounce" / "bounces", "hammer" / "hammering", "drum" / "drummer")."""
    a, b = _stem(a), _stem(b)
    short, long_ = sorted((a, b), key=len)
    return short == long_ or (len(short) >= 4 and long_.startswith(short))


def _heard_sources(text: str) -> tuple[list[str], str]:
    """(the name of each sound heard: the first word of each thing heard after its article and qualities, or "" where
    none can be found; the text outside what is heard)."""
    names, seen, pos = [], [], 0
    for m in _HEARD.finditer(text):
        if m.start() < pos:
            continue
        end = _HEARD_END.search(text, m.end())
        stop = end.start() if end else len(text)
        seen.append(text[pos:m.start()])
        for part in _CONJUNCT.split(text[m.end():stop]):
            words = re.findall(r"[a-z']+", part)
            if words and words[0] in _SUBJECT:
                stop = m.end() + text[m.end():stop].find(part)  # "... and I see a ball": the scene again
                break
            name = next((w for w in words if w not in _LEAD), "")
            names.append(name)
        pos = stop
    seen.append(text[pos:])
    return names, " ".join(seen)


def _heard_of_seen(text: str) -> bool:
    """Each sound heard is named as the sound of what the answer describes seeing (see ``_HEARD``)."""
    names, seen = _heard_sources(text)
    if not names or not describes_scene(seen):
        return False
    scene = [w for w in re.findall(r"[a-z']{3,}", seen) if w not in _SCENE_STOP]
    return all(name and (name in _BACK or any(_related(name, w) for w in scene)) for name in names)


def _consistency_negation(fields: dict) -> str:
    """The claim that negates a consistency reading: a match <-> a mismatch; no judgement negated says nothing."""
    return {"match": "does not match", "mismatch": "matches"}.get(fields["match"], "")


def read_consistency(text: str, attributed_match: bool = True) -> dict:
    """``attributed_match``: a sound heard named as the sound of what is seen reads as a match (``_heard_of_seen``;
    off: as no judgement, "none"); any other sound described without a word on its fit reads as nothing."""
    text = negated_claims(drop_possibilities(clean(text)), read_consistency, _consistency_negation)
    if len(_PARTLY.findall(text)) >= 2 or (_PARTLY.search(text) and _ELLIPTIC_NOT.search(text)) or (
            _BUT_NOT.search(text) and _MATCH.search(_ATTRIBUTE.sub(" ", text))):
        return {"match": None}
    negated = bool(_NEGATED_MISMATCH.search(text))
    text = _NEGATED_MISMATCH.sub(" ", text)
    if _MISMATCH.search(text) or _INCONGRUOUS.search(text):
        flagged = _INCONGRUOUS.sub(" ", _MISMATCH.sub(" ", text))
        return {"match": None if _GLOBAL_MATCH.search(flagged) else "mismatch"}
    if negated or _MATCH.search(_ATTRIBUTE.sub(" ", text)):
        return {"match": "match"}
    silence = silence_claim(text)
    if silence is None and sound_claim(text):
        # a description of what is seen and heard is no verdict, unless it names the sound as that of the scene
        if not _heard_of_seen(text):
            return {"match": None}
        return {"match": "match" if attributed_match else "none"}
    if content_words(text) < 3 or not (silence or weak_silence(text) or describes_scene(text)):
        return {"match": None}  # a hedge, a refusal, an empty or off-topic answer: unparseable
    return {"match": "none"}  # a judgement-free answer: visual-only, or reporting silence
