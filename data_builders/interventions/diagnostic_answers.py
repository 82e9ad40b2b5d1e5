"""A model's answers to an intervention dataset's diagnostic questions, read and scored as the interventions audit
scores them (Thud §3.1-3.2): structured fields from the predictions file, or read from its free-form answer (the
rule-based reader :mod:`~.extract` first, then an LLM ``extractor`` for what the rules leave unread), and whether each
answer is right (:func:`answers_correct`: a Shift answer needs "not synchronized" and the right direction). The
audit (:mod:`omniaudit.evaluation.interventions.audit`) and the SFT-policy negatives (:mod:`~.sp_pairs`) both score
answers here."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.answer_language import language
from omniaudit.data_builders.interventions.extract import extract
from omniaudit.data_builders.interventions.extract_gloss import GLOSSED
from omniaudit.data_builders.interventions.extract_llm import llm_extract
from omniaudit.data_builders.interventions.extract_phrases import unread
from omniaudit.errors import InputError
from omniaudit.predictions import read_prediction_file
from omniaudit.runs import run_order
from omniaudit.tables import fail_at, parse_bool

DIAGNOSTIC_COLUMNS = ["id", "source_id", "intervention", "offset_s", "dimension", "target_synced",
                      "target_direction", "target_offset_s", "target_sound_present", "target_match"]
STRUCTURED = ("synced", "direction", "offset_s", "audio_state", "sound_present", "match")
TEXT_COLUMNS = ("response", "raw")  # the free-form answer: ``response``, or ``raw`` as ``omniaudit judge`` writes it


def _bool(value: object, path: Path, row: int, column: str) -> bool | None:
    try:
        return parse_bool(value)
    except ValueError:
        raise InputError("expected true/false", file=path, row=row, column=column, value=value) from None


def read_predictions(path: str | Path, diagnostic: pd.DataFrame, extractor: str | None = None,
                     dataset: str | Path | None = None, partial: bool = False, **judge_options) -> pd.DataFrame:
    """One row per diagnostic row (and run): structured fields from the file, or extracted from its free-form answer:
    by the rules first, then, for the answers they leave unread, by the judge ``extractor`` (any ``omniaudit judge``
    SPEC, as the paper's GPT extractor), which also reads a fixed sample of rule-read answers to measure agreement
    (:func:`agreement_sample`, reported in ``.attrs["label_sources"]``).

    The free-form answer is ``response``, or ``raw`` as ``omniaudit judge`` writes it (its ``label`` / ``parsed``
    are about closed option sets and are ignored). With a ``run`` column (``omniaudit judge --runs N``) the result
    has one row per diagnostic row and run, with ``run`` (text): a (row, run) the file lacks is unanswered. The
    sampling settings the file records (``temperature``, ``top_p``, ``seed``, ...) are in ``.attrs["sampling"]``.

    ``text`` is the free-form answer as given ('' where there is none).

    Every prediction id must exist in the dataset (a mismatch names the id) and appear once (per run); dataset rows
    without a prediction get all fields None and ``answered`` False. The file is read and its provenance checked by
    :func:`~omniaudit.predictions.read_prediction_file` (this build of ``dataset``, one whole run unless
    ``partial``); the provenance is kept in ``.attrs["provenance"]``.
    """
    path = Path(path)
    dims = diagnostic.set_index("id")["dimension"]
    read = read_prediction_file(path, dataset, ("diagnostic",), partial, needs=(*TEXT_COLUMNS, *STRUCTURED),
                                answer_columns=TEXT_COLUMNS, known=dims.index,
                                unknown="id not in the dataset (do the predictions belong to this dataset?)",
                                expected=f"expected a 'response' column (or 'raw', as `omniaudit judge` writes "
                                         f"it) or structured fields {STRUCTURED}, and an 'id' column")
    ids, runs, rows = read.ids, read.runs, read.rows
    keys = ids if runs is None else ids + "\0" + pd.Series(runs, index=ids.index)
    fail_at(keys.duplicated(), "duplicate id" if runs is None else "duplicate id in the same run", path, rows, "id",
            ids)
    records, unread_rows, rule_read, given = [], [], [], set()
    for k, (row_no, (_, rec)) in enumerate(zip(rows, read.records.iterrows(), strict=True)):
        dim = dims[ids.iloc[k]]
        fields = _given_fields(rec, dim, path, row_no)
        given |= set() if fields is None else {k}
        response = read.answers[k] if read.answers is not None else ""
        if fields is None:
            # an empty answer is unparseable, not a visual-only one; rules first, the extractor only after them
            fields = extract(dim, response) if response.strip() else {}
            row_key = ids.iloc[k] if runs is None else f"{ids.iloc[k]}#run={runs[k]}"
            if response.strip():
                (unread_rows if unread(fields) else rule_read).append((row_key, dim, response))
        records.append({"id": ids.iloc[k], **({} if runs is None else {"run": runs[k]}), "text": response,
                        **fields})
    extracted, checked = {}, []
    if extractor is not None and (unread_rows or rule_read):
        checked = agreement_sample(rule_read)
        extracted = llm_extract(unread_rows + checked, extractor, **judge_options)
    filled = {key for key, _, _ in unread_rows if key in extracted}
    key = (lambda r: r["id"]) if runs is None else (lambda r: f"{r['id']}#run={r['run']}")  # noqa: E731
    records = [{**r, **extracted[key(r)]} if key(r) in filled else r for r in records]
    for k, r in enumerate(records):
        r["read_by"] = _read_by(dims[r["id"]], r, k in given, key(r) in filled)
    label_sources = _label_sources([(dims[r["id"]], r, k in given, key(r) in filled)
                                    for k, r in enumerate(records)], checked, extracted)
    # answers left unparsed because no reader glosses their language ("language not read", not "not answering")
    unglossed = Counter(language(r["text"]) for r in records
                        if r.get(LABEL_FIELD[dims[r["id"]]]) is None and r["text"].strip())
    languages = {lang: n for lang, n in unglossed.most_common() if lang not in (*GLOSSED, "en")}
    if languages:
        label_sources["unparsed_languages"] = languages
    columns = ["id", "text", "synced", "direction", "offset_s", "audio_state", "match", "read_by"]
    if runs is None:
        pred = pd.DataFrame(records, columns=columns)
        out = diagnostic[["id"]].merge(pred, on="id", how="left")
        out["answered"] = out["id"].isin(pred["id"])
    else:
        pred = pd.DataFrame(records, columns=["run", *columns]).assign(answered=True)
        grid = pd.concat([diagnostic[["id"]].assign(run=r) for r in run_order(runs)], ignore_index=True)
        out = grid.merge(pred, on=["id", "run"], how="left")
        out["answered"] = out["answered"].eq(True)
    out.attrs["sampling"] = read.sampling
    out.attrs["provenance"] = read.provenance
    out.attrs["answer_column"] = read.answer_column
    out.attrs["label_sources"] = label_sources
    return out


LABEL_FIELD = {"sync": "synced", "existence": "audio_state", "consistency": "match"}
AGREEMENT_SAMPLE = 100  # rule-read answers also put to an --extractor, to measure how often the two agree


def agreement_sample(rows: list[tuple[str, str, str]], n: int = AGREEMENT_SAMPLE) -> list[tuple[str, str, str]]:
    """Up to ``n`` of the rule-read ``(key, dimension, response)`` rows, chosen by a hash of their key (the same rows
    on every rerun, whatever the file's order)."""
    return sorted(rows, key=lambda r: hashlib.sha256(r[0].encode()).hexdigest())[:n]


def _read_by(dim: str, fields: dict, is_given: bool, asked: bool) -> str | None:
    """What read one answer's class: ``given``, ``rule`` or ``extractor``; None when nothing did."""
    if fields.get(LABEL_FIELD[dim]) is None:
        return None
    return "given" if is_given else "extractor" if asked else "rule"


def _label_sources(rows: list[tuple[str, dict, bool, bool]], checked: list[tuple[str, str, str]],
                   extracted: dict[str, dict]) -> dict:
    """How each answer's class was obtained: ``given`` (structured fields in the file), ``rule`` (the rule-based
    reader, always first), ``extractor`` (the LLM ``--extractor``, asked only for the answers the rules leave
    unread) or ``unparsed``; with an extractor, its ``agreement`` with the rule reader on the ``checked`` sample of
    rule-read answers (:func:`agreement_sample`; sync: synchronized and direction; else the class)."""
    counts = {"given": 0, "rule": 0, "extractor": 0, "unparsed": 0}
    for dim, fields, is_given, asked in rows:
        counts[_read_by(dim, fields, is_given, asked) or "unparsed"] += 1
    out: dict = {**counts, "answers": len(rows)}
    if checked or extracted:
        both = agree = 0
        for key, dim, response in checked:
            rule, llm = extract(dim, response), extracted.get(key, {})
            names = ("synced", "direction") if dim == "sync" else (LABEL_FIELD[dim],)
            if rule.get(LABEL_FIELD[dim]) is not None and llm.get(LABEL_FIELD[dim]) is not None:
                both += 1
                agree += all(rule.get(n) == llm.get(n) for n in names)
        out["extractor_agreement"] = {"n": both, "agree": agree, "rate": agree / both if both else None}
    return out


def _given_fields(rec: pd.Series, dim: str, path: Path, row: int) -> dict | None:
    """The structured fields of ``dim`` when the row gives them, else None (use the response)."""
    get = {k: rec.get(k) for k in STRUCTURED}
    given = {k: v for k, v in get.items() if v is not None and v == v and v != ""}
    if dim == "sync" and ("synced" in given or str(given.get("direction", "")).strip().lower() in ("delay", "early")):
        direction = str(given.get("direction", "none")).strip().lower()
        if direction not in ("delay", "early", "none"):
            raise InputError("expected delay, early or none", file=path, row=row, column="direction", value=direction)
        # a direction alone ("delay") is a "not synchronized" answer; "synced" true with a direction contradicts it
        synced = _bool(given["synced"], path, row, "synced") if "synced" in given else False
        if synced and direction != "none":
            raise InputError(f"synced is true but direction says the audio is {direction}; expected direction "
                             "none (or empty) on a synchronized answer", file=path, row=row, column="direction",
                             value=direction)
        try:
            offset = float(given["offset_s"]) if "offset_s" in given else None
        except (TypeError, ValueError) as exc:
            raise InputError("expected seconds", file=path, row=row, column="offset_s",
                             value=given["offset_s"]) from exc
        if offset is not None and not np.isfinite(offset):
            raise InputError("expected a finite number of seconds", file=path, row=row, column="offset_s",
                             value=given["offset_s"])
        if offset is not None and direction != "none":  # a stated direction sets the sign (+ = audio delayed)
            offset = abs(offset) if direction == "delay" else -abs(offset)
        elif offset is not None and not synced and offset != 0:  # no direction: the signed offset gives it
            direction = "delay" if offset > 0 else "early"
        return {"synced": synced, "direction": direction, "offset_s": offset}
    if dim == "existence" and ("audio_state" in given or "sound_present" in given):
        if "audio_state" in given:
            state = str(given["audio_state"]).strip().lower()
            if state not in ("muted", "audio_described", "visual_only"):
                raise InputError("expected muted, audio_described or visual_only", file=path, row=row,
                                 column="audio_state", value=state)
        else:
            state = "audio_described" if _bool(given["sound_present"], path, row, "sound_present") else "muted"
        return {"audio_state": state}
    if dim == "consistency" and "match" in given:
        value = given["match"]
        if isinstance(value, bool | np.bool_) or str(value).strip().lower() in ("true", "false", "1", "0"):
            value = "match" if _bool(value, path, row, "match") else "mismatch"
        value = str(value).strip().lower()
        if value not in ("match", "mismatch", "none"):
            raise InputError("expected match, mismatch or none (or true/false)", file=path, row=row, column="match",
                             value=value)
        return {"match": value}
    return None


def sync_yes_no(diag: pd.DataFrame, pred: pd.DataFrame) -> np.ndarray:
    """The synchronized / not synchronized answer alone is right (direction ignored)."""
    return pred["synced"].to_numpy(dtype=object) == diag["target_synced"].to_numpy(dtype=object)


def answers_correct(diag: pd.DataFrame, pred: pd.DataFrame) -> np.ndarray:
    """Per row: the answer is right. Sync as Table 1 scores it: an Original needs "synchronized", a Shift needs "not
    synchronized" and the right direction (delay vs early)."""
    dim = diag["dimension"].to_numpy()
    right_direction = pred["direction"].to_numpy(dtype=object) == diag["target_direction"].to_numpy(dtype=object)
    sync_ok = sync_yes_no(diag, pred) & ((diag["target_synced"].to_numpy(dtype=object) == True)  # noqa: E712
                                          | right_direction)
    want_state = np.where(diag["target_sound_present"].to_numpy(dtype=object) == True, "audio_described", "muted")  # noqa: E712
    exist_ok = pred["audio_state"].to_numpy(dtype=object) == want_state
    want_match = np.where(diag["target_match"].to_numpy(dtype=object) == True, "match", "mismatch")  # noqa: E712
    cons_ok = pred["match"].to_numpy(dtype=object) == want_match
    return np.where(dim == "sync", sync_ok, np.where(dim == "existence", exist_ok, cons_ok)).astype(bool)
