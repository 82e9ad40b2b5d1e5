"""The LLM extractor (``--extractor``, Thud appendix G.3): a judge asked to pick one of :data:`LLM_OPTIONS` for an
answer the rules leave unread, its reply read by :func:`read_extractor_reply` (JSON, a quoted option, a cue, an option
alone on a line; nothing when they disagree); a noise answer is not sent."""

from __future__ import annotations

import re

from omniaudit.answer_language import prepare
from omniaudit.data_builders.interventions.extract_gloss import english
from omniaudit.data_builders.interventions.extract_phrases import clean, is_noise
from omniaudit.data_builders.interventions.extract_sync import stated_offset

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
        magnitude = stated_offset(clean(english(response)))
        offset = None if magnitude is None else (magnitude if direction == "delay" else -magnitude)
        return {"synced": False, "direction": direction, "offset_s": offset}
    if dimension == "existence":
        return {"audio_state": label}
    return {"match": label}


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
