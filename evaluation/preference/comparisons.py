"""Predictors compared with each other (EmoPrefer audit Table 3, ``--compare A:B``: exact McNemar and WAF(A) - WAF(B)
with a paired bootstrap CI) and a judge compared with itself across presentation orders (its position bias)."""

from __future__ import annotations

import numpy as np

from omniaudit.errors import InputError
from omniaudit.evaluation.preference.audit_config import PreferenceAuditConfig
from omniaudit.evaluation.preference.judge_files import ORDERS
from omniaudit.evaluation.stats import TIE, bootstrap_waf, decide_with_ties, mcnemar_exact, paired_waf_difference


def parse_comparisons(specs: list[str], names: list[str]) -> list[tuple[str, str]]:
    """``A:B`` -> (A, B), both predictors of this audit (probe or judge names)."""
    out = []
    for spec in specs:
        parts = str(spec).split(":")
        if len(parts) != 2 or not all(p.strip() for p in parts):
            raise InputError("expected a comparison as A:B (two predictor names)", value=spec)
        a, b = (p.strip() for p in parts)
        unknown = [x for x in (a, b) if x not in names]
        if unknown:
            raise InputError(f"unknown predictor {unknown[0]!r} in --compare; choose from {names}", value=spec)
        if a == b:
            raise InputError("a comparison needs two different predictors", value=spec)
        out.append((a, b))
    return out


def position_bias(y: np.ndarray, per_order: np.ndarray, averaged: dict, masks: dict[str, np.ndarray],
                  config: PreferenceAuditConfig, clusters: np.ndarray | None) -> dict:
    """Per-order WAF of one judge (each order scored alone, on the pairs judged in it), beside the averaged one.

    ``first_slot_rate`` is the share of decisions that pick the first-shown description (option A): 1.0 or 0.0 in
    both orders is a position-locked judge. ``ab_minus_ba`` is WAF(ab) - WAF(ba) on the pairs judged in both orders
    with a paired bootstrap CI (the position-bias gap of a single-order-trained judge, e.g. 30.9 vs 79.7).
    """
    out: dict = {"orders": {}, "first_slot_rate": {}, "n_pairs": {}}
    decisions = {}
    for j, order in enumerate(ORDERS):
        has = ~np.isnan(per_order[:, j])
        d = decide_with_ties(np.where(has, per_order[:, j], 0.5))
        decisions[order] = d
        out["n_pairs"][order] = int(has.sum())
        first = d if order == "ab" else 1.0 - d  # in order ba option A shows a2
        out["first_slot_rate"][order] = float(first[has].mean()) if has.any() else None
        entry = {}
        for slice_name, mask in masks.items():
            m = mask & has
            est = bootstrap_waf(y[m], d[m], config.n_resamples, config.seed,
                                clusters=None if clusters is None else clusters[m])[0]
            entry[slice_name] = {"waf": est.value, "ci": list(est.ci), "n": int(m.sum())}
        out["orders"][order] = entry
    out["orders"]["averaged"] = {s: {k: averaged[s][k] for k in ("waf", "ci", "n")} for s in masks}
    both = ~np.isnan(per_order).any(axis=1)
    out["ab_minus_ba"] = {s: paired_waf_difference(y[m & both], decisions["ab"][m & both],
                                                   decisions["ba"][m & both], config.n_resamples, config.seed,
                                                   clusters=None if clusters is None else clusters[m & both])
                          for s, m in masks.items()}
    return out


def comparison(y: np.ndarray, decisions: np.ndarray, a: int, b: int, masks: dict[str, np.ndarray],
               config: PreferenceAuditConfig, clusters: np.ndarray | None) -> dict:
    """Table 3 for one pair of predictors on every slice: exact McNemar (b = pairs only A gets right, c = only B; ties
    left out) and WAF(A) - WAF(B) with a paired bootstrap CI (same resamples for both, clusters kept together)."""
    correct = np.where(y == 1, decisions, 1.0 - decisions)
    out = {}
    for slice_name, mask in masks.items():
        both = mask & (decisions[a] != TIE) & (decisions[b] != TIE)
        diff = paired_waf_difference(y[mask], decisions[a, mask], decisions[b, mask], config.n_resamples,
                                     config.seed, clusters=None if clusters is None else clusters[mask])
        out[slice_name] = {"n": int(mask.sum()), "difference": diff,
                           "mcnemar": {**mcnemar_exact(correct[a, both] == 1, correct[b, both] == 1),
                                       "n_ties_excluded": int((mask & ~both).sum())}}
    return out
