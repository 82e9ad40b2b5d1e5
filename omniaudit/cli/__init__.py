"""The ``omniaudit`` command: one subcommand per job (build datasets, run models, audit, report, push).

Each audit's module (``preference``, ``interventions``, ``protocols``, ``composition``) registers its own commands
under ``build`` / ``audit`` / ``report`` or at the top level; ``models`` runs models for all of them, ``hub`` pushes,
``registry`` lists the audits; ``common`` holds the flags more than one command takes. Examples::

    omniaudit audit preference --out runs/demo                 # build + audit the embedded synthetic benchmark
    omniaudit audit preference --source emoprefer_v2.csv --predictions judge_ab_ba.jsonl --out runs/v2
    omniaudit build preference --data emoprefer_v2.csv --dual-order --out data/v2 [--push-to-hub me/v2-audit]
"""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from omniaudit import __version__
from omniaudit.cli import (
    annotate,
    composition,
    export,
    hub,
    interventions,
    models,
    plan,
    preference,
    protocols,
    readings,
    recipes,
    registry,
    remedy,
    scorecard,
    verify,
)
from omniaudit.cli.common import (
    DEPRECATED,
    HF_LOADING_COMMANDS,
    Groups,
    Parser,
    add_hf_loading,
    console,
    missing_extra,
    progress_status,
    say,
    setup_logging,
)
from omniaudit.errors import InputError, ServiceError

__all__ = ["build_parser", "console", "main", "progress_status"]

# the order of the help
MODULES = (scorecard, remedy, recipes, plan, models, readings, preference, interventions, annotate, protocols,
           composition, export, hub, registry, verify)
AFTER = "_verbosity_after"  # namespace attribute: -q / -v given after COMMAND (absent when not given there)


def _add_loudness(parser: argparse.ArgumentParser, dest: str, where: str, **default) -> None:
    """``-v`` / ``-q`` on ``parser`` (``where``: the help's note on where they go)."""
    loud = parser.add_mutually_exclusive_group()
    loud.add_argument("-v", "--verbose", action="store_const", const=1, dest=dest, **default,
                      help=f"also debug messages ({where})")
    loud.add_argument("-q", "--quiet", action="store_const", const=-1, dest=dest, **default,
                      help=f"no progress, only warnings, errors and the command's result ({where})")


def _subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every subcommand's parser under ``parser``, at any depth (``judge``, ``audit``, ``audit preference``, ...)."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # an alias names the same parser
                found += [sub, *_subcommands(sub)]
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="omniaudit",
        description="Find and remove shortcuts in multimodal judges and omni models. Build audit datasets in the "
                    "Hugging Face Hub layout, audit judges and benchmarks with bootstrap CIs and exact tests, and "
                    "write JSON + Markdown + PNG reports.",
        epilog="Run `omniaudit COMMAND --help` for the options of each command.",
    )
    parser.add_argument("--version", action="version", version=f"omniaudit {__version__}")
    _add_loudness(parser, "verbosity", "before or after COMMAND", default=0)
    jobs = parser.add_subparsers(dest="job", metavar="COMMAND", required=True)
    groups = [jobs.add_parser(name, help=help, description=description).add_subparsers(
        dest="what", metavar=metavar, required=True) for name, metavar, help, description in (
        ("build", "DATASET", "build an audit dataset (Hub layout)", "Build audit datasets."),
        ("audit", "AUDIT", "audit a benchmark or judges and write a report", "Audit benchmarks and judges."),
        ("report", "REPORT", "reports that combine finished runs", "Reports over the outputs of finished runs."))]
    for module in MODULES:
        module.register(Groups(jobs, *groups))
    for name in HF_LOADING_COMMANDS:
        add_hf_loading(jobs.choices[name])
    for sub in _subcommands(parser):  # `omniaudit judge ... -q` as `omniaudit -q judge ...`
        if not {"-v", "-q", "--verbose", "--quiet"} & set(sub._option_string_actions):  # unless it has its own
            _add_loudness(sub, AFTER, "here or before the command", default=argparse.SUPPRESS)
    return parser


def _tracking(args: argparse.Namespace):
    """``--report-to``: a tracking run opened before the command works (None without one)."""
    from contextlib import nullcontext

    if getattr(args, "report_to", "none") == "none":
        return nullcontext(None)
    from omniaudit.runners.data_parallel import launch_world

    world = launch_world()
    if world is not None and world[0] != 0:  # under a multi-process launch only the main process tracks the run
        return nullcontext(None)
    from omniaudit.evaluation.tracking import TrackingOptions, tracking_run
    from omniaudit.runners.transport import redact

    # judge specs may carry credentials in their URLs (refused later, but the run opens first): never log them
    config = {k: redact(str(v)) if isinstance(v, str | Path) else v for k, v in vars(args).items() if k != "func"}
    return tracking_run(TrackingOptions(args.report_to, args.project, args.run_name), job=args.job,
                        kind=getattr(args, "what", None), out=getattr(args, "out", None), config=config)


def _log_output(tracker, args: argparse.Namespace) -> None:
    """After the command wrote its output: the judge's predictions file, or the audit's folder and its inputs."""
    from omniaudit.evaluation.tracking import named_files

    if args.job == "scorecard":
        tracker.log_scorecard(args.out)
    elif args.job == "judge":
        tracker.log_predictions(args.out, {"dataset": str(args.dataset), "config": args.config, "judge": args.judge})
    else:
        tracker.log_audit(args.what, args.out, named_files(getattr(args, "predictions", None)))


def _out_folder(out: str) -> str:
    """``--out`` checked (see omniaudit.io.check_out_dir); a path without a name ('.', '..') becomes absolute."""
    from omniaudit.io import check_out_dir

    path = check_out_dir(out)
    return str(path) if Path(out).name in ("", "..") else out


_OS_ERRORS = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded",
              errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
              errno.EROFS: "the file system is read-only", errno.ENOENT: "no such file or folder",
              errno.EIO: "input/output error", errno.EMFILE: "too many open files",
              errno.ENAMETOOLONG: "the file name is too long", errno.ENOTDIR: "a part of the path is not a folder",
              errno.EISDIR: "expected a file, found a folder", errno.EXDEV: "cannot move across file systems"}


def _os_error(exc: OSError) -> str:
    """One line for an OS error: ``<what> (<path>): <strerror>`` (no traceback: the cause is the machine's)."""
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    if exc.errno is None and not paths:  # e.g. a connection error raised without errno
        return f"{type(exc).__name__}: {exc}"
    what = _OS_ERRORS.get(exc.errno, "cannot read or write a file")  # type: ignore[arg-type]  # None: the default
    where = f" ({' -> '.join(paths)})" if paths else ""
    return f"{what}{where}: {exc.strerror or exc}"


def _run(args: argparse.Namespace) -> int:
    from contextlib import ExitStack

    from omniaudit.data_builders.hub import HubUnavailable, push_visibility
    from omniaudit.io import output_lock, output_policy

    func: Callable[[argparse.Namespace], None] = args.func
    command = " ".join(["omniaudit", args.job] + ([args.what] if getattr(args, "what", None) else []))
    try:
        with output_policy(overwrite=getattr(args, "overwrite", False), command=command), \
                push_visibility(public=getattr(args, "public", False)), ExitStack() as held:
            if getattr(args, "out", None) is not None and not getattr(func, "own_out", False):
                args.out = _out_folder(args.out)  # fail before any work; the judge's file is checked by run_judge
                held.enter_context(output_lock(args.out))  # a second run on the same --out is refused, not raced
            with _tracking(args) as tracker:  # opened before the command: no package or login fails before work
                func(args)
                if tracker is not None:
                    _log_output(tracker, args)
    except (InputError, HubUnavailable, ServiceError) as exc:
        say("error", str(exc), "bold red")
        return 2
    except ModuleNotFoundError as exc:  # an optional extra not installed (torch in the [media] environment, ...)
        hint = missing_extra(exc)
        if hint is None:
            raise
        say("error", hint, "bold red")
        return 2
    except BrokenPipeError:  # `omniaudit ... | head`: the reader has all it wanted
        import os
        import sys

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes stdout
        return 0
    except OSError as exc:  # disk full, permission denied, ...: one line, not a chained traceback
        say("error", _os_error(exc), "bold red")
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    before, after = vars(args).pop("verbosity", 0), vars(args).pop(AFTER, None)
    if after is not None and before and before != after:
        parser.error("-q and -v contradict each other: give one of them")
    setup_logging(before if after is None else after)
    deprecated = vars(args).pop(DEPRECATED, {})  # old flag spellings used: one warning each, after the command
    try:
        return _run(args)
    finally:
        if "torch" in sys.modules:  # a launched command's ranks leave their process group before the interpreter exits
            from omniaudit.runners.data_parallel import leave_process_group

            leave_process_group()
        for warning in deprecated.values():
            say("warning", warning)
