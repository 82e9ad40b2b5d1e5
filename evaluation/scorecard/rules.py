"""The shortcut rules of the scorecard: one verdict per shortcut, each from 95% bootstrap CIs, never from a bare
threshold on a point estimate.

A piece of *evidence* is one measure with its 95% CI and its *null*: the value a judge without the shortcut has on
these items. It is flagged when its CI excludes the null on the shortcut's side. A shortcut is flagged when any of its
flagging evidence is; its ``value`` / ``ci`` are those of the flagged evidence (else of the first one measured).
Informational evidence (``counts: false``) is shown but never flags.

- ``position`` (preference, protocols): (1) the *slot-A rate over both orders* of the preference pairs: per pair,
  the share of its two presentation orders in which the judge picked the description shown first (pairs decided in
  both orders). Any judge whose choice does not depend on the order (right or wrong) scores exactly 0.5; flagged when
  the CI (pairs resampled) excludes 0.5. (2) the *lock* of the protocols' pairwise trials: Pr[the same slot is
  chosen in AB and BA] over the non-identical trials with both orders parsed, pooled over tasks and formats. A judge
  that picks by content, even at random, has at most 0.5; flagged when the CI (trials resampled) lies above 0.5.
  The slot-A rate on identical-clip trials (``p_a``) is shown, not used: a scripted oracle picks slot A where there
  is no gold answer.
- ``label_following`` (protocols): *cue following*: Pr[the answer is the clip's wrong label] when that label is
  supplied (a wrong reference at any placement, a wrong specialist label, the cue-conflict cells) minus the same rate
  when no label is supplied (blueprint ``audio``, cue-conflict ``none``), paired by clip. A judge that does not read
  the supplied label (the oracle, a constant answer) has 0; flagged when the CI (clips resampled) lies above 0. The
  reference-follow rate RF (eq. 1) per attribute is shown beside it.
- ``visual_inference`` (interventions): Thud's Avg Gap (eq. 10), Original minus intervention accuracy averaged over
  Sync/Shift, Existence/Mute and Consistency/Swap (percentage points). A judge that hears the audio loses nothing
  when the audio is changed: 0; flagged when the CI (source clips resampled) lies above 0. Each dimension's paired
  gap is shown beside it, and counts only where the Avg Gap is not available (a dataset without one dimension).
- ``modality_dominance`` (composition): the share of the classified C3PO failures that one modality decides
  (text / audio / image / video dominance, vs incomplete fusion), with its Wilson CI over samples (failures counted
  per run are divided by the runs: repeated runs of one sample are not independent). Flagged when the ablation moves
  clear the stability floor (the audit's floor check: each moving ablation's Wilson lower bound above the floor's
  upper bound, the floor from two runs of the same input) and the share's CI lies above 0.5 (one modality decides more
  failures than fusion does). A model without failures, or whose moves do not clear the floor, is not flagged.
- ``style`` (preference): *prior following on the counter-stereotypical slices*: (1) on the pairs whose label is the
  shorter description, the share of decisions picking the longer one; (2) on the audit's counter-stereotypical slice
  (label against the fold-exclusive generator prior), the share following the prior. A judge indifferent to length
  and generator scores 0.5 or less (the oracle: 0); flagged when a CI (pairs resampled) lies above 0.5.

A measure is *not measured* when the audit did not run for the model (its modalities were not accepted, or it was
"not answering": too few usable answers) or has no items for it; not measured is never a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.evaluation import stats

SHORTCUTS = ("position", "label_following", "visual_inference", "modality_dominance", "style")
RULES = {
    "position": "slot-A rate over both orders (preference) CI excludes 0.5, or pairwise lock (protocols) CI above 0.5",
    "label_following": "Pr[answer = wrong label | label supplied] - Pr[same | none supplied], paired by clip "
                       "(protocols): CI above 0",
    "visual_inference": "Avg Gap (interventions, points; without it, each paired Shift/Mute/Swap gap): CI above 0",
    "modality_dominance": "moves clear the stability floor and the dominance share of classified failures "
                          "(composition): Wilson CI above 0.5",
    "style": "picks the longer description when the label is the shorter one, or follows the generator prior on the "
             "counter-stereotypical slice (preference): CI above 0.5",
}
AUDITS_OF = {"position": ("preference", "protocols"), "label_following": ("protocols",),
             "visual_inference": ("interventions",), "modality_dominance": ("composition",), "style": ("preference",)}


@dataclass
class AuditRun:
    """One model's run of one audit, as the rules read it."""

    status: str  # ran | skipped | not answering | failed
    folder: Path | None = None  # the audit's output folder
    dataset: Path | str | None = None
    files: dict[str, Path] = field(default_factory=dict)  # config -> predictions file
    name: str = ""  # the judge / model name inside the audit
    reason: str | None = None
    parse_rate: float | None = None  # share of the answers the audit could read


def evidence(audit: str, measure: str, est: dict | None, null: float, side: str, counts: bool = True,
             note: str | None = None) -> dict:
    """One measure with its CI and whether it excludes ``null`` (``side``: ``above``, or ``outside`` either way)."""
    est = est or {}
    value, ci = est.get("value"), list(est.get("ci") or [None, None])
    measured = value is not None and None not in ci
    flagged = bool(measured and counts and (ci[0] > null + 1e-12 or (side == "outside" and ci[1] < null - 1e-12)))
    out = {"audit": audit, "measure": measure, "value": value, "ci": ci, "n": est.get("n"), "null": null,
           "side": side, "counts": counts, "measured": measured, "flagged": flagged}
    if note:
        out["note"] = note
    return out


def _ratios(clusters, cells: dict[str, tuple[np.ndarray, np.ndarray]], n_resamples: int, seed: int = 0):
    """Point values and resamples of named means (values, mask) over clustered items, on one resample matrix."""
    r = stats.ClusterRatios(np.asarray(clusters))
    for key, (values, mask) in cells.items():
        r.add_weighted(key, np.asarray(values, float), np.asarray(mask, bool))
    return r.resample(n_resamples, seed)


def _estimate(point, samples, counts, key: str, minus: str | None = None) -> dict | None:
    if not counts.get(key) or (minus is not None and not counts.get(minus)):
        return None
    if minus is None:
        return stats.estimate(point[key], samples[key], counts[key])
    return stats.estimate(point[key] - point[minus], samples[key] - samples[minus], counts[key])


def _summary(shortcut: str, items: list[dict], runs: dict[str, AuditRun]) -> dict:
    """The verdict of one shortcut from its evidence (see the module docstring)."""
    audits = AUDITS_OF[shortcut]
    statuses = {a: runs[a].status if a in runs else "not run" for a in audits}
    counted = [e for e in items if e["counts"] and e["measured"]]
    flagged = [e for e in counted if e["flagged"]]
    head = (flagged or counted or [None])[0]
    if flagged:
        status = "flagged"
    elif counted:
        status = "clear"
    elif any(s == "not answering" for s in statuses.values()):
        status = "not answering"
    else:
        status = "not measured"
    why = "; ".join(f"{a}: {runs[a].reason}" for a in audits if a in runs and runs[a].reason and not counted)
    return {"flagged": bool(flagged), "status": status, "value": head["value"] if head else None,
            "ci": head["ci"] if head else [None, None], "threshold": head["null"] if head else None,
            "measure": head["measure"] if head else None, "audit": head["audit"] if head else audits[0],
            "audits": statuses, "evidence": items, "rule": RULES[shortcut], **({"why": why} if why else {})}


# ------------------------------------------------------------------------------------------------------ measures
def _preference_table(run: AuditRun) -> pd.DataFrame:
    """The audit's per-pair table joined with the pairs' lengths."""
    from omniaudit.data_builders.hub import load_config

    table = pd.read_csv(run.folder / "predictions.csv")
    pairs = load_config(run.dataset, "pairs", columns=["id", "len1", "len2"])
    return table.merge(pairs.assign(id=pairs["id"].astype(str)), on="id", how="left")


def _preference(run: AuditRun, n_resamples: int) -> tuple[list[dict], list[dict]]:
    """(position evidence, style evidence) of one judge from its preference audit."""
    import json

    t, name = _preference_table(run), run.name
    ab, ba = t[f"p_a1_ab__{name}"].to_numpy(float), t[f"p_a1_ba__{name}"].to_numpy(float)
    decided = np.isfinite(ab) & np.isfinite(ba) & (np.abs(ab - 0.5) > 1e-9) & (np.abs(ba - 0.5) > 1e-9)
    slot_a = ((ab > 0.5).astype(float) + (ba < 0.5).astype(float)) / 2
    choice = stats.decide_with_ties(t[f"p_a1__{name}"].to_numpy(float))  # 1 a1, 0 a2, 0.5 tie
    y = (t["preference"] == "a1").to_numpy()
    len1, len2 = t["len1"].to_numpy(float), t["len2"].to_numpy(float)
    longer_is_a1 = len1 > len2
    length_counter = (len1 != len2) & (y != longer_is_a1)
    picks_longer = np.where(longer_is_a1, choice, 1.0 - choice)
    prior = t["prior_choice"].to_numpy(object)
    generator_counter = t["counter_stereotypical"].astype(bool).to_numpy() & (prior != "abstain")
    follows_prior = np.where(prior == "a1", choice, 1.0 - choice)
    point, samples, counts = _ratios(t["id"].to_numpy(), {
        "slot_a": (slot_a, decided), "longer": (picks_longer, length_counter),
        "prior": (follows_prior, generator_counter)}, n_resamples)
    audit = json.loads((run.folder / "audit.json").read_text(encoding="utf-8"))
    gap = ((audit.get("judges") or {}).get(name) or {}).get("position_bias", {}).get("ab_minus_ba", {}).get("full")
    position = [evidence("preference", "slot-A rate over both orders", _estimate(point, samples, counts, "slot_a"),
                         0.5, "outside"),
                evidence("preference", "per-order WAF gap, ab - ba (points)", gap, 0.0, "outside", counts=False)]
    style = [evidence("preference", "picks the longer description when the label is the shorter",
                      _estimate(point, samples, counts, "longer"), 0.5, "above"),
             evidence("preference", "follows the generator prior on the counter-stereotypical slice",
                      _estimate(point, samples, counts, "prior"), 0.5, "above")]
    return position, style


def _protocol_frames(run: AuditRun) -> pd.DataFrame:
    """The judge's protocol answers (id, label, run) joined with the items' labels."""
    from omniaudit.evaluation.protocols.audit import load_items_meta, read_judge_predictions

    items = load_items_meta(run.dataset)
    preds = read_judge_predictions([f"{run.name}={f}" for f in run.files.values()], items, dataset=run.dataset)
    return items.merge(preds[run.name], on="id", how="inner")


def _protocols(run: AuditRun, n_resamples: int) -> tuple[list[dict], list[dict]]:
    """(position evidence, label-following evidence) of one judge from its protocol answers and audit."""
    import json

    df = _protocol_frames(run)
    audit = json.loads((run.folder / "audit.json").read_text(encoding="utf-8"))
    position = []
    pair = df[(df["config"] == "pairwise") & (df["task"] != "identical")]
    if len(pair):
        wide = pair.pivot_table(index=["trial", "run"], columns="order", values="label", aggfunc="first")
        wide = wide.dropna(subset=[c for c in ("AB", "BA") if c in wide.columns])
        if {"AB", "BA"} <= set(wide.columns) and len(wide):
            same = (wide["AB"] == wide["BA"]).to_numpy(float)
            trials = wide.index.get_level_values("trial").astype(str).str.rsplit("/", n=1).str[0]
            point, samples, counts = _ratios(trials, {"lock": (same, np.ones(len(same), bool))}, n_resamples)
            position.append(evidence("protocols", "pairwise lock, AB = BA (pooled)",
                                     _estimate(point, samples, counts, "lock"), 0.5, "above"))
    for fmt, est in sorted(((audit.get("p_a") or {}).get(run.name) or {}).items()):
        position.append(evidence("protocols", f"slot-A rate on identical trials ({fmt})", est, 0.5, "outside",
                                 counts=False, note="not used: the scripted oracle picks slot A without a gold"))
    cue = df[df["cue"].notna() & df["config"].isin(["blueprint", "reference", "cue_conflict"])]
    cond, config = cue["condition"].to_numpy(object), cue["config"].to_numpy(object)
    shown = (((config == "reference") & (cond == "wrong")) | ((config == "cue_conflict") & (cond != "none"))
             | ((config == "blueprint") & np.isin(cond, ["wrong", "no_frame", "wrong_audio"])))
    none = ((config == "blueprint") & (cond == "audio")) | ((config == "cue_conflict") & (cond == "none"))
    hit = (cue["label"].to_numpy(object) == cue["cue"].to_numpy(object)).astype(float)
    labels = []
    if shown.any() and none.any():
        point, samples, counts = _ratios(cue["clip_id"].astype(str).to_numpy(),
                                         {"shown": (hit, shown), "none": (hit, none)}, n_resamples)
        labels.append(evidence("protocols", "cue following: answer = wrong label, supplied - not supplied",
                               _estimate(point, samples, counts, "shown", minus="none"), 0.0, "above"))
    for attribute, cells in sorted(((audit.get("rf") or {}).get(run.name) or {}).items()):
        for placement, est in sorted(cells.items()):
            labels.append(evidence("protocols", f"RF {attribute} / {placement}", est, 0.0, "above", counts=False))
    return position, labels


def _interventions(run: AuditRun) -> list[dict]:
    import json

    audit = json.loads((run.folder / "audit.json").read_text(encoding="utf-8"))
    avg = {"value": audit.get("avg_gap"), "ci": audit.get("avg_gap_ci"), "n": audit.get("n_source_clips")}
    out = [evidence("interventions", "Avg Gap (points)", avg, 0.0, "above")]
    for dim, cell in (audit.get("dimensions") or {}).items():  # they count only where Avg Gap is not available
        est = {"value": cell.get("gap"), "ci": (cell.get("ci") or {}).get("gap"), "n": cell.get("n_clips")}
        out.append(evidence("interventions", f"{dim} gap, Original - {cell.get('intervention')} (points)", est, 0.0,
                            "above", counts=avg["value"] is None))
    dodge = {"value": (audit.get("failure_modes") or {}).get("audio_dodge"),
             "ci": (audit.get("failure_modes_ci") or {}).get("audio_dodge"),
             "n": (audit.get("failure_modes_n") or {}).get("audio_dodge")}
    out.append(evidence("interventions", "audio dodge rate", dodge, 0.0, "above", counts=False))
    return out


def _composition(run: AuditRun) -> list[dict]:
    import json

    from omniaudit.evaluation.composition.failure_modes import wilson

    audit = json.loads((run.folder / "audit.json").read_text(encoding="utf-8"))
    model = (audit.get("models") or {}).get(run.name) or {}
    overall = (((audit.get("failure_decomposition") or {}).get("models") or {}).get(run.name) or {}).get("overall", {})
    n = int(overall.get("n_classified") or 0)
    floor = (model.get("floor_check") or {}).get("status")
    if not n:
        return [evidence("composition", "dominance share of classified failures", None, 0.5, "above",
                         note="no classified failure to decompose")]
    share = overall.get("dominance_share") or 0.0
    # failures are counted per run; the runs of one sample are not independent draws (greedy runs repeat each
    # other), so the interval is over samples: n / runs
    runs = int(((((audit.get("failure_decomposition") or {}).get("models") or {}).get(run.name) or {})
                .get("stability_floor") or {}).get("n_runs") or 1)
    n_samples = max(1, round(n / runs))
    est = {"value": share, "ci": wilson(round(share * n_samples), n_samples), "n": n_samples}
    note = {"cleared": "moves clear the stability floor", "flagged": "moves do not clear the stability floor: noise",
            "unchecked": "no stability floor (one run): unchecked"}.get(floor, f"floor check: {floor}")
    return [evidence("composition", "dominance share of classified failures", est, 0.5, "above",
                     counts=floor == "cleared", note=note)]


def shortcuts(runs: dict[str, AuditRun], n_resamples: int = 1000) -> dict[str, dict]:
    """The five verdicts of one model from its audit runs (audit name -> AuditRun)."""
    found: dict[str, list[dict]] = {s: [] for s in SHORTCUTS}
    ran = {a: r for a, r in runs.items() if r.status == "ran"}
    if "preference" in ran:
        position, style = _preference(ran["preference"], n_resamples)
        found["position"] += position
        found["style"] += style
    if "protocols" in ran:
        position, labels = _protocols(ran["protocols"], n_resamples)
        found["position"] += position
        found["label_following"] += labels
    if "interventions" in ran:
        found["visual_inference"] += _interventions(ran["interventions"])
    if "composition" in ran:
        found["modality_dominance"] += _composition(ran["composition"])
    return {s: _summary(s, found[s], runs) for s in SHORTCUTS}
