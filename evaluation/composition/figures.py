"""Tables and figures for C3PO's routing and failure figures, written into the audit folder.

- Fig. 5 (attention profiles): per model, the per-layer attention share ``alpha`` of text, audio and image and the
  per-layer entropy ``H`` (all samples, and split by the model's own correctness) against relative depth
  (layer / (L - 1)), with the depth of the mean entropy's minimum (where the model commits). Tables:
  ``attention_layers.csv`` (one row per model, probed sample and layer) and ``attention_depth_profile.csv`` (per
  model and layer, the means over samples; an alpha is averaged over the samples that hold the modality). Figure:
  ``attention_depth_profile.png``.
- Fig. 9 (CC - IC attention gap by tier): ``attention_delta_alpha.csv`` (per model, tier and modality: mean alpha
  under CC and IC, their difference, counts; alpha averaged over layers per sample, as ``routing_tables``) and
  ``attention_delta_alpha.png``.
- Fig. 6 (dominance vs incomplete fusion): ``failure_decomposition.csv`` (per model and the combined cohort, each
  classified mode's share and count base) and ``failure_decomposition.png`` (stacked shares per model).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.evaluation.composition.attention import MODALITIES
from omniaudit.evaluation.composition.failure_modes import CLASSIFIED

COLOURS = {"text": "#4c72b0", "audio": "#dd8452", "image": "#55a868"}


def layer_rows(model: str, sample: dict, result: dict, correct: bool) -> list[dict]:
    """One row per layer of one probed sample (``AttentionProbe.sample``'s result): alpha per modality (NaN for a
    modality the sample lacks), entropy, layer and relative depth."""
    alpha, h = np.asarray(result["alpha"], float), np.asarray(result["entropy"], float)
    present = set(result["modalities"].split("+"))
    n = len(h)
    return [{"model": model, "id": sample["id"], "category": sample["category"], "tier": int(sample["tier"]),
             "modalities": result["modalities"], "correct": bool(correct), "layer": k,
             "relative_depth": k / max(n - 1, 1),
             **{f"alpha_{m}": float(alpha[k, j]) if m in present else np.nan for j, m in enumerate(MODALITIES)},
             "entropy": float(h[k])} for k in range(n)]


def depth_profile(layers: pd.DataFrame) -> pd.DataFrame:
    """Per model and layer: mean alpha per modality (over the samples holding it), mean entropy overall and over the
    correct / incorrect samples, and the sample count."""
    rows = []
    for (model, layer), g in layers.groupby(["model", "layer"], sort=False):
        ok = g["correct"].astype(bool)
        rows.append({"model": model, "layer": int(layer), "relative_depth": float(g["relative_depth"].iloc[0]),
                     **{f"alpha_{m}": float(g[f"alpha_{m}"].mean()) if g[f"alpha_{m}"].notna().any() else np.nan
                        for m in MODALITIES},
                     "entropy": float(g["entropy"].mean()),
                     "entropy_correct": float(g.loc[ok, "entropy"].mean()) if ok.any() else np.nan,
                     "entropy_incorrect": float(g.loc[~ok, "entropy"].mean()) if (~ok).any() else np.nan,
                     "n_samples": int(g["id"].nunique())})
    return pd.DataFrame(rows)


def delta_alpha(per_sample: pd.DataFrame) -> pd.DataFrame:
    """Per model, tier and modality: mean alpha (layer-averaged, per sample) under CC and IC and CC - IC."""
    rows = []
    for (model, tier), g in per_sample.groupby(["model", "tier"], sort=False):
        for m in MODALITIES:
            cc = g.loc[g["category"] == "CC", f"alpha_{m}"].dropna()
            ic = g.loc[g["category"] == "IC", f"alpha_{m}"].dropna()
            a_cc = float(cc.mean()) if len(cc) else np.nan
            a_ic = float(ic.mean()) if len(ic) else np.nan
            rows.append({"model": model, "tier": int(tier), "modality": m, "alpha_cc": a_cc, "alpha_ic": a_ic,
                         "delta_cc_minus_ic": a_cc - a_ic, "n_cc": len(cc), "n_ic": len(ic)})
    return pd.DataFrame(rows)


def decomposition_table(decomposition: dict) -> pd.DataFrame:
    """Each model's (and the combined cohort's) share of every classified failure mode."""
    entries = [(m, v["overall"]) for m, v in decomposition["models"].items()]
    entries.append(("combined", decomposition["combined"]["overall"]))
    return pd.DataFrame([{"model": m, "mode": mode, "share": e["shares"][mode], "n_classified": e["n_classified"],
                          "dominance_share": e["dominance_share"]} for m, e in entries for mode in CLASSIFIED])


def _profile_figure(profile: pd.DataFrame, path: Path) -> None:
    from omniaudit.evaluation.report import plt, save_figure

    models = list(dict.fromkeys(profile["model"]))
    fig, axes = plt.subplots(2, len(models), figsize=(3.6 * len(models) + 1.6, 5.6), dpi=120, squeeze=False,
                             sharex=True)
    for j, model in enumerate(models):
        p = profile[profile["model"] == model].sort_values("layer")
        top, bottom = axes[0, j], axes[1, j]
        for m in MODALITIES:
            if p[f"alpha_{m}"].notna().any():
                top.plot(p["relative_depth"], p[f"alpha_{m}"], marker=".", label=m, color=COLOURS[m])
        top.set(title=Path(model).name, ylim=(0, 1), ylabel="alpha (attention share)" if j == 0 else None)
        bottom.plot(p["relative_depth"], p["entropy"], color="black", label="all")
        bottom.plot(p["relative_depth"], p["entropy_correct"], color="#2a9d8f", ls="--", label="correct")
        bottom.plot(p["relative_depth"], p["entropy_incorrect"], color="#e76f51", ls=":", label="incorrect")
        commit = float(p["relative_depth"].iloc[int(np.argmin(p["entropy"].to_numpy()))])
        for ax in (top, bottom):
            ax.axvline(commit, color="grey", lw=0.8, ls="--")
        bottom.set(xlabel="relative depth", ylabel="H (bits)" if j == 0 else None)
    axes[0, 0].legend(fontsize=7)
    axes[1, 0].legend(fontsize=7)
    fig.suptitle("Per-layer attention over modalities (dashed: entropy minimum)", fontsize=9)
    save_figure(fig, path)


def _delta_figure(delta: pd.DataFrame, path: Path) -> None:
    from omniaudit.evaluation.report import plt, save_figure

    models = list(dict.fromkeys(delta["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(3.6 * len(models) + 1.6, 3.4), dpi=120, squeeze=False)
    for j, model in enumerate(models):
        d, ax = delta[delta["model"] == model], axes[0, j]
        tiers = sorted(d["tier"].unique())
        for k, m in enumerate(MODALITIES):
            values = [d.loc[(d["tier"] == t) & (d["modality"] == m), "delta_cc_minus_ic"].iloc[0] for t in tiers]
            ax.bar(np.arange(len(tiers)) + (k - 1) * 0.27, values, width=0.27, label=m, color=COLOURS[m])
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(range(len(tiers)), [f"T{t}" for t in tiers])
        ax.set(title=Path(model).name, ylabel="alpha(CC) - alpha(IC)" if j == 0 else None)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("CC - IC attention share by tier", fontsize=9)
    save_figure(fig, path)


def _decomposition_figure(table: pd.DataFrame, path: Path) -> None:
    from omniaudit.evaluation.report import plt, save_figure

    models = list(dict.fromkeys(table["model"]))
    fig, ax = plt.subplots(figsize=(8.4, 0.45 * len(models) + 1.6), dpi=120)
    left = np.zeros(len(models))
    palette = ["#4c72b0", "#dd8452", "#55a868", "#8172b3", "#c44e52"]
    for mode, colour in zip(CLASSIFIED, palette, strict=True):
        shares = np.array([table.loc[(table["model"] == m) & (table["mode"] == mode), "share"].astype(float)
                           .fillna(0.0).iloc[0] for m in models])
        ax.barh(range(len(models)), 100 * shares, left=left, color=colour, label=mode.replace("_", " "))
        left += 100 * shares
    ax.set_yticks(range(len(models)), [Path(m).name for m in models])
    ax.set(xlim=(0, 100), xlabel="share of classified failures (%)", title="Dominance vs incomplete fusion")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    save_figure(fig, path)


def write_attention_tables(folder: Path, layers: pd.DataFrame, per_sample: pd.DataFrame) -> list[str]:
    """The Fig. 5 and Fig. 9 tables and figures into ``folder``; returns the file names written."""
    profile, delta = depth_profile(layers), delta_alpha(per_sample)
    layers.to_csv(folder / "attention_layers.csv", index=False)
    profile.to_csv(folder / "attention_depth_profile.csv", index=False)
    delta.to_csv(folder / "attention_delta_alpha.csv", index=False)
    _profile_figure(profile, folder / "attention_depth_profile.png")
    _delta_figure(delta, folder / "attention_delta_alpha.png")
    return ["attention_layers.csv", "attention_depth_profile.csv", "attention_delta_alpha.csv",
            "attention_depth_profile.png", "attention_delta_alpha.png"]


def write_decomposition(folder: Path, decomposition: dict) -> str | None:
    """``failure_decomposition.csv`` always; ``failure_decomposition.png`` when a model has a classified failure
    (returned, else None)."""
    table = decomposition_table(decomposition)
    table.to_csv(folder / "failure_decomposition.csv", index=False)
    if not table["share"].notna().any():
        return None
    _decomposition_figure(table, folder / "failure_decomposition.png")
    return "failure_decomposition.png"
