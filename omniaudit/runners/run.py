"""Put a judge in front of a dataset config and write the predictions file every audit reads.

SPEC: ``hf:PATH_OR_REPO`` (local Transformers model), ``openai:MODEL@URL`` (OpenAI-compatible chat server) or
``scripted:NAME`` (reference judges).

Predictions (JSONL, one row per item and sampled run, run-major in the config's item order):

- ``id``, ``order`` (AB / BA for pairwise trials, else null), ``run`` (0-based, ``runs`` per item);
- ``raw``: the answer text;
- ``label``: the option it names (closed items; null when it names none, and always null for free-form items, which
  are generated, never matched against an option list) and ``parsed`` (``label`` is not null; null for free-form);
  ``unread`` (closed items whose text names no option) says why, a reason code of
  :data:`~.reading.REASONS` (``conflict``, ``negated``, ``hedged``, ``reversed``, ``noise``, ...);
- ``option_probs``: option -> probability for closed items where the runner has them (``hf:`` option logits,
  ``openai:`` servers that return logprobs) and the text agrees with them, else null; ``probs_dropped`` (only where
  they were dropped) says why: the text names no option or another one (:func:`~.reading.agreeing_probs`);
- ``answer_path``: how the answer was read. ``free``: no constraint was asked (every free-form item, and closed items
  under ``answer_format="free"``, the default: the papers' prompts and free text), the text read by
  :func:`~.reading.read_answer`; ``constrained``: the server was asked to constrain the reply to the options
  (``answer_format`` ``choice`` / ``json``, ``openai:`` only) and it conforms, so its option is taken as it stands;
  ``unconstrained``: a constraint was asked but the reply does not conform (the server ignored it), read as free text
  (a run warns, :class:`AnswerFormatWarning`); ``option_scores``: the runner scored the options (``hf:`` closed items
  with ``mode="logits"``). A non-default ``answer_format`` is recorded in the provenance's runner settings;
- ``temperature``, ``top_p``, ``seed``: the run's sampling settings (``seed`` is the run's own: seed + run);
- ``served_model`` and ``system_fingerprint``: the chat completion's own ``model`` and ``system_fingerprint`` (what
  the server says answered), only where the server gives them (``openai:``); a run warns (:class:`ServedModelWarning`)
  when a reply names another model than the one asked for, or the server does not list it under ``/models``;
- ``doc_hash`` and ``prompt_hash`` (SHA-256 hex, as lm-evaluation-harness's): the item as the judge saw it and the
  request as rendered for it, with the runner settings that shape it (:func:`row_hashes`); the same in every run of
  an item. A resumed run refuses journal answers kept under other hashes, a merge refuses shards that disagree on
  them, and every audit recomputes ``doc_hash`` from the dataset (files written before these fields pass unchecked);
- ``finish_reason`` (``stop``, ``length``, ...; null where the runner does not say) and ``provenance``: the
  dataset build's fingerprint and config, the judge spec (no credentials), the model's identity, the sampling,
  the item selection and the omniaudit version, the same in every row of the run
  (:mod:`omniaudit.predictions`, which every audit checks).

With ``shard=(I, N)`` only shard I of N is judged (:mod:`~omniaudit.runners.shards`) and each row also
carries ``shard``; ``merge_predictions`` joins the N files into the unsharded file, byte for byte. Under a
multi-process launcher (``accelerate launch -m omniaudit judge``), :func:`~.shards.judge_data_parallel` runs rank r of
N as shard r/N and merges the parts on the main process. ``limit=N`` (a smoke run) judges only a seeded, stratified
sample of at most N items of the selection, whole groups (:func:`~.shards.limit_positions`); the provenance's
selection records ``limit`` and ``limit_seed`` beside the selection's full ``items``, so every audit sees an
incomplete run (refused unless ``--partial``), and a limited file never merges with a full one.

Every runner is a :class:`~omniaudit.runners.base.Runner` (``hf:``, ``openai:``, ``scripted:`` and the plugins):
``answer(items, progress=None)`` returns one answer per item, in order: a ``str``, or an
:class:`~omniaudit.runners.items.Answer` (a ``str`` with ``option_probs``); a runner may instead give the
probabilities as ``option_probs`` aligned with its last answers, and the answers' paths as ``answer_paths`` (else
``free``; see ``answer_path`` above). What it can do is declared on it (``accepts``, ``renders``, ...), never probed;
``run_judge`` gives it each run's sampling (``set_sampling``).
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from omniaudit.answer_language import language, unreadable
from omniaudit.errors import InputError
from omniaudit.io import atomic_file, check_out_file, looks_like, output_lock
from omniaudit.predictions import ROW_HASHES, run_provenance
from omniaudit.records import canonical
from omniaudit.runners.base import Runner, as_runner
from omniaudit.runners.identity import runner_identity
from omniaudit.runners.items import JudgeItem, Sampling, doc_hash, load_items
from omniaudit.runners.payload import constrained_option
from omniaudit.runners.reading import agreeing_probs, read_answer
from omniaudit.runners.reasoning import split_reasoning
from omniaudit.runners.shards import shard_positions
from omniaudit.runners.transport import redact

CHUNK = 64  # items answered between two journal writes
MIN_USABLE = 0.2  # a run with fewer usable answers than this share writes nothing (--min-usable)
REFUSAL = re.compile(r"\s*(\[HTTP \d{3}\b|(i'?m|i am) (sorry|unable|not able)|sorry,? (but )?i|i (cannot|can'?t|"
                     r"won'?t|am not able to|do not have access|don'?t have access)|as an ai\b)", re.IGNORECASE)


def is_predictions_file(path: Path) -> bool:
    """An earlier predictions file of ``omniaudit judge`` (which a rerun may replace)."""
    return looks_like(path, {"id", "order", "raw", "label", "parsed"})


def default_cache() -> Path:
    return Path(os.environ.get("OMNIAUDIT_CACHE", Path.home() / ".cache" / "omniaudit")) / "judge-responses"


def check_sampling(temperature: float, top_p: float | None, runs: int = 1) -> None:
    if not (_is_number(temperature) and math.isfinite(temperature) and temperature >= 0):
        raise InputError("temperature must be a finite number >= 0", value=temperature)
    if top_p is not None and not 0 < top_p <= 1:
        raise InputError("top_p must be in (0, 1]", value=top_p)
    if runs < 1:
        raise InputError("runs must be >= 1", value=runs)


# make_judge's runner options and their ranges: integers in [low, high] (high None: no upper bound), positive numbers
INTEGER_OPTIONS = {"batch_size": (1, None), "max_tokens": (1, None), "concurrency": (1, None),
                   "max_retries": (0, None), "max_reply_bytes": (1, None), "max_frames": (1, None),
                   "top_logprobs": (0, 20)}
POSITIVE_OPTIONS = ("timeout_s", "fps")


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_runner_options(options: dict) -> None:
    """The :func:`make_judge` options given in ``options`` are in range, whatever the runner kind (``scripted:``
    ignores them, yet a wrong one is refused there too): InputError naming the option and its range, before any
    model is loaded or asked. (``hf:`` video sampling needs ``max_frames >= 2``: its runner says so.) The ``hf:``
    loading options (``device_map``, ``dtype``, ``load_in``, ``attn_implementation``) are checked for their values and
    for what they need of this machine (a CUDA device for ``load_in``: :func:`~.hf_loading.check_loading`)."""
    from omniaudit.runners.hf_loading import check_loading
    from omniaudit.runners.payload import ANSWER_FORMATS, DIALECTS

    for name, (low, high) in INTEGER_OPTIONS.items():
        value = options.get(name, low)
        if not (isinstance(value, numbers.Integral) and not isinstance(value, bool) and low <= cast(int, value)
                and (high is None or value <= high)):
            raise InputError(f"{name} must be an integer " + (f">= {low}" if high is None else f"in [{low}, {high}]"),
                             value=value)
    for name in POSITIVE_OPTIONS:
        value = options.get(name, 1.0)
        if not (_is_number(value) and math.isfinite(value) and value > 0):
            raise InputError(f"{name} must be a finite number > 0", value=value)
    for name, allowed in (("mode", ("logits", "generate")), ("dialect", DIALECTS),
                          ("answer_format", ANSWER_FORMATS)):
        if options.get(name, allowed[0]) not in allowed:
            raise InputError(f"{name} must be one of {', '.join(allowed)}", value=options[name])
    check_loading(options)


# per runner kind: the settings that change what a model is shown or how its answer is read (in the provenance, so a
# merge or a reuse never joins answers made under other settings); batch size, retries, caches and keys do not
INPUT_SETTINGS = {"hf": ("mode", "fps", "max_frames", "enable_thinking"),
                  "openai": ("dialect", "fps", "max_frames", "top_logprobs", "answer_format", "enable_thinking")}
# recorded only when not their default, so the provenance of runs made before they existed stays the same
RECORDED_WHEN_SET = {"answer_format": "free", "enable_thinking": None}
THINKING_TOKENS = 4096  # the least max_tokens under enable_thinking


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
    refused; no message echoes a secret of the spec. Every runner option is checked (:func:`check_runner_options`)
    before a runner is made.

    ``answer_format`` (``free``, ``choice``, ``json``): how closed items are answered (``openai:``, see
    :mod:`~omniaudit.runners.payload`). ``hf:`` with ``mode="logits"`` scores the options already and takes
    ``choice`` as it is; every other pairing with a runner that cannot constrain is refused before any model loads.

    ``hf:`` only: ``device_map`` (``auto`` / ``balanced`` / ``sequential`` / ``cpu`` / ``cuda:N``; default: the whole
    model on one device), ``dtype`` (``auto``: the checkpoint's own; ``bfloat16`` / ``float16`` / ``float32``),
    ``load_in`` (``4bit`` / ``8bit``: bitsandbytes, CUDA only) and ``attn_implementation`` (``eager`` / ``sdpa`` /
    ``flash_attention_2``) are given to ``from_pretrained`` (:mod:`~omniaudit.runners.hf_loading`).
    ``enable_thinking``: the chat template's thinking switch (``hf:``, ``openai:``; :func:`thinking_room`).
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


def thinking_room(max_tokens: int, enable_thinking: bool | None) -> int:
    """``max_tokens``, raised to :data:`THINKING_TOKENS` (with a warning) when thinking is switched on."""
    if enable_thinking and max_tokens < THINKING_TOKENS:
        warnings.warn(f"--enable-thinking: max_tokens raised from {max_tokens} to {THINKING_TOKENS} (a reasoning "
                      "trace cut off by the token limit leaves no answer)", stacklevel=3)
        return THINKING_TOKENS
    return max_tokens


def check_answer_format(kind: str, mode: str, answer_format: str) -> None:
    """Refuse an ``answer_format`` the runner ``kind`` cannot honour (see :func:`make_judge`)."""
    if answer_format == "free" or kind == "openai":
        return
    flag = f"--answer-format {answer_format}"
    if kind == "hf" and mode == "logits" and answer_format == "choice":
        return  # its closed items are answered by scoring each option already: their rows say option_scores
    if kind == "hf":
        raise InputError(f"{flag}: hf: judges cannot constrain generation; with --mode logits (the default) their "
                         "closed items are option-scored already (--answer-format choice is then accepted as it "
                         "is); constrained answers need a server (openai:)")
    if kind == "scripted":
        raise InputError(f"{flag}: scripted: judges answer by script and cannot constrain their answers; use "
                         "--answer-format free")
    if kind == "reward":
        raise InputError(f"{flag}: reward: judges answer by their rewards (option probabilities) already; use "
                         "--answer-format free")
    raise InputError(f"{flag}: only openai: (and hf: choice) constrain answers; a {kind}: runner answers free text "
                     "(--answer-format free)")


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


def _answer_path(judge: Runner, answers: list, i: int) -> str | None:
    """The path answer ``i`` took, where the runner says (its ``answer_paths`` aligned with its last answers)."""
    listed = judge.answer_paths
    return listed[i] if isinstance(listed, list) and len(listed) == len(answers) else None


def _option_probs(judge: Runner, answers: list, i: int) -> dict[str, float] | None:
    probs = getattr(answers[i], "option_probs", None)  # an Answer carries its own; a plain str has none
    if probs is None:
        listed = judge.option_probs
        if isinstance(listed, list) and len(listed) == len(answers):
            probs = listed[i]
    return {str(k): float(v) for k, v in probs.items()} if probs else None


SERVED_FIELDS = ("served_model", "system_fingerprint")  # a served model's own word on who answered, per row


class ServedModelWarning(UserWarning):
    """A served model's answers may not be the requested model's: a reply names another model, or the server does
    not list the requested one under ``/models``."""


def served_fields(answer) -> dict[str, str]:
    """The :data:`SERVED_FIELDS` an answer carries (an :class:`~.items.Answer` of a server that gave them), else
    none."""
    return {k: v for k in SERVED_FIELDS if isinstance(v := getattr(answer, k, None), str)}


def served_difference(kept: Iterable[dict], now: Iterable[dict]) -> str | None:
    """How the rows ``now`` differ from the ``kept`` rows in who answered them (their :data:`SERVED_FIELDS`, an
    absent one as null), e.g. ``system_fingerprint "fp-1" (kept) but "fp-2" now``; None when they agree."""
    kept, now = list(kept), list(now)
    parts = []
    for name in SERVED_FIELDS:
        was, is_ = ({json.dumps(r.get(name)) for r in rows} for rows in (kept, now))
        if was != is_:
            parts.append(f"{name} {', '.join(sorted(was))} (kept) but {', '.join(sorted(is_))} now")
    return "; ".join(parts) or None


class AnswerFormatWarning(UserWarning):
    """A server ignored the answer format asked (``--answer-format choice`` / ``json``) on some closed items: their
    replies did not conform and were read as free text (rows with ``answer_path: unconstrained``)."""


def _warn(progress: Callable[[str], None] | None, message: str, category: type[Warning] = ServedModelWarning) -> None:
    """A run's warning (default a :class:`ServedModelWarning`), on stderr and, where the run reports progress, there
    too."""
    warnings.warn(message, category, stacklevel=4)  # at the caller of run_judge
    if progress is not None:
        progress(f"warning: {message}")


def _served_note(identity, rows: list[dict]) -> str | None:
    """Why a served model's answers may not be the requested model's (see :class:`ServedModelWarning`), or None."""
    if not isinstance(identity, dict) or "served" not in identity:
        return None
    asked, notes = identity.get("model"), []
    if identity["served"] is None:
        notes.append(f"the server does not list the model {asked!r} under /models (or has none; the predictions' "
                     "provenance records served: null)")
    named = sorted({r["served_model"] for r in rows if r.get("served_model") not in (None, asked)})
    if named:
        notes.append(f"replies name the model {', '.join(map(repr, named))}, not the one asked for ({asked!r}): "
                     "another model may have answered")
    fingerprints = sorted({r["system_fingerprint"] for r in rows if isinstance(r.get("system_fingerprint"), str)})
    if len(fingerprints) > 1:
        notes.append(f"replies come from {len(fingerprints)} deployments (system_fingerprint "
                     f"{', '.join(map(repr, fingerprints))}): the server changed during the run")
    return "; ".join(notes) or None


def prediction_row(item: JudgeItem, raw: str, sampling: Sampling, probs: dict[str, float] | None,
                   provenance: dict | None = None, finish_reason: str | None = None,
                   served: dict[str, str] | None = None, path: str | None = None,
                   hashes: dict[str, str] | None = None) -> dict:
    """One predictions row (see the module docstring); ``served``: its :func:`served_fields`; ``path``: the answer's
    ``answer_path`` where the runner says (default ``free``); ``hashes``: its ``doc_hash`` and ``prompt_hash``
    (:func:`row_hashes`), placed before ``finish_reason`` and ``provenance``."""
    trace = getattr(raw, "reasoning", None)  # a server's reasoning_content, apart from the text
    raw = str(raw)
    label, dropped, unread = None, None, None
    path = path or "free"
    if item.closed:
        if path == "constrained":  # the server kept the reply to the options: its option, not a reading of it
            label = constrained_option(raw, item.options)
        if label is None:  # its question sentence, never the rest of the prompt; never the reasoning trace
            label, unread = read_answer(raw, item.options, item.prompt, trace)
        if label is None and probs and not raw.strip():  # a runner that scored the options without writing text
            label, unread, path = max(item.options, key=lambda o: cast(dict, probs).get(o, 0.0)), None, "option_scores"
        # the text wins over probabilities it contradicts (a sampled text is a draw from them)
        probs, dropped = agreeing_probs(raw, label, probs, sampled=bool(sampling.temperature))
    else:
        probs = None  # a free-form item is never scored against options
    record = sampling.record()
    row = {"id": item.id, "order": item.order, "run": record.pop("run"), "raw": raw, "label": label,
           "parsed": (label is not None) if item.closed else None, "option_probs": probs,
           "answer_path": path if item.closed else "free", **record}
    if unread:
        row["unread"] = unread  # why no option was read (reading.REASONS)
    reasoning = reasoning_length(raw, trace)
    if reasoning is not None:
        row["reasoning_chars"] = reasoning  # how much the model deliberated (the trace itself is never read)
    if dropped:
        row["probs_dropped"] = dropped
    row.update(served or {})
    row.update(hashes or {})
    if provenance is not None:
        row["finish_reason"] = finish_reason
        row["provenance"] = provenance
    return row


def reasoning_length(raw: str, trace: str | None) -> int | None:
    """Characters of reasoning in a reply (its ``<think>`` blocks) and a server's separate trace; None when none."""
    inline = split_reasoning(raw).reasoning
    if inline is None and not trace:
        return None
    return len(inline or "") + len(trace or "")


def usable(row: dict) -> bool:
    """An answer an audit can read: a closed item's named option (or option probabilities); a free-form item's
    non-empty text that is not a refusal, an error reply or noise (:func:`~omniaudit.answer_language.
    unreadable`). (Truncated text, ``finish_reason: length``, is usable
    when it named an option or said something.)"""
    if row["parsed"] is not None:
        return bool(row["parsed"]) or row["option_probs"] is not None
    return bool(row["raw"].strip()) and not REFUSAL.match(row["raw"]) and not unreadable(row["raw"])


@dataclass(kw_only=True)
class UnusableRun(InputError):
    """A judge run whose answers are mostly not answers; nothing is written. ``usable`` of ``total`` answers were
    usable (:func:`usable`)."""

    usable: int
    total: int


class RefusedItems(InputError):
    """A runner that cannot answer the items as asked (an option-picking scripted model on free-form items, a server
    rejecting them): the model does not answer them, no option or input of the run is wrong."""


def check_usable(rows: list[dict], spec: str, min_usable: float) -> None:
    """Stop (UnusableRun) when fewer than ``min_usable`` of the answers are usable: an audit would otherwise score
    a model that said nothing as a coin."""
    good = sum(map(usable, rows))
    if rows and good < min_usable * len(rows):
        bad = next(r for r in rows if not usable(r))
        length = sum(r.get("finish_reason") == "length" for r in rows)
        hint = (f"; {length} replies were cut by the token limit (finish_reason: length): raise --max-tokens"
                if length else "")
        raise UnusableRun(f"{spec} gave {good} usable answers of {len(rows)} (at least {min_usable:.0%} needed): "
                          f"empty replies, refusals, error replies, noise or no option named, e.g. item "
                          f"'{bad['id']}': {bad['raw'][:200]!r}{hint}. No predictions file was written "
                          f"(--min-usable 0 writes it anyway)", usable=good, total=len(rows))


def _say(progress: Callable[[str], None] | None, done: int, total: int, prefix: str = ""):
    """The runner's "k/n" progress within a chunk, as overall progress."""
    if progress is None:
        return None

    def say(message: str) -> None:
        k, sep, _ = message.partition("/")
        progress(f"{prefix}{done + int(k)}/{total}" if sep and k.isdigit() else f"{prefix}{message}")
    return say


def _journal(out: Path, provenance: dict, shard: tuple[int, int] | None) -> Path:
    """Where a run keeps its answers as they come (a rerun of the same run resumes from it)."""
    key = hashlib.sha256(canonical({"provenance": provenance, "shard": shard}).encode()).hexdigest()[:16]
    return out.with_name(f".{out.name}.journal-{key}.jsonl")


class _Journal:
    """A run's journal, opened (``append``: after the kept answers, else truncated) only when its first answer is
    written: a run that answers nothing, even one killed before its first answer, creates no file.

    A failed write (a full disk, a read-only folder) is raised naming the predictions file the journal belongs to
    (``out``; by default the one its name says: ``.NAME.journal-KEY.jsonl`` beside ``NAME``), never as a bare
    ``No space left on device`` (:func:`omniaudit.errors.writing`)."""

    def __init__(self, path: Path, append: bool, out: Path | None = None) -> None:
        self.fh: IO[str] | None
        self.path, self.append, self.fh = path, append, None
        self.out = out if out is not None else path.with_name(path.name[1:].rpartition(".journal-")[0] or path.name)

    def _writing(self):
        from omniaudit.errors import writing

        return writing(self.out)

    def write(self, line: str) -> None:
        with self._writing():
            if self.fh is None:
                self.fh = self.path.open("a" if self.append else "w", encoding="utf-8")
            self.fh.write(line)

    def flush(self) -> None:
        if self.fh is not None:
            with self._writing():
                self.fh.flush()

    def __enter__(self) -> _Journal:
        return self

    def __exit__(self, *exc) -> None:
        if self.fh is not None:
            with self._writing():
                self.fh.close()


def check_limit(limit) -> None:
    """``limit`` (judge a sample of at most N items) is None or an integer >= 1."""
    if limit is not None and not (isinstance(limit, numbers.Integral) and not isinstance(limit, bool)
                                  and cast(int, limit) >= 1):
        raise InputError("limit must be an integer >= 1", value=limit)


def _read_journal(path: Path, lines: dict[tuple[int, int], int] | None = None) -> dict[tuple[int, int], dict]:
    """Answers kept by an interrupted run: (run, position) -> row; a line torn by a kill is ignored. ``lines``, when
    given, is filled with each kept answer's line number in the journal."""
    kept: dict[tuple[int, int], dict] = {}
    if not path.is_file():
        return kept
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            entry = json.loads(line)
            key = (int(entry["run"]), int(entry["pos"]))
            kept[key] = entry["row"]
        except (ValueError, KeyError, TypeError):
            continue
        if lines is not None:
            lines[key] = n
    return kept


def request_settings(spec: str, judge_options: dict) -> dict:
    """The runner settings that change the request an item is sent as (the :data:`INPUT_SETTINGS` of ``spec``'s
    kind, as :func:`input_settings` records them): part of every row's ``prompt_hash``. Loading options, batch size,
    retries, caches, keys and the sampling are not (the sampling is in each row and its provenance)."""
    kind = spec.partition(":")[0]
    return {k: v for k, v in input_settings(spec, judge_options).items() if k in INPUT_SETTINGS.get(kind, ())}


def rendered_request(judge: Runner, item: JudgeItem) -> str:
    """The request ``item`` is sent as, as text: the runner's own ``render(item)`` (``hf:`` the chat template's text,
    ``openai:`` and ``scripted:`` the JSON messages with each media input as a stand-in carrying its size and
    SHA-256, :func:`~.payload.render_messages`); a runner without ``render`` gets the runner-independent messages of
    :func:`~.payload.render_messages`."""
    if judge.renders:
        return judge.render(item)
    from omniaudit.runners.payload import render_messages

    return render_messages(item)


def row_hashes(judge, item: JudgeItem, settings: dict) -> dict[str, str]:
    """A predictions row's ``doc_hash`` and ``prompt_hash`` (as lm-evaluation-harness's ``doc_hash`` /
    ``prompt_hash``), SHA-256 hex digests computed in this one place for every runner:

    - ``doc_hash``: the item as the judge saw it (:func:`~.items.doc_hash`: id, order, condition, system, prompt,
      options, gold / reference / specialist labels, the media inputs' columns, kinds and sizes), which an audit
      recomputes from the dataset (:func:`~omniaudit.predictions.check_row_hashes`);
    - ``prompt_hash``: the canonical JSON of ``{"request": rendered_request(judge, item), "settings": settings}``:
      the rendered request as sent (:func:`rendered_request`) and the runner settings that shape it
      (:func:`request_settings`). No secret, nonce, URL or sampling setting enters it, so it is the same in every run
      of an item (``--runs``) and on every machine. For ``hf:`` the rendered text holds the template's media
      placeholders, not the media (their sizes are in ``doc_hash``, their content in the dataset fingerprint)."""
    request = canonical({"request": rendered_request(judge, item), "settings": settings})
    return {"doc_hash": doc_hash(item), "prompt_hash": hashlib.sha256(request.encode()).hexdigest()}


def _check_kept_hashes(kept: dict[tuple[int, int], dict], lines: dict[tuple[int, int], int], journal: Path,
                       out: Path, expected: Callable[[int], dict[str, str]]) -> None:
    """Refuse to resume answers the journal kept for another item or request than this run would send: a kept row
    whose ``doc_hash`` / ``prompt_hash`` differs from ``expected(position)`` (or that carries none), named by its line
    in the journal. The dataset's item or the rendered prompt changed since (another template, runner option or
    omniaudit): its answers would be filed under the wrong request."""
    for key in sorted(kept, key=lambda k: lines.get(k, 0)):
        run, pos = key
        row, now = kept[key], expected(pos)
        changed = [name for name in ROW_HASHES if row.get(name) != now[name]]
        if not changed:
            continue
        what = " and ".join("the dataset's item" if n == "doc_hash" else "the rendered prompt" for n in changed)
        said = ("carries no " + " / ".join(changed) + " (kept by an omniaudit that did not record them)"
                if all(n not in row for n in changed) else
                f"has {', '.join(f'{n} {row.get(n)!r}' for n in changed)}, but this run would send "
                f"{', '.join(f'{n} {now[n]!r}' for n in changed)}: {what} changed since it was answered")
        raise InputError(f"the answer kept for item '{row.get('id')}' (run {run}) in this journal of {out} {said}. "
                         f"Its answers cannot be resumed: rerun with a fresh --out (or remove this journal)",
                         file=journal, row=lines.get(key), column=changed[0])


def _served_now(judge: Runner, items: list[JudgeItem], positions: list[int], kept: dict[tuple[int, int], dict],
                base: Sampling) -> dict:
    """What a served model says of itself now: one kept item asked again at its run's sampling, past the response
    cache (a row of its :data:`SERVED_FIELDS`)."""
    run, pos = min((k for k in kept if k[1] in positions), default=(0, positions[0]))
    judge.set_sampling(base.for_run(run))
    refresh, judge.refresh_cache = judge.refresh_cache, True
    try:
        answers = judge.answer([items[positions.index(pos)]])
    finally:
        judge.refresh_cache = refresh
    return served_fields(answers[0]) if answers else {}


def _drop_empty_journals(out: Path) -> None:
    """Remove the empty journals of ``out`` (a run that answered nothing: nothing to resume), under its lock."""
    try:
        entries = list(out.parent.iterdir())
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if name.startswith(f".{out.name}.journal-") and name.endswith(".jsonl") and entry.is_file() \
                and not entry.is_symlink() and not entry.stat().st_size:
            entry.unlink(missing_ok=True)


def run_judge(dataset: str | Path, config: str, spec: str, out: str | Path, conditions: list[str] | None = None,
              progress: Callable[[str], None] | None = None, formats: list[str] | None = None, *,
              temperature: float = 0.0, top_p: float | None = None, seed: int | None = None, runs: int = 1,
              shard: tuple[int, int] | None = None, min_usable: float = MIN_USABLE, dump_prompts: bool = False,
              limit: int | None = None, keep_journal: bool = False, extractor: str | None = None,
              **judge_options) -> dict:
    """Judge every item of ``config`` (optionally some conditions / formats; only a seeded sample of at most ``limit``
    items of that selection, :func:`~.shards.limit_positions`; shard I of N of those) ``runs`` times and write
    ``out`` (atomically, only after every answer is in).

    Answers are kept as they come in a journal beside ``out`` (chunks of :data:`CHUNK` items), so a killed run
    restarts where it stopped (for every runner; ``openai:`` also has its response cache). ``out``'s
    :func:`~omniaudit.io.output_lock` is held for the whole run, journal included: a second run on the same file
    (another process or thread) is refused at once with an InputError and writes nothing; a killed run's lock is
    released with its process. The journal is created with the first answer, so a run that writes nothing
    (refused, failed or interrupted before its first answer) leaves no journal. ``keep_journal``: keep the journal
    after ``out`` is written (its path in the counts, ``journal``), so a rerun resumes every answer without asking
    again (a data-parallel rank's part, removed by the main process after the merge). A run whose answers are
    mostly unusable (fewer than ``min_usable``, see :func:`check_usable`) writes nothing and raises UnusableRun.
    Every row records its provenance (:mod:`omniaudit.predictions`). ``dump_prompts`` adds a column
    ``rendered_prompt``: the exact prompt of the item as the runner sends it (its ``render(item)``: ``hf:`` the chat
    template's text, ``openai:`` the JSON messages with media as stand-ins without bytes), as lmms-eval's logged
    samples keep theirs.

    Returns counts: items, runs, rows, closed / parsed / with option probabilities, the answer format and the closed
    answers per ``answer_path``, free-form / generated (non-empty), resumed answers, and for remote judges HTTP
    requests, rejected items and replies that were not completions. Closed answers whose server ignored the answer
    format asked warn once (:class:`AnswerFormatWarning`).

    ``extractor``: a runner SPEC that reads the closed replies the rules did not understand (:mod:`~.rescue`); the
    rows it reads say ``read_by: extractor``.
    """
    with output_lock(out):  # from before the first answer to after the final write: one run per output file
        try:
            return _run_judge(dataset, config, spec, out, conditions, progress, formats, temperature=temperature,
                              top_p=top_p, seed=seed, runs=runs, shard=shard, min_usable=min_usable,
                              dump_prompts=dump_prompts, limit=limit, keep_journal=keep_journal, extractor=extractor,
                              **judge_options)
        finally:  # a run stopped before its first answer (refused, failed, interrupted) leaves no empty journal
            _drop_empty_journals(Path(out))


def _run_judge(dataset: str | Path, config: str, spec: str, out: str | Path, conditions: list[str] | None,
               progress: Callable[[str], None] | None, formats: list[str] | None, *, temperature: float,
               top_p: float | None, seed: int | None, runs: int, shard: tuple[int, int] | None, min_usable: float,
               dump_prompts: bool, limit: int | None, keep_journal: bool, extractor: str | None = None,
               **judge_options) -> dict:
    """:func:`run_judge`'s work, under ``out``'s lock."""
    from omniaudit.data_builders.fingerprint import fingerprint_of

    check_out_file(out, is_predictions_file)  # before any judging: never replace a file omniaudit did not write
    check_sampling(temperature, top_p, runs)
    if not 0 <= min_usable <= 1:
        raise InputError("min_usable must be in [0, 1]", value=min_usable)
    check_limit(limit)
    items, positions, selection, n_run = _select_items(dataset, config, conditions, formats, limit, seed, shard)
    base = Sampling(temperature, top_p, seed)
    judge = as_runner(make_judge(spec, sampling=base, **judge_options))
    if dump_prompts and not judge.renders:
        raise InputError(f"{redact(spec)} cannot render its prompts (its runner declares no render): run without "
                         "--dump-prompts")
    sampling = {"temperature": temperature, "top_p": top_p, "seed": seed, "runs": runs,
                "max_tokens": judge_options.get("max_tokens", 32)}
    provenance = run_provenance(dataset, config, fingerprint_of(dataset, config), redact(spec),
                                runner_identity(judge), sampling, selection, input_settings(spec, judge_options))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    journal = _journal(out, provenance, shard)
    settings = request_settings(spec, judge_options)
    hashed: dict[int, dict[str, str]] = {}  # position -> the item's row hashes, the same in every run

    def hashes(i: int) -> dict[str, str]:
        if i not in hashed:
            hashed[i] = row_hashes(judge, items[i], settings)
        return hashed[i]
    kept = _resumable(journal, out, judge, spec, items, positions, base, hashes, progress)
    resumed = len(kept)
    with _Journal(journal, append=bool(kept)) as log:
        for run in range(runs):
            _answer_run(judge, spec, items, positions, base.for_run(run), run, runs, kept, log, provenance, hashes,
                        progress)
    rendered: dict[int, str] = {}  # position -> the item's rendered prompt (--dump-prompts), the same in every run
    rows, asked = [], []
    for run in range(runs):
        for i in range(len(items)):
            row = dict(kept[(run, positions[i])])
            asked.append(items[i])
            if dump_prompts:
                if i not in rendered:
                    rendered[i] = judge.render(items[i])
                row["rendered_prompt"] = rendered[i]
            if shard:
                row["shard"] = {"index": shard[0], "count": shard[1], "items": n_run, "position": positions[i]}
            rows.append(row)
    rows = _settle_served_model(judge, spec, provenance, rows, progress)
    if extractor:
        from omniaudit.runners.rescue import rescue_unread

        rescue_unread(list(zip(rows, asked, strict=True)), extractor, progress,
                      **{k: v for k, v in judge_options.items() if k in ("cache_dir", "api_key_env", "dialect")})
    _warn_ignored_format(judge, spec, rows, judge_options.get("answer_format", "free"), progress)
    try:
        if not spec.startswith("scripted:"):  # reference models refuse by design (e.g. copy-reference, no reference)
            check_usable(rows, spec, min_usable)
    except UnusableRun:
        journal.unlink(missing_ok=True)  # the model's answers, not an interruption: a rerun asks again
        raise
    write_jsonl(out, rows)
    if not keep_journal:
        journal.unlink(missing_ok=True)
    return {**_run_summary(rows, judge, judge_options.get("answer_format", "free")), "items": len(items),
            "runs": runs, "resumed": resumed, "shard": f"{shard[0]}/{shard[1]}" if shard else None,
            "selected": selection["items"], "limit": selection.get("limit"),
            **({"journal": str(journal)} if keep_journal else {})}


def _select_items(dataset: str | Path, config: str, conditions: list[str] | None, formats: list[str] | None,
                  limit: int | None, seed: int | None, shard: tuple[int, int] | None
                  ) -> tuple[list[JudgeItem], list[int], dict, int]:
    """(this shard's items, their positions in the run, the selection the provenance records, the run's items)."""
    items = load_items(dataset, config, conditions, formats)
    selection: dict[str, Any] = {"conditions": conditions, "formats": formats, "items": len(items)}
    if limit is not None and limit < len(items):  # a smoke run: a seeded sample (a larger limit changes nothing)
        from omniaudit.runners.shards import limit_positions

        sample_seed = 0 if seed is None else seed
        sample = [items[p] for p in limit_positions(items, limit, sample_seed)]
        if not sample:  # every group is larger than the limit (both orders of a pair stay together)
            raise InputError(f"--limit {limit} holds no whole item group of config '{config}' (the orders of one "
                             "trial are judged together): raise --limit", value=limit)
        items = sample
        selection["limit"], selection["limit_seed"] = limit, sample_seed
    positions = shard_positions(items, *shard) if shard else list(range(len(items)))
    return [items[p] for p in positions], positions, selection, len(items)


def _resumable(journal: Path, out: Path, judge, spec: str, items: list[JudgeItem], positions: list[int],
               base: Sampling, hashes: Callable[[int], dict[str, str]], progress) -> dict[tuple[int, int], dict]:
    """The answers a killed run left in its journal that still stand: (run, position) -> row; none when the server's
    model changed since (never two served models in one file); their row hashes are checked against the items."""
    lines: dict[tuple[int, int], int] = {}
    kept = _read_journal(journal, lines)
    if kept and spec.startswith("openai:"):
        differ = served_difference(kept.values(), [_served_now(judge, items, positions, kept, base)])
        if differ:
            _warn(progress, f"{redact(spec)}: the server's model changed since the answers kept in {journal.name} "
                            f"({differ}): not resumed, every item is asked afresh")
            judge.refresh_cache = True  # the response cache holds the old model's replies too
            return {}
    if kept:
        judge.prepare(items)  # e.g. --dialect auto: decided on every item, as the run was
        index = {p: i for i, p in enumerate(positions)}
        kept = {k: row for k, row in kept.items() if k[1] in index}  # (the journal is this shard's: all are)
        _check_kept_hashes(kept, lines, journal, out, lambda pos: hashes(index[pos]))
    return kept


def _answer_run(judge, spec: str, items: list[JudgeItem], positions: list[int], run_sampling: Sampling, run: int,
                runs: int, kept: dict, log, provenance: dict, hashes: Callable[[int], dict[str, str]],
                progress) -> None:
    """Answer run ``run``'s items not yet kept, a chunk at a time, each row journaled as it comes."""
    judge.set_sampling(run_sampling)
    prefix = "" if runs == 1 else f"run {run + 1}/{runs}: "
    todo = [i for i in range(len(items)) if (run, positions[i]) not in kept]
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start:start + CHUNK]
        done = len(items) - len(todo) + start
        answers = judge.answer([items[i] for i in chunk], _say(progress, done, len(items), prefix))
        if len(answers) != len(chunk):
            raise InputError(f"{spec} returned {len(answers)} answers for {len(chunk)} items")
        for k, (i, answer) in enumerate(zip(chunk, answers, strict=True)):
            row = prediction_row(items[i], answer, run_sampling, _option_probs(judge, answers, k), provenance,
                                 getattr(answer, "finish_reason", None), served_fields(answer),
                                 _answer_path(judge, answers, k), hashes(i))
            kept[(run, positions[i])] = row
            log.write(json.dumps({"run": run, "pos": positions[i], "row": row}, ensure_ascii=False) + "\n")
        log.flush()


def _settle_served_model(judge, spec: str, provenance: dict, rows: list[dict], progress) -> list[dict]:
    """The rows with the served model as the server named it once the run is done (see runner_identity), and a
    warning when it is unlisted or differs from the one asked for."""
    model = provenance["model"]
    if isinstance(model, dict) and "served" in model and model["served"] is None:
        final = {**provenance, "model": runner_identity(judge, refresh=True)}
        rows = [{**row, "provenance": final} for row in rows]
        model = final["model"]
    note = _served_note(model, rows)
    if note:
        _warn(progress, f"{redact(spec)}: {note}")
    return rows


def _warn_ignored_format(judge, spec: str, rows: list[dict], answer_format: str, progress) -> None:
    ignored = sum(r.get("answer_path") == "unconstrained" for r in rows)
    if ignored:
        where = redact(judge.where or spec)
        _warn(progress, f"the server at {where} ignored --answer-format {answer_format} on {ignored} of "
                        f"{sum(r['parsed'] is not None for r in rows)} closed answers; their text was read as free "
                        "text", AnswerFormatWarning)


def _run_summary(rows: list[dict], judge, answer_format: str) -> dict:
    """What a judge run answered: rows, closed and parsed answers, probabilities, unread reasons, requests."""
    closed = [r for r in rows if r["parsed"] is not None]
    free = [r for r in rows if r["parsed"] is None]
    return {"rows": len(rows), "closed": len(closed), "parsed": sum(r["parsed"] for r in closed),
            "with_probs": sum(r["option_probs"] is not None for r in closed),
            "probs_dropped": sum("probs_dropped" in r for r in closed),
            "unread": dict(sorted(Counter(r["unread"] for r in closed if r.get("unread")).items())),
            "languages": dict(Counter(language(r["raw"]) for r in closed if r.get("unread") == "language")
                              .most_common()),
            "reasoning": sum("reasoning_chars" in r for r in rows),
            "extracted": sum(r.get("read_by") == "extractor" for r in closed),
            "answer_format": answer_format,
            "answer_paths": dict(sorted(Counter(r.get("answer_path", "free") for r in closed).items())),
            "free_form": len(free), "generated": sum(bool(r["raw"].strip()) for r in free),
            "usable": sum(map(usable, rows)),
            "requests": judge.requests_sent, "rejected": judge.rejected, "not_completions": judge.not_completions}


def answer_again(dataset: str | Path, config: str, spec: str, picks: list[tuple[int, int]], *,
                 temperature: float = 0.0, top_p: float | None = None, seed: int | None = None,
                 **judge_options) -> list[dict]:
    """Ask ``spec`` again for some answers of a run of ``config``, as :func:`run_judge` asked them: ``picks`` are
    (run, position) pairs (position: the item's place in the config's item order), each asked at its run's sampling
    by the same runner and read the same way (:func:`prediction_row`). Returns their rows (without provenance) in the
    order of ``picks``; nothing is written. The scorecard's canary: a kept predictions file of a served model is
    checked against what the server answers now."""
    check_sampling(temperature, top_p)
    items = load_items(dataset, config)
    base = Sampling(temperature, top_p, seed)
    judge = as_runner(make_judge(spec, sampling=base, **judge_options))
    rows: dict[tuple[int, int], dict] = {}
    for run in sorted({r for r, _ in picks}):
        sampling = base.for_run(run)
        judge.set_sampling(sampling)
        positions = [p for r, p in picks if r == run]
        answers = judge.answer([items[p] for p in positions])
        if len(answers) != len(positions):
            raise InputError(f"{redact(spec)} returned {len(answers)} answers for {len(positions)} items")
        for k, p in enumerate(positions):
            rows[(run, p)] = prediction_row(items[p], answers[k], sampling, _option_probs(judge, answers, k),
                                            served=served_fields(answers[k]), path=_answer_path(judge, answers, k))
    return [rows[pick] for pick in picks]


def write_jsonl(out: Path, rows: list[dict]) -> None:
    """Write ``rows`` as JSON lines to ``out`` atomically (:func:`omniaudit.io.atomic_file`: a temporary unique to this
    process, an ordinary file's permissions, renamed over ``out``; removed on failure), holding ``out``'s lock."""
    with atomic_file(out, lock=True) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
