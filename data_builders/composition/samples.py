"""Composition / counterfactual QA samples (C3PO): reading, filtering and the bucketed, template-diverse selection.

Schema (JSONL / CSV / Parquet, one row per sample): ``id, template_id, template_name, category`` (IC: information
composition, CC: counterfactual conflict), ``tier`` (1-4, the number of grounded modalities), media ``video`` /
``audio`` / ``image`` (any non-empty subset; paths relative to the samples file or absolute), ``question``,
``answer``, ``evidence_modality``, ``generation_confidence`` (1-5), ``auditor_decision`` (ACCEPT / REJECT),
``difficulty`` (1-10, or -1 when the media are too poor to judge). Empty media cells (None / NaN / "") are absent.
Optional: the generator's ``self_audit`` (an object, or flat columns, of ``mute_test_passed``, ``blind_test_passed``,
``prior_test_passed``, ``ambiguity_check_passed``); a sample with a false flag is never selected. Optional
``base_media_fits`` (false when the generator said its base media does not fit the template): never selected.

Refused, naming the row: for a selectable sample (accepted, difficulty not -1), a media file that is not what its
column says or does not decode (``media_check``; a missing file is refused for every row) or a tier above the
grounded streams the row's media can give (each file, plus a video's own soundtrack: "tier 2" with only an
image); a template id with two names or a name with two ids, names that differ only in case or punctuation, a
template used under both categories, a template id in the paper's ``D_T<k>_<n>`` / ``C_T<k>_<n>`` form (D:
dispersal = IC, C: counterfactual = CC) or a template the paper names under the other category; with a templates
table (``template_id, template_name[, category]``), any template it does not list.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.data_builders.composition.media_check import CHECKS, MediaProblem
from omniaudit.errors import InputError
from omniaudit.tables import fail_at, parse_bool, read_records, resolve_media_path

CATEGORIES = ("IC", "CC")
MEDIA = ("video", "audio", "image")
REQUIRED = ("id", "template_id", "template_name", "category", "tier", "question", "answer", "evidence_modality",
            "generation_confidence", "auditor_decision", "difficulty")
BUCKET_EDGES = (2.5, 5.0, 7.5)  # buckets 1: < 2.5, 2: 2.5-4.9, 3: 5.0-7.4, 4: >= 7.5 (the paper's)
# templates whose category the C3PO paper states (+ the embedded synthetic ones); other names are allowed
KNOWN_TEMPLATES = {"CausalMisattribution": "CC", "DisclaimedEvidence": "CC", "AcousticSceneMismatch": "CC",
                   "QuantitativeFabrication": "CC", "ProcedureVsEvidence": "CC", "InstructionalGapDetection": "IC",
                   "SpokenSelectorCount": "IC", "SpokenPositionColour": "IC", "ContradictedCount": "CC"}
SELF_AUDIT = ("mute_test_passed", "blind_test_passed", "prior_test_passed", "ambiguity_check_passed")
PAPER_TEMPLATE_ID = r"^([DC])_T\d+_\d+$"  # D_T1_001 (dispersal: IC), C_T2_004 (counterfactual: CC)


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


def media_path(value) -> str | None:
    """A media cell as a path string, or None for an absent medium (None, NaN, pandas NA, empty)."""
    if value is None or (pd.api.types.is_scalar(value) and not isinstance(value, str) and pd.isna(value)):
        return None
    return str(value) if str(value).strip() else None


def _integer(values: pd.Series, raw: pd.DataFrame, column: str, path: Path, rows: list[int]) -> pd.Series:
    fail_at(values != values.round(), "expected an integer", path, rows, column, raw[column])
    return values.astype(int)


def read_templates(path: str | Path) -> pd.DataFrame:
    """A templates table: ``template_id``, ``template_name`` and optionally ``category`` (IC / CC), one per row."""
    path = Path(path)
    raw, rows = read_records(path)
    missing = [c for c in ("template_id", "template_name") if c not in raw.columns]
    if missing:
        raise InputError(f"missing column(s) {missing}; the file has {list(raw.columns)}", file=path)
    cols = ["template_id", "template_name"] + (["category"] if "category" in raw.columns else [])
    table = pd.DataFrame({c: raw[c].where(raw[c].notna(), "").astype(str).str.strip() for c in cols})
    for c in cols:
        fail_at(table[c] == "", "expected a non-empty value", path, rows, c)
    if "category" in table:
        table["category"] = table["category"].str.upper()
        fail_at(~table["category"].isin(CATEGORIES), f"expected one of {', '.join(CATEGORIES)}", path, rows,
                "category", raw["category"])
    fail_at(table["template_id"].duplicated(), "duplicate template_id", path, rows, "template_id",
            table["template_id"])
    return table


def _check_templates(out: pd.DataFrame, path: Path, rows: list[int], templates: pd.DataFrame | None) -> None:
    names = out.groupby("template_id")["template_name"].nunique()
    fail_at(out["template_id"].isin(names[names > 1].index),
            "template_id is used with more than one template_name (an unknown or mistyped template?)", path, rows,
            "template_name", out["template_name"])
    ids = out.groupby("template_name")["template_id"].nunique()
    fail_at(out["template_name"].isin(ids[ids > 1].index),
            "template_name is used with more than one template_id (an unknown or mistyped template id?)", path, rows,
            "template_id", out["template_id"])
    folded = out["template_name"].str.lower().str.replace(r"[\W_]+", "", regex=True)
    spellings = out.groupby(folded)["template_name"].nunique()
    fail_at(folded.isin(spellings[spellings > 1].index),
            "template_name differs from another template's only in case, spaces or punctuation (one template "
            "spelled two ways?)", path, rows, "template_name", out["template_name"])
    categories = out.groupby("template_id")["category"].nunique()
    fail_at(out["template_id"].isin(categories[categories > 1].index),
            "template is used under both categories IC and CC (a template is either composition or conflict)", path,
            rows, "category", out["category"])
    letter = out["template_id"].str.extract(PAPER_TEMPLATE_ID, expand=False)
    fail_at(letter.notna() & (letter.map({"D": "IC", "C": "CC"}) != out["category"]),
            "template_id follows the paper's D_T<k>_<n> (dispersal: IC) / C_T<k>_<n> (counterfactual: CC) form but "
            "the row's category is the other one", path, rows, "category", out["category"])
    known = out["template_name"].map(KNOWN_TEMPLATES)
    wrong = (known.notna() & (known != out["category"])).to_numpy()
    if wrong.any():
        i = int(np.argmax(wrong))
        raise InputError(f"{out.at[i, 'template_name']} is a {known[i]} template (C3PO), not {out.at[i, 'category']}",
                         file=path, row=rows[i], column="category", value=out.at[i, "category"])
    if templates is None:
        return
    listed = out.merge(templates.drop_duplicates("template_id"), on="template_id", how="left",
                       suffixes=("", "_listed"), indicator=True)
    fail_at(listed["_merge"] != "both", "unknown template_id: not in the templates table", path, rows,
            "template_id", out["template_id"])
    fail_at(listed["template_name_listed"] != listed["template_name"],
            "template_name differs from the templates table's name for this template_id", path, rows,
            "template_name", out["template_name"])
    if "category_listed" in listed:
        fail_at(listed["category_listed"] != listed["category"],
                "category differs from the templates table's category for this template", path, rows, "category",
                out["category"])


def read_samples(path: str | Path, templates: str | Path | pd.DataFrame | None = None) -> pd.DataFrame:
    """Validated samples; media paths resolved and their files checked (``video_has_audio``: whether a video
    carries its own soundtrack); every problem names the file, row and column. ``templates``: an optional table of
    the known templates (file or DataFrame, see ``read_templates``); without it, templates are checked for
    consistency only."""
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
    if templates is not None and not isinstance(templates, pd.DataFrame):
        templates = read_templates(templates)
    _check_templates(out, path, rows, templates)
    out["tier"] = _integer(_number(raw, "tier", path, rows, 1, 4), raw, "tier", path, rows)
    out["generation_confidence"] = _integer(_number(raw, "generation_confidence", path, rows, 1, 5), raw,
                                            "generation_confidence", path, rows)
    difficulty = _number(raw, "difficulty", path, rows, 1, 10, allowed=(-1,))
    fail_at(difficulty != difficulty.round(), "expected an integer difficulty (the auditor's score)", path, rows,
            "difficulty", raw["difficulty"])
    out["difficulty"] = difficulty.astype(int)
    out["self_audit_passed"] = _self_audit(raw, path, rows)
    out["base_media_fits"] = _flag(raw, "base_media_fits", path, rows)
    given = {m: [media_path(v) for v in (raw[m] if m in raw.columns else [None] * len(raw))] for m in MEDIA}
    for m in MEDIA:
        # object dtype: pandas 3 would infer its string dtype and turn an absent medium (None) into NaN
        out[m] = pd.Series([str(resolve_media_path(v, path, r, m)) if v is not None else None
                            for v, r in zip(given[m], rows, strict=True)], index=out.index, dtype=object)
    fail_at(out[list(MEDIA)].isna().all(axis=1), "a sample needs at least one of video, audio, image", path, rows)
    # media are decoded only for rows the build can select: a rejected or ungradable (-1) sample may well have the
    # poor media it was rejected for, and is never written
    eligible = ((out["auditor_decision"] == "ACCEPT") & (out["difficulty"] != -1)).to_numpy()
    video_audio = []
    for i, r in enumerate(rows):
        for m in MEDIA:
            if out.at[i, m] is None or not eligible[i]:
                continue
            try:
                has_audio = CHECKS[m](out.at[i, m])
            except MediaProblem as exc:
                raise InputError(f"{m} file {out.at[i, m]}: {exc}", file=path, row=r, column=m,
                                 value=given[m][i]) from exc
            if m == "video":
                video_audio.append(bool(has_audio))
        if out.at[i, "video"] is None or not eligible[i]:
            video_audio.append(False)
    out["video_has_audio"] = video_audio
    streams = out[list(MEDIA)].notna().sum(axis=1) + out["video_has_audio"]
    over = ((out["tier"] > streams) & eligible).to_numpy()
    if over.any():
        i = int(np.argmax(over))
        has = [m for m in MEDIA if out.at[i, m] is not None] + (["the video's soundtrack"]
                                                                 if out.at[i, "video_has_audio"] else [])
        raise InputError(f"tier {out.at[i, 'tier']} counts {out.at[i, 'tier']} grounded modalities, but the row's "
                         f"media give {streams[i]} ({', '.join(has)}); a missing medium or a wrong tier?", file=path,
                         row=rows[i], column="tier", value=raw.at[i, "tier"])
    return out


def _flag(raw: pd.DataFrame, column: str, path: Path, rows: list[int]) -> pd.Series:
    """An optional true / false column; True where absent or empty."""
    values = []
    for i, r in enumerate(rows):
        value = raw.at[i, column] if column in raw.columns else ""
        try:
            values.append(parse_bool(value) is not False)
        except ValueError:
            raise InputError("expected true or false", file=path, row=r, column=column, value=value) from None
    return pd.Series(values, index=raw.index, dtype=bool)


def _self_audit(raw: pd.DataFrame, path: Path, rows: list[int]) -> pd.Series:
    """Whether the generator's self-audit passed every check (C3PO appendix: ``self_audit`` with
    ``mute_test_passed``, ``blind_test_passed``, ``prior_test_passed``, ``ambiguity_check_passed``), read from a
    ``self_audit`` object (JSON text or dict) or from flat columns of those names; True where none is given."""
    passed = []
    for i, r in enumerate(rows):
        flags = {}
        cell = raw.at[i, "self_audit"] if "self_audit" in raw.columns else ""
        if isinstance(cell, str) and cell.strip():
            try:
                cell = json.loads(cell)
            except ValueError:
                cell = None
            if not isinstance(cell, dict):
                raise InputError("expected the generator's self-audit as a JSON object of *_passed flags", file=path,
                                 row=r, column="self_audit", value=raw.at[i, "self_audit"])
        if isinstance(cell, dict):
            flags.update({k: cell.get(k) for k in SELF_AUDIT if k in cell})
        flags.update({k: raw.at[i, k] for k in SELF_AUDIT if k in raw.columns})
        row_ok = True
        for key, value in flags.items():
            try:
                flag = parse_bool(value)
            except ValueError:
                raise InputError("expected a self-audit flag true or false", file=path, row=r, column=key,
                                 value=value) from None
            row_ok &= flag is not False
        passed.append(row_ok)
    return pd.Series(passed, index=raw.index, dtype=bool)


def eligible(samples: pd.DataFrame, min_confidence: int = 1) -> pd.DataFrame:
    """Auditor-accepted, gradable samples whose generator's self-audit passed (``self_audit_passed``, when read)
    and whose ``generation_confidence`` is at least ``min_confidence`` (C3PO: the generator's 1-5 score "is later
    used to filter the generated samples"), with their difficulty ``bucket``."""
    if not 1 <= min_confidence <= 5:
        raise InputError("expected a minimum generation confidence in 1-5", value=min_confidence)
    keep = ((samples["auditor_decision"] == "ACCEPT") & (samples["difficulty"] != -1)
            & (samples["generation_confidence"] >= min_confidence))
    for flag in ("self_audit_passed", "base_media_fits"):
        if flag in samples.columns:
            keep &= samples[flag].astype(bool)
    kept = samples[keep].copy()
    kept["bucket"] = kept["difficulty"].map(bucket)
    return kept


def select(samples: pd.DataFrame, target: int = 25, seed: int = 0, min_confidence: int = 1) -> pd.DataFrame:
    """The :func:`eligible` samples, per category x difficulty bucket up to ``target``, drawn round-robin over
    templates (seeded order) so that no template is over-represented in a bucket."""
    kept = eligible(samples, min_confidence)
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
