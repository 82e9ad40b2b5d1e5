"""Read a video manifest (JSONL / CSV / TSV / Parquet) and apply the annotator-agreement filter of Thud appendix B.

Columns: ``id``, ``video`` (relative to the manifest's folder, or absolute) and optionally ``category``,
``visual_event``, ``visual_time``, ``audio_event``, ``audio_time``, ``discard``. Extra annotators' timestamps go in
``visual_time_<annotator>`` / ``audio_time_<annotator>``. A column close to a known one (``audio_tme``) or naming
another media input (``audio``, ``video_path``) is an error; any other column is not read, and is listed in the
manifest summary (``ignored_columns``, in the build info) with a warning. A sample is kept when all its visual
timestamps lie within ``eps_visual`` (0.8 s) and all its audio timestamps within ``eps_audio`` (0.5 s) of each other
(with frame units, ``visual_unit_<annotator>``, every pair of visual annotators localises the event within
``eps_visual`` or selects overlapping units: appendix B rule 1, :mod:`.frame_units`);
the consensus time is the primary ``*_time`` when given, else the annotators' median. A non-empty ``discard`` cell
(manual review, or ``omniaudit annotate`` when an annotator found no event or gave no usable time) rejects the row
with its text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.data_builders.interventions.frame_units import disagreement, parse_unit
from omniaudit.errors import InputError
from omniaudit.tables import fail_at, read_records, resolve_media_path

EPS_VISUAL = 0.8
EPS_AUDIO = 0.5
TEXT_FIELDS = ("category", "visual_event", "audio_event")
TIME_FIELDS = ("visual_time", "audio_time")
KNOWN_COLUMNS = ("id", "video", *TEXT_FIELDS, *TIME_FIELDS, "discard")
# per-annotator columns: visual_time_NAME / audio_time_NAME (read by the agreement filter) and what `omniaudit
# annotate` writes beside them (annotation_NAME, visual_event_NAME, audio_event_NAME)
ANNOTATOR_PREFIXES = ("visual_time_", "audio_time_", "annotation_", "visual_event_", "audio_event_", "visual_unit_")
# columns that look like another media input: this builder reads only `video` (the clip with its own soundtrack)
MEDIA_LIKE = ("audio", "image", "clip", "media", "path", "file", "filename", "wav", "mp4", "url")


@dataclass
class Manifest:
    clips: pd.DataFrame  # kept rows: id, video (absolute path), row, text fields, consensus times (NaN if unknown)
    rejected: list[dict] = field(default_factory=list)  # {"id", "row", "reason"}
    path: Path | None = None
    n_rows: int = 0
    ignored_columns: list[str] = field(default_factory=list)  # columns this builder does not read (counted)

    def summary(self) -> dict:
        reasons: dict[str, int] = {}
        for r in self.rejected:
            key = r["reason"].split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
        return {"rows": self.n_rows, "passed_agreement": len(self.clips), "rejected": len(self.rejected),
                "rejected_by_reason": reasons, "ignored_columns": list(self.ignored_columns)}


def check_columns(columns: list[str], path: Path) -> list[str]:
    """The manifest's columns that this builder does not read (e.g. an ``annotate`` answer column), after refusing
    the ones that look like a mistake: a near miss of a known column (``audio_tme``: the sound's time would be
    silently unknown and no Shift checked against it) names the column it resembles, and a media-like column
    (``audio``, ``image``, ``video_path``, ...) says that only ``video`` is read."""
    import difflib

    ignored = []
    for col in columns:
        name = str(col)
        if name in KNOWN_COLUMNS or (name.startswith(ANNOTATOR_PREFIXES)
                                     and name.split("_", 2)[-1] and not name.endswith("_")):
            continue
        near = difflib.get_close_matches(name.lower(), [*KNOWN_COLUMNS, *(p.rstrip("_") for p in ANNOTATOR_PREFIXES)],
                                         n=1, cutoff=0.8)
        if near:
            raise InputError(f"unknown column '{name}': did you mean '{near[0]}'? (known columns: "
                             f"{', '.join(KNOWN_COLUMNS)}, plus visual_time_NAME / audio_time_NAME per annotator)",
                             file=path, column=name)
        if name.lower() in MEDIA_LIKE or name.lower().endswith(("_path", "_file", "_url", "_audio")):
            raise InputError(f"unknown media column '{name}': this builder reads each clip from the 'video' column "
                             f"(its own soundtrack is the audio); rename the column to 'video' or drop it",
                             file=path, column=name)
        ignored.append(name)
    return ignored


def time_column(raw: pd.DataFrame, col: str, path: Path, rows: list[int]) -> pd.Series:
    """One time column as floats (NaN = not given); a cell that is not a time in seconds >= 0 ("2,5", "abc", -1) is
    an InputError naming the row and the column."""
    values = pd.to_numeric(raw[col].replace("", np.nan), errors="coerce")
    bad = (values.isna() & raw[col].notna() & (raw[col].astype(str).str.strip() != "")) | (values < 0)
    fail_at(bad, "expected a time in seconds >= 0", path, rows, col, raw[col])
    return values.astype(float)


def _times(raw: pd.DataFrame, kind: str, path: Path, rows: list[int]) -> pd.DataFrame:
    """Every ``<kind>_time`` and ``<kind>_time_<annotator>`` column as floats (NaN = not given)."""
    cols = [c for c in raw.columns if c == f"{kind}_time" or c.startswith(f"{kind}_time_")]
    out = pd.DataFrame(index=raw.index)
    for col in cols:
        out[col] = time_column(raw, col, path, rows)
    return out


def _units(raw: pd.DataFrame, path: Path, rows: list[int]) -> pd.DataFrame | None:
    """The ``visual_unit_<annotator>`` frame units (START-END s, ``omniaudit annotate`` NAME:units) as (s, e) or None;
    None when the manifest has no unit column."""
    cols = [c for c in raw.columns if c.startswith("visual_unit_")]
    if not cols:
        return None
    out = pd.DataFrame(index=raw.index)
    for col in cols:
        cells = []
        for i, v in enumerate(raw[col]):
            try:
                cells.append(parse_unit(v))
            except InputError as exc:
                raise InputError(exc.message, file=path, row=rows[i], column=col, value=v) from None
        out[col.removeprefix("visual_unit_")] = cells
    return out


def _localisations(times: pd.Series, units: pd.Series) -> list[tuple[str, float | None, tuple | None]]:
    """Each visual annotator's (name, time, unit): the primary ``visual_time`` and every ``visual_time_NAME`` /
    ``visual_unit_NAME`` pair (a unit without a time, or a time without a unit, stands alone)."""
    names = {c.removeprefix("visual_time_") for c in times.index if c.startswith("visual_time_")} | set(units.index)
    locs = [("visual_time", None if pd.isna(times.get("visual_time", np.nan)) else float(times["visual_time"]),
             None)]
    for name in sorted(names):
        t, unit = times.get(f"visual_time_{name}", np.nan), units.get(name)
        locs.append((name, None if pd.isna(t) else float(t), unit if isinstance(unit, tuple) else None))
    return locs


def read_rows(path: str | Path) -> tuple[pd.DataFrame, list[int], pd.Series, list[str]]:
    """Every manifest row, checked: (records with "" for missing cells, row numbers, ids, absolute video paths)."""
    path = Path(path)
    raw, rows = read_records(path)
    raw = raw.astype(object).where(raw.notna(), "")
    for col in ("id", "video"):
        if col not in raw.columns:
            raise InputError(f"missing column '{col}'; the manifest has {list(raw.columns)}", file=path)
    if raw.empty:
        raise InputError("no rows", file=path)
    ids = raw["id"].astype(str).str.strip()
    for i, value in enumerate(ids):
        if not value:
            raise InputError("expected a non-empty id", file=path, row=rows[i], column="id")
    fail_at(ids.duplicated(), "duplicate id", path, rows, "id", ids)
    videos = [str(resolve_media_path(str(v), path, r, "video")) for v, r in zip(raw["video"], rows, strict=True)]
    return raw, rows, ids, videos


def read_manifest(path: str | Path, eps_visual: float = EPS_VISUAL, eps_audio: float = EPS_AUDIO) -> Manifest:
    """Validated, agreement-filtered clips; every problem names the manifest, the row and the column."""
    path = Path(path)
    raw, rows, ids, videos = read_rows(path)
    ignored = check_columns(list(raw.columns), path)
    if ignored:
        import warnings

        warnings.warn(f"{path}: column(s) {ignored} are not read by the interventions builder (known: "
                      f"{', '.join(KNOWN_COLUMNS)}, visual_time_NAME / audio_time_NAME); they are listed on the card",
                      UserWarning, stacklevel=2)
    clips = pd.DataFrame({"id": ids, "row": rows, "video": videos})
    for col in TEXT_FIELDS:
        clips[col] = raw[col].astype(str).str.strip() if col in raw.columns else ""
    rejected_reason = pd.Series("", index=raw.index)
    if "discard" in raw.columns:
        note = raw["discard"].map(lambda v: "" if v is False or str(v).strip().lower() in ("", "false", "0", "no")
                                  else str(v).strip())
        rejected_reason[note != ""] = [f"discarded: {n}" for n in note[note != ""]]
    for kind, eps in (("visual", eps_visual), ("audio", eps_audio)):
        times = _times(raw, kind, path, rows)
        primary = f"{kind}_time"
        if times.empty:
            clips[primary] = np.nan
            continue
        spread = (times.max(axis=1) - times.min(axis=1)).fillna(0.0)
        units = _units(raw, path, rows) if kind == "visual" else None
        consensus = times[primary] if primary in times else times.median(axis=1)
        if primary in times:
            consensus = consensus.fillna(times.median(axis=1))
        clips[primary] = consensus
        if units is None:
            disagree = (spread > eps + 1e-9) & (rejected_reason == "")
            rejected_reason[disagree] = [f"{kind} timestamps disagree: spread {s:.2f} s > {eps:g} s"
                                         for s in spread[disagree]]
        else:  # appendix B rule 1, pairwise: within eps (a time, or a unit without one), or overlapping frame units
            why = pd.Series([disagreement(_localisations(times.loc[i], units.loc[i]), eps) for i in times.index],
                            index=times.index)
            disagree = why.notna() & (rejected_reason == "")
            rejected_reason[disagree] = [f"{kind} timestamps disagree: {w}" for w in why[disagree]]
    keep = rejected_reason == ""
    rejected = [{"id": clips["id"].iloc[i], "row": rows[i], "reason": rejected_reason.iloc[i]}
                for i in np.flatnonzero(~keep.to_numpy())]
    return Manifest(clips[keep].reset_index(drop=True), rejected, path, len(raw), ignored)
