"""Composition / counterfactual QA samples (C3PO): reading, filtering and the bucketed, template-diverse selection.

Schema (JSONL / CSV / Parquet, one row per sample): ``id, template_id, template_name, category`` (IC: information
composition, CC: counterfactual conflict), ``tier`` (number of grounded modalities), media ``video`` / ``audio`` /
``image`` (any non-empty subset; paths relative to the samples file or absolute), ``question``, ``answer``,
``evidence_modality``, ``generation_confidence`` (1-5), ``auditor_decision`` (ACCEPT / REJECT), ``difficulty``
(1-10, or -1 when the media are too poor to judge).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.tables import fail_at, read_records, resolve_media_path

CATEGORIES = ("IC", "CC")
MEDIA = ("video", "audio", "image")
REQUIRED = ("id", "template_id", "template_name", "category", "tier", "question", "answer", "evidence_modality",
            "generation_confidence", "auditor_decision", "difficulty")
BUCKET_EDGES = (2.5, 5.0, 7.5)  # buckets 1: < 2.5, 2: 2.5-4.9, 3: 5.0-7.4, 4: >= 7.5 (the paper's)


def bucket(difficulty: float) -> int:
    """Difficulty bucket 1-4 (C3PO appendix: < 2.5, 2.5-4.9, 5.0-7.4, >= 7.5)."""
    return int(np.searchsorted(BUCKET_EDGES, difficulty, side="right")) + 1


def _number(raw: pd.DataFrame, column: str, path: Path, rows: list[int], low: float, high: float,
            allowed: tuple = ()) -> pd.Series:
    values = pd.to_numeric(raw[column].replace("", np.nan), errors="coerce")
    bad = values.isna() | ~(values.between(low, high) | values.isin(allowed))
    span = f"a number in [{low:g}, {high:g}]" + (f" or {allowed}" if allowed else "")
    fail_at(bad, f"expected {span}", path, rows, column, raw[column])
    return values


def read_samples(path: str | Path) -> pd.DataFrame:
    """Validated samples; media paths resolved; every problem names the file, row and column."""
    path = Path(path)
    raw, rows = read_records(path)
    raw = raw.astype(object).where(raw.notna(), "")
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise InputError(f"missing column(s) {missing}; the file has {list(raw.columns)}", file=path)
    if raw.empty:
        raise InputError("no rows", file=path)
    out = pd.DataFrame({"row": rows})
    for col in ("id", "template_id", "template_name", "question", "answer", "evidence_modality",
                "auditor_decision", "category"):
        out[col] = raw[col].astype(str).str.strip()
        fail_at(out[col] == "", "expected a non-empty value" + (" (an answer)" if col == "answer" else ""), path,
                rows, col)
    out["category"] = out["category"].str.upper()
    for col, allowed in (("category", CATEGORIES), ("auditor_decision", ("ACCEPT", "REJECT"))):
        fail_at(~out[col].str.upper().isin(allowed), f"expected one of {', '.join(allowed)}", path, rows, col,
                raw[col])
    out["auditor_decision"] = out["auditor_decision"].str.upper()
    fail_at(out["id"].duplicated(), "duplicate id", path, rows, "id", out["id"])
    names = out.groupby("template_id")["template_name"].nunique()
    fail_at(out["template_id"].isin(names[names > 1].index),
            "template_id is used with more than one template_name (an unknown or mistyped template?)", path, rows,
            "template_name", out["template_name"])
    out["tier"] = _number(raw, "tier", path, rows, 0, 4).astype(int)
    out["generation_confidence"] = _number(raw, "generation_confidence", path, rows, 1, 5).astype(int)
    difficulty = _number(raw, "difficulty", path, rows, 1, 10, allowed=(-1,))
    fail_at(difficulty != difficulty.round(), "expected an integer difficulty (the auditor's score)", path, rows,
            "difficulty", raw["difficulty"])
    out["difficulty"] = difficulty.astype(int)
    for m in MEDIA:
        cells = raw[m] if m in raw.columns else pd.Series("", index=raw.index)
        out[m] = [str(resolve_media_path(str(v), path, r, m)) if str(v).strip() else None
                  for v, r in zip(cells, rows, strict=True)]
    fail_at(out[list(MEDIA)].isna().all(axis=1), "a sample needs at least one of video, audio, image", path, rows)
    return out


def select(samples: pd.DataFrame, target: int = 25, seed: int = 0) -> pd.DataFrame:
    """Auditor-accepted, gradable samples; per category x difficulty bucket up to ``target``, drawn round-robin over
    templates (seeded order) so that no template is over-represented in a bucket."""
    kept = samples[(samples["auditor_decision"] == "ACCEPT") & (samples["difficulty"] != -1)].copy()
    kept["bucket"] = kept["difficulty"].map(bucket)
    rng = np.random.default_rng(seed)
    chosen = []
    for (_, _), cell in kept.groupby(["category", "bucket"], sort=True):
        queues = {t: list(g.index[rng.permutation(len(g))]) for t, g in cell.groupby("template_id", sort=True)}
        order = [sorted(queues)[k] for k in rng.permutation(len(queues))]  # seeded: no template always last
        picked: list[int] = []
        while len(picked) < target and any(queues.values()):
            for t in order:
                if queues[t] and len(picked) < target:
                    picked.append(queues[t].pop(0))
        chosen.extend(picked)
    return kept.loc[sorted(chosen)].reset_index(drop=True)
