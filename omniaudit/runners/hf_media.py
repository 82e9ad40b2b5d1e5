"""Media for the local runner: each unique source is decoded and featurised once, bounded in memory.

Three diagnostic questions on one clip, or the two orders of one pair, share their media. :class:`MediaCache` is a
byte-bounded LRU keyed by the part's content hash (``MediaPart.key``) and the decoding settings; it holds

- decoded media: audio as float32 mono at the feature extractor's rate, images as RGB arrays, videos as frames at
  ``fps`` (at most ``max_frames``) plus their own soundtrack on the video's timeline (``omniaudit.video_window
  decode_clip``, the decoder the omni collators use, so a model is judged on what it was trained on);
- features: the output of the processor's feature extractor / image processor / video processor for one source.

:class:`CachedFeaturizer` stands in for one sub-processor of a Transformers processor: the processor's own
``__call__`` still builds the prompt (placeholder expansion, audio-in-video interleaving, tokenisation), but each
source it passes down is featurised on its own, once, and the per-source outputs are concatenated (padded to the
longest where the sub-processor pads per batch). Per-source featurisation also makes an item's features independent
of the batch it lands in.
"""

from __future__ import annotations

import io
import json
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from omniaudit.errors import InputError
from omniaudit.runners.items import JudgeItem, MediaPart, decode

DEFAULT_CACHE_BYTES = 2 * 1024**3
MAX_WINDOW_WARNINGS = 10  # videos named by MediaWindowWarning per run


class MediaWindowWarning(UserWarning):
    """A video runs past the frames the model gets (``max_frames`` at ``fps``): the model sees only its start."""
SUBPROCESSORS = ("feature_extractor", "image_processor", "video_processor")


def nbytes(value) -> int:
    """Memory held by an array, tensor, or a (nested) dict / list / dataclass of them."""
    if hasattr(value, "nbytes"):  # numpy arrays and torch tensors
        return int(value.nbytes)
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(nbytes(v) for v in value)
    if hasattr(value, "__dataclass_fields__"):
        return sum(nbytes(getattr(value, f)) for f in value.__dataclass_fields__)
    return 0


class MediaCache:
    """A least-recently-used map bounded by ``max_bytes`` (0: keep nothing, every lookup recomputes).

    ``misses`` counts computations per kind of entry (``decode:video``, ``features:video_processor``, ...), so a
    test or benchmark can check that a source is decoded and featurised once.
    """

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        if max_bytes < 0:
            raise InputError("the media cache budget must be >= 0 bytes", value=max_bytes)
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self.bytes = 0
        self.hits: dict[str, int] = {}
        self.misses: dict[str, int] = {}

    def get(self, kind: str, key: tuple, make: Callable[[], object]):
        full = (kind, *key)
        if full in self._entries:
            self._entries.move_to_end(full)
            self.hits[kind] = self.hits.get(kind, 0) + 1
            return self._entries[full][0]
        value = make()
        self.misses[kind] = self.misses.get(kind, 0) + 1
        size = nbytes(value)
        if size <= self.max_bytes:
            self._entries[full] = (value, size)
            self.bytes += size
            while self.bytes > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.bytes -= dropped
        return value

    def clear(self) -> None:
        self._entries.clear()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)


@dataclass(frozen=True)
class VideoSettings:
    """How a video is sampled: frames at ``fps``, at most ``max_frames`` (the clip's first max_frames / fps s)."""

    fps: float = 2.0
    max_frames: int = 32

    def __post_init__(self) -> None:
        if not self.fps > 0 or self.max_frames < 2:
            raise InputError(f"video sampling needs fps > 0 and max_frames >= 2 (frames are paired), got "
                             f"fps={self.fps}, max_frames={self.max_frames}")


def _video_seconds(data: bytes) -> float | None:
    """The video stream's duration from the container's metadata (None where it does not say)."""
    import av

    with av.open(io.BytesIO(data)) as c:
        stream = c.streams.video[0]
        if stream.duration and stream.time_base:
            return float(stream.duration * stream.time_base)
        return c.duration / 1e6 if c.duration else None  # type: ignore[union-attr]  # read mode: an InputContainer


def _decode_image(data: bytes) -> np.ndarray:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        return np.array(img.convert("RGB"))  # a writable copy


class MediaDecoder:
    """Decoded media of an item's parts, each unique source once (through the cache)."""

    def __init__(self, cache: MediaCache, rate: int, video: VideoSettings) -> None:
        self.cache, self.rate, self.video = cache, rate, video
        self.truncated: set[str] = set()  # sources longer than the sampled window (warned once each)

    def audio(self, part: MediaPart) -> np.ndarray:
        return self.cache.get("decode:audio", (part.key, self.rate), lambda: decode(part.data, self.rate))

    def image(self, part: MediaPart) -> np.ndarray:
        return self.cache.get("decode:image", (part.key,), lambda: _decode_image(part.data))

    def clip(self, part: MediaPart, item_id: str = "?"):
        from omniaudit.video_window import decode_clip

        def make():
            clip = decode_clip(part.data, self.video.fps, self.video.max_frames, self.rate)
            longer = (_video_seconds(part.data) or 0.0) > clip.frames_end + 0.5 / self.video.fps
            if longer and part.key not in self.truncated and len(self.truncated) < MAX_WINDOW_WARNINGS:
                self.truncated.add(part.key)
                warnings.warn(f"item '{item_id}': its video ({part.column}) runs past the {clip.frames_end:.1f} s "
                              f"the model gets ({self.video.max_frames} frames at fps={self.video.fps:g}); raise "
                              "max_frames or lower fps to show all of it", MediaWindowWarning, stacklevel=2)
            return clip

        key = (part.key, self.video.fps, self.video.max_frames, self.rate)
        return self.cache.get("decode:video", key, make)

    def decoded(self, item: JudgeItem, part: MediaPart):
        """The part decoded; an undecodable part is an error naming the item and its column."""
        try:
            if part.kind == "audio":
                return self.audio(part)
            if part.kind == "image":
                return self.image(part)
            return self.clip(part, item.id)
        except InputError as exc:
            raise InputError(f"item '{item.id}': its {part.kind} cannot be decoded: {exc.message}",
                             column=part.column) from exc
        except Exception as exc:  # soundfile / PIL / PyAV raise their own types on corrupt bytes
            raise InputError(f"item '{item.id}': its {part.kind} cannot be decoded ({type(exc).__name__}: {exc})",
                             column=part.column) from exc


@dataclass
class BatchMedia:
    """A batch's media as a processor takes them, in prompt order, and the source id of every decoded object."""

    images: list
    videos: list
    audio: list
    audio_from_video: list[int | None]  # per audio slot: None (standalone) or the index of the video it belongs to
    sources: dict[int, str]  # id(decoded object) -> source id, for CachedFeaturizer

    def processor_kwargs(self, video: VideoSettings, videos_kwargs: dict) -> dict:
        kwargs: dict = {}
        if self.images:
            kwargs["images"] = self.images
        if self.audio:
            kwargs["audio"] = self.audio
        if self.videos:  # frames are sampled already: the processor must not resample them
            kwargs.update(videos=self.videos, do_sample_frames=False, fps=video.fps)
            if videos_kwargs:
                kwargs["videos_kwargs"] = videos_kwargs
        if any(i is not None for i in self.audio_from_video):
            kwargs.update(audio_from_video_indices=self.audio_from_video, load_audio_from_video=True)
        return kwargs


def batch_media(decoder: MediaDecoder, items: list[JudgeItem]) -> BatchMedia:
    media = BatchMedia([], [], [], [], {})
    for item in items:
        for part in item.media:
            value = decoder.decoded(item, part)
            if part.kind == "audio":
                media.audio.append(value)
                media.audio_from_video.append(None)
                media.sources[id(value)] = f"audio:{part.key}:{decoder.rate}"
            elif part.kind == "image":
                media.images.append(value)
                media.sources[id(value)] = f"image:{part.key}"
            else:
                settings = f"{part.key}:{decoder.video.fps}:{decoder.video.max_frames}:{decoder.rate}"
                media.sources[id(value.frames)] = f"frames:{settings}"
                if part.with_audio:
                    media.audio.append(value.audio)
                    media.audio_from_video.append(len(media.videos))
                    media.sources[id(value.audio)] = f"soundtrack:{settings}"
                media.videos.append(value.frames)
    return media


def _concat(outputs: list[dict]) -> dict:
    """Per-source sub-processor outputs -> one batch output: tensors joined on dim 0 (padded with zeros where a
    sub-processor pads per batch, e.g. Qwen3-Omni's audio to the longest clip), lists joined."""
    import torch

    merged: dict[str, Any] = {}
    for key in outputs[0]:
        values = [o[key] for o in outputs]
        first = values[0]
        if isinstance(first, torch.Tensor):
            if first.ndim == 0:
                merged[key] = first
                continue
            shape = [max(v.shape[d] for v in values) for d in range(1, first.ndim)]
            padded = []
            for v in values:
                pad = []
                for d in reversed(range(1, v.ndim)):
                    pad += [0, shape[d - 1] - v.shape[d]]
                padded.append(torch.nn.functional.pad(v, pad) if any(pad) else v)
            merged[key] = torch.cat(padded, dim=0)
        elif isinstance(first, np.ndarray):
            merged[key] = np.concatenate(values, axis=0)
        elif isinstance(first, (list, tuple)):
            merged[key] = [x for v in values for x in v]
        else:
            merged[key] = first
    return merged


class CachedFeaturizer:
    """Stands in for a processor's feature extractor / image / video processor: featurises each source once.

    Inputs are recognised by the identity of the decoded objects the runner passed to the processor (registered
    for the duration of one call by :meth:`sources`); anything else is featurised as the wrapped sub-processor
    would (counted in ``uncached_calls``).
    """

    def __init__(self, inner, name: str, cache: MediaCache) -> None:
        self.inner, self.name, self.cache = inner, name, cache
        self._sources: dict[int, str] = {}
        self.uncached_calls = 0

    def __getattr__(self, attr: str):
        if attr in ("inner", "name", "cache", "_sources", "uncached_calls"):
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    @contextmanager
    def sources(self, sources: dict[int, str]) -> Iterator[None]:
        self._sources = sources
        try:
            yield
        finally:
            self._sources = {}

    def __call__(self, inputs=None, *args, **kwargs):
        from transformers import BatchFeature

        items = inputs if isinstance(inputs, (list, tuple)) else None
        if args or not items or any(id(x) not in self._sources for x in items):
            self.uncached_calls += 1
            return self.inner(inputs, *args, **kwargs)
        settings = json.dumps(kwargs, sort_keys=True, default=repr)
        outputs = [self.cache.get(f"features:{self.name}", (self._sources[id(x)], settings),
                                  lambda x=x: dict(self.inner([x], **kwargs))) for x in items]
        return BatchFeature(_concat(outputs))


def install_featurizers(processor, cache: MediaCache) -> list[CachedFeaturizer]:
    """Wrap the processor's sub-processors (in place) so that each source is featurised once."""
    wrapped = []
    for name in SUBPROCESSORS:
        inner = getattr(processor, name, None)
        if inner is not None and not isinstance(inner, CachedFeaturizer):
            setattr(processor, name, CachedFeaturizer(inner, name, cache))
            wrapped.append(getattr(processor, name))
    return wrapped
