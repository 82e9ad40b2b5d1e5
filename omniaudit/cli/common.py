"""What the commands share: the console, progress, the parser (and its help style), renamed flags, and every flag
group that more than one command takes, defined once here with its defaults and wording set per command."""

from __future__ import annotations

import argparse
import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from omniaudit.cli.numbers import non_negative_int, positive_int, share
from omniaudit.cli.progress import console, log, progress_status, say, setup_logging  # noqa: F401
from omniaudit.cli.runner_options import (  # noqa: F401
    HF_LOADING,
    HF_LOADING_COMMANDS,
    add_hf_loading,
    add_runner_options,
    add_sampling,
    device_map,
    runner_kwargs,
    sampling_kwargs,
)

SPEC = "hf:PATH | openai:MODEL@URL | scripted:NAME | KIND:... (a runner plugin)"
DEPRECATED = "_deprecated"  # namespace attribute: old flag spelling -> its warning, printed by main() once


# pyproject.toml's optional dependencies, by the module a missing extra leaves unimportable: import name -> the
# smallest extra that has it. [infer] is the torch stack of hf: models, tiny-models and the data-parallel judge (torch
# is in [decode] too, but whatever loads a model needs [infer]); [train] = [infer] + TRL, PEFT, DeepSpeed and wandb.
# tests/test_extras.py checks the table against pyproject.
EXTRAS = {"torch": "infer", "torchvision": "infer", "transformers": "infer", "accelerate": "infer",
          "bitsandbytes": "infer", "peft": "train", "trl": "train", "deepspeed": "train", "torchcodec": "decode",
          "wandb": "track", "av": "media", "soundfile": "media", "opensmile": "media", "inspect_ai": "inspect"}
TRAIN_COVERS = ("infer", "decode", "track")  # extras that [train] includes: a training script names [train] for them


def missing_extra(exc: ModuleNotFoundError, training: bool = False) -> str | None:
    """One line naming the extra to install when ``exc`` is a package of an optional extra not installed (the
    package itself, not a module inside an installed one: that is a version mismatch, left as it is); else None.
    ``training``: said for a training script (``accelerate launch training/...``), which needs all of [train]."""
    extra = EXTRAS.get(exc.name or "")
    if extra is None:
        return None
    if training and extra in TRAIN_COVERS:
        extra = "train"
    return (f"No module named '{exc.name}': this needs omniaudit's [{extra}] extra: pip install 'omniaudit[{extra}]' "
            "-c requirements/constraints.txt")


def print_outputs(out: Path, metrics: str = "audit.json") -> None:
    """Where a finished audit or report put its report and its metrics."""
    print(f"report: {out / 'report.md'}")
    print(f"metrics: {out / metrics}")


def print_pushed(repo: str | None) -> None:
    if repo:
        print(f"pushed to https://huggingface.co/datasets/{repo}")


# ----------------------------------------------------------------------------------------------- parser and commands
class Renamed(argparse.Action):
    """Store, as ``store`` does; a spelling in ``old`` still works but leaves a deprecation warning naming ``use``
    (default: the current spelling, the first), printed once per spelling after the command."""

    def __init__(self, option_strings, dest, old=(), use=None, **kwargs):
        self.old, self.use = tuple(old), use or option_strings[0]
        if kwargs.get("help") and self.old and len(self.old) < len(option_strings):
            kwargs["help"] += f" (old spelling {', '.join(self.old)}: deprecated)"
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string in self.old:
            notes = getattr(namespace, DEPRECATED, None) or {}
            notes[option_string] = f"{option_string} is deprecated; use {self.use}"
            setattr(namespace, DEPRECATED, notes)
        setattr(namespace, self.dest, values)


def renamed(p, new: str, *old: str, **kwargs) -> argparse.Action:
    """``new`` with its deprecated spellings ``old`` (listed in the help text, not as flags of their own)."""
    return p.add_argument(new, *old, action=Renamed, old=old, **kwargs)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's own, except that a renamed flag is listed by its current spelling only."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        old = getattr(action, "old", ())
        current = [s for s in action.option_strings if s not in old]
        if old and current:
            action = copy.copy(action)
            action.option_strings = current
        return super()._format_action_invocation(action)


class Parser(argparse.ArgumentParser):
    """The parser of every command (subcommands inherit the class, so the help style holds everywhere)."""

    def __init__(self, *args, formatter_class=HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)


@dataclass(frozen=True)
class Groups:
    """Where a module's ``register`` adds its commands: the top level, or under build / audit / report."""

    top: argparse._SubParsersAction
    build: argparse._SubParsersAction
    audit: argparse._SubParsersAction
    report: argparse._SubParsersAction


def command(group: argparse._SubParsersAction, name: str, func: Callable) -> argparse.ArgumentParser:
    """Add command ``name``, run by ``func``: its docstring's first paragraph is the one-line help (in the list of
    commands), the rest the description (atop ``--help``)."""
    summary, _, rest = inspect.cleandoc(cast(str, func.__doc__)).partition("\n\n")
    p = group.add_parser(name, help=" ".join(summary.split()), description=" ".join(rest.split()))
    p.set_defaults(func=func)
    return p


def writes_own_file(func: Callable) -> Callable:
    """Mark a command whose --out is a file (or a tree) it checks itself, instead of a folder main() checks."""
    func.own_out = True  # type: ignore[attr-defined]  # a function attribute main() reads
    return func


def shard(text: str) -> tuple[int, int]:
    """``--shard I/N``."""
    index, sep, count = text.partition("/")
    if not sep or not index.isdigit() or not count.isdigit() or not 0 <= int(index) < int(count):
        raise argparse.ArgumentTypeError(f"expected I/N with 0 <= I < N, e.g. 0/8 (got {text!r})")
    return int(index), int(count)


# ------------------------------------------------------------------------------------------------------ flag groups
OUT_FOLDER = ("output folder (replaced atomically; refused when it holds files omniaudit did not write, unless "
              "--overwrite)")
REPLACE_FOLDER = "replace --out even when it is not an earlier output of this command (deletes its contents)"
REPLACE_FILE = "replace an existing --out file that omniaudit did not write"


def add_out(p, help: str = OUT_FOLDER, overwrite: str | None = REPLACE_FOLDER, **kwargs) -> None:
    """``--out`` (required unless given a default) and, unless ``overwrite`` is None, ``--overwrite``."""
    kwargs.setdefault("required", "default" not in kwargs)
    p.add_argument("--out", help=help, **kwargs)
    if overwrite:
        p.add_argument("--overwrite", action="store_true", help=overwrite)


def add_tracking(p) -> None:
    g = p.add_argument_group("tracking")
    g.add_argument("--report-to", choices=["none", "wandb"], default="none",
                   help="log the headline metrics, tables, figures and predictions to wandb (needs the [track] "
                        "extra; WANDB_MODE=offline logs locally, WANDB_DIR says where) (default none)")
    g.add_argument("--project", help="wandb project (default $WANDB_PROJECT or omniaudit)")
    g.add_argument("--run-name", help="wandb run name (default: the command and the --out name)")


def add_min_usable(p, what: str) -> None:
    """``--min-usable SHARE`` (default ``run.MIN_USABLE``): answers that are an option named, or free text that is
    not empty, a refusal, an error reply or byte noise; ``what`` says what happens below it."""
    from omniaudit.runners.rows import MIN_USABLE

    p.add_argument("--min-usable", type=share, default=MIN_USABLE, metavar="SHARE",
                   help=f"{what} when fewer than this share of the answers are usable (an option named, or free text "
                        f"that is not empty, a refusal, an error reply or noise) (default {MIN_USABLE}; 0 keeps any "
                        "run; scripted: reference models are exempt)")


def add_partial(p) -> None:
    p.add_argument("--partial", action="store_true",
                   help="audit a predictions file that is one shard of a judge run (--shard I/N) or an incomplete "
                        "run; refused by default (missing answers would count as wrong). The report says so")


def add_exclude_extracted(p) -> None:
    p.add_argument("--exclude-extracted", action="store_true",
                   help="leave out the answers `omniaudit judge` did not read with its rules (read_by: extractor, "
                        "from --extractor; read_by: reasoning, from --read-reasoning): they count as unread. By "
                        "default they count, and the report says how many")


def add_bootstrap(p, old_seed: tuple[str, ...] = ("--seed",)) -> None:
    """``--n-resamples`` and ``--bootstrap-seed`` (``old_seed``: its deprecated spellings on this command)."""
    p.add_argument("--n-resamples", type=positive_int, default=2000, help="bootstrap resamples (default 2000)")
    renamed(p, "--bootstrap-seed", *old_seed, type=non_negative_int, default=0, help="bootstrap seed (default 0)")


def add_visibility(p) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--public", action="store_true",
                   help="create the Hub repo public (default: private; an existing public repo needs --public)")
    g.add_argument("--private", action="store_true", help="create the Hub repo private (the default; kept for old "
                                                          "scripts)")


def add_push(p) -> None:
    """``--push-to-hub REPO`` and the repo's visibility (private unless --public) for a builder."""
    g = p.add_argument_group("Hugging Face Hub")
    g.add_argument("--push-to-hub", metavar="REPO",
                   help="also push the dataset to this Hub dataset repo (private unless --public); only the files the "
                        "build wrote are uploaded")
    add_visibility(g)


def builder(groups: Groups, name: str, func: Callable, source: str, help: str, seed: str) -> argparse.ArgumentParser:
    """Command ``build name`` with what every builder takes: its input (``source``, also spelled --source; omitted:
    its embedded synthetic default), --out and --overwrite, the build's --seed, and --push-to-hub."""
    p = command(groups.build, name, func)
    p.add_argument(source, "--source", help=help)
    add_out(p)
    p.add_argument("--seed", type=non_negative_int, default=0, help=seed)
    add_push(p)
    return p


def add_helper_model(p, flag: str, does: str, *old: str) -> None:
    """An audit's extractor / grader (a runner answering for the audit) and its response cache."""
    renamed(p, flag, *old, metavar="SPEC", help=does)
    add_runner_options(p, "cache", role=flag.removeprefix("--"))
