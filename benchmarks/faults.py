"""Nothing silently wrong: a fault suite run end to end through the real command line, with counts.

Every case runs ``omniaudit`` commands in processes of their own (kills, servers and races need real processes; see
the warm launcher below) and classifies what came out:

- **clean**: the command succeeded with correct output, or refused with exit 2 and one error line naming the file,
  row, field or option, leaving nothing half-written behind;
- **silently wrong**: exit 0 but the output is wrong, incomplete or contaminated (the API key in any file or message
  of the run, NaN / Infinity in a written measure, answers of two deployments with no trace of it, a verdict from an
  unparsed reply, measures changed by a corrupt input that was accepted, a half-written file after a kill);
- **crash**: a Python traceback, or death by a signal nobody sent;
- **unclear**: anything else (a valid input refused, an error without one clear line, leftovers); printed.

Families (each case seeded; ``--seed`` changes the mutations and kill points):

1. ``kills``: SIGKILL of ``omniaudit judge`` (``openai:`` against a held :class:`fault_server.FaultServer`, with and
   without the response cache, at several request counts around the journal's 64-item chunk and while the file is
   written; ``scripted:`` at seeded fractions of an uninterrupted run's time), of ``audit preference``, ``build
   preference`` and ``scorecard`` at seeded fractions of their time, of one shard of a sharded judge (then merged);
   the rerun must write the bytes of an uninterrupted run (the scorecard: its card, measures and predictions), a
   killed run must never leave a half-written output, and a rerun with other sampling options or against another
   deployment must not resume the killed run's journal.
2. ``server``: ``tests/chat_server.py`` modes (500 / 429 with retries and odd ``Retry-After`` values, always 500, 401,
   redirect, garbage, ``content: null``, trickled and huge replies, non-finite logprobs, the key echoed in every
   field, another or an unlisted model) and ``benchmarks/fault_server.py`` modes (truncated body, reset connection,
   slow reply, each on some items always or only once; empty / missing / malformed choices, HTTP 200 errors, wrong
   content types, garbage logprobs, logprobs favouring the option the text does not name, an object as
   ``finish_reason``, empty ``length`` replies, huge replies, a broken ``/models``, a deployment switched mid-run and
   under a cached answer) and a judge URL carrying the key. Every file of the run (output, response cache, the audit
   of its answers) and its messages are searched for the API key.
3. ``fuzz-predictions`` / ``fuzz-csv``: seeded mutations of an ``omniaudit judge`` predictions JSONL (fed to ``audit
   preference --predictions``) and of an EmoPrefer CSV (fed to ``audit preference --source``): truncated lines, wrong
   types, NaN / inf, JSON list rows, duplicated and conflicting rows, unknown and missing fields, huge numbers,
   unicode, BOM, CRLF, other encodings, rows of another run or build. An accepted mutation must give the measures of
   the clean input (where it changes nothing) or the expected number of pairs.
4. ``options``: numeric options (nan, inf, 0, negative, huge, unicode minus, hex) of ``judge``, ``audit preference``
   and ``scorecard``, run end to end.
5. ``concurrency``: two judges on one ``--out`` (held mid-run, and racing), two judges sharing a response cache, two
   audits and two builds on one ``--out``, an audit reading a predictions file while a judge replaces it.

Commands that need no kill or race run through a warm launcher (one process imports omniaudit once and forks a child
per command that runs ``omniaudit.cli.main``, with its own cwd, stdout, stderr and exit status); kills and races run
``python -m omniaudit`` processes. ``--quick``: about 145 cases, ``--smoke``: the 16 the tests run, default: all
(about 360; three seeds of every mutation).

Prints one table per family, the cases that were not clean, and::

    faults: tried N, clean C, unclear U, silently wrong W, crashes K — goal 0 silently wrong, 0 crashes

exiting 1 when W or K > 0.

    python benchmarks/faults.py [--quick] [--seed 0] [--jobs 2] [--family kills ...] [--keep]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (HERE, ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from chat_server import ChatServer  # noqa: E402
from fault_server import FaultServer, every, faulted, once, seeded_answer  # noqa: E402

VERDICTS = ("clean", "unclear", "silently wrong", "crash")
FAMILIES = ("kills", "server", "fuzz-predictions", "fuzz-csv", "options", "concurrency")
TIERS = ("smoke", "quick", "full")  # smoke ⊂ quick ⊂ full
KEY_VAR = "FAULT_SUITE_KEY"
FAST_AUDIT = ["--n-resamples", "200", "--no-source-classifier", "--no-controls", "--no-length-control",
              "--no-style-control"]
PAIRS = 60  # 92 judge items: more than the journal's 64-item chunk
CSV_PAIRS = 80
TRACEBACK = "Traceback (most recent call last)"
ERROR_LINE = re.compile(r"^(?:omniaudit[\w -]*: )?error: ", re.IGNORECASE)
LEFTOVER = re.compile(r"^\..*(?:\.tmp-\d+|\.old-\d+|\.journal-|omniaudit-lock)")
MEASURE_KEYS = ("slices", "predictors")  # what an audit measured (compared with the clean input's audit)


# ---------------------------------------------------------------------------------------------------- outcomes
@dataclass
class Run:
    """One process of a case. ``expect``: succeed | refuse | either | killed (a run this suite killed);
    ``names``: words of which the error line must hold one when it refuses; ``codes``: refusal exit codes."""

    argv: list[str]
    rc: int | None
    stdout: str = ""
    stderr: str = ""
    expect: str = "either"
    names: tuple[str, ...] = ()
    codes: tuple[int, ...] = (2,)


@dataclass
class Outcome:
    """What a case left: its runs, the output files or folders (searched for the key and for NaN / Infinity), other
    files of the run searched for the key only (response caches), ``problems`` found in the output of a run that
    exited 0 (silently wrong), leftovers (temporaries, journals, locks) and notes."""

    family: str
    case: str
    runs: list[Run] = field(default_factory=list)
    outputs: list[Path] = field(default_factory=list)
    secret_roots: list[Path] = field(default_factory=list)
    key: str | None = None
    problems: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Result:
    family: str
    case: str
    verdict: str
    reason: str
    seconds: float
    detail: str = ""  # each run's exit status and last stderr line (printed with --verbose)


def error_messages(stderr: str) -> list[str]:
    """The error messages of a run's stderr, each with its continuation lines joined."""
    messages: list[str] = []
    current: list[str] | None = None
    for line in stderr.splitlines():
        if ERROR_LINE.match(line):
            current = [line.strip()]
            messages.append("")
        elif current is not None and line.strip() and not re.match(r"^(warning|usage|note):", line, re.I):
            current.append(line.strip())
        else:
            current = None
        if current is not None:
            messages[-1] = " ".join(current)
    return messages


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def run_verdict(run: Run) -> tuple[str, str]:
    """One process: crash, unclear, silently wrong (exit 0 where a refusal was due) or clean."""
    if TRACEBACK in run.stderr:
        return "crash", f"traceback: {_last_line(run.stderr)}"
    if run.expect == "killed" and (run.rc is None or run.rc == -signal.SIGKILL or run.rc == 0):
        return "clean", ""
    if run.rc is None:
        return "unclear", "timed out"
    if run.rc < 0:
        return "crash", f"died of signal {-run.rc}"
    if run.rc == 0:
        if run.expect == "refuse":
            return "silently wrong", "exit 0 on an input or option that must be refused"
        return "clean", ""
    if run.rc in run.codes:
        messages = error_messages(run.stderr)
        if run.expect == "succeed":
            return "unclear", f"exit {run.rc} on a valid run: {messages[0] if messages else _last_line(run.stderr)}"
        if len(messages) != 1:
            return "unclear", f"exit {run.rc} with {len(messages)} error lines: {_last_line(run.stderr)}"
        if run.names and not any(n.lower() in messages[0].lower() for n in run.names):
            return "unclear", f"the error names none of {list(run.names)}: {messages[0][:300]}"
        return "clean", ""
    return "unclear", f"exit {run.rc}: {_last_line(run.stderr)}"


def _files(roots: Iterable[Path]) -> list[Path]:
    out = []
    for root in roots:
        if root.is_file():
            out.append(root)
        elif root.is_dir():
            out += [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    return sorted(out)


def key_leaks(roots: Iterable[Path], key: str, texts: Iterable[tuple[str, str]] = ()) -> list[str]:
    """Every file under ``roots`` (and every named text) holding the key: plain, UTF-16 or as a list of bytes."""
    needles = (key.encode(), key.encode("utf-16-le"), ", ".join(str(b) for b in key.encode()).encode())
    found = [str(p) for p in _files(roots) if any(n in p.read_bytes() for n in needles)]
    return found + [name for name, text in texts if key in text]


NON_FINITE = {"nan", "inf", "-inf", "infinity", "-infinity"}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _no_constant(name: str):
    raise ValueError(name)


def non_finite(roots: Iterable[Path]) -> list[str]:
    """Written measures that are NaN / Infinity: such literals in JSON / JSONL files, nan / inf cells in CSV files."""
    found = []
    for path in _files(roots):
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix in (".json", ".jsonl"):
            for i, line in enumerate([text] if path.suffix == ".json" else text.splitlines()):
                try:
                    json.loads(line, parse_constant=_no_constant)
                except ValueError as exc:
                    if str(exc) in ("NaN", "Infinity", "-Infinity"):
                        found.append(f"{path.name}: {exc} (line {i + 1})")
                        break
        elif path.suffix == ".csv":
            table = list(csv.reader(io.StringIO(text)))
            for j, name in enumerate(table[0] if table else []):
                column = [row[j].strip() for row in table[1:] if j < len(row) and row[j].strip()]
                bad = [c for c in column if c.lower() in NON_FINITE]
                numeric = all(_is_number(c) for c in column) and (
                    name.startswith("p_") or any(c.lower() not in NON_FINITE for c in column))
                if bad and numeric:  # a column of numbers (not e.g. generator names, one of them "inf")
                    found.append(f"{path.name}: column {name!r} holds {bad[0]!r}")
                    break
    return found


def classify(outcome: Outcome) -> tuple[str, str]:
    """The case's verdict (the worst of its runs and its checks) and why."""
    found = [run_verdict(r) for r in outcome.runs]
    if outcome.key:
        texts = [(f"stdout/stderr of run {i + 1}", r.stdout + r.stderr) for i, r in enumerate(outcome.runs)]
        leaks = key_leaks([*outcome.outputs, *outcome.secret_roots], outcome.key, texts)
        if leaks:
            found.append(("silently wrong", f"the API key is in {', '.join(leaks[:3])}"))
    nans = non_finite(outcome.outputs)
    if nans:
        found.append(("silently wrong", f"non-finite measures written: {'; '.join(nans[:3])}"))
    if outcome.problems:
        found.append(("silently wrong", "; ".join(outcome.problems[:3])))
    if outcome.leftovers:
        found.append(("unclear", f"left behind: {', '.join(outcome.leftovers[:4])}"))
    worst = max(found, key=lambda f: VERDICTS.index(f[0]), default=("unclear", "no run"))
    return worst


# -------------------------------------------------------------------------------------------------- processes
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
            return Run(argv, None, _text(exc.stdout), _text(exc.stderr), **kw)

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


def _text(data) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def leftovers(*folders: Path) -> list[str]:
    found = []
    for folder in folders:
        if folder.is_dir():
            found += [str(p.relative_to(folder)) for p in folder.rglob(".*") if LEFTOVER.match(p.name)]
    return sorted(found)


def audit_diff(folder: Path, base: Path) -> str | None:
    """Where an audit's measures differ from the clean input's audit (None: the same)."""
    try:
        got, want = json.loads((folder / "audit.json").read_text()), json.loads((base / "audit.json").read_text())
    except (OSError, ValueError) as exc:
        return f"no readable audit.json ({exc})"
    for key in MEASURE_KEYS:
        if got.get(key) != want.get(key):
            return f"audit.json '{key}' differs from the clean input's"
    if (folder / "predictions.csv").read_bytes() != (base / "predictions.csv").read_bytes():
        return "predictions.csv differs from the clean input's"
    return None


def folder_complete(folder: Path) -> str | None:
    """A written output folder is whole: its marker lists files that are all there."""
    marker = folder / ".omniaudit.json"
    try:
        listed = json.loads(marker.read_text())["files"]
    except (OSError, ValueError, KeyError) as exc:
        return f"{folder.name} has no readable marker ({exc})"
    missing = [f for f in listed if not (folder / f).is_file()]
    return f"{folder.name} lacks {missing[:3]}" if missing else None


def wait_for(predicate: Callable[[], bool], timeout: float, proc: subprocess.Popen | None = None) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        if proc is not None and proc.poll() is not None:
            return predicate()
        time.sleep(0.01)
    return False


@dataclass
class Case:
    family: str
    name: str
    tier: str
    fn: Callable[[Suite, Path], Outcome]


# ---------------------------------------------------------------------------------------------------- 1. kills
def _kill(started, delay: float = 0.0) -> Run:
    if delay:
        time.sleep(delay)
    proc = started[0]
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    return Suite.finish(started, expect="killed")


def kill_judge_openai(at: int | None, cached: bool, jitter: float) -> Callable[[Suite, Path], Outcome]:
    """SIGKILL an ``openai:`` judge held after ``at`` requests (None: after all of them, ``jitter`` s later, while
    it writes), then rerun it; the rerun's file must be the uninterrupted run's, byte for byte."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("kills", "", key=suite.key)
        with FaultServer(models=[{"id": "m", "object": "model"}]) as server:
            clean = suite.omni(suite.judge_argv(server.url, "clean.jsonl", "-q", cache=None), d, expect="succeed")
            o.runs.append(clean)
            cache = "cache" if cached else None
            argv = suite.judge_argv(server.url, "p.jsonl", "-q", cache=cache)
            base = server.requests
            if at is not None:
                server.hold_after = base + at
            started = suite.start(argv, d, "killed")
            if at is None:
                wait_for(lambda: server.requests >= base + len(suite.prompts), 60, started[0])
            else:
                wait_for(server.held.is_set, 60, started[0])
            o.runs.append(_kill(started, jitter))
            server.hold_after = None
            server.release()
            out = d / "p.jsonl"
            if out.exists() and clean.rc == 0 and out.read_bytes() != (d / "clean.jsonl").read_bytes():
                o.problems.append(f"after the kill p.jsonl holds {out.stat().st_size} bytes that are not the run's")
            rerun = suite.omni(argv, d, expect="succeed")
            o.runs.append(rerun)
        if rerun.rc == 0 and clean.rc == 0 and out.read_bytes() != (d / "clean.jsonl").read_bytes():
            o.problems.append("the rerun after the kill wrote other bytes than an uninterrupted run")
        o.outputs = [out]
        o.secret_roots = [d / "cache"]
        o.leftovers = leftovers(d)
        return o

    return case


def _timed(suite: Suite, argv: list[str], d: Path, tag: str) -> tuple[Run, float]:
    """A real ``python -m omniaudit`` run and how long it took (kill points are fractions of it)."""
    started = time.monotonic()
    run = suite.finish(suite.start(argv, d, tag), expect="succeed")
    return run, time.monotonic() - started


def kill_then_change(change: str) -> Callable[[Suite, Path], Outcome]:
    """SIGKILL an ``openai:`` judge after 70 requests (its journal holds 64 answers), then rerun it with other
    sampling options (``sampling``) or against a server that now serves another deployment (``deployment``): the
    journal of the killed run must not be resumed into the new one; the rerun's file is a clean run's of the new
    setting, byte for byte."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("kills", "", key=suite.key)
        with FaultServer(models=LISTED, served_model="m", system_fingerprint="fp-1") as server:
            first = suite.judge_argv(server.url, "p.jsonl", "-q", cache=None)
            server.hold_after = server.requests + 70
            started = suite.start(first, d, "killed")
            wait_for(server.held.is_set, 60, started[0])
            o.runs.append(_kill(started))
            server.hold_after = None
            server.release()
            if change == "sampling":
                new = ["--temperature", "0.5", "--seed", "1"]
            else:
                new = []
                server.system_fingerprint = "fp-2"
            o.runs.append(suite.omni([*first, *new], d, expect="succeed"))
            o.runs.append(suite.omni(suite.judge_argv(server.url, "clean.jsonl", "-q", *new, cache=None), d,
                                     expect="succeed"))
        out = d / "p.jsonl"
        if o.runs[1].rc == 0 and o.runs[2].rc == 0 and out.read_bytes() != (d / "clean.jsonl").read_bytes():
            mixed = {(r["temperature"], r.get("system_fingerprint")) for r in rows(out)}
            o.problems.append(f"the rerun with another {change} is not a clean run of it (rows with {sorted(mixed)})")
        o.outputs = [out]
        # the killed run's journal is keyed by its own settings and stays, resumable by its own command: not a leftover
        o.leftovers = [x for x in leftovers(d) if ".journal-" not in x]
        return o

    return case


def kill_judge_scripted(fraction: float) -> Callable[[Suite, Path], Outcome]:
    """SIGKILL a ``scripted:`` judge (3 sampled runs) at ``fraction`` of an uninterrupted run's time; rerun."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("kills", "")
        argv = ["judge", "--dataset", str(suite.ds), "--config", "judge", "--judge", "scripted:random", "--seed",
                "3", "--runs", "3", "--temperature", "0.7", "-q"]
        clean, seconds = _timed(suite, [*argv, "--out", "clean.jsonl"], d, "clean")
        o.runs.append(clean)
        o.runs.append(_kill(suite.start([*argv, "--out", "p.jsonl"], d, "killed"), fraction * seconds))
        out = d / "p.jsonl"
        if out.exists() and out.read_bytes() != (d / "clean.jsonl").read_bytes():
            o.problems.append(f"after the kill p.jsonl holds {out.stat().st_size} bytes that are not the run's")
        o.runs.append(suite.omni([*argv, "--out", "p.jsonl"], d, expect="succeed"))
        if o.runs[-1].rc == 0 and out.read_bytes() != (d / "clean.jsonl").read_bytes():
            o.problems.append("the rerun after the kill wrote other bytes than an uninterrupted run")
        o.outputs, o.leftovers = [out], leftovers(d)
        return o

    return case


def kill_shard_then_merge(at: int) -> Callable[[Suite, Path], Outcome]:
    """Shard 0/2 of an ``openai:`` judge killed after ``at`` requests and rerun, shard 1/2 judged, the two merged:
    the merge is byte for byte the unsharded run."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("kills", "", key=suite.key)
        with FaultServer(models=LISTED) as server:
            o.runs.append(suite.omni(suite.judge_argv(server.url, "clean.jsonl", "-q", cache=None), d,
                                     expect="succeed"))
            shard0 = suite.judge_argv(server.url, "s0.jsonl", "-q", "--shard", "0/2", cache=None)
            server.hold_after = server.requests + at
            started = suite.start(shard0, d, "killed")
            wait_for(server.held.is_set, 60, started[0])
            o.runs.append(_kill(started))
            server.hold_after = None
            server.release()
            o.runs.append(suite.omni(shard0, d, expect="succeed"))
            o.runs.append(suite.omni(suite.judge_argv(server.url, "s1.jsonl", "-q", "--shard", "1/2", cache=None), d,
                                     expect="succeed"))
        o.runs.append(suite.omni(["merge-predictions", "s0.jsonl", "s1.jsonl", "--out", "m.jsonl", "-q"], d,
                                 expect="succeed"))
        merged = d / "m.jsonl"
        if o.runs[-1].rc == 0 and merged.read_bytes() != (d / "clean.jsonl").read_bytes():
            o.problems.append("the merge of a killed-and-rerun shard with the other is not the unsharded run")
        o.outputs, o.leftovers = [merged, d / "s0.jsonl", d / "s1.jsonl"], leftovers(d)
        return o

    return case


def kill_audit(fraction: float, earlier: bool) -> Callable[[Suite, Path], Outcome]:
    """SIGKILL ``audit preference`` at ``fraction`` of an uninterrupted run's time (over an earlier complete output
    when ``earlier``); the folder is whole or absent after the kill, and the rerun's measures are the clean
    audit's."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("kills", "")
        shutil.copy(suite.base_pred, d / "j.jsonl")
        argv = ["audit", "preference", "--dataset", str(suite.ds), "--predictions", "j=j.jsonl", *FAST_AUDIT, "-q",
                "--out"]
        clean, seconds = _timed(suite, [*argv, "a" if earlier else "a0"], d, "clean")
        o.runs.append(clean)
        argv.append("a")
        o.runs.append(_kill(suite.start(argv, d, "killed"), fraction * seconds))
        if (d / "a").exists():
            whole = folder_complete(d / "a")
            if whole:
                o.problems.append(f"after the kill: {whole}")
        o.runs.append(suite.omni(argv, d, expect="succeed"))
        if o.runs[-1].rc == 0:
            diff = audit_diff(d / "a", suite.base_audit)
            if diff:
                o.problems.append(f"rerun after the kill: {diff}")
        o.outputs, o.leftovers = [d / "a"], leftovers(d)
        return o

    return case


def kill_build(fraction: float) -> Callable[[Suite, Path], Outcome]:
    """SIGKILL ``build preference`` at ``fraction`` of an uninterrupted build's time; the rebuild has its bytes."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("kills", "")
        argv = ["build", "preference", "--pairs", str(PAIRS), "-q", "--out"]
        clean, seconds = _timed(suite, [*argv, "ds0"], d, "clean")
        o.runs.append(clean)
        argv.append("ds")
        o.runs.append(_kill(suite.start(argv, d, "killed"), fraction * seconds))
        if (d / "ds").exists():
            whole = folder_complete(d / "ds")
            if whole:
                o.problems.append(f"after the kill: {whole}")
        o.runs.append(suite.omni(argv, d, expect="succeed"))
        if o.runs[-1].rc == 0:
            for config in ("pairs", "judge"):
                got = sorted(p.read_bytes() for p in (d / "ds" / config).glob("*.parquet"))
                want = sorted(p.read_bytes() for p in (suite.ds / config).glob("*.parquet"))
                if got != want:
                    o.problems.append(f"the rebuilt config {config} differs from an uninterrupted build")
        o.outputs, o.leftovers = [d / "ds"], leftovers(d)
        return o

    return case


def _card_files(folder: Path) -> dict[str, bytes]:
    """What a scorecard decided and read: scorecard.json, each model's measures and predictions files."""
    keep = [folder / "scorecard.json", *folder.glob("models/*/measures.json"), *folder.glob("models/*/*.jsonl")]
    return {str(p.relative_to(folder)): p.read_bytes() for p in keep if p.is_file()}


def kill_scorecard(fraction: float) -> Callable[[Suite, Path], Outcome]:
    """SIGKILL ``scorecard`` (two reference models, preference) at ``fraction`` of an uninterrupted run's time; the
    rerun resumes and decides as the uninterrupted run did (its card, measures and predictions, byte for byte)."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("kills", "")
        argv = ["scorecard", "--model", "x=scripted:oracle", "y=scripted:position-locked", "--audits", "preference",
                "--size", "small", "--n-resamples", "200", "-q", "--out"]
        clean, seconds = _timed(suite, [*argv, "card0"], d, "clean")
        o.runs.append(clean)
        o.runs.append(_kill(suite.start([*argv, "card"], d, "killed"), fraction * seconds))
        o.runs.append(suite.omni([*argv, "card"], d, expect="succeed"))
        if clean.rc == 0 and o.runs[-1].rc == 0:
            got, want = _card_files(d / "card"), _card_files(d / "card0")
            differ = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
            if differ:
                o.problems.append(f"the rerun after the kill differs from an uninterrupted run in {differ[:3]}")
        o.outputs, o.leftovers = [d / "card"], leftovers(d)
        return o

    return case


def kill_cases(rng: random.Random) -> list[Case]:
    cases = []
    points = [(1, "quick"), (30, "full"), (63, "full"), (64, "full"), (70, "quick"), (91, "full")]
    for at, tier in points:
        for cached in (False, True):
            t = "smoke" if (at, cached) == (70, False) else (tier if not cached else "full")
            how = "cache" if cached else "no cache"
            cases.append(Case("kills", f"judge openai, killed after {at} requests, {how}", t,
                              kill_judge_openai(at, cached, 0.0)))
    for i in range(4):
        jitter = round(rng.uniform(0.0, 0.25), 3)
        cases.append(Case("kills", f"judge openai, killed {jitter}s after its last request (writing)",
                          "quick" if i == 0 else "full", kill_judge_openai(None, i % 2 == 1, jitter)))
    for i in range(6):
        f = round(rng.uniform(0.3, 0.98), 2)
        cases.append(Case("kills", f"judge scripted, killed at {f:.0%} of its run", "quick" if i < 2 else "full",
                          kill_judge_scripted(f)))
    for i in range(4):
        f = round(rng.uniform(0.3, 0.98), 2)
        cases.append(Case("kills", f"audit preference, killed at {f:.0%} of its run"
                                   f"{' over an earlier output' * (i % 2)}",
                          "quick" if i == 1 else "full", kill_audit(f, i % 2 == 1)))
    for i in range(3):
        f = round(rng.uniform(0.3, 0.98), 2)
        cases.append(Case("kills", f"build preference, killed at {f:.0%} of its run", "quick" if i == 0 else "full",
                          kill_build(f)))
    for at, tier in ((10, "quick"), (40, "full")):
        cases.append(Case("kills", f"judge --shard 0/2 killed after {at} requests, rerun, merged", tier,
                          kill_shard_then_merge(at)))
    for i in range(3):
        f = round(rng.uniform(0.3, 0.98), 2)
        cases.append(Case("kills", f"scorecard, killed at {f:.0%} of its run", "quick" if i == 0 else "full",
                          kill_scorecard(f)))
    cases.append(Case("kills", "judge killed, rerun with other sampling options", "quick",
                      kill_then_change("sampling")))
    cases.append(Case("kills", "judge killed, rerun against another deployment", "quick",
                      kill_then_change("deployment")))
    return cases


# --------------------------------------------------------------------------------------------------- 2. server
LISTED = [{"id": "m", "object": "model"}]
EVERYWHERE = ("content", "finish_reason", "logprobs", "fingerprint", "models")


def _labels_check(suite: Suite, out: Path, faulty: Callable[[str], bool], *, lenient: bool = False) -> list[str]:
    """Rows of faulted items have no label; the others have the server's answer (``lenient``: faulted rows may also
    have the right answer, for replies that carry it in another shape)."""
    problems = []
    got = rows(out)
    if len(got) != len(suite.prompts):
        problems.append(f"{len(got)} rows for {len(suite.prompts)} items")
    for r in got:
        want = suite.expected_label(r["id"])
        if faulty(suite.prompts[r["id"]]):
            if r.get("label") is not None and not (lenient and r["label"] == want):
                problems.append(f"{r['id']}: label {r['label']!r} from a faulted reply {r.get('raw')!r:.60}")
        elif r.get("label") != want:
            problems.append(f"{r['id']}: label {r.get('label')!r}, the server answered {want!r}")
        probs = r.get("option_probs")
        if probs is not None and (not isinstance(probs, dict) or abs(sum(probs.values()) - 1) > 1e-6):
            problems.append(f"{r['id']}: option_probs {probs!r:.80}")
    return problems[:5]


def serve(make: Callable[[], object], extra: list[str], expect: str, *, k: int | None = None, lenient=False,
          names: tuple[str, ...] = (), check: Callable | None = None, cache: bool = True):
    """A judge against the server ``make()`` builds; ``k``: items faulted one in k (``fault_server.faulted``),
    checked with :func:`_labels_check` when the run exits 0; ``check(suite, d, server, run)`` adds problems."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("server", "", key=suite.key)
        with make() as server:
            server.httpd.handle_error = lambda *a: None  # a client that gave up is not news
            run = suite.omni(suite.judge_argv(server.url, "p.jsonl", *extra, cache="cache" if cache else None), d,
                             expect=expect, names=names, timeout=240)
            o.runs.append(run)
            if run.rc == 0 and (d / "p.jsonl").exists():
                if k is not None:
                    o.problems += _labels_check(suite, d / "p.jsonl", lambda p: faulted(p, k), lenient=lenient)
                if check is not None:
                    o.problems += check(suite, d, server, run, o)
            elif run.rc != 0 and (d / "p.jsonl").exists():
                o.problems.append("a refused run left p.jsonl")
        o.outputs, o.secret_roots = [d / "p.jsonl", *([d / "a"] if (d / "a").exists() else [])], [d / "cache"]
        o.leftovers = leftovers(d)
        return o

    return case


def _all_answered(suite, d, server, run, o) -> list[str]:
    return _labels_check(suite, d / "p.jsonl", lambda p: False)


def _audited(suite, d, server, run, o) -> list[str]:
    """The judged file goes through ``audit preference`` too (its output is searched for the key and NaN)."""
    audit = suite.omni(["audit", "preference", "--dataset", str(suite.ds), "--predictions", "j=p.jsonl",
                        *FAST_AUDIT, "--out", "a", "-q"], d, expect="either")
    o.runs.append(audit)
    return []


def _warns(word: str) -> Callable:
    def check(suite, d, server, run, o) -> list[str]:
        if word not in run.stderr + run.stdout:
            return [f"no warning naming {word!r}: {_last_line(run.stderr)!r}"]
        return []

    return check


def _both(*checks: Callable) -> Callable:
    return lambda *a: [p for c in checks for p in c(*a)]


def _mixed_deployments(field_name: str, first: str, second: str) -> Callable:
    """A run whose server changed deployment mid-run: its rows say so, and an audit of them either refuses or shows
    both in its report."""

    def check(suite, d, server, run, o) -> list[str]:
        problems = []
        seen = {r.get(field_name) for r in rows(d / "p.jsonl")}
        if not {first, second} <= seen:
            problems.append(f"rows' {field_name} are {sorted(map(str, seen))}: the switch to {second!r} is not kept")
        if second not in run.stderr + run.stdout:
            problems.append(f"the run did not warn about {second!r}")
        audit = suite.omni(["audit", "preference", "--dataset", str(suite.ds), "--predictions", "j=p.jsonl",
                            *FAST_AUDIT, "--out", "a", "-q"], d, expect="either",
                           names=("p.jsonl", field_name, "served", "fingerprint", "model"))
        o.runs.append(audit)
        if audit.rc == 0 and second not in (d / "a" / "report.md").read_text(encoding="utf-8"):
            problems.append(f"audit accepted answers of two deployments; report.md never names {second!r}")
        return problems

    return check


def _redirect_case(suite: Suite, d: Path) -> Outcome:
    o = Outcome("server", "", key=suite.key)
    with ChatServer() as target, ChatServer(redirect_to=target.url + "/chat/completions") as server:
        server.httpd.handle_error = target.httpd.handle_error = lambda *a: None
        o.runs.append(suite.omni(suite.judge_argv(server.url, "p.jsonl"), d, expect="refuse",
                                 names=("redirect", target.url.split("//")[1].split("/")[0])))
        if any(a and suite.key in a for a in target.auth + target.get_auth):
            o.problems.append("the key reached the redirect target")
    o.outputs, o.secret_roots, o.leftovers = [d / "p.jsonl"], [d / "cache"], leftovers(d)
    return o


def _deployment_cache_case(suite: Suite, d: Path) -> Outcome:
    """Answers cached from one deployment are not served for another one under the same name."""
    o = Outcome("server", "", key=suite.key)
    with FaultServer(models=[{"id": "m", "object": "model", "root": "/weights/v1"}], served_model="m",
                     system_fingerprint="fp-1") as server:
        o.runs.append(suite.omni(suite.judge_argv(server.url, "p1.jsonl", "-q"), d, expect="succeed"))
        before = server.requests
        server.models = [{"id": "m", "object": "model", "root": "/weights/v2"}]
        server.system_fingerprint = "fp-2"
        o.runs.append(suite.omni(suite.judge_argv(server.url, "p2.jsonl", "-q"), d, expect="succeed"))
        asked = server.requests - before
    if o.runs[-1].rc == 0:
        fps = {r.get("system_fingerprint") for r in rows(d / "p2.jsonl")}
        if asked < len(suite.prompts) or fps != {"fp-2"}:
            o.problems.append(f"the second deployment was asked {asked} of {len(suite.prompts)} items; rows say "
                              f"fingerprints {sorted(map(str, fps))} (answers of /weights/v1 served from the cache)")
    o.outputs, o.secret_roots, o.leftovers = [d / "p1.jsonl", d / "p2.jsonl"], [d / "cache"], leftovers(d)
    return o


def _probs_follow_text(suite, d, server, run, o) -> list[str]:
    """Option probabilities never override the text: a row keeps none, or ones whose favourite is its label."""
    problems = _labels_check(suite, d / "p.jsonl", lambda p: False)
    for r in rows(d / "p.jsonl"):
        probs = r.get("option_probs")
        if probs and max(probs, key=probs.get) != r.get("label"):
            problems.append(f"{r['id']}: option_probs {probs} favour another option than the text {r.get('raw')!r}")
    return problems[:5]


def _finish_reasons(suite, d, server, run, o) -> list[str]:
    """An odd finish_reason is kept as text (or dropped), and an audit of the file still runs."""
    bad = {json.dumps(r.get("finish_reason")) for r in rows(d / "p.jsonl")
           if not isinstance(r.get("finish_reason"), str | None)}
    return ([f"finish_reason kept as {sorted(bad)[:2]}"] if bad else []) + _audited(suite, d, server, run, o)


def _credential_url(where: str) -> Callable[[Suite, Path], Outcome]:
    """A judge URL carrying the key (``user:KEY@`` or ``?api_key=KEY``) is refused without showing the key."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("server", "", key=suite.key)
        with FaultServer(models=LISTED) as server:
            host = server.url.split("//")[1]
            url = (f"http://user:{suite.key}@{host}" if where == "userinfo" else f"{server.url}?api_key={suite.key}")
            argv = ["judge", "--dataset", str(suite.ds), "--config", "judge", "--judge", f"openai:m@{url}",
                    "--cache", "cache", "--out", "p.jsonl"]
            o.runs.append(suite.omni(argv, d, expect="refuse", names=("credential", "query", "url", "user", "***")))
            if server.requests:
                o.problems.append(f"{server.requests} requests sent to a URL carrying credentials")
        o.outputs, o.secret_roots, o.leftovers = [d / "p.jsonl"], [d / "cache"], leftovers(d)
        return o

    return case


def _nonfinite_probs(body: dict, answer: str) -> dict[str, float]:
    return {answer: float("inf"), ("B" if answer == "A" else "A"): float("nan")}


def server_cases(rng: random.Random) -> list[Case]:
    fs, cs = FaultServer, ChatServer
    k = 4
    partial = [  # (mode, extra args, lenient)
        ("truncate", ["--max-retries", "1"], False), ("reset", ["--max-retries", "1"], False),
        ("empty_choices", [], False), ("no_choices", [], False), ("choices_string", [], False),
        ("error_200", [], False), ("content_number", [], False), ("content_list", [], True), ("html", [], False),
        ("length_empty", [], False), ("huge", ["--max-reply-mb", "1"], False),
        ("sleep", ["--timeout", "1", "--max-retries", "0"], False), ("logprobs_garbage", [], True),
        ("logprobs_nan", [], True)]
    cases = []
    for mode, extra, lenient in partial:
        tier = "smoke" if mode in ("truncate", "logprobs_nan") else "quick"
        cases.append(Case("server", f"{mode} on 1 item in {k}", tier,
                          serve(lambda mode=mode: fs(every(k, mode), models=LISTED), ["-q", *extra], "either",
                                k=k, lenient=lenient, check=_audited)))
    for mode, extra in (("empty_choices", []), ("length_empty", []), ("huge", ["--max-reply-mb", "1", "--limit",
                                                                                "8"]),
                        ("html", ["--limit", "8"])):
        cases.append(Case("server", f"{mode} on every item", "quick" if mode != "html" else "full",
                          serve(lambda mode=mode: fs(mode, models=LISTED), ["-q", *extra], "refuse",
                                names=("usable", "answers", "replies"))))
    fault_of = {"garbage": "garbage", "null": "null"}
    for mode in fault_of:
        cases.append(Case("server", f"chat_server {mode} on 1 item in {k}", "quick",
                          serve(lambda mode=mode: cs(fault=lambda b, m=mode: m if faulted(
                              b["messages"][-1]["content"] if isinstance(b["messages"][-1]["content"], str)
                              else b["messages"][-1]["content"][-1]["text"], k) else None,
                                                     answer=seeded_answer, models=LISTED),
                                ["-q"], "either", k=k)))
    # a transport fault (a cut or reset connection, a timeout) is retried: every item answered; a reply that is
    # not an answer (an error page, no choices) is kept as a non-answer, never as another label
    for mode, extra, tier in (("truncate", [], "quick"), ("reset", [], "quick"), ("sleep", ["--timeout", "1"], "full"),
                              ("html", [], "full"), ("empty_choices", [], "quick")):
        transport = mode in ("truncate", "reset", "sleep")
        cases.append(Case("server", f"{mode} once on 1 item in {k} (transient)", tier,
                          serve(lambda mode=mode: fs(once(k, mode), models=LISTED), ["-q", "--max-retries", "2",
                                                                                    *extra],
                                "either", k=None if transport else k, lenient=True,
                                check=_all_answered if transport else None)))
    for value in ("nan", "-1", "inf", "1e400", "3600", "Wed, 21 Oct 2015 07:28:00 GMT", "soon"):
        cases.append(Case("server", f"429 with Retry-After {value!r}", "quick" if value in ("nan", "-1") else "full",
                          serve(lambda value=value: cs(fail_first=2, status=429, retry_after=value,
                                                       answer=seeded_answer, models=LISTED),
                                ["-q", "--max-retries", "3"], "either", check=_all_answered)))
    for label, raw, status in (("not JSON", b"<html>nope</html>", 200), ("data a string", b'{"data": "m"}', 200),
                               ("data of numbers", b'{"data": [1, 2]}', 200), ("HTTP 500", b'{"error": "x"}', 500),
                               ("NaN created", b'{"data": [{"id": "m", "created": NaN}]}', 200)):
        tier = "quick" if label in ("not JSON", "data of numbers") else "full"
        cases.append(Case("server", f"/models {label}", tier,
                          serve(lambda raw=raw, status=status: fs(models_raw=raw, models_status=status), ["-q"],
                                "either", check=_all_answered)))
    cases += [
        Case("server", "logprobs favour the option the text does not name", "quick",
             serve(lambda: fs(every(2, "logprobs_disagree"), models=LISTED), ["-q"], "either",
                   check=_probs_follow_text)),
        Case("server", "finish_reason an object", "quick",
             serve(lambda: fs(every(3, "finish_reason_object"), models=LISTED), ["-q"], "either",
                   check=_finish_reasons)),
        Case("server", "the key in the judge URL (user:KEY@)", "quick", _credential_url("userinfo")),
        Case("server", "the key in the judge URL (?api_key=)", "full", _credential_url("query")),
        Case("server", "500 on the first 3 requests", "quick",
             serve(lambda: cs(fail_first=3, status=500, answer=seeded_answer, models=LISTED), ["-q"], "succeed",
                   check=_all_answered)),
        Case("server", "429 with Retry-After on the first 3", "smoke",
             serve(lambda: cs(fail_first=3, status=429, retry_after="0", answer=seeded_answer, models=LISTED),
                   ["-q"], "succeed", check=_all_answered)),
        Case("server", "500 on every request", "quick",
             serve(lambda: cs(always_fail=True, status=500), ["--max-retries", "1"], "refuse",
                   names=("500", "127.0.0.1", "server"))),
        Case("server", "401 on every request", "quick",
             serve(lambda: cs(always_fail=True, status=401, echo_auth=True), [], "refuse", names=(KEY_VAR,))),
        Case("server", "redirect to another server", "quick", _redirect_case),
        Case("server", "trickled reply past --timeout", "full",
             serve(lambda: cs(trickle="body", trickle_s=0.3, answer=seeded_answer), ["--timeout", "1",
                                                                                     "--max-retries", "0",
                                                                                     "--limit", "8"],
                   "refuse", names=("usable", "answers", "replies", "--timeout"))),
        Case("server", "20 MB reply without Content-Length", "quick",
             serve(lambda: cs(huge=20_000_000, answer=seeded_answer), ["--max-reply-mb", "1", "--limit", "8"],
                   "refuse", names=("usable", "answers", "replies"))),
        Case("server", "key echoed in every field, then audited", "smoke",
             serve(lambda: cs(echo_key=EVERYWHERE, probs=lambda b, a: {a.split()[0]: 0.8, "x": 0.2},
                              answer=seeded_answer, models=LISTED), ["-q"], "succeed", check=_audited)),
        Case("server", "key echoed in error bodies and answers", "quick",
             serve(lambda: cs(echo_auth=True, fail_first=2, status=500, answer=seeded_answer, models=LISTED),
                   ["-q"], "either", names=("usable",), check=_audited)),
        Case("server", "infinite / NaN option logprobs (chat_server)", "quick",
             serve(lambda: cs(probs=_nonfinite_probs, answer=seeded_answer, models=LISTED), ["-q"], "succeed",
                   check=_both(_all_answered, _audited))),
        Case("server", "a reply naming another model", "smoke",
             serve(lambda: cs(served_model="other-model", answer=seeded_answer, models=LISTED), [], "succeed",
                   check=_both(_all_answered, _warns("other-model")))),
        Case("server", "the model is not listed under /models", "quick",
             serve(lambda: cs(answer=seeded_answer, models=[{"id": "another"}]), [], "succeed",
                   check=_warns("/models"))),
        Case("server", "served model switched mid-run", "quick",
             serve(lambda: fs(models=LISTED, served_model="m", switch_after=40, switched_model="m-v2"), [],
                   "succeed", check=_mixed_deployments("served_model", "m", "m-v2"), cache=False)),
        Case("server", "system fingerprint switched mid-run", "full",
             serve(lambda: fs(models=LISTED, served_model="m", system_fingerprint="fp-1", switch_after=40,
                              switched_model="m", switched_fingerprint="fp-2"), [], "succeed",
                   check=_mixed_deployments("system_fingerprint", "fp-1", "fp-2"), cache=False)),
        Case("server", "another deployment behind a cached answer", "quick", _deployment_cache_case),
    ]
    return cases


# ------------------------------------------------------------------------------------------- 3. fuzzed inputs
def _pred_lines(suite: Suite) -> list[str]:
    return suite.base_pred.read_text(encoding="utf-8").splitlines()


def _edit(lines: list[str], i: int, fn: Callable[[dict], object]) -> list[str]:
    row = json.loads(lines[i])
    new = fn(row)
    out = list(lines)
    out[i] = json.dumps(row if new is None else new, ensure_ascii=False)
    return out


def _set(**values) -> Callable[[dict], None]:
    return lambda row: row.update(values)


def _drop(*keys) -> Callable[[dict], None]:
    def drop(row: dict) -> None:
        for k in keys:
            row.pop(k, None)

    return drop


def _flip(row: dict) -> None:
    row["label"] = row["raw"] = "B" if row["label"] == "A" else "A"


def _other_judge(row: dict) -> None:
    row["provenance"]["judge"] = "scripted:always-a"
    row["provenance"]["model"] = {"kind": "scripted", "model": "always-a"}


def _join(lines: list[str], end: str = "\n") -> bytes:
    return (end.join(lines) + end).encode("utf-8")


# name -> (expect, mutation(lines, rng) -> bytes); expect: refuse | same (refuse, or the clean measures) |
# succeed-same (the clean measures, never refused)
PRED_MUTATIONS: dict[str, tuple[str, Callable[[list[str], random.Random], bytes]]] = {
    "truncated last line": ("refuse", lambda ls, r: _join(ls)[: -r.randrange(20, 200)]),
    "truncated line in the middle": ("refuse", lambda ls, r: _join(
        [(line[: len(line) // 2] if i == r.randrange(1, len(ls) - 1) else line) for i, line in enumerate(ls)])),
    "row dropped": ("refuse", lambda ls, r: _join([line for i, line in enumerate(ls) if i != r.randrange(len(ls))])),
    "conflicting duplicate row": ("refuse", lambda ls, r: (lambda i: _join(
        ls + _edit(ls, i, _flip)[i:i + 1]))(r.randrange(len(ls)))),
    "a row from another judge": ("refuse", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _other_judge))),
    "another build's fingerprint": ("refuse", lambda ls, r: _join([json.dumps(
        {**json.loads(line), "provenance": {**json.loads(line)["provenance"], "dataset": {
            **json.loads(line)["provenance"]["dataset"], "fingerprint": "sha256:" + "0" * 32}}}) for line in ls])),
    "JSON list row": ("refuse", lambda ls, r: (lambda i: _join(
        ls[:i] + [json.dumps(list(json.loads(ls[i]).values())[:6])] + ls[i + 1:]))(r.randrange(len(ls)))),
    "JSON null row": ("refuse", lambda ls, r: (lambda i: _join(ls[:i] + ["null"] + ls[i + 1:]))(r.randrange(len(ls)))),
    "empty file": ("refuse", lambda ls, r: b""),
    "label an integer": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(label=5)))),
    "label not an option": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(label="C")))),
    "label lower case": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)),
                                                           lambda row: row.update(label=row["label"].lower())))),
    "label fullwidth": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), lambda row: row.update(
        label=chr(ord(row["label"]) + 0xFEE0))))),
    "order an integer": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(order=1)))),
    "order unknown": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(order="xy")))),
    "run a string": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(run="0")))),
    "run huge": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(run=10 ** 30)))),
    "option_probs NaN": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs={"A": float("nan"), "B": float("nan")})))),
    "option_probs infinite": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs={"A": float("inf"), "B": 0.0})))),
    "option_probs 1e308": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs={"A": 1e308, "B": 1e308})))),
    "option_probs negative": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs={"A": -0.5, "B": 1.5})))),
    "option_probs words": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs={"A": "high", "B": "low"})))),
    "option_probs a list": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs=[0.9, 0.1])))),
    "parsed a string": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(parsed="yes")))),
    "exact duplicate row": ("same", lambda ls, r: _join(ls + [ls[r.randrange(len(ls))]])),
    "unknown field": ("same", lambda ls, r: _join([json.dumps({**json.loads(line), "foo": [1, {"x": None}]})
                                                    for line in ls])),
    "label field missing": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _drop("label")))),
    "id field missing": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _drop("id")))),
    "provenance missing in one row": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)),
                                                                        _drop("provenance")))),
    "id with a fullwidth digit": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), lambda row: row.update(
        id=row["id"].replace("1", "\uff11", 1) if "1" in row["id"] else row["id"] + "\u0301")))),
    "raw with NUL, emoji and RTL": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), lambda row: row.update(
        raw=row["raw"] + "\u0000 \U0001f600 \u202e\u05d0")))),
    "seed 1e400": ("same", lambda ls, r: _join(ls[:1] + [line.replace('"seed": null', '"seed": 1e400', 1)
                                                         for line in ls[1:]])),
    "UTF-8 BOM": ("same", lambda ls, r: b"\xef\xbb\xbf" + _join(ls)),
    "CRLF line ends": ("same", lambda ls, r: _join(ls, "\r\n")),
    "blank lines": ("same", lambda ls, r: _join([x for line in ls for x in (line, "")])),
    "invalid UTF-8 byte": ("same", lambda ls, r: (lambda i: _join(ls[:i]) + ls[i].replace(
        '"raw": "', '"raw": "\udcff', 1).encode("utf-8", "surrogateescape") + b"\n" + _join(ls[i + 1:]))(
        r.randrange(len(ls) - 1))),
    "rows shuffled": ("succeed-same", lambda ls, r: _join(r.sample(ls, len(ls)))),
}
PRED_SMOKE = ("truncated last line", "conflicting duplicate row", "option_probs NaN", "rows shuffled")


def fuzz_prediction(name: str, seed: int) -> Callable[[Suite, Path], Outcome]:
    expect, mutate = PRED_MUTATIONS[name]

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("fuzz-predictions", "")
        (d / "j.jsonl").write_bytes(mutate(_pred_lines(suite), random.Random(f"{seed}:{name}")))
        run = suite.omni(["audit", "preference", "--dataset", str(suite.ds), "--predictions", "j=j.jsonl",
                          *FAST_AUDIT, "--out", "a", "-q"], d,
                         expect={"refuse": "refuse", "same": "either", "succeed-same": "succeed"}[expect],
                         names=("j.jsonl", "row", "line"))
        o.runs.append(run)
        if run.rc == 0:
            diff = audit_diff(d / "a", suite.base_audit)
            if diff:
                o.problems.append(f"accepted, and {diff}")
        elif (d / "a").exists():
            o.problems.append("a refused audit left its output folder")
        o.outputs, o.leftovers = [d / "a"], leftovers(d)
        return o

    return case


def _csv_rows(suite: Suite) -> list[list[str]]:
    return list(csv.reader(io.StringIO(suite.pref_csv.read_text(encoding="utf-8"))))


def _csv(rows_: list[list[str]], end: str = "\n") -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator=end).writerows(rows_)
    return buf.getvalue().encode("utf-8")


def _cell(column: str, value: str, rows_: list[list[str]], r: random.Random) -> list[list[str]]:
    i, j = r.randrange(1, len(rows_)), rows_[0].index(column)
    out = [list(x) for x in rows_]
    out[i][j] = value
    return out


def _cell_fn(column: str, fn: Callable[[str], str], rows_: list[list[str]], r: random.Random) -> list[list[str]]:
    i, j = r.randrange(1, len(rows_)), rows_[0].index(column)
    out = [list(x) for x in rows_]
    out[i][j] = fn(out[i][j])
    return out


def _cut_description(rows_: list[list[str]], r: random.Random) -> bytes:
    data = _csv(rows_)
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    return data[: last + r.randrange(20, 60)]


# name -> (expect, mutation(rows, rng) -> bytes, pairs when accepted: None = the clean count, int = more)
CSV_MUTATIONS: dict[str, tuple[str, Callable[[list[list[str]], random.Random], bytes], int | None]] = {
    "truncated last line": ("refuse", _cut_description, None),
    "label 'maybe'": ("refuse", lambda rs, r: _csv(_cell("preference", "maybe", rs, r)), None),
    "label empty": ("refuse", lambda rs, r: _csv(_cell("preference", "", rs, r)), None),
    "label 'nan'": ("refuse", lambda rs, r: _csv(_cell("preference", "nan", rs, r)), None),
    "label in spaces": ("same", lambda rs, r: _csv(_cell_fn("preference", lambda v: f" {v} ", rs, r)), None),
    "label upper case": ("same", lambda rs, r: _csv(_cell_fn("preference", str.upper, rs, r)), None),
    "description 'NaN'": ("count", lambda rs, r: _csv(_cell("a1", "NaN", rs, r)), None),
    "description empty": ("count", lambda rs, r: _csv(_cell("a1", "", rs, r)), None),
    "generator 'inf'": ("count", lambda rs, r: _csv(_cell("model1", "inf", rs, r)), None),
    "generator a 400-digit number": ("count", lambda rs, r: _csv(_cell("model1", "9" * 400, rs, r)), None),
    "name a huge float": ("count", lambda rs, r: _csv(_cell("name", "1e400", rs, r)), None),
    "one field too many": ("refuse", lambda rs, r: (lambda i: _csv(
        [x + ["extra"] if k == i else x for k, x in enumerate(rs)]))(r.randrange(1, len(rs))), None),
    "one field too few": ("refuse", lambda rs, r: (lambda i: _csv(
        [x[:-1] if k == i else x for k, x in enumerate(rs)]))(r.randrange(1, len(rs))), None),
    "JSON list row": ("refuse", lambda rs, r: _csv(rs) + json.dumps(rs[r.randrange(1, len(rs))]).encode() + b"\n",
                      None),
    "three duplicated rows": ("count", lambda rs, r: _csv(rs + [rs[r.randrange(1, len(rs))]] * 3), 3),
    "unknown column": ("same", lambda rs, r: _csv([x + (["notes"] if k == 0 else [f"n{k}"])
                                                   for k, x in enumerate(rs)]), None),
    "column a2 missing": ("refuse", lambda rs, r: _csv([[c for j, c in enumerate(x) if j != rs[0].index("a2")]
                                                        for x in rs]), None),
    "columns reordered": ("succeed-same", lambda rs, r: (lambda order: _csv([[x[j] for j in order] for x in rs]))(
        r.sample(range(len(rs[0])), len(rs[0]))), None),
    "unicode descriptions": ("count", lambda rs, r: _csv(_cell("a2", "Ｔｈｅ ｖｏｉｃｅ 😢 שמח e\u0301\u200b 声音",
                                                              rs, r)), None),
    "unicode generator name": ("count", lambda rs, r: _csv(_cell("model2", "ɡale-mm\u200d", rs, r)), None),
    "UTF-8 BOM": ("same", lambda rs, r: b"\xef\xbb\xbf" + _csv(rs), None),
    "CRLF line ends": ("same", lambda rs, r: _csv(rs, "\r\n"), None),
    "Latin-1 bytes": ("count", lambda rs, r: _csv(_cell("a1", "cafe au lait", rs, r)).replace(
        b"cafe au lait", b"caf\xe9 au lait"), None),
    "NUL byte in a description": ("count", lambda rs, r: _csv(_cell("a1", "calm\x00voice", rs, r)), None),
    "unbalanced quote": ("refuse", lambda rs, r: _csv(rs).replace(b"\n", b'\n"', 1 + r.randrange(5)), None),
    "header only": ("refuse", lambda rs, r: _csv(rs[:1]), None),
    "random bytes": ("refuse", lambda rs, r: bytes(r.randrange(256) for _ in range(4000)), None),
}
CSV_SMOKE = ("label 'maybe'", "three duplicated rows", "Latin-1 bytes")


def fuzz_csv(name: str, seed: int) -> Callable[[Suite, Path], Outcome]:
    expect, mutate, extra = CSV_MUTATIONS[name]

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("fuzz-csv", "")
        (d / "pref.csv").write_bytes(mutate(_csv_rows(suite), random.Random(f"{seed}:{name}")))
        run = suite.omni(["audit", "preference", "--source", "pref.csv", *FAST_AUDIT, "--out", "a", "-q"], d,
                         expect={"refuse": "refuse", "same": "either", "count": "either",
                                 "succeed-same": "succeed"}[expect],
                         names=("pref.csv", "row", "line", "column"))
        o.runs.append(run)
        if run.rc == 0:
            if expect in ("same", "succeed-same"):
                diff = audit_diff(d / "a", suite.base_csv_audit)
                if diff:
                    o.problems.append(f"accepted, and {diff}")
            else:
                pairs = json.loads((d / "a" / "audit.json").read_text())["dataset"]["n_pairs"]
                want = suite.n_csv_pairs + (extra or 0)
                if pairs != want:
                    o.problems.append(f"accepted with {pairs} pairs, the file has {want}")
        elif (d / "a").exists():
            o.problems.append("a refused audit left its output folder")
        o.outputs, o.leftovers = [d / "a"], leftovers(d)
        return o

    return case


def fuzz_cases(rng: random.Random, seeds: int) -> list[Case]:
    cases = []
    for s in range(seeds):
        seed = rng.randrange(10 ** 6)
        for name in PRED_MUTATIONS:
            tier = ("smoke" if name in PRED_SMOKE else "quick") if s == 0 else "full"
            cases.append(Case("fuzz-predictions", f"{name} (seed {seed})", tier, fuzz_prediction(name, seed)))
        for name in CSV_MUTATIONS:
            tier = ("smoke" if name in CSV_SMOKE else "quick") if s == 0 else "full"
            cases.append(Case("fuzz-csv", f"{name} (seed {seed})", tier, fuzz_csv(name, seed)))
    return cases


# ------------------------------------------------------------------------------------------- numeric options
def option_case(command: str, flag: str, value: str, expect: str, check: Callable | None = None):
    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("options", "")
        if command == "judge":
            argv = ["judge", "--dataset", str(suite.ds), "--config", "judge", "--judge", "scripted:random",
                    "--out", "p.jsonl"]
            out = d / "p.jsonl"
        elif command == "audit":
            shutil.copy(suite.base_pred, d / "j.jsonl")
            argv = ["audit", "preference", *(["--pairs", "40"] if flag in ("--prior-strength", "--content-strength",
                                                                            "--generators", "--synthetic-seed")
                                             else ["--dataset", str(suite.ds), "--predictions", "j=j.jsonl"]),
                    *[a for a in FAST_AUDIT if a not in ("--n-resamples", "200")],
                    *(["--n-resamples", "200"] if flag != "--n-resamples" else []), "--out", "a"]
            if flag == "--pairs":
                argv = [a for a in argv if a not in ("--dataset", str(suite.ds), "--predictions", "j=j.jsonl")]
            out = d / "a"
        else:
            argv = ["scorecard", "--model", "x=scripted:oracle", "--audits", "preference", "--size", "small",
                    *(["--n-resamples", "200"] if flag != "--n-resamples" else []), "--out", "card"]
            out = d / "card"
        run = suite.omni([*argv, f"{flag}={value}", "-q"], d, expect=expect,
                         names=(flag, flag.lstrip("-").replace("-", "_")), codes=(2,))
        o.runs.append(run)
        if run.rc == 0 and check is not None:
            o.problems += check(out)
        elif run.rc != 0 and out.exists():
            o.problems.append(f"a refused run left {out.name}")
        o.outputs, o.leftovers = [out], leftovers(d)
        return o

    return case


def _recorded(field_name: str, want) -> Callable[[Path], list[str]]:
    def check(out: Path) -> list[str]:
        got = {json.dumps(r["provenance"]["sampling"].get(field_name)) for r in rows(out)}
        return [] if got == {json.dumps(want)} else [f"provenance sampling.{field_name} is {got}, not {want!r}"]

    return check


def _row_count(n: int | Callable[[int], bool]) -> Callable[[Path], list[str]]:
    def check(out: Path) -> list[str]:
        got = len(rows(out))
        ok = n(got) if callable(n) else got == n
        return [] if ok else [f"{got} rows"]

    return check


def options_cases() -> list[Case]:
    n_items = 92
    spec = [  # (command, flag, value, expect, check, tier)
        ("judge", "--temperature", "nan", "refuse", None, "smoke"),
        ("judge", "--temperature", "inf", "refuse", None, "quick"),
        ("judge", "--temperature", "-1", "refuse", None, "quick"),
        ("judge", "--temperature", "\u22121", "refuse", None, "full"),
        ("judge", "--temperature", "1e309", "refuse", None, "full"),
        ("judge", "--temperature", "0", "succeed", _recorded("temperature", 0.0), "quick"),
        ("judge", "--top-p", "0", "refuse", None, "quick"),
        ("judge", "--top-p", "1.5", "refuse", None, "full"),
        ("judge", "--top-p", "1", "succeed", _recorded("top_p", 1.0), "full"),
        ("judge", "--runs", "0", "refuse", None, "quick"),
        ("judge", "--runs", "-1", "refuse", None, "full"),
        ("judge", "--runs", "0x10", "refuse", None, "full"),
        ("judge", "--runs", "2", "succeed", _row_count(2 * n_items), "full"),
        ("judge", "--seed", "-1", "refuse", None, "quick"),
        ("judge", "--seed", "nan", "refuse", None, "full"),
        ("judge", "--seed", str(2 ** 32), "either", _row_count(n_items), "quick"),
        ("judge", "--seed", str(2 ** 64), "either", _row_count(n_items), "full"),
        ("judge", "--max-tokens", "0", "refuse", None, "quick"),
        ("judge", "--min-usable", "nan", "refuse", None, "quick"),
        ("judge", "--min-usable", "1.5", "refuse", None, "full"),
        ("judge", "--min-usable", "0", "succeed", _row_count(n_items), "full"),
        ("judge", "--limit", "0", "refuse", None, "quick"),
        ("judge", "--limit", "-1", "refuse", None, "full"),
        ("judge", "--limit", "10", "succeed", _row_count(lambda n: 0 < n <= 10), "quick"),
        ("judge", "--limit", str(10 ** 12), "either", _row_count(n_items), "full"),
        ("judge", "--batch-size", "0", "refuse", None, "full"),
        ("judge", "--concurrency", "0", "refuse", None, "quick"),
        ("judge", "--timeout", "0", "refuse", None, "full"),
        ("judge", "--timeout", "inf", "refuse", None, "quick"),
        ("judge", "--max-retries", "-1", "refuse", None, "full"),
        ("judge", "--max-reply-mb", "nan", "refuse", None, "full"),
        ("judge", "--top-logprobs", "-1", "refuse", None, "full"),
        ("judge", "--fps", "0", "refuse", None, "full"),
        ("judge", "--max-frames", "0", "refuse", None, "full"),
        ("audit", "--n-resamples", "0", "refuse", None, "smoke"),
        ("audit", "--n-resamples", "-5", "refuse", None, "full"),
        ("audit", "--n-resamples", "nan", "refuse", None, "quick"),
        ("audit", "--n-resamples", "1", "either", None, "quick"),
        ("audit", "--bootstrap-seed", "-1", "refuse", None, "full"),
        ("audit", "--bootstrap-seed", str(2 ** 64), "either", None, "quick"),
        ("audit", "--pairs", "0", "refuse", None, "quick"),
        ("audit", "--pairs", "5", "refuse", None, "full"),
        ("audit", "--pairs", "nan", "refuse", None, "full"),
        ("audit", "--prior-strength", "nan", "refuse", None, "quick"),
        ("audit", "--prior-strength", "-1", "either", None, "full"),
        ("audit", "--prior-strength", "0", "succeed", None, "quick"),
        ("audit", "--prior-strength", "1e308", "either", None, "full"),
        ("audit", "--content-strength", "inf", "refuse", None, "full"),
        ("audit", "--generators", "1", "refuse", None, "full"),
        ("audit", "--synthetic-seed", str(2 ** 64), "either", None, "full"),
        ("scorecard", "--n-resamples", "0", "refuse", None, "quick"),
        ("scorecard", "--n-resamples", "nan", "refuse", None, "full"),
        ("scorecard", "--n-resamples", "199", "refuse", None, "full"),
        ("scorecard", "--min-usable", "nan", "refuse", None, "quick"),
        ("scorecard", "--temperature", "-1", "refuse", None, "full"),
        ("scorecard", "--top-p", "0", "refuse", None, "full"),
        ("scorecard", "--max-tokens", "0", "refuse", None, "full"),
        ("scorecard", "--seed", str(2 ** 64), "either", None, "full"),
    ]
    return [Case("options", f"{command} {flag}={value}", tier, option_case(command, flag, value, expect, check))
            for command, flag, value, expect, check, tier in spec]


# ----------------------------------------------------------------------------------------------- 4. concurrency
def _pair_verdict(o: Outcome, a: Run, b: Run, final_ok: str | None) -> None:
    """Two runs on one output: at least one succeeds, a refused one says another run holds the output, and the
    output is the clean one (``final_ok``: what is wrong with it, None when right)."""
    for r in (a, b):
        r.expect, r.names = "either", ("another omniaudit run",)
    if a.rc != 0 and b.rc != 0:
        o.notes.append("neither run succeeded")
        a.expect = "succeed"
    elif final_ok:
        o.problems.append(final_ok)


def two_judges_held(suite: Suite, d: Path) -> Outcome:
    o = Outcome("concurrency", "", key=suite.key)
    with FaultServer(models=LISTED) as server:
        clean = suite.omni(suite.judge_argv(server.url, "clean.jsonl", "-q", cache=None), d, expect="succeed")
        server.hold_after = server.requests + 5
        first = suite.start(suite.judge_argv(server.url, "p.jsonl", "-q"), d, "first")
        wait_for(server.held.is_set, 60, first[0])
        second = suite.omni(suite.judge_argv(server.url, "p.jsonl", "-q"), d, expect="refuse",
                            names=("another omniaudit run",), timeout=60)
        server.release()
        first_run = suite.finish(first, expect="succeed")
    o.runs += [clean, first_run, second]
    if first_run.rc == 0 and (d / "p.jsonl").read_bytes() != (d / "clean.jsonl").read_bytes():
        o.problems.append("the first run's file is not the clean run's")
    o.outputs, o.secret_roots, o.leftovers = [d / "p.jsonl"], [d / "cache"], leftovers(d)
    return o


def two_judges_racing(delay: float) -> Callable[[Suite, Path], Outcome]:
    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("concurrency", "", key=suite.key)
        with FaultServer(models=LISTED, delay_s=0.005) as server:
            clean = suite.omni(suite.judge_argv(server.url, "clean.jsonl", "-q", cache=None), d, expect="succeed")
            first = suite.start(suite.judge_argv(server.url, "p.jsonl", "-q", cache="c1"), d, "first")
            time.sleep(delay)
            second = suite.start(suite.judge_argv(server.url, "p.jsonl", "-q", cache="c2"), d, "second")
            a, b = suite.finish(first), suite.finish(second)
        same = (d / "p.jsonl").exists() and (d / "p.jsonl").read_bytes() == (d / "clean.jsonl").read_bytes()
        _pair_verdict(o, a, b, None if same else "the output after two racing judges is not the clean run's")
        o.runs += [clean, a, b]
        o.outputs, o.secret_roots, o.leftovers = [d / "p.jsonl"], [d / "c1", d / "c2"], leftovers(d)
        return o

    return case


def judges_sharing_a_cache(suite: Suite, d: Path) -> Outcome:
    o = Outcome("concurrency", "", key=suite.key)
    with FaultServer(models=LISTED, delay_s=0.005) as server:
        clean = suite.omni(suite.judge_argv(server.url, "clean.jsonl", "-q", cache=None), d, expect="succeed")
        started = [suite.start(suite.judge_argv(server.url, f"p{i}.jsonl", "-q"), d, f"j{i}") for i in range(2)]
        runs = [suite.finish(s, expect="succeed") for s in started]
        again = suite.omni(suite.judge_argv(server.url, "p2.jsonl", "-q"), d, expect="succeed")  # from the cache
    o.runs += [clean, *runs, again]
    for i in range(3):
        p = d / f"p{i}.jsonl"
        if p.exists() and p.read_bytes() != (d / "clean.jsonl").read_bytes():
            o.problems.append(f"p{i}.jsonl (shared cache) is not the clean run's")
    o.outputs = [d / f"p{i}.jsonl" for i in range(3)]
    o.secret_roots, o.leftovers = [d / "cache"], leftovers(d)
    return o


def two_audits(delay: float) -> Callable[[Suite, Path], Outcome]:
    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("concurrency", "")
        shutil.copy(suite.base_pred, d / "j.jsonl")
        argv = ["audit", "preference", "--dataset", str(suite.ds), "--predictions", "j=j.jsonl", *FAST_AUDIT,
                "--out", "a", "-q"]
        first = suite.start(argv, d, "first")
        time.sleep(delay)
        second = suite.start(argv, d, "second")
        a, b = suite.finish(first), suite.finish(second)
        _pair_verdict(o, a, b, audit_diff(d / "a", suite.base_audit))
        o.runs += [a, b]
        o.outputs, o.leftovers = [d / "a"], leftovers(d)
        return o

    return case


def two_builds(delay: float) -> Callable[[Suite, Path], Outcome]:
    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("concurrency", "")
        argv = ["build", "preference", "--pairs", str(PAIRS), "--out", "ds", "-q"]
        first = suite.start(argv, d, "first")
        time.sleep(delay)
        second = suite.start(argv, d, "second")
        a, b = suite.finish(first), suite.finish(second)
        got = sorted(p.read_bytes() for p in (d / "ds").glob("*/*.parquet"))
        want = sorted(p.read_bytes() for p in suite.ds.glob("*/*.parquet"))
        _pair_verdict(o, a, b, None if got == want else "the built dataset is not an uninterrupted build's")
        o.runs += [a, b]
        o.outputs, o.leftovers = [d / "ds"], leftovers(d)
        return o

    return case


def audit_during_rewrite(delay: float) -> Callable[[Suite, Path], Outcome]:
    """An audit reads p.jsonl while a judge replaces it: it audits the old file or the new one, never a mix."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("concurrency", "")
        judge = ["judge", "--dataset", str(suite.ds), "--config", "judge", "--seed", "0", "-q"]
        audit = ["audit", "preference", "--dataset", str(suite.ds), "--predictions", "j=j.jsonl", *FAST_AUDIT, "-q"]
        o.runs.append(suite.omni([*judge, "--judge", "scripted:always-a", "--out", "j.jsonl"], d, expect="succeed"))
        o.runs.append(suite.omni([*audit, "--out", "old"], d, expect="succeed"))
        writer = suite.start([*judge, "--judge", "scripted:random", "--out", "j.jsonl"], d, "writer")
        time.sleep(delay)
        reader = suite.omni([*audit, "--out", "a"], d, expect="either", names=("j.jsonl",))
        o.runs += [suite.finish(writer, expect="succeed"), reader]
        if reader.rc == 0 and audit_diff(d / "a", d / "old") and audit_diff(d / "a", suite.base_audit):
            o.problems.append("the audit's measures are neither the old file's nor the new one's")
        o.outputs, o.leftovers = [d / "a"], leftovers(d)
        return o

    return case


def concurrency_cases(rng: random.Random) -> list[Case]:
    cases = [Case("concurrency", "two judges on one --out, the second while the first is held", "smoke",
                  two_judges_held),
             Case("concurrency", "two judges sharing a response cache", "quick", judges_sharing_a_cache)]
    for i in range(3):
        delay = round(rng.uniform(0.0, 0.6), 2)
        tier = "quick" if i == 0 else "full"
        cases += [Case("concurrency", f"two judges racing on one --out ({delay}s apart)", tier,
                       two_judges_racing(delay)),
                  Case("concurrency", f"two audits on one --out ({delay}s apart)", tier, two_audits(delay)),
                  Case("concurrency", f"two builds on one --out ({delay}s apart)", tier, two_builds(delay)),
                  Case("concurrency", f"an audit while a judge rewrites its file ({delay + 0.8}s)", tier,
                       audit_during_rewrite(delay + 0.8))]
    return cases


# ------------------------------------------------------------------------------------------------------ runner
def all_cases(seed: int, tier: str) -> list[Case]:
    rng = random.Random(seed)
    cases = (kill_cases(random.Random(rng.random())) + server_cases(random.Random(rng.random()))
             + fuzz_cases(random.Random(rng.random()), seeds=3) + options_cases()
             + concurrency_cases(random.Random(rng.random())))
    keep = TIERS[: TIERS.index(tier) + 1]
    return [c for c in cases if c.tier in keep]


def run_case(suite: Suite, case: Case, index: int) -> tuple[Result, Outcome | None]:
    d = suite.root / "cases" / f"{index:03d}"
    d.mkdir(parents=True)
    started = time.monotonic()
    try:
        outcome = case.fn(suite, d)
        verdict, reason = classify(outcome)
    except Exception as exc:  # noqa: BLE001 - a fault of the suite itself, not of omniaudit: unclear, and shown
        import traceback

        outcome, verdict = None, "unclear"
        reason = f"the suite's case failed: {type(exc).__name__}: {exc} {traceback.format_exc(limit=-2)!r:.300}"
    seconds = time.monotonic() - started
    if outcome is not None and outcome.notes:
        reason = f"{reason} ({'; '.join(outcome.notes)})".strip()
    detail = "" if outcome is None else " | ".join(
        f"{r.argv[0]} rc={r.rc} {_last_line(r.stderr)[:160]!r}" for r in outcome.runs)
    if not suite.keep:
        shutil.rmtree(d, ignore_errors=True)
    return Result(case.family, case.name, verdict, reason, seconds, detail), outcome


def run_suite(tier: str = "quick", seed: int = 0, jobs: int = 2, families: Iterable[str] | None = None,
              root: Path | None = None, progress: Callable[[Result], None] | None = None,
              names: Iterable[str] | None = None, warm: bool = True) -> list[Result]:
    """Run the cases of ``tier`` (smoke | quick | full), optionally of some ``families`` or with these exact
    ``names``, in ``jobs`` threads; returns one :class:`Result` per case."""
    own = root is None
    root = Path(tempfile.mkdtemp(prefix="omniaudit-faults-")) if own else root
    root.mkdir(parents=True, exist_ok=True)
    try:
        suite = Suite(root, seed)
        suite.keep = not own
        suite.setup()
        if warm:
            suite.launcher = Launcher(suite.env, root / "io")
        cases = [c for c in all_cases(seed, tier) if families is None or c.family in set(families)]
        if names is not None:
            cases = [c for c in cases if c.name in set(names)]
        results: list[Result] = []
        lock = threading.Lock()

        def one(item: tuple[int, Case]) -> Result:
            result, _ = run_case(suite, item[1], item[0])
            with lock:
                results.append(result)
                if progress:
                    progress(result)
            return result

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(one, enumerate(cases)))
        order = {(c.family, c.name): i for i, c in enumerate(cases)}
        return sorted(results, key=lambda r: order[(r.family, r.case)])
    finally:
        if "suite" in locals() and suite.launcher is not None:
            suite.launcher.close()
        if own:
            shutil.rmtree(root, ignore_errors=True)


def table(results: list[Result]) -> str:
    lines = [f"{'family':<18} {'tried':>5} {'clean':>6} {'unclear':>8} {'silently wrong':>15} {'crashes':>8}"
             f" {'seconds':>8}"]
    for family in [*FAMILIES, "all"]:
        got = [r for r in results if family in ("all", r.family)]
        if not got:
            continue
        count = {v: sum(r.verdict == v for r in got) for v in VERDICTS}
        lines.append(f"{family:<18} {len(got):>5} {count['clean']:>6} {count['unclear']:>8} "
                     f"{count['silently wrong']:>15} {count['crash']:>8} {sum(r.seconds for r in got):>8.1f}")
    return "\n".join(lines)


def summary(results: list[Result]) -> str:
    count = {v: sum(r.verdict == v for r in results) for v in VERDICTS}
    return (f"faults: tried {len(results)}, clean {count['clean']}, unclear {count['unclear']}, silently wrong "
            f"{count['silently wrong']}, crashes {count['crash']} — goal 0 silently wrong, 0 crashes")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the quick subset (about 3 minutes on 2 cores)")
    parser.add_argument("--smoke", action="store_true", help="the few cases per family the tests run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("--family", nargs="+", choices=FAMILIES)
    parser.add_argument("--verbose", action="store_true", help="one line per case, clean ones too")
    parser.add_argument("--keep", metavar="DIR", help="run in DIR and keep it (default: a removed temp folder)")
    args = parser.parse_args(argv)
    tier = "smoke" if args.smoke else "quick" if args.quick else "full"
    started = time.monotonic()

    def progress(r: Result) -> None:
        if args.verbose or r.verdict != "clean":
            print(f"[{r.verdict}] {r.family} / {r.case} ({r.seconds:.1f}s){': ' + r.reason if r.reason else ''}",
                  flush=True)
        if args.verbose and r.detail:
            print(f"    {r.detail}", flush=True)

    root = None
    if args.keep:
        root = Path(args.keep)
        root.mkdir(parents=True, exist_ok=True)
    results = run_suite(tier, args.seed, args.jobs, args.family, root=root, progress=progress)
    print()
    print(table(results))
    print(f"tier {tier}, seed {args.seed}, {args.jobs} jobs, {time.monotonic() - started:.0f}s")
    line = summary(results)
    print(line)
    bad = sum(r.verdict in ("silently wrong", "crash") for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
