"""Thud appendix B frame units: a video as N temporally ordered, non-overlapping windows for visual verification.

"Given a video of duration T seconds, we split it into non-overlapping windows u_j = [s_j, e_j], j = 1..N. From each
unit, we sample representative frames and present them in temporal order, together with the timestamp range of the
unit. The verifier is asked to select the unit that contains the target visual event and optionally refine the
timestamp within that unit." Units here are equal windows ``[s_j, e_j)`` (the last one closed at T), so every moment
of the clip lies in exactly one unit; the representative frames are the frames shown at the centres of
``per_unit`` equal sub-windows of the unit. (The agreement rule below reads a selected unit as the window the prompt
showed, both bounds included.)

Agreement (appendix B, rule 1): "Visual agreement: Gemini, GPT, and Claude localize the visual event within
ε_v = 0.8 seconds, or select overlapping frame units." :func:`disagreeing_pairs` applies it to every pair of
annotators (eq. 7 takes the maximum over pairs). An annotator's localisation is its time when it gave one (Gemini's,
or a verifier's refinement), else the unit it selected, the window ``[s_j, e_j]`` as the paper writes it. A pair
agrees when

1. its localisations lie within ε_v of each other: two times at most ε_v apart; a time at most ε_v outside the other's
   unit (inside it: 0 s apart); two units whose windows are at most ε_v apart (adjacent units, which share a
   boundary, are 0 s apart); or
2. both selected frame units and those overlap (a common stretch of time; adjacent units do not overlap, the paper's
   windows are "non-overlapping"): a verifier's refined time does not undo the unit it chose.

So a verifier that picks the unit next to Gemini's time agrees when its unit starts or ends within ε_v of that time,
as a refinement that close would; a unit is never compared by its centre. (Before, a time had to lie inside the
other's unit, half-open, with no tolerance, and a verifier with a refined time was compared by its unit, so Gemini at
4.9 s, GPT at 5.2 s in unit 5-7.5 and Claude in unit 2.5-5 were rejected although every time lay within 0.3 s.)
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from omniaudit.errors import InputError

DEFAULT_UNITS = 8
FRAMES_PER_UNIT = 2
FRAME_WIDTH = 320  # px; representative frames are scaled down to this width (aspect kept)


@dataclass(frozen=True)
class FrameUnit:
    index: int  # 1-based, as the prompt numbers them
    start: float
    end: float

    @property
    def label(self) -> str:
        """How a manifest cell stores a unit: ``"2.5-5"`` (seconds, the shortest digits that read back to the exact
        bounds, so the agreement rule compares the unit itself: a 0.01 s rounding would move its edges)."""
        return f"{_seconds(self.start)}-{_seconds(self.end)}"


def _seconds(x: float) -> str:
    return np.format_float_positional(x, trim="-")


def check_count(value, name: str) -> int:
    """A number of units or of frames per unit: a whole number >= 1."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise InputError(f"{name} must be a whole number >= 1", value=value)
    return int(value)


def frame_units(duration: float, n: int = DEFAULT_UNITS) -> list[FrameUnit]:
    """``n`` equal, non-overlapping windows covering ``[0, duration]``."""
    if not (math.isfinite(duration) and duration > 0):
        raise InputError("a clip duration must be a positive number of seconds", value=duration)
    check_count(n, "the number of frame units")
    edges = np.linspace(0.0, duration, n + 1)
    return [FrameUnit(j + 1, float(edges[j]), float(edges[j + 1])) for j in range(n)]


def parse_unit(label) -> tuple[float, float] | None:
    """``"2.5-5"`` or ``"2.50-5.00"`` -> (2.5, 5.0); empty -> None; anything else is an InputError."""
    if label is None or (isinstance(label, float) and math.isnan(label)) or not str(label).strip():
        return None
    try:
        s, e = (float(v) for v in str(label).split("-"))
    except ValueError:
        raise InputError("expected a frame unit as START-END seconds, e.g. 2.00-3.00", value=label) from None
    if not 0 <= s < e:
        raise InputError("a frame unit needs 0 <= START < END", value=label)
    return s, e


AGREEMENT_RULE = ("appendix B keeps a clip when every pair of annotators localises the visual event within {eps:g} s "
                  "(a time, or the unit selected when no time was refined) or selects overlapping frame units")
_TOLERANCE = 1e-9  # seconds: float noise in times read back from text (1.8 - 1.0 is 0.8000000000000000444)


def _window(time: float | None, unit: tuple[float, float] | None) -> tuple[float, float] | None:
    """Where an annotator localised the event: its time (a point) when given, else its unit's window (bounds in)."""
    if time is not None:
        return time, time
    return unit


def localisation_gap(a: tuple[float | None, tuple[float, float] | None],
                     b: tuple[float | None, tuple[float, float] | None]) -> float:
    """Seconds between two (time, unit) localisations (0 when one lies in the other); NaN when one is empty."""
    wa, wb = _window(*a), _window(*b)
    if wa is None or wb is None:
        return math.nan
    return max(0.0, max(wa[0], wb[0]) - min(wa[1], wb[1]))


def units_overlap(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """Two selected units share a stretch of time (adjacent units share only a boundary: no)."""
    return a is not None and b is not None and max(a[0], b[0]) < min(a[1], b[1])


def disagreeing_pairs(locs: list[tuple[float | None, tuple[float, float] | None]],
                      eps: float) -> list[tuple[int, int, float]]:
    """Every pair ``(i, j, gap)`` (indices into ``locs``, ``i < j``) that breaks appendix B rule 1: localisations more
    than ``eps`` apart and not both in overlapping units. An annotator with neither a time nor a unit does not vote."""
    bad = []
    for i, a in enumerate(locs):
        for j in range(i + 1, len(locs)):
            b = locs[j]
            gap = localisation_gap(a, b)
            if math.isnan(gap) or gap <= eps + _TOLERANCE or units_overlap(a[1], b[1]):
                continue
            bad.append((i, j, gap))
    return bad


def localisations_agree(locs: list[tuple[float | None, tuple[float, float] | None]], eps: float) -> bool:
    """Appendix B rule 1 over every pair of annotators' (time, unit): see :func:`disagreeing_pairs`."""
    return not disagreeing_pairs(locs, eps)


def describe_localisation(name: str, time: float | None, unit: tuple[float, float] | None) -> str:
    """``gpt (unit 5-7.5 s, time 5.9 s)``: an annotator and what it gave, in the manifest's units (seconds)."""
    parts = ([f"unit {_seconds(unit[0])}-{_seconds(unit[1])} s"] if unit is not None else []) + (
        [f"time {_seconds(time)} s"] if time is not None else [])
    return f"{name} ({', '.join(parts)})"


def disagreement(locs: list[tuple[str, float | None, tuple[float, float] | None]], eps: float,
                 shown: int = 3) -> str | None:
    """None when the named localisations ``(name, time, unit)`` agree; else the rule and the pairs that break it
    (the first ``shown``, then how many more), each with its units, times and the seconds between them."""
    pairs = disagreeing_pairs([(t, u) for _, t, u in locs], eps)
    if not pairs:
        return None
    said = []
    for i, j, gap in pairs[:shown]:
        units = ("their units do not overlap" if locs[i][2] is not None and locs[j][2] is not None
                 else "they did not both select a unit")
        said.append(f"{describe_localisation(*locs[i])} and {describe_localisation(*locs[j])}: "
                    f"{_seconds(round(gap, 6))} s apart > {eps:g} s and {units}")
    more = f"; and {len(pairs) - shown} more pair(s)" if len(pairs) > shown else ""
    return f"{AGREEMENT_RULE.format(eps=eps)}; broken by " + "; ".join(said) + more


def unit_frames(path: str | Path, units: list[FrameUnit], per_unit: int = FRAMES_PER_UNIT,
                width: int = FRAME_WIDTH) -> list[list[bytes]]:
    """JPEG bytes of ``per_unit`` representative frames per unit: the frame on screen at the centre of each of
    ``per_unit`` equal sub-windows (times from the first frame). Decoding keeps only the frame currently on screen
    at each chosen time (a 60 s 1080p clip is never held whole) and stops after the last one."""
    from omniaudit.data_builders.interventions.media import _open

    check_count(per_unit, "the number of frames per unit")
    times = np.array([u.start + (k + 0.5) * (u.end - u.start) / per_unit for u in units for k in range(per_unit)])
    shown = np.full(times.shape, -np.inf)  # time of the frame kept for each chosen time
    picks: list = [None] * times.size
    first = None
    with _open(path) as c:
        for frame in c.decode(video=0):  # presentation order
            if frame.pts is None:
                continue
            t = float(frame.pts * frame.time_base)
            first = (t, frame) if first is None else first
            t -= first[0]
            if times.size and t > times.max() and all(p is not None for p in picks):
                break
            later = (t <= times) & (t >= shown)
            shown[later] = t
            for i in np.flatnonzero(later):
                picks[i] = frame
    if first is None:
        raise InputError("the video stream has no frames", file=path)
    jpegs = [_jpeg(first[1] if p is None else p, width) for p in picks]
    return [jpegs[j * per_unit:(j + 1) * per_unit] for j in range(len(units))]


def _jpeg(frame, width: int) -> bytes:
    scale = min(1.0, width / frame.width)
    image = frame.to_image().resize((max(2, int(frame.width * scale)), max(2, int(frame.height * scale))))
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=85)
    return buf.getvalue()


UNITS_PROMPT = (
    "The images show a {duration:.1f}-second video as {n} frame units in temporal order, {per_unit} frames per unit "
    "(images {per_unit} x (j - 1) + 1 to {per_unit} x j belong to unit j):\n{listing}\n{target} Select the unit that "
    "contains it (its onset or peak moment: the impact, fall, collision, breakage or contact) and, if you can, refine "
    "the time within that unit, in seconds from the start of the video. If it happens in no unit, give unit null.\n"
    'Answer with one JSON object only: {{"unit": 1, "visual_time": 0.0}}'
)


def units_prompt(units: list[FrameUnit], duration: float, target: str, per_unit: int = FRAMES_PER_UNIT) -> str:
    listing = "\n".join(f"- unit {u.index}: {u.start:.2f}-{u.end:.2f} s" for u in units)
    return UNITS_PROMPT.format(duration=duration, n=len(units), per_unit=per_unit, listing=listing, target=target)


def read_unit_answer(found: dict, raw: str, units: list[FrameUnit]) -> tuple[FrameUnit | None, object, str | None]:
    """(unit, raw time value, problem) from a parsed answer (``found``: :func:`~.annotation_answers.parse_annotation`'s
    keys plus ``unit`` read here); a time outside the chosen unit is dropped (the unit stands)."""
    value = _unit_field(raw)
    if value is None or str(value).strip().lower() in ("", "null", "none"):
        return None, None, "no unit selected"
    try:
        j = int(float(str(value).strip().removeprefix("unit").strip()))
    except ValueError:
        return None, None, f"not a unit number: {value!r}"
    if not 1 <= j <= len(units):
        return None, None, f"unit {j} is not one of 1..{len(units)}"
    return units[j - 1], found.get("visual_time"), None


def _unit_field(raw: str):
    import re

    from omniaudit.data_builders.interventions.annotation_answers import json_object

    obj = json_object(raw or "")
    if obj is not None:
        for k, v in obj.items():
            if str(k).strip().lower() in ("unit", "frame_unit", "unit_index"):
                return v
        return None
    m = re.search(r"\bunit\b[\"'*\s]*[:=]?\s*(\d+)", raw or "", re.IGNORECASE)
    return m.group(1) if m else None
