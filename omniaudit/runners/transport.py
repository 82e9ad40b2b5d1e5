"""How the ``openai:`` runner talks to a server without leaking its key or hanging: which key goes where, secrets
kept out of every message, and one HTTP exchange bounded as a whole in time and in size.

- :func:`key_env_for`: the environment variable whose key is sent. Default: none for a loopback URL (localhost,
  127.0.0.0/8, ::1), ``OPENAI_API_KEY`` for any other host; ``"none"`` sends no key.
- :func:`check_server_url` refuses a URL carrying credentials (``user:password@``) or a query string
  (``?api_key=``); :func:`redact` hides secrets (URL credentials, query-string keys, ``Bearer ...``, the key's value)
  in any text that is shown or stored; :func:`scrub` hides the key's value in every string of a server's parsed
  reply (content, finish reason, logprob tokens, the ``/models`` entry) before anything keeps it.
- :func:`client` never follows redirects, and its connections keep each request's deadline; :func:`fetch` makes one
  request within ``timeout_s`` for the whole of it (connecting, sending, waiting and reading: httpx's own timeouts
  are per socket operation, so a server that trickles a byte now and then would keep a request alive for ever) and
  reads at most ``max_bytes`` of the reply.
"""

from __future__ import annotations

import ipaddress
import re
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from omniaudit.errors import InputError

DEFAULT_KEY_ENV = "OPENAI_API_KEY"  # the key variable for a non-loopback URL when none is named
NO_KEY = ("", "none")  # api_key_env values that send no key

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^/?#\s@:]*)(?P<password>:[^/?#\s]*)?@")
_QUERY_SECRET = re.compile(r"(?P<name>[?&;][^=&#\s]*(?:key|token|secret|passw|pwd|auth|sig|credential)[^=&#\s]*=)"
                           r"[^&#\s\"']*", re.IGNORECASE)
_BEARER = re.compile(r"(?P<scheme>\b(?:Bearer|Basic)\s+)[^\s\"',;]+", re.IGNORECASE)
_OPENAI_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{12,}")


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with its secrets hidden: URL credentials (``user:***@``), query-string keys (``?api_key=***``),
    ``Bearer`` / ``Basic`` credentials, ``sk-...`` keys and each of ``secrets`` (values of 6 characters or more)."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:***@" if m["password"] else f"{m['scheme']}***@", text)
    text = _QUERY_SECRET.sub(lambda m: f"{m['name']}***", text)
    text = _BEARER.sub(lambda m: f"{m['scheme']}***", text)
    text = _OPENAI_KEY.sub("sk-***", text)
    for secret in secrets:
        if secret and len(secret) >= 6:
            text = text.replace(secret, "***")
    return text


def scrub(value, key: str | None, patterns: bool = True):
    """``value`` (a parsed JSON value a server sent: strings, numbers, lists, dicts) with the key's value replaced by
    ``***`` in every string, dict keys included, before anything keeps it. ``patterns``: every string is also
    :func:`redact`-ed (URL credentials, ``Bearer ...``, ``sk-...``; for server metadata); without it only the key's
    value is replaced (a model's words are kept as they are, but never the key)."""
    if isinstance(value, str):
        if patterns:
            return redact(value, key)
        return value.replace(key, "***") if key and len(key) >= 6 else value
    if isinstance(value, list):
        return [scrub(v, key, patterns) for v in value]
    if isinstance(value, dict):
        return {scrub(k, key, patterns): scrub(v, key, patterns) for k, v in value.items()}
    return value


def check_server_url(url: str) -> str:
    """The server URL as requests use it (no trailing slash). Refuses, with its secrets redacted, a URL that is not
    http(s), carries credentials (``user:password@``) or has a query string or fragment (``?api_key=``): a key goes
    in an environment variable named by ``--api-key-env`` and travels only in a header."""
    shown = redact(url)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise InputError("the server URL is not a valid http(s) URL", value=shown) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError("the server URL must look like http(s)://HOST[:PORT]/v1", value=shown)
    if "@" in parts.netloc:
        raise InputError(f"the server URL {shown} carries credentials; put the key in an environment variable and "
                         "name it with --api-key-env (it is sent only as an Authorization header)")
    if "?" in url or "#" in url:
        raise InputError(f"the server URL {shown} has a query string or fragment; give the base URL (requests go "
                         "to <url>/chat/completions) and pass a key through --api-key-env")
    return url.rstrip("/")


def is_loopback(url: str) -> bool:
    """The URL's host is this machine: ``localhost``, 127.0.0.0/8 or ::1 (also as an IPv4-mapped address)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def key_env_for(api_key_env: str | None, url: str) -> str | None:
    """The environment variable whose key is sent to ``url`` (None: no key). ``api_key_env`` None is the default
    rule: none for a loopback URL, ``OPENAI_API_KEY`` otherwise; ``""`` or ``"none"`` send no key."""
    if api_key_env is None:
        return None if is_loopback(url) else DEFAULT_KEY_ENV
    name = api_key_env.strip()
    if name.lower() in NO_KEY:
        return None
    if not _ENV_NAME.match(name):  # e.g. the key itself instead of its variable: never echoed
        raise InputError("--api-key-env takes the NAME of an environment variable holding the key (letters, digits "
                         "and _), or 'none'; the value given is not such a name (not shown, in case it is the key)")
    return name


# ---- one request, bounded as a whole --------------------------------------------------------------------------------

@dataclass
class HTTPReply:
    """One HTTP exchange, read within the deadline and the size limit (``too_big``: cut, ``body`` incomplete)."""

    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes
    too_big: bool = False

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class Deadline(Exception):
    """A request ran past its deadline (the timeout bounds the whole request)."""


_DEADLINE = threading.local()  # .at: monotonic deadline of the request this thread is making


def _within_deadline(timeout: float | None, error: type[Exception]) -> float | None:
    deadline = getattr(_DEADLINE, "at", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


def _deadline_stream(stream):
    import httpcore2

    class DeadlineStream(httpcore2.NetworkStream):
        def __init__(self, inner) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self._inner.read(max_bytes, _within_deadline(timeout, httpcore2.ReadTimeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._inner.write(buffer, _within_deadline(timeout, httpcore2.WriteTimeout))

        def close(self) -> None:
            self._inner.close()

        def start_tls(self, ssl_context, server_hostname: str | None = None, timeout: float | None = None):
            return DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                        _within_deadline(timeout, httpcore2.ConnectTimeout)))

        def get_extra_info(self, info: str):
            return self._inner.get_extra_info(info)

    return DeadlineStream(stream)


def _deadline_backend(inner):
    """``inner`` (httpcore's network backend) whose every connect, read and write waits at most until the deadline
    of the request its thread is making."""
    import httpcore2

    class DeadlineBackend(httpcore2.NetworkBackend):
        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            return _deadline_stream(inner.connect_tcp(host, port, _within_deadline(timeout, httpcore2.ConnectTimeout),
                                                      local_address, socket_options))

        def connect_unix_socket(self, path, timeout=None, socket_options=None):
            return _deadline_stream(inner.connect_unix_socket(
                path, _within_deadline(timeout, httpcore2.ConnectTimeout), socket_options))

        def sleep(self, seconds: float) -> None:
            inner.sleep(seconds)

    return DeadlineBackend()


def client(concurrency: int, timeout_s: float):
    """An httpx client for :func:`fetch`: ``concurrency`` pooled connections, redirects never followed, and every
    socket operation bounded by the deadline of the request it serves. (httpx has no public hook for the network
    backend: the pools' backend is wrapped; were that attribute gone, :func:`fetch` still checks the deadline per
    chunk of the reply.)"""
    import httpx2

    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    http = httpx2.Client(timeout=timeout_s, limits=limits, follow_redirects=False)
    for transport in [getattr(http, "_transport", None), *getattr(http, "_mounts", {}).values()]:  # direct, proxies
        pool = getattr(transport, "_pool", None)
        if pool is not None and hasattr(pool, "_network_backend"):
            pool._network_backend = _deadline_backend(pool._network_backend)
    return http


def fetch(http, method: str, url: str, headers: dict[str, str], data: bytes | None, timeout_s: float,
          max_bytes: int) -> HTTPReply:
    """``method url`` within ``timeout_s`` for the whole request (raises :class:`Deadline`), reading at most
    ``max_bytes`` of the reply (more: stops reading, ``too_big``). Transport errors propagate (httpx's)."""
    import httpx2

    deadline = time.monotonic() + timeout_s
    _DEADLINE.at = deadline
    try:
        with http.stream(method, url, content=data, headers=headers) as response:
            names = {k.lower(): v for k, v in response.headers.items()}
            declared = names.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                return HTTPReply(response.status_code, names, b"", too_big=True)
            chunks: list[bytes]
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    return HTTPReply(response.status_code, names, b"".join(chunks), too_big=True)
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise Deadline
            return HTTPReply(response.status_code, names, b"".join(chunks))
    except httpx2.TransportError:
        if time.monotonic() >= deadline:
            raise Deadline from None
        raise
    finally:
        _DEADLINE.at = None
