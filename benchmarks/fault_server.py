"""An OpenAI-compatible chat server with the fault modes ``tests/chat_server.py`` does not have, for
``benchmarks/faults.py``.

``tests/chat_server.py`` (used by the fault suite for its own modes: failing statuses, ``Retry-After``, garbage,
``content: null``, trickled and huge replies, redirects, echoed keys, ``/models`` lists, served model and
fingerprint) stays as it is; this server adds, per request:

- ``truncate``: a Content-Length for the whole reply, half of it sent, then the connection closed;
- ``reset``: the connection closed without any reply;
- ``empty_choices`` (``"choices": []``), ``no_choices`` (no ``choices`` key), ``error_200`` (HTTP 200 with an
  ``error`` object), ``content_number`` (``content: 42``), ``content_list`` (content as a list of text parts),
  ``choices_string`` (``"choices": "A"``);
- ``logprobs_garbage`` (``logprobs: {"content": "oops"}``), ``logprobs_nan`` (``NaN`` / ``Infinity`` literals and a
  ``1e400`` logprob beside a valid answer), ``logprobs_disagree`` (the text names one option, the logprobs favour
  the other at 0.99), ``finish_reason_object`` (a JSON object where a string is due);
- ``length_empty`` (``finish_reason: length``, empty content), ``huge`` (a content of ``huge_bytes`` letters),
  ``sleep`` (the reply after ``sleep_s`` seconds: a request slower than the client's timeout), ``html`` (a 200 that
  is an HTML page);
- ``model_switch``: from the ``switch_after``-th request on, the completion names ``switched_model`` and
  ``switched_fingerprint`` (a deployment changed in the middle of a run).

``mode(body)`` picks the mode of a request from its body (so retries of one item meet the same fault); ``every(k,
mode)`` faults one item in ``k`` (by a hash of its prompt), ``once(k, mode)`` only the first request of such an
item (a transient fault: its retry is answered). ``models_raw``: the bytes ``/models`` answers (garbage, a wrong
shape) instead of ``models``; ``models_status`` its HTTP status. ``hold_after = N`` makes every request after the N-th
wait until :meth:`release` (a run held at a known point, to be killed there). Every request's Authorization header
is kept in ``auth``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ("ok", "truncate", "reset", "empty_choices", "no_choices", "error_200", "content_number", "content_list",
         "choices_string", "logprobs_garbage", "logprobs_nan", "logprobs_disagree", "finish_reason_object",
         "length_empty", "huge", "sleep", "html")


def prompt_text(body: dict) -> str:
    """The last text part of the last message (the item's prompt)."""
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else [p for p in content if p["type"] == "text"][-1]["text"]


def digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big")


def seeded_answer(body: dict) -> str:
    """"A" or "B", fixed by the prompt (not constant, so an audit of the answers is not trivial)."""
    return "AB"[digest(prompt_text(body)) % 2]


def faulted(prompt: str, k: int) -> bool:
    """Whether :func:`every` faults the item with this prompt."""
    return digest("fault:" + prompt) % k == 0


def every(k: int, mode: str) -> Callable[[dict], str]:
    """One item in ``k`` gets ``mode``, the others are answered."""
    return lambda body: mode if faulted(prompt_text(body), k) else "ok"


def once(k: int, mode: str) -> Callable[[dict], str]:
    """The first request of one item in ``k`` gets ``mode``; its retries are answered."""
    seen: set[str] = set()
    lock = threading.Lock()

    def pick(body: dict) -> str:
        prompt = prompt_text(body)
        if not faulted(prompt, k):
            return "ok"
        with lock:
            first = prompt not in seen
            seen.add(prompt)
        return mode if first else "ok"

    return pick


class FaultServer:
    def __init__(self, mode: str | Callable[[dict], str] = "ok", *, answer: Callable[[dict], str] = seeded_answer,
                 models: list[dict] | None = None, served_model: str | None = None,
                 system_fingerprint: str | None = None, sleep_s: float = 5.0, delay_s: float = 0.0,
                 huge_bytes: int = 2_000_000, hold_after: int | None = None, switch_after: int | None = None,
                 switched_model: str = "m-v2", switched_fingerprint: str = "fp-2", models_raw: bytes | None = None,
                 models_status: int = 200) -> None:
        self.models_raw, self.models_status = models_raw, models_status
        self.mode = mode if callable(mode) else (lambda body, m=mode: m)
        self.answer, self.models = answer, models
        self.served_model, self.system_fingerprint = served_model, system_fingerprint
        self.sleep_s, self.delay_s, self.huge_bytes = sleep_s, delay_s, huge_bytes
        self.hold_after, self.switch_after = hold_after, switch_after
        self.switched_model, self.switched_fingerprint = switched_model, switched_fingerprint
        self.requests = 0
        self.auth: list[str | None] = []
        self.modes: list[str] = []
        self.lock = threading.Lock()
        self.held = threading.Event()  # set once a request waits at hold_after
        self.go = threading.Event()
        self.closing = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def send(self, status: int, payload: bytes, length: int | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload) if length is None else length))
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()

            def do_GET(self):
                with server.lock:
                    server.auth.append(self.headers.get("Authorization"))
                if self.path.rstrip("/").endswith("/models") and server.models_raw is not None:
                    return self.send(server.models_status, server.models_raw)
                if self.path.rstrip("/").endswith("/models") and server.models is not None:
                    return self.send(200, json.dumps({"object": "list", "data": server.models}).encode())
                self.send(404, b'{"detail": "Not Found"}')

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests += 1
                    n = server.requests
                    server.auth.append(self.headers.get("Authorization"))
                if server.hold_after is not None and n > server.hold_after:
                    server.held.set()
                    while not server.go.wait(0.05):
                        if server.closing.is_set():
                            return
                if server.delay_s:
                    time.sleep(server.delay_s)
                mode = server.mode(body)
                with server.lock:
                    server.modes.append(mode)
                try:
                    self.reply(body, mode, n)
                except OSError:  # the client gave up (a timeout, a killed run)
                    self.close_connection = True

            def reply(self, body: dict, mode: str, n: int) -> None:
                if mode == "reset":
                    self.close_connection = True
                    return
                if mode == "html":
                    return self.send(200, b"<html><body>502 Bad Gateway</body></html>")
                if mode == "sleep" and server.closing.wait(server.sleep_s):
                    return
                text = server.answer(body)
                choice: dict = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                if mode == "content_number":
                    choice["message"]["content"] = 42
                elif mode == "content_list":
                    choice["message"]["content"] = [{"type": "text", "text": text}]
                elif mode == "length_empty":
                    choice.update(finish_reason="length", message={"role": "assistant", "content": ""})
                elif mode == "huge":
                    choice["message"]["content"] = text * server.huge_bytes
                elif mode == "logprobs_garbage":
                    choice["logprobs"] = {"content": "oops"}
                elif mode == "logprobs_disagree":
                    other = "B" if text == "A" else "A"
                    top = [{"token": other, "logprob": -0.01}, {"token": text, "logprob": -4.6}]
                    choice["logprobs"] = {"content": [{"token": text, "logprob": -4.6, "top_logprobs": top}]}
                elif mode == "finish_reason_object":
                    choice["finish_reason"] = {"type": "stop", "n": float("nan")}
                elif mode == "logprobs_nan":
                    other = "B" if text == "A" else "A"
                    top = [{"token": text, "logprob": float("nan")}, {"token": other, "logprob": float("inf")}]
                    choice["logprobs"] = {"content": [{"token": text, "logprob": 1e400, "top_logprobs": top}]}
                reply: dict = {"object": "chat.completion", "choices": [choice]}
                if mode == "empty_choices":
                    reply["choices"] = []
                elif mode == "no_choices":
                    del reply["choices"]
                elif mode == "choices_string":
                    reply["choices"] = text
                elif mode == "error_200":
                    reply = {"error": {"message": "model overloaded", "type": "server_error"}}
                switched = server.switch_after is not None and n > server.switch_after
                model = server.switched_model if switched else server.served_model
                fingerprint = server.switched_fingerprint if switched else server.system_fingerprint
                if model is not None:
                    reply["model"] = model
                if fingerprint is not None:
                    reply["system_fingerprint"] = fingerprint
                payload = json.dumps(reply).encode()
                if mode == "truncate":
                    self.send(200, payload[: len(payload) // 2], length=len(payload))
                    self.close_connection = True
                    return
                self.send(200, payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda *a: None  # a client that gave up (a timeout, a killed run) is not news
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def release(self) -> None:
        self.go.set()

    def close(self) -> None:
        self.closing.set()
        self.go.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FaultServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
