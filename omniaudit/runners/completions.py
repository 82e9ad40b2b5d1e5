"""A chat completion as the ``openai:`` runner reads it (:mod:`~.openai_compat`): its content, logprobs, finish
reason, ``model`` and ``system_fingerprint``, with the API key's value scrubbed wherever the server put it before the
reply is cached, answered or written (:func:`completion_reply`); its logprobs as option probabilities
(:func:`option_probs`); and its entry in the response cache (:func:`cache_reply`, :func:`cached_reply`)."""

from __future__ import annotations

import json
import math
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from omniaudit.runners.reasoning import server_reasoning
from omniaudit.runners.transport import redact, scrub

KEEP_LOGPROB_POSITIONS = 64  # generated positions kept in the cache (the answer is near the start)


@dataclass
class Reply:
    raw: str
    answered: bool  # a real chat completion (its content is a string)
    logprobs: list | None = None
    rejected: bool = False  # HTTP 4xx (other than 401, 403, 429)
    finish_reason: str | None = None
    served_model: str | None = None  # the completion's ``model``: the model the server says answered
    system_fingerprint: str | None = None  # the completion's ``system_fingerprint`` (the backend's configuration)
    reasoning: str | None = None  # the trace a reasoning parser returned apart (``reasoning_content``)


def completion_reply(text: str, key: str | None = None) -> Reply:
    """A chat completion's content, logprobs, finish reason, ``model`` and ``system_fingerprint``, each with the key's
    value (``key``) hidden wherever the server put it (:func:`scrubbed`); anything else comes back verbatim with its
    secrets redacted (it will not parse)."""
    try:
        completion = json.loads(text)
        choice = completion["choices"][0]
        content = choice["message"]["content"]
        reasoning = server_reasoning(choice["message"])
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return Reply(redact(text[:2000], key), False)
    if content is None and reasoning is not None:
        content = ""  # a reasoning model that spent its tokens deliberating: its answer is empty, not an error
    if not isinstance(content, str):
        return Reply(redact(text[:2000], key), False)
    logprobs = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), dict) else None
    return scrubbed(Reply(content, True, logprobs[:KEEP_LOGPROB_POSITIONS] if isinstance(logprobs, list) else None,
                           finish_reason=choice.get("finish_reason"), served_model=completion.get("model"),
                           system_fingerprint=completion.get("system_fingerprint"), reasoning=reasoning), key)


def cache_reply(path: Path, record: dict) -> None:
    """Keep a real completion's ``record`` in the response cache at ``path``, atomically (written, then renamed)."""
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, path)


def cached_reply(record: dict, key: str | None) -> Reply:
    """A cached completion, scrubbed again (an entry written before a server's echo was scrubbed keeps no key)."""
    return scrubbed(Reply(record["raw"], True, record.get("logprobs"), finish_reason=record.get("finish_reason"),
                           served_model=record.get("served_model"),
                           system_fingerprint=record.get("system_fingerprint"),
                           reasoning=record.get("reasoning")), key)


def scrubbed(reply: Reply, key: str | None) -> Reply:
    """``reply`` with nothing of the key kept, before it is cached, answered or written anywhere: its value replaced in
    the content and logprob tokens (only the key: a model's words stay as they are) and, with every other secret
    pattern, in the finish reason, the served model's name and the system fingerprint (each a string, else None).
    Logprob entries keep only ``token``, ``logprob`` and ``top_logprobs`` (a token's ``bytes`` would spell a key it
    held)."""

    def entry(e):
        if not isinstance(e, dict):
            return None
        kept = {k: scrub(e[k], key, patterns=False) for k in ("token", "logprob") if k in e}
        if isinstance(e.get("top_logprobs"), list):
            kept["top_logprobs"] = [entry(a) for a in e["top_logprobs"]]
        return kept

    logprobs = [entry(e) for e in reply.logprobs] if isinstance(reply.logprobs, list) else None
    finish, served, fingerprint = (scrub(v, key) if isinstance(v, str) else None
                                   for v in (reply.finish_reason, reply.served_model, reply.system_fingerprint))
    reasoning = scrub(reply.reasoning, key, patterns=False) if isinstance(reply.reasoning, str) else None
    return Reply(scrub(reply.raw, key, patterns=False), reply.answered, logprobs, reply.rejected, finish, served,
                 fingerprint, reasoning)


_EDGE = re.compile(r"^[\s*_`\"'(\[]+|[\s*_`\"'.,:;!?)\]]+$")


def _norm(token: str) -> str:
    return _EDGE.sub("", token).casefold()


def option_probs(logprobs: list | None, options: list[str], label: str | None = None) -> dict[str, float] | None:
    """Option probabilities from a chat completion's ``logprobs.content`` (one entry per generated token, each with
    ``token``, ``logprob`` and ``top_logprobs``), or None when they do not decide between the options.

    The answer position is the first generated token from which the text spells the parsed ``label`` (else any
    option) as a whole word, so "Answer: B" is read at "B". There, each alternative token (markup and spaces
    stripped, case folded) that begins exactly one option adds its probability to that option; a token that begins
    several options (they share a first token) is ambiguous. The option masses are normalised to sum to 1. None when
    no alternative with a finite logprob names an option (a non-finite one, such as a server's ``Infinity`` or
    ``NaN``, is skipped), or when ambiguous mass is at least the named mass (a server's first-token
    alternatives cannot separate such options; the parsed text decides instead).
    """
    if not logprobs or not options:
        return None
    tokens = [t.get("token", "") if isinstance(t, dict) else "" for t in logprobs]
    folded = [o.casefold() for o in options]
    targets = [label.casefold()] if label is not None else folded
    start = None
    for i in range(len(tokens)):
        rest = "".join(tokens[i:]).lstrip(" \t\n*_`\"'([").casefold()
        if _norm(tokens[i]) and any(re.match(rf"{re.escape(t)}(?!\w)", rest) for t in targets):
            start = i
            break
    if start is None:
        return None
    entry = logprobs[start]
    alternatives = entry.get("top_logprobs") or [{"token": entry.get("token", ""), "logprob": entry.get("logprob")}]
    mass = dict.fromkeys(options, 0.0)
    ambiguous = 0.0
    for alt in alternatives:
        try:
            logprob = float(alt["logprob"])
            p = math.exp(logprob) if math.isfinite(logprob) else None  # +inf, NaN: not a probability; -inf adds 0
        except (KeyError, TypeError, ValueError, OverflowError):
            continue
        if p is None:
            continue
        tok = _norm(str(alt.get("token", "")))
        if not tok:
            continue
        exact = [o for o, f in zip(options, folded, strict=True) if f == tok]
        begins = [o for o, f in zip(options, folded, strict=True) if f.startswith(tok)]
        if exact:
            mass[exact[0]] += p
        elif len(begins) == 1:
            mass[begins[0]] += p
        elif begins:
            ambiguous += p
    named = sum(mass.values())
    if not math.isfinite(named) or named <= 0 or ambiguous >= named:
        return None
    return {o: m / named for o, m in mass.items()}
