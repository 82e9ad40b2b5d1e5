"""The server behind an ``openai:`` judge (:class:`OpenAIServer`): the key it is sent (read from ``api_key_env`` now,
never over plain ``http://`` to another host unless allowed), one bounded HTTP exchange (a redirect, 401 and 403
stop the run), what it says of the model (:meth:`OpenAIServer.identity`, its ``/models`` entry, asked once) and
which dialect it gets (:meth:`OpenAIServer.resolve_dialect` for ``--dialect auto``: vLLM gets ``vllm``, another
server ``frames`` when the items include a video with its own soundtrack, else ``openai``; warned once,
:class:`DialectWarning`). The rules of the exchange live in :mod:`~omniaudit.runners.transport`."""

from __future__ import annotations

import copy
import json
import os
import threading
import time
import warnings
from dataclasses import replace

from omniaudit.errors import InputError, ServiceError
from omniaudit.runners.base import Runner
from omniaudit.runners.items import JudgeItem
from omniaudit.runners.payload import Payloads
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
MAX_RETRY_AFTER_S = 60.0
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


def retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return min(seconds, MAX_RETRY_AFTER_S) if seconds is not None and seconds >= 0 else None


class OpenAIServer(Runner):
    """The server behind an ``openai:`` judge (see the module docstring); :class:`~.openai_compat.OpenAIJudge` asks it
    for completions."""

    payloads: Payloads  # the judge's request builder: its dialect is the one resolve_dialect picks

    def __init__(self, model: str, url: str, max_retries: int, backoff_s: float, timeout_s: float,
                 max_reply_bytes: int, api_key_env: str | None, allow_insecure_key: bool, dialect: str) -> None:
        self.model, self.url = model, check_server_url(url)
        self.max_retries, self.backoff_s = max_retries, backoff_s
        self.timeout_s, self.max_reply_bytes = timeout_s, max_reply_bytes
        self.loopback = is_loopback(self.url)
        self.api_key_env = key_env_for(api_key_env, self.url)  # None: no key is sent
        self.allow_insecure_key = allow_insecure_key
        self._key()  # refuses a key over plain http to another host now, before any request
        self.requested_dialect = dialect  # "auto": resolved by resolve_dialect before the first item
        self._resolved: str | None = None if dialect == "auto" else dialect
        self._provisional = False  # auto chose openai before any video was sent: frames may still be chosen
        self._server: dict | None = None  # auto: what the probe found (recorded in identity()["dialect"])
        self._owners: list[str] = []  # owned_by of the model's /models entry (else of every entry), for auto
        self._identity: dict | None = None
        self._identity_lock = threading.Lock()

    @property
    def dialect(self) -> str:
        """The dialect requests are sent in: ``auto`` until :meth:`resolve_dialect` has picked one."""
        return self._resolved or "auto"

    # ---- credentials ------------------------------------------------------------------------------------------------

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
                    delay = retry_after(reply.headers.get("retry-after")) or self.backoff_s * 2 ** attempt
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
