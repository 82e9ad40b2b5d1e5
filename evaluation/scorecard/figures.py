"""The scorecard's figures: the verdict heatmap (model x shortcut) and, per audit, its evidence with CIs by model."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from omniaudit.evaluation.report import plt
from omniaudit.evaluation.scorecard.rules import SHORTCUTS

COLOURS = {"flagged": "#d62728", "clear": "#2ca02c", "inconclusive": "#f2b134", "not answering": "#9e9e9e",
           "not measured": "#e0e0e0"}


def _fmt(value) -> str:
    return "" if value is None else f"{value:.2f}" if abs(value) < 10 else f"{value:.0f}"


def plot_verdicts(verdicts: dict[str, dict], path: Path) -> None:
    """Model x shortcut: red flagged, green clear, amber inconclusive, grey not answering / not measured; the value
    in each cell."""
    from matplotlib.colors import to_rgb

    models = list(verdicts)
    grid = np.array([[to_rgb(COLOURS[verdicts[m][s]["status"]]) for s in SHORTCUTS] for m in models])
    fig, ax = plt.subplots(figsize=(1.6 * len(SHORTCUTS) + 1.5, 0.45 * len(models) + 1.4))
    ax.imshow(grid, aspect="auto")
    for i, m in enumerate(models):
        for j, s in enumerate(SHORTCUTS):
            v = verdicts[m][s]
            text = _fmt(v["value"]) if v["status"] in ("flagged", "clear", "inconclusive") else v["status"]
            ax.text(j, i, text, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(SHORTCUTS)), [s.replace("_", "\n") for s in SHORTCUTS], fontsize=8)
    ax.set_yticks(range(len(models)), models, fontsize=8)
    ax.set_title("Shortcut verdicts (red: flagged, green: clear, amber: inconclusive)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_evidence(audit: str, verdicts: dict[str, dict], path: Path) -> bool:
    """Every counted measure of ``audit``: each model's value and simultaneous CI coloured by its verdict, its null
    (computed on its items) as a black tick. False (and no file) when no model has such a measure."""
    measures: dict[str, dict[str, dict]] = {}
    for model, shortcuts in verdicts.items():
        for shortcut in SHORTCUTS:
            for e in shortcuts[shortcut]["evidence"]:
                if e["audit"] == audit and e["counts"] and e["measured"]:
                    measures.setdefault(f"{shortcut}: {e['measure']}", {})[model] = e
    if not measures:
        return False
    models = list(verdicts)
    fig, axes = plt.subplots(len(measures), 1, figsize=(7.5, 0.32 * len(models) * len(measures) + 1.2 * len(measures)),
                             squeeze=False)
    for ax, (title, per_model) in zip(axes[:, 0], measures.items(), strict=True):
        for i, model in enumerate(models):
            e = per_model.get(model)
            if e is None:
                continue
            colour = COLOURS[e["verdict"] or "inconclusive"]
            lo, hi = e["ci"]
            ax.errorbar(e["value"], i, xerr=[[max(0.0, e["value"] - lo)], [max(0.0, hi - e["value"])]], fmt="o",
                        color=colour, capsize=3, markersize=4)
            ax.plot([e["null"]], [i], marker="|", color="black", markersize=10)
        ax.set_yticks(range(len(models)), models, fontsize=7)
        ax.set_ylim(len(models) - 0.5, -0.5)
        ax.set_title(title, fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
