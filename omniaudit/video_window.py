"""A clip's sampled frames and its soundtrack on the video stream's own timeline (PyAV, no torch).

One decoder for everything that shows a video to a model: the omni training collators, the ``hf:`` runner and the
``frames`` dialect of the server runner, so a model is judged on what it was trained on.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from omniaudit.errors import InputError

EPS = 1e-6  # seconds: a frame whose timestamp is within this of a sampling instant counts as shown at it


@dataclass
class DecodedClip:
    """A clip's frames and mono audio on the video stream's own timeline: t = 0 is the first frame's timestamp.

    Frame ``k`` is the picture shown at ``k / fps`` and audio sample ``n`` plays at ``n / rate``, so the two stay in
    sync whatever the streams' start times on the container's clock. The audio covers the sampled frames' window and
    never runs past the video's end.
    """

    frames: np.ndarray  # (T, H, W, 3) uint8; T is even (the vision tower pairs frames), the last may be a repeat
    audio: np.ndarray  # (n,) float32 at ``rate``: silence where the track starts late or ends early
    fps: float
    rate: int
    n_sampled: int  # frames sampled before the repeat that makes T even
    video_end: float  # first frame to the last frame's end, s (a lower bound when decoding stopped early)
    video_start: float  # the first frame's time on the container's clock (seconds)
    audio_start: float | None  # the audio track's first sample on the container's clock; None: no audio stream

    @property
    def frames_end(self) -> float:
        """Seconds of video the sampled frames stand for."""
        return min(self.n_sampled / self.fps, self.video_end)

    @property
    def audio_end(self) -> float:
        return self.audio.shape[0] / self.rate


def decode_clip(data: bytes, fps: float, max_frames: int, audio_rate: int) -> DecodedClip:
    """Frames at ``fps`` (at most ``max_frames``) and the mono audio at ``audio_rate`` from MP4/MKV/WebM bytes.

    Both are placed on the video stream's timeline (the container may start the video at 1.0 s, or the audio late):
    audio before the first frame is dropped, audio starting after it is delayed by silence, and the audio is cut at
    the end of the sampled window or of the video, whichever comes first.
    """
    import av

    from omniaudit.data_builders.interventions.audio_edits import fit_length

    if not fps > 0 or max_frames < 1:
        raise ValueError(f"fps must be > 0 and max_frames >= 1, got fps={fps}, max_frames={max_frames}")
    try:
        frames, n_sampled, video_start, video_end = _sample_frames(data, fps, max_frames)
        window = min(n_sampled / fps, video_end)
        audio, audio_start = decode_audio(data, audio_rate, video_start, window)
    except av.error.FFmpegError as exc:
        raise InputError(f"cannot decode the video ({type(exc).__name__}: {exc})") from exc
    if len(frames) % 2:  # the vision tower groups frames in temporal pairs
        frames.append(frames[-1])
    audio = fit_length(audio[None], int(round(window * audio_rate)))[0]
    return DecodedClip(np.stack(frames), audio, fps, audio_rate, n_sampled, video_end, video_start, audio_start)


def _sample_frames(data: bytes, fps: float, max_frames: int) -> tuple[list[np.ndarray], int, float, float]:
    """(frames shown at k / fps from the first frame, how many, first frame's time, end of the last frame seen)."""
    import av

    with av.open(io.BytesIO(data)) as c:
        if not c.streams.video:
            raise InputError("the file has no video stream")
        stream = c.streams.video[0]
        rate = stream.average_rate or stream.guessed_rate
        default_step = float(1 / rate) if rate else 1 / 25
        frames: list[np.ndarray] = []
        prev, prev_rgb, start, t, step = None, None, None, None, default_step
        for frame in c.decode(stream):  # type: ignore[union-attr]  # av.open(file object) reads: an InputContainer
            if frame.pts is not None:
                t_abs = float(frame.pts * frame.time_base)  # type: ignore[operator]  # decoded frames have a time_base
            else:  # no timestamp: one typical frame after the previous one
                t_abs = (start or 0.0) + (t + step if t is not None else 0.0)
            if start is None:
                start = t_abs
            if t is not None and t_abs - start > t:
                step = t_abs - start - t
            t = t_abs - start
            if t >= max_frames / fps - EPS and len(frames) == max_frames:
                return frames, len(frames), start, t  # the video covers the whole window: stop decoding
            while prev is not None and len(frames) < max_frames and t > len(frames) / fps + EPS:
                prev_rgb = prev.to_ndarray(format="rgb24") if prev_rgb is None else prev_rgb
                frames.append(prev_rgb)  # the previous frame is the picture shown at that instant
            prev, prev_rgb = frame, None
            duration = getattr(frame, "duration", None)
            frame_step = float(duration * frame.time_base) if duration and frame.time_base else step
        if prev is None:
            raise InputError("the video stream has no frames")
        assert start is not None and t is not None  # both set with the first frame
        end = t + frame_step
        while len(frames) < max_frames and len(frames) / fps < end - EPS:
            prev_rgb = prev.to_ndarray(format="rgb24") if prev_rgb is None else prev_rgb
            frames.append(prev_rgb)
    return frames, len(frames), start, end


def decode_audio(data: bytes, rate: int, video_start: float, window: float) -> tuple[np.ndarray, float | None]:
    """Mono audio at ``rate`` from the video's first frame on (at most ``window`` s) and the track's start time."""
    import av

    with av.open(io.BytesIO(data)) as c:
        if not c.streams.audio:
            return np.zeros(0, np.float32), None
        resampler = av.AudioResampler(format="fltp", layout="mono", rate=rate)
        chunks, start, n = [], None, 0
        for frame in c.decode(c.streams.audio[0]):  # type: ignore[union-attr]  # read mode: an InputContainer
            if start is None and frame.pts is not None:
                start = float(frame.pts * frame.time_base)  # type: ignore[operator]  # decoded frames have a time_base
            for f in resampler.resample(frame):
                chunks.append(f.to_ndarray()[0])
                n += chunks[-1].shape[0]
            if start is not None and n / rate > window + (video_start - start) + 1.0:
                break  # well past the window: the rest is never used
        chunks.extend(f.to_ndarray()[0] for f in resampler.resample(None))
    audio = np.concatenate(chunks).astype(np.float32) if chunks else np.zeros(0, np.float32)
    start = video_start if start is None else start
    lead = int(round((start - video_start) * rate))  # > 0: the track starts after the first frame
    audio = np.pad(audio, (lead, 0)) if lead > 0 else audio[-lead:]
    return audio, start


def decode_video(data: bytes, fps: float, max_frames: int, audio_rate: int) -> tuple[np.ndarray, np.ndarray]:
    """(frames (T, H, W, 3) uint8 at ``fps``, mono float32 audio at ``audio_rate``): see :func:`decode_clip`."""
    clip = decode_clip(data, fps, max_frames, audio_rate)
    return clip.frames, clip.audio
