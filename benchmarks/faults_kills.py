"""Fault family ``kills``: SIGKILL of ``omniaudit judge`` (``openai:`` against a held fault server, ``scripted:``),
of one shard of a sharded judge, of ``audit preference``, ``build preference`` and ``scorecard``, at seeded points;
the rerun must write the bytes of an uninterrupted run and no killed run may leave a half-written output."""

from __future__ import annotations

import os
import random
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

from fault_server import FaultServer
from faults_core import FAST_AUDIT, PAIRS, Case, Outcome, Run, audit_diff, folder_complete, leftovers, rows, wait_for
from faults_launcher import Suite
from faults_serving import LISTED


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
