"""What every audit's report shares: Markdown tables, number formats and a headless matplotlib.

Each audit writes its own report (``evaluation/<audit>/report.py``) with these pieces.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402, F401 - the reports' shared headless pyplot


def markdown_table(headers: list[str], rows: list[list[object]], align: str | None = None) -> str:
    """A GitHub-flavoured Markdown table; ``align`` is one of l/r/c per column (default: first left, rest right)."""
    align = align or "l" + "r" * (len(headers) - 1)
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(marks[a] for a in align) + " |"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None or x != x else f"{x:.{digits}f}"


def fmt_ci(entry: dict) -> str:
    """``value [lo, hi]`` of an entry with ``ci`` and ``waf`` (or ``value``)."""
    lo, hi = entry["ci"]
    return f"{fmt(entry['waf'] if 'waf' in entry else entry['value'])} [{fmt(lo)}, {fmt(hi)}]"


def fmt_p(p: float) -> str:
    return "<.001" if p < 0.001 else f"{p:.3f}"


_PREFERENCE = ("SLICE_TITLES", "PROBE_TITLES", "stratified_random_waf", "plot_full_vs_counter", "plot_win_rates",
               "preference_report")


def __getattr__(name: str):
    """The preference report's names, which lived here before each audit got its own report module."""
    if name in _PREFERENCE:
        import warnings

        from omniaudit.evaluation.preference import report

        warnings.warn(f"omniaudit.evaluation.report.{name} moved to omniaudit.evaluation.preference.report",
                      DeprecationWarning, stacklevel=2)
        return getattr(report, name)
    raise AttributeError(name)


def save_figure(fig, path, **savefig) -> None:
    """Lay out, write and close a figure (every report's last three lines of a plot)."""
    fig.tight_layout()
    fig.savefig(path, **savefig)
    plt.close(fig)
