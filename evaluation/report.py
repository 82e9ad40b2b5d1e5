"""What every audit's report shares: Markdown tables, number formats, file names shown without where they live on this
machine (:func:`shown_path`) and a headless matplotlib.

Each audit writes its own report (``evaluation/<audit>/report.py``) with these pieces.
"""

from __future__ import annotations

from pathlib import Path

from omniaudit.records import ABSOLUTE_PATH  # one definition of "an absolute path in a text"


class _Figures:
    """The two pyplot calls the reports make (``plt.subplots``, ``plt.close``), on matplotlib ``Figure`` objects of
    their own: no backend is chosen and no pyplot state is touched, so importing omniaudit leaves a notebook's or an
    application's matplotlib as it was (``savefig`` picks its writer by the file's format)."""

    @staticmethod
    def subplots(nrows: int = 1, ncols: int = 1, *, figsize=None, dpi=None, **kwargs):
        from matplotlib.figure import Figure

        fig = Figure(figsize=figsize, dpi=dpi)
        return fig, fig.subplots(nrows, ncols, **kwargs)

    @staticmethod
    def close(fig) -> None:
        """Nothing to release: a figure pyplot never saw is freed with its last reference."""


plt = _Figures()  # the reports' headless figures


def shown_path(path: str | Path | None, base: str | Path | None = None) -> str | None:
    """How a report names a file or folder: relative to the output folder ``base`` when it lies inside it (``models/
    a/report.md``), else by its name only (``predictions.jsonl``), never where it lives on this machine
    (``/home/user/...``). Anything that is not a local path (a Hub repo id such as ``me/dataset``, a model or judge
    name, a description) is shown as given; None stays None."""
    if path is None:
        return None
    text = str(path)
    local = Path(text).expanduser()
    if not text or not (local.is_absolute() or local.exists()):
        return text
    resolved = local.resolve()
    if base is not None:
        try:
            return resolved.relative_to(Path(base).expanduser().resolve()).as_posix()
        except ValueError:
            pass
    return resolved.name or text


def shown_paths_in(text: str | None, base: str | Path | None = None) -> str | None:
    """``text`` (a message, a model spec such as ``hf:/home/me/model``) with every absolute local path in it shown
    as :func:`shown_path` shows it."""
    if not isinstance(text, str):
        return text
    return ABSOLUTE_PATH.sub(lambda m: shown_path(m.group(0), base) or m.group(0), text)


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
