"""Thud appendix B annotation: ask models (runners) for each clip's visual and audio event times, one column each.

``omniaudit annotate --manifest M --out A.jsonl --annotator gemini=SPEC [--annotator gpt:visual=SPEC ...]`` reads a
video manifest (the columns of :mod:`manifest`), asks every annotator about every clip and writes a new manifest
(JSONL; the input is never overwritten) with, per annotator ``NAME``:

- ``visual_time_NAME`` / ``audio_time_NAME``: seconds from the start of the clip (null when not given), the columns
  the agreement filter of :func:`~omniaudit.data_builders.interventions.manifest.read_manifest` compares
  (ε_v = 0.8 s, ε_a = 0.5 s) when the dataset is built;
- ``visual_event_NAME`` / ``audio_event_NAME``: the events it named, and ``annotation_NAME``: its raw answer.

Roles, as in the paper: an annotator ``NAME=SPEC`` watches the clip with its soundtrack and is asked the whole event
tuple (Gemini's role); ``NAME:visual=SPEC`` gets the pictures only and is asked when the (already named) visual
event happens (GPT's and Claude's frame-level verification). The first full annotator (or ``--primary``) fills the
row's empty ``visual_event`` / ``audio_event`` / ``visual_time`` / ``audio_time``. Human verification is one more
column written by hand (``audio_time_human``), which the filter reads like any other.

A row is marked ``discard`` (rejected at build time, reason kept) when an annotator says the event is not there
("none": no audible sound, no visible event), gives no usable time, or a time past the end of the clip: the paper
keeps only clips whose events every annotator localises. Answers are read robustly: a JSON object (also inside a
code fence or prose), else ``key: value`` lines; times as seconds (``1.5``, ``1.5 s``), ``mm:ss(.f)`` or
``hh:mm:ss(.f)``, and ``none`` / ``null`` / ``n/a`` for "not there" (:mod:`~.annotation_answers`).

SPEC is any runner of ``omniaudit judge`` (``openai:MODEL@URL`` for a hosted omni model, ``hf:PATH``) or
``column:FIELD``, a scripted annotator that answers each clip with the text of the manifest's own ``FIELD`` column
(tests, or answers collected elsewhere).

The paper does not print its annotation prompt in the text we have (appendix B names it, the box is not in the
extracted text); :data:`ANNOTATION_PROMPT` follows its stated design: event-level localisation, not captioning.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from omniaudit.data_builders.interventions import frame_units, media
from omniaudit.data_builders.interventions.annotation_answers import (
    NONE_WORDS,
    TimeReading,
    answer_text,
    parse_annotation,
    parse_time,
)
from omniaudit.data_builders.interventions.manifest import EPS_AUDIO, EPS_VISUAL, read_manifest, read_rows
from omniaudit.errors import InputError
from omniaudit.runners.items import JudgeItem, MediaPart

ANNOTATION_PROMPT = (
    "Watch this {duration:.1f}-second video and listen to its audio track. Do not describe the video in general. "
    "Find the single most salient physical event that should make a sound (an impact, fall, collision, breakage or "
    "contact) and localise it in time.\n"
    "- visual_event: what is seen at that moment, in a short phrase;\n"
    "- visual_time: when it is seen, in seconds from the start of the video;\n"
    "- audio_event: the sound actually heard for it, in a short phrase, judged from the audio track and not from "
    "the picture;\n"
    "- audio_time: when that sound is heard, in seconds from the start of the video.\n"
    "If no such sound is audible, give audio_event \"none\" and audio_time null; if no clear visual event happens, "
    "give visual_time null.\n"
    'Answer with one JSON object only: {{"visual_event": "...", "visual_time": 0.0, "audio_event": "...", '
    '"audio_time": 0.0}}'
)
VISUAL_PROMPT = (
    "Watch this {duration:.1f}-second video. {target} Give the time, in seconds from the start of the video, at "
    "which it is seen: its onset or peak moment (the impact, fall, collision, breakage or contact). If it does not "
    "happen in the video, give visual_time null.\n"
    'Answer with one JSON object only: {{"visual_event": "...", "visual_time": 0.0}}'
)
TARGET_NAMED = 'Locate this visual event: "{event}".'
TARGET_ANY = "Find the single most salient physical event that should make a sound."
ROLES = ("av", "visual", "units")
FIELDS = {"av": ("visual", "audio"), "visual": ("visual",), "units": ("visual",)}
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
BATCH = 32  # clips whose video bytes are held at once


@dataclass(frozen=True)
class Annotator:
    name: str
    spec: str
    role: str = "av"  # av: video with its soundtrack, whole tuple; visual: pictures only, visual time;
    # units: appendix B frame units (frame_units.py), representative frames per window, the unit + refined time

    @property
    def fields(self) -> tuple[str, ...]:
        return FIELDS[self.role]


def parse_annotator(text: str) -> Annotator:
    """``NAME=SPEC``, ``NAME:visual=SPEC`` or ``NAME:units=SPEC`` (``NAME:av=SPEC`` is the default role)."""
    head, sep, spec = str(text).partition("=")
    name, _, role = head.partition(":")
    name, role, spec = name.strip(), (role.strip() or "av"), spec.strip()
    if not sep or not spec or not NAME.match(name):
        raise InputError("an annotator must look like NAME=SPEC, NAME:visual=SPEC or NAME:units=SPEC (NAME: letters, "
                         "digits, _ or -), "
                         "e.g. gemini=openai:gemini-2.5-pro@https://HOST/v1", value=text)
    if role not in ROLES:
        raise InputError(f"annotator role must be one of {', '.join(ROLES)}", value=text)
    return Annotator(name, spec, role)


# ---- the step -----------------------------------------------------------------------------------------------------

class ColumnAnnotator:
    """``column:FIELD``: answers each clip (item id = clip id) with the manifest's ``FIELD`` text."""

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies

    def answer(self, items: list[JudgeItem], progress=None) -> list[str]:
        return [self.replies.get(item.id, "") for item in items]


@dataclass
class AnnotateResult:
    out: Path
    rows: int
    annotators: list[str]
    discarded: int
    problems: dict[str, int] = field(default_factory=dict)  # annotator -> answers without a usable time
    agreement: dict = field(default_factory=dict)  # read_manifest(out).summary() at the given tolerances


def _is_annotated_manifest(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as fh:
            first = json.loads(fh.readline())
    except (OSError, ValueError):
        return False
    return isinstance(first, dict) and {"id", "video"} <= set(first) and any(
        k.startswith("annotation_") for k in first)


def _runner(annotator: Annotator, raw: pd.DataFrame, ids: pd.Series, path: Path, judge_options: dict):
    kind, _, rest = annotator.spec.partition(":")
    if kind == "column":
        if rest not in raw.columns:
            raise InputError(f"annotator '{annotator.name}' answers from column '{rest}', which the manifest lacks",
                             file=path, column=rest)
        return ColumnAnnotator({i: "" if v is None else str(v) for i, v in zip(ids, raw[rest], strict=True)})
    from omniaudit.runners.factory import make_judge

    return make_judge(annotator.spec, **judge_options)


def _prompt(annotator: Annotator, duration: float, visual_event: str) -> str:
    if annotator.role == "visual":
        target = TARGET_NAMED.format(event=visual_event) if visual_event else TARGET_ANY
        return VISUAL_PROMPT.format(duration=duration, target=target)
    return ANNOTATION_PROMPT.format(duration=duration)


def _item(a: Annotator, clip_id: str, video: str, duration: float, visual_event: str,
          units: list[frame_units.FrameUnit], per_unit: int) -> JudgeItem:
    """The question to one annotator about one clip: the video (with its soundtrack for ``av``), or the frame units'
    representative frames in temporal order (``units``)."""
    if a.role != "units":
        return JudgeItem(id=clip_id, prompt=_prompt(a, duration, visual_event),
                         media=[MediaPart("video", Path(video).read_bytes(), "video", with_audio=a.role == "av")])
    target = TARGET_NAMED.format(event=visual_event) if visual_event else TARGET_ANY
    frames = frame_units.unit_frames(video, units, per_unit)
    return JudgeItem(id=clip_id, prompt=frame_units.units_prompt(units, duration, target, per_unit),
                     media=[MediaPart("image", jpeg, f"unit{u.index}_{k + 1}") for u, picks in zip(units, frames,
                                                                                                   strict=True)
                            for k, jpeg in enumerate(picks)])


def _record_unit(rec: dict, a: Annotator, raw: str, units: list[frame_units.FrameUnit]) -> list[str]:
    """A frame-unit verifier's answer: ``visual_unit_NAME`` (START-END) and, when its refined time lies in the unit,
    ``visual_time_NAME``; no unit -> a reason to discard."""
    rec[f"annotation_{a.name}"] = raw
    unit, value, problem = frame_units.read_unit_answer(parse_annotation(raw), raw, units)
    rec[f"visual_unit_{a.name}"] = unit.label if unit else None
    rec[f"visual_event_{a.name}"] = str(rec.get("visual_event") or "").strip() or None
    seconds = parse_time(value).seconds if value is not None else None
    inside = unit is not None and seconds is not None and unit.start <= seconds <= unit.end
    rec[f"visual_time_{a.name}"] = seconds if inside else None
    return [f"{a.name}: no usable visual unit ({problem})"] if problem else []


def annotate_manifest(manifest: str | Path, out: str | Path, annotators: list[Annotator | str],
                      primary: str | None = None, eps_visual: float = EPS_VISUAL, eps_audio: float = EPS_AUDIO,
                      progress: Callable[[str], None] | None = None, n_units: int = frame_units.DEFAULT_UNITS,
                      frames_per_unit: int = frame_units.FRAMES_PER_UNIT, **judge_options) -> AnnotateResult:
    """Ask every annotator about every clip of ``manifest`` and write the annotated manifest ``out`` (JSONL,
    atomically; never the input). ``judge_options`` go to the runner factory (``max_tokens``, ``concurrency``...).

    Returns counts and the agreement filter's summary of ``out`` (what ``build interventions`` will keep).
    """
    from omniaudit.io import atomic_file

    path, out = Path(manifest), Path(out)
    for flag, value in (("--units", n_units), ("--frames-per-unit", frames_per_unit)):
        frame_units.check_count(value, flag)
    annotators = _check_annotators(annotators, path, out)
    raw, rows, ids, videos = read_rows(path)
    full = [a.name for a in annotators if a.role == "av"]
    primary = primary if primary is not None else (full[0] if full else None)
    if primary is not None and primary not in full:
        raise InputError(f"--primary must name an annotator that gives the whole event tuple ({', '.join(full)})",
                         value=primary)
    say = progress or (lambda _msg: None)
    _check_free_columns(raw, annotators, path)
    durations = _durations(videos, rows, ids, path)
    records = [dict(rec) for rec in raw.to_dict("records")]
    for rec in records:
        for col in ("visual_event", "audio_event", "visual_time", "audio_time", "discard"):
            rec.setdefault(col, "")
    discard: list[list[str]] = [[str(rec["discard"]).strip()] if str(rec["discard"]).strip() else []
                                for rec in records]
    options = {"max_tokens": 256, **judge_options}
    problems: dict[str, int] = {}
    units = [frame_units.frame_units(d, n_units) for d in durations]
    for a in sorted(annotators, key=lambda a: a.role != "av"):  # visual verifiers see the named event
        problems[a.name] = _annotate_with(a, _runner(a, raw, ids, path, options), records, discard, ids, videos,
                                          durations, units, frames_per_unit, primary, say)
    moved = out.parent.resolve() != path.parent.resolve()  # relative video paths would point elsewhere: absolute
    for rec, reasons, video in zip(records, discard, videos, strict=True):
        rec["discard"] = "; ".join(reasons)
        if moved:
            rec["video"] = video
    with atomic_file(out) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps({k: _cell(v) for k, v in rec.items()}, ensure_ascii=False) + "\n")
    summary = read_manifest(out, eps_visual, eps_audio).summary()
    return AnnotateResult(out, len(records), [a.name for a in annotators], sum(bool(r) for r in discard), problems,
                          summary)


def _check_annotators(annotators: list, path: Path, out: Path) -> list[Annotator]:
    """The annotators parsed, named distinctly, and an output that is a new JSONL file omniaudit may write."""
    from omniaudit.io import check_out_file

    annotators = [a if isinstance(a, Annotator) else parse_annotator(a) for a in annotators]
    if not annotators:
        raise InputError("give at least one --annotator NAME=SPEC")
    names = [a.name for a in annotators]
    if len(set(names)) != len(names):
        raise InputError("annotator names must be distinct (they name the columns)", value=names)
    if out.suffix.lower() not in (".jsonl", ".ndjson"):
        raise InputError("the annotated manifest is written as JSONL; name it *.jsonl", file=out)
    if out.resolve() == path.resolve():
        raise InputError("the output would overwrite the input manifest; write the annotations to a new file",
                         file=out)
    check_out_file(out, _is_annotated_manifest)
    return annotators


def _check_free_columns(raw: pd.DataFrame, annotators: list[Annotator], path: Path) -> None:
    """No annotator's columns are in the manifest already (they would be overwritten)."""
    for a in annotators:
        taken = [c for c in (f"visual_time_{a.name}", f"audio_time_{a.name}", f"annotation_{a.name}",
                             f"visual_unit_{a.name}")
                 if c in raw.columns]
        if taken:
            raise InputError(f"the manifest already has column(s) {taken}: annotator '{a.name}' would overwrite "
                             "them; give it another name", file=path)


def _durations(videos: list, rows: list[int], ids, path: Path) -> list[float]:
    """Every clip's duration (a clip that cannot be probed is named with its row)."""
    durations = []
    for v, r, i in zip(videos, rows, ids, strict=True):
        try:
            info = media.probe(v)
        except InputError as exc:
            raise InputError(f"clip '{i}' ({v}): {exc.message}", file=path, row=r, column="video") from exc
        durations.append(info.duration)
    return durations


def _annotate_with(a: Annotator, runner, records: list[dict], discard: list[list[str]], ids, videos: list,
                   durations: list[float], units: list, frames_per_unit: int, primary: str | None, say) -> int:
    """Ask one annotator about every clip, a batch at a time, recording its answers (and why a clip is discarded)
    into ``records`` / ``discard``; returns how many clips it gave no usable answer for."""
    problems = 0
    for start in range(0, len(records), BATCH):
        chunk = range(start, min(start + BATCH, len(records)))
        items = [_item(a, ids.iloc[k], videos[k], durations[k], str(records[k]["visual_event"]), units[k],
                       frames_per_unit) for k in chunk]
        say(f"{a.name}: clips {start + 1}-{chunk.stop} of {len(records)}")
        answers = runner.answer(items, None)
        if len(answers) != len(items):
            raise InputError(f"annotator '{a.name}' ({a.spec}) returned {len(answers)} answers for "
                             f"{len(items)} clips")
        for k, answer in zip(chunk, answers, strict=True):
            bad = (_record_unit(records[k], a, answer_text(answer), units[k]) if a.role == "units"
                   else _record(records[k], a, answer_text(answer), durations[k], a.name == primary))
            discard[k].extend(bad)
            problems += any("no usable" in b for b in bad)
    return problems


def _cell(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _record(rec: dict, a: Annotator, raw: str, duration: float, primary: bool) -> list[str]:
    """Write annotator ``a``'s columns into ``rec``; return the reasons to discard the clip (empty: usable)."""
    found = parse_annotation(raw)
    rec[f"annotation_{a.name}"] = raw
    reasons = []
    for kind in a.fields:
        event = found.get(f"{kind}_event")
        event = None if event is None or str(event).strip().lower() in NONE_WORDS else str(event).strip()
        reading = parse_time(found[f"{kind}_time"]) if f"{kind}_time" in found else TimeReading(
            problem=f"no {kind}_time in the answer")
        seconds = reading.seconds
        if seconds is not None and seconds > duration:
            reasons.append(f"{a.name}: {kind} time {seconds:g} s is past the end of the clip ({duration:.2f} s)")
            seconds = None
        elif reading.none:
            reasons.append(f"{a.name}: no {'audible sound' if kind == 'audio' else 'visible event'}")
        elif reading.problem:
            reasons.append(f"{a.name}: no usable {kind} time ({reading.problem})")
        rec[f"{kind}_time_{a.name}"] = seconds
        rec[f"{kind}_event_{a.name}"] = event
        if primary:
            if event and not str(rec[f"{kind}_event"]).strip():
                rec[f"{kind}_event"] = event
            if seconds is not None and str(rec[f"{kind}_time"]).strip() == "":
                rec[f"{kind}_time"] = seconds
    return reasons
