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
These rules and the bounded HTTP exchange live in :mod:`~omniaudit.runners.transport`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from omniaudit.errors import InputError, ServiceError
from omniaudit.runners.base import Runner
from omniaudit.runners.items import Answer, JudgeItem, Sampling, check_modalities
from omniaudit.runners.payload import Payloads, conforms, constrained_option
from omniaudit.runners.reading import read_answer
from omniaudit.runners.reasoning import server_reasoning
from omniaudit.runners.run import RefusedItems, check_runner_options
from omniaudit.runners.transport import (
    Deadline,
    HTTPReply,
    check_server_url,
    client,
    fetch,
    is_loopback,
    key_env_for,
    redact,
    scrub,
)

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
MIN_SEEN = 20  # replies before the "most replies are not completions" rule may stop a run early
MAX_RETRY_AFTER_S = 60.0
KEEP_LOGPROB_POSITIONS = 64  # generated positions kept in the cache (the answer is near the start)
MAX_REPLY_BYTES = 8 << 20  # a bigger reply is cut and kept as a non-answer
VOLATILE_MODEL_FIELDS = ("created", "permission", "status")  # /models fields that change per request or load state
VLLM_OWNER = "vllm"  # the owned_by vLLM gives every model it lists under /models


class DialectWarning(UserWarning):
    """The dialect ``--dialect auto`` picked, and why."""


def _soundtrack_videos(items: list[JudgeItem]) -> bool:
    return any(p.kind == "video" and p.with_audio for item in items for p in item.media)


def _videos(items: list[JudgeItem]) -> bool:
    return any(p.kind == "video" for item in items for p in item.media)


def stable_served(served: dict | None) -> dict | None:
    """A ``/models`` entry without the fields that change from one request or load to the next (vLLM stamps
    ``created`` and ``permission`` with the request's time and random ids; ``transformers serve`` adds a load
    ``status``)."""
    return None if served is None else {k: v for k, v in served.items() if k not in VOLATILE_MODEL_FIELDS}


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


class OpenAIJudge(Runner):
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
        self.model, self.url = model, check_server_url(url)
        self.cache = Path(cache_dir) if cache_dir is not None else None
        self.refresh_cache = refresh_cache  # ask again what is cached, and cache the new reply
        self.concurrency, self.max_retries, self.backoff_s = concurrency, max_retries, backoff_s
        self.timeout_s, self.max_bad_fraction, self.max_reply_bytes = timeout_s, max_bad_fraction, max_reply_bytes
        self.loopback = is_loopback(self.url)
        self.api_key_env = key_env_for(api_key_env, self.url)  # None: no key is sent
        self.allow_insecure_key = allow_insecure_key
        self._key()  # refuses a key over plain http to another host now, before any request
        self.requested_dialect = dialect  # "auto": resolved by resolve_dialect before the first item
        self._resolved: str | None = None if dialect == "auto" else dialect
        self._provisional = False  # auto chose openai before any video was sent: frames may still be chosen
        self._server: dict | None = None  # auto: what the probe found (recorded in identity()["dialect"])
        self._owners: list[str] = []  # owned_by of the model's /models entry (else of every entry), for auto
        self.payloads = Payloads(model, "openai" if dialect == "auto" else dialect, max_tokens, top_logprobs, fps,
                                 max_frames, answer_format=answer_format, enable_thinking=enable_thinking)
        self.sampling = sampling or Sampling()
        self.requests_sent = 0  # chat completion requests actually made (cache hits excluded), for reports and tests
        self.rejected = 0  # items the server refused (HTTP 4xx), kept as unparseable answers (all calls)
        self.not_completions = 0  # replies that were not chat completions (error pages, content: null)
        self.answer_paths: list[str] = []  # per answer of the last call: constrained, unconstrained or free
        self._lock = threading.Lock()
        self._identity: dict | None = None
        self._identity_lock = threading.Lock()

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
    def dialect(self) -> str:
        """The dialect requests are sent in: ``auto`` until :meth:`resolve_dialect` has picked one."""
        return self._resolved or "auto"

    @property
    def answer_format(self) -> str:
        return self.payloads.answer_format

    def body(self, item: JudgeItem) -> dict:
        return self.payloads.body(item, self.sampling)

    def render(self, item: JudgeItem) -> str:
        """The messages ``item`` is sent as, JSON, media as stand-ins without their bytes (the server applies the
        chat template)."""
        return self.payloads.render(item)

    # ---- credentials ----------------------------------------------------------------------------------------------

    def _key(self) -> str | None:
        """The key to send (None: none), read from the environment now; a key over plain http to a non-loopback
        host is refused unless ``allow_insecure_key``."""
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env, "").strip() or None
        if key and self.url.startswith("http://") and not self.loopback and not self.allow_insecure_key:
            raise InputError(f"{self.url} is plain http:// to a host that is not this machine: the key in "
                             f"${self.api_key_env} would cross the network unencrypted. Use https://, send no key "
                             "(--api-key-env none), or pass --allow-insecure-key (judge option "
                             "allow_insecure_key=True) if this network is trusted")
        return key

    def _secret(self) -> str | None:
        """The key's value as the environment holds it now (None: no key is sent), to hide wherever a server echoes
        it."""
        return (os.environ.get(self.api_key_env, "").strip() or None) if self.api_key_env else None

    def _redact(self, text: str) -> str:
        """Server text to echo (in messages, raw answers, the cache): secrets and the key's value hidden."""
        return redact(text, self._secret())

    # ---- one HTTP exchange ------------------------------------------------------------------------------------------

    def _fetch(self, http, method: str, path: str, data: bytes | None = None) -> HTTPReply:
        """``method <url>/<path>`` with the key (if any) in a header, within ``timeout_s`` for the whole request
        (raises Deadline) and ``max_reply_bytes``."""
        headers = {"Content-Type": "application/json"} if data is not None else {}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return fetch(http, method, f"{self.url}/{path}", headers, data, self.timeout_s, self.max_reply_bytes)

    def _failure(self, exc: Exception) -> str:
        if isinstance(exc, Deadline):
            return f"no complete reply within {self.timeout_s:g} s (--timeout bounds the whole request)"
        return self._redact(f"{type(exc).__name__}: {exc}")

    def _refused(self, reply: HTTPReply, path: str) -> None:
        """Stop on a redirect (never followed: the key stays with the URL it was meant for) and on 401 / 403."""
        if 300 <= reply.status < 400:
            target = reply.headers.get("location")
            raise InputError(f"{self.url}/{path} answered HTTP {reply.status}, a redirect to "
                             f"{redact(target) if target else '(no Location)'}; redirects are not followed (the key "
                             "is never sent anywhere else): put the server's final URL in the judge spec")
        if reply.status in (401, 403):
            detail = self._redact(reply.text[:200]) if not reply.too_big else "(reply too large to show)"
            if self.api_key_env and os.environ.get(self.api_key_env, "").strip():
                raise InputError(f"the server refused the key in ${self.api_key_env} (HTTP {reply.status}: "
                                 f"{detail}); check that key, or name the variable holding the right one with "
                                 "--api-key-env", file=self.url)
            why = ("no key is sent to a loopback URL unless --api-key-env names one" if self.api_key_env is None
                   and self.loopback else "--api-key-env none" if self.api_key_env is None
                   else f"${self.api_key_env} is not set")
            raise InputError(f"the server refused the request (HTTP {reply.status}: {detail}) and no key was sent "
                             f"({why}): set --api-key-env to the environment variable holding the key",
                             file=self.url)

    def _too_big(self) -> str:
        return (f"[reply cut: larger than {self.max_reply_bytes / 2 ** 20:g} MB (max_reply_bytes); not a chat "
                "completion]")

    # ---- the model's identity ---------------------------------------------------------------------------------------

    def identity(self, refresh: bool = False) -> dict:
        """What the server says of the model, asked once per judge (``GET <url>/models``, with the same key,
        deadline and size rules as completions; ``refresh``: ask again): ``{"kind": "openai", "url": <url, no
        credentials>, "model": <requested name>, "served": <the /models entry whose id is that name, or None>}``.
        ``served`` is None when the server has no ``/models`` (404 or another 4xx), does not list the model (e.g.
        ``transformers serve`` before a request loaded a local model), or answers something else than a model list;
        a server that cannot be reached, a redirect, 401 or 403 raise as completions do."""
        with self._identity_lock:
            if self._identity is None or refresh:
                self._identity = {"kind": "openai", "url": redact(self.url), "model": self.model,
                                  "served": stable_served(self._served())}
                if self.requested_dialect == "auto":
                    self._identity["dialect"] = dict(self._probe_server())
            return copy.deepcopy(self._identity)

    # ---- --dialect auto ---------------------------------------------------------------------------------------------

    def _probe_server(self) -> dict:
        """Whether the server is vLLM, decided once (after ``/models`` was asked): ``{"requested": "auto",
        "server": "vllm" | "not vllm", "evidence": ...}``. The ``/models`` entry's ``owned_by`` decides when it names
        an owner (vLLM's is ``"vllm"``); else ``GET <root>/version`` (vLLM's answer is ``{"version": ...}``)."""
        if self._server is None:
            owners = sorted({o for o in self._owners if o})
            if owners:
                vllm = owners == [VLLM_OWNER]
                evidence = f"/models lists it owned_by {', '.join(repr(o) for o in owners)}"
            else:
                version = self._version()
                vllm = version is not None
                evidence = ("/models names no owner; /version answers " + repr(version) if vllm
                            else "/models names no owner and there is no vLLM /version")
            self._server = {"requested": "auto", "server": "vllm" if vllm else "not vllm",
                            "evidence": self._redact(evidence)}
        return self._server

    def _version(self) -> str | None:
        """vLLM's version from ``GET <root>/version`` (the URL without its ``/v1``), asked once and not retried;
        None when the server has no such endpoint or answers anything else."""
        import httpx2

        root = self.url[:-3] if self.url.endswith("/v1") else self.url
        headers = {}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        try:
            with client(1, self.timeout_s) as http:
                reply = fetch(http, "GET", f"{root}/version", headers, None, self.timeout_s, 1 << 16)
            version = json.loads(reply.text)["version"] if reply.status == 200 and not reply.too_big else None
        except (httpx2.TransportError, Deadline, ValueError, KeyError, TypeError):
            return None
        return scrub(version, self._secret()) if isinstance(version, str) and version else None

    def resolve_dialect(self, items: list[JudgeItem]) -> str:
        """The dialect to send ``items`` in. For ``dialect="auto"``, picked before the first item and then kept: the
        server is asked once (:meth:`_probe_server`); vLLM gets ``vllm``, any other server ``frames`` when the items
        include a video with its own soundtrack, else ``openai``. A pick of ``openai`` made while no video had been
        sent becomes ``frames`` when such a video comes later (until then both send the same requests); after a video
        went as ``video_url``, it stays ``openai`` (the items are then refused, as with ``--dialect openai``). Pass
        every item of a run at once to decide on all of them. Warns once per pick (:class:`DialectWarning`)."""
        if self.requested_dialect != "auto" or (self._resolved is not None and not self._provisional):
            return self.dialect
        if self._resolved is None:
            server = self.identity()["dialect"]
            if server["server"] == "vllm":
                chosen, why = "vllm", f"the server is vLLM ({server['evidence']})"
            elif _soundtrack_videos(items):
                chosen, why = "frames", (f"the server is not vLLM ({server['evidence']}) and the items include a "
                                         "video with its own soundtrack, which only frames can send to it")
            else:
                chosen, why = "openai", (f"the server is not vLLM ({server['evidence']}) and no item needs a "
                                         "video's own soundtrack")
            self._provisional = chosen == "openai" and not _videos(items)
        elif _soundtrack_videos(items):  # openai so far, and nothing was sent that frames would send otherwise
            chosen, why = "frames", (f"items with a video's own soundtrack came after the first ones "
                                     f"({self._server['evidence'] if self._server else 'not vLLM'})")
            self._provisional = False
        else:
            self._provisional = not _videos(items)
            return self.dialect
        if chosen != self.payloads.dialect:
            self.payloads = replace(self.payloads, dialect=chosen)
        self._resolved = chosen
        warnings.warn(f"{redact(self.url)}: --dialect auto chose {chosen}: {why}", DialectWarning, stacklevel=3)
        return chosen

    def _served(self) -> dict | None:
        import httpx2

        last, delay = "", self.backoff_s
        with client(1, self.timeout_s) as http:
            for attempt in range(self.max_retries + 1):
                if attempt:
                    time.sleep(delay)
                try:
                    reply = self._fetch(http, "GET", "models")
                except (httpx2.TransportError, Deadline) as exc:
                    last, delay = self._failure(exc), self.backoff_s * 2 ** attempt
                    continue
                self._refused(reply, "models")
                if reply.status in RETRY_STATUS:
                    last = f"HTTP {reply.status}: {self._redact(reply.text[:300])}"
                    delay = _retry_after(reply.headers.get("retry-after")) or self.backoff_s * 2 ** attempt
                    continue
                if reply.status >= 400 or reply.too_big:
                    return None
                try:
                    listed = json.loads(reply.text)["data"]
                except (ValueError, KeyError, TypeError):
                    return None
                entries = listed if isinstance(listed, list) else []
                entry = next((e for e in entries if isinstance(e, dict) and e.get("id") == self.model), None)
                self._owners = [e["owned_by"] for e in ([entry] if entry is not None else entries)
                                if isinstance(e, dict) and isinstance(e.get("owned_by"), str)]
                return None if entry is None else scrub(entry, self._secret())  # kept in reports: no key in it
        raise ServiceError(f"{self.url}/models: no answer after {self.max_retries + 1} attempts ({last}); is the "
                           "server up?")

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
            return _cached(json.loads(path.read_text(encoding="utf-8")), self._secret())
        reply = self._ask(http, item, body, stop)
        if reply.answered and path is not None:  # only real completions are kept
            _write_atomic(path, {"raw": reply.raw, "logprobs": reply.logprobs, "finish_reason": reply.finish_reason,
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
                delay = _retry_after(reply.headers.get("retry-after")) or self.backoff_s * 2 ** attempt
                continue
            if reply.status >= 400:
                detail = f"HTTP {reply.status}: {self._redact(reply.text[:300])}"
                if any(p.kind == "video" for p in item.media) and self.dialect != "frames":
                    raise RefusedItems(f"the server rejected item '{item.id}', which sends a video as video_url "
                                     f"({detail}); if this server takes no video input (or, for a video's own "
                                     "soundtrack, not vLLM's mm_processor_kwargs), rerun with --dialect frames "
                                     "(sampled frames + soundtrack)", file=self.url)
                return Reply(f"[{detail}]", False, rejected=True)
            return _completion(reply.text, self._secret())
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


def _completion(text: str, key: str | None = None) -> Reply:
    """A chat completion's content, logprobs, finish reason, ``model`` and ``system_fingerprint``, each with the key's
    value (``key``) hidden wherever the server put it (:func:`_scrubbed`); anything else comes back verbatim with its
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
    return _scrubbed(Reply(content, True, logprobs[:KEEP_LOGPROB_POSITIONS] if isinstance(logprobs, list) else None,
                           finish_reason=choice.get("finish_reason"), served_model=completion.get("model"),
                           system_fingerprint=completion.get("system_fingerprint"), reasoning=reasoning), key)


def _cached(record: dict, key: str | None) -> Reply:
    """A cached completion, scrubbed again (an entry written before a server's echo was scrubbed keeps no key)."""
    return _scrubbed(Reply(record["raw"], True, record.get("logprobs"), finish_reason=record.get("finish_reason"),
                           served_model=record.get("served_model"),
                           system_fingerprint=record.get("system_fingerprint"),
                           reasoning=record.get("reasoning")), key)


def _scrubbed(reply: Reply, key: str | None) -> Reply:
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
