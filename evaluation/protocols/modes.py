"""Judge modes and run stability of the judge-protocol audit (lalm-judge-protocol-shortcuts §V-B-§V-D).

Judge modes, from point estimates (thresholds are module constants, stated in the report):

- **Pairwise** (§V-D, Table IV), per format and task, from the position-lock rate ℓ (eq. 3) and the gold-aligned
  rate g (eq. 4): ``fully locked`` when ℓ >= 0.99 (every verdict in one slot, so g = 0.5); ``locked`` when
  ℓ >= 0.75 and |g - 0.5| <= 0.10 (the paper's "lock at or above 0.76 and g about 0.5"); ``engaged`` when
  ℓ <= 0.50 and g >= 0.65 (low lock, high g); otherwise ``intermediate``. Per judge and format, the mode most tasks
  share, or ``task-dependent`` when no mode has a strict plurality (the paper: "the mode is task-dependent").
- **Label channels** (§V-B, §V-C, §V-E), per attribute: a channel is ``label-following`` when the judge emits the
  wrong label it is given, with the audio present, above chance by a chance-normalised rate over 0.30 (eq. 2,
  chance 1/(K-1); with K = 2, chance 1/2), the threshold at which the paper counts "five of six judges" on emotion;
  else ``engaged``. Channels: ``blueprint`` (the wrong specialist block next to the audio, ``wrong_audio``),
  ``reference`` (the most-following of the four placements) and ``cue_conflict`` (``conf_spec`` or ``conf_ref``).

Before any mode, a judge must be answering (thresholds are module constants, stated in the report): a judge that
parses nothing, or gives one label to everything, has no lock, no gold alignment and no follow rate worth reading
(a judge that parsed 0 answers would otherwise "follow" no wrong label: ``engaged``). From the judge's answers
(:func:`answer_profile`):

- every cell (each pairwise format x task; each attribute's label answers over blueprint, reference and
  cue_conflict) needs a parse rate of at least ``MIN_PARSE_RATE`` (0.5), else its mode is ``not answering``;
- an attribute's parsed labels need a normalised entropy H / log2(K) of at least ``MIN_LABEL_ENTROPY`` (0.2), else
  ``constant`` (e.g. one label for 96% of the answers of an 8-class attribute). Pairwise cells are not held to it:
  one slot for every trial is the pairwise protocol's own constant answer, the paper's ``fully locked`` mode
  (lock 1.00, g 0.50), which the lock already reads.

Run stability (§V-B "a T = 0.7 seed sweep ... the maximum per-cell range is 0.038, and 5-run majority vote shifts
any cell by at most 0.008"): every cell of the audit is recomputed per sampled run and on the per-item majority
vote over runs; a cell's ``range`` is max - min over runs, its ``shift`` the majority-vote value minus the pooled
value over runs (the audit's own cell). Only cells of at least ``MIN_STABILITY_N`` (30) items are read: a rate
over n items moves in steps of 1/n, so below 27 items a single changed answer already exceeds the paper's largest
per-cell range (0.038), and at 30 it is 0.033; a smaller cell cannot tell a stable judge from an unstable one, and
its range would decide the "max range" alone. Smaller cells stay in the table with their n, marked too few
(``adequate`` false), and are left out of the maxima. The paper's cells are far above it (240 emotion clips, 60
language clips per condition).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

FULL_LOCK = 0.99
LOCKED = 0.75
LOCKED_G_BAND = 0.10
ENGAGED_LOCK = 0.50
ENGAGED_G = 0.65
FOLLOWING = 0.30
MIN_PARSE_RATE = 0.5  # a cell whose answers are parsed less often than this is "not answering"
MIN_LABEL_ENTROPY = 0.2  # an attribute whose labels have a lower normalised entropy, H / log2(K), is "constant"
MIN_STABILITY_N = 30  # items a stability cell needs for its range and shift to be read (module docstring)
MODES = ("engaged", "intermediate", "locked", "fully locked")
NOT_ANSWERING, CONSTANT = "not answering", "constant"
LABEL_CONFIGS = ("blueprint", "reference", "cue_conflict")


def normalized_entropy(labels: pd.Series, k: int) -> float | None:
    """Shannon entropy of the label distribution over log2(K): 0 for one label, 1 for K labels equally often; None
    without a label or with K < 2."""
    counts = labels.dropna().astype(str).value_counts().to_numpy(float)
    if not counts.size or k < 2:
        return None
    p = counts / counts.sum()
    return max(0.0, float(-(p * np.log2(p)).sum() / np.log2(k)))  # no -0.0 for one label


def answer_profile(items: pd.DataFrame, pred: pd.DataFrame) -> dict:
    """How a judge answered, for the gates of :func:`judge_modes`: per attribute (its answers in the label configs)
    ``n``, ``parse_rate``, ``entropy`` (normalised, :func:`normalized_entropy`), ``top_label`` and ``top_share``; per
    pairwise format and task ``n`` and ``parse_rate``. Sampled runs pool (every answer counts)."""
    df = items.merge(pred[["id", "label"]], on="id", how="inner")
    out: dict = {"labels": {}, "pairwise": {}}
    labelled = df[df["config"].isin(LABEL_CONFIGS) & df["attribute"].notna()]
    for attribute, g in labelled.groupby("attribute", sort=True):
        parsed = g["label"].dropna().astype(str)
        top = parsed.value_counts()
        out["labels"][attribute] = {
            "n": len(g), "parse_rate": float(len(parsed) / len(g)),
            "entropy": normalized_entropy(parsed, int(g["k"].iloc[0])),
            "top_label": str(top.index[0]) if len(top) else None,
            "top_share": float(top.iloc[0] / len(parsed)) if len(top) else None}
    pairwise = df[(df["config"] == "pairwise") & (df["task"] != "identical")]
    for (fmt, task), g in pairwise.groupby(["format", "task"], sort=True):
        out["pairwise"].setdefault(fmt, {})[task] = {"n": len(g), "parse_rate": float(g["label"].notna().mean())}
    return out


def gate(entry: dict | None, with_entropy: bool = True) -> str | None:
    """``not answering`` / ``constant`` when a cell's answers fail the thresholds (module docstring), else None."""
    if not entry:
        return None
    if entry["parse_rate"] < MIN_PARSE_RATE:
        return NOT_ANSWERING
    if with_entropy and entry.get("entropy") is not None and entry["entropy"] < MIN_LABEL_ENTROPY:
        return CONSTANT
    return None


def pairwise_mode(lock: float | None, g: float | None) -> str | None:
    """The Table IV mode of one (judge, format, task) cell (see the module docstring); None without both rates."""
    if lock is None or g is None:
        return None
    if lock >= FULL_LOCK:
        return "fully locked"
    if lock >= LOCKED and abs(g - 0.5) <= LOCKED_G_BAND:
        return "locked"
    if lock <= ENGAGED_LOCK and g >= ENGAGED_G:
        return "engaged"
    return "intermediate"


def overall_mode(per_task: dict[str, str | None]) -> str | None:
    """The mode most tasks share (strict plurality), else ``task-dependent``."""
    counts = Counter(m for m in per_task.values() if m)
    if not counts:
        return None
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return "task-dependent"
    return ranked[0][0]


def follow_normalized(rate: float | None, k: int) -> float | None:
    """Chance-normalised follow rate: eq. 2 (chance 1/(K-1)) for K > 2; chance 1/2 for K = 2."""
    if rate is None or not np.isfinite(rate) or k < 2:
        return None
    chance = 1 / (k - 1) if k > 2 else 0.5
    return max(0.0, (rate - chance) / (1 - chance))


def label_mode(rate: float | None, k: int) -> str | None:
    norm = follow_normalized(rate, k)
    return None if norm is None else ("label-following" if norm > FOLLOWING else "engaged")


def _value(entry: dict | None) -> float | None:
    return None if not entry else entry.get("value")


def judge_modes(res: dict, k_of: dict[str, int], profile: dict | None = None) -> dict:
    """Modes of one judge from its audit result (``audit_judge``), each attribute's class count and how it answered
    (``profile``, :func:`answer_profile`): a cell failing the parse-rate or entropy gate gets ``not answering`` or
    ``constant`` instead of a mode (without a profile no gate is applied). ``thresholds`` records the gates."""
    profile = profile or {"labels": {}, "pairwise": {}}
    out: dict = {"pairwise": {}, "labels": {}, "profile": profile,
                 "thresholds": {"min_parse_rate": MIN_PARSE_RATE, "min_label_entropy": MIN_LABEL_ENTROPY}}
    formats = set(res.get("lock", {})) | set(profile["pairwise"])
    for fmt in sorted(formats):
        tasks = set(res.get("lock", {}).get(fmt, {})) | set(profile["pairwise"].get(fmt, {}))
        cells = {t: gate(profile["pairwise"].get(fmt, {}).get(t), with_entropy=False) or pairwise_mode(
                     _value(res.get("lock", {}).get(fmt, {}).get(t)),
                     _value(res.get("gold_aligned", {}).get(fmt, {}).get(t))) for t in sorted(tasks)}
        out["pairwise"][fmt] = {"tasks": cells, "mode": overall_mode(cells)}
    attributes = set(res.get("copy", {})) | set(res.get("rf", {})) | set(res.get("follow_cue", {}))
    for attribute in sorted(attributes):
        k = int(k_of.get(attribute, 0))
        gated = gate(profile["labels"].get(attribute))
        if gated:  # no label channel is read off a judge that does not answer, or answers one label
            out["labels"][attribute] = {"mode": gated, "answers": profile["labels"][attribute]}
            continue
        channels = {}
        copy = _value(res.get("copy", {}).get(attribute, {}).get("wrong_audio"))
        if copy is not None:
            channels["blueprint"] = {"mode": label_mode(copy, k), "rate": copy, "cell": "wrong_audio"}
        rf = {p: _value(e) for p, e in res.get("rf", {}).get(attribute, {}).items() if _value(e) is not None}
        if rf:
            most = max(rf, key=rf.get)
            channels["reference"] = {"mode": label_mode(rf[most], k), "rate": rf[most], "cell": most}
        cue = {c: _value(e) for c, e in res.get("follow_cue", {}).get(attribute, {}).items()
               if c in ("conf_spec", "conf_ref") and _value(e) is not None}
        if cue:
            most = max(cue, key=cue.get)
            channels["cue_conflict"] = {"mode": label_mode(cue[most], k), "rate": cue[most], "cell": most}
        modes = {c["mode"] for c in channels.values()}
        channels["mode"] = "label-following" if "label-following" in modes else ("engaged" if modes else None)
        out["labels"][attribute] = channels
    return out


def majority_vote(pred: pd.DataFrame) -> pd.DataFrame:
    """One label per id: the answer most runs gave (an unparseable answer is an answer too); ties go to the answer
    given in the earliest run."""
    frame = pred.assign(_answer=pred["label"].astype(object).where(pred["label"].notna(), "\0none"))
    frame = frame.sort_values(["id", "run"], kind="stable")
    counts = frame.groupby(["id", "_answer"], sort=False).agg(n=("run", "size"), first=("run", "min")).reset_index()
    counts = counts.sort_values(["id", "n", "first"], ascending=[True, False, True], kind="stable")
    best = counts.drop_duplicates("id")
    label = [None if a == "\0none" else a for a in best["_answer"]]
    return pd.DataFrame({"id": best["id"].to_numpy(), "label": pd.Series(label, dtype=object), "run": 0})


def leaves(result: dict, path: tuple = ()) -> dict[tuple, dict]:
    """Every estimate leaf ({value, ci, n}) of an audit result, keyed by its path."""
    out = {}
    for key, value in result.items():
        if isinstance(value, dict) and "value" in value and "n" in value:
            out[(*path, key)] = value
        elif isinstance(value, dict):
            out.update(leaves(value, (*path, key)))
    return out


def flatten(result: dict, path: tuple = ()) -> dict[tuple, float | None]:
    """Every estimate leaf's value, keyed by its path."""
    return {key: entry["value"] for key, entry in leaves(result, path).items()}


def stability_table(pooled: dict, per_run: dict[int, dict], majority: dict, min_n: int = MIN_STABILITY_N) -> dict:
    """Per cell (``/``-joined path): values per run, range, pooled value, majority value and shift, its ``n``
    (items) and whether it is ``adequate`` (n >= ``min_n``); and the largest range and shift over the adequate cells
    with their cells. ``too_few`` counts the cells below ``min_n``."""
    pooled_f = leaves(pooled)
    runs_f = {r: flatten(res) for r, res in per_run.items()}
    major_f = flatten(majority)
    cells = {}
    for key, entry in pooled_f.items():
        value = entry["value"]
        vals = [runs_f[r].get(key) for r in sorted(runs_f)]
        finite = [v for v in vals if v is not None]
        rng = max(finite) - min(finite) if len(finite) > 1 else None
        maj = major_f.get(key)
        shift = None if maj is None or value is None else maj - value
        n = entry.get("n")
        cells["/".join(map(str, key))] = {"runs": vals, "range": rng, "pooled": value, "majority": maj,
                                          "shift": shift, "n": n, "adequate": bool(n is not None and n >= min_n)}

    def worst(field: str) -> dict:
        scored = [(abs(c[field]), k) for k, c in cells.items() if c[field] is not None and c["adequate"]]
        if not scored:
            return {"value": None, "cell": None}
        top = max(scored)
        return {"value": top[0], "cell": top[1]}

    return {"runs": len(per_run), "cells": cells, "max_range": worst("range"), "max_abs_shift": worst("shift"),
            "min_n": min_n, "adequate": sum(c["adequate"] for c in cells.values()),
            "too_few": sum(not c["adequate"] for c in cells.values())}
