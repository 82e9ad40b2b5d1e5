"""The Hugging Face Hub: ``push`` (a built dataset folder, as a dataset repo)."""

from __future__ import annotations

import argparse
from pathlib import Path

from omniaudit.cli import common


def cmd_push(args: argparse.Namespace) -> None:
    """push a built dataset folder to the Hugging Face Hub

    Upload a dataset folder written by `omniaudit build` or `merge` (README card whose configs match its Parquet files;
    checked before any Hub call) as a dataset repo. Needs network access and a token (HF_TOKEN or `hf auth login`).
    """
    from omniaudit.data_builders.hub import push_files, push_to_hub

    url = push_to_hub(args.folder, args.repo, private=not args.public)  # checks the folder before any Hub call
    files = push_files(args.folder)
    print(f"pushed {len(files)} file(s) written by the build to {'public' if args.public else 'private'} dataset "
          f"repo {args.repo}: {url}")


def register(groups: common.Groups) -> None:
    p = common.command(groups.top, "push", cmd_push)
    p.add_argument("folder", type=Path)
    p.add_argument("repo", help="dataset repo id, e.g. me/emoprefer-audit")
    common.add_visibility(p)
