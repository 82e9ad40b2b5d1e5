"""Check annotated audio event times against the signal (Thud appendix B rule 2: the acoustic event's timestamp is
verified "within ε_a = 0.5 seconds"; here by an energy-onset detector instead of, or before, a human).

The detector looks for the most salient sound onset of the clip: short-time energy in 10 ms frames (log scale), the
largest rise of a frame above the quietest frame of the preceding 100 ms, then the first frame of that rise that
reaches half of it (in dB), so the onset is placed where the sound starts, not where it peaks. Energies are clamped
from below (at 60 dB under the loudest frame, or the 10th percentile of the frames that carry sound when higher), so
digital silence (audio that starts late after zero padding, a muted stretch) is not read as a rise into the room
tone. It suits what the
paper keeps (a clear impact-like sound not dominated by music, speech or noise: rules 3-4); a clip whose
annotation disagrees with it by more than the tolerance is flagged for review, never rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.data_builders.interventions import media
from omniaudit.data_builders.interventions.manifest import EPS_AUDIO, read_rows, time_column
from omniaudit.errors import InputError

FRAME_S = 0.01
LOOKBACK_S = 0.1
MIN_RISE_DB = 12.0  # a weaker rise is not a clear onset (None)
FLOOR = 1e-10  # -100 dB: digital silence
SILENT_DB = -90.0  # a frame below this is digital silence (zeros: timeline padding, a late start)
SPAN_DB = 60.0  # rises are measured from at most this far below the loudest frame
QUIET_PERCENTILE = 10  # ... and from no lower than the quiet end of the frames that carry sound


def detect_onset(audio: np.ndarray, rate: int) -> float | None:
    """Seconds from the start of ``audio`` (1-D or (channels, n), summed to mono) to its most salient onset; None
    when nothing rises at least MIN_RISE_DB above what precedes it."""
    x = np.asarray(audio, np.float64)
    x = x.mean(axis=0) if x.ndim == 2 else x
    hop = max(1, int(round(FRAME_S * rate)))
    n = x.size // hop
    if n < 2:
        return None
    energy = 10 * np.log10(np.mean(x[: n * hop].reshape(n, hop) ** 2, axis=1) + FLOOR)
    sounding = energy[energy > SILENT_DB]
    if sounding.size == 0:
        return None
    # a clamped floor: digital silence before a late start (or a mute) is not a rise into the room tone
    energy = np.maximum(energy, max(energy.max() - SPAN_DB, float(np.percentile(sounding, QUIET_PERCENTILE))))
    back = max(1, int(round(LOOKBACK_S / FRAME_S)))
    lows = np.array([energy[max(0, i - back): i + 1].min() for i in range(n)])
    rise = energy - lows
    peak = int(np.argmax(rise))
    if rise[peak] < MIN_RISE_DB:
        return None
    base = lows[peak]
    start = max(0, peak - back)
    first = start + int(np.argmax(energy[start: peak + 1] >= base + rise[peak] / 2))
    return first * FRAME_S


@dataclass(frozen=True)
class OnsetCheck:
    tolerance_s: float
    table: pd.DataFrame  # id, annotated_audio_time, detected_onset, difference_s, disagrees

    def summary(self) -> dict:
        t = self.table
        return {"clips": len(t), "annotated": int(t["annotated_audio_time"].notna().sum()),
                "detected": int(t["detected_onset"].notna().sum()), "disagree": int(t["disagrees"].sum()),
                "tolerance_s": self.tolerance_s,
                "median_abs_difference_s": None if t["difference_s"].notna().sum() == 0
                else float(t["difference_s"].abs().median())}


def check_onsets(manifest: str | Path, tolerance_s: float = EPS_AUDIO, column: str = "audio_time") -> OnsetCheck:
    """Annotated vs detected audio onset for every clip of a video manifest (``column``: ``audio_time`` or an
    annotator's ``audio_time_NAME``). A clip disagrees when the difference exceeds ``tolerance_s``, or when one of
    the two is missing while the other is given (an annotated sound the signal does not show, or the reverse)."""
    if not (np.isfinite(tolerance_s) and tolerance_s >= 0):
        raise InputError("the tolerance must be a finite number of seconds >= 0", value=tolerance_s)
    path = Path(manifest)
    raw, rows, ids, videos = read_rows(path)
    if column not in raw.columns:
        raise InputError(f"the manifest has no column '{column}' to check", file=path, column=column)
    annotated = time_column(raw, column, path, rows)  # "2,5" or "abc" is an error, not "not annotated"
    records = []
    for clip_id, video, row, t in zip(ids, videos, rows, annotated, strict=True):
        try:
            info = media.probe(video)
            audio, _ = media.timeline_audio(info, None, 1)
        except InputError as exc:
            raise InputError(f"clip '{clip_id}' ({video}): {exc.message}", file=path, row=row, column="video") from exc
        onset = detect_onset(audio, int(info.audio_rate))
        diff = None if onset is None or pd.isna(t) else onset - float(t)
        disagrees = (diff is not None and abs(diff) > tolerance_s + 1e-9) or ((onset is None) != pd.isna(t))
        records.append({"id": clip_id, "row": row, "annotated_audio_time": None if pd.isna(t) else float(t),
                        "detected_onset": onset, "difference_s": diff, "disagrees": bool(disagrees)})
    return OnsetCheck(tolerance_s, pd.DataFrame(records))
