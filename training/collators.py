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

import math
import warnings

import numpy as np
import torch

from omniaudit.errors import InputError
from omniaudit.video_window import EPS, DecodedClip, decode_audio, decode_clip, decode_video  # noqa: F401

MEDIA_TOKENS = ("audio_token", "image_token", "video_token", "audio_bos_token", "audio_eos_token",
                "vision_bos_token", "vision_eos_token")
PER_SEQUENCE = ("input_ids", "attention_mask", "labels", "completion_mask")
MAX_WINDOW_WARNINGS = 20  # examples named by MediaWindowWarning per collator (each once), then silence


class MediaWindowWarning(UserWarning):
    """The frames/audio a model gets (``max_frames`` at ``fps``) end before the example's annotated event."""


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

    def _clip(self, example: dict) -> tuple[np.ndarray | None, np.ndarray]:
        """(frames, audio) of the example's video; (None, audio) when the media column is ``audio`` (a clip with no
        picture, e.g. ``omniaudit remedy label_following``'s set): the whole clip at the feature extractor's rate."""
        if self.video_column != "audio":
            return self._video(example)
        import av

        cell = example.get(self.video_column)
        data = cell.get("bytes") if isinstance(cell, dict) else None
        if not data:
            raise InputError(f"example '{example.get('id')}' has no embedded audio bytes in column 'audio'")
        try:
            audio, _ = decode_audio(data, self.rate, 0.0, math.inf)
        except av.error.FFmpegError as exc:
            raise InputError(f"example '{example.get('id')}': cannot decode the audio ({type(exc).__name__}: "
                             f"{exc})", column="audio") from exc
        if not audio.size:
            raise InputError(f"example '{example.get('id')}': the clip has no audio", column="audio")
        return None, audio

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

    def _encode(self, text: str, frames: np.ndarray | None, audio: np.ndarray) -> dict:
        if frames is None:  # audio only: the audio placeholders of the text take the clip
            return self.processor(text=[text], audio=[audio], return_tensors="pt")
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
        if self.video_column != "audio":
            batch["use_audio_in_video"] = True
        return batch


class OmniSFTCollator(_OmniBase):
    """``messages`` (user turn with a video item, then the answer) + ``video`` -> inputs, labels on the answer only;
    or an audio item + ``audio`` (``video_column="audio"``: the clip is heard, there is no picture)."""

    def __call__(self, examples: list[dict]) -> dict:
        seqs: dict[str, list[torch.Tensor]] = {"input_ids": [], "attention_mask": [], "labels": []}
        media = []
        for ex in examples:
            frames, audio = self._clip(ex)
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
