"""Full-size architectures with random weights, from the published configs shipped in ``omniaudit/real_configs/``
(nothing downloaded): the sizes the memory plan (:mod:`omniaudit.memory_plan`, ``omniaudit plan``), the CPU
benchmark (``benchmarks/real_size.py``) and ``scripts/gpu_check.sh --full`` work with.

Each folder of ``real_configs/`` is a checkpoint folder without weights or tokenizer:

- ``config.json``: the architecture as published (Hugging Face ``Qwen/...`` repos; for the omni models the
  ``thinker_config``, the part omniaudit judges with and trains), in transformers 5's keys (``rope_parameters``).
  ``qwen2.5-omni-7b-thinker``: transformers' ``Qwen2_5OmniThinkerConfig`` defaults are the 7B's, except the vision
  tower's width (1280 as published; the class default 3584 is its output width) and the untied LM head.
  ``qwen2.5-omni-3b-thinker``: the same towers, a 2048-wide language model (36 layers, 16 heads, 2 KV heads,
  intermediate 11008, vocabulary 151,936), towers projecting to 2048. ``qwen3-omni-30b-a3b-thinker``: 48 MoE
  layers (128 experts, 8 per token), 32 heads, 4 KV heads; its language model and head count 30.53 B parameters, the
  published figure. ``qwen2.5-7b-instruct``: the text model (7.62 B).
- ``preprocessor_config.json`` (omni): the published feature extractor (16 kHz, hop 160) and image processor
  (patch, merge and temporal patch sizes); ``video_preprocessor_config.json``: the frame bounds the model's
  processor applies to video by default (transformers' ``Qwen2_5OmniProcessor`` / ``Qwen3OmniMoeProcessor``).

Models are built with ``_from_config`` in bf16: on the ``meta`` device for counting (no memory), on a real device
for :func:`random_checkpoint` (random weights, saved with ``save_pretrained`` beside an offline tokenizer and
processor).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omniaudit.errors import InputError

REAL_CONFIGS = Path(__file__).resolve().parent / "real_configs"
# published model ids -> the folder of real_configs/ with their architecture
PUBLISHED = {"Qwen/Qwen2.5-7B-Instruct": "qwen2.5-7b-instruct", "Qwen/Qwen2.5-Omni-3B": "qwen2.5-omni-3b-thinker",
             "Qwen/Qwen2.5-Omni-7B": "qwen2.5-omni-7b-thinker",
             "Qwen/Qwen3-Omni-30B-A3B-Instruct": "qwen3-omni-30b-a3b-thinker"}
SOURCE_FRAME = (720, 1280)  # the frame size assumed for video token counts (720p), before the processor resizes it
# the processors' token ids the random checkpoints remap to the offline tokenizer's (omniaudit.tiny_models)
_OMNI_TOKENS = {"audio_token_index": "<|AUDIO|>", "image_token_index": "<|IMAGE|>", "video_token_index": "<|VIDEO|>",
                "audio_start_token_id": "<|audio_bos|>", "audio_end_token_id": "<|audio_eos|>",
                "vision_start_token_id": "<|vision_bos|>", "vision_end_token_id": "<|vision_eos|>",
                "user_token_id": "user"}


def real_config_names() -> list[str]:
    """The shipped architectures (folders of ``real_configs/``)."""
    return sorted(p.parent.name for p in REAL_CONFIGS.glob("*/config.json"))


def real_config_dir(name: str) -> Path:
    """The folder of shipped architecture ``name`` (a folder name or a published id, e.g. ``Qwen/Qwen2.5-Omni-7B``)."""
    key = PUBLISHED.get(name, name)
    if key not in real_config_names():
        raise InputError(f"no shipped architecture of this name; they are {', '.join(real_config_names())} (or the "
                         f"published ids {', '.join(PUBLISHED)})", value=name)
    return REAL_CONFIGS / key


def resolve_model(name_or_path: str | Path) -> Path:
    """The folder whose ``config.json`` describes ``name_or_path``: a local model folder as it is, else a shipped
    architecture (by folder name or published id)."""
    path = Path(name_or_path)
    if (path / "config.json").is_file():
        return path
    return real_config_dir(str(name_or_path))


def load_config(folder: str | Path):
    """The transformers config of a model folder."""
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(str(folder))


def is_omni(config) -> bool:
    """An omni thinker (audio and vision towers) rather than a text model."""
    return getattr(config, "audio_config", None) is not None and getattr(config, "vision_config", None) is not None


def build_model(config, device: str = "meta", seed: int = 0):
    """The model of ``config`` (its ``architectures[0]`` class, a causal LM or an omni thinker) in bf16 on
    ``device``: ``meta`` allocates nothing (shapes only), another device gets random weights (seeded)."""
    import torch
    import transformers

    name = (getattr(config, "architectures", None) or ["AutoModelForCausalLM"])[0]
    cls = getattr(transformers, name)
    if device != "meta":
        torch.manual_seed(seed)
    with torch.device(device):
        model = cls.from_config(config, dtype=torch.bfloat16) if name.startswith("Auto") else \
            cls._from_config(config, dtype=torch.bfloat16)
    return model


def decoder_of(model):
    """The language model (decoder stack) of a causal LM or an omni thinker, as the training scripts find it."""
    return model.get_decoder() if hasattr(model, "get_decoder") else model


@dataclass(frozen=True)
class Counts:
    """Parameter counts of a model: ``total`` (shared weights once), ``lm_head`` (0 when tied), and per part
    (``language_model``, ``audio_tower``, ``visual``, ``lm_head``)."""

    total: int
    lm_head: int
    parts: dict[str, int]


def count_parameters(model) -> Counts:
    """Count ``model``'s parameters by identity (works on the meta device, where every ``data_ptr`` is 0)."""
    seen: dict[int, int] = {}
    parts: dict[str, int] = {}
    for name, param in model.named_parameters(remove_duplicate=True):
        if id(param) in seen:
            continue
        seen[id(param)] = param.numel()
        part = name.split(".")[1] if name.startswith("model.") and name.count(".") > 1 else name.split(".")[0]
        part = "language_model" if part in ("layers", "embed_tokens", "norm", "rotary_emb") else part
        parts[part] = parts.get(part, 0) + param.numel()
    return Counts(sum(seen.values()), parts.get("lm_head", 0), parts)


def lora_modules(model, targets: list[str], language_model_only: bool = True) -> list[tuple[str, int, int]]:
    """``(name, in_features, out_features)`` of every linear layer LoRA adapts: its last name in ``targets``, in the
    language model only when ``language_model_only`` (training.common.language_model_only), never the LM head."""
    from torch import nn

    root = decoder_of(model) if language_model_only else model
    return [(name, module.in_features, module.out_features) for name, module in root.named_modules()
            if isinstance(module, nn.Linear) and name.rsplit(".", 1)[-1] in targets
            and not name.endswith("lm_head")]


def lora_parameters(model, targets: list[str], r: int, language_model_only: bool = True) -> int:
    """LoRA's trainable parameters: ``r * (in + out)`` per adapted linear layer (A and B, no bias)."""
    return sum(r * (fan_in + fan_out) for _, fan_in, fan_out in lora_modules(model, targets, language_model_only))


# ------------------------------------------------------------------------------------------------ media token counts
def _read_json(folder: Path, name: str) -> dict[str, Any]:
    path = folder / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def processor_settings(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(video processor, feature extractor) settings of a model folder: from ``processor_config.json`` as
    transformers 5 saves a processor, else the separate files of a published checkpoint (``real_configs/``)."""
    joint = _read_json(folder, "processor_config.json")
    video = joint.get("video_processor") or _read_json(folder, "video_preprocessor_config.json")
    audio = joint.get("feature_extractor") or _read_json(folder, "preprocessor_config.json")
    return video, audio


@dataclass(frozen=True)
class MediaTokens:
    """Tokens of one clip in the language model's sequence, and what the towers encode: ``video`` tokens
    (``patches`` before the spatial merge), ``audio`` tokens (``audio_frames`` encoder positions)."""

    frames: int
    seconds: float
    video: int
    patches: int
    audio: int
    audio_frames: int
    frame_size: tuple[int, int]


def frame_grid(folder: Path, max_pixels: int | None = None, frame: tuple[int, int] = SOURCE_FRAME) -> tuple[int, int]:
    """The (height, width) a source ``frame`` is resized to by the model's video processor (its frame bounds,
    ``max_pixels`` standing in for the upper one when a recipe sets ``video_max_pixels``)."""
    from transformers.models.qwen2_vl.video_processing_qwen2_vl import smart_resize

    video = processor_settings(folder)[0]
    if not video:
        raise InputError("the model has no video processor config", file=folder)
    factor = video["patch_size"] * video["merge_size"]
    low = video["size"]["shortest_edge"] if max_pixels is None else 56 * 56  # training/sft.py's video_size()
    high = video["size"]["longest_edge"] if max_pixels is None else max_pixels
    return smart_resize(frame[0], frame[1], factor=factor, min_pixels=low, max_pixels=high)


def audio_tokens(model_type: str, mel_frames: int) -> tuple[int, int]:
    """(tokens in the sequence, encoder positions) for ``mel_frames`` feature frames, as the processors count them:
    Qwen2.5-Omni halves twice (conv stride 2, then pooling: 25 tokens/s); Qwen3-Omni downsamples 8x per 100-frame
    chunk (13 tokens per full chunk). Mirrors transformers' ``_get_feat_extract_output_lengths`` of each processor."""
    if model_type.startswith("qwen3_omni"):
        leave = mel_frames % 100
        feat = (leave - 1) // 2 + 1
        tokens = ((feat - 1) // 2 + 1 - 1) // 2 + 1 + (mel_frames // 100) * 13
        return tokens, tokens
    conv = (mel_frames - 1) // 2 + 1
    return (conv - 2) // 2 + 1, conv


def media_tokens(folder: str | Path, fps: float, max_frames: int, max_pixels: int | None = None,
                 frame: tuple[int, int] = SOURCE_FRAME) -> MediaTokens:
    """The tokens of a clip at least ``max_frames / fps`` seconds long, sampled at ``fps`` up to ``max_frames``
    frames (training/collators.py), its soundtrack cut at the last frame, from the model's processor configs."""
    folder = Path(folder)
    config = load_config(folder)
    video, pre = processor_settings(folder)
    height, width = frame_grid(folder, max_pixels, frame)
    patch, merge, temporal = video["patch_size"], video["merge_size"], video["temporal_patch_size"]
    groups = math.ceil(max_frames / temporal)
    patches = groups * (height // patch) * (width // patch)
    seconds = max_frames / fps
    mel = int(seconds * pre["sampling_rate"] / pre["hop_length"])
    audio, positions = audio_tokens(config.model_type, mel)
    return MediaTokens(max_frames, seconds, patches // merge ** 2, patches, audio, positions, (height, width))


# ------------------------------------------------------------------------------------------ random-weight checkpoints
def omni_processor(folder: Path, tokenizer):
    """A Qwen2.5-Omni processor with the published settings of ``folder`` around an offline ``tokenizer``."""
    from transformers import (
        Qwen2_5OmniProcessor,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
        WhisperFeatureExtractor,
    )

    from omniaudit.tiny_models import CHAT_TEMPLATE

    pre = _read_json(folder, "preprocessor_config.json")
    video = _read_json(folder, "video_preprocessor_config.json")
    sizes = {k: pre[k] for k in ("patch_size", "temporal_patch_size", "merge_size")}
    return Qwen2_5OmniProcessor(
        image_processor=Qwen2VLImageProcessor(size={"shortest_edge": pre["min_pixels"],
                                                    "longest_edge": pre["max_pixels"]}, **sizes),
        video_processor=Qwen2VLVideoProcessor(size=video["size"], **sizes),
        feature_extractor=WhisperFeatureExtractor(feature_size=pre["feature_size"],
                                                  sampling_rate=pre["sampling_rate"], hop_length=pre["hop_length"],
                                                  chunk_length=pre["chunk_length"], n_fft=pre["n_fft"],
                                                  return_attention_mask=True),
        tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)


def checkpoint_config(name: str, tokenizer):
    """The shipped architecture ``name``'s config with its special-token ids moved to ``tokenizer``'s (the offline
    tokenizer of :mod:`omniaudit.tiny_models`; the vocabulary, and so every weight shape, stays the published one)."""
    config = load_config(real_config_dir(name))
    ids = tokenizer.convert_tokens_to_ids
    if is_omni(config):
        if config.model_type != "qwen2_5_omni_thinker":
            raise InputError("random checkpoints are built for Qwen2.5-Omni thinkers and text models", value=name)
        for key, token in _OMNI_TOKENS.items():
            setattr(config, key, ids(token))
    text = config.get_text_config()
    text.eos_token_id, text.pad_token_id, text.bos_token_id = tokenizer.eos_token_id, tokenizer.pad_token_id, None
    return config


def random_checkpoint(name: str, out: str | Path, device: str = "cpu", seed: int = 0,
                      max_shard_size: str = "2GB") -> Path:
    """Write a checkpoint folder of shipped architecture ``name`` with random bf16 weights (built on ``device``) and
    the offline tokenizer (a processor with the published settings for an omni thinker): a folder ``hf:`` judges
    and the training scripts load like a downloaded one. Shards of ``max_shard_size`` bound the memory
    ``save_pretrained`` adds while it writes."""
    from omniaudit.io import atomic_dir
    from omniaudit.tiny_models import build_tokenizer

    tokenizer = build_tokenizer()
    config = checkpoint_config(name, tokenizer)
    model = build_model(config, device=device, seed=seed)
    processing = omni_processor(real_config_dir(name), tokenizer) if is_omni(config) else tokenizer
    with atomic_dir(out) as tmp:
        model.save_pretrained(tmp, max_shard_size=max_shard_size)
        processing.save_pretrained(tmp)
    del model
    return Path(out)
