"""An annotator's answer read (Thud appendix B annotation, :mod:`~.annotate`): the event names and times it gives, from
a JSON object (also inside a code fence or prose) or else ``key: value`` lines (:func:`parse_annotation`), and each
time as seconds, ``mm:ss(.f)`` or ``hh:mm:ss(.f)``, or ``none`` / ``null`` / ``n/a`` for "not there"
(:func:`parse_time`); never a guess."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

NONE_WORDS = {"none", "null", "n/a", "na", "nil", "no", "absent", "no sound", "silence", "silent", "not audible",
              "inaudible", "not visible", "no event", "not present", "unknown", "-", "--"}


@dataclass
class TimeReading:
    seconds: float | None = None  # a time >= 0
    none: bool = False  # the annotator says the event is not there
    problem: str | None = None  # no usable answer: why


_CLOCK = re.compile(r"^(?:(\d+):)?(\d{1,2}):(\d{1,2}(?:\.\d+)?)$")
_SECONDS = re.compile(r"^(\d+(?:\.\d+)?|\.\d+)\s*(?:s|sec|secs|second|seconds)?\.?$")
_MIN_SEC = re.compile(r"^(\d+)\s*(?:m|min|mins|minutes?)\s*(\d+(?:\.\d+)?)\s*(?:s|sec|secs|seconds?)?$")


def parse_time(value) -> TimeReading:
    """A time cell of an answer: seconds (number, ``1.5``, ``1.5 s``), ``mm:ss(.f)``, ``hh:mm:ss(.f)``, ``1m 2.5s``;
    ``None`` / ``"none"`` / ``"n/a"`` mean "not there"; anything else is a problem (never a guess)."""
    if value is None:
        return TimeReading(none=True)
    if isinstance(value, bool):
        return TimeReading(problem=f"expected a time, found {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value) or value < 0:
            return TimeReading(problem=f"expected a time >= 0 s, found {value!r}")
        return TimeReading(float(value))
    text = str(value).strip().strip("\"'`").strip().lower().rstrip(".")
    if text in NONE_WORDS or text.startswith(("no ", "none")):
        return TimeReading(none=True)
    text = text.removeprefix("at ").removeprefix("~").removeprefix("about ").strip()
    if m := _CLOCK.match(text):
        h, mm, ss = int(m.group(1) or 0), int(m.group(2)), float(m.group(3))
        if ss >= 60 or (m.group(1) and mm >= 60):
            return TimeReading(problem=f"not a clock time: {value!r}")
        return TimeReading(3600 * h + 60 * mm + ss)
    if m := _SECONDS.match(text):
        return TimeReading(float(m.group(1)))
    if m := _MIN_SEC.match(text):
        return TimeReading(60 * int(m.group(1)) + float(m.group(2)))
    return TimeReading(problem=f"not a time: {value!r}")


KEYS = {"visual_event": ("visual_event", "visual event", "visual"), "visual_time": (
    "visual_time", "visual time", "visual_timestamp", "visual timestamp", "t_v", "video_time"),
    "audio_event": ("audio_event", "audio event", "acoustic_event", "sound_event", "sound"),
    "audio_time": ("audio_time", "audio time", "audio_timestamp", "audio timestamp", "t_a", "acoustic_time",
                   "sound_time")}


def json_object(text: str) -> dict | None:
    """The first JSON object in the text (bare, in a code fence or in prose), else None."""
    start = text.find("{")
    while start != -1:
        depth, in_str, escaped = 0, False, False
        for end in range(start, len(text)):
            ch = text[end]
            if in_str:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    try:
                        obj = json.loads(text[start:end + 1])
                    except json.JSONDecodeError:
                        break
                    if isinstance(obj, dict):
                        return obj
                    break
        start = text.find("{", start + 1)
    return None


def _normalise(key: str) -> str | None:
    k = re.sub(r"[\s\-]+", "_", str(key).strip().lower())
    for canonical, aliases in KEYS.items():
        if k in {re.sub(r"[\s\-]+", "_", a) for a in aliases}:
            return canonical
    return None


def _alias_pattern(alias: str) -> str:
    return r"[\s_\-]+".join(map(re.escape, re.split(r"[\s_\-]+", alias)))


_VALUE = r"""(?:"([^"]*)"|'([^']*)'|([^,;\n}]+))"""
_FALLBACK = {canonical: re.compile(
    r"(?<![A-Za-z_])[\"'*]*(?:" + "|".join(_alias_pattern(a) for a in aliases) + r")[\"'*\s]*[:=]\s*[*\s]*" + _VALUE,
    re.IGNORECASE) for canonical, aliases in KEYS.items()}


def parse_annotation(raw: str) -> dict:
    """``{visual_event, visual_time, audio_event, audio_time}`` read from an answer; a key the answer does not give is
    absent. Times stay raw here (see :func:`parse_time`).

    A JSON object anywhere in the answer is read first; without one (or when it is not valid JSON, e.g. single quotes
    or a trailing comma) each key is looked for as ``key: value`` / ``key = value`` (quoted or up to , ; } or the end
    of the line; markdown bold around the key is fine).
    """
    text = raw or ""
    obj = json_object(text)
    found: dict = {}
    if obj is not None:
        for key, value in obj.items():
            canonical = _normalise(key)
            if canonical and canonical not in found:
                found[canonical] = value
        return found
    for canonical, pattern in _FALLBACK.items():
        if m := pattern.search(text):
            value = next(g for g in m.groups() if g is not None).strip().rstrip("*").strip()
            found[canonical] = None if value.lower() == "null" else value
    return found


def answer_text(answer) -> str:
    """A runner's answer as text: a ``str`` (or :class:`~omniaudit.runners.items.Answer`), or an object
    carrying its text as ``raw`` / ``text``."""
    if isinstance(answer, str):
        return str(answer)
    for attr in ("raw", "text"):
        value = getattr(answer, attr, None)
        if isinstance(value, str):
            return value
    return "" if answer is None else str(answer)
