"""The protocol probes' clips: decoded once (16 kHz mono), checked up front, stored as FLAC cells."""

from __future__ import annotations

import hashlib
import io

import numpy as np
import pandas as pd

from omniaudit.data_builders.interventions.media import decode_audio
from omniaudit.errors import InputError

RATE = 16000
MIN_DBFS = -60.0  # quietest usable clip (RMS): the Cleanness noise is scaled to the signal, eGeMAPS needs a voice


def audio_cell(audio: np.ndarray, name: str) -> dict:
    """16 kHz mono, 16-bit FLAC (lossless, half the size of WAV)."""
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, np.clip(audio, -1, 1), RATE, format="FLAC", subtype="PCM_16")
    return {"bytes": buf.getvalue(), "path": f"{name}.flac"}


class ClipStore:
    """Decoded clips (16 kHz mono) and their audio cells, decoded once (:func:`load_clips` decodes all up front)."""

    def __init__(self, paths: dict[str, str]) -> None:
        self.paths = paths
        self.arrays: dict[str, np.ndarray] = {}
        self.cells: dict[str, dict] = {}

    def array(self, clip: str) -> np.ndarray:
        if clip not in self.arrays:
            self.arrays[clip] = decode_audio(self.paths[clip], RATE, 1)[0][0]
        return self.arrays[clip]

    def cell(self, clip: str) -> dict:
        if clip not in self.cells:
            self.cells[clip] = audio_cell(self.array(clip), clip)
        return self.cells[clip]


def load_clips(manifest: pd.DataFrame) -> tuple[ClipStore, dict[str, str]]:
    """Decode every clip once, before anything is built, and the content hash of each.

    A clip whose file cannot be decoded as audio, lasts under 0.1 s, or is silent or too quiet (RMS under
    ``MIN_DBFS``) fails here, naming its manifest row, id and file, whichever clips a seed would pick later.
    """
    first = manifest.drop_duplicates("id")
    store = ClipStore(dict(zip(first["id"], first["audio"], strict=True)))
    hashes = {}
    for clip, path, row in zip(first["id"], first["audio"], first["row"], strict=True):
        where = {"row": int(row), "column": "audio", "value": path}
        try:
            audio = decode_audio(path, RATE, 1)[0][0]
        except InputError as exc:
            raise InputError(f"clip '{clip}': not a usable audio file: {exc.message}", **where) from exc
        if audio.size < RATE // 10:
            raise InputError(f"clip '{clip}': audio shorter than 0.1 s ({audio.size / RATE:.3f} s)", **where)
        rms = float(np.sqrt(np.mean(audio.astype(np.float64) ** 2)))
        dbfs = 20 * np.log10(rms) if rms > 0 else -np.inf
        if dbfs < MIN_DBFS:
            raise InputError(f"clip '{clip}': silent or too quiet (RMS {dbfs:.1f} dBFS; at least {MIN_DBFS:.0f} dBFS "
                             f"is needed: Cleanness noise is scaled to the signal and eGeMAPS needs a voice); remove "
                             f"it from the manifest or fix the file", **where)
        store.arrays[clip] = audio
        hashes[clip] = hashlib.sha256(audio.tobytes()).hexdigest()
    return store, hashes
