"""A judge behind any OpenAI-compatible chat server (vLLM, hosted APIs, ``transformers serve``), with a cache that
makes runs resumable.

- Requests go to ``<url>/chat/completions`` (httpx, one pooled client, ``concurrency`` requests in flight), with the
  content parts and dialect of :mod:`~omniaudit.evaluation.judges.payload` and the run's sampling settings
  (temperature, top_p, seed).
- Closed items ask for ``logprobs`` and get option probabilities from them where the server returns them
  (:func:`option_probs`); otherwise the answer text is parsed.
- Retries with exponential backoff (or the server's ``Retry-After``) on connection errors, timeouts, 429 and 5xx; a
  server that keeps failing stops the run with the item id.
- Every real completion is cached on disk under a key made from the server URL, the request body (model, messages,
  sampling; never the API key) and the run index, written atomically as it arrives: an interrupted run asks only
  what is not cached, and repeated samples (``--runs``) are never collapsed into one answer. ``cache_dir=None``: no
  cache.
- A reply that is not a chat completion (an error page, ``content: null``) and a request the server rejects (HTTP 4xx
  other than 429) become that item's raw answer (unparseable, counted, not cached). When they are most of the
  replies the run stops (from the 20th reply on, or at the end) with the first example, instead of writing a file of
  non-answers; a rejected ``video_url`` stops it at once, suggesting ``--dialect frames``.
- The API key is read from an environment variable (``OPENAI_API_KEY`` by default) and only ever sent in a header.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from omniaudit.errors import InputError, ServiceError
from omniaudit.evaluation.judges.items import Answer, JudgeItem, Sampling, check_modalities, parse_answer
from omniaudit.evaluation.judges.payload import Payloads

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
MIN_SEEN = 20  # replies before the "most replies are not completions" rule may stop a run early
MAX_RETRY_AFTER_S = 60.0
KEEP_LOGPROB_POSITIONS = 64  # generated positions kept in the cache (the answer is near the start)


@dataclass
class Reply:
    raw: str
    answered: bool  # a real chat completion (its content is a string)
    logprobs: list | None = None
    rejected: bool = False  # HTTP 4xx (other than 429)


class _Stop(Exception):
    """The run was stopped by another item's error."""


@dataclass
class _Tally:
    """Replies of one ``answer`` call (cache hits excluded)."""

    n: int  # items asked
    seen: int = 0
    done: int = 0  # items answered, cached or not
    rejected: int = 0
    not_completions: int = 0
    bad: list[str] = field(default_factory=list)  # "item 'x': <raw>" of every reply that was not a completion

    def add(self, reply: Reply, item: JudgeItem) -> None:
        self.seen += 1
        if reply.answered:
            return
        if reply.rejected:
            self.rejected += 1
        else:
            self.not_completions += 1
        self.bad.append(f"item '{item.id}': {reply.raw[:300]}")

    def mostly_bad(self, fraction: float) -> bool:
        return len(self.bad) > fraction * self.seen


class OpenAIJudge:
    def __init__(self, model: str, url: str, cache_dir: str | Path | None, concurrency: int = 4,
                 max_retries: int = 5, backoff_s: float = 0.5, timeout_s: float = 120.0, max_tokens: int = 32,
                 api_key_env: str = "OPENAI_API_KEY", dialect: str = "vllm", sampling: Sampling | None = None,
                 top_logprobs: int = 10, fps: float = 2.0, max_frames: int = 32,
                 max_bad_fraction: float = 0.5) -> None:
        if concurrency < 1 or max_retries < 0 or not timeout_s > 0:
            raise InputError(f"expected concurrency >= 1, max_retries >= 0 and timeout > 0, got {concurrency}, "
                             f"{max_retries}, {timeout_s}")
        self.model, self.url = model, url.rstrip("/")
        self.cache = Path(cache_dir) if cache_dir is not None else None
        self.concurrency, self.max_retries, self.backoff_s = concurrency, max_retries, backoff_s
        self.timeout_s, self.api_key_env, self.max_bad_fraction = timeout_s, api_key_env, max_bad_fraction
        self.payloads = Payloads(model, dialect, max_tokens, top_logprobs, fps, max_frames)
        self.sampling = sampling or Sampling()
        self.requests_sent = 0  # HTTP requests actually made (cache hits excluded), for reporting and tests
        self.rejected = 0  # items the server refused (HTTP 4xx), kept as unparseable answers (all calls)
        self.not_completions = 0  # replies that were not chat completions (error pages, content: null)
        self._lock = threading.Lock()

    @property
    def dialect(self) -> str:
        return self.payloads.dialect

    def body(self, item: JudgeItem) -> dict:
        return self.payloads.body(item, self.sampling)

    def _cache_path(self, body: dict) -> Path | None:
        if self.cache is None:
            return None
        blob = json.dumps({"url": self.url, "body": body, "run": self.sampling.run}, sort_keys=True).encode()
        key = hashlib.sha256(blob).hexdigest()
        return self.cache / key[:2] / f"{key}.json"

    def answer(self, items: list[JudgeItem], progress=None) -> list[Answer]:
        """One answer per item (raw text, with option probabilities for closed items where the server gave
        logprobs), in item order."""
        try:
            check_modalities(items, f"--dialect {self.dialect}", self.payloads.accepts)
        except InputError as exc:
            raise InputError(f"{exc.message}; to send a video with its own soundtrack use --dialect vllm (Qwen-Omni "
                             "on vLLM) or --dialect frames") from exc
        if self.cache is not None:
            self.cache.mkdir(parents=True, exist_ok=True)
        tally = _Tally(len(items))
        stop = threading.Event()
        errors: list[Exception] = []

        def fail(exc: Exception) -> None:
            with self._lock:
                errors.append(exc)
            stop.set()

        def one(client, item: JudgeItem) -> Answer | None:
            if stop.is_set():
                return None
            try:
                body = self.body(item)
                path = self._cache_path(body)
                if path is not None and path.exists():
                    cached = json.loads(path.read_text(encoding="utf-8"))
                    reply = Reply(cached["raw"], True, cached.get("logprobs"))
                else:
                    reply = self._ask(client, item, body, stop)
                    if reply.answered and path is not None:  # only real completions are kept
                        _write_atomic(path, {"raw": reply.raw, "logprobs": reply.logprobs})
                    with self._lock:
                        tally.add(reply, item)
                        stop_now = tally.seen >= min(MIN_SEEN, tally.n) and tally.mostly_bad(self.max_bad_fraction)
                    if stop_now:
                        fail(self._mostly_bad(tally))
            except _Stop:
                return None
            except Exception as exc:  # noqa: BLE001 - the first error stops the run and is raised below
                fail(exc)
                return None
            with self._lock:
                tally.done += 1
                done = tally.done
            if progress:
                progress(f"{done}/{len(items)}")
            probs = option_probs(reply.logprobs, item.options, parse_answer(reply.raw, item.options)) \
                if item.closed and reply.answered else None
            return Answer(reply.raw, probs)

        import httpx2

        limits = httpx2.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        try:
            with httpx2.Client(timeout=self.timeout_s, limits=limits) as client, \
                    ThreadPoolExecutor(self.concurrency) as pool:
                answers = list(pool.map(lambda item: one(client, item), items))
        finally:
            self.rejected += tally.rejected
            self.not_completions += tally.not_completions
        if errors:
            raise errors[0]
        if len(tally.bad) > self.max_bad_fraction * len(items):  # cached answers count as answers here
            raise self._mostly_bad(tally)
        return answers  # type: ignore[return-value]  # every item answered when no error was raised

    def _mostly_bad(self, tally: _Tally) -> Exception:
        where = f"{len(tally.bad)} of {tally.seen} replies ({tally.n} items)"
        if tally.rejected == len(tally.bad):
            return InputError(f"the server rejected {where}, e.g. {tally.bad[0]}; check the model name and URL "
                              "(nothing was written)", file=self.url)
        return ServiceError(f"{self.url}: most replies are not chat completions ({where}: {tally.rejected} "
                            f"rejected, {tally.not_completions} error pages or content: null), e.g. {tally.bad[0]}. "
                            "Nothing was written; real answers are cached, so rerunning resumes once the server "
                            "is fixed (a thinking model may need a larger --max-tokens)")

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _ask(self, client, item: JudgeItem, body: dict, stop: threading.Event) -> Reply:
        import httpx2

        data = json.dumps(body).encode()
        last, delay = "", self.backoff_s
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(delay)
            if stop.is_set():
                raise _Stop
            with self._lock:
                self.requests_sent += 1
            try:
                response = client.post(f"{self.url}/chat/completions", content=data, headers=self._headers())
            except httpx2.TransportError as exc:
                last, delay = f"{type(exc).__name__}: {exc}", self.backoff_s * 2 ** attempt
                continue
            text = response.text
            if response.status_code in RETRY_STATUS:
                last = f"HTTP {response.status_code}: {text[:300]}"
                delay = _retry_after(response.headers.get("retry-after")) or self.backoff_s * 2 ** attempt
                continue
            if response.status_code >= 400:
                detail = f"HTTP {response.status_code}: {text[:300]}"
                if any(p.kind == "video" for p in item.media) and self.dialect != "frames":
                    raise InputError(f"the server rejected item '{item.id}', which sends a video as video_url "
                                     f"({detail}); if this server takes no video input (or, for a video's own "
                                     "soundtrack, not vLLM's mm_processor_kwargs), rerun with --dialect frames "
                                     "(sampled frames + soundtrack)", file=self.url)
                return Reply(f"[{detail}]", False, rejected=True)
            return _completion(text)
        raise ServiceError(f"{self.url}: item '{item.id}' failed after {self.max_retries + 1} attempts ({last}); "
                           "answers received so far are cached, so rerunning the same command resumes")


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return min(seconds, MAX_RETRY_AFTER_S) if seconds is not None and seconds >= 0 else None


def _write_atomic(path: Path, record: dict) -> None:
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, path)


def _completion(text: str) -> Reply:
    """A chat completion's content and logprobs; anything else comes back verbatim (it will not parse)."""
    try:
        choice = json.loads(text)["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return Reply(text[:2000], False)
    if not isinstance(content, str):
        return Reply(text[:2000], False)
    logprobs = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), dict) else None
    return Reply(content, True, logprobs[:KEEP_LOGPROB_POSITIONS] if isinstance(logprobs, list) else None)


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
    no alternative names an option, or when ambiguous mass is at least the named mass (a server's first-token
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
            p = math.exp(float(alt["logprob"]))
        except (KeyError, TypeError, ValueError, OverflowError):
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
    if named <= 0 or ambiguous >= named:
        return None
    return {o: m / named for o, m in mass.items()}
