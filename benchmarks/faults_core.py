"""The fault suite's verdicts (:mod:`faults`): what a run is (:class:`Run`), what a case observed
(:class:`Outcome`) and how it is classified (:func:`classify`: clean, unclear, silently wrong or a crash: a key in
an artifact, a non-finite measure, a traceback, leftovers), with the helpers the cases share to look at outputs."""

from __future__ import annotations

import csv
import io
import json
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from faults_launcher import Suite  # a case runs in a Suite (faults_launcher imports this module)


HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
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


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def run_verdict(run: Run) -> tuple[str, str]:
    """One process: crash, unclear, silently wrong (exit 0 where a refusal was due) or clean."""
    if TRACEBACK in run.stderr:
        return "crash", f"traceback: {last_line(run.stderr)}"
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
            return "unclear", f"exit {run.rc} on a valid run: {messages[0] if messages else last_line(run.stderr)}"
        if len(messages) != 1:
            return "unclear", f"exit {run.rc} with {len(messages)} error lines: {last_line(run.stderr)}"
        if run.names and not any(n.lower() in messages[0].lower() for n in run.names):
            return "unclear", f"the error names none of {list(run.names)}: {messages[0][:300]}"
        return "clean", ""
    return "unclear", f"exit {run.rc}: {last_line(run.stderr)}"


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


def as_text(data) -> str:
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
