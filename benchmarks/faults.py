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

The families live beside this file, one module each (``faults_kills``, ``faults_serving``, ``faults_fuzz``,
``faults_options``, ``faults_concurrency``), over the verdicts of ``faults_core`` and the launcher of
``faults_launcher``.

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
import random
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (HERE, ROOT / "tests"):  # the family modules beside this file, and the test servers
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from faults_concurrency import concurrency_cases  # noqa: E402
from faults_core import FAMILIES, TIERS, VERDICTS, Case, Outcome, Result, classify, last_line  # noqa: E402
from faults_core import Run as Run  # noqa: E402 - re-exported: the tests build runs through this module
from faults_fuzz import fuzz_cases  # noqa: E402
from faults_kills import kill_cases  # noqa: E402
from faults_launcher import Launcher, Suite  # noqa: E402
from faults_options import options_cases  # noqa: E402
from faults_serving import server_cases  # noqa: E402


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
        f"{r.argv[0]} rc={r.rc} {last_line(r.stderr)[:160]!r}" for r in outcome.runs)
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
