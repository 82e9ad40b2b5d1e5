"""The scorecard's measures and verdicts: each shortcut of the table (:mod:`omniaudit.shortcuts`) tested by matched
contrasts on the audits' answers, against nulls computed on the same items, inside one family-wise control per
model (the statistics: :mod:`.inference`).

Measures (a content-blind model's value, the *null*, is computed per item; ``k``: the item's options):

- ``position``: (1) *slot-A rate over both orders* (preference): per pair decided in both orders, the share of its
  two orders in which the judge picked the description shown first; any judge whose choice does not depend on the
  order has 0.5 (null 0.5, two-sided; clusters: pairs). (2) *lock* (protocols pairwise, per format ``concat`` /
  ``native``: the protocols paper finds the lock on one format): Pr[the same slot in AB and BA] over non-identical
  trials with both orders answered; a uniform guess has 0.5, any judge choosing by content less (null 0.5, above;
  clusters: trials). (3) *pairwise slot-A rate over both orders*, per format: as (1) on the pairwise trials, so a
  judge locked to one slot on a share q of its trials reads 0.5 + q/2 whatever it does on the rest (the lock of a
  judge locked on half its trials and right on the others is 0.5, its null's value; null 0.5, two-sided).
- ``label_following`` (protocols, pooled and per protocol, two-sided): how far answers follow the clip's wrong label
  beyond the errors' spread over the wrong options (:func:`cue_values`: the share of items copying it) on items that
  supply it, minus on items of the same clip with the *same media* that do not (blueprint: ``wrong_audio`` vs
  ``audio`` with the clip, ``wrong`` / ``no_frame`` vs ``descriptors`` without it; reference: ``wrong`` at every
  placement vs the clip's no-label audio items; cue-conflict: the ``conf_*`` cells vs the same; the clip's no-label
  audio items are blueprint ``audio`` and cue-conflict ``none``, one prompt and one clip). A model that does not
  read the label, however it answers with or without audio, has 0; so has one whose accuracy a label lowers but
  whose errors do not prefer it (distraction is not following: Pr[answer = label] alone read it as following);
  below 0 it avoids the label. Clusters: clips.
- ``visual_inference`` (interventions): Thud's Avg Gap (eq. 10) recomputed from the audit's ``scored.csv``: mean over
  Sync, Existence, Consistency of Original minus Shift / Mute / Swap accuracy (points, paired rows); and each
  dimension's gap on its own (its minimum effect 30 points, below every Existence and Consistency gap of Thud's
  Table 1: an average can cancel a gap in one dimension with an over-correction in another, or dilute it). A
  uniform guess over each dimension's answers (synchronized / delayed / early; sound / muted; match / mismatch) is
  right as often on an Original as on its intervention: null 0. Clusters: source clips.
- ``modality_dominance`` (composition): per sample, the share of its classified failed runs that one modality decides,
  minus the chance a content-blind model's failure on that very sample is so classified (the audit's
  ``dominance_test``: shared inputs and answer vocabularies make chance agreement look like "not moved"). Counted only
  where the ablation moves clear the stability floor. Clusters: samples (runs of one sample are one unit, and so are
  samples with byte-identical inputs: one input answered once, counted apart it read as independent evidence).
- ``style`` (preference): on pairs whose label is the shorter description, the share of decisions picking the longer
  one; on the counter-stereotypical slice, the share following the generator prior (null 0.5, above).

Informational evidence (the audits' own figures: per-order WAF gap, RF per placement, audio dodge, identical-trial
slot-A) is shown beside them and never flags. A measure is *not measured* when its audit did not run for the model
(modalities not accepted, "not answering") or has no items or fewer than two clusters for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from omniaudit.evaluation import stats
from omniaudit.evaluation.scorecard.inference import ALPHA, Contrast, arm, contrast, decide, mde
from omniaudit.results import AuditRun
from omniaudit.shortcuts import BY_NAME, SHORTCUTS, MeasureSpec

__all__ = ["AuditRun", "Tested", "decide_family", "measures", "shortcuts", "shown"]
HALF, HALF_VAR = 0.5, 0.25  # a uniform pick of two: its mean and variance
PAIR_VAR = 0.125  # the mean of two independent uniform picks of two (a pair's two orders)
STATUSES = ("flagged", "clear", "inconclusive", "not answering", "not measured")


@dataclass
class Tested:
    """One counted measure of one stratum before the family decides: its spec, the contrast (None: not
    measurable), and why it may not count."""

    spec: MeasureSpec
    stratum: str
    contrast: Contrast | None
    counts: bool = True
    note: str | None = None
    direction: str | None = None  # which way a one-sided measure leans, where it can ("audio" for dominance)


def shown(audit: str, measure: str, est: dict | None, null: float, side: str, note: str | None = None) -> dict:
    """Informational evidence (an audit's own figure and CI): shown beside the measures, never flags."""
    est = est or {}
    value, ci = est.get("value"), list(est.get("ci") or [None, None])
    out = {"audit": audit, "measure": measure, "value": value, "ci": ci, "n": est.get("n"), "null": null,
           "side": side, "counts": False, "measured": value is not None and None not in ci, "flagged": False,
           "verdict": None}
    if note:
        out["note"] = note
    return out


# ------------------------------------------------------------------------------------------------------ measures
def preference_table(run: AuditRun) -> pd.DataFrame:
    """The preference audit's per-pair table (``predictions.csv``) joined with the pairs' lengths."""
    from omniaudit.data_builders.hub import load_config

    t = pd.read_csv(cast(Path, run.folder) / "predictions.csv")
    pairs = load_config(run.dataset, "pairs", columns=["id", "len1", "len2"])
    return t.merge(pairs.assign(id=pairs["id"].astype(str)), on="id", how="left")


def preference_measures(t: pd.DataFrame, name: str) -> list[Tested]:
    """Slot-A rate (position), longer and prior picks (style) of judge ``name`` from its per-pair table. A style pick
    rate is averaged over the pairs whose label goes against the pick and those whose label goes along it: 0.5 for
    any judge without the preference whatever its accuracy (its errors fall as often on either side; the oracle's
    0 and 1 average to 0.5), above for one that prefers the longer description or the prior, below for one
    over-corrected to the shorter or against the prior (on the label-against slice alone, accuracy and the shortcut
    were one number: a correct judge read 0, a contrarian one 1)."""
    ab, ba = t[f"p_a1_ab__{name}"].to_numpy(float), t[f"p_a1_ba__{name}"].to_numpy(float)
    # every pair answered in both orders; a tie is half a pick of each slot (dropping pairs with a tie hid a judge
    # that answers A when the gold is in slot A and "tie" otherwise: 0.75, not "not measured")
    decided = np.isfinite(ab) & np.isfinite(ba)
    slot = lambda p: np.where(np.abs(p - 0.5) <= 1e-9, 0.5, (p > 0.5).astype(float))  # noqa: E731
    slot_a = (slot(ab) + slot(1 - ba)) / 2
    choice = stats.decide_with_ties(t[f"p_a1__{name}"].to_numpy(float))  # 1 a1, 0 a2, 0.5 tie
    y = (t["preference"] == "a1").to_numpy()
    len1, len2 = t["len1"].to_numpy(float), t["len2"].to_numpy(float)
    longer_is_a1 = len1 > len2
    length_counter = (len1 != len2) & (y != longer_is_a1)
    length_aligned = (len1 != len2) & (y == longer_is_a1)
    prior = t["prior_choice"].to_numpy(object)
    counter = t["counter_stereotypical"].astype(bool).to_numpy()
    pair = t["id"].to_numpy()
    spec = {m.key: m for m in BY_NAME["position"].measures + BY_NAME["style"].measures}
    rate = lambda v, mask: contrast(pair, [arm(v, mask, HALF, PAIR_VAR)])  # noqa: E731

    def balanced(v, against, along):  # the pick rate averaged over pairs whose label goes against it and along it
        return contrast(pair, [arm(v, against, HALF, PAIR_VAR, 0.5, "pick"),
                               arm(v, along, HALF, PAIR_VAR, 0.5, "pick")])

    return [Tested(spec["slot_a"], "all", rate(slot_a, decided)),
            Tested(spec["longer"], "all", balanced(np.where(longer_is_a1, choice, 1 - choice), length_counter,
                                                   length_aligned)),
            Tested(spec["prior"], "all", balanced(np.where(prior == "a1", choice, 1 - choice),
                                                  counter & (prior != "abstain"), ~counter & (prior != "abstain")))]


def protocol_frame(run: AuditRun) -> pd.DataFrame:
    """The judge's protocol answers (id, label, run) joined with the items' labels (and whether audio is sent)."""
    from omniaudit.evaluation.protocols.audit import load_items_meta, read_judge_predictions

    items = load_items_meta(run.dataset)
    preds = read_judge_predictions([f"{run.name}={f}" for f in run.files.values()], items, dataset=run.dataset)
    return items.merge(preds[run.name], on="id", how="inner")


def lock_measures(df: pd.DataFrame) -> list[Tested]:
    """Per pairwise format, the AB/BA lock and the slot-A rate over both orders (a trial's two answers averaged,
    a tie or any answer but A / B half a pick of each slot): the lock tests a judge locked to either slot on most
    trials against a uniform guesser's 0.5, the slot-A rate a judge locked to one slot on any share of them against
    a slot-blind judge's 0.5 (its choices follow the clips, so it picks the first slot as often as the second)."""
    lock, slot_a = (next(m for m in BY_NAME["position"].measures if m.key == k) for k in ("lock", "pairwise_slot_a"))
    pair = df[(df["config"] == "pairwise") & (df["task"] != "identical")]
    out = []
    for fmt in lock.strata:
        part = pair[pair["format"] == fmt]
        # a declared tie is half a pick of each slot (dropped, a judge answering A when the gold is in slot A and
        # "tie" otherwise went unmeasured); an answer left unread is no pick: its trial is left out
        tie = part["tie"].to_numpy(bool) if "tie" in part.columns else np.zeros(len(part), bool)
        said = part["label"].where(part["label"].notna(), pd.Series(np.where(tie, "tie", ""), index=part.index))
        said = said.replace("", np.nan)
        wide = part.assign(said=said).pivot_table(index=["trial", "run"], columns="order", values="said",
                                                  aggfunc="first")
        if not {"AB", "BA"} <= set(wide.columns):
            note = f"no {fmt} trial answered in both orders"
            out += [Tested(lock, fmt, None, note=note), Tested(slot_a, fmt, None, note=note)]
            continue
        wide = wide.dropna(subset=["AB", "BA"])
        letters = ~(wide["AB"] == "tie") & ~(wide["BA"] == "tie")  # the lock compares the two options named
        same = (wide["AB"] == wide["BA"]).to_numpy(float)
        first = [np.select([wide[o] == "A", wide[o] == "B"], [1.0, 0.0], 0.5) for o in ("AB", "BA")]
        trials = wide.index.get_level_values("trial").astype(str).str.rsplit("/", n=1).str[0]
        every = np.ones(len(same), bool)
        out += [Tested(lock, fmt, contrast(trials, [arm(same, letters.to_numpy(), HALF, HALF_VAR)])),
                Tested(slot_a, fmt, contrast(trials, [arm((first[0] + first[1]) / 2, every, HALF, PAIR_VAR)]))]
    return out


# label supplied vs not, per protocol: (arm of items showing the wrong label, arm of the same clip's items with the
# same media and no label); a protocol's contrast averages its pairs of arms
CUE_ARMS = {
    "blueprint": ((("blueprint", ("wrong_audio",)), ("blueprint", ("audio",))),
                  (("blueprint", ("wrong", "no_frame")), ("blueprint", ("descriptors",)))),
    "reference": ((("reference", ("wrong",)), ("no_label_audio", ())),),
    "cue_conflict": ((("cue_conflict", ("conf_ref", "conf_spec", "conf_both")), ("no_label_audio", ())),),
}
CUE_ARMS["all"] = tuple(pair for protocol in tuple(CUE_ARMS) for pair in CUE_ARMS[protocol])  # every matched pair


def cue_values(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item, how far its answer follows the supplied label beyond the errors' spread, with its content-blind
    mean and variance. With ``k`` >= 3 options: ``((k - 1) [answer = cue] - [answer wrong]) / (k - 2)``, whose mean
    is the share of items on which the label is copied whatever the accuracy (errors spread evenly over the wrong
    options give 0: a model that a label only distracts; copying on a share ``f``: ``f``; a uniform guess: 0). With
    two options every error is the label, so the item counts ``[answer = cue]`` (following and distraction cannot
    be told apart there)."""
    label, cue, gold = (df[c].to_numpy(object) for c in ("label", "cue", "gold"))
    k = df["k"].to_numpy(float)
    read = pd.notna(df["label"]).to_numpy()
    hit = (read & (label == cue)).astype(float)
    wrong = (read & pd.notna(df["gold"]).to_numpy() & (label != gold)).astype(float)
    many = k >= 3
    spread = np.where(many, ((k - 1) * hit - wrong) / np.where(many, k - 2, 1), hit)
    null = np.where(many, 0.0, 1 / k)
    null_var = np.where(many, (k - 1) / (k * np.where(many, k - 2, 1)), (1 / k) * (1 - 1 / k))
    return spread, null, null_var


def cue_measures(df: pd.DataFrame) -> list[Tested]:
    """Cue following per protocol (:func:`cue_values`), matched by clip and media (see :data:`CUE_ARMS`)."""
    spec = BY_NAME["label_following"].measures[0]
    config, cond = df["config"].to_numpy(object), df["condition"].to_numpy(object)
    no_label_audio = ((config == "blueprint") & (cond == "audio")) | ((config == "cue_conflict") & (cond == "none"))

    def mask(cell):
        where, conditions = cell
        return no_label_audio if where == "no_label_audio" else (config == where) & np.isin(cond, conditions)

    values, p0, v0 = cue_values(df)
    read = pd.notna(df["label"]).to_numpy()  # an unread answer is left out, never scored as the null
    out = []
    for protocol in spec.strata:
        pairs = [(mask(s) & read, mask(n) & read) for s, n in CUE_ARMS[protocol]]
        pairs = [(s, n) for s, n in pairs if s.any() and n.any()]
        if not pairs:
            out.append(Tested(spec, protocol, None, note=f"no {protocol} items with and without the label"))
            continue
        w = 1.0 / len(pairs)
        arms = [a for i, (s, n) in enumerate(pairs)
                for a in (arm(values, s, p0, v0, w, i), arm(values, n, p0, v0, -w, i))]
        out.append(Tested(spec, protocol, contrast(df["clip_id"].astype(str).to_numpy(), arms)))
    return out


# a uniform guess over each Thud dimension's answers is right this often on an Original and on its intervention
THUD_CHANCE = {"sync": 1 / 3, "existence": 1 / 2, "consistency": 1 / 2}


def gap_measures(scored: pd.DataFrame) -> list[Tested]:
    """Thud's Avg Gap (points) from per-row correctness (``scored.csv``), each dimension's paired rows, then each
    dimension's own gap (the ``dim_gap`` strata): a gap the average hides, confined to one dimension or cancelled by
    an over-correction in another, is tested where it is."""
    avg_spec, dim_spec = BY_NAME["visual_inference"].measures
    paired, orig = scored["paired"].to_numpy(bool), (scored["intervention"] == "original").to_numpy()
    dim = scored["dimension"].to_numpy(object)
    correct = scored["correct"].to_numpy(float) * 100
    read = scored["parsed"].to_numpy(bool) if "parsed" in scored.columns else np.ones(len(scored), bool)
    clusters = scored["source_id"].astype(str).to_numpy()
    dims = [d for d in THUD_CHANCE if (paired & orig & (dim == d)).any() and (paired & ~orig & (dim == d)).any()
            and (read & paired & (dim == d)).any()]

    def arms(d: str, w: float) -> list:
        p0, var0 = THUD_CHANCE[d] * 100, THUD_CHANCE[d] * (1 - THUD_CHANCE[d]) * 100 ** 2
        return [arm(correct, paired & orig & (dim == d), p0, var0, w, d),
                arm(correct, paired & ~orig & (dim == d), p0, var0, -w, d)]

    if len(dims) < len(THUD_CHANCE):  # eq. 10 needs all three dimensions, each with answers read; so do its parts
        note = "the Avg Gap needs read answers on Sync, Existence and Consistency"
        return [Tested(avg_spec, "all", None, note=note),
                *(Tested(dim_spec, d, None, note=note) for d in dim_spec.strata)]
    # Wald only: on a handful of clips a large gap would inflate the score SE (the simulation checks its coverage)
    return [Tested(avg_spec, "all", contrast(clusters, [a for d in dims for a in arms(d, 1 / len(dims))],
                                             score_floor=False)),
            *(Tested(dim_spec, d, contrast(clusters, arms(d, 1.0), score_floor=False)) for d in dim_spec.strata)]


def dominance_measure(per_sample: dict[str, float], null: dict[str, float], floor: str | None,
                      leading: str | None = None) -> Tested:
    """Per-sample dominance over its per-sample null; counted only where the moves clear the stability floor.
    ``leading``: the modality that decides most failures (any modality's dominance counts; the cell names it)."""
    spec = BY_NAME["modality_dominance"].measures[0]
    if not per_sample:
        return Tested(spec, "all", None, note="no classified failure to decompose")
    ids = sorted(per_sample)
    d = np.array([per_sample[i] for i in ids], float)
    p0 = np.array([null[i] for i in ids], float)
    c = contrast(np.array(ids), [arm(d, np.ones(len(ids), bool), p0, p0 * (1 - p0))])
    note = {"cleared": "moves clear the stability floor", "flagged": "moves do not clear the stability floor: noise",
            "unchecked": "no stability floor (one run): unchecked"}.get(cast(str, floor), f"floor check: {floor}")
    if leading:
        note += f"; mostly {leading}"
    return Tested(spec, "all", c, counts=floor == "cleared", note=note,
                  direction=leading.split(" (")[0] if leading else None)  # the cell names the modality


# ------------------------------------------------------------------------------------------------------- verdicts
def _record(t: Tested, family: int, alpha: float) -> dict:
    """The typed measure record the card shows and ``measures.json`` keeps."""
    s, c = t.spec, t.contrast
    out: dict[str, Any]
    out = {"audit": s.audit, "measure": s.title + ("" if t.stratum == "all" else f" [{t.stratum}]"), "key": s.key,
           "stratum": t.stratum, "side": s.side, "unit": s.unit, "delta": s.delta, "counts": t.counts,
           "source": _source(s.audit),
           "measured": c is not None, "flagged": False, "verdict": None, "value": None, "ci": [None, None],
           "null": None, "n": None, "clusters": None}
    if t.note:
        out["note"] = t.note
    if c is None:
        return out
    out.update(value=c.value, null=c.null, n=c.n, clusters=c.clusters, se=c.se, se0=c.se0)
    if s.side == "outside":  # a two-sided measure says which way it moved ("shorter", "slot B")
        out["direction"] = s.directions[int(c.value > c.null)]
    elif t.direction:
        out["direction"] = t.direction
    if t.counts:
        out.update(decide(c, s.side, s.delta, family, alpha))
        out["flagged"] = out["verdict"] == "flagged"
    else:  # shown with its plain 95% interval, no verdict; its MDE priced as the card's tests are, what it would
        # take to decide (priced alone it read smaller than any verdict could use: 0.140 for a dominance needing 0.19)
        out.update(decide(c, s.side, s.delta, 1, alpha), verdict=None,
                   mde=mde(c.se0, c.clusters, s.side, max(family, 1), alpha))
    lo, hi = s.bounds  # no value outside them is possible: clipping never moves a bound across the null
    out["ci"] = [min(max(out["ci"][0], lo), hi), min(max(out["ci"][1], lo), hi)]
    return out


def _source(audit: str) -> str:
    """What an audit's measures are computed from, relative to the model's folder (a card cell's trace)."""
    from omniaudit.audits import get

    return get(audit).source


def audits_of(shortcut: str, runs: dict[str, AuditRun]) -> tuple[str, ...]:
    """The audits that test ``shortcut``: those of its measures in the table, then any other audit of this run that
    declares it (a registered audit measuring a shortcut of the table)."""
    from omniaudit.audits import get

    declared = [a for a in runs if a not in BY_NAME[shortcut].audits and shortcut in get(a).shortcuts]
    return (*BY_NAME[shortcut].audits, *declared)


def _summary(shortcut: str, items: list[dict], runs: dict[str, AuditRun]) -> dict:
    """The verdict of one shortcut: flagged when any counted measure is; clear when every counted measure is
    clear (a shortcut must be ruled out wherever it is tested); else inconclusive; not answering / not measured
    when nothing was tested."""
    audits = audits_of(shortcut, runs)
    statuses = {a: runs[a].status if a in runs else "not run" for a in audits}
    counted = [e for e in items if e["counts"] and e["measured"]]
    flagged = [e for e in counted if e["verdict"] == "flagged"]
    if flagged:
        status, head = "flagged", min(flagged, key=lambda e: e["p"])
    elif counted and all(e["verdict"] == "clear" for e in counted):
        status, head = "clear", min(counted, key=lambda e: e["p"])  # the closest to a flag
    elif counted:
        status, head = "inconclusive", min((e for e in counted if e["verdict"] == "inconclusive"),
                                           key=lambda e: e["p"])
    elif any(s == "not answering" for s in statuses.values()):
        status, head = "not answering", None
    else:
        status, head = "not measured", None
    why = "; ".join(f"{a}: {runs[a].reason}" for a in audits if a in runs and runs[a].reason and not counted)
    keys = ("value", "ci", "null", "measure", "audit", "stratum", "mde", "delta", "p_adjusted", "unit", "significant",
            "direction", "equivalence_bound", "side", "clusters")
    head_fields: dict[str, Any] = {k: head.get(k) for k in keys} if head else {k: None for k in keys}
    if not head:
        head_fields.update(ci=[None, None], audit=audits[0])
    if flagged and head:  # every stratum the head's measure is flagged in ("in concat and native", not the first)
        head_fields["flagged_in"] = [e["stratum"] for e in flagged if e["key"] == head["key"]]
    return {"flagged": status == "flagged", "status": status, **head_fields, "threshold": head_fields["null"],
            "audits": statuses, "evidence": items, "rule": BY_NAME[shortcut].rule, **({"why": why} if why else {})}


def shortcuts(runs: dict[str, AuditRun], alpha: float = ALPHA) -> dict[str, dict]:
    """The five verdicts of one model from its audit runs (audit name -> AuditRun): every counted measure of every
    shortcut and stratum is one family of tests (:mod:`.inference`)."""
    tested, extra = measures(runs)
    records = decide_family(tested, alpha)
    return {s: _summary(s, records[s] + extra[s], runs) for s in SHORTCUTS}


def measures(runs: dict[str, AuditRun]) -> tuple[dict[str, list[Tested]], dict[str, list[dict]]]:
    """Per shortcut, one model's tested measures (before the family decides) and the evidence shown beside them:
    each audit that ran gives its own (:meth:`omniaudit.audits.Audit.measures`)."""
    from omniaudit.audits import get
    from omniaudit.errors import InputError

    tested: dict[str, list[Tested]] = {s: [] for s in SHORTCUTS}
    extra: dict[str, list[dict]] = {s: [] for s in SHORTCUTS}
    for audit, run in runs.items():
        if run.status != "ran":
            continue
        found, shown_beside = get(audit).measures(run)
        unknown = sorted((set(found) | set(shown_beside)) - set(SHORTCUTS))
        if unknown:
            raise InputError(f"the {audit} audit measures a shortcut the table does not have (omniaudit.shortcuts: "
                             f"{', '.join(SHORTCUTS)})", value=", ".join(unknown))
        for shortcut, items in found.items():
            tested[shortcut] += items
        for shortcut, evidence in shown_beside.items():
            extra[shortcut] += evidence
    return tested, extra


def decide_family(tested: dict[str, list[Tested]], alpha: float = ALPHA,
                  family: int | None = None) -> dict[str, list[dict]]:
    """Every counted, measured test of one model is one family: each measure's record (:func:`_record`).
    ``family``: its size where the tests given are part of a larger one (a simulation of some of a card's audits
    priced at the whole card's family)."""
    family = family or max(1, sum(t.counts and t.contrast is not None for ts in tested.values() for t in ts))
    return {s: [_record(t, family, alpha) for t in ts] for s, ts in tested.items()}
