"""Rule-based extraction of structured answers from free-form responses to the intervention questions.

The paper parses free-form answers with an LLM judge (Thud appendix G.3); this is the offline, deterministic
fallback. It reads only the model's response, never the target, and returns ``None`` for a field it cannot decide
(counted as unparseable, never guessed). Fields:

- sync: ``synced`` (bool), ``direction`` (delay | early | none), ``offset_s`` (signed: + = audio delayed);
- existence: ``audio_state`` (muted | audio_described | visual_only), as the paper's judge classes;
- consistency: ``match`` (match | mismatch | none: no judgement, e.g. a visual-only answer).
"""

from __future__ import annotations

import re

NUMBER_WORDS = {"half a": 0.5, "a half": 0.5, "one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4,
                "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_SECONDS = r"(?:s|sec|secs|second|seconds)\b"
_NUMBER = re.compile(rf"(\d+(?:\.\d+)?|{'|'.join(sorted(NUMBER_WORDS, key=len, reverse=True))})\s*-?\s*{_SECONDS}")
_DIRECTION_WORDS = r"(?:delayed|delay|lags?|lagging|late|latency|offset|desync\w*|early|ahead|behind)"
# "no delay", "not delayed", "neither early nor late", "does not lag behind": negated, so not a desync claim
_NEGATED_OFFSET = re.compile(rf"\b(?:no|without|not any|zero|any|not|n't|never|neither|nor)\s+(?:\w+\s+){{0,2}}?"
                             rf"{_DIRECTION_WORDS}(?:\s+(?:behind|ahead))?\b")
_NOT_SYNCED = re.compile(
    r"\b(?:not|isn't|is not|aren't|are not|n't|never|no longer)\s+(?:\w+\s+){0,2}?"
    r"(?:synchroni[sz]ed|in sync|aligned|synced|in time)\b"
    r"|\bout of (?:sync|synch|time)\b|\b(?:desynchroni[sz]ed|desynced|desync|misaligned|unsynchroni[sz]ed|"
    r"asynchronous|mismatched timing|timing mismatch)\b")
_SYNCED = re.compile(r"\b(?:synchroni[sz]ed|in sync|aligned|synced|at the same (?:time|moment)|in time with|"
                     r"coincides?)\b")
_DELAY = re.compile(r"\b(?:delayed|delay|lags?|lagging|late|later than|behind|after the (?:visual|visible|event|"
                    r"impact|action|contact|moment))\b")
_EARLY = re.compile(r"\b(?:early|earlier than|ahead|too soon|precedes?|leads|before the (?:visual|visible|event|"
                    r"impact|action|contact|moment))\b")

_MUTED_STRONG = re.compile(
    r"\b(?:(?:video|audio|clip|track|it) is (?:completely |entirely |totally )?(?:silent|muted|mute)|"
    r"no (?:audible |discernible |clear )?(?:sound|audio|noise)s?\b|nothing (?:can be |is )?(?:heard|audible)|"
    r"(?:can't|cannot|can not|don't|do not) hear (?:any|anything)|there is no audio|complete silence|"
    r"total silence|silent video|no audio track|(?:audio|sound|track|video|clip) (?:is|was|seems|sounds) muted)")
_MUTED_WEAK = re.compile(r"\b(?:silent|silence|muted|mute)\b")
_DESCRIBED = re.compile(
    r"\b(?:hear|heard|hearing|audible|sound|sounds|noise|noises|music|voice|voices|speech|speaking|talking|"
    r"bang|thud|crash|clang|clank|knock|bounce|bouncing|shatter\w*|footsteps|laugh\w*|scream\w*|ring\w*|"
    r"beep\w*|tone|hum\w*|buzz\w*|whoosh\w*|splash\w*|impact)\b")
_MISMATCH = re.compile(
    r"\b(?:does not|doesn't|do not|don't|did not|didn't|does not seem to|doesn't seem to)\s+(?:\w+\s+)?"
    r"(?:match|fit|correspond|belong|go with|align with)"
    r"|\b(?:mismatch\w*|inconsistent|unrelated|out of place|not consistent|not match\w*|incongruous|dubbed|"
    r"from (?:a |another )?(?:different|another|other) (?:scene|source|video|clip|recording))\b")
_MATCH = re.compile(r"\b(?:match(?:es|ing)?|consistent|corresponds?|fits|in line with|as expected|"
                    r"synchroni[sz]ed with)\b")


_BY = re.compile(r"\bby\s+(?:about|roughly|around|approximately|nearly|almost|some|~)?\s*")


def _offset(text: str) -> float | None:
    """The offset magnitude: the first "by <n> s" if any (the stated offset), else the first "<n> s"."""
    by = [m for m in _NUMBER.finditer(text) if _BY.search(text[max(0, m.start() - 20) : m.start()])]
    m = by[0] if by else _NUMBER.search(text)
    if not m:
        return None
    token = m.group(1)
    return float(NUMBER_WORDS[token]) if token in NUMBER_WORDS else float(token)


def extract_sync(response: str) -> dict:
    lowered = response.lower()
    not_synced = bool(_NOT_SYNCED.search(lowered))
    text = _NEGATED_OFFSET.sub(" ", lowered)
    delay, early = bool(_DELAY.search(text)), bool(_EARLY.search(text))
    # an explicit "not synchronized" wins; otherwise a "synchronized" claim outranks stray direction words
    if not_synced or ((delay or early) and not _SYNCED.search(text)):
        direction = "delay" if delay and not early else "early" if early and not delay else "none"
        magnitude = _offset(text)
        sign = {"delay": 1.0, "early": -1.0}.get(direction)
        offset = None if magnitude is None or sign is None else sign * magnitude
        return {"synced": False, "direction": direction, "offset_s": offset}
    if _SYNCED.search(text):
        return {"synced": True, "direction": "none", "offset_s": 0.0}
    return {"synced": None, "direction": None, "offset_s": None}


def extract_existence(response: str) -> dict:
    text = response.lower()
    if _MUTED_STRONG.search(text):
        state = "muted"
    elif _DESCRIBED.search(text):
        state = "audio_described"
    elif _MUTED_WEAK.search(text):
        state = "muted"
    else:
        state = "visual_only"
    return {"audio_state": state}


def extract_consistency(response: str) -> dict:
    text = response.lower()
    if _MISMATCH.search(text):
        return {"match": "mismatch"}
    if _MATCH.search(text) or (_DESCRIBED.search(text) and not _MUTED_STRONG.search(text)):
        return {"match": "match"}  # describing the sound without flagging it treats it as a natural match
    return {"match": "none"}


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
        magnitude = _offset(response.lower())
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
