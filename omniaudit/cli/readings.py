"""``omniaudit readings sample|agree``: check how the rules read your own model's replies, by hand."""

from __future__ import annotations

import argparse

from omniaudit.cli import common
from omniaudit.cli.numbers import non_negative_int, positive_int


def cmd_sample(args: argparse.Namespace) -> None:
    """draw replies of a predictions file to label by hand

    Draw up to --n closed-item replies of an `omniaudit judge` predictions file (seeded, stratified by reading and by
    reason for no reading) into OUT/readings.csv, with an empty `truth` column to fill (the option the reply states,
    or `none`), and OUT/readings.html to read them. Then run `omniaudit readings agree OUT/readings.csv`.
    """
    from omniaudit.evaluation.readings import sample_readings, write_sample

    sample = sample_readings(args.predictions, n=args.n, seed=args.seed)
    csv, page = write_sample(sample, args.out, str(args.predictions))
    print(f"{len(sample)} replies written to {csv} (fill the truth column) and {page}")


def cmd_agree(args: argparse.Namespace) -> None:
    """agreement of the readings with your hand labels

    Compare the readings of a filled readings.csv (from `omniaudit readings sample`) with its `truth` column:
    accuracy, Cohen's kappa, every misreading (read as another option, or a non-answer read as one) and every
    answer left unread. Exits 1 when the agreement is below 95% or anything was misread.
    """
    from omniaudit.evaluation.readings import agreement

    result = agreement(args.labelled)
    print(result.summary())
    for kind, rows in (("misread", result.misread), ("left unread", result.missed)):
        for r in rows:
            print(f"  {kind}: row {r['row']} ({r['id']}): {r['raw']!r} read {r['reading']!r}, truth {r['truth']!r}")
    if not result.meets_goal:
        raise SystemExit(1)


def register(groups: common.Groups) -> None:
    readings = groups.top.add_parser("readings", help="check how the rules read your own model's replies",
                                     description="Sample a model's replies to label by hand, then measure how often "
                                                 "the rule-based readers agree with you.")
    sub = readings.add_subparsers(dest="what", metavar="STEP", required=True)
    p = common.command(sub, "sample", cmd_sample)
    p.add_argument("--predictions", required=True,
                   help="an `omniaudit judge` predictions file (JSONL), a composition audit's graded.csv (its "
                        "replies read right / wrong) or an interventions audit's scored.csv (Thud answers read as "
                        "their class: in sync, audio late by 1.2 s, muted, mismatch, ...)")
    p.add_argument("--n", type=positive_int, default=100, help="replies to draw (default 100)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="sampling seed (default 0)")
    common.add_out(p)
    p = common.command(sub, "agree", cmd_agree)
    p.add_argument("labelled", help="a readings.csv with its truth column filled")
