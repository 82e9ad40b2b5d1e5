"""Read a labelled clip set for the judge-protocol probes.

One row per (clip, attribute): ``id``, ``audio`` (relative to the manifest's folder, or absolute), ``attribute``,
``label``, and optionally ``transcript``, ``speaker``, ``mos`` (naturalness), ``specialist`` (a specialist model's
top-1 prediction for the attribute). A clip may appear once per attribute.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.tables import fail_at, read_records, resolve_media_path

ATTRIBUTES = ("emotion", "language", "naturalness", "speaker", "gender", "accent", "age")
OPTIONAL = ("transcript", "speaker", "mos", "specialist")


def read_clip_manifest(path: str | Path) -> pd.DataFrame:
    """Validated rows: id, audio (absolute path), attribute, label, transcript, speaker, mos, specialist, row."""
    path = Path(path)
    raw, rows = read_records(path)
    raw = raw.astype(object).where(raw.notna(), "")
    missing = [c for c in ("id", "audio", "attribute", "label") if c not in raw.columns]
    if missing:
        raise InputError(f"missing column(s) {missing}; the manifest has {list(raw.columns)}", file=path)
    if raw.empty:
        raise InputError("no rows", file=path)
    out = pd.DataFrame({"row": rows})
    for col in ("id", "attribute", "label", "transcript", "speaker", "specialist"):
        out[col] = raw[col].astype(str).str.strip() if col in raw.columns else ""
    for col in ("id", "label"):
        fail_at(out[col] == "", f"expected a non-empty {col}", path, rows, col)
    out["attribute"] = out["attribute"].str.lower()
    fail_at(~out["attribute"].isin(ATTRIBUTES), f"unknown attribute; expected one of {', '.join(ATTRIBUTES)}", path,
            rows, "attribute", raw["attribute"])
    fail_at(out.duplicated(["id", "attribute"]), "duplicate (id, attribute)", path, rows, "id", out["id"])
    out["audio"] = [str(resolve_media_path(str(v), path, r, "audio")) for v, r in zip(raw["audio"], rows, strict=True)]
    mos = pd.to_numeric(raw["mos"].replace("", np.nan), errors="coerce") if "mos" in raw.columns else np.nan
    out["mos"] = mos
    if "mos" in raw.columns:
        fail_at(out["mos"].isna() & (raw["mos"].astype(str).str.strip() != ""), "expected a number", path, rows,
                "mos", raw["mos"])
    fail_at((out["attribute"] == "naturalness") & out["mos"].isna(),
            "naturalness rows need a numeric mos (the pairwise gold score)", path, rows, "mos")
    for attribute in sorted(set(out.loc[out["specialist"] != "", "attribute"])):
        labels = set(out.loc[out["attribute"] == attribute, "label"])
        stray = (out["attribute"] == attribute) & (out["specialist"] != "") & ~out["specialist"].isin(labels)
        fail_at(stray, f"specialist label is not a {attribute} label of this manifest ({sorted(labels)})", path, rows,
                "specialist", out["specialist"])
    return out
