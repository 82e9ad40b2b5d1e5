"""Fig. 2a of the EmoPrefer audit: mean |rho| +- SD across folds of the ODIN head-confound correlations per run.

Input: the ``odin_metrics.json`` of two or more ``training/reward_odin.py`` runs (typically lambda = 0, the
no-decorrelation control, and lambda = 1, ODIN), each holding per-fold held-out correlations under ``folds``
(``rho_content_length``, ``rho_content_prior``, ``rho_length_head_length``, ``rho_prior_head_prior``; a single-head
control has only the content-head ones). Per run and correlation: the absolute value in every fold, their mean and
sample SD (ddof = 1, the figure's error bar; 0 for one fold). Written by ``omniaudit report odin`` (odin.json,
report.md, fig2a PNG) and, with ``audit preference --odin``, into the preference audit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from omniaudit.errors import InputError
from omniaudit.evaluation.stats import mean_sd

METRICS_FILE = "odin_metrics.json"
CORRELATIONS = {"rho_content_length": "r_C vs length", "rho_content_prior": "r_C vs prior",
                "rho_length_head_length": "r_L vs length", "rho_prior_head_prior": "r_G vs prior"}


def parse_runs(specs: Sequence[str | Path]) -> dict[str, Path]:
    """``NAME=PATH`` or ``PATH`` (a run folder holding odin_metrics.json, or the file) -> {name: file}, each spec
    read by :func:`omniaudit.specs.parse_named_file` (an existing path always wins, ``=`` and all).

    An unnamed run is named ``lambda=<lambda_dec>`` from its file, else by its folder; two runs with one name are an
    error asking for NAME=PATH.
    """
    from omniaudit.specs import parse_named_file

    runs: dict[str, Path] = {}
    for spec in specs:
        text = str(spec)
        name, path, named = parse_named_file(spec, folders=True, what="PATH",  # the one rule: omniaudit.specs
                                             noun=f"ODIN run (a folder holding {METRICS_FILE}, or the file)")
        file = path / METRICS_FILE if path.is_dir() else path
        if not file.is_file():
            raise InputError(f"no {METRICS_FILE} here (expected a reward_odin.py output folder or the file)",
                             file=path)
        if not named:
            lam = _load(file).get("lambda_dec")
            name = f"lambda={lam:g}" if isinstance(lam, int | float) else file.parent.name
        if not name:
            raise InputError("expected a run as NAME=PATH or PATH", value=text)
        if name in runs:
            raise InputError(f"two runs would both be '{name}' ({runs[name]} and {file}); name them with NAME=PATH, "
                             "e.g. lambda0=RUN0 lambda1=RUN1", file=file)
        runs[name] = file
    if not runs:
        raise InputError("no ODIN run given")
    return runs


def _load(file: Path) -> dict:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read: {type(exc).__name__}: {exc}", file=file) from exc
    if not isinstance(data, dict):
        raise InputError("expected a JSON object (odin_metrics.json of training/reward_odin.py)", file=file)
    return data


def run_correlations(file: Path) -> dict:
    """Per-fold |rho| and their mean +- SD for one run's odin_metrics.json."""
    data = _load(file)
    folds = data.get("folds")
    if not isinstance(folds, dict) or not folds:
        raise InputError("expected per-fold metrics under 'folds' (odin_metrics.json of training/reward_odin.py)",
                         file=file, column="folds")
    keys = [k for k in CORRELATIONS if any(isinstance(f, dict) and k in f for f in folds.values())]
    keys += sorted({k for f in folds.values() if isinstance(f, dict) for k in f
                    if k.startswith("rho_") and k not in CORRELATIONS})
    if not keys:
        raise InputError("no rho_* correlation in any fold", file=file, column="folds")
    out = {}
    for key in keys:
        values = {}
        for fold, metrics in folds.items():
            value = metrics.get(key) if isinstance(metrics, dict) else None
            if value is None:
                continue
            if not isinstance(value, int | float) or not np.isfinite(value) or abs(value) > 1 + 1e-9:
                raise InputError("expected a correlation in [-1, 1]", file=file, column=f"folds.{fold}.{key}",
                                 value=value)
            values[str(fold)] = abs(float(value))
        out[key] = {"folds": values, "n_folds": len(values), **mean_sd(np.array(list(values.values())))}
    return {"file": str(file), "lambda_dec": data.get("lambda_dec"), "lambda_orth": data.get("lambda_orth"),
            "content_accuracy": data.get("content_accuracy"), "correlations": out}


def odin_correlations(runs: Sequence[str | Path] | dict[str, Path]) -> dict:
    """Fig. 2a numbers for every run: ``{"runs": {name: run_correlations(...)}, "statistic": ...}``."""
    files = runs if isinstance(runs, dict) else parse_runs(runs)
    return {"statistic": "mean |rho| +- sample SD (ddof=1) across folds; per-fold |rho| kept",
            "runs": {name: run_correlations(Path(f)) for name, f in files.items()}}


def plot_odin_correlations(result: dict, path: Path) -> Path:
    """Grouped bars: one group per correlation, one bar per run, error bars one SD across folds."""
    from omniaudit.evaluation.report import plt, save_figure

    runs = result["runs"]
    keys = [k for k in CORRELATIONS if any(k in r["correlations"] for r in runs.values())]
    keys += sorted({k for r in runs.values() for k in r["correlations"] if k not in keys})
    width = 0.8 / len(runs)
    fig, ax = plt.subplots(figsize=(1.6 * len(keys) + 2.4, 3.8), dpi=120)
    for j, (name, run) in enumerate(runs.items()):
        xs = [i for i, k in enumerate(keys) if k in run["correlations"]]
        stats = [run["correlations"][keys[i]] for i in xs]
        ax.bar(np.array(xs) + (j - (len(runs) - 1) / 2) * width, [s["mean"] for s in stats], width,
               yerr=[s["sd"] for s in stats], capsize=3, label=name)
    ax.set_xticks(range(len(keys)), [CORRELATIONS.get(k, k) for k in keys])
    ax.axhline(0.1, ls=":", color="grey", lw=1)
    ax.set(ylabel="mean |rho| across folds", ylim=(0, 1), title="Head-confound correlations (error bars: 1 SD)")
    ax.legend(fontsize=8)
    save_figure(fig, path)
    return path


def odin_section(result: dict, figure: str | None = None) -> list[str]:
    """Markdown lines: the Fig. 2a table (mean |rho| +- SD, folds) and the per-fold values."""
    from omniaudit.evaluation.report import markdown_table

    runs = result["runs"]
    keys = [k for k in CORRELATIONS if any(k in r["correlations"] for r in runs.values())]
    keys += sorted({k for r in runs.values() for k in r["correlations"] if k not in keys})
    rows = []
    for name, run in runs.items():
        cells = [f"{c['mean']:.3f} ± {c['sd']:.3f} ({c['n_folds']})" if (c := run["correlations"].get(k)) else "—"
                 for k in keys]
        rows.append([name, *cells])
    folds = [[name, CORRELATIONS.get(k, k), ", ".join(f"{f}: {v:.3f}" for f, v in c["folds"].items())]
             for name, run in runs.items() for k, c in run["correlations"].items()]
    out = ["## ODIN head-confound correlations (Fig. 2a)", "",
           "Mean |Pearson rho| across held-out folds ± one SD (number of folds), over both candidates of every "
           "held-out pair. Decorrelation should push r_C's correlations with length and prior below 0.1 while the "
           "length and prior heads absorb them.", "",
           markdown_table(["Run", *[CORRELATIONS.get(k, k) for k in keys]], rows), ""]
    if figure:
        out += [f"![ODIN head-confound correlations]({figure})", ""]
    out += ["Per-fold |rho|:", "", markdown_table(["Run", "Correlation", "Folds"], folds, "lll"), ""]
    return out


def run_odin_report(out_dir: str | Path, runs: Sequence[str | Path]) -> Path:
    """Write ``odin.json``, ``report.md`` and ``fig2a_odin_correlations.png`` (atomically)."""
    from omniaudit.io import atomic_dir, to_json

    result = odin_correlations(runs)
    figure = "fig2a_odin_correlations.png"
    with atomic_dir(out_dir) as tmp:
        plot_odin_correlations(result, tmp / figure)
        (tmp / "odin.json").write_text(to_json(result), encoding="utf-8")
        lines = ["# ODIN decorrelation diagnostic", "",
                 "Runs: " + ", ".join(f"`{n}` ({r['file']})" for n, r in result["runs"].items()) + ".", "",
                 *odin_section(result, figure)]
        (tmp / "report.md").write_text("\n".join(lines), encoding="utf-8")
    return Path(out_dir)
