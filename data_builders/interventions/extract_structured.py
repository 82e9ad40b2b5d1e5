"""The interventions' answer reader on structured answers (:mod:`~.extract`): a JSON object or key-value lines, read
field by field; fields that contradict each other or the prose beside them read as nothing. An answer without
structure is read by the prose rules' final commitment (:func:`structured_or_final`)."""

from __future__ import annotations

import re

from omniaudit.answer_language import prepare
from omniaudit.data_builders.interventions.extract_consistency import read_consistency
from omniaudit.data_builders.interventions.extract_existence import read_existence
from omniaudit.data_builders.interventions.extract_gloss import english
from omniaudit.data_builders.interventions.extract_phrases import (
    NUMBER,
    clean,
    cleared,
    final_reading,
    in_range,
    is_noise,
    unread,
)
from omniaudit.data_builders.interventions.extract_sync import UNREAD_SYNC, read_sync, stated_offset

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
    got = final_reading(read, value)
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
        text = clean(english(value))
        stated = stated_offset(text)
        if stated is None and any(in_range(text, m) for m in NUMBER.finditer(text)):
            part = dict(implied)  # a range ("1-2 s") states no one offset
        else:
            if stated is None:
                numbers = re.findall(r"\d+(?:\.\d+)?|\.\d+", text)
                if len(numbers) != 1:
                    return _UNREADABLE
                stated = float(numbers[0]) * scale
            part = {"magnitude": abs(stated), **implied}
        reading = read_sync(text)
        if reading["direction"] in ("delay", "early"):
            part["direction"] = reading["direction"]
        return part
    flag = _flag(value) if key in _SYNC_FLAG_KEYS else None
    reading = _text_reading(read_sync, value)
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
        return dict(UNREAD_SYNC)
    synced = {p["synced"] for p in parts if "synced" in p}
    directions = {p["direction"] for p in parts if "direction" in p}
    magnitudes = {round(p["magnitude"], 6) for p in parts if "magnitude" in p}
    if len(synced) > 1 or len(directions) > 1 or len(magnitudes) > 1:
        return dict(UNREAD_SYNC)
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
        return dict(UNREAD_SYNC)
    if claim:  # "synchronized" with a direction or an offset: two claims
        return dict(UNREAD_SYNC) if direction or magnitude else {"synced": True, "direction": "none",
                                                                   "offset_s": 0.0}
    if magnitude == 0:
        return dict(UNREAD_SYNC)  # "not synchronized", offset 0
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
    read = read_existence if dimension == "existence" else read_consistency
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
    prose = final_reading({"sync": read_sync, "existence": read_existence,
                            "consistency": lambda t: read_consistency(t, attributed_match=False)}[dimension], rest)
    return dict(_UNREAD_FIELDS[dimension]) if _contradicts(dimension, prose, fields) else fields


_UNREAD_FIELDS = {"sync": UNREAD_SYNC, "existence": {"audio_state": None}, "consistency": {"match": None}}


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


def structured_or_final(dimension: str, read, response: str) -> dict:
    """A structured answer's fields (``_structured``), else the rules' reading of the final commitment."""
    if is_noise(response):
        return cleared(read(""))
    structured = _structured(dimension, response)
    return dict(structured) if structured is not None else final_reading(read, response)
