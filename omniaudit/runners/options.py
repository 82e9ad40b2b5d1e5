"""The runner options :func:`~.factory.make_judge` and :func:`~.run.run_judge` take, checked before any model is
loaded or asked: the sampling, each option's range, the answer format a runner kind can honour, the thinking room
and a smoke run's ``limit``."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import cast

from omniaudit.errors import InputError

THINKING_TOKENS = 4096  # the least max_tokens under enable_thinking


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
    """The :func:`~.factory.make_judge` options given in ``options`` are in range, whatever the runner kind
    (``scripted:`` ignores them, yet a wrong one is refused there too): InputError naming the option and its range,
    before any model is loaded or asked. (``hf:`` video sampling needs ``max_frames >= 2``: its runner says so.) The
    ``hf:`` loading options (``device_map``, ``dtype``, ``load_in``, ``attn_implementation``) are checked for their
    values and for what they need of this machine (a CUDA device for ``load_in``:
    :func:`~.hf_loading.check_loading`)."""
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

def thinking_room(max_tokens: int, enable_thinking: bool | None) -> int:
    """``max_tokens``, raised to :data:`THINKING_TOKENS` (with a warning) when thinking is switched on."""
    if enable_thinking and max_tokens < THINKING_TOKENS:
        warnings.warn(f"--enable-thinking: max_tokens raised from {max_tokens} to {THINKING_TOKENS} (a reasoning "
                      "trace cut off by the token limit leaves no answer)", stacklevel=3)
        return THINKING_TOKENS
    return max_tokens


def check_answer_format(kind: str, mode: str, answer_format: str) -> None:
    """Refuse an ``answer_format`` the runner ``kind`` cannot honour (see :func:`~.factory.make_judge`)."""
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


def check_limit(limit) -> None:
    """``limit`` (judge a sample of at most N items) is None or an integer >= 1."""
    if limit is not None and not (isinstance(limit, numbers.Integral) and not isinstance(limit, bool)
                                  and cast(int, limit) >= 1):
        raise InputError("limit must be an integer >= 1", value=limit)

