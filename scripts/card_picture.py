#!/usr/bin/env python
"""A picture of a real card for the README and the docs: the verdict table of the demo card as a PNG.

    python scripts/card_picture.py                    # run the demo card, write docs/images/card.png
    python scripts/card_picture.py --card runs/card   # picture an existing card (scorecard.json) instead

Without --card it runs the card `bash scripts/demo.sh` writes, less the tiny omni thinker (that one needs torch): the
six scripted reference models on the small embedded sets (`--size small`), into --work (default runs/docs-card; its
datasets are kept between runs, every answer and audit is made afresh). About a minute on 2 CPU cores, 20-40 s once
the datasets are built. The docs build runs it too (scripts/mkdocs_hooks.py), so the site always shows the card the
code writes now; rerun it by hand to refresh the committed docs/images/card.png the README shows (a test checks that
the committed picture shows the verdicts the demo card has).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images" / "card.png"
WORK = ROOT / "runs" / "docs-card"
# the scripted references of scripts/demo.sh (the tiny omni thinker, which needs torch, left out)
DEMO = {"oracle": "scripted:oracle", "pos": "scripted:position-locked", "label": "scripted:label-follower",
        "deaf": "scripted:deaf", "verbose": "scripted:verbose", "dominant": "scripted:audio-dominant"}
CAPTION = ("The demo card (bash scripts/demo.sh, its six scripted reference models, --size small), drawn from its "
           "scorecard.json by scripts/card_picture.py. Each planted model is flagged for its own shortcut; the "
           "oracle is clear where it is measured.")


def demo_card(work: Path = WORK) -> dict:
    """Run the demo's scripted references into ``work`` (answers and audits afresh) and return scorecard.json."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from omniaudit.api import scorecard

    work.mkdir(parents=True, exist_ok=True)
    scorecard(DEMO, work, size="small", reuse=False)
    return json.loads((work / "scorecard.json").read_text(encoding="utf-8"))


def render(out: Path = OUT, card: Path | None = None, work: Path = WORK) -> dict:
    """Write the picture of ``card`` (a card folder; None: the demo card, run now) to ``out``; returns the card."""
    from omniaudit.evaluation.scorecard.picture import plot_card

    data = (json.loads((card / "scorecard.json").read_text(encoding="utf-8")) if card is not None
            else demo_card(work))
    out.parent.mkdir(parents=True, exist_ok=True)
    plot_card(data, out, CAPTION if card is None else f"The card in {card.name}, drawn from its scorecard.json.")
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--card", type=Path, help="a card folder (scorecard.json) to draw instead of the demo")
    parser.add_argument("--out", type=Path, default=OUT, help=f"the PNG (default {OUT.relative_to(ROOT)})")
    parser.add_argument("--work", type=Path, default=WORK, help="where the demo card is run")
    args = parser.parse_args(argv)
    render(args.out, args.card, args.work)
    print(f"{args.out} ({args.out.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
