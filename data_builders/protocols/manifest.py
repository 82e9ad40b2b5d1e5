"""Read a labelled clip set for the judge-protocol probes.

One row per (clip, attribute): ``id``, ``audio`` (relative to the manifest's folder, or absolute), ``attribute``,
``label``, and optionally ``transcript``, ``speaker``, ``recording`` (the session or video a clip was cut from: a
speaker triplet's same-speaker candidate then comes from another recording), ``mos`` (naturalness), ``specialist`` (a
specialist model's top-1 prediction for the attribute). A clip may appear once per attribute.

Labels of one attribute that differ only in case ("Angry", "angry") are one class: every spelling is read as the
most frequent one (ties: the first in the file), and the returned frame's ``attrs["notes"]`` says so. One audio (the
same file, or identical bytes under two names) with two labels of one attribute is an error naming both rows; with
one label it is kept and noted.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.tables import fail_at, read_records, resolve_media_path

ATTRIBUTES = ("emotion", "language", "naturalness", "speaker", "gender", "accent", "age")
OPTIONAL = ("transcript", "speaker", "recording", "mos", "specialist")


def read_clip_manifest(path: str | Path) -> pd.DataFrame:
    """Validated rows: id, audio (absolute path), attribute, label, transcript, speaker, recording, mos, specialist,
    row."""
    path = Path(path)
    raw, rows = read_records(path)
    raw = raw.astype(object).where(raw.notna(), "")
    missing = [c for c in ("id", "audio", "attribute", "label") if c not in raw.columns]
    if missing:
        raise InputError(f"missing column(s) {missing}; the manifest has {list(raw.columns)}", file=path)
    if raw.empty:
        raise InputError("no rows", file=path)
    out = pd.DataFrame({"row": rows})
    for col in ("id", "attribute", "label", "transcript", "speaker", "recording", "specialist"):
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
    out.attrs["notes"] = _one_spelling_per_label(out)
    for attribute in sorted(set(out.loc[out["specialist"] != "", "attribute"])):
        labels = set(out.loc[out["attribute"] == attribute, "label"])
        stray = (out["attribute"] == attribute) & (out["specialist"] != "") & ~out["specialist"].isin(labels)
        fail_at(stray, f"specialist label is not a {attribute} label of this manifest ({sorted(labels)})", path, rows,
                "specialist", out["specialist"])
    out.attrs["notes"] += _same_audio(out, path)
    return out


def _one_spelling_per_label(out: pd.DataFrame) -> list[str]:
    """Read labels (and specialist labels) that differ only in case as one spelling per attribute; notes on it."""
    notes = []
    for attribute in sorted(set(out["attribute"])):
        rows = out["attribute"] == attribute
        spellings: dict[str, dict[str, int]] = {}  # casefolded -> spelling -> count, in file order
        for label in out.loc[rows, "label"]:
            counts = spellings.setdefault(label.casefold(), {})
            counts[label] = counts.get(label, 0) + 1
        canonical = {key: max(counts, key=counts.get) for key, counts in spellings.items()}
        for key, counts in spellings.items():
            if len(counts) > 1:
                others = [s for s in counts if s != canonical[key]]
                first = out.loc[rows & out["label"].isin(others), "row"].iloc[0]
                notes.append(f"{attribute}: labels {', '.join(repr(s) for s in counts)} differ only in case; all "
                             f"are read as {canonical[key]!r} (first other spelling at row {first})")
        out.loc[rows, "label"] = [canonical[v.casefold()] for v in out.loc[rows, "label"]]
        spec = rows & (out["specialist"] != "")
        out.loc[spec, "specialist"] = [canonical.get(v.casefold(), v) for v in out.loc[spec, "specialist"]]
    return notes


def _same_audio(out: pd.DataFrame, path: Path) -> list[str]:
    """Refuse one audio (the same file, or identical bytes under another name) given two labels of one attribute;
    the same audio listed twice with one label is kept and noted (it counts twice in every statistic)."""
    import hashlib

    digests: dict[str, str | None] = {}
    for audio in out["audio"].unique():
        try:
            digests[audio] = hashlib.sha256(Path(audio).read_bytes()).hexdigest()
        except OSError:  # a missing or unreadable file is refused by name when the clips are decoded
            digests[audio] = None
    key = out["audio"].map(digests)
    notes = []
    for attribute in sorted(set(out["attribute"])):
        rows = out[(out["attribute"] == attribute) & key.notna()]
        for _, group in rows.groupby(key[rows.index], sort=False):
            if len(group) < 2:
                continue
            first = group.iloc[0]
            other = group[group["label"] != first["label"]]
            if len(other):
                o = other.iloc[0]
                raise InputError(f"the same audio is {attribute} '{first['label']}' in row {first['row']} (id "
                                 f"{first['id']!r}) and '{o['label']}' in row {o['row']} (id {o['id']!r}): one "
                                 f"recording cannot have two {attribute} labels; fix the labels or drop one row",
                                 file=path, row=int(o["row"]), column="label")
            notes.append(f"{attribute}: the same audio is listed {len(group)} times with label "
                         f"{first['label']!r} (ids {', '.join(map(repr, group['id']))}); each copy counts")
    return notes
