"""Read a video manifest (JSONL / CSV / TSV / Parquet) and apply the annotator-agreement filter of Thud appendix B.

Columns: ``id``, ``video`` (relative to the manifest's folder, or absolute) and optionally ``category``,
``visual_event``, ``visual_time``, ``audio_event``, ``audio_time``. Extra annotators' timestamps go in
``visual_time_<annotator>`` / ``audio_time_<annotator>``. A sample is kept when all its visual timestamps lie within
``eps_visual`` (0.8 s) and all its audio timestamps within ``eps_audio`` (0.5 s) of each other; the consensus time is
the primary ``*_time`` when given, else the annotators' median. A non-empty ``discard`` cell (manual review, or
``omniaudit annotate`` when an annotator found no event or gave no usable time) rejects the row with its text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.tables import fail_at, read_records, resolve_media_path

EPS_VISUAL = 0.8
EPS_AUDIO = 0.5
TEXT_FIELDS = ("category", "visual_event", "audio_event")
TIME_FIELDS = ("visual_time", "audio_time")


@dataclass
class Manifest:
    clips: pd.DataFrame  # kept rows: id, video (absolute path), row, text fields, consensus times (NaN if unknown)
    rejected: list[dict] = field(default_factory=list)  # {"id", "row", "reason"}
    path: Path | None = None
    n_rows: int = 0

    def summary(self) -> dict:
        reasons: dict[str, int] = {}
        for r in self.rejected:
            key = r["reason"].split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
        return {"rows": self.n_rows, "passed_agreement": len(self.clips), "rejected": len(self.rejected),
                "rejected_by_reason": reasons}


def _times(raw: pd.DataFrame, kind: str, path: Path, rows: list[int]) -> pd.DataFrame:
    """Every ``<kind>_time`` and ``<kind>_time_<annotator>`` column as floats (NaN = not given)."""
    cols = [c for c in raw.columns if c == f"{kind}_time" or c.startswith(f"{kind}_time_")]
    out = pd.DataFrame(index=raw.index)
    for col in cols:
        values = pd.to_numeric(raw[col].replace("", np.nan), errors="coerce")
        bad = (values.isna() & raw[col].notna() & (raw[col].astype(str).str.strip() != "")) | (values < 0)
        fail_at(bad, "expected a time in seconds >= 0", path, rows, col, raw[col])
        out[col] = values.astype(float)
    return out


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
        consensus = times[primary] if primary in times else times.median(axis=1)
        if primary in times:
            consensus = consensus.fillna(times.median(axis=1))
        clips[primary] = consensus
        disagree = (spread > eps + 1e-9) & (rejected_reason == "")
        rejected_reason[disagree] = [f"{kind} timestamps disagree: spread {s:.2f} s > {eps:g} s"
                                     for s in spread[disagree]]
    keep = rejected_reason == ""
    rejected = [{"id": clips["id"].iloc[i], "row": rows[i], "reason": rejected_reason.iloc[i]}
                for i in np.flatnonzero(~keep.to_numpy())]
    return Manifest(clips[keep].reset_index(drop=True), rejected, path, len(raw))
