"""Fault family ``concurrency``: two judges on one ``--out`` (held and racing), two judges sharing a response cache,
two audits and two builds on one ``--out``, an audit reading a predictions file while a judge replaces it."""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from fault_server import FaultServer
from faults_core import FAST_AUDIT, PAIRS, Case, Outcome, Run, audit_diff, leftovers, wait_for
from faults_launcher import Suite
from faults_serving import LISTED


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
