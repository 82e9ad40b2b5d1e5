"""A local Transformers model as a judge or answerer (``hf:PATH_OR_REPO``): any item of any audit dataset.

Model families: Qwen2.5-Omni and Qwen3-Omni (a thinker folder, or a full Omni checkpoint whose thinker is used, as
in training), Qwen2-Audio-style audio LMs, image-text-to-text models (Qwen2-VL style) and text-only causal LMs. What a
model takes is read from its config and processor (audio tower + feature extractor: audio; vision tower + image /
video processor: image / video; an omni model that interleaves a video's soundtrack: video+audio); an item with an
input it cannot take is refused before any forward pass, naming the item and the modality.

- Closed items (``options``) with ``mode="logits"`` (the default): every option is scored as a whole answer, its
  tokens plus the end of turn, after one forward pass over the prompts (``hf_scoring.score_options``); the answer
  is the most probable option (or, at a temperature > 0, one drawn from the option probabilities) and
  :attr:`HFJudge.option_probs` keeps the probabilities. ``mode="generate"`` generates and leaves parsing to the
  caller, like any text judge.
- Free-form items (no options) are always generated (batched, left padding), never scored against a list.
- Media: videos as frames at ``fps`` (at most ``max_frames``) with their own soundtrack when the item says so,
  images, separate audio parts; each unique source decoded and featurised once (``hf_media.MediaCache``, an LRU
  bounded by ``media_cache_bytes``), and encoded once: by the audio encoder of Qwen2-Audio-style models
  (``hf_encoders``), by the vision and audio encoders of a Qwen2.5-Omni thinker (``hf_omni_encoders``).
- Loading (:mod:`~omniaudit.runners.hf_loading`): ``device_map`` (``auto`` / ``balanced`` /
  ``sequential`` / ``cpu`` / ``cuda:N``; default: the whole model on one device), ``dtype``, ``load_in`` (``4bit`` /
  ``8bit``, bitsandbytes on CUDA) and ``attn_implementation``, given to ``from_pretrained``.
- Sampling (``temperature`` > 0, ``top_p``) draws per item from a generator seeded by (``seed``, item id, order):
  a sample does not depend on the batch or shard the item lands in.
- System text: a chat template that adds a default system prompt when the messages have none (Qwen2-Audio's adds
  "You are a helpful assistant.") keeps it for every item. An item's ``system`` text is appended to that default
  (default + a blank line + the item's text) instead of replacing it, so items that differ only in where a sentence
  sits (the protocols' reference placements) differ only there (:func:`default_system_prompt`,
  :func:`join_system`). :meth:`HFJudge.render` gives the exact prompt text an item is sent with.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, cast

from omniaudit.errors import InputError
from omniaudit.runners.base import Runner
from omniaudit.runners.hf_encoders import AudioEmbeddings
from omniaudit.runners.hf_loading import check_loading, from_pretrained_kwargs
from omniaudit.runners.hf_media import (
    DEFAULT_CACHE_BYTES,
    MediaCache,
    MediaDecoder,
    VideoSettings,
    batch_media,
    install_featurizers,
)
from omniaudit.runners.hf_omni_encoders import OmniEncoders
from omniaudit.runners.hf_scoring import item_seed, pick_option, row_sampler, score_options, softmax
from omniaudit.runners.items import JudgeItem, Sampling, check_modalities

AUTO_CLASSES = ("AutoModelForMultimodalLM", "AutoModelForImageTextToText", "AutoModelForCausalLM")
PROCESSOR_FILES = "processor_config.json / preprocessor_config.json"
_SENTINEL = "omniaudit-answer-sentinel"


SYSTEM_JOIN = "\n\n"  # between a template's default system prompt and an item's system text
_SYSTEM_SENTINEL = "omniaudit-system-sentinel"
_USER_SENTINEL = "omniaudit-user-sentinel"


def default_system_prompt(templater, user_as_list: bool = False, system_as_list: bool = False) -> str | None:
    """The system prompt ``templater``'s chat template adds when the messages have none (Qwen2-Audio's "You are a
    helpful assistant."), or None (no default, or a template that cannot be read this way).

    Read by rendering one user turn with a sentinel system message and without one: with a default, the two differ
    exactly where the sentinel stands. ``user_as_list`` / ``system_as_list``: the message contents as lists of parts
    (as a processor's template is given them) instead of strings."""
    def content(text: str, as_list: bool):
        return [{"type": "text", "text": text}] if as_list else text

    user = {"role": "user", "content": content(_USER_SENTINEL, user_as_list)}
    system = {"role": "system", "content": content(_SYSTEM_SENTINEL, system_as_list)}
    try:
        with_system = templater.apply_chat_template([system, user], tokenize=False, add_generation_prompt=True)
        without = templater.apply_chat_template([user], tokenize=False, add_generation_prompt=True)
    except Exception:  # noqa: BLE001 - a template that refuses a system message has no default to keep
        return None
    if not isinstance(with_system, str) or with_system.count(_SYSTEM_SENTINEL) != 1:
        return None
    head, tail = with_system.split(_SYSTEM_SENTINEL)
    if len(without) < len(head) + len(tail) or not (without.startswith(head) and without.endswith(tail)):
        return None
    default = without[len(head):len(without) - len(tail)]
    return default if default.strip() and _USER_SENTINEL not in default else None


def join_system(default: str | None, system: str | None) -> str | None:
    """The system text to send: None without an item system text (the template's default, if any, applies by itself),
    else the template's ``default`` + a blank line + the item's text (the item's text alone without a default)."""
    if not system:
        return None
    return f"{default}{SYSTEM_JOIN}{system}" if default else system


def media_towers(config) -> set[str]:
    """The encoders a model config declares: ``audio`` and/or ``vision`` (a full Omni config: its thinker's)."""
    cfg = getattr(config, "thinker_config", None) or config
    return {name for name in ("audio", "vision") if getattr(cfg, f"{name}_config", None) is not None}


class HFJudge(Runner):
    """``answer(items, progress)`` returns one raw answer text per item (the chosen option for closed items in
    logits mode) and sets ``option_probs``: per item, ``{option: probability}`` (closed items in logits mode) or
    None (generated answers), and ``answer_paths``: per item, ``option_scores`` or ``free`` (generated). ``accepts``
    is what the loaded model and its processor encode.
    """

    renders = True

    def __init__(self, path: str | Path, batch_size: int = 8, mode: str = "logits", max_new_tokens: int = 16,
                 device: str | None = None, min_new_tokens: int = 0, temperature: float = 0.0, top_p: float = 1.0,
                 seed: int = 0, fps: float = 2.0, max_frames: int = 32, dtype: str = "auto",
                 media_cache_bytes: int = DEFAULT_CACHE_BYTES, device_map: str | None = None,
                 load_in: str | None = None, attn_implementation: str | None = None,
                 enable_thinking: bool | None = None) -> None:
        import torch
        from transformers import AutoConfig

        if mode not in ("logits", "generate"):
            raise InputError("judge mode must be 'logits' or 'generate'", value=mode)
        if enable_thinking and mode != "generate":
            raise InputError("--enable-thinking needs --mode generate: a model that thinks first has no option at "
                             "the answer's first position to score")
        # the chat template's thinking switch, passed only when asked (None: the template's own default)
        self.template_kwargs = {} if enable_thinking is None else {"enable_thinking": enable_thinking}
        if batch_size < 1 or max_new_tokens < 1 or not 0 <= min_new_tokens <= max_new_tokens:
            raise InputError(f"expected batch_size >= 1 and 0 <= min_new_tokens <= max_new_tokens (>= 1), got "
                             f"{batch_size}, {min_new_tokens}, {max_new_tokens}")
        if temperature < 0 or not 0 < top_p <= 1:
            raise InputError(f"expected temperature >= 0 and 0 < top_p <= 1, got {temperature}, {top_p}")
        if device is not None and device_map is not None:
            raise InputError("give device or device_map, not both", value=(device, device_map))
        loading = {"device_map": "auto" if device == "auto" else device_map, "dtype": dtype, "load_in": load_in,
                   "attn_implementation": attn_implementation}
        check_loading(loading)  # before any file is read: one line, not an error deep inside from_pretrained
        self.path, self.batch_size, self.mode = str(path), batch_size, mode
        self.max_new_tokens, self.min_new_tokens = max_new_tokens, min_new_tokens
        self.temperature, self.top_p, self.seed = temperature, top_p, seed
        self.video = VideoSettings(fps, max_frames)
        try:
            config = AutoConfig.from_pretrained(self.path)
        except (OSError, ValueError) as exc:
            raise InputError(f"not a Transformers model folder or repo: {exc}", file=path) from exc
        self.towers = media_towers(config)
        self.processor, self.processor_error = self._load_processor()
        self.tokenizer = self.processor.tokenizer if self.processor is not None else self._load_tokenizer()
        if not self.tokenizer.chat_template and not getattr(self.processor, "chat_template", None):
            raise InputError("the model has no chat template; a judge needs one to build its prompts", file=path)
        self.tokenizer.padding_side = "left"  # the answer position is the last one in every row
        # the template's own system prompt, kept when an item brings a system text (see the module docstring)
        self.default_system = default_system_prompt(self.processor or self.tokenizer, self.processor is not None)
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.model = self._load_model(config, device, loading, torch)
        self.device = self.model.device
        forward = inspect.signature(self.model.forward).parameters
        self.prefill_kwargs = {"logits_to_keep": 1} if "logits_to_keep" in forward else {}
        self.accepts = self._accepted(forward)
        self.cache = MediaCache(media_cache_bytes)
        self.featurizers = install_featurizers(self.processor, self.cache) if self.processor is not None else []
        # Qwen2-Audio style: each clip's encoder output once (hf_encoders), not once per question
        self.audio_embeddings = AudioEmbeddings(self.model, self.cache) if AudioEmbeddings.applies(self.model) \
            else None
        # Qwen2.5-Omni: each source's vision / audio encoder output once (hf_omni_encoders), not once per question
        self.omni_encoders = OmniEncoders(self.model, self.cache) \
            if media_cache_bytes > 0 and OmniEncoders.applies(self.model) else None  # no cache: the model's own
        rate = getattr(getattr(self.processor, "feature_extractor", None), "sampling_rate", None) or 16000
        self.decoder = MediaDecoder(self.cache, rate, self.video)
        self.videos_kwargs = self._videos_kwargs()
        self.eos_ids = self._eos_ids()
        self.end_ids = self._end_of_answer()
        self._option_ids: dict[str, list[int]] = {}
        self.option_probs: list[dict[str, float] | None] = []
        self.answer_paths: list[str] = []  # per answer: option_scores (closed items, logits mode) or free

    # ---- loading -------------------------------------------------------------------------------------------------

    def _load_processor(self):
        """(processor, None) for a model with media encoders, (None, why) when its folder has none."""
        if not self.towers:
            return None, None
        from transformers import AutoProcessor

        try:
            processor = AutoProcessor.from_pretrained(self.path)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            return None, f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        if not hasattr(processor, "tokenizer"):
            return None, f"AutoProcessor gave a {type(processor).__name__}, not a processor"
        return processor, None

    def _load_tokenizer(self):
        from transformers import AutoTokenizer

        try:
            return AutoTokenizer.from_pretrained(self.path)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot load a tokenizer: {exc}", file=self.path) from exc

    def _load_model(self, config, device: str | None, loading: dict, torch):
        """The model with a generative head, loaded with the ``loading`` options (``hf_loading``); placed on
        ``device`` (default a GPU when there is one) unless a device map or a quantisation placed it."""
        import transformers

        kwargs = from_pretrained_kwargs(torch, **loading)
        model, refused = None, None
        for name in AUTO_CLASSES:
            try:
                model = getattr(transformers, name).from_pretrained(self.path, **kwargs)
                break
            except (ValueError, KeyError) as exc:  # not this auto class's model type: try the next one
                if not str(exc).startswith("Unrecognized configuration class"):
                    refused = refused or exc  # a real loading error (e.g. an attention kernel the model lacks)
                continue
        if model is None:
            why = f": {type(refused).__name__}: {str(refused).splitlines()[0]}" if refused is not None else ""
            raise InputError(f"no generative head for this model type ({type(config).__name__}){why}",
                             file=self.path)
        # a full Qwen-Omni checkpoint loads as thinker + talker: the thinker answers (training.common.load_omni)
        model = getattr(model, "thinker", model)
        if "device_map" not in kwargs and "quantization_config" not in kwargs:  # else placed by from_pretrained
            model.to(torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu")))
        return model.eval()

    def _accepted(self, forward) -> set[str]:
        proc = self.processor
        if proc is None:
            return set()
        accepts = set()
        if "audio" in self.towers and getattr(proc, "feature_extractor", None) is not None:
            accepts.add("audio")
        if "vision" in self.towers:
            accepts |= {kind for kind in ("image", "video") if getattr(proc, f"{kind}_processor", None) is not None}
        if {"audio", "video"} <= accepts and "use_audio_in_video" in forward:
            accepts.add("video+audio")  # the soundtrack is interleaved with the frames on one timeline
        return accepts

    def _videos_kwargs(self) -> dict:
        video_processor = getattr(self.processor, "video_processor", None)
        if video_processor is None:
            return {}
        out: dict[str, Any] = {}
        size = getattr(video_processor, "size", None)
        if size is not None:  # Qwen-Omni processors would put their class default over the saved size
            out["size"] = {k: v for k, v in dict(size).items() if v is not None}
        if hasattr(video_processor, "cap_pixels_per_frame"):  # Qwen-VL's reference (qwen-vl-utils) pixel budget
            out["cap_pixels_per_frame"] = True
        return out

    def _eos_ids(self) -> list[int]:
        eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        eos = [eos] if isinstance(eos, int) else list(eos or [])
        if self.tokenizer.eos_token_id is not None and self.tokenizer.eos_token_id not in eos:
            eos.append(self.tokenizer.eos_token_id)
        return eos

    def _end_of_answer(self) -> list[int]:
        """The tokens the chat template puts after an assistant answer, up to its end of turn (e.g. <|im_end|>)."""
        templater = self.processor or self.tokenizer
        messages: list[dict[str, Any]]
        messages = [{"role": "user", "content": "?"}, {"role": "assistant", "content": _SENTINEL}]
        if self.processor is not None:
            messages = [{"role": m["role"], "content": [{"type": "text", "text": m["content"]}]} for m in messages]
        try:
            rendered = templater.apply_chat_template(messages, tokenize=False)
        except Exception:  # templates that refuse this shape: fall back to the end-of-sequence token
            rendered = ""
        suffix = rendered.split(_SENTINEL, 1)[1] if _SENTINEL in rendered else ""
        ids = self.tokenizer(suffix, add_special_tokens=False).input_ids if suffix else []
        ends = [i for i, t in enumerate(ids) if t in self.eos_ids]
        if ends:
            return ids[: ends[0] + 1]
        if self.eos_ids:
            return [self.eos_ids[0]]
        raise InputError("the model has no end-of-turn or end-of-sequence token to end an option with",
                         file=self.path)

    # ---- answering -----------------------------------------------------------------------------------------------

    def answer(self, items: list[JudgeItem], progress=None) -> list[str]:
        self.check(items)
        raws: list[str | None] = [None] * len(items)
        probs: list[dict[str, float] | None] = [None] * len(items)
        done = 0
        batch_probs: Sequence[dict[str, float] | None]
        for scored, indices in self._plan(items):
            for start in range(0, len(indices), self.batch_size):
                chunk = indices[start : start + self.batch_size]
                batch = [items[i] for i in chunk]
                if scored:
                    answers, batch_probs = self._by_options(batch)
                else:
                    answers, batch_probs = self._generate(batch), [None] * len(batch)
                for i, a, p in zip(chunk, answers, batch_probs, strict=True):
                    raws[i], probs[i] = a, p
                done += len(chunk)
                if progress:
                    progress(f"{done}/{len(items)}")
        self.option_probs = probs
        self.answer_paths = ["option_scores" if item.closed and self.mode == "logits" else "free" for item in items]
        return cast(list[str], raws)  # every item answered by the plan

    def check(self, items: list[JudgeItem]) -> None:
        """Refuse, before any forward pass, what this model cannot answer (naming the item)."""
        for item in items:
            if item.media and self.processor is None and self.towers:
                raise InputError(f"item '{item.id}' has a {item.media[0].modality} input, but the model folder has "
                                 f"no processor ({PROCESSOR_FILES}) to featurise it: {self.processor_error}",
                                 file=self.path)
        check_modalities(items, f"hf:{self.path}", self.accepts)
        for item in items:
            if len({p.with_audio for p in item.media if p.kind == "video"}) > 1:
                raise InputError(f"item '{item.id}' mixes videos with and without their soundtrack; the model "
                                 "takes one setting per prompt")
            if len(set(item.options)) != len(item.options):
                raise InputError(f"item '{item.id}' lists an option twice", value=item.options)

    def _plan(self, items: list[JudgeItem]) -> list[tuple[bool, list[int]]]:
        """Groups that share a forward setup (scored or generated; with or without video soundtracks), items with
        the same media next to each other so their sources are decoded and featurised once."""
        groups: dict[tuple[bool, bool], list[int]] = {}
        first_seen: dict[tuple, int] = {}
        for i, item in enumerate(items):
            scored = item.closed and self.mode == "logits"
            soundtrack = any(p.kind == "video" and p.with_audio for p in item.media)
            groups.setdefault((scored, soundtrack), []).append(i)
            first_seen.setdefault(tuple(sorted(p.key for p in item.media)), i)
        return [(key[0], sorted(idx, key=lambda i: first_seen[tuple(sorted(p.key for p in items[i].media))]))
                for key, idx in groups.items()]

    def _prompt(self, item: JudgeItem) -> str:
        content: str | list[dict[str, str]]
        if self.processor is None:
            content = item.prompt
        else:
            content = [{"type": p.kind} for p in item.media] + [{"type": "text", "text": item.prompt}]
        system = join_system(self.default_system, item.system)
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": content}]
        return (self.processor or self.tokenizer).apply_chat_template(messages, tokenize=False,
                                                                      add_generation_prompt=True,
                                                                      **self.template_kwargs)

    def identity(self, refresh: bool = False) -> dict:
        """The local model's identity: every weight tensor hashed (cached by path, size and mtime), the Hub commit
        where it was loaded from the Hub."""
        from omniaudit.runners.identity import local_model_identity

        return local_model_identity(self.path)

    def set_sampling(self, sampling: Sampling) -> None:
        """The run's sampling as the local sampler reads it (a local sampler always needs a seed: run r uses r)."""
        self.sampling = sampling
        self.temperature = sampling.temperature
        self.top_p = 1.0 if sampling.top_p is None else sampling.top_p
        self.seed = sampling.seed if sampling.seed is not None else sampling.run

    def render(self, item: JudgeItem) -> str:
        """The exact text the chat template makes of ``item`` (media as the template's placeholder tokens, before the
        processor expands them), as it is sent to the model."""
        return self._prompt(item)

    def _encode(self, batch: list[JudgeItem]) -> tuple[dict, dict]:
        """(model inputs on the model's device, extra forward kwargs) for a batch of prompts with their media."""
        texts = [self._prompt(item) for item in batch]
        if self.processor is None:
            enc = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
            return {k: v.to(self.device) for k, v in enc.items()}, {}
        media = batch_media(self.decoder, batch)
        kwargs = media.processor_kwargs(self.video, self.videos_kwargs)
        if media.audio:
            kwargs["sampling_rate"] = self.decoder.rate
        with ExitStack() as stack:
            for featurizer in self.featurizers:
                stack.enter_context(featurizer.sources(media.sources))
            enc = self.processor(text=texts, return_tensors="pt", padding=True, padding_side="left", **kwargs)
        dtype = self.model.dtype
        inputs = {k: (v.to(self.device, dtype) if k.startswith("pixel_values") or k == "input_features"
                      else v.to(self.device)) for k, v in enc.items() if hasattr(v, "to")}
        if self.audio_embeddings is not None and "input_features" in inputs:
            inputs = self.audio_embeddings.merge(inputs, [media.sources[id(a)] for a in media.audio])
        if self.omni_encoders is not None:
            self.omni_encoders.expect(inputs, [media.sources[id(v)] for v in media.videos],
                                      [media.sources[id(a)] for a in media.audio])
        extra = {"use_audio_in_video": True} if any(i is not None for i in media.audio_from_video) else {}
        return inputs, extra

    def option_tokens(self, option: str) -> list[int]:
        """An option as the model would answer it: its tokens, then the end of turn."""
        if option not in self._option_ids:
            self._option_ids[option] = self.tokenizer(option, add_special_tokens=False).input_ids + self.end_ids
        return self._option_ids[option]

    def _by_options(self, batch: list[JudgeItem]) -> tuple[list[str], list[dict[str, float]]]:
        inputs, extra = self._encode(batch)
        sequences = [[self.option_tokens(o) for o in item.options] for item in batch]
        scores = score_options(self.model, inputs, extra, sequences, self.pad_id, self.prefill_kwargs)
        answers, probs = [], []
        for item, s in zip(batch, scores, strict=True):
            probs.append({o: float(p) for o, p in zip(item.options, softmax(s), strict=True)})
            answers.append(item.options[pick_option(s, self.temperature, self.top_p, item_seed(self.seed, item))])
        return answers, probs

    def _generate(self, batch: list[JudgeItem]) -> list[str]:
        import torch
        from transformers import GenerationConfig, LogitsProcessorList

        inputs, extra = self._encode(batch)
        # every decoding setting explicit: the model's own defaults (sampling, repetition penalty) stay out
        config = GenerationConfig(max_new_tokens=self.max_new_tokens, min_new_tokens=self.min_new_tokens,
                                  do_sample=False, repetition_penalty=1.0, no_repeat_ngram_size=0,
                                  eos_token_id=self.eos_ids, pad_token_id=self.pad_id)
        processors = LogitsProcessorList()
        if self.temperature > 0:
            processors.append(row_sampler([item_seed(self.seed, item) for item in batch], self.temperature,
                                          self.top_p))
        with torch.no_grad():
            out = self.model.generate(**inputs, **extra, generation_config=config, logits_processor=processors)
        new = out[:, inputs["input_ids"].shape[1] :]
        return [t.strip() for t in self.tokenizer.batch_decode(new, skip_special_tokens=True)]
