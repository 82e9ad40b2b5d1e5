"""A local HTTP server speaking the OpenAI chat API, for fault injection and payload checks.

The real-server tests (tests/evaluation/test_serve.py) use ``transformers serve``; this twin does what no real server
does on demand: fail, send garbage, ``content: null``, reject ``video_url`` parts, return chosen logprobs. It records
every request body it receives.
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
    request asks for logprobs (default: no ``logprobs`` in the reply)."""

    def __init__(self, fail_first: int = 0, always_fail: bool = False, status: int = 503,
                 fault: Callable[[dict], str | int | None] | None = None, reject_video: bool = False,
                 answer: Callable[[dict], str] = first_option,
                 probs: Callable[[dict, str], dict[str, float]] | None = None, retry_after: str | None = None) -> None:
        self.requests, self.fail_first, self.always_fail, self.status = 0, fail_first, always_fail, status
        self.fault, self.reject_video, self.answer, self.probs = fault, reject_video, answer, probs
        self.retry_after = retry_after
        self.auth: list[str | None] = []
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def send(self, status: int, payload: bytes, headers: dict | None = None) -> None:
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests += 1
                    n = server.requests
                    server.auth.append(self.headers.get("Authorization"))
                    server.bodies.append(body)
                if server.always_fail or n <= server.fail_first:
                    headers = {"Retry-After": server.retry_after} if server.retry_after else None
                    return self.send(server.status, b'{"error": "overloaded"}', headers)
                fault = server.fault(body) if server.fault else None
                has_video = any(isinstance(m["content"], list) and any(p["type"] == "video_url" for p in m["content"])
                                for m in body["messages"])
                if server.reject_video and has_video:
                    return self.send(400, b'{"error": {"message": "unsupported content type video_url"}}')
                if isinstance(fault, int):
                    return self.send(fault, b'{"error": "audio too long"}')
                if fault == "garbage":
                    return self.send(200, b"<html>proxy error</html>")
                text = server.answer(body)
                choice = {"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": None if fault == "null" else text}}
                if body.get("logprobs") and server.probs:
                    alternatives = [{"token": t, "logprob": math.log(p)}
                                    for t, p in server.probs(body, text).items()]
                    chosen = max(alternatives, key=lambda a: a["logprob"])
                    choice["logprobs"] = {"content": [{**chosen, "top_logprobs": alternatives}]}
                self.send(200, json.dumps({"object": "chat.completion", "choices": [choice]}).encode(),
                          {"Content-Type": "application/json"})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> ChatServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
