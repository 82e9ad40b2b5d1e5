"""`transformers serve` (a real OpenAI-compatible server nobody here wrote) on 127.0.0.1 at a free port, on the CPU,
offline, loading the models named in requests (local folders) on demand. Used by tests/runners/test_serve.py and
benchmarks/server_throughput.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

SERVE_MODULES = ("fastapi", "uvicorn", "openai", "soxr")  # transformers[serving] + soxr for audio


def missing_modules() -> list[str]:
    import importlib.util

    return [m for m in SERVE_MODULES if importlib.util.find_spec(m) is None]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TransformersServer:
    def __init__(self, log: str | Path, timeout_s: float = 180.0) -> None:
        import httpx2

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = Path(log)
        cmd = [str(Path(sys.executable).parent / "transformers"), "serve", "--host", "127.0.0.1", "--port",
               str(self.port), "--device", "cpu", "--log-level", "warning"]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        with self.log.open("w") as fh:
            self.proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout_s
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"transformers serve exited ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                if httpx2.get(f"http://127.0.0.1:{self.port}/health", timeout=2).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"transformers serve not up after {timeout_s:.0f} s:\n{self.log_tail()}")
            time.sleep(0.5)

    def log_tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:] if self.log.exists() else ""

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
