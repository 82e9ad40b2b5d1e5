"""Collators for omni models (Qwen2.5-Omni thinker, Qwen3-Omni): chat records with a video whose audio track is heard.

TRL has no audio/video preference collator, and its default paths silently drop pixels or audio. These collators
decode each example's embedded video (:func:`decode_clip`: frames sampled at ``fps`` with PyAV and the audio track at
the feature extractor's rate, both on the video stream's own timeline), render the chat template, run the processor
per example (``use_audio_in_video``: the audio is interleaved into the video span), then:

- mask everything but the assistant's answer in the labels (media placeholders are never targets);
- truncate to ``max_length`` *before* padding and never inside a media span: only text after the last media token
  may be cut, and an example whose media alone exceed ``max_length``, or whose answer would lose every token, is an
  error naming it;
- warn (once per example) when the ``fps`` / ``max_frames`` window ends before the example's annotated event
  (``visual_time`` / ``audio_time`` columns, the sound moved by ``offset_s`` on a Shift);
- pad and concatenate the per-example media tensors.

``OmniSFTCollator`` feeds ``SFTTrainer`` (``labels``); ``OmniDPOCollator`` feeds ``DPOTrainer`` (the batch is all
chosen sequences, then all rejected ones, with ``completion_mask``, the media repeated for both halves).
"""

from __future__ import annotations

import io
import math
import warnings
from dataclasses import dataclass

import numpy as np
import torch

from omniaudit.errors import InputError

MEDIA_TOKENS = ("audio_token", "image_token", "video_token", "audio_bos_token", "audio_eos_token",
                "vision_bos_token", "vision_eos_token")
PER_SEQUENCE = ("input_ids", "attention_mask", "labels", "completion_mask")
EPS = 1e-6  # seconds: a frame whose timestamp is within this of a sampling instant counts as shown at it
MAX_WINDOW_WARNINGS = 20  # examples named by MediaWindowWarning per collator (each once), then silence


class MediaWindowWarning(UserWarning):
    """The frames/audio a model gets (``max_frames`` at ``fps``) end before the example's annotated event."""


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

    from omniaudit.data_builders.interventions.media import fit_length

    if not fps > 0 or max_frames < 1:
        raise ValueError(f"fps must be > 0 and max_frames >= 1, got fps={fps}, max_frames={max_frames}")
    try:
        frames, n_sampled, video_start, video_end = _sample_frames(data, fps, max_frames)
        window = min(n_sampled / fps, video_end)
        audio, audio_start = _decode_audio(data, audio_rate, video_start, window)
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
        for frame in c.decode(stream):
            if frame.pts is not None:
                t_abs = float(frame.pts * frame.time_base)
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
        end = t + frame_step
        while len(frames) < max_frames and len(frames) / fps < end - EPS:
            prev_rgb = prev.to_ndarray(format="rgb24") if prev_rgb is None else prev_rgb
            frames.append(prev_rgb)
    return frames, len(frames), start, end


def _decode_audio(data: bytes, rate: int, video_start: float, window: float) -> tuple[np.ndarray, float | None]:
    """Mono audio at ``rate`` from the video's first frame on (at most ``window`` s) and the track's start time."""
    import av

    with av.open(io.BytesIO(data)) as c:
        if not c.streams.audio:
            return np.zeros(0, np.float32), None
        resampler = av.AudioResampler(format="fltp", layout="mono", rate=rate)
        chunks, start, n = [], None, 0
        for frame in c.decode(c.streams.audio[0]):
            if start is None and frame.pts is not None:
                start = float(frame.pts * frame.time_base)
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


def event_times(example: dict) -> dict[str, float]:
    """The example's annotated event on the clip's timeline: ``{"sight": visual_time, "sound": audio_time}``.

    The sound moves with a Shift (``offset_s``); a muted or swapped clip does not carry the annotated sound.
    """
    def number(key: str) -> float | None:
        value = example.get(key)
        try:
            value = float(value)
        except (TypeError, ValueError):
            return None
        return value if math.isfinite(value) else None

    out = {}
    sight, sound = number("visual_time"), number("audio_time")
    if sight is not None:
        out["sight"] = sight
    intervention = example.get("intervention")
    if sound is not None and intervention not in ("mute", "swap"):
        moved = (number("offset_s") or 0.0) if intervention == "shift" else 0.0
        out["sound"] = sound + moved
    return out


class _OmniBase:
    def __init__(self, processor, fps: float = 1.0, max_frames: int = 12, max_length: int | None = None,
                 video_column: str = "video", video_size: dict | None = None) -> None:
        if not fps > 0 or max_frames < 1 or (max_length is not None and max_length < 1):
            raise InputError(f"expected fps > 0, max_frames >= 1 and max_length >= 1 (or none), got fps={fps}, "
                             f"max_frames={max_frames}, max_length={max_length}")
        self.processor, self.fps, self.max_frames, self.max_length = processor, fps, max_frames, max_length
        self.video_column = video_column
        size = video_size or getattr(processor.video_processor, "size", None)
        # the processor's class default would override the saved size (shared/notes/tiny-omni-models.md, pitfall 2)
        self.video_size = {k: v for k, v in dict(size).items() if v is not None} if size is not None else None
        tok = processor.tokenizer
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        self.media_ids = {tok.convert_tokens_to_ids(getattr(tok, name)) for name in MEDIA_TOKENS
                          if getattr(tok, name, None)}
        self.rate = processor.feature_extractor.sampling_rate
        self._warned: set[object] = set()

    def _video(self, example: dict) -> tuple[np.ndarray, np.ndarray]:
        cell = example.get(self.video_column)
        data = cell.get("bytes") if isinstance(cell, dict) else None
        if not data:
            raise InputError(f"example '{example.get('id')}' has no embedded video bytes in column "
                             f"'{self.video_column}'")
        try:
            clip = decode_clip(data, self.fps, self.max_frames, self.rate)
        except InputError as exc:
            raise InputError(f"example '{example.get('id')}': {exc.message}", column=self.video_column) from exc
        self._check_window(example, clip)
        return clip.frames, clip.audio

    def _check_window(self, example: dict, clip: DecodedClip) -> None:
        """Warn once per example when the sampled window ends before its annotated sight or sound."""
        ends = {"sight": clip.frames_end, "sound": clip.audio_end}
        late = {name: t for name, t in event_times(example).items() if t >= ends[name] - EPS}
        key = example.get("id")
        if not late or key in self._warned or len(self._warned) >= MAX_WINDOW_WARNINGS:
            return
        self._warned.add(key)
        what = " and ".join(f"the annotated {name} at {t:.2f} s" for name, t in late.items())
        more = (f" (warned for {MAX_WINDOW_WARNINGS} examples; further ones are not reported)"
                if len(self._warned) == MAX_WINDOW_WARNINGS else "")
        warnings.warn(f"example '{key}': {what} lies past the window the model gets ({clip.n_sampled} frames at "
                      f"fps={self.fps:g}, max_frames={self.max_frames}: video to {clip.frames_end:.2f} s, audio to "
                      f"{clip.audio_end:.2f} s); raise max_frames or lower fps so the answer stays checkable{more}",
                      MediaWindowWarning, stacklevel=3)

    def _encode(self, text: str, frames: np.ndarray, audio: np.ndarray) -> dict:
        kwargs = {"videos_kwargs": {"size": self.video_size}} if self.video_size else {}
        return self.processor(text=[text], videos=[frames], audio=[audio], audio_from_video_indices=[0],
                              load_audio_from_video=True,
                              do_sample_frames=False, fps=self.fps, return_tensors="pt", **kwargs)

    def _truncate(self, ids: torch.Tensor, example_id: object) -> int:
        """Length to keep: at most max_length, never inside (or before the end of) a media span."""
        n = ids.numel()
        if self.max_length is None or n <= self.max_length:
            return n
        media = torch.isin(ids, torch.tensor(sorted(self.media_ids)))
        last_media = int(torch.nonzero(media).max()) + 1 if media.any() else 0
        if last_media > self.max_length:
            raise InputError(f"example '{example_id}': its media take {last_media} tokens, more than max_length "
                             f"{self.max_length}; raise max_length or lower fps / max_frames")
        return self.max_length

    def _check_answer(self, targets: torch.Tensor, keep: int, n: int, prompt_len: int, example_id: object,
                      side: str = "answer") -> None:
        """An example must keep at least one answer token: else it trains on nothing (a silent zero-loss step)."""
        if int(targets[:keep].sum()) > 0:
            return
        if keep < n:
            raise InputError(f"example '{example_id}': truncation to max_length {self.max_length} leaves no {side} "
                             f"token (the prompt with its media takes {prompt_len} tokens); raise max_length or "
                             f"lower fps / max_frames")
        raise InputError(f"example '{example_id}': the {side} has no tokens to train on")

    def _pad(self, seqs: dict[str, list[torch.Tensor]], media: list[dict], repeat: int = 1) -> dict:
        width = max(s.numel() for s in seqs["input_ids"])
        batch = {}
        for key, rows in seqs.items():
            fill = self.pad_id if key == "input_ids" else (-100 if key == "labels" else 0)
            batch[key] = torch.stack([torch.cat([r, r.new_full((width - r.numel(),), fill)]) for r in rows])
        for key in media[0]:
            batch[key] = torch.cat([m[key] for m in media] * repeat, dim=0)
        batch["use_audio_in_video"] = True
        return batch


class OmniSFTCollator(_OmniBase):
    """``messages`` (user turn with a video item, then the answer) + ``video`` -> inputs, labels on the answer only."""

    def __call__(self, examples: list[dict]) -> dict:
        seqs: dict[str, list[torch.Tensor]] = {"input_ids": [], "attention_mask": [], "labels": []}
        media = []
        for ex in examples:
            frames, audio = self._video(ex)
            prompt = self.processor.apply_chat_template(ex["messages"][:-1], tokenize=False,
                                                        add_generation_prompt=True)
            full = self.processor.apply_chat_template(ex["messages"], tokenize=False)
            enc = self._encode(full, frames, audio)
            prompt_len = self._encode(prompt, frames, audio)["input_ids"].shape[1]
            ids = enc["input_ids"][0]
            keep = self._truncate(ids, ex.get("id"))
            labels = ids.clone()
            labels[:prompt_len] = -100
            labels[torch.isin(ids, torch.tensor(sorted(self.media_ids)))] = -100
            self._check_answer(labels != -100, keep, ids.numel(), prompt_len, ex.get("id"))
            seqs["input_ids"].append(ids[:keep])
            seqs["attention_mask"].append(enc["attention_mask"][0][:keep])
            seqs["labels"].append(labels[:keep])
            media.append({k: v for k, v in enc.items() if k not in PER_SEQUENCE})
        return self._pad(seqs, media)


class OmniDPOCollator(_OmniBase):
    """``prompt`` / ``chosen`` / ``rejected`` message lists + ``video`` -> TRL DPO inputs [chosen; rejected]."""

    def __call__(self, examples: list[dict]) -> dict:
        seqs: dict[str, list[torch.Tensor]] = {"input_ids": [], "attention_mask": [], "completion_mask": []}
        halves: dict[str, list] = {"chosen": [], "rejected": []}
        media = []
        for ex in examples:
            frames, audio = self._video(ex)
            prompt = self.processor.apply_chat_template(ex["prompt"], tokenize=False, add_generation_prompt=True)
            prompt_len = self._encode(prompt, frames, audio)["input_ids"].shape[1]
            for side in ("chosen", "rejected"):
                full = self.processor.apply_chat_template(ex["prompt"] + ex[side], tokenize=False)
                enc = self._encode(full, frames, audio)
                ids = enc["input_ids"][0]
                keep = self._truncate(ids, ex.get("id"))
                completion = torch.zeros_like(ids)
                completion[prompt_len:] = 1
                self._check_answer(completion, keep, ids.numel(), prompt_len, ex.get("id"), f"{side} answer")
                halves[side].append((ids[:keep], enc["attention_mask"][0][:keep], completion[:keep]))
            media.append({k: v for k, v in enc.items() if k not in PER_SEQUENCE})
        for side in ("chosen", "rejected"):
            for ids, mask, completion in halves[side]:
                seqs["input_ids"].append(ids)
                seqs["attention_mask"].append(mask)
                seqs["completion_mask"].append(completion)
        return self._pad(seqs, media, repeat=2)
