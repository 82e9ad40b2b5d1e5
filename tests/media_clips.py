"""Tiny media files for tests, written with PyAV: normal, silent-track-less, short-audio, late-audio and VFR clips."""

from __future__ import annotations

from pathlib import Path

import numpy as np

RATE = 16000


def noise_audio(seconds: float, seed: int, rate: int = RATE) -> np.ndarray:
    """Band-limited noise with a few clicks: a distinct, cross-correlatable signal per seed, (1, n) float32."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(int(round(seconds * rate)))
    x = np.convolve(x, np.ones(4) / 4, mode="same")  # keep energy below Nyquist so AAC keeps it
    return (0.3 * x / np.abs(x).max()).astype(np.float32)[None]


def write_clip(path: str | Path, seconds: float = 3.0, fps: int = 25, audio: np.ndarray | None = None,
               audio_start: float = 0.0, with_audio: bool = True, vfr: bool = False, size=(96, 64),
               rate: int = RATE) -> Path:
    import av

    path = Path(path)
    n_frames = int(round(seconds * fps))
    with av.open(str(path), "w", format="mp4") as out:
        v = out.add_stream("libx264", rate=fps)
        v.width, v.height, v.pix_fmt = size[0], size[1], "yuv420p"
        v.codec_context.thread_count = 1
        if vfr:  # irregular timestamps: a millisecond clock, frames at jittered times
            from fractions import Fraction

            v.codec_context.time_base = Fraction(1, 1000)
        a = out.add_stream("aac", rate=rate, layout="mono") if with_audio else None
        rng = np.random.default_rng(1)
        t_ms = np.cumsum(rng.choice([30, 50], n_frames)) - 30 if vfr else None
        for i in range(n_frames):
            img = np.full((size[1], size[0], 3), (i * 9) % 255, np.uint8)
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts = int(t_ms[i]) if vfr else i
            for p in v.encode(frame):
                out.mux(p)
        for p in v.encode(None):
            out.mux(p)
        if a is not None:
            y = noise_audio(seconds, 0, rate) if audio is None else audio
            frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(y, np.float32), format="fltp", layout="mono")
            frame.sample_rate, frame.pts = rate, int(round(audio_start * rate))
            for p in a.encode(frame):
                out.mux(p)
            for p in a.encode(None):
                out.mux(p)
    return path
