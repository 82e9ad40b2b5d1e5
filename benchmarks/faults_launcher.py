"""How the fault suite runs ``omniaudit``: a warm launcher (one process imports omniaudit once and forks a child per
command that runs ``omniaudit.cli.main`` as ``python -m omniaudit`` would) and the :class:`Suite` every case runs in
(its datasets, predictions, environment and key)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from fault_server import seeded_answer
from faults_core import CSV_PAIRS, FAST_AUDIT, KEY_VAR, PAIRS, ROOT, Run, as_text

# A warm launcher: one process imports omniaudit and its audit stack once, then forks a child per command that runs
# ``omniaudit.cli.main(argv)`` as ``python -m omniaudit`` would (its own cwd, stdout and stderr files, an uncaught
# exception printed as a traceback with exit status 1), so a case pays for the command, not for its imports. Kills
# and races use real ``python -m omniaudit`` processes.
LAUNCHER = r"""
import io, json, os, sys, threading, traceback
for name in ("omniaudit.cli", "omniaudit.evaluation.preference.audit", "omniaudit.data_builders.preference",
             "omniaudit.runners.run", "omniaudit.runners.openai_compat",
             "omniaudit.evaluation.scorecard.runner", "matplotlib.pyplot", "sklearn.linear_model", "pandas",
             "datasets", "pyarrow.parquet", "httpx"):
    try:
        __import__(name)
    except Exception:
        pass
channel, lock = os.fdopen(os.dup(1), "w"), threading.Lock()
def reply(message):
    with lock:
        channel.write(json.dumps(message) + "\n")
        channel.flush()
def wait(tag, pid):
    _, status = os.waitpid(pid, 0)
    reply({"tag": tag, "rc": os.waitstatus_to_exitcode(status)})
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.chdir(request["cwd"])
            for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
                opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(opened, fd)
                os.close(opened)
            sys.stdin = open(os.devnull)
            sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
            sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True,
                                          errors="backslashreplace")
            sys.argv = ["omniaudit", *request["argv"]]
            from omniaudit.cli import main
            try:
                code = main(request["argv"])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if isinstance(exc.code, str):
                    print(exc.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code if isinstance(code, int) else 1)
    reply({"tag": request["tag"], "pid": pid})
    threading.Thread(target=wait, args=(request["tag"], pid), daemon=True).start()
"""


class Launcher:
    def __init__(self, env: dict, io_dir: Path) -> None:
        self.io_dir = io_dir
        io_dir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-c", LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, cwd=ROOT, text=True)
        self.lock, self.ready = threading.Lock(), threading.Condition()
        self.messages: dict[str, dict] = {}
        self.count = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.ready:
                self.messages.setdefault(message.pop("tag"), {}).update(message)
                self.ready.notify_all()

    def _wait(self, tag: str, key: str, timeout: float) -> dict | None:
        with self.ready:
            self.ready.wait_for(lambda: key in self.messages.get(tag, {}) or self.proc.poll() is not None, timeout)
            return self.messages.get(tag) if key in self.messages.get(tag, {}) else None

    def run(self, argv: list[str], cwd: Path, timeout: float) -> tuple[int | None, str, str]:
        with self.lock:
            self.count += 1
            tag = str(self.count)
            out, err = self.io_dir / f"{tag}.stdout", self.io_dir / f"{tag}.stderr"
            self.proc.stdin.write(json.dumps({"tag": tag, "argv": argv, "cwd": str(cwd), "stdout": str(out),
                                              "stderr": str(err)}) + "\n")
            self.proc.stdin.flush()
        started = self._wait(tag, "pid", 60)
        if started is None:
            raise RuntimeError("the launcher did not start the command")
        done = self._wait(tag, "rc", timeout)
        rc = None
        if done is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(started["pid"], signal.SIGKILL)
            self._wait(tag, "rc", 30)
        else:
            rc = done["rc"]
        texts = out.read_text(errors="replace"), err.read_text(errors="replace")
        out.unlink()
        err.unlink()
        return rc, *texts

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Suite:
    """The shared fixtures of one suite run (a built dataset, a clean predictions file and its audit, a clean
    preference CSV and its audit), the environment of every command and helpers to run them."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root, self.seed, self.keep = root, seed, False
        self.launcher: Launcher | None = None
        self.key = f"fk-{random.Random(seed).getrandbits(64):016x}-secret"
        self.env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(root / "hf"),
                    "MPLBACKEND": "Agg", "COLUMNS": "400", "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1",
                    KEY_VAR: self.key, "OMNIAUDIT_CACHE": str(root / "default-cache"),
                    "WANDB_MODE": "disabled"}
        self.env.pop("OPENAI_API_KEY", None)
        self.env["PYTHONPATH"] = os.pathsep.join([str(ROOT), self.env.get("PYTHONPATH", "")]).rstrip(os.pathsep)

    # -- processes
    def omni(self, argv: list[str], cwd: Path, *, timeout: float = 180, env: dict | None = None, **kw) -> Run:
        """``omniaudit ARGV`` in ``cwd``: through the warm launcher, or a fresh ``python -m omniaudit``."""
        if self.launcher is not None and env is None:
            rc, out, err = self.launcher.run(argv, cwd, timeout)
            return Run(argv, rc, out, err, **kw)
        try:
            proc = subprocess.run([sys.executable, "-m", "omniaudit", *argv], cwd=cwd, env=env or self.env,
                                  capture_output=True, text=True, timeout=timeout, errors="replace")
            return Run(argv, proc.returncode, proc.stdout, proc.stderr, **kw)
        except subprocess.TimeoutExpired as exc:
            return Run(argv, None, as_text(exc.stdout), as_text(exc.stderr), **kw)

    def start(self, argv: list[str], cwd: Path, tag: str) -> tuple[subprocess.Popen, list[str], Path, Path]:
        out, err = cwd / f".{tag}.stdout", cwd / f".{tag}.stderr"
        with out.open("wb") as o, err.open("wb") as e:
            proc = subprocess.Popen([sys.executable, "-m", "omniaudit", *argv], cwd=cwd, env=self.env, stdout=o,
                                    stderr=e)
        return proc, argv, out, err

    @staticmethod
    def finish(started, timeout: float = 180, **kw) -> Run:
        proc, argv, out, err = started
        try:
            rc = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = None
        run = Run(argv, rc, out.read_text(errors="replace"), err.read_text(errors="replace"), **kw)
        out.unlink()
        err.unlink()
        return run

    # -- fixtures
    def setup(self) -> None:
        from omniaudit.data_builders.preference import SyntheticSpec, synthesize
        from omniaudit.data_builders.preference.read import COLUMNS

        self.ds = self.root / "ds"
        run = self.omni(["build", "preference", "--pairs", str(PAIRS), "--out", str(self.ds), "-q"], self.root)
        base = self.root / "base"
        base.mkdir()
        run2 = self.omni(["judge", "--dataset", str(self.ds), "--config", "judge", "--judge", "scripted:random",
                          "--seed", "0", "--out", "j.jsonl", "-q"], base)
        run3 = self.omni(["audit", "preference", "--dataset", str(self.ds), "--predictions", "j=j.jsonl",
                          *FAST_AUDIT, "--out", "a", "-q"], base)
        self.pref_csv = self.root / "pref.csv"
        synthesize(SyntheticSpec(n_pairs=CSV_PAIRS, seed=3))[list(COLUMNS)].to_csv(self.pref_csv, index=False)
        base_csv = self.root / "base-csv"
        base_csv.mkdir()
        shutil.copy(self.pref_csv, base_csv / "pref.csv")
        run4 = self.omni(["audit", "preference", "--source", "pref.csv", *FAST_AUDIT, "--out", "a", "-q"], base_csv)
        for r in (run, run2, run3, run4):
            if r.rc != 0:
                raise SystemExit(f"setup failed: omniaudit {' '.join(r.argv)}: {r.stderr[-2000:]}")
        self.base_pred = base / "j.jsonl"
        self.base_audit = base / "a"
        self.base_csv_audit = base_csv / "a"
        self.n_csv_pairs = json.loads((self.base_csv_audit / "audit.json").read_text())["dataset"]["n_pairs"]
        import pyarrow.parquet as pq

        table = pq.read_table(next((self.ds / "judge").glob("*.parquet")), columns=["id", "prompt"]).to_pylist()
        self.prompts = {r["id"]: r["prompt"] for r in table}

    def expected_label(self, item_id: str) -> str:
        return seeded_answer({"messages": [{"content": self.prompts[item_id]}]})

    def judge_argv(self, url: str, out: str, *extra: str, cache: str | None = "cache") -> list[str]:
        return ["judge", "--dataset", str(self.ds), "--config", "judge", "--judge", f"openai:m@{url}",
                "--api-key-env", KEY_VAR, "--allow-insecure-key",
                *(["--cache", cache] if cache else ["--no-cache"]), "--out", out, *extra]
