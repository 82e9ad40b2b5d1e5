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
from omniaudit.tables import read_records, resolve_media_path

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
        empty = out[col] == ""
        if empty.any():
            i = int(np.argmax(empty.to_numpy()))
            raise InputError(f"expected a non-empty {col}", file=path, row=rows[i], column=col)
    out["attribute"] = out["attribute"].str.lower()
    unknown = ~out["attribute"].isin(ATTRIBUTES)
    if unknown.any():
        i = int(np.argmax(unknown.to_numpy()))
        raise InputError(f"unknown attribute; expected one of {', '.join(ATTRIBUTES)}", file=path, row=rows[i],
                         column="attribute", value=raw["attribute"].iloc[i])
    dup = out.duplicated(["id", "attribute"])
    if dup.any():
        i = int(np.argmax(dup.to_numpy()))
        raise InputError("duplicate (id, attribute)", file=path, row=rows[i], column="id", value=out["id"].iloc[i])
    out["audio"] = [str(resolve_media_path(str(v), path, r, "audio")) for v, r in zip(raw["audio"], rows, strict=True)]
    mos = pd.to_numeric(raw["mos"].replace("", np.nan), errors="coerce") if "mos" in raw.columns else np.nan
    out["mos"] = mos
    if "mos" in raw.columns:
        bad = out["mos"].isna() & (raw["mos"].astype(str).str.strip() != "")
        if bad.any():
            i = int(np.argmax(bad.to_numpy()))
            raise InputError("expected a number", file=path, row=rows[i], column="mos", value=raw["mos"].iloc[i])
    need_mos = (out["attribute"] == "naturalness") & out["mos"].isna()
    if need_mos.any():
        i = int(np.argmax(need_mos.to_numpy()))
        raise InputError("naturalness rows need a numeric mos (the pairwise gold score)", file=path, row=rows[i],
                         column="mos")
    for attribute, group in out[out["specialist"] != ""].groupby("attribute"):
        labels = set(out.loc[out["attribute"] == attribute, "label"])
        stray = ~group["specialist"].isin(labels)
        if stray.any():
            i = group.index[int(np.argmax(stray.to_numpy()))]
            raise InputError(f"specialist label is not a {attribute} label of this manifest ({sorted(labels)})",
                             file=path, row=rows[i], column="specialist", value=out["specialist"].iloc[i])
    return out
