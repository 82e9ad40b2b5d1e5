"""The intervention audit's report: Table 1 layout (with the paper's rows for reference), CIs, failure modes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from omniaudit.evaluation.interventions.failure_modes import FAILURE_MODES
from omniaudit.evaluation.report import fmt, markdown_table, plt, save_figure, shown_path
from omniaudit.predictions import label_sources_sentence

# Thud Table 1: Orig./Shift, Orig./Mute, Orig./Swap, Avg Gap (percent).
PAPER_TABLE1 = {
    "Gemini": (54.9, 46.5, 100.0, 13.4, 93.6, 18.3, 56.8),
    "MiniCPM-o-4.5": (83.8, 13.7, 100.0, 19.0, 95.8, 4.9, 80.7),
    "Nemotron-3-Omni": (35.9, 26.8, 66.2, 4.2, 88.7, 19.9, 46.6),
    "Qwen3-Omni": (100.0, 1.4, 95.1, 0.0, 75.4, 37.3, 77.3),
    "Ming-Omni-2.0": (54.2, 20.1, 95.7, 54.9, 90.1, 15.5, 49.8),
    "MiMo-V2.5": (73.9, 9.9, 99.3, 2.1, 89.4, 15.3, 78.4),
}
DIMENSION_TITLES = {"sync": "Temporal sync", "existence": "Audio existence", "consistency": "Sound consistency"}


def avg_gap(accuracies: tuple[float, ...]) -> float:
    """Eq. 10 from (orig, interv) accuracy pairs in the order sync, existence, consistency."""
    pairs = list(zip(accuracies[0::2], accuracies[1::2], strict=True))
    return sum(o - i for o, i in pairs) / len(pairs)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _ci(value: float | None | dict, ci: list | None = None, digits: int = 1) -> str:
    """``value [lo, hi]``; ``value`` may be a ``{value, ci}`` entry."""
    if isinstance(value, dict):
        value, ci = value["value"], value["ci"]
    lo, hi = ci
    return f"{fmt(value, digits)} [{fmt(lo, digits)}, {fmt(hi, digits)}]"


def plot_failure_modes(rates: dict, cis: dict, path: Path) -> Path:
    """Horizontal bars of the eight failure-mode rates with bootstrap 95% CI whiskers, grouped as in appendix H."""
    names = list(FAILURE_MODES)[::-1]
    groups = list(dict.fromkeys(g for g, _ in FAILURE_MODES.values()))
    colours = dict(zip(groups, ("#C44E52", "#4C72B0", "#8172B2", "#55A868"), strict=True))
    fig, ax = plt.subplots(figsize=(7.0, 4.2), dpi=120)
    for i, n in enumerate(names):
        v, (lo, hi) = rates[n], cis[n]
        if v is None:
            ax.text(0.01, i, "n/a", va="center", fontsize=8)
            continue
        ax.barh(i, v, color=colours[FAILURE_MODES[n][0]], label=FAILURE_MODES[n][0])
        if lo is not None and hi is not None:
            ax.errorbar(v, i, xerr=[[v - lo], [hi - v]], color="black", capsize=3, lw=1)
        right = hi if hi is not None else v
        ax.text(right + 0.01, i, f"{v:.2f}", fontsize=7, va="center")  # zero rates stay readable
    ax.set_yticks(range(len(names)), [n.replace("_", " ") for n in names])
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    ax.legend(list(unique.values())[::-1], list(unique.keys())[::-1], fontsize=8, loc="lower right")
    ax.set(xlim=(0, 1.1), xticks=np.linspace(0, 1, 6), xlabel="rate (higher = more failures)",
           title="Failure modes (95% bootstrap CI)")
    save_figure(fig, path)
    return path


def interventions_report(result: dict, figure: str) -> str:
    dims = result["dimensions"]
    headers = ["Model"] + [f"{DIMENSION_TITLES[d]}: {c}" for d in dims for c in ("Orig.", dims[d]["intervention"]
                                                                                  .capitalize())] + ["Avg Gap"]
    ours = [f"**{result['model']}**"] + [fmt(dims[d][c]) for d in dims for c in ("orig", "interv")]
    ours.append(fmt(result["avg_gap"]))
    rows = [ours] + [[f"{name} (paper)", *(fmt(v) for v in vals)] for name, vals in PAPER_TABLE1.items()]
    out = [
        "# Audio-grounding audit (Shift / Mute / Swap)",
        "",
        f"Model **{result['model']}** on `{shown_path(result['dataset'])}`: {result['n_rows']} diagnostic rows from "
        f"{result['n_source_clips']} source clips. Accuracies in percent. Avg Gap (eq. 10) is the mean drop from "
        "Original to intervention over the three dimensions; large gaps mean the answers follow the pictures, not "
        f"the sound. Free-form answers were read by the {result.get('extractor', 'rule-based')} extractor.",
        "",
        "## Paired diagnostic accuracy (Table 1 layout)",
        "",
        markdown_table(headers, rows),
        "",
        "Paper rows are Thud Table 1, for reference (their clips, not these). A Shift answer counts as correct only "
        "when it says the clip is not synchronized *and* names the right direction (audio delayed vs early), as "
        "Table 1 scores it; the yes/no-only rate is under Temporal detail.",
        "",
        "## With 95% bootstrap CIs (resampling source clips)",
        "",
        markdown_table(["Dimension", "Original", "Intervention", "Gap", "clips"],
                       [[DIMENSION_TITLES[d]] + [_ci(v[c], v["ci"][c]) for c in ("orig", "interv", "gap")]
                        + [v["n_clips"]] for d, v in dims.items()]
                       + [["**Avg Gap**", "", "", _ci(result["avg_gap"], result["avg_gap_ci"]),
                           result["n_source_clips"]]]),
        "",
        *_unpaired_note(dims),
        *_ood_sync_note(result.get("ood_sync")),
        "## Failure modes (appendix H)",
        "",
        markdown_table(["Group", "Failure mode", "Rate [95% CI]", "n", "What it counts"],
                       [[g, n.replace("_", " "), _ci(result["failure_modes"][n], result["failure_modes_ci"][n], 3),
                         result["failure_modes_n"][n], what] for n, (g, what) in FAILURE_MODES.items()],
                       align="llrrl"),
        "",
        f"![Failure modes]({figure})",
        "",
        "## Temporal detail",
        "",
    ]
    sync = dims["sync"]
    tolerance = result["offset_within_tolerance"]["tolerance_s"]
    rows = [["Shift, direction-aware (Table 1)", _ci(sync["interv"], sync["ci"]["interv"]), sync["n"]["interv"],
             "not synchronized and the right direction"],
            ["Shift, yes/no only", _ci(result["shift_yes_no"]), result["shift_yes_no"]["n"],
             "not synchronized, any direction"],
            ["Sync binary (Fig. 6a)", _ci(result["sync_binary_accuracy"]), result["sync_binary_accuracy"]["n"],
             "synchronized vs not, Original + Shift"],
            ["Sync three-way (Fig. 6a)", _ci(result["sync_three_way_accuracy"]),
             result["sync_three_way_accuracy"]["n"], "synchronized / delayed / early, Original + Shift"],
            ["Direction on detected offsets (Fig. 6a)", _ci(result["direction_accuracy"]),
             result["direction_accuracy"]["n"], "right direction among Shift answers flagged not synchronized"],
            [f"Offset within ±{tolerance:g} s (Fig. 6b)", _ci(result["offset_within_tolerance"]),
             result["offset_within_tolerance"]["n"], "stated signed offset close to the true one, all Shift rows"]]
    out += [markdown_table(["Metric", "Accuracy % [95% CI]", "n", "What counts as right"], rows, align="lrrl"), ""]
    bands = result["sync_by_offset"]
    if bands:
        out += [markdown_table(["\\|Δ\\| band (s)", "Shift accuracy, direction-aware [95% CI]", "n"],
                               [[b, _ci(v), v["n"]] for b, v in bands.items()]), ""]
    out += [f"- Offset MAE on detected offsets with a stated offset: {_ci(result['offset_mae'], digits=2)} s "
            f"(n = {result['offset_mae']['n']}).",
            "",
            "## Coverage",
            "",
            "A row without a prediction, or whose answer cannot be parsed, counts as wrong (never dropped).",
            "",
            markdown_table(["Dimension", "answered", "parsed"],
                           [[DIMENSION_TITLES[d], _pct(c["answered"]["value"]), _pct(c["parsed"]["value"])]
                            for d, c in result["coverage"].items()]),
            ""]
    out += label_sources_line(result.get("label_sources"))
    return "\n".join(out)


def _unpaired_note(dims: dict) -> list[str]:
    """Lines for dimensions with rows scored without a pair (sources lacking a condition, e.g. an OOD sync set), and
    for Originals a paired dimension leaves out."""
    out = []
    for d, v in dims.items():
        rows = v.get("rows")
        if v.get("paired") is False:
            counts = (f" ({rows['unpaired']} of {rows['paired'] + rows['unpaired']} rows come from sources without "
                      "both conditions)") if rows else ""
            out.append(f"Unpaired: {DIMENSION_TITLES[d]}{counts}. These accuracies are over all clips of each "
                       "condition, so the gap compares partly different clips; the bootstrap resamples source_id "
                       "clusters (the rows of one source together).")
        elif rows and rows["left_out"]:
            out.append(f"Paired: {DIMENSION_TITLES[d]} leaves out {rows['left_out']} row(s) of sources without both "
                       "conditions (e.g. an Original whose Shifts were all skipped).")
    return [*out, ""] if out else []


def _ood_sync_note(ood: dict | None) -> list[str]:
    """What counts as synchronized in an OOD sync set, as its gold answers apply it."""
    if not ood:
        return []
    bound = ood["in_sync_max_abs_offset_s"]
    rule = ("only clips with a zero offset are synchronized; any nonzero offset is a shift (as the paper scores "
            "VGGSoundSync)") if not bound else (f"clips with |offset| up to {bound:g} s are synchronized (the set "
                                                "was built with an explicit --sync-tolerance; the paper calls any "
                                                "nonzero offset a shift)")
    return [f"OOD sync set: {rule}.", ""]


def label_sources_line(sources: dict | None) -> list[str]:
    """How the answers were read (:func:`~omniaudit.predictions.label_sources_sentence`)."""
    return [f"How the answers were read: {label_sources_sentence(sources)}", ""] if sources else []
