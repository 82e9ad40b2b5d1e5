"""A judge behind any OpenAI-compatible chat server (vLLM, hosted APIs, ``transformers serve``), with a cache that
makes runs resumable.

- Requests go to ``<url>/chat/completions`` (httpx, one pooled client, ``concurrency`` requests in flight), with the
  content parts and dialect of :mod:`~omniaudit.runners.payload` and the run's sampling settings
  (temperature, top_p, seed).
- Closed items ask for ``logprobs`` and get option probabilities from them where the server returns them
  (:func:`option_probs`); otherwise the answer text is parsed. Each answer carries the completion's
  ``finish_reason``.
- ``answer_format`` ``choice`` / ``json`` constrains closed items' replies to their options
  (:mod:`~omniaudit.runners.payload`); :attr:`OpenAIJudge.answer_paths` says, per answer, whether the
  reply kept the constraint (``constrained``: its option is taken as it stands), did not (``unconstrained``: the
  server ignored it, and the text is read as free text) or none was asked (``free``).
- ``timeout_s`` bounds each request as a whole (connecting, sending, waiting, reading: a server that trickles its
  reply is cut at the deadline, not per read), and a reply larger than ``max_reply_bytes`` (8 MB) is cut and kept
  as a non-answer.
- Retries with exponential backoff (or the server's ``Retry-After``) on connection errors, timeouts, 429 and 5xx; a
  server that keeps failing stops the run with the item id. A redirect (3xx) is never followed and stops the run
  with its target; so do 401 and 403, naming the key's variable.
- :meth:`OpenAIJudge.identity` is what the server says of the model (its ``/models`` entry, asked once).
- ``dialect="auto"`` (:meth:`OpenAIJudge.resolve_dialect`): before the first item the server is asked what it is,
  once: its ``/models`` entry's ``owned_by`` (vLLM says ``"vllm"``; ``transformers serve`` the Hub organisation of
  the model, ``""`` or ``"local"``) and, when that says nothing, ``GET <root>/version`` (vLLM answers ``{"version":
  ...}``; ``transformers serve`` has none). vLLM gets ``vllm``; any other server ``frames`` when the items include a
  video with its own soundtrack (a standard server cannot take it), else ``openai``. The pick is warned once
  (:class:`DialectWarning`, with why), is :attr:`OpenAIJudge.dialect` from then on, and the probe is recorded in
  :meth:`OpenAIJudge.identity` under ``dialect``.
- Every real completion is cached on disk under a key made from the server URL, the item id, the run index, the
  request body (model, messages, sampling) and the served model's record (its stable fields; never the API key),
  written atomically as it arrives: an interrupted run asks only what is not cached, repeated samples (``--runs``)
  and items that share a prompt are never collapsed into one answer, and another model served under the same name
  is asked again. ``cache_dir=None``: no cache; ``refresh_cache``: every request is asked again and its reply
  replaces the cached one.
- A reply that is not a chat completion (an error page, ``content: null``) and a request the server rejects (HTTP 4xx
  other than 401, 403 and 429) become that item's raw answer (unparseable, counted, not cached). When they are most
  of the replies the run stops (from the 20th reply on, or at the end) with the first example, instead of writing a
  file of non-answers; a rejected ``video_url`` stops it at once, suggesting ``--dialect frames``. A run stopped by
  rejected requests raises ``RefusedItems`` (the server does not answer these items).

Credentials: the API key is read from the environment variable ``api_key_env`` and only ever sent in an
``Authorization: Bearer`` header to the URL of the judge spec. By default no key is sent to a loopback URL
(localhost, 127.0.0.0/8, ::1) and ``$OPENAI_API_KEY`` is sent to any other host (hosted APIs keep working as
documented by their vendors); ``api_key_env="none"`` sends no key. A key is never sent over plain ``http://`` to a
non-loopback host unless ``allow_insecure_key`` (refused before any request otherwise). A URL carrying credentials
(``user:password@``) or a query string is refused, and every message shows URLs with their secrets redacted; server
text echoed in messages and error answers has ``Bearer ...`` and the key's value redacted, and every server-derived
field kept (a completion's content, finish reason, logprob tokens, ``model`` and ``system_fingerprint``, the
``/models`` entry recorded as ``served``) has the key's value replaced by ``***`` where the reply is parsed, before
the cache, predictions or reports see it.
These rules and the bounded HTTP exchange live in :mod:`~omniaudit.runners.transport`; the server's side (the key,
one exchange, the model's identity, ``--dialect auto``) in :mod:`~.openai_server`, and a completion read, scrubbed
and cached in :mod:`~.completions`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from omniaudit.errors import InputError, ServiceError
from omniaudit.runners.base import RefusedItems
from omniaudit.runners.completions import Reply, cache_reply, cached_reply, completion_reply, option_probs
from omniaudit.runners.items import Answer, JudgeItem, Sampling, check_modalities
from omniaudit.runners.openai_server import RETRY_STATUS, OpenAIServer, retry_after, stable_served
from omniaudit.runners.options import check_runner_options
from omniaudit.runners.payload import Payloads, conforms, constrained_option
from omniaudit.runners.reading import read_answer
from omniaudit.runners.transport import Deadline, client

MIN_SEEN = 20  # replies before the "most replies are not completions" rule may stop a run early
MAX_REPLY_BYTES = 8 << 20  # a bigger reply is cut and kept as a non-answer


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


class OpenAIJudge(OpenAIServer):
    """A model behind an OpenAI-compatible server (vLLM, ``transformers serve``, a hosted API): requests in its
    ``--dialect``, replies cached by request and served model, ``identity()`` with the served model."""

    renders = True
    sampling: Sampling
    requests_sent: int
    rejected: int
    not_completions: int

    def __init__(self, model: str, url: str, cache_dir: str | Path | None, concurrency: int = 4,
                 max_retries: int = 5, backoff_s: float = 0.5, timeout_s: float = 120.0, max_tokens: int = 32,
                 api_key_env: str | None = None, dialect: str = "vllm", sampling: Sampling | None = None,
                 top_logprobs: int = 10, fps: float = 2.0, max_frames: int = 32,
                 max_bad_fraction: float = 0.5, allow_insecure_key: bool = False,
                 max_reply_bytes: int = MAX_REPLY_BYTES, refresh_cache: bool = False,
                 answer_format: str = "free", enable_thinking: bool | None = None) -> None:
        check_runner_options({"concurrency": concurrency, "max_retries": max_retries, "timeout_s": timeout_s,
                              "max_reply_bytes": max_reply_bytes, "max_tokens": max_tokens})
        super().__init__(model, url, max_retries, backoff_s, timeout_s, max_reply_bytes, api_key_env,
                         allow_insecure_key, dialect)
        self.cache = Path(cache_dir) if cache_dir is not None else None
        self.refresh_cache = refresh_cache  # ask again what is cached, and cache the new reply
        self.concurrency, self.max_bad_fraction = concurrency, max_bad_fraction
        self.payloads = Payloads(model, "openai" if dialect == "auto" else dialect, max_tokens, top_logprobs, fps,
                                 max_frames, answer_format=answer_format, enable_thinking=enable_thinking)
        self.sampling = sampling or Sampling()
        self.requests_sent = 0  # chat completion requests actually made (cache hits excluded), for reports and tests
        self.rejected = 0  # items the server refused (HTTP 4xx), kept as unparseable answers (all calls)
        self.not_completions = 0  # replies that were not chat completions (error pages, content: null)
        self.answer_paths: list[str] = []  # per answer of the last call: constrained, unconstrained or free
        self._lock = threading.Lock()

    @property
    def where(self) -> str:  # type: ignore[override]  # the server's URL, fixed at construction
        return self.url

    @property
    def accepts(self) -> set[str]:  # type: ignore[override]  # what its dialect can send
        return self.payloads.accepts

    def prepare(self, items: list[JudgeItem]) -> None:
        """``--dialect auto`` decided on the items, as the run that answered them decided it."""
        self.resolve_dialect(items)

    @property
    def answer_format(self) -> str:
        return self.payloads.answer_format

    def body(self, item: JudgeItem) -> dict:
        return self.payloads.body(item, self.sampling)

    def render(self, item: JudgeItem) -> str:
        """The messages ``item`` is sent as, JSON, media as stand-ins without their bytes (the server applies the
        chat template)."""
        return self.payloads.render(item)

    # ---- answering --------------------------------------------------------------------------------------------------

    def _cache_path(self, item: JudgeItem, body: dict, served: dict | None) -> Path | None:
        """Where the completion of ``item`` in this run is cached: keyed by the URL, the item id, the run, the
        request body and the served model's stable record (``served``, from :func:`stable_served`); never the API
        key."""
        if self.cache is None:
            return None
        blob = json.dumps({"url": self.url, "item": item.id, "run": self.sampling.run, "body": body,
                           "served": served}, sort_keys=True).encode()
        key = hashlib.sha256(blob).hexdigest()
        return self.cache / key[:2] / f"{key}.json"

    def answer(self, items: list[JudgeItem], progress=None) -> list[Answer]:
        """One answer per item (raw text, with option probabilities for closed items where the server gave
        logprobs, and the completion's finish reason), in item order. ``dialect="auto"`` is resolved here first
        (:meth:`resolve_dialect`)."""
        self._check_sendable(items)
        self._key()  # the environment may have changed since the judge was made
        served = None
        if self.cache is not None:
            self.cache.mkdir(parents=True, exist_ok=True)
            served = stable_served(self.identity()["served"])  # the cache is keyed by it: once, for the whole call
        tally = _Tally(len(items))
        stop = threading.Event()
        errors: list[Exception] = []
        paths = ["free"] * len(items)

        def fail(exc: Exception) -> None:
            with self._lock:
                errors.append(exc)
            stop.set()

        def one(http, i: int, item: JudgeItem) -> Answer | None:
            if stop.is_set():
                return None
            try:
                reply = self._reply(http, item, served, stop, tally, fail)
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
            answer, paths[i] = self._read(reply, item)
            return answer

        try:
            with client(self.concurrency, self.timeout_s) as http, ThreadPoolExecutor(self.concurrency) as pool:
                answers = list(pool.map(lambda i: one(http, i, items[i]), range(len(items))))
        finally:
            self.rejected += tally.rejected
            self.not_completions += tally.not_completions
        if errors:
            raise errors[0]
        if len(tally.bad) > self.max_bad_fraction * len(items):  # cached answers count as answers here
            raise self._mostly_bad(tally)
        self.answer_paths = paths
        return answers  # type: ignore[return-value]  # every item answered when no error was raised

    def _check_sendable(self, items: list[JudgeItem]) -> None:
        """Every item's media can be sent in this dialect (InputError naming the dialect that can, otherwise)."""
        self.resolve_dialect(items)
        try:
            check_modalities(items, f"--dialect {self.dialect}", self.payloads.accepts)
        except InputError as exc:
            auto = (" (--dialect auto chose openai on the first items, which sent a video as video_url)"
                    if self.requested_dialect == "auto" else "")
            raise InputError(f"{exc.message}{auto}; to send a video with its own soundtrack use --dialect vllm "
                             "(Qwen-Omni on vLLM) or --dialect frames") from exc

    def _reply(self, http, item: JudgeItem, served, stop: threading.Event, tally: _Tally, fail) -> Reply:
        """The item's reply: from the response cache, else asked (and kept when it is a real completion); a run whose
        replies are mostly not answers is stopped (``fail``)."""
        body = self.body(item)
        path = self._cache_path(item, body, served)
        if path is not None and path.exists() and not self.refresh_cache:
            return cached_reply(json.loads(path.read_text(encoding="utf-8")), self._secret())
        reply = self._ask(http, item, body, stop)
        if reply.answered and path is not None:  # only real completions are kept
            cache_reply(path, {"raw": reply.raw, "logprobs": reply.logprobs, "finish_reason": reply.finish_reason,
                                 "served_model": reply.served_model, "system_fingerprint": reply.system_fingerprint,
                                 "reasoning": reply.reasoning})
        with self._lock:
            tally.add(reply, item)
            stop_now = tally.seen >= min(MIN_SEEN, tally.n) and tally.mostly_bad(self.max_bad_fraction)
        if stop_now:
            fail(self._mostly_bad(tally))
        return reply

    def _read(self, reply: Reply, item: JudgeItem) -> tuple[Answer, str]:
        """(the answer, its path: free, constrained, or unconstrained where the server ignored the constraint)."""
        path = "free"
        constraint = self.payloads.constraint(item)
        if constraint is not None:
            kept = reply.answered and conforms(reply.raw, item.options, constraint)
            path = "constrained" if kept else "unconstrained"
        label = None
        if item.closed and reply.answered:
            label = (constrained_option(reply.raw, item.options) if path == "constrained"
                     else read_answer(reply.raw, item.options, item.prompt, reply.reasoning).option)
        # read at the option the text names: a text naming none has no probabilities (prediction_row drops any that
        # contradict the text)
        probs = option_probs(reply.logprobs, item.options, label) if label is not None else None
        return Answer(reply.raw, probs, finish_reason=reply.finish_reason, served_model=reply.served_model,
                      system_fingerprint=reply.system_fingerprint, reasoning=reply.reasoning), path

    def _mostly_bad(self, tally: _Tally) -> Exception:
        where = f"{len(tally.bad)} of {tally.seen} replies ({tally.n} items)"
        if tally.rejected == len(tally.bad):
            field_ = ("structured_outputs.choice (vLLM >= 0.12)" if self.dialect == "vllm"
                      and self.answer_format == "choice" else "a response_format JSON schema")
            hint = "" if self.answer_format == "free" else (
                f", and that the server takes {field_}, asked by --answer-format {self.answer_format} "
                "(--answer-format free asks none)")
            if self.answer_format == "choice" and self.dialect == "vllm":
                hint += ("; a server other than vLLM (transformers serve, SGLang, a hosted API) takes the JSON schema "
                         "of --dialect openai instead (--answer-format choice then asks response_format)")
            return RefusedItems(f"the server rejected {where}, e.g. {tally.bad[0]}; check the model name and URL"
                                f"{hint} (nothing was written)", file=self.url)
        return ServiceError(f"{self.url}: most replies are not chat completions ({where}: {tally.rejected} "
                            f"rejected, {tally.not_completions} error pages, cut or content: null), e.g. "
                            f"{tally.bad[0]}. Nothing was written; real answers are cached, so rerunning resumes "
                            "once the server is fixed (a thinking model may need a larger --max-tokens)")

    def _ask(self, http, item: JudgeItem, body: dict, stop: threading.Event) -> Reply:
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
                reply = self._fetch(http, "POST", "chat/completions", data)
            except (httpx2.TransportError, Deadline) as exc:
                last, delay = self._failure(exc), self.backoff_s * 2 ** attempt
                continue
            self._refused(reply, "chat/completions")
            if reply.too_big:  # the same request would bring the same reply: not retried
                return Reply(self._too_big(), False)
            if reply.status in RETRY_STATUS:
                last = f"HTTP {reply.status}: {self._redact(reply.text[:300])}"
                delay = retry_after(reply.headers.get("retry-after")) or self.backoff_s * 2 ** attempt
                continue
            if reply.status >= 400:
                detail = f"HTTP {reply.status}: {self._redact(reply.text[:300])}"
                if any(p.kind == "video" for p in item.media) and self.dialect != "frames":
                    raise RefusedItems(f"the server rejected item '{item.id}', which sends a video as video_url "
                                     f"({detail}); if this server takes no video input (or, for a video's own "
                                     "soundtrack, not vLLM's mm_processor_kwargs), rerun with --dialect frames "
                                     "(sampled frames + soundtrack)", file=self.url)
                return Reply(f"[{detail}]", False, rejected=True)
            return completion_reply(reply.text, self._secret())
        raise ServiceError(f"{self.url}: item '{item.id}' failed after {self.max_retries + 1} attempts ({last}); "
                           "answers received so far are cached, so rerunning the same command resumes")
