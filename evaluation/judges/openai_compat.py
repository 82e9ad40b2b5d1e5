"""A judge behind any OpenAI-compatible chat server (vLLM, hosted APIs), with a cache that makes runs resumable.

- Requests go to ``<url>/chat/completions`` with audio as ``input_audio`` parts (WAV, base64), temperature 0.
- Bounded concurrency (threads), retries with exponential backoff on connection errors, 429 and 5xx.
- Every answer is cached on disk under a key made from the server URL and the request body (model, messages,
  parameters; never the API key), written atomically as it arrives: an interrupted run asks only what is not cached.
- A reply that is not a chat completion (an error page, ``content: null``) and a request the server rejects (HTTP 4xx
  other than 429) become that item's raw answer, so they count as unparseable and are reported; they are not cached,
  so a rerun asks again. If the server rejects every item, the run stops with the first error (wrong model or URL).
- The API key is read from an environment variable (``OPENAI_API_KEY`` by default) and only ever sent in the header.
- A server that keeps failing (connection errors, 429, 5xx after every retry) stops the run with the item id.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from omniaudit.errors import InputError, ServiceError
from omniaudit.evaluation.judges.items import JudgeItem, refuse_unsent_media, to_wav

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class OpenAIJudge:
    def __init__(self, model: str, url: str, cache_dir: str | Path, concurrency: int = 4, max_retries: int = 5,
                 backoff_s: float = 0.5, timeout_s: float = 120.0, max_tokens: int = 32,
                 api_key_env: str = "OPENAI_API_KEY") -> None:
        self.model, self.url = model, url.rstrip("/")
        self.cache = Path(cache_dir)
        self.concurrency, self.max_retries, self.backoff_s = concurrency, max_retries, backoff_s
        self.timeout_s, self.max_tokens, self.api_key_env = timeout_s, max_tokens, api_key_env
        self.requests_sent = 0  # HTTP requests actually made (cache hits excluded), for reporting and tests
        self.rejected = 0  # items the server refused (HTTP 4xx), kept as unparseable answers

    def body(self, item: JudgeItem) -> dict:
        content = [{"type": "input_audio", "input_audio": {"data": base64.b64encode(to_wav(a)).decode(),
                                                           "format": "wav"}} for a in item.audios]
        content.append({"type": "text", "text": item.prompt})
        messages = ([{"role": "system", "content": item.system}] if item.system else []) + [
            {"role": "user", "content": content}]
        return {"model": self.model, "messages": messages, "temperature": 0, "max_tokens": self.max_tokens}

    def _cache_path(self, body: dict) -> Path:
        key = hashlib.sha256(json.dumps({"url": self.url, "body": body}, sort_keys=True).encode()).hexdigest()
        return self.cache / key[:2] / f"{key}.json"

    def answer(self, items: list[JudgeItem], progress=None) -> list[str]:
        refuse_unsent_media(items, "openai")
        self.cache.mkdir(parents=True, exist_ok=True)
        done = [0]
        rejected: list[str] = []

        def one(item: JudgeItem) -> str:
            body = self.body(item)
            path = self._cache_path(body)
            if path.exists():
                raw = json.loads(path.read_text(encoding="utf-8"))["raw"]
            else:
                raw, answered = self._ask(item, body)
                if answered:  # only real completions are kept; anything else is asked again next time
                    path.parent.mkdir(exist_ok=True)
                    tmp = path.with_suffix(f".tmp{os.getpid()}-{id(item)}")
                    tmp.write_text(json.dumps({"raw": raw}), encoding="utf-8")
                    os.replace(tmp, path)
                elif raw.startswith("[HTTP "):
                    rejected.append(f"item '{item.id}': {raw}")
            done[0] += 1
            if progress:
                progress(f"{done[0]}/{len(items)}")
            return raw

        with ThreadPoolExecutor(self.concurrency) as pool:
            raws = list(pool.map(one, items))
        if rejected and len(rejected) == len(items):
            raise InputError(f"the server rejected every request, e.g. {rejected[0]}", file=self.url)
        self.rejected = len(rejected)
        return raws

    def _ask(self, item: JudgeItem, body: dict) -> tuple[str, bool]:
        """(raw answer, whether it is a real completion)."""
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(body).encode()
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            request = urllib.request.Request(f"{self.url}/chat/completions", data=data, headers=headers, method="POST")
            self.requests_sent += 1
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    text = response.read().decode("utf-8", errors="replace")
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", errors="replace")[:300]
                last = f"HTTP {exc.code}: {detail}"
                if exc.code in RETRY_STATUS:
                    continue
                return f"[{last}]", False
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                last = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
                continue
            return _content(text)
        raise ServiceError(f"{self.url}: item '{item.id}' failed after {self.max_retries + 1} attempts ({last}); "
                          "answers received so far are cached, so rerunning the same command resumes")


def _content(text: str) -> tuple[str, bool]:
    """(assistant text, True) of a chat completion; anything else comes back verbatim (it will not parse), False."""
    try:
        content = json.loads(text)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return text[:2000], False
    return (content, True) if isinstance(content, str) else (text[:2000], False)
