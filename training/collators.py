"""Collators for omni models (Qwen2.5-Omni thinker, Qwen3-Omni): chat records with a video whose audio track is heard.

TRL has no audio/video preference collator, and its default paths silently drop pixels or audio. These collators
decode each example's embedded video (frames sampled at ``fps`` with PyAV, the audio track at the feature
extractor's rate), render the chat template, run the processor per example (``use_audio_in_video``: the audio is
interleaved into the video span), then:

- mask everything but the assistant's answer in the labels (media placeholders are never targets);
- truncate to ``max_length`` *before* padding and never inside a media span: only text after the last media token
  may be cut, and an example whose media alone exceed ``max_length`` is an error naming it;
- pad and concatenate the per-example media tensors.

``OmniSFTCollator`` feeds ``SFTTrainer`` (``labels``); ``OmniDPOCollator`` feeds ``DPOTrainer`` (the batch is all
chosen sequences, then all rejected ones, with ``completion_mask``, the media repeated for both halves).
"""

from __future__ import annotations

import io

import numpy as np
import torch

from omniaudit.errors import InputError

MEDIA_TOKENS = ("audio_token", "image_token", "video_token", "audio_bos_token", "audio_eos_token",
                "vision_bos_token", "vision_eos_token")
PER_SEQUENCE = ("input_ids", "attention_mask", "labels", "completion_mask")


def decode_video(data: bytes, fps: float, max_frames: int, audio_rate: int) -> tuple[np.ndarray, np.ndarray]:
    """(frames (T, H, W, 3) uint8 sampled at ``fps``, mono audio float32 at ``audio_rate``) from MP4/MKV bytes."""
    import av

    from omniaudit.data_builders.interventions.media import fit_length

    with av.open(io.BytesIO(data)) as c:
        stream = c.streams.video[0]
        frames, next_t = [], 0.0
        for frame in c.decode(stream):
            t = float(frame.pts * frame.time_base) if frame.pts is not None else next_t
            if t + 1e-6 >= next_t and len(frames) < max_frames:
                frames.append(frame.to_ndarray(format="rgb24"))
                next_t += 1.0 / fps
    if len(frames) % 2:  # the vision tower groups frames in temporal pairs
        frames.append(frames[-1])
    with av.open(io.BytesIO(data)) as c:
        if not c.streams.audio:
            audio = np.zeros(audio_rate, np.float32)
        else:
            resampler = av.AudioResampler(format="fltp", layout="mono", rate=audio_rate)
            chunks = [f.to_ndarray() for fr in c.decode(c.streams.audio[0]) for f in resampler.resample(fr)]
            audio = np.concatenate(chunks, axis=1)[0] if chunks else np.zeros(audio_rate, np.float32)
    duration = len(frames) / fps
    return np.stack(frames), fit_length(audio[None], int(duration * audio_rate))[0]


class _OmniBase:
    def __init__(self, processor, fps: float = 1.0, max_frames: int = 12, max_length: int | None = None,
                 video_column: str = "video", video_size: dict | None = None) -> None:
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

    def _video(self, example: dict) -> tuple[np.ndarray, np.ndarray]:
        cell = example.get(self.video_column)
        data = cell.get("bytes") if isinstance(cell, dict) else None
        if not data:
            raise InputError(f"example '{example.get('id')}' has no embedded video bytes in column "
                             f"'{self.video_column}'")
        return decode_video(data, self.fps, self.max_frames, self.rate)

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
                halves[side].append((ids[:keep], enc["attention_mask"][0][:keep], completion[:keep]))
            media.append({k: v for k, v in enc.items() if k not in PER_SEQUENCE})
        for side in ("chosen", "rejected"):
            for ids, mask, completion in halves[side]:
                seqs["input_ids"].append(ids)
                seqs["attention_mask"].append(mask)
                seqs["completion_mask"].append(completion)
        return self._pad(seqs, media, repeat=2)
