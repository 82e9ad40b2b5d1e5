"""Judge-protocol audit (lalm-judge-protocol-shortcuts §III): specialist copy, reference following, position lock.

Metrics per judge, each with a 95% cluster-bootstrap CI (clusters: clips, or pairwise trials):

- ``accuracy`` (top-1 vs the true label; unparseable = miss) and ``parse_rate``, per config / attribute or task /
  condition (and placement);
- ``rf``: reference-follow rate over wrong references, eq. 1, per attribute and placement; ``rf_normalized``: eq. 2,
  ``max(0, (RF - 1/(K-1)) / (1 - 1/(K-1)))``;
- ``lock``: Pr[ans(AB) = ans(BA)] over trials with both orders parsed (eq. 3); ``gold_aligned``: Pr[the chosen slot
  holds the gold clip] over all ordered trials (eq. 4; unparseable = not gold); ``p_a``: Pr[ans = A] over the parsed
  answers to identical-clip trials; per format and task;
- ``follow_cue``: Pr[answer = the wrong cue] per cue-conflict cell (``none``: the audio-only rate of that label);
- ``copy``: Pr[answer = the wrong specialist label] in the blueprint conditions that show it (wrong, no_frame,
  wrong_audio).

Paired differences, each bootstrapped on one resample matrix of the same clusters (so the CI is a paired test, not
two overlapping marginal CIs): ``rf_spread`` (RF at the most- minus the least-following placement, its CI
re-choosing the extreme placements in every resample: :mod:`~omniaudit.evaluation.protocols.spread`),
``spec_minus_ref`` (follow-cue conf_spec - conf_ref) and ``concat_minus_native`` (lock, g and p_A; pairwise clusters
are trials across both formats).

Sampled runs (``omniaudit judge --runs N``, the ``run`` column) pool into every cell, and the stability table and
judge modes of :mod:`~omniaudit.evaluation.protocols.modes` are added. ``tables`` repeats the cells of the paper's
Tables II-V, each with its CI, n and parse rate (:mod:`~omniaudit.evaluation.protocols.tables`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation import stats
from omniaudit.evaluation.audit_outputs import schema, shown_input
from omniaudit.evaluation.protocols.label_extractor import extract_labels
from omniaudit.evaluation.protocols.modes import MIN_PARSE_RATE, MIN_STABILITY_N
from omniaudit.evaluation.protocols.spread import rf_spread
from omniaudit.evaluation.protocols.tables import paper_tables
from omniaudit.io import atomic_dir, to_json
from omniaudit.predictions import SAMPLING, check_same_run, provenance_section, read_prediction_file, sampling_settings
from omniaudit.specs import parse_named_files

CONFIGS = ("blueprint", "reference", "pairwise", "cue_conflict")
META = ["id", "attribute", "task", "condition", "placement", "clip_id", "trial", "order", "format", "options", "k",
        "gold", "cue"]
COPY_CONDITIONS = ("wrong", "no_frame", "wrong_audio")  # blueprint conditions that show the wrong label
GROUP = ["config", "attribute", "task", "condition", "placement", "format"]  # a judge answers whole groups


@dataclass(frozen=True)
class ProtocolAuditConfig:
    n_resamples: int = stats.N_RESAMPLES
    seed: int = stats.BOOTSTRAP_SEED
    partial: bool = False  # accept one shard or an incomplete run (--partial)
    extracted: bool = True  # count the answers `judge --extractor` / `--read-reasoning` read (--exclude-extracted)
    min_stability_n: int = MIN_STABILITY_N  # stability cells with fewer items read "too few" (modes.py says why)

    def __post_init__(self) -> None:
        if self.min_stability_n < 1:
            raise InputError("--min-stability-n: a cell needs at least 1 item", value=self.min_stability_n)


def rf_normalized(rf: float | None, k: int) -> float | None:
    """Eq. 2: 0 at chance (1/(K-1)), 1 when the wrong reference is always emitted."""
    if rf is None or not np.isfinite(rf) or k <= 2:  # K = 2: the wrong label is the only other one, chance is 1
        return None
    chance = 1 / (k - 1)
    return max(0.0, (rf - chance) / (1 - chance))


def load_items_meta(dataset: str | Path) -> pd.DataFrame:
    """The label columns of every config present in the dataset (no audio), and each item's ``prompt`` where the
    config has one (answers without a ``label`` are read with their question: :func:`read_judge_predictions`)."""
    import datasets

    try:
        present = datasets.get_dataset_config_names(str(dataset))
    except (ValueError, FileNotFoundError, ConnectionError, datasets.exceptions.DatasetNotFoundError) as exc:
        raise InputError(f"cannot read the dataset's configs: {type(exc).__name__}: {exc}", file=dataset) from exc
    frames = [_config_meta(dataset, config).assign(config=config) for config in CONFIGS if config in present]
    if not frames:
        raise InputError(f"no protocol configs ({', '.join(CONFIGS)}) in the dataset", file=dataset)
    return pd.concat(frames, ignore_index=True)


def _config_meta(dataset: str | Path, config: str) -> pd.DataFrame:
    """One config's :data:`META` columns and its ``prompt`` when it has one (read once: a local build's files are
    fingerprinted on every read)."""
    from omniaudit.data_builders.hub import load_hub_dataset

    ds = load_hub_dataset(dataset, config)
    missing = [c for c in META if c not in ds.column_names]
    if missing:
        raise InputError(f"config '{config}' lacks column(s) {missing}; it has {ds.column_names}", file=dataset)
    return ds.select_columns(META + [c for c in ("prompt",) if c in ds.column_names]).to_pandas()


def read_judge_predictions(specs: list[str], items: pd.DataFrame, extractor: str | None = None,
                           dataset: str | Path | None = None, partial: bool = False, extracted: bool = True,
                           **extractor_options) -> dict[str, pd.DataFrame]:
    """``NAME=FILE`` or ``FILE`` (name = file stem) -> per judge, its predictions (id, label, run) over its files.

    Every id must be an item of the dataset, every label one of the item's options (``parsed`` false means no label),
    and a judge must answer whole groups (config x attribute or task x condition x placement x format, both orders):
    a partial group would give rates over an arbitrary subset, so it is an error naming the first missing id.
    Sampled runs (a ``run`` column, ``omniaudit judge --runs N``) are kept apart: each id once per run, and every id
    of a judge in the same runs. ``extractor`` (any ``omniaudit judge`` SPEC) reads the free-text answers (``raw``)
    that name no option, as ``audit interventions --extractor`` does; it sees the answer and the options, never the
    gold label. A file without ``label`` (another harness's ``id`` + ``raw``) has its labels read from ``raw`` here, by
    the reader ``omniaudit judge`` uses (:func:`~omniaudit.runners.reading.read_answer`, with the item's
    ``prompt`` when ``items`` has it); ``label_sources`` counts them as ``rule`` (or ``unparsed``) and, apart, as
    ``read_by_audit``. Labels ``omniaudit judge`` did not read with its rules (``read_by``: an extractor or the
    reasoning trace) count as ``extractor`` / ``reasoning``, or, without ``extracted``, as unread (``excluded``).
    The sampling settings the files record are in ``.attrs["sampling"]``. Each file's provenance is
    checked (:func:`~omniaudit.predictions.check_predictions`: made on this build of ``dataset``, a whole
    run unless ``partial``; a judge's files from one judge run), and kept in ``.attrs["provenance"]``.
    """
    _check_options_differ_in_more_than_case(items)
    options = items.set_index("id")["options"]
    prompts = items.set_index("id")["prompt"] if "prompt" in items.columns else None
    judges: dict[str, list[pd.DataFrame]] = {}
    stems: dict[str, Path] = {}
    for name, path, named in parse_named_files(specs, noun="predictions file"):  # one rule: omniaudit.specs
        if not named:
            if name in stems:
                raise InputError(f"two files would both be judge '{name}' ({stems[name]} and {path}); name them "
                                 f"NAME=FILE", file=path)
            stems[name] = path
        judges.setdefault(name, []).append(_read_one(path, options, dataset, partial, prompts, extracted))
    out = {}
    for name, frames in judges.items():
        provenance = [f.attrs["provenance"] for f in frames]
        check_same_run(provenance, f"the files of judge '{name}'")
        pred = pd.concat(frames, ignore_index=True)
        dup = pred.duplicated(["id", "run"])
        if dup.any():
            raise InputError(f"judge '{name}': id given twice in the same run (in {pred.loc[dup, 'file'].iloc[0]})",
                             value=pred.loc[dup, "id"].iloc[0])
        runs = sorted(pred["run"].unique())
        short = pred.groupby("id")["run"].nunique() < len(runs)
        if short.any():
            raise InputError(f"judge '{name}': id '{short.index[short][0]}' is answered in fewer runs than the "
                             f"judge's others (runs {runs}); every item needs every run", value=short.index[short][0])
        _check_whole_groups(name, pred.drop_duplicates("id"), items)
        if extractor:
            pred = extract_labels(pred, options, extractor, **extractor_options)
        frame = pred[["id", "label", "run", "tie"]].reset_index(drop=True)
        frame.attrs["sampling"] = sampling_settings(pred)
        frame.attrs["extracted"] = int(pred["extracted"].sum()) if "extracted" in pred else 0
        frame.attrs["label_sources"] = _source_counts(pred)
        frame.attrs["provenance"] = provenance
        out[name] = frame
    return out


LABEL_SOURCES = ("rule", "extractor", "reasoning", "option_probs", "given", "unparsed", "excluded")


def _label_source(raw: object, label: str | None, probs: object) -> str:
    """How a file's label was obtained: ``option_probs`` (the runner scored the options: its text is empty or just the
    top option), ``rule`` (the rule reader read the answer text), ``given`` (a label without answer text: an
    external harness's) or ``unparsed``."""
    if label is None:
        return "unparsed"
    if raw is None or (isinstance(raw, float) and raw != raw):
        return "given"
    scored = isinstance(probs, dict | str) and bool(probs) and str(probs).strip().lower() not in ("nan", "none")
    return "option_probs" if scored and str(raw).strip().casefold() in ("", label.casefold()) else "rule"


def _source_counts(pred: pd.DataFrame) -> dict:
    """Answers per label source and, with an extractor, its agreement with the rule reader on the answers both read."""
    counts = {k: int((pred["source"] == k).sum()) for k in LABEL_SOURCES}
    # the sources only a judge's --read-reasoning or an audit's --exclude-extracted brings are listed where present
    out: dict = {k: n for k, n in counts.items() if n or k not in ("reasoning", "excluded")}
    out["answers"] = len(pred)
    read_here = int(pred["read_by_audit"].sum()) if "read_by_audit" in pred else 0
    if read_here:  # files without a label column: the audit read their answers (their labels are not the file's)
        out["read_by_audit"] = read_here
    if "extractor_label" in pred:
        both = (pred["source"] == "rule") & pred["extractor_label"].notna()
        agree = int((both & (pred["extractor_label"] == pred["label"])).sum())
        out["extractor_agreement"] = {"n": int(both.sum()), "agree": agree,
                                      "rate": agree / int(both.sum()) if both.any() else None}
    return out


def _check_options_differ_in_more_than_case(items: pd.DataFrame) -> None:
    """Labels are matched without case, so an item whose options differ only in case cannot be scored."""
    for item, options in zip(items["id"], items["options"], strict=True):
        folded = [str(o).casefold() for o in options]
        if len(set(folded)) < len(folded):
            raise InputError(f"item '{item}': options {list(options)} differ only in case, so answers cannot be "
                             f"matched to one of them; rebuild the dataset with `omniaudit build protocols` (it reads "
                             f"such labels as one class)")


def _read_one(path: Path, options: pd.Series, dataset: str | Path | None = None,
              partial: bool = False, prompts: pd.Series | None = None, extracted: bool = True) -> pd.DataFrame:
    """One predictions file: ``id, label, run, file, raw, source, read_by_audit`` (+ recorded sampling settings).

    Without a ``label`` column (another harness's ``id`` + ``raw``) each answer is read here, as ``omniaudit judge``
    reads it (:func:`~omniaudit.runners.reading.read_answer` on the item's options and ``prompts``);
    ``read_by_audit`` marks those rows."""
    read = read_prediction_file(path, dataset, CONFIGS, partial, needs=("label", "raw"), answer_columns=("raw",),
                                known=options.index, unknown="id not in the dataset",
                                expected="expected columns id and label, or id and the answer text in raw (a "
                                         "predictions file from `omniaudit judge` has id, order, raw, label, parsed)")
    ids, read_here = read.ids, "label" not in read.records.columns
    if read_here:  # the answers are read here, by the runner's reader (its question sentence from the prompt)
        from omniaudit.runners.reading import read_answer

        readings = [read_answer(text, list(options[item]), None if prompts is None else _text(prompts.get(item)))
                    for item, text in zip(ids, read.answers, strict=True)]
        labels, ties = [r.option for r in readings], [r.reason == "tie" for r in readings]
    else:
        labels = [_option(label, options[item], path, row)
                  for row, item, label in zip(read.rows, ids, read.labels(extracted), strict=True)]
        unread = read.records["unread"] if "unread" in read.records.columns else [None] * len(labels)
        ties = [lab is None and why == "tie" for lab, why in zip(labels, unread, strict=True)]
    out = pd.DataFrame({"id": ids, "label": labels, "run": read.run_numbers(), "file": str(path),
                        "raw": read.records["raw"] if "raw" in read.records.columns else None,
                        "read_by_audit": read_here, "tie": ties})  # a declared tie: no option, but an answer
    probs = read.records["option_probs"] if "option_probs" in read.records.columns else [None] * len(out)
    out["source"] = [_label_source(r, lab, p) for r, lab, p in zip(out["raw"], labels, probs, strict=True)]
    if not read_here:  # what the rules of `omniaudit judge` did not read: counted apart, or left out
        for i, by in enumerate(read.extracted()):
            if by:
                out.at[i, "source"] = by if extracted else "excluded"
    for column in SAMPLING:
        if column in read.records.columns:
            out[column] = read.records[column].to_numpy()
    out.attrs["provenance"] = read.provenance
    return out


def _option(label: str | None, options: list[str], path: Path, row: int) -> str | None:
    """The item's option a label names (whatever its case); None stays None; another label is an error."""
    if label is None:
        return None
    by_case = {o.casefold(): o for o in options}
    if label.casefold() not in by_case:
        raise InputError(f"label is not one of the item's options {list(options)}", file=path, row=row,
                         column="label", value=label)
    return by_case[label.casefold()]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _check_whole_groups(name: str, pred: pd.DataFrame, items: pd.DataFrame) -> None:
    keyed = items.assign(_key=items[GROUP].fillna("").astype(str).agg("|".join, axis=1))
    answered = keyed["id"].isin(pred["id"])
    touched = keyed.loc[answered, "_key"].unique()
    gaps = keyed[keyed["_key"].isin(touched) & ~answered]
    if len(gaps):
        first = gaps.iloc[0]
        raise InputError(f"judge '{name}' answers only part of a group ({first['_key'].strip('|')}): "
                         f"{len(gaps)} item(s) of the groups it answers have no prediction; rates over a subset would "
                         f"mislead", value=first["id"])


def _estimates(cells: stats.ClusterRatios, config: ProtocolAuditConfig,
               runs: int = 1) -> tuple[dict[tuple, dict], dict, dict]:
    """Estimates per key (``n`` in items: rows over runs divided by the run count), point values and resamples."""
    point, samples, counts = cells.resample(config.n_resamples, config.seed)
    est = {key: stats.estimate(point[key], samples[key], counts[key] // runs) for key in point}
    return est, point, samples


def _difference(point: dict, samples: dict, a: tuple, b: tuple, parsed: tuple = (), **extra) -> dict | None:
    """Paired difference of two cells bootstrapped on one resample matrix (same clusters, same resamples).
    ``parsed``: the two cells' parse-rate keys; below the modes' ``MIN_PARSE_RATE`` the judge is not answering them
    and no difference is read (value None, with a ``reason``), never a zero-width interval around 0."""
    if a not in point or b not in point:
        return None
    low = [point[k] for k in parsed if k in point and point[k] < MIN_PARSE_RATE]
    if low:
        return {"value": None, "ci": [None, None],
                "reason": f"not answering: parse rate {min(low):.2f} < {MIN_PARSE_RATE}", **extra}
    est = stats.estimate(point[a] - point[b], samples[a] - samples[b], 0)
    est.pop("n")
    return {**est, **extra}


def _nest(out: dict, keys: tuple, value: object) -> None:
    for k in keys[:-1]:
        out = out.setdefault(k, {})
    out[keys[-1]] = value


def audit_judge(items: pd.DataFrame, pred: pd.DataFrame, config: ProtocolAuditConfig = ProtocolAuditConfig()) -> dict:
    """All protocol metrics of one judge over the configs it answered.

    With several sampled runs (``pred["run"]``) every rate pools the runs (each item weighs the same: every item has
    every run) and the bootstrap still resamples clips (pairwise: trials); ``n`` counts items.
    """
    pred = pred if "run" in pred.columns else pred.assign(run=0)
    runs = int(pred["run"].nunique()) or 1
    df = items.merge(pred, on="id", how="inner")
    result: dict = {}
    for name in CONFIGS:
        part = df[df["config"] == name].reset_index(drop=True)
        if part.empty:  # a judge may answer a subset of configs and conditions
            continue
        label, gold, cue = (part[c].to_numpy(dtype=object) for c in ("label", "gold", "cue"))
        parsed = pd.notna(part["label"]).to_numpy()
        correct = parsed & (label == gold)
        if name == "pairwise":
            _pairwise(part, label, parsed, correct, config, result, runs)
            continue
        _labelled_config(name, part, label, cue, parsed, correct, config, result, runs)
    result["n_answered"] = int(df["id"].nunique())
    result["runs"] = runs
    return result


def _labelled_config(name: str, part: pd.DataFrame, label: np.ndarray, cue: np.ndarray, parsed: np.ndarray,
                     correct: np.ndarray, config: ProtocolAuditConfig, result: dict, runs: int) -> None:
    """One blueprint / reference / cue-conflict config: accuracy, parse rate and the cue measures per attribute,
    condition and placement (clusters: clips), RF normalised by chance, RF spread and spec minus ref, into
    ``result``."""
    cells = _cells(name, part, label, cue, parsed, correct)
    k_of = part.groupby("attribute")["k"].first().to_dict()
    est, point, samples = _estimates(cells, config, runs)
    for key, e in est.items():
        _nest(result, key, e)
        if key[0] == "rf":
            k = int(k_of[key[1]])
            _nest(result, ("rf_normalized", *key[1:]),
                  {"value": rf_normalized(e["value"], k), "ci": [rf_normalized(c, k) for c in e["ci"]],
                   "n": e["n"], "k": k})
    _spreads(name, sorted(k_of), point, samples, result)


def _spreads(name: str, attributes: list[str], point: dict, samples: dict, result: dict) -> None:
    """RF's spread over placements (reference) and the specialist-minus-reference following (cue conflict)."""
    for attribute in attributes:
        if name == "reference":
            keys = [k for k in point if k[:2] == ("rf", attribute)]
            spread = rf_spread({k[2]: point[k] for k in keys}, {k[2]: samples[k] for k in keys},
                               parse_rate=point.get(("reference_parse_rate", attribute)))
            if spread:
                _nest(result, ("rf_spread", attribute), spread)
        if name == "cue_conflict":
            diff = _difference(point, samples, ("follow_cue", attribute, "conf_spec"),
                               ("follow_cue", attribute, "conf_ref"),
                               tuple(("parse_rate", name, attribute, c) for c in ("conf_spec", "conf_ref")))
            if diff:
                _nest(result, ("spec_minus_ref", attribute), diff)


def _cells(name: str, part: pd.DataFrame, label: np.ndarray, cue: np.ndarray, parsed: np.ndarray,
           correct: np.ndarray) -> stats.ClusterRatios:
    """The ratios of one config per (attribute, condition, placement), clusters: clips."""
    cells = stats.ClusterRatios(part["clip_id"].to_numpy())
    group = [part["attribute"].to_numpy(), part["condition"].to_numpy(),
             part["placement"].fillna("").to_numpy()]
    for key in sorted(set(zip(*group, strict=True))):
        attribute, condition, placement = key
        mask = (group[0] == attribute) & (group[1] == condition) & (group[2] == placement)
        path = (name, attribute, f"{condition}/{placement}" if placement else condition)
        cells.add(("accuracy", *path), correct, mask)
        cells.add(("parse_rate", *path), parsed, mask)
        if name == "blueprint" and condition in COPY_CONDITIONS:
            cells.add(("copy", attribute, condition), parsed & (label == cue), mask)
        if name == "reference" and condition == "wrong":
            cells.add(("rf", attribute, placement), parsed & (label == cue), mask)
        if name == "cue_conflict":
            cells.add(("follow_cue", attribute, condition), parsed & (label == cue), mask)
    if name == "reference":  # Table III's match and parse columns, pooled over the placements
        for attribute in sorted(set(group[0])):
            mask = group[0] == attribute
            cells.add(("reference_parse_rate", attribute), parsed, mask)
            if (mask & (group[1] == "match")).any():
                cells.add(("match_accuracy", attribute), correct, mask & (group[1] == "match"))
    return cells


def _pairwise(part: pd.DataFrame, label: np.ndarray, parsed: np.ndarray, correct: np.ndarray,
              config: ProtocolAuditConfig, result: dict, runs: int = 1) -> None:
    task, fmt, order = (part[c].to_numpy() for c in ("task", "format", "order"))
    # one cluster per trial across formats, so concat - native differences are paired
    cells = stats.ClusterRatios(part["trial"].astype(str).str.rsplit("/", n=1).str[0].to_numpy())
    for t, f in sorted(set(zip(task, fmt, strict=True))):
        mask = (task == t) & (fmt == f)
        cells.add(("parse_rate", "pairwise", t, f), parsed, mask)
        if t == "identical":
            cells.add(("p_a", f), label == "A", mask & parsed)
        else:
            cells.add(("gold_aligned", f, t), correct, mask)
            cells.add(("accuracy", "pairwise", t, f), correct, mask)
    # lock: one indicator per trial and run with both orders parsed, attached to its AB row
    key = pd.MultiIndex.from_arrays([part["trial"], part["run"]])
    wide = part.assign(label=label).pivot_table(index=["trial", "run"], columns="order", values="label",
                                                aggfunc="first")
    both = wide.dropna()
    same = (both.get("AB") == both.get("BA")) if len(both) else pd.Series(dtype=bool)
    is_ab = (order == "AB") & key.isin(both.index)
    locked = pd.Series(same.reindex(key).to_numpy(), dtype=object).eq(True).to_numpy() & is_ab
    for t, f in sorted(set(zip(task, fmt, strict=True))):
        if t != "identical":
            cells.add(("lock", f, t), locked, is_ab & (task == t) & (fmt == f))
    est, point, samples = _estimates(cells, config, runs)
    for k, e in est.items():
        _nest(result, k, e)
    if {"concat", "native"} <= set(fmt):
        for t in sorted(set(task)):
            pairs = ([("p_a", ("p_a", "concat"), ("p_a", "native"))] if t == "identical" else
                     [(m, (m, "concat", t), (m, "native", t)) for m in ("lock", "gold_aligned")])
            for metric, a, b in pairs:
                diff = _difference(point, samples, a, b,
                                   tuple(("parse_rate", "pairwise", t, f) for f in ("concat", "native")))
                if diff:
                    _nest(result, ("concat_minus_native", metric, t), diff)


METRICS = ("accuracy", "parse_rate", "copy", "rf", "rf_normalized", "rf_spread", "match_accuracy",
           "reference_parse_rate", "lock", "gold_aligned", "p_a", "follow_cue", "spec_minus_ref",
           "concat_minus_native")


def _points_only(config: ProtocolAuditConfig) -> ProtocolAuditConfig:
    return ProtocolAuditConfig(n_resamples=2, seed=config.seed)


def audit_protocols(items: pd.DataFrame, predictions: dict[str, pd.DataFrame],
                    config: ProtocolAuditConfig = ProtocolAuditConfig()) -> dict:
    """``audit.json``: each metric -> judge -> ... (see the module docstring), judge modes, and, for judges with
    several sampled runs, the stability table (per-run cells, range, majority vote and its shift)."""
    from omniaudit.evaluation.protocols import modes as protocol_modes

    per_judge = {name: audit_judge(items, pred, config) for name, pred in predictions.items()}
    out: dict = {"judges": list(per_judge)}
    for metric in METRICS:
        out[metric] = {name: res.get(metric, {}) for name, res in per_judge.items()}
    out["n_answered"] = {name: res["n_answered"] for name, res in per_judge.items()}
    out["runs"] = {name: res["runs"] for name, res in per_judge.items()}
    out["sampling"] = {name: pred.attrs.get("sampling", {}) for name, pred in predictions.items()}
    out["extracted"] = {name: pred.attrs.get("extracted", 0) for name, pred in predictions.items()}
    out["label_sources"] = {name: pred.attrs.get("label_sources", {}) for name, pred in predictions.items()}
    k_of = items.dropna(subset=["attribute"]).groupby("attribute")["k"].first().to_dict()
    out["modes"] = {name: protocol_modes.judge_modes(res, k_of, protocol_modes.answer_profile(items, pred))
                    for (name, res), pred in zip(per_judge.items(), predictions.values(), strict=True)}
    out["stability"] = {}
    for name, pred in predictions.items():
        if per_judge[name]["runs"] > 1:
            quick = _points_only(config)
            per_run = {int(r): audit_judge(items, pred[pred["run"] == r], quick) for r in sorted(pred["run"].unique())}
            majority = audit_judge(items, protocol_modes.majority_vote(pred), quick)
            out["stability"][name] = protocol_modes.stability_table(per_judge[name], per_run, majority,
                                                                    config.min_stability_n)
    out["tables"] = paper_tables(out)
    out["bootstrap"] = {"n_resamples": config.n_resamples, "seed": config.seed, "confidence": 0.95,
                        "unit": "clip (pairwise: trial, both formats together)",
                        "differences": "paired: both cells on the same resamples of the same clusters"}
    return out


def run_protocols_audit(out_dir: str | Path, dataset: str | Path, predictions: list[str],
                        config: ProtocolAuditConfig = ProtocolAuditConfig(),
                        progress: Callable[[str], None] | None = None, extractor: str | None = None,
                        **extractor_options) -> Path:
    from omniaudit.evaluation.protocols.report import protocols_report

    say = progress or (lambda _m: None)
    say("loading dataset")
    items = load_items_meta(dataset)
    say("reading predictions")
    preds = read_judge_predictions(predictions, items, extractor, dataset, config.partial, config.extracted,
                                   **extractor_options)
    say("bootstrapping")
    provenance = {name: pred.attrs["provenance"] for name, pred in preds.items()}
    out = Path(out_dir)
    result = {"dataset": shown_input(dataset, out), "extractor": shown_input(extractor, out),
              **audit_protocols(items, preds, config),
              "provenance": {name: [p.summary(out) for p in files] for name, files in provenance.items()}}
    with atomic_dir(out) as tmp:
        result = {"schema": schema("protocols", dataset, predictions, out), **result}
        (tmp / "audit.json").write_text(to_json(result), encoding="utf-8")
        report = protocols_report(result) + provenance_section([p for files in provenance.values() for p in files])
        (tmp / "report.md").write_text(report, encoding="utf-8")
    return out
