"""A runner for a judge SPEC (:func:`make_judge`: ``hf:``, ``openai:``, ``scripted:``, ``reward:`` and the plugins'
kinds), the local model kept between commands, and the runner settings a run records (:func:`input_settings`) or
hashes into every row's request (:func:`request_settings`)."""

from __future__ import annotations

import os
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.runners.items import Sampling
from omniaudit.runners.options import check_answer_format, check_runner_options, check_sampling, thinking_room

# per runner kind: the settings that change what a model is shown or how its answer is read (in the provenance, so a
# merge or a reuse never joins answers made under other settings); batch size, retries, caches and keys do not
INPUT_SETTINGS = {"hf": ("mode", "fps", "max_frames", "enable_thinking"),
                  "openai": ("dialect", "fps", "max_frames", "top_logprobs", "answer_format", "enable_thinking")}
# recorded only when not their default, so the provenance of runs made before they existed stays the same
RECORDED_WHEN_SET = {"answer_format": "free", "enable_thinking": None}


def default_cache() -> Path:
    return Path(os.environ.get("OMNIAUDIT_CACHE", Path.home() / ".cache" / "omniaudit")) / "judge-responses"


def input_settings(spec: str, judge_options: dict) -> dict:
    """The :data:`INPUT_SETTINGS` of ``spec``'s runner kind, with ``make_judge``'s defaults where not given (those of
    :data:`RECORDED_WHEN_SET` left out at their default); for ``hf:`` also its loading options (``device_map``,
    ``dtype``, ``load_in``, ``attn_implementation``), each only when not at its default
    (:func:`~.hf_loading.loading_settings`)."""
    import inspect

    from omniaudit.runners.hf_loading import loading_settings

    kind = spec.partition(":")[0]
    defaults = inspect.signature(make_judge).parameters
    settings = {k: judge_options.get(k, defaults[k].default) for k in INPUT_SETTINGS.get(kind, ())}
    if kind == "hf":
        settings.update(loading_settings(judge_options))
    return {k: v for k, v in settings.items() if RECORDED_WHEN_SET.get(k, object()) != v}


def make_judge(spec: str, *, sampling: Sampling | None = None, seed: int | None = None, batch_size: int = 8,
               mode: str = "logits", concurrency: int = 4, max_retries: int = 5, cache_dir: str | Path | None = None,
               use_cache: bool = True, api_key_env: str | None = None, allow_insecure_key: bool = False,
               max_tokens: int = 32, dialect: str = "vllm", timeout_s: float = 120.0, max_reply_bytes: int = 8 << 20,
               top_logprobs: int = 10, fps: float = 2.0, max_frames: int = 32, refresh_cache: bool = False,
               answer_format: str = "free", device_map: str | None = None, dtype: str = "auto",
               load_in: str | None = None, attn_implementation: str | None = None,
               enable_thinking: bool | None = None):
    """A runner for ``spec``. ``sampling`` (default: greedy, with ``seed``) is what it samples with.

    ``openai:MODEL@URL`` only: ``api_key_env`` names the environment variable whose key is sent (default: none to a
    loopback URL, ``OPENAI_API_KEY`` to any other host; ``"none"``: no key); a key over plain ``http://`` to a
    non-loopback host is refused unless ``allow_insecure_key``; ``timeout_s`` bounds each request as a whole and
    ``max_reply_bytes`` its reply (:mod:`~omniaudit.runners.openai_compat`); ``refresh_cache`` asks every
    request again and stores the new replies over the cached ones. A URL carrying credentials or a query string is
    refused; no message echoes a secret of the spec. Every runner option is checked
    (:func:`~.options.check_runner_options`) before a runner is made.

    ``answer_format`` (``free``, ``choice``, ``json``): how closed items are answered (``openai:``, see
    :mod:`~omniaudit.runners.payload`). ``hf:`` with ``mode="logits"`` scores the options already and takes
    ``choice`` as it is; every other pairing with a runner that cannot constrain is refused before any model loads.

    ``hf:`` only: ``device_map`` (``auto`` / ``balanced`` / ``sequential`` / ``cpu`` / ``cuda:N``; default: the whole
    model on one device), ``dtype`` (``auto``: the checkpoint's own; ``bfloat16`` / ``float16`` / ``float32``),
    ``load_in`` (``4bit`` / ``8bit``: bitsandbytes, CUDA only) and ``attn_implementation`` (``eager`` / ``sdpa`` /
    ``flash_attention_2``) are given to ``from_pretrained`` (:mod:`~omniaudit.runners.hf_loading`).
    ``enable_thinking``: the chat template's thinking switch (``hf:``, ``openai:``; :func:`~.options.thinking_room`).
    """
    from omniaudit.runners.transport import redact

    sampling = sampling or Sampling(seed=seed)
    check_sampling(sampling.temperature, sampling.top_p)
    check_runner_options({"batch_size": batch_size, "mode": mode, "concurrency": concurrency,
                          "max_retries": max_retries, "max_tokens": max_tokens, "dialect": dialect,
                          "timeout_s": timeout_s, "max_reply_bytes": max_reply_bytes, "top_logprobs": top_logprobs,
                          "fps": fps, "max_frames": max_frames, "answer_format": answer_format,
                          "device_map": device_map, "dtype": dtype, "load_in": load_in,
                          "attn_implementation": attn_implementation})
    max_tokens = thinking_room(max_tokens, enable_thinking)
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise InputError("judge must look like hf:PATH_OR_REPO, openai:MODEL@URL, scripted:NAME or reward:FOLDER",
                         value=redact(spec))
    check_answer_format(kind, mode, answer_format)
    if kind == "scripted":
        from omniaudit.runners.scripted import ScriptedJudge

        return ScriptedJudge(rest, sampling=sampling)
    if kind == "openai":
        from omniaudit.runners.openai_compat import OpenAIJudge

        at = min((i for i in (rest.find("@http://"), rest.find("@https://")) if i > 0), default=-1)
        if at < 0:  # the model is everything before the URL (a URL may hold an "@": it is then refused, redacted)
            raise InputError("openai judge must look like openai:MODEL@http(s)://HOST[:PORT]/v1", value=redact(spec))
        return OpenAIJudge(rest[:at], rest[at + 1:], (cache_dir or default_cache()) if use_cache else None,
                           concurrency=concurrency, max_retries=max_retries, timeout_s=timeout_s,
                           max_tokens=max_tokens, api_key_env=api_key_env, dialect=dialect, sampling=sampling,
                           top_logprobs=top_logprobs, fps=fps, max_frames=max_frames,
                           allow_insecure_key=allow_insecure_key, max_reply_bytes=max_reply_bytes,
                           refresh_cache=refresh_cache, answer_format=answer_format,
                           enable_thinking=enable_thinking)
    if kind == "reward":
        from omniaudit.runners.reward import RewardJudge

        return RewardJudge(rest, batch_size=batch_size)
    if kind == "hf":
        judge = loaded_model(rest, batch_size=batch_size, mode=mode, max_new_tokens=max_tokens, fps=fps,
                             max_frames=max_frames, device_map=device_map, dtype=dtype, load_in=load_in,
                             attn_implementation=attn_implementation, enable_thinking=enable_thinking)
        judge.set_sampling(sampling)
        return judge
    from omniaudit.runners.plugins import make_plugin_runner, plugin_kinds

    judge = make_plugin_runner(kind, rest, sampling=sampling, seed=seed)
    if judge is None:
        plugins = "".join(f", {k}:" for k in plugin_kinds())
        raise InputError(f"unknown judge kind; expected hf:, openai:, scripted:{plugins} or a runner plugin's kind "
                         "(omniaudit.runners.plugins)", value=redact(spec))
    return judge


_LOADED: dict[tuple, object] = {}  # the last local model loaded, by (path, settings): see loaded_model


def loaded_model(path: str, **settings):
    """An ``hf:`` runner for ``path`` with these settings, loaded once and kept while the next command of this
    process asks for the same model (``run-protocols`` judges four configs, an audit grades several runs): one
    model is kept at a time, so a different one frees it. :func:`release_models` frees it explicitly."""
    from omniaudit.runners.hf import HFJudge

    folder = Path(path)  # a folder rewritten in place (a new checkpoint) is another model
    stamp = tuple(sorted((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in folder.iterdir() if f.is_file())) \
        if folder.is_dir() else ()
    key = (str(path), stamp, tuple(sorted(settings.items())))
    if key not in _LOADED:
        release_models()
        _LOADED[key] = HFJudge(path, **settings)
    return _LOADED[key]


def release_models() -> None:
    """Free the kept local model (:func:`loaded_model`)."""
    _LOADED.clear()


def request_settings(spec: str, judge_options: dict) -> dict:
    """The runner settings that change the request an item is sent as (the :data:`INPUT_SETTINGS` of ``spec``'s
    kind, as :func:`input_settings` records them): part of every row's ``prompt_hash``. Loading options, batch size,
    retries, caches, keys and the sampling are not (the sampling is in each row and its provenance)."""
    kind = spec.partition(":")[0]
    return {k: v for k, v in input_settings(spec, judge_options).items() if k in INPUT_SETTINGS.get(kind, ())}

