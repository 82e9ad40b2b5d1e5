"""A reasoning model's trace, apart from its answer.

Reasoning models write their deliberation before the answer: ``<think>...</think>`` (Qwen3, DeepSeek-R1, QwQ),
``<thinking>``, ``<reasoning>`` or ``<reflection>`` blocks, Ollama's ``Thinking...`` / ``...done thinking.``, or
gpt-oss's harmony channels (``analysis`` the trace, ``final`` the answer);
some chat templates open the block in the prompt, so the reply holds only its end (``... </think>\\nB``). The
trace weighs options and often names the one it later drops ("The answer is A... wait"), so it is never read as the
answer: :func:`split_reasoning` returns the visible answer and
the trace apart, and a reply whose trace is cut off (no closing tag: the token limit came first) has no answer at all.
OpenAI-compatible servers that parse the trace themselves return it in a separate field (``reasoning_content``,
``reasoning``, ``thinking``); :func:`server_reasoning` takes it from there.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_TAGS = r"(?:think|thinking|reasoning|reflection|thought)"
_BLOCK = re.compile(rf"<({_TAGS})>(.*?)</\1\s*>", re.I | re.S)
_OPEN = re.compile(rf"<({_TAGS})>", re.I)
_CLOSE_ONLY = re.compile(rf"^(.*?)</({_TAGS})\s*>", re.I | re.S)  # the template opened the block in the prompt
_OLLAMA = re.compile(r"^\s*Thinking\.\.\.\s*\n(.*?)(?:\n\s*\.\.\.done thinking\.?\s*(?:\n|$)|$)", re.S)
# OpenAI's harmony format (gpt-oss) as a raw completion: the analysis channel is the trace, the final channel the
# answer ("<|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>final<|message|>B<|return|>")
_HARMONY = re.compile(r"<\|channel\|>\s*(\w+)\s*(?:<\|constrain\|>\s*\w+\s*)?<\|message\|>(.*?)"
                      r"(?=<\|(?:end|return|call|start|channel)\|>|$)", re.S)


class Reasoned(NamedTuple):
    """A reply split: the visible ``answer``, the ``reasoning`` trace (None when the reply had none) and whether the
    trace was ``cut`` off before its closing tag (then the reply has no answer)."""

    answer: str
    reasoning: str | None = None
    cut: bool = False


def _harmony(text: str) -> Reasoned | None:
    """A harmony-format completion split by channel; None when ``text`` is not one. Without a final channel the
    answer is unfinished (cut)."""
    channels = [(m.group(1).lower(), m.group(2)) for m in _HARMONY.finditer(text)]
    if not channels:
        return None
    trace = "\n".join(body.strip() for name, body in channels if name != "final") or None
    final = [body for name, body in channels if name == "final"]
    if not final:
        return Reasoned("", trace, True)
    return Reasoned(final[-1].strip(), trace)


def split_reasoning(text: str) -> Reasoned:
    """The visible answer of ``text`` and its reasoning trace (see the module docstring)."""
    harmony = _harmony(text)
    if harmony is not None:
        return harmony
    traces = []
    ollama = _OLLAMA.match(text)  # Ollama's "Thinking...\n...\n...done thinking."
    if ollama:
        if not ollama.group(0).rstrip().endswith("thinking."):
            return Reasoned("", ollama.group(1).strip(), True)
        traces.append(ollama.group(1))
        text = text[ollama.end():]
    head = _CLOSE_ONLY.match(text)
    if head and not _OPEN.search(head.group(1)):
        traces.append(head.group(1))
        text = text[head.end():]
    traces += [m.group(2) for m in _BLOCK.finditer(text)]
    text = _BLOCK.sub(" ", text)
    opened = _OPEN.search(text)
    if opened:  # cut off: everything from the open tag on is unfinished deliberation
        traces.append(text[opened.end():])
        return Reasoned(text[: opened.start()].strip(), "\n".join(traces).strip(), True)
    if not traces:
        return Reasoned(text)
    return Reasoned(text.strip(), "\n".join(t.strip() for t in traces))


_SERVER_FIELDS = ("reasoning_content", "reasoning", "thinking")


def server_reasoning(message: dict) -> str | None:
    """The reasoning trace an OpenAI-compatible server returned beside the content (vLLM's ``reasoning_content``,
    newer servers' ``reasoning``, ``thinking``), or None."""
    for field in _SERVER_FIELDS:
        value = message.get(field)
        if isinstance(value, str) and value.strip():
            return value
    return None
