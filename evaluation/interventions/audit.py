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

Predictions are read as ``omniaudit judge --config diagnostic`` writes them (the free-form answer in ``raw``), or with
a ``response`` column, or structured fields, and each answer scored
(:mod:`omniaudit.data_builders.interventions.diagnostic_answers`, which the SP-pairs builder shares). Sampled runs (a
``run`` column) are scored run by run and averaged per item before the bootstrap; ``runs`` (each run's accuracies) and
``sampling`` (the settings the file records) are added to ``audit.json`` and the report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.data_builders.interventions.diagnostic_answers import (
    DIAGNOSTIC_COLUMNS,
    answers_correct,
    read_predictions,
    sync_yes_no,
)
from omniaudit.errors import InputError
from omniaudit.evaluation import stats
from omniaudit.evaluation.audit_outputs import schema, shown_input
from omniaudit.evaluation.interventions.failure_modes import FAILURE_MODES, add_failure_modes
from omniaudit.evaluation.interventions.pairing import ood_sync_rule, scored_rows
from omniaudit.io import atomic_dir, to_json
from omniaudit.predictions import provenance_section

INTERVENTION_OF = {"sync": "shift", "existence": "mute", "consistency": "swap"}
SYNC_ONLY = ("shift_yes_no", "sync_binary", "sync_three_way", "offset_within_tolerance")  # not available without sync
OFFSET_BANDS = (0.0, 0.5, 1.0, 2.0, 5.0, np.inf)
# Fig. 6b's tolerance is not printed in the paper; 0.5 s is its own audio-timestamp agreement tolerance (appendix B,
# epsilon_a), the precision the event times themselves are verified to.
OFFSET_TOLERANCE_S = 0.5


@dataclass(frozen=True)
class InterventionAuditConfig:
    n_resamples: int = stats.N_RESAMPLES
    seed: int = stats.BOOTSTRAP_SEED
    offset_bands: tuple[float, ...] = OFFSET_BANDS
    offset_tolerance_s: float = OFFSET_TOLERANCE_S  # Fig. 6b: |stated signed offset - true offset| <= this
    extractor: str | None = None  # judge SPEC for free-form answers (default: the rule-based extractor)
    extractor_cache: str | None = None
    partial: bool = False  # accept one shard or an incomplete run (--partial); missing answers count as wrong


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


def _reading(dim: str, row: pd.Series) -> str:
    """One answer's class in words, as a person checking it would write it (``omniaudit readings sample``):
    ``in sync`` / ``audio late [by 1.2 s]`` / ``audio early`` / ``out of sync``, the existence class, ``match`` /
    ``mismatch``; ``none`` where nothing was read."""
    if dim == "sync" and pd.notna(row.get("synced")):
        if bool(row["synced"]):
            return "in sync"
        said = {"delay": "audio late", "early": "audio early"}.get(str(row.get("direction")), "out of sync")
        offset = row.get("offset_s")
        return said + (f" by {abs(float(offset)):g} s" if pd.notna(offset) and said != "out of sync" else "")
    if dim == "existence" and pd.notna(row.get("audio_state")):
        return str(row["audio_state"])
    if dim == "consistency" and pd.notna(row.get("match")):
        return str(row["match"])
    return "none"


def scored_table(diagnostic: pd.DataFrame, predictions: pd.DataFrame) -> pd.DataFrame:
    """Per diagnostic row (and run): ``id, source_id, dimension, intervention, run, paired, parsed, correct``, the
    rows the accuracies and gaps of :func:`audit_interventions` are computed from (``scored.csv``: a scorecard
    recomputes the Avg Gap from it with its own interval), and the answer as read: its ``text``, ``reading``
    (:func:`_reading`) and ``read_by`` (``rule``, ``extractor``, ``given``; empty where nothing read it), which
    ``omniaudit readings sample`` draws from."""
    diag, pred, runs = _by_run(diagnostic, predictions)
    paired, _ = scored_rows(diag, INTERVENTION_OF, max(1, len(runs)))
    in_pair = np.zeros(len(diag), bool)
    for d in INTERVENTION_OF:
        in_pair |= np.asarray(paired[d], bool)
    return pd.DataFrame({"id": diag["id"], "source_id": diag["source_id"], "dimension": diag["dimension"],
                         "intervention": diag["intervention"], "run": diag["run"] if runs else 0,
                         "paired": in_pair, "parsed": _parsed(diag, pred), "correct": answers_correct(diag, pred),
                         "text": pred["text"].fillna("").to_numpy() if "text" in pred else "",
                         "reading": [_reading(d, r) for d, (_, r) in zip(diag["dimension"], pred.iterrows(),
                                                                          strict=True)],
                         "read_by": pred["read_by"].to_numpy() if "read_by" in pred else None})


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
    add_failure_modes(r, diag, pred, _parsed(diag, pred), answered, INTERVENTION_OF)
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


def _add_sync_and_offsets(r: stats.ClusterRatios, diag: pd.DataFrame, pred: pd.DataFrame, correct: np.ndarray,
                          paired_sync: np.ndarray, config: InterventionAuditConfig) -> list[str]:
    """Fig. 6a/6b over every paired Sync row (an unanswered or unparsed one is wrong, as in Table 1), accuracy per
    offset band, and the stated offsets (MAE, within tolerance); returns the bands' labels."""
    iv = diag["intervention"].to_numpy()
    orig = iv == "original"
    synced = pred["synced"].to_numpy(dtype=object)
    shift_rows = paired_sync & (iv == "shift")
    r.add("shift_yes_no", synced == False, shift_rows)  # noqa: E712
    r.add("sync_binary", sync_yes_no(diag, pred), paired_sync & (orig | (iv == "shift")))
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
