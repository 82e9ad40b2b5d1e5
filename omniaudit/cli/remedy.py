"""``omniaudit remedy SHORTCUT``: what trains a shortcut away (omniaudit/shortcuts.py's remedies), and for
label_following, ``--dataset`` builds its training set (data_builders/protocols/remedy.py)."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from omniaudit.cli import common
from omniaudit.cli.numbers import non_negative_int

BUILDS = {"label_following": "a protocols dataset (omniaudit build protocols)"}  # shortcut -> what --dataset reads


def remedy_lines(name: str) -> list[str]:
    """What ``omniaudit remedy NAME`` prints: the remedy, its source and its commands, one per line, each in the form
    that runs here (:func:`~omniaudit.launch_files.render_command`; InputError for an unknown shortcut)."""
    from omniaudit.errors import InputError
    from omniaudit.launch_files import render_command
    from omniaudit.shortcuts import BY_NAME, SHORTCUTS

    shortcut = BY_NAME.get(name)
    if shortcut is None:
        raise InputError(f"unknown shortcut {name!r}; the shortcuts are {', '.join(SHORTCUTS)}")
    r = shortcut.remedy
    head = f"{name}: {shortcut.what}"
    if r is None or not r.supported:
        said = [f"what the papers say: {r.what}", f"source: {r.source}"] if r is not None else []
        return [head, f"no paper supports a remedy for {name}: there is nothing to train", *said]
    lines = [head, f"remedy: {r.what}", f"source: {r.source}"]
    if r.commands:
        lines.append("commands (upper-case words are yours to fill):")
        lines += [render_command(c) for c in r.commands]
    return lines


def cmd_remedy(args: argparse.Namespace) -> None:
    """print what trains a shortcut away, or build label_following's training set

    Without --dataset: the remedy the papers prescribe for SHORTCUT (what it is, where it comes from) and the exact
    commands that build its training set and train on it, one per line (upper-case words are yours to fill); for a
    shortcut no paper supports a remedy for, says so. label_following --dataset PROTOCOLS --out DIR: from a protocols
    dataset's blueprint items, write config sft of chat records for training/sft.py: each clip's wrong_audio item
    once per wrong label (the supplied label deranged, never the truth; the answer the gold label) and the clip's
    no-label audio item. Caveat (on the card): trained on deranged labels only, a model could learn to avoid the
    supplied label; the no-label items and the scorecard's cue measure (its value shown) reveal it.
    """
    from omniaudit.errors import InputError

    lines = remedy_lines(args.shortcut)  # an unknown shortcut fails first
    if args.dataset is None:
        if args.out is not None:
            raise InputError("--out needs --dataset (the dataset the training set is built from)")
        print("\n".join(lines))
        return
    if args.shortcut not in BUILDS:
        raise InputError(f"--dataset builds a training set for {', '.join(BUILDS)} only; for {args.shortcut}, run "
                         f"`omniaudit remedy {args.shortcut}` for its commands")
    if args.out is None:
        raise InputError("--dataset needs --out (the folder the training set is written to)")
    from omniaudit.data_builders.protocols.remedy import BUILD_INFO, CONFIG, build_deranged_dataset
    from omniaudit.launch_files import launch_line

    with common.progress_status("building the deranged-label training set") as progress:
        out = build_deranged_dataset(args.out, args.dataset, args.seed, args.cue_conflict, args.push_to_hub,
                                     progress)
    summary = json.loads((Path(out) / BUILD_INFO).read_text(encoding="utf-8"))["summary"]
    skipped = len(summary["skipped"]) + len(summary["skipped_cue_conflict"])
    if skipped:
        common.say("warning", f"{skipped} item(s) skipped: their prompt does not quote the supplied label exactly "
                              f"once (listed in {Path(out) / BUILD_INFO} and on the card)")
    print(f"{summary['clips']} clips: {summary['label_rows']} rows with a deranged label, {summary['no_label_rows']} "
          f"without a label ({summary['rows']} rows)")
    train = launch_line("sft", "qwen2.5-omni-7b/sft_deranged_labels", "zero3", "--dataset_name",
                        shlex.quote(str(out)), "--dataset_config", CONFIG)
    print(f"dataset written to {out} (config {CONFIG}); train with: {train}")
    common.print_pushed(args.push_to_hub)


def register(groups: common.Groups) -> None:
    p = common.command(groups.top, "remedy", cmd_remedy)
    from omniaudit.shortcuts import SHORTCUTS

    p.add_argument("shortcut", metavar="SHORTCUT", help=f"a shortcut of the scorecard: {', '.join(SHORTCUTS)}")
    g = p.add_argument_group("build the training set (label_following)")
    g.add_argument("--dataset", help=f"label_following: {BUILDS['label_following']}, folder or Hub repo id")
    common.add_out(g, common.OUT_FOLDER, required=False, default=None)
    g.add_argument("--seed", type=non_negative_int, default=0, help="order of the rows (default 0; nothing else)")
    g.add_argument("--cue-conflict", action="store_true",
                   help="also derange the dataset's cue_conflict conf_spec items (a specialist sentence with the "
                        "quoted label)")
    common.add_push(p)
