"""Models against a baseline on one card (``scorecard --baseline NAME``): did a remedy remove a shortcut, and what
did it cost in task accuracy?

**Paired change.** For every counted measure both models have, the change of its *effect* (value minus its
content-blind null on those items) from the baseline to the model: the two contrasts are stacked, the baseline's
arms with their signs reversed, and the cluster-robust variance sums each cluster's influence over *both* models
(:func:`omniaudit.evaluation.scorecard.inference.contrast`, Wald SE, Student t on G - 1 degrees of freedom). Both
models answer the same items, so a cluster (pair, trial, clip, sample) carries its two models' answers together: the
between-cluster variation both share cancels, which is what makes the change paired. The intervals are simultaneous
over the model's paired measures (Bonferroni, two-sided, at the verdicts' ``alpha``).

**Removed** (per shortcut): flagged for the baseline, clear for the model, and every measure that flagged the
baseline has a paired change whose interval excludes 0 towards its null. *Reduced*: those changes exclude 0 but the
model is not clear. *Introduced*: flagged for the model, not for the baseline. Otherwise *not removed* (the baseline
was flagged) or *unchanged*.

**Task accuracy** (the alignment tax), per audit, on the items both answered: the preference judge's accuracy against
the human label (a tie half right, both orders averaged, so a slot bias neither helps nor hurts it), the protocols'
answers against the gold label on the items that supply no label and are not pairwise (where no label copier or slot
lock is right or wrong by construction), Thud's accuracy on the Original clips; each a paired change with its 95%
interval. An unread answer is not a right one.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from omniaudit.evaluation.scorecard.inference import ALPHA, Arm, Contrast, contrast, critical
from omniaudit.evaluation.scorecard.rules import (
    AuditRun,
    Tested,
    measures,
)
from omniaudit.shortcuts import SHORTCUTS

CHANGE_STATUSES = ("removed", "reduced", "not removed", "introduced", "unchanged", "not paired")
ACCURACY_LEVEL = 0.95


def paired(after: Contrast | None, before: Contrast | None) -> Contrast | None:
    """``after - before`` as one contrast over the clusters of both (None when either cannot be paired: no arms kept,
    or no cluster in common)."""
    if after is None or before is None or not after.arms or not before.arms:
        return None
    ids_a, ids_b = np.asarray(after.cluster_ids).astype(str), np.asarray(before.cluster_ids).astype(str)
    used = lambda c, ids: set(ids[np.logical_or.reduce([a.mask for a in c.arms])])  # noqa: E731
    if not used(after, ids_a) & used(before, ids_b):
        return None
    na, nb = len(ids_a), len(ids_b)
    arms = [_padded(a, "after", 1.0, 0, nb) for a in after.arms]
    arms += [_padded(a, "before", -1.0, na, 0) for a in before.arms]
    return contrast(np.concatenate([ids_a, ids_b]), arms, score_floor=False)


def _padded(a: Arm, side: str, sign: float, before: int, after: int) -> Arm:
    """Arm ``a`` placed in the stacked item index (``before`` empty items ahead of it, ``after`` behind)."""
    pad = lambda x, fill=0.0: np.concatenate([np.full(before, fill), x, np.full(after, fill)])  # noqa: E731
    return Arm(sign * a.coef, pad(a.values), pad(a.mask, False).astype(bool), pad(a.null), pad(a.null_var),
               None if a.pair is None else (side, a.pair))


def change(c: Contrast, m: int, alpha: float = ALPHA, of_effect: bool = True) -> dict:
    """The paired change of an effect (``of_effect``: value minus null; else the value itself) with its simultaneous
    two-sided interval in a family of ``m``."""
    d = c.value - c.null if of_effect else c.value
    t = critical("outside", c.clusters - 1, alpha / m)
    return {"change": float(d), "ci": [float(d - t * c.se), float(d + t * c.se)], "ci_level": 1 - alpha / m,
            "se": float(c.se), "clusters": c.clusters, "n": c.n}


def _toward_null(entry: dict, effect_before: float) -> bool:
    """Whether the paired change's interval excludes 0 on the side that moves the baseline's effect to its null."""
    lo, hi = entry["ci"]
    return hi < 0 if effect_before > 0 else lo > 0 if effect_before < 0 else False


def _key(t: Tested) -> tuple[str, str]:
    return t.spec.key, t.stratum


def shortcut_changes(before: dict[str, list[Tested]], after: dict[str, list[Tested]], verdicts_before: dict,
                     verdicts_after: dict, alpha: float = ALPHA) -> dict[str, dict]:
    """Per shortcut: its status against the baseline (:data:`CHANGE_STATUSES`) and each counted measure's change."""
    pairs = {s: [(b, a) for b in before[s] for a in after[s] if _key(a) == _key(b) and a.counts and b.counts]
             for s in SHORTCUTS}
    contrasts = {s: [(b, a, paired(a.contrast, b.contrast)) for b, a in ps] for s, ps in pairs.items()}
    m = max(1, sum(c is not None for cs in contrasts.values() for _, _, c in cs))
    out = {}
    for s in SHORTCUTS:
        flagged_before = {(e["key"], e["stratum"]) for e in verdicts_before[s]["evidence"]
                          if e.get("counts") and e.get("verdict") == "flagged"}
        rows = []
        for b, a, c in contrasts[s]:
            row = {"measure": b.spec.title + ("" if b.stratum == "all" else f" [{b.stratum}]"), "key": b.spec.key,
                   "stratum": b.stratum, "unit": b.spec.unit,
                   "before": _effect(b.contrast), "after": _effect(a.contrast), "flagged_before": _key(b) in
                   flagged_before}
            if c is not None:
                row.update(change(c, m, alpha))
                row["toward_null"] = row["before"] is not None and _toward_null(row, row["before"])
            rows.append(row)
        out[s] = {"status": _status(verdicts_before[s]["status"], verdicts_after[s]["status"], rows),
                  "before": verdicts_before[s]["status"], "after": verdicts_after[s]["status"], "changes": rows}
    return out


def _effect(c: Contrast | None) -> float | None:
    return None if c is None else float(c.value - c.null)


def _status(before: str, after: str, rows: list[dict]) -> str:
    if before == "flagged":
        moved = [r for r in rows if r["flagged_before"]]
        if not moved or any("change" not in r for r in moved):
            return "not paired"
        if all(r["toward_null"] for r in moved):
            return "removed" if after == "clear" else "reduced"
        return "not removed"
    if after == "flagged":
        return "introduced"
    return "unchanged" if rows else "not paired"


# ------------------------------------------------------------------------------------------------- task accuracy
def accuracy(runs: dict[str, AuditRun]) -> dict[str, Contrast | None]:
    """Per audit that ran and has a task accuracy, the model's as a contrast (proportion; its content-blind null per
    item): :meth:`omniaudit.audits.Audit.accuracy`."""
    from omniaudit.audits import get

    found = {audit: get(audit).accuracy(run) for audit, run in runs.items() if run.status == "ran"}
    return {audit: c for audit, c in found.items() if c is not None}


def accuracy_notes(runs: dict[str, AuditRun]) -> dict[str, str]:
    """Why an audit that ran pairs no task accuracy (its ``accuracy_note``)."""
    from omniaudit.audits import get

    return {a: note for a in runs if (note := get(a).accuracy_note)}




def accuracy_changes(before: dict[str, Contrast | None], after: dict[str, Contrast | None]) -> dict[str, dict]:
    """Per audit both ran: accuracy before / after and the paired change with its 95% interval."""
    out = {}
    for audit in sorted(set(before) & set(after)):
        c = paired(after[audit], before[audit])
        row = {"before": None if before[audit] is None else before[audit].value,  # type: ignore[union-attr]  # checked
               "after": None if after[audit] is None else after[audit].value}  # type: ignore[union-attr]  # checked
        if c is not None:
            row.update(change(c, 1, 1 - ACCURACY_LEVEL, of_effect=False))
        out[audit] = row
    return out


def accuracy_held(control: dict[str, Contrast | None], model: dict[str, Contrast | None],
                  margin: float) -> dict[str, dict]:
    """Per audit both ran: the model's task accuracy against the control's, paired, and ``held`` when the 95%
    interval of the change stays above ``-margin`` (non-inferiority; None when the change cannot be paired)."""
    rows = accuracy_changes(control, model)
    for row in rows.values():
        row["held"] = None if row.get("ci") is None else bool(row["ci"][0] > -margin)
    return rows


def against_baseline(results: dict[str, dict[str, AuditRun]], verdicts: dict[str, dict], baseline: str,
                     models: list[str], alpha: float = ALPHA, control: str | None = None,
                     margin: float = 0.05) -> dict:
    """The card's comparison section: every model in ``models`` against ``baseline`` (both in ``results``); with a
    ``control``, each other model's task accuracy against the control's too (:func:`accuracy_held`)."""
    base_tested, _ = measures(results[baseline])
    base_accuracy = accuracy(results[baseline])
    out: dict[str, Any] = {"baseline": baseline, "models": {}}
    if control is not None:
        out.update(control=control, margin=margin)
    for name in models:
        if name == baseline:
            continue
        tested, _ = measures(results[name])
        out["models"][name] = {
            "shortcuts": shortcut_changes(base_tested, tested, verdicts[baseline], verdicts[name], alpha),
            "accuracy": accuracy_changes(base_accuracy, accuracy(results[name])),
            "accuracy_notes": accuracy_notes(results[name]),
        }
        if control is not None and name != control:
            out["models"][name]["against_control"] = accuracy_held(accuracy(results[control]),
                                                                   accuracy(results[name]), margin)
    return json.loads(json.dumps(out))  # plain JSON types only (the card writes it as is)
