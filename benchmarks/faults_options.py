"""Fault family ``options``: numeric options (nan, inf, 0, negative, huge, unicode minus, hex) of ``judge``,
``audit preference`` and ``scorecard``, run end to end."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from faults_core import FAST_AUDIT, Case, Outcome, leftovers, rows
from faults_launcher import Suite


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
