"""Audio-grounding audit of a model's answers on an intervention dataset (Thud §3.1-3.2, appendices G.1 and H).

``scored.csv``: each row's correctness (:func:`scored_table`). ``audit.json``:
``dimensions.<sync|existence|consistency>.{orig, interv, gap}`` (percent; CIs under ``ci``),
``avg_gap`` (+ ``avg_gap_ci``), ``failure_modes.<name>`` (rates in [0, 1]; CIs under ``failure_modes_ci``), then
``sync_by_offset``, ``offset_mae``, ``direction_accuracy``, ``shift_yes_no``, ``sync_binary_accuracy``,
``sync_three_way_accuracy``, ``offset_within_tolerance`` and ``coverage`` as ``{value, ci, n}``. Each dimension says
whether it is ``paired`` and how many ``rows`` it scored paired / unpaired / left out (:mod:`.pairing`); an OOD sync
set adds ``ood_sync`` (the largest |offset| its gold answers call synchronized).

Paired accuracy per dimension (Sync, Existence, Consistency) on Original vs intervention, Avg Gap (eq. 10), the
eight failure modes of appendix H, accuracy per |Δ| band, offset MAE and direction accuracy. A Shift answer is
correct only when it says "not synchronized" *and* gives the right direction (delayed vs early), as Table 1 scores
it: a model that flags a shift and guesses the sign gets about half of them (MiniCPM: ~3/4 of the offsets missed and
the sign wrong half the time gives ~12.5%, printed 13.7%; yes/no scoring would give ~25%). The yes/no-only rate is
reported beside it as ``shift_yes_no``; Fig. 6a's binary (synced vs not) and three-way (synced / delayed / early)
accuracies over Original + Shift rows and Fig. 6b's offset localisation (the stated signed offset within
``offset_tolerance_s`` of the true one, over all Shift rows) complete the temporal picture. Uncertainty: a cluster
bootstrap over *source clips* (an Original and its interventions are resampled together, so gaps keep their
pairing). A row without a usable answer (missing prediction or unparseable response) counts as wrong in every
accuracy (per |Δ| band too), and the coverage is reported: nothing is dropped silently.

Predictions are read as ``omniaudit judge --config diagnostic`` writes them (the free-form answer in ``raw``), or
with a ``response`` column, or structured fields. Sampled runs (a ``run`` column) are scored run by run and averaged
per item before the bootstrap; ``runs`` (each run's accuracies) and ``sampling`` (the settings the file records) are
added to ``audit.json`` and the report.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.answer_language import language
from omniaudit.errors import InputError
from omniaudit.evaluation import stats
from omniaudit.evaluation.audit_outputs import schema, shown_input
from omniaudit.evaluation.interventions.extract import extract, llm_extract, unread
from omniaudit.evaluation.interventions.extract_gloss import GLOSSED
from omniaudit.evaluation.interventions.pairing import ood_sync_rule, scored_rows
from omniaudit.io import atomic_dir, to_json
from omniaudit.predictions import provenance_section, read_prediction_file, run_order
from omniaudit.tables import fail_at, parse_bool

INTERVENTION_OF = {"sync": "shift", "existence": "mute", "consistency": "swap"}
SYNC_ONLY = ("shift_yes_no", "sync_binary", "sync_three_way", "offset_within_tolerance")  # not available without sync
DIAGNOSTIC_COLUMNS = ["id", "source_id", "intervention", "offset_s", "dimension", "target_synced",
                      "target_direction", "target_offset_s", "target_sound_present", "target_match"]
STRUCTURED = ("synced", "direction", "offset_s", "audio_state", "sound_present", "match")
TEXT_COLUMNS = ("response", "raw")  # the free-form answer: ``response``, or ``raw`` as ``omniaudit judge`` writes it
OFFSET_BANDS = (0.0, 0.5, 1.0, 2.0, 5.0, np.inf)
# Fig. 6b's tolerance is not printed in the paper; 0.5 s is its own audio-timestamp agreement tolerance (appendix B,
# epsilon_a), the precision the event times themselves are verified to.
OFFSET_TOLERANCE_S = 0.5
FAILURE_MODES = {  # name: (group, what it counts)
    "mute_hallucination": ("Audio hallucination", "describes audio on a muted clip"),
    "swap_false_match": ("Audio hallucination", "accepts swapped audio as a natural match"),
    "false_silence": ("Audio denial", "claims silence on a clip with its real audio"),
    "swap_false_mismatch": ("Audio denial", "claims a mismatch on a naturally paired clip"),
    "audio_dodge": ("Question avoidance", "visual-only answer to the audio question (mean of muted and real)"),
    "offset_blindness": ("Temporal", "calls a shifted clip synchronized"),
    "direction_confusion": ("Temporal", "detected offset, wrong direction (delay vs early)"),
    "false_sync_alarm": ("Temporal", "calls an original clip desynchronized"),
}


@dataclass(frozen=True)
class InterventionAuditConfig:
    n_resamples: int = stats.N_RESAMPLES
    seed: int = stats.BOOTSTRAP_SEED
    offset_bands: tuple[float, ...] = OFFSET_BANDS
    offset_tolerance_s: float = OFFSET_TOLERANCE_S  # Fig. 6b: |stated signed offset - true offset| <= this
    extractor: str | None = None  # judge SPEC for free-form answers (default: the rule-based extractor)
    extractor_cache: str | None = None
    partial: bool = False  # accept one shard or an incomplete run (--partial); missing answers count as wrong


def _bool(value: object, path: Path, row: int, column: str) -> bool | None:
    try:
        return parse_bool(value)
    except ValueError:
        raise InputError("expected true/false", file=path, row=row, column=column, value=value) from None


def _is_null(value: object) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or (isinstance(value, str)
                                                                             and not value.strip())


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
        fields = _structured(rec, dim, path, row_no)
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
    label_sources = _label_sources([(dims[r["id"]], r, k in given, key(r) in filled)
                                    for k, r in enumerate(records)], checked, extracted)
    # answers left unparsed because no reader glosses their language ("language not read", not "not answering")
    unglossed = Counter(language(r["text"]) for r in records
                        if r.get(LABEL_FIELD[dims[r["id"]]]) is None and r["text"].strip())
    languages = {lang: n for lang, n in unglossed.most_common() if lang not in (*GLOSSED, "en")}
    if languages:
        label_sources["unparsed_languages"] = languages
    columns = ["id", "text", "synced", "direction", "offset_s", "audio_state", "match"]
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


def _label_sources(rows: list[tuple[str, dict, bool, bool]], checked: list[tuple[str, str, str]],
                   extracted: dict[str, dict]) -> dict:
    """How each answer's class was obtained: ``given`` (structured fields in the file), ``rule`` (the rule-based
    reader, always first), ``extractor`` (the LLM ``--extractor``, asked only for the answers the rules leave
    unread) or ``unparsed``; with an extractor, its ``agreement`` with the rule reader on the ``checked`` sample of
    rule-read answers (:func:`agreement_sample`; sync: synchronized and direction; else the class)."""
    counts = {"given": 0, "rule": 0, "extractor": 0, "unparsed": 0}
    for dim, fields, is_given, asked in rows:
        read = fields.get(LABEL_FIELD[dim]) is not None
        counts["unparsed" if not read else "given" if is_given else "extractor" if asked else "rule"] += 1
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


def _structured(rec: pd.Series, dim: str, path: Path, row: int) -> dict | None:
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


def _sync_yes_no(diag: pd.DataFrame, pred: pd.DataFrame) -> np.ndarray:
    """The synchronized / not synchronized answer alone is right (direction ignored)."""
    return pred["synced"].to_numpy(dtype=object) == diag["target_synced"].to_numpy(dtype=object)


def answers_correct(diag: pd.DataFrame, pred: pd.DataFrame) -> np.ndarray:
    """Per row: the answer is right. Sync as Table 1 scores it: an Original needs "synchronized", a Shift needs "not
    synchronized" and the right direction (delay vs early)."""
    dim = diag["dimension"].to_numpy()
    right_direction = pred["direction"].to_numpy(dtype=object) == diag["target_direction"].to_numpy(dtype=object)
    sync_ok = _sync_yes_no(diag, pred) & ((diag["target_synced"].to_numpy(dtype=object) == True)  # noqa: E712
                                          | right_direction)
    want_state = np.where(diag["target_sound_present"].to_numpy(dtype=object) == True, "audio_described", "muted")  # noqa: E712
    exist_ok = pred["audio_state"].to_numpy(dtype=object) == want_state
    want_match = np.where(diag["target_match"].to_numpy(dtype=object) == True, "match", "mismatch")  # noqa: E712
    cons_ok = pred["match"].to_numpy(dtype=object) == want_match
    return np.where(dim == "sync", sync_ok, np.where(dim == "existence", exist_ok, cons_ok)).astype(bool)


def _by_run(diagnostic: pd.DataFrame, predictions: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, list]:
    """(diagnostic rows, their predictions, runs): one block of diagnostic rows per sampled run (clips unchanged,
    so clusters span runs), each row beside its answer."""
    diag = diagnostic.reset_index(drop=True)
    if "run" in predictions.columns:
        runs = list(dict.fromkeys(predictions["run"]))
        diag = pd.concat([diag.assign(run=r) for r in runs], ignore_index=True)
        pred = predictions.set_index(["id", "run"]).loc[pd.MultiIndex.from_frame(diag[["id", "run"]])].reset_index()
        return diag, pred, runs
    return diag, predictions.set_index("id").loc[diag["id"]].reset_index(), []


def _parsed(diag: pd.DataFrame, pred: pd.DataFrame) -> np.ndarray:
    """Per row: an answer was given and its dimension's field was read from it."""
    dim = diag["dimension"].to_numpy()
    field = np.where(dim == "sync", pred["synced"], np.where(dim == "existence", pred["audio_state"], pred["match"]))
    return pred["answered"].to_numpy(bool) & pd.notna(field)


def scored_table(diagnostic: pd.DataFrame, predictions: pd.DataFrame) -> pd.DataFrame:
    """Per diagnostic row (and run): ``id, source_id, dimension, intervention, run, paired, parsed, correct``, the
    rows the accuracies and gaps of :func:`audit_interventions` are computed from (``scored.csv``: a scorecard
    recomputes the Avg Gap from it with its own interval)."""
    diag, pred, runs = _by_run(diagnostic, predictions)
    paired, _ = scored_rows(diag, INTERVENTION_OF, max(1, len(runs)))
    in_pair = np.zeros(len(diag), bool)
    for d in INTERVENTION_OF:
        in_pair |= np.asarray(paired[d], bool)
    return pd.DataFrame({"id": diag["id"], "source_id": diag["source_id"], "dimension": diag["dimension"],
                         "intervention": diag["intervention"], "run": diag["run"] if runs else 0,
                         "paired": in_pair, "parsed": _parsed(diag, pred), "correct": answers_correct(diag, pred)})


def audit_interventions(diagnostic: pd.DataFrame, predictions: pd.DataFrame,
                        config: InterventionAuditConfig = InterventionAuditConfig()) -> dict:
    """All metrics of one model. Accuracies and gaps in percent, failure-mode rates in [0, 1].

    Several sampled runs (``predictions`` with a ``run`` column, one row per diagnostic row and run) are scored run
    by run and pooled per clip before the clip-cluster bootstrap: each item's accuracy is its mean over the runs
    (every run has every item; a missing answer is wrong), a failure-mode rate is over all parsed answers of all
    runs, and ``n`` counts answers (items x runs). ``runs`` lists them with each run's own accuracies and Avg Gap.
    """
    tolerance = config.offset_tolerance_s
    if not (isinstance(tolerance, int | float) and np.isfinite(tolerance) and tolerance >= 0):
        raise InputError("expected a finite number of seconds >= 0", column="offset_tolerance_s", value=tolerance)
    n_items = len(diagnostic)
    diag, pred, runs = _by_run(diagnostic, predictions)
    correct = answers_correct(diag, pred)
    iv = diag["intervention"].to_numpy()
    orig = iv == "original"
    r = stats.ClusterRatios(diag["source_id"].to_numpy())
    paired, rows_used = scored_rows(diag, INTERVENTION_OF, max(1, len(runs)))
    for d, intervention in INTERVENTION_OF.items():
        r.add(f"{d}.orig", correct, paired[d] & orig)
        r.add(f"{d}.interv", correct, paired[d] & (iv == intervention))
    answered = pred["answered"].to_numpy(bool)
    _add_failure_modes(r, diag, pred, _parsed(diag, pred), answered)
    bands = _add_sync_and_offsets(r, diag, pred, correct, paired["sync"], config)
    point, samples, counts = r.resample(config.n_resamples, config.seed)
    est = lambda name, scale=1.0: stats.estimate(point[name], samples[name], counts[name], scale)  # noqa: E731
    dimensions, gap_points, gap_samples = _dimensions(point, samples, counts, diag, paired, rows_used)
    available = all(dimensions[d]["gap"] is not None for d in INTERVENTION_OF)
    avg_gap = (stats.estimate(float(np.mean(gap_points)), np.mean(gap_samples, axis=0), int(r.n), 100)
               if available else {"value": None, "ci": [None, None], "n": 0})  # eq. 10 needs all three dimensions
    failure = {name: est(name) for name in FAILURE_MODES if name != "audio_dodge"}
    failure["audio_dodge"] = stats.estimate((point["dodge_muted"] + point["dodge_real"]) / 2,
                                       (samples["dodge_muted"] + samples["dodge_real"]) / 2,
                                       counts["dodge_muted"] + counts["dodge_real"])
    return {
        "dimensions": dimensions,
        "avg_gap": avg_gap["value"],
        "avg_gap_ci": avg_gap["ci"],
        "failure_modes": {name: failure[name]["value"] for name in FAILURE_MODES},
        "failure_modes_ci": {name: failure[name]["ci"] for name in FAILURE_MODES},
        "failure_modes_n": {name: failure[name]["n"] for name in FAILURE_MODES},
        "sync_by_offset": {label: est(f"band.{label}", 100) for label in bands},
        "offset_mae": est("offset_mae"),
        "direction_accuracy": est("direction_accuracy", 100),
        "shift_yes_no": est("shift_yes_no", 100),
        "sync_binary_accuracy": est("sync_binary", 100),
        "sync_three_way_accuracy": est("sync_three_way", 100),
        "offset_within_tolerance": {**est("offset_within_tolerance", 100), "tolerance_s": float(tolerance)},
        "coverage": {d: {"answered": est(f"answered.{d}"), "parsed": est(f"parsed.{d}")} for d in INTERVENTION_OF},
        "n_rows": n_items, "n_source_clips": int(r.n), **ood_sync_rule(diag),
        **({"runs": _per_run(diag, correct, paired, runs, answered)} if runs else {}),
        **({"sampling": predictions.attrs["sampling"]} if predictions.attrs.get("sampling") else {}),
        **({"label_sources": predictions.attrs["label_sources"]} if predictions.attrs.get("label_sources") else {}),
        "bootstrap": {"n_resamples": config.n_resamples, "seed": config.seed, "unit": "source clip",
                      "confidence": 0.95},
    }


def _add_failure_modes(r: stats.ClusterRatios, diag: pd.DataFrame, pred: pd.DataFrame, parsed: np.ndarray,
                       answered: np.ndarray) -> None:
    """The failure-mode ratios (rates over the answers a model gave: unparsed ones are coverage, not counted) and
    each dimension's parsed and answered shares."""
    dim, iv = diag["dimension"].to_numpy(), diag["intervention"].to_numpy()
    orig = iv == "original"
    state = pred["audio_state"].to_numpy(dtype=object)
    match = pred["match"].to_numpy(dtype=object)
    synced = pred["synced"].to_numpy(dtype=object)
    direction = pred["direction"].to_numpy(dtype=object)
    shift = (dim == "sync") & (iv == "shift") & parsed
    exist, cons, sync_parsed = (dim == "existence") & parsed, (dim == "consistency") & parsed, (dim == "sync") & parsed
    r.add("mute_hallucination", state == "audio_described", exist & (iv == "mute"))
    r.add("false_silence", state == "muted", exist & orig)
    r.add("dodge_muted", state == "visual_only", exist & (iv == "mute"))
    r.add("dodge_real", state == "visual_only", exist & orig)
    r.add("swap_false_match", match == "match", cons & (iv == "swap"))
    r.add("swap_false_mismatch", match == "mismatch", cons & orig)
    r.add("offset_blindness", synced == True, shift)  # noqa: E712
    flagged = shift & (synced == False)  # noqa: E712
    target_dir = diag["target_direction"].to_numpy(dtype=object)
    opposite = ((direction == "delay") & (target_dir == "early")) | ((direction == "early") & (target_dir == "delay"))
    r.add("direction_confusion", opposite, flagged)
    r.add("direction_accuracy", direction == target_dir, flagged)
    r.add("false_sync_alarm", synced == False, sync_parsed & orig)  # noqa: E712
    for d in INTERVENTION_OF:
        r.add(f"parsed.{d}", parsed, dim == d)
        r.add(f"answered.{d}", answered, dim == d)


def _add_sync_and_offsets(r: stats.ClusterRatios, diag: pd.DataFrame, pred: pd.DataFrame, correct: np.ndarray,
                          paired_sync: np.ndarray, config: InterventionAuditConfig) -> list[str]:
    """Fig. 6a/6b over every paired Sync row (an unanswered or unparsed one is wrong, as in Table 1), accuracy per
    offset band, and the stated offsets (MAE, within tolerance); returns the bands' labels."""
    iv = diag["intervention"].to_numpy()
    orig = iv == "original"
    synced = pred["synced"].to_numpy(dtype=object)
    shift_rows = paired_sync & (iv == "shift")
    r.add("shift_yes_no", synced == False, shift_rows)  # noqa: E712
    r.add("sync_binary", _sync_yes_no(diag, pred), paired_sync & (orig | (iv == "shift")))
    r.add("sync_three_way", correct, paired_sync & (orig | (iv == "shift")))
    offsets = np.abs(diag["offset_s"].to_numpy(float))
    edges = config.offset_bands
    bands = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        in_band = shift_rows & (offsets > lo) & (offsets <= hi)
        if in_band.any():
            label = f"({lo:g}, {hi:g}]" if np.isfinite(hi) else f"> {lo:g}"
            bands.append(label)
            r.add(f"band.{label}", correct, in_band)
    # offset MAE: |predicted signed offset - true offset| over shifted clips flagged with a stated offset
    stated = (diag["dimension"].to_numpy() == "sync") & (iv == "shift") & _parsed(diag, pred)
    flagged = stated & (synced == False)  # noqa: E712
    pred_off = pd.to_numeric(pred["offset_s"], errors="coerce").to_numpy(float)
    has_off = flagged & np.isfinite(pred_off)
    err = np.where(has_off, np.abs(np.nan_to_num(pred_off) - diag["offset_s"].to_numpy(float)), 0.0)
    r.add_weighted("offset_mae", err, has_off)
    r.add("offset_within_tolerance", has_off & (err <= config.offset_tolerance_s + 1e-9), shift_rows)
    return bands


def _dimensions(point: dict, samples: dict, counts: dict, diag: pd.DataFrame, paired: dict[str, np.ndarray],
                rows_used: dict) -> tuple[dict, list, list]:
    """Per dimension: Original and intervention accuracy, their gap (points) with CIs, its clips and rows; and the
    gaps' points and resamples for the Avg Gap. A dimension with no answers, or none read, is not measured (never
    an accuracy of 0 and a gap of 0)."""
    dimensions, gap_points, gap_samples = {}, [], []
    est = lambda name, scale=1.0: stats.estimate(point[name], samples[name], counts[name], scale)  # noqa: E731
    for d in INTERVENTION_OF:
        if not counts[f"answered.{d}"] or not point[f"answered.{d}"] or not point[f"parsed.{d}"]:
            keys = [f"{d}.orig", f"{d}.interv"] + (list(SYNC_ONLY) + [k for k in point if k.startswith("band.")]
                                                    if d == "sync" else [])
            for key in keys:
                point[key], samples[key] = np.nan, np.full_like(samples[key], np.nan)
        g_point = point[f"{d}.orig"] - point[f"{d}.interv"]
        g_samples = samples[f"{d}.orig"] - samples[f"{d}.interv"]
        n_clips = int(diag.loc[paired[d], "source_id"].nunique())
        cells = {"orig": est(f"{d}.orig", 100), "interv": est(f"{d}.interv", 100),
                 "gap": stats.estimate(g_point, g_samples, n_clips, 100)}
        dimensions[d] = {**{k: e["value"] for k, e in cells.items()}, "ci": {k: e["ci"] for k, e in cells.items()},
                         "n": {"orig": cells["orig"]["n"], "interv": cells["interv"]["n"]},
                         "intervention": INTERVENTION_OF[d], "n_clips": n_clips,
                         "paired": rows_used[d]["unpaired"] == 0, "rows": rows_used[d]}
        gap_points.append(g_point)
        gap_samples.append(g_samples)
    return dimensions, gap_points, gap_samples


def _per_run(diag: pd.DataFrame, correct: np.ndarray, paired: dict[str, np.ndarray], runs: list,
             answered: np.ndarray) -> dict:
    """Each run's own paired accuracies and Avg Gap (points; None for a dimension the run has no answer in, as the
    pooled numbers), and the Avg Gap's mean and sd over runs."""
    iv, run, dim = diag["intervention"].to_numpy(), diag["run"].to_numpy(), diag["dimension"].to_numpy()
    mean = lambda mask: float(100 * correct[mask].mean()) if mask.any() else None  # noqa: E731
    per_run = {}
    for label in runs:
        mine, dims = run == label, {}
        for d, intervention in INTERVENTION_OF.items():
            if not (answered & mine & (dim == d)).any():
                dims[d] = {"orig": None, "interv": None, "gap": None}
                continue
            orig, interv = mean(paired[d] & mine & (iv == "original")), mean(paired[d] & mine & (iv == intervention))
            dims[d] = {"orig": orig, "interv": interv,
                       "gap": None if orig is None or interv is None else orig - interv}
        gaps = [v["gap"] for v in dims.values()]
        per_run[str(label)] = {**dims, "avg_gap": None if None in gaps else float(np.mean(gaps))}
    gaps = [v["avg_gap"] for v in per_run.values() if v["avg_gap"] is not None]
    return {"n": len(runs), "aggregation": "per item: mean over runs; failure modes: pooled answers; n: answers",
            "per_run": per_run,
            "avg_gap_over_runs": {"mean": float(np.mean(gaps)) if gaps else None,
                                  "sd": float(np.std(gaps, ddof=1)) if len(gaps) > 1 else None}}


def load_diagnostic(dataset: str | Path) -> pd.DataFrame:
    """The diagnostic rows the audit reads, with ``category`` where the config has it (it marks an OOD sync set)."""
    from omniaudit.data_builders.hub import load_hub_dataset

    ds = load_hub_dataset(dataset, "diagnostic")
    missing = [c for c in DIAGNOSTIC_COLUMNS if c not in ds.column_names]
    if missing:
        raise InputError(f"config 'diagnostic' lacks column(s) {missing}; it has {ds.column_names}", file=dataset)
    return ds.select_columns(DIAGNOSTIC_COLUMNS + [c for c in ("category",) if c in ds.column_names]).to_pandas()


def run_interventions_audit(out_dir: str | Path, dataset: str | Path, predictions: str | Path,
                            config: InterventionAuditConfig = InterventionAuditConfig(),
                            progress: Callable[[str], None] | None = None) -> Path:
    """Load, audit, and write ``audit.json``, ``report.md`` and the failure-mode figure into ``out_dir``."""
    from omniaudit.evaluation.interventions.report import interventions_report, plot_failure_modes

    say = progress or (lambda _msg: None)
    say("loading dataset")
    diag = load_diagnostic(dataset)
    say("reading predictions")
    pred = read_predictions(predictions, diag, config.extractor, dataset, config.partial,
                            cache_dir=config.extractor_cache)
    say("bootstrapping")
    provenance = pred.attrs["provenance"]
    result = audit_interventions(diag, pred, config)
    scored = scored_table(diag, pred)
    out = Path(out_dir)
    result = {"model": Path(predictions).stem, "dataset": shown_input(dataset, out),
              "extractor": shown_input(config.extractor, out) or "rule-based", **result,
              "provenance": [provenance.summary(out)]}
    with atomic_dir(out) as tmp:
        result = {"schema": schema("interventions", dataset, predictions, out), **result}
        (tmp / "audit.json").write_text(to_json(result), encoding="utf-8")
        scored.to_csv(tmp / "scored.csv", index=False)
        plot_failure_modes(result["failure_modes"], result["failure_modes_ci"], tmp / "failure_modes.png")
        report = interventions_report(result, "failure_modes.png") + _runs_report(result) + \
            provenance_section([provenance])
        (tmp / "report.md").write_text(report, encoding="utf-8")
    return out


def _runs_report(result: dict) -> str:
    """The sampling settings and, for several runs, each run's accuracies (appended to the report)."""
    from omniaudit.evaluation.report import fmt, markdown_table

    out = []
    if result.get("sampling"):
        settings = ", ".join(f"{k} = {v}" for k, v in result["sampling"].items())
        out += ["", "## Sampling", "", f"Answers were generated with {settings} (as the predictions file records)."]
    runs = result.get("runs")
    if runs and runs["n"] > 1:
        spread = runs["avg_gap_over_runs"]
        out += ["", f"## Runs ({runs['n']})", "",
                "Every run is scored on every diagnostic row; the tables above pool the runs per item (mean over "
                "runs) before the clip bootstrap, and their n count answers (items x runs). Avg Gap over runs: "
                f"mean {fmt(spread['mean'])}, sd {fmt(spread['sd'])}.", "",
                markdown_table(["Run"] + [f"{d}: {c}" for d in INTERVENTION_OF for c in ("orig", "interv")]
                               + ["Avg Gap"],
                               [[label] + [fmt(v[d][c]) for d in INTERVENTION_OF for c in ("orig", "interv")]
                                + [fmt(v["avg_gap"])] for label, v in runs["per_run"].items()])]
    return "\n".join(out) + ("\n" if out else "")
