"""Chat-completions request bodies for an item: content parts for every modality, in one of three server dialects.

Every dialect sends the system text as a system message and one user message whose content is the item's media parts
in prompt order followed by the prompt text. Audio always goes as ``input_audio`` (16-bit PCM WAV, base64) and images
as ``image_url`` data URLs; the dialects differ only in how a video is sent:

- ``vllm`` (default): ``video_url`` with a data URL (MP4/WebM/MKV bytes as stored). A video whose own soundtrack is
  input sets ``mm_processor_kwargs: {"use_audio_in_video": true}`` on the request, so vLLM's Qwen2.5-Omni / Qwen3-Omni
  processors interleave that audio with the frames (TMRoPE). Use it for vLLM (``vllm serve``).
- ``openai``: the same parts and no server-specific fields. A video is sent as ``video_url`` (servers that take video
  without vLLM's processor options, e.g. ``transformers serve``); an item that asks for a video's soundtrack is
  refused before any request, because this dialect has no way to ask for it.
- ``frames``: no ``video_url`` at all: each video becomes a short text marker, ``image_url`` JPEG frames sampled at
  ``fps`` (at most ``max_frames``, on the video's own timeline) and, when its soundtrack is input, that soundtrack of
  the same window as ``input_audio``. Use it for OpenAI's API and Gemini's OpenAI-compatible endpoint, which take
  images and audio but no video, and for any server that rejects ``video_url``.

``auto`` (:data:`DIALECTS`, never a request's own dialect): the ``openai:`` runner asks the server what it is before
the first item and picks one of the three
(:meth:`~omniaudit.runners.openai_compat.OpenAIJudge.resolve_dialect`).

Closed items ask for ``logprobs`` / ``top_logprobs`` (unless ``top_logprobs`` is 0) so option probabilities can be read
from the reply. ``answer_format`` (:data:`ANSWER_FORMATS`) may also constrain a closed item's answer to its options:
``free`` (default) asks nothing more; ``choice`` asks for exactly one option, as vLLM's ``structured_outputs:
{"choice": OPTIONS}`` with ``vllm`` (vLLM >= 0.12, which removed ``guided_choice``) and as the OpenAI-standard
``response_format`` JSON schema with the other dialects; ``json`` asks for that JSON schema, ``{"answer": OPTION}``,
with every dialect (:func:`answer_schema`). Free-form items are never constrained. :func:`conforms` says whether a
reply kept the constraint it was asked (a server may ignore it).

Parts are built once per unique source (``MediaPart.key``), in a cache bounded in bytes, so three questions on one
clip or two orders of one pair encode (and, for ``frames``, decode) it once. :func:`render_messages` gives the
messages as JSON with stand-ins for the media bytes (``omniaudit judge --dump-prompts``).
"""

from __future__ import annotations

import base64
import io
import threading
from collections import OrderedDict
from dataclasses import dataclass

from omniaudit.errors import InputError
from omniaudit.runners.items import JudgeItem, MediaPart, Sampling, to_wav

SENT_DIALECTS = ("vllm", "openai", "frames")  # the dialects a request is built in
# what --dialect / make_judge take: "auto" = one of SENT_DIALECTS, chosen by the openai: runner from the server it asks
# and the items (vllm for vLLM, else frames when a video's own soundtrack is input, else openai); the default stays
# first (check_runner_options takes the first as the default)
DIALECTS = (*SENT_DIALECTS, "auto")
ANSWER_FORMATS = ("free", "choice", "json")
# what each dialect can send (MediaPart.modality values); auto picks one that can send every modality
ACCEPTS = {"vllm": {"audio", "image", "video", "video+audio"}, "openai": {"audio", "image", "video"},
           "frames": {"audio", "image", "video", "video+audio"}, "auto": {"audio", "image", "video", "video+audio"}}
AUDIO_RATE = 16000  # the soundtrack of a video sent as frames (Whisper-style encoders' rate)


def answer_schema(options: list[str]) -> dict:
    """The OpenAI-standard ``response_format`` asking for ``{"answer": <one of options>}`` and nothing else."""
    schema = {"type": "object", "properties": {"answer": {"type": "string", "enum": list(options)}},
              "required": ["answer"], "additionalProperties": False}
    return {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": schema}}


def json_answer(raw: str, options: list[str]) -> str | None:
    """The option a reply that is a JSON object names in its ``answer`` field, else None (also when a key repeats:
    ``{"answer": "A", "answer": "B"}`` keeps no constraint, and its free reading is a conflict)."""
    import json

    def pairs(items: list[tuple[str, object]]) -> dict:
        if len({k for k, _ in items}) < len(items):
            raise ValueError("a key repeats")
        return dict(items)

    try:
        obj = json.loads(raw, object_pairs_hook=pairs)
    except ValueError:
        return None
    return obj["answer"] if isinstance(obj, dict) and obj.get("answer") in options else None


def conforms(raw: str, options: list[str], kind: str) -> bool:
    """A reply keeps the constraint ``kind`` (:meth:`Payloads.constraint`): ``choice``, exactly one option (outer
    whitespace aside); ``json``, a JSON object whose ``answer`` is an option."""
    return raw.strip() in options if kind == "choice" else json_answer(raw, options) is not None


def constrained_option(raw: str, options: list[str]) -> str | None:
    """The option a conforming reply names (either form of :func:`conforms`), else None."""
    return raw.strip() if raw.strip() in options else json_answer(raw, options)


def data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def image_mime(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"GIF8"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "image/jpeg"


def video_mime(data: bytes) -> str:
    if data.startswith(b"\x1a\x45\xdf\xa3"):  # EBML: WebM or Matroska
        return "video/webm" if b"webm" in data[:64] else "video/x-matroska"
    return "video/mp4"


def audio_part(wav: bytes) -> dict:
    return {"type": "input_audio", "input_audio": {"data": base64.b64encode(wav).decode(), "format": "wav"}}


def image_part(data: bytes) -> dict:
    return {"type": "image_url", "image_url": {"url": data_url(data, image_mime(data))}}


def video_part(data: bytes) -> dict:
    return {"type": "video_url", "video_url": {"url": data_url(data, video_mime(data))}}


def _jpeg(frame) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(frame).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def _pcm_wav(audio, rate: int) -> bytes:
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, audio, rate, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def frame_parts(data: bytes, fps: float, max_frames: int, with_audio: bool) -> list[dict]:
    """A video as a text marker, its frames (JPEG ``image_url`` parts) and, if asked, its soundtrack (WAV)."""
    try:
        from omniaudit.video_window import decode_clip
    except ImportError as exc:  # the decoder lives with the collators, which import torch
        raise InputError(f"--dialect frames decodes videos with PyAV and omniaudit's clip decoder, which needs the "
                         f"[media] and [decode] extras ({exc})") from exc
    clip = decode_clip(data, fps, max_frames, AUDIO_RATE)
    frames = clip.frames[: clip.n_sampled]
    step = 1 / fps
    marker = (f"[video: {len(frames)} frames, one every {step:g} s from 0 s"
              + (", then its soundtrack over the same time]" if with_audio else "]"))
    parts = [{"type": "text", "text": marker}]
    parts += [image_part(_jpeg(f)) for f in frames]
    if with_audio:
        parts.append(audio_part(_pcm_wav(clip.audio, AUDIO_RATE)))
    return parts


@dataclass
class Payloads:
    """Request bodies for one model and dialect; media parts cached per source up to ``cache_bytes``."""

    model: str
    dialect: str = "vllm"
    max_tokens: int = 32
    top_logprobs: int = 10  # closed items: alternatives asked per position (0: no logprobs)
    fps: float = 2.0  # frames dialect
    max_frames: int = 32
    cache_bytes: int = 256 * 2**20
    answer_format: str = "free"  # closed items: ANSWER_FORMATS
    enable_thinking: bool | None = None  # the chat template's thinking switch (None: the template's own default)

    def __post_init__(self) -> None:
        if self.dialect not in SENT_DIALECTS:
            raise InputError(f"unknown dialect; expected one of {', '.join(SENT_DIALECTS)}", value=self.dialect)
        if self.answer_format not in ANSWER_FORMATS:
            raise InputError(f"unknown answer format; expected one of {', '.join(ANSWER_FORMATS)}",
                             value=self.answer_format)
        if not self.fps > 0 or self.max_frames < 1:
            raise InputError(f"expected fps > 0 and max_frames >= 1, got fps={self.fps}, "
                             f"max_frames={self.max_frames}")
        if not 0 <= self.top_logprobs <= 20:
            raise InputError("top_logprobs must be between 0 and 20 (the OpenAI API's range)",
                             value=self.top_logprobs)
        self._parts: OrderedDict[tuple, tuple[list[dict], int]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()
        self.built = 0  # media parts built (cache misses), for tests and reporting

    @property
    def accepts(self) -> set[str]:
        return ACCEPTS[self.dialect]

    def parts(self, part: MediaPart) -> list[dict]:
        """The content parts of one media input (cached per source and settings)."""
        key = (part.key, part.kind, part.with_audio)
        with self._lock:
            if key in self._parts:
                self._parts.move_to_end(key)
                return self._parts[key][0]
        parts = self._build(part)
        size = sum(len(str(p)) for p in parts)
        with self._lock:
            self.built += 1
            if key not in self._parts and size <= self.cache_bytes:
                self._parts[key] = (parts, size)
                self._held += size
                while self._held > self.cache_bytes:
                    _, (_, dropped) = self._parts.popitem(last=False)
                    self._held -= dropped
        return parts

    def _build(self, part: MediaPart) -> list[dict]:
        if part.kind == "audio":
            return [audio_part(to_wav(part.data))]
        if part.kind == "image":
            return [image_part(part.data)]
        if self.dialect == "frames":
            return frame_parts(part.data, self.fps, self.max_frames, part.with_audio)
        return [video_part(part.data)]

    def messages(self, item: JudgeItem) -> list[dict]:
        content = [p for part in item.media for p in self.parts(part)]
        content.append({"type": "text", "text": item.prompt})
        return ([{"role": "system", "content": item.system}] if item.system else []) + [
            {"role": "user", "content": content}]

    def render(self, item: JudgeItem) -> str:
        """The request's messages as JSON, each media input as a stand-in part without its bytes
        (:func:`render_messages`): what ``omniaudit judge --dump-prompts`` logs for an ``openai:`` judge."""
        return render_messages(item, "frames" if self.dialect == "frames" else "video_url")

    def constraint(self, item: JudgeItem) -> str | None:
        """What ``item``'s request constrains its reply to: ``choice`` (exactly one option), ``json`` (a JSON object
        naming one) or None (free-form items, and every item under ``answer_format="free"``)."""
        if not item.closed or self.answer_format == "free":
            return None
        return "choice" if self.answer_format == "choice" and self.dialect == "vllm" else "json"

    def body(self, item: JudgeItem, sampling: Sampling) -> dict:
        body = {"model": self.model, "messages": self.messages(item), "max_tokens": self.max_tokens,
                "temperature": sampling.temperature}
        if sampling.top_p is not None:
            body["top_p"] = sampling.top_p
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        if item.closed and self.top_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = self.top_logprobs
        constraint = self.constraint(item)
        if constraint == "choice":
            body["structured_outputs"] = {"choice": list(item.options)}
        elif constraint == "json":
            body["response_format"] = answer_schema(item.options)
        if self.dialect == "vllm" and any(p.kind == "video" and p.with_audio for p in item.media):
            body["mm_processor_kwargs"] = {"use_audio_in_video": True}
        if self.enable_thinking is not None:  # vLLM, SGLang and transformers serve pass it to the chat template
            body["chat_template_kwargs"] = {"enable_thinking": self.enable_thinking}
        return body


MEDIA_PART_TYPES = {"audio": "input_audio", "image": "image_url", "video": "video_url"}


def render_messages(item: JudgeItem, video: str = "video_url") -> str:
    """The chat messages an item is sent as (system message, then one user message: media parts in prompt order and
    the prompt text), as JSON, with each media input as a stand-in part that names it instead of carrying its bytes:
    ``{"type": "input_audio", "column": "audio_1", "bytes": 48044, "sha256": "..."}`` (``video``: the type a video
    goes as, ``video_url`` or ``frames``)."""
    import json

    def stand_in(part: MediaPart) -> dict:
        kind = video if part.kind == "video" else MEDIA_PART_TYPES[part.kind]
        return {"type": kind, "column": part.column, "bytes": len(part.data), "sha256": part.key,
                **({"with_audio": True} if part.with_audio else {})}

    content = [stand_in(part) for part in item.media] + [{"type": "text", "text": item.prompt}]
    messages = ([{"role": "system", "content": item.system}] if item.system else []) + [
        {"role": "user", "content": content}]
    return json.dumps(messages, ensure_ascii=False)
