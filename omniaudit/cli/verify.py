"""``omniaudit verify DIR``: recheck a folder you received and say what it can and cannot vouch for."""

from __future__ import annotations

import argparse
import json

from omniaudit.cli import common


def cmd_verify(args: argparse.Namespace) -> None:
    """recheck a received folder: markers, fingerprints, digests, provenance

    Recheck a folder you received (a built dataset, a judge's predictions file, an audit output, a scorecard OUT, or
    a folder holding several) against the records it carries: every file its .omniaudit.json markers list is there
    (files they do not list are named: not ours); each dataset config's files still have the fingerprint sealed in
    its card (and a path-mode config's clips the SHA-256 their rows record); each predictions file holds one whole
    run whose rows agree with their provenance, made on the build of the dataset found in DIR (or given with
    --dataset); each audit.json's inputs match those predictions and datasets, and its omniaudit version this one;
    each scorecard predictions file has the SHA-256 its models/NAME/status.json recorded. Prints one line per
    finding, grouped as verified, failed and cannot vouch for (with why). Exits 0 when nothing failed (what cannot
    be vouched for does not fail), 1 when a check failed, 2 when DIR (or a --dataset) is missing.
    """
    from omniaudit.verify import verify

    with common.progress_status(f"verifying {args.folder}"):
        result = verify(args.folder, args.dataset or ())
    print(json.dumps(result.to_dict(), indent=2) if args.json else "\n".join(result.lines()))
    if not result.ok:
        raise SystemExit(1)


def register(groups: common.Groups) -> None:
    p = common.command(groups.top, "verify", cmd_verify)
    p.add_argument("folder", metavar="DIR", help="the folder to recheck (or one predictions file)")
    p.add_argument("--dataset", action="append", metavar="PATH",
                   help="a dataset folder (or a Hub repo id in the local cache) the predictions in DIR were made on, "
                        "when it is not inside DIR (repeatable)")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
