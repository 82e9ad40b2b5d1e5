"""A picture of a card's verdict table (``scorecard.json``) as a PNG: one row per model, one column per shortcut and
the summary, each cell coloured by its verdict with its value and interval or bound. The docs and the README show
the demo card this way (``scripts/card_picture.py``, run by the docs build). The picture carries the verdicts it
shows as PNG text (:data:`KEY`), so a test can tell that a picture is of the card the code writes now.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from omniaudit.evaluation.scorecard.cells import flagged_where

KEY = "omniaudit-verdicts"  # the PNG text chunk holding {model: {shortcut: status}}
TINTS = {"flagged": "#f3a5a2", "clear": "#bfe3b8", "inconclusive": "#f8dc92", "not answering": "#d0d0d0",
         "not measured": "#ececec"}  # figures.COLOURS, lighter: the text stays readable


def _num(value) -> str:
    return "n/a" if value is None else f"{value:.2f}" if abs(value) < 10 else f"{value:.0f}"


def cell_text(v: dict) -> str:
    """A verdict cell in two short lines: the verdict (its direction or stratum), then the value with its interval
    (flagged, inconclusive) or the bound that cleared it."""
    status = v["status"]
    if status not in ("flagged", "clear", "inconclusive"):
        return status
    head = {"flagged": "FLAGGED", "clear": "clear, small" if v.get("significant") else "clear"}.get(status, status)
    if status == "flagged" and v.get("direction"):
        head += f" ({v['direction']})"
    head += flagged_where(v)
    lo, hi = v.get("ci") or [None, None]
    low, bound = v.get("equivalence_bound") or [None, None]
    if status == "clear" and bound is not None:
        shown = f"bound {_num(bound)}" if low is None else f"bounds [{_num(low)}, {_num(bound)}]"
        return f"{head}\n{_num(v['value'])}, {shown}"
    return f"{head}\n{_num(v['value'])} [{_num(lo)}, {_num(hi)}]"


def statuses(card: dict) -> dict[str, dict[str, str]]:
    """{model: {shortcut: status}} of a card."""
    return {m: {s: e["shortcuts"][s]["status"] for s in card["shortcuts"]} for m, e in card["models"].items()}


def plot_card(card: dict, path: Path, caption: str = "") -> None:
    """The verdict table of ``card`` (``scorecard.json``) as a PNG at ``path``."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    shortcuts, models = card["shortcuts"], list(card["models"])
    widths = [1.7, *([1.75] * len(shortcuts)), 2.6]
    height = 0.5
    fig = Figure(figsize=(sum(widths) + 0.2, height * (len(models) + 1) + 1.0))
    ax = fig.add_axes((0.01, 0.12 if caption else 0.02, 0.98, 0.78 if caption else 0.88))
    ax.set_xlim(-0.02, sum(widths) + 0.02)
    ax.set_ylim(len(models) + 1.03, -0.03)
    ax.axis("off")
    edges = [sum(widths[:i]) for i in range(len(widths) + 1)]

    def box(row: int, col: int, text: str, colour: str = "white", bold: bool = False, size: float = 7.5) -> None:
        ax.add_patch(Rectangle((edges[col], row), widths[col], 1, facecolor=colour, edgecolor="#999999",
                                   linewidth=0.6))
        ax.text(edges[col] + widths[col] / 2, row + 0.5, text, ha="center", va="center", fontsize=size,
                fontweight="bold" if bold else "normal")

    for col, head in enumerate(["model", *shortcuts, "summary"]):
        box(0, col, head.replace("_", "\n") if "_" in head else head, "#eeeeee", bold=True)
    for row, name in enumerate(models, start=1):
        entry = card["models"][name]
        box(row, 0, name + ("\n(reference)" if entry.get("reference") else ""), bold=True)
        for col, s in enumerate(shortcuts, start=1):
            v = entry["shortcuts"][s]
            box(row, col, cell_text(v), TINTS.get(v["status"], "white"), bold=v["status"] == "flagged")
        box(row, len(widths) - 1, "\n".join(textwrap.wrap(entry.get("summary", ""), 34)[:2]), size=7)
    fig.suptitle(f"Shortcut scorecard (omniaudit {card.get('omniaudit', '')}): red flagged, green clear, "
                 "amber inconclusive, grey not measured / not answering", fontsize=9)
    if caption:
        fig.text(0.01, 0.03, caption, fontsize=7, color="#444444")
    fig.savefig(path, dpi=100, metadata={"Title": "omniaudit scorecard verdicts", KEY: json.dumps(statuses(card)),
                                         "Software": None})


def shown_statuses(path: Path) -> dict[str, dict[str, str]] | None:
    """The verdicts a picture made by :func:`plot_card` shows (None: not such a picture)."""
    from PIL import Image

    with Image.open(path) as image:
        text = getattr(image, "text", {}) or image.info
    return json.loads(text[KEY]) if KEY in text else None
