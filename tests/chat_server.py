"""A local HTTP server speaking the OpenAI chat API, for fault injection and payload checks.

The real-server tests (tests/runners/test_serve.py) use ``transformers serve``; this twin does what no real server
does on demand: fail, send garbage, ``content: null``, reject ``video_url`` parts, return chosen logprobs, trickle or
flood its reply, refuse the key (401 / 403), redirect elsewhere, echo the key it got, list chosen models under
``/models``, honour or ignore constrained answers. It records every request body and Authorization header it
receives.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def prompt_text(body: dict) -> str:
    """The last text part of the last message (the item's prompt)."""
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else [p for p in content if p["type"] == "text"][-1]["text"]


def constrained(body: dict, text: str) -> str:
    """``text`` kept to the constraint a request asks, as vLLM does: ``structured_outputs.choice``, exactly one choice
    (``text`` if it is one, else the first); a ``response_format`` JSON schema, ``{"answer": <option>}`` (the same
    way from its ``answer`` enum). A request without either: ``text`` as it is."""
    choices = (body.get("structured_outputs") or {}).get("choice")
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    if choices:
        return text if text in choices else choices[0]
    if schema:
        options = schema["properties"]["answer"]["enum"]
        return json.dumps({"answer": text if text in options else options[0]})
    return text


def first_option(body: dict) -> str:
    """Answers with the first option the prompt names ("... one of: x, y." or "A or B"), else a sentence."""
    text = prompt_text(body)
    if "one of: " in text:
        return text.rsplit("one of: ", 1)[-1].split("\n")[0].rstrip(".").split(", ")[0]
    if "A or B" in text:
        return "A"
    return "The audio is in sync with the picture."


class ChatServer:
    """``fail_first`` requests (or every one with ``always_fail``) get HTTP ``status``; ``fault(body)`` may return
    "garbage" (a 200 that is not JSON), "null" (``content: null``) or an HTTP status for that request;
    ``reject_video`` answers 400 to any request with a ``video_url`` part; ``answer(body)`` is the reply text
    (default :func:`first_option`); ``probs(body, answer)`` gives {token: probability} for the first position when the
    request asks for logprobs (default: no ``logprobs`` in the reply); ``finish_reason`` is every completion's.

    Failure modes: ``trickle`` ("body": headers at once, then the completion one byte every ``trickle_s``;
    "headers": the status line and headers themselves that slowly); ``huge`` bytes of reply (with a Content-Length
    when ``huge_declared``, else read until the connection closes); ``redirect_to`` answers every request (POST and
    GET) with 302 to that URL; ``echo_auth`` puts the Authorization header it got into error bodies and answers;
    ``echo_key`` names more places where it echoes the bare key it got (the header's credential, no ``Bearer``):
    "content" (the answer), "finish_reason", "logprobs" (a generated token and an alternative, with its ``bytes``),
    "fingerprint" (the completion's ``model`` and ``system_fingerprint``), "models" (a field, a field name and a
    nested value of every ``/models`` entry).
    ``served_model`` and ``system_fingerprint`` are every completion's ``model`` and ``system_fingerprint`` (None, the
    default: the reply has no such field; both may be changed while the server runs).
    ``models`` is the ``/models`` list (None: ``/models`` answers 404); with ``always_fail`` and a 401 / 403
    ``status``, ``/models`` refuses too. ``honour_constraints``: a request's ``structured_outputs.choice`` or
    ``response_format`` JSON schema shapes the answer (:func:`constrained`); False: they are ignored. GET requests
    are counted in ``gets`` (their headers in ``get_auth``), not in ``requests``. ``version``: ``GET /version`` (at
    the server's root, as vLLM has it) answers ``{"version": version}``; None (the default): 404, as
    ``transformers serve`` does. The paths of GET requests are kept in ``get_paths``."""

    def __init__(self, fail_first: int = 0, always_fail: bool = False, status: int = 503,
                 fault: Callable[[dict], str | int | None] | None = None, reject_video: bool = False,
                 answer: Callable[[dict], str] = first_option,
                 probs: Callable[[dict, str], dict[str, float]] | None = None, retry_after: str | None = None,
                 finish_reason: str = "stop", trickle: str | None = None, trickle_s: float = 0.5, huge: int = 0,
                 huge_declared: bool = False, redirect_to: str | None = None, echo_auth: bool = False,
                 models: list[dict] | None = None, echo_key: tuple[str, ...] = (), served_model: str | None = None,
                 system_fingerprint: str | None = None, honour_constraints: bool = True,
                 version: str | None = None) -> None:
        self.requests, self.fail_first, self.always_fail, self.status = 0, fail_first, always_fail, status
        self.fault, self.reject_video, self.answer, self.probs = fault, reject_video, answer, probs
        self.retry_after, self.finish_reason = retry_after, finish_reason
        self.trickle, self.trickle_s, self.huge, self.huge_declared = trickle, trickle_s, huge, huge_declared
        self.redirect_to, self.echo_auth, self.models, self.echo_key = redirect_to, echo_auth, models, echo_key
        self.served_model, self.system_fingerprint = served_model, system_fingerprint
        self.honour_constraints = honour_constraints
        self.version = version
        self.get_paths: list[str] = []
        self.auth: list[str | None] = []
        self.bodies: list[dict] = []
        self.gets = 0
        self.get_auth: list[str | None] = []
        self.closing = threading.Event()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def send(self, status: int, payload: bytes, headers: dict | None = None) -> None:
                if server.trickle:
                    return self.trickled(status, payload, headers)
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def trickled(self, status: int, payload: bytes, headers: dict | None) -> None:
                head = (f"HTTP/1.0 {status} OK\r\nContent-Length: {len(payload)}\r\n"
                        + "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items()) + "\r\n").encode()
                slow, fast = (payload, head) if server.trickle == "body" else (head, b"")
                try:
                    self.wfile.write(fast)
                    self.wfile.flush()
                    for i in range(len(slow)):
                        if server.closing.wait(server.trickle_s):
                            return
                        self.wfile.write(slow[i:i + 1])
                        self.wfile.flush()
                    if server.trickle == "headers":
                        self.wfile.write(payload)
                except OSError:  # the client gave up
                    pass

            def flood(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if server.huge_declared:
                    self.send_header("Content-Length", str(server.huge))
                self.end_headers()
                chunk = b" " * 65536
                try:
                    self.wfile.write(b'{"choices": [{"message": {"content": "')
                    for start in range(0, server.huge, len(chunk)):
                        if server.closing.is_set():
                            return
                        self.wfile.write(chunk[:server.huge - start])
                except OSError:  # the client stopped reading
                    pass

            def key(self) -> str:
                return (self.headers.get("Authorization") or "").removeprefix("Bearer ")

            def refusal(self, status: int, message: str) -> bytes:
                error = {"error": message}
                if server.echo_auth:
                    error["received"] = self.headers.get("Authorization")
                return json.dumps(error).encode()

            def do_GET(self):
                with server.lock:
                    server.gets += 1
                    server.get_auth.append(self.headers.get("Authorization"))
                    server.get_paths.append(self.path)
                if server.redirect_to:
                    return self.send(302, b"", {"Location": server.redirect_to})
                if server.always_fail and server.status in (401, 403):
                    return self.send(server.status, self.refusal(server.status, "invalid api key"))
                if self.path.rstrip("/").endswith("/models") and server.models is not None:
                    models = server.models
                    if "models" in server.echo_key:
                        key = self.key()
                        models = [{**m, "root": f"/weights/{key}", key: "x", "meta": [{"note": key}]} for m in models]
                    return self.send(200, json.dumps({"object": "list", "data": models}).encode(),
                                     {"Content-Type": "application/json"})
                if self.path.rstrip("/") == "/version" and server.version is not None:
                    return self.send(200, json.dumps({"version": server.version}).encode(),
                                     {"Content-Type": "application/json"})
                self.send(404, b'{"detail": "Not Found"}')

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests += 1
                    n = server.requests
                    server.auth.append(self.headers.get("Authorization"))
                    server.bodies.append(body)
                if server.redirect_to:
                    return self.send(302, b"", {"Location": server.redirect_to})
                if server.always_fail or n <= server.fail_first:
                    headers = {"Retry-After": server.retry_after} if server.retry_after else None
                    message = "invalid api key" if server.status in (401, 403) else "overloaded"
                    return self.send(server.status, self.refusal(server.status, message), headers)
                if server.huge:
                    return self.flood()
                fault = server.fault(body) if server.fault else None
                has_video = any(isinstance(m["content"], list) and any(p["type"] == "video_url" for p in m["content"])
                                for m in body["messages"])
                if server.reject_video and has_video:
                    return self.send(400, b'{"error": {"message": "unsupported content type video_url"}}')
                if isinstance(fault, int):
                    return self.send(fault, self.refusal(fault, "audio too long"))
                if fault == "garbage":
                    return self.send(200, b"<html>proxy error</html>")
                text = server.answer(body)
                if server.honour_constraints:
                    text = constrained(body, text)
                if server.echo_auth:
                    text = f"{text} (you sent {self.headers.get('Authorization')})"
                key = self.key()
                if "content" in server.echo_key:
                    text = f"{text} {key}"
                finish = server.finish_reason
                if "finish_reason" in server.echo_key:
                    finish = f"{finish} {key}"
                choice = {"index": 0, "finish_reason": finish,
                          "message": {"role": "assistant", "content": None if fault == "null" else text}}
                if body.get("logprobs") and server.probs:
                    alternatives = [{"token": t, "logprob": math.log(p)}
                                    for t, p in server.probs(body, text).items()]
                    # the token generated is the text's own where it is an alternative (a sampled, less likely one)
                    chosen = next((a for a in alternatives if a["token"] == text),
                                  max(alternatives, key=lambda a: a["logprob"]))
                    content = [{**chosen, "top_logprobs": alternatives}]
                    if "logprobs" in server.echo_key:
                        echoed = {"token": key, "logprob": -9.0, "bytes": list(key.encode())}
                        content[0]["top_logprobs"] = [*alternatives, echoed]
                        content.append({**echoed, "top_logprobs": [echoed]})
                    choice["logprobs"] = {"content": content}
                reply = {"object": "chat.completion", "choices": [choice]}
                if server.served_model is not None:
                    reply["model"] = server.served_model
                if server.system_fingerprint is not None:
                    reply["system_fingerprint"] = server.system_fingerprint
                if "fingerprint" in server.echo_key:
                    reply.update(model=f"{body.get('model')}-{key}", system_fingerprint=key)
                self.send(200, json.dumps(reply).encode(), {"Content-Type": "application/json"})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> ChatServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
