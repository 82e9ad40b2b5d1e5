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


# ---- messy real-world shapes: any container/codec, channel layout, rate, late video or audio start, non-media -------

def layout_audio(seconds: float, layout: str = "stereo", rate: int = RATE, seed: int = 0) -> np.ndarray:
    """(channels, n) float32: a different band-limited noise per channel (so a downmix or a channel swap shows)."""
    import av

    n_channels = len(av.AudioLayout(layout).channels)
    return np.concatenate([noise_audio(seconds, seed + 100 * c, rate) for c in range(n_channels)])


def write_av(path: str | Path, seconds: float = 3.0, fps: int = 25, audio: np.ndarray | None = None,
             layout: str = "mono", rate: int = RATE, audio_codec: str = "aac", video_codec: str = "libx264",
             container: str | None = None, video_start: float = 0.0, audio_start: float = 0.0,
             with_video: bool = True, size=(96, 64)) -> Path:
    """A clip in any container (mp4 / matroska / webm / ipod for .m4a) with ``audio`` in ``layout`` at ``rate``.

    ``audio_codec``: aac, libopus (48 kHz only), flac, alac, pcm_s16le; ``video_codec``: libx264, libvpx-vp9, ...;
    ``video_start`` / ``audio_start``: the first frame's / first sample's time on the container clock (s);
    ``with_video=False`` writes an audio-only file. ``audio=None``: distinct noise per channel (:func:`layout_audio`).
    """
    from fractions import Fraction

    import av

    path = Path(path)
    container = container or {".mkv": "matroska", ".webm": "webm", ".m4a": "ipod"}.get(path.suffix, "mp4")
    y = layout_audio(seconds, layout, rate) if audio is None else np.asarray(audio, np.float32)
    with av.open(str(path), "w", format=container) as out:
        v = None
        if with_video:
            v = out.add_stream(video_codec, rate=fps)
            v.width, v.height, v.pix_fmt = size[0], size[1], "yuv420p"
            v.codec_context.thread_count = 1
            v.codec_context.time_base = Fraction(1, fps)
        a = out.add_stream(audio_codec, rate=rate, layout=layout) if audio_codec else None
        if v is not None:
            first = int(round(video_start * fps))
            for i in range(int(round(seconds * fps))):
                img = np.full((size[1], size[0], 3), (i * 9) % 255, np.uint8)
                frame = av.VideoFrame.from_ndarray(img, format="rgb24")
                frame.pts, frame.time_base = first + i, Fraction(1, fps)
                for p in v.encode(frame):
                    out.mux(p)
            for p in v.encode(None):
                out.mux(p)
        if a is not None:
            fmt = "fltp"
            data = np.ascontiguousarray(y)
            if audio_codec in ("flac", "alac", "pcm_s16le"):
                fmt, data = "s16p", (np.clip(y, -1, 32767 / 32768) * 32768).round().astype(np.int16)
            start = int(round(audio_start * rate))
            for i in range(0, data.shape[1], rate):
                frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(data[:, i : i + rate]), format=fmt,
                                                   layout=layout)
                frame.sample_rate, frame.pts = rate, start + i
                for p in a.encode(frame):
                    out.mux(p)
            for p in a.encode(None):
                out.mux(p)
    return path


def write_image(path: str | Path, size=(96, 64)) -> Path:
    """A PNG still (what ends up in a video manifest by mistake)."""
    import av

    path = Path(path)
    with av.open(str(path), "w", format="image2") as out:
        s = out.add_stream("png", rate=1)
        s.width, s.height, s.pix_fmt = size[0], size[1], "rgb24"
        frame = av.VideoFrame.from_ndarray(np.full((size[1], size[0], 3), 128, np.uint8), format="rgb24")
        for p in [*s.encode(frame), *s.encode(None)]:
            out.mux(p)
    return path


def write_truncated(src: str | Path, dst: str | Path, keep: float = 0.5) -> Path:
    """The first ``keep`` fraction of ``src``'s bytes (an interrupted download or copy)."""
    data = Path(src).read_bytes()
    Path(dst).write_bytes(data[: int(len(data) * keep)])
    return Path(dst)
