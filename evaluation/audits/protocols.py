"""Judge-protocol audit (lalm-judge-protocol-shortcuts §III): specialist copy, reference following, position lock.

Metrics per judge, each with a 95% cluster-bootstrap CI (clusters: clips, or pairwise trials):

- ``accuracy`` (top-1 vs the true label; unparseable = miss) and ``parse_rate``, per config / attribute or task /
  condition (and placement);
- ``rf``: reference-follow rate over wrong references, eq. 1, per attribute and placement; ``rf_normalized``: eq. 2,
  ``max(0, (RF - 1/(K-1)) / (1 - 1/(K-1)))``;
- ``lock``: Pr[ans(AB) = ans(BA)] over trials with both orders parsed (eq. 3); ``gold_aligned``: Pr[the chosen slot
  holds the gold clip] over all ordered trials (eq. 4; unparseable = not gold); ``p_a``: Pr[ans = A] over the parsed
  answers to identical-clip trials; per format and task;
- ``follow_cue``: Pr[answer = the wrong cue] per cue-conflict cell (``none``: the audio-only rate of that label).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation import stats
from omniaudit.io import atomic_dir, to_json
from omniaudit.tables import fail_at, read_records

CONFIGS = ("blueprint", "reference", "pairwise", "cue_conflict")
META = ["id", "attribute", "task", "condition", "placement", "clip_id", "trial", "order", "format", "options", "k",
        "gold", "cue"]
GROUP = ["config", "attribute", "task", "condition", "placement", "format"]  # a judge answers whole groups


@dataclass(frozen=True)
class ProtocolAuditConfig:
    n_resamples: int = stats.N_RESAMPLES
    seed: int = stats.BOOTSTRAP_SEED


def rf_normalized(rf: float | None, k: int) -> float | None:
    """Eq. 2: 0 at chance (1/(K-1)), 1 when the wrong reference is always emitted."""
    if rf is None or not np.isfinite(rf) or k <= 2:  # K = 2: the wrong label is the only other one, chance is 1
        return None
    chance = 1 / (k - 1)
    return max(0.0, (rf - chance) / (1 - chance))


def load_items_meta(dataset: str | Path) -> pd.DataFrame:
    """The label columns of every config present in the dataset (no audio)."""
    import datasets

    from omniaudit.data_builders.hub import load_config

    try:
        present = datasets.get_dataset_config_names(str(dataset))
    except (ValueError, FileNotFoundError, ConnectionError, datasets.exceptions.DatasetNotFoundError) as exc:
        raise InputError(f"cannot read the dataset's configs: {type(exc).__name__}: {exc}", file=dataset) from exc
    frames = [load_config(dataset, config, columns=META).assign(config=config)
              for config in CONFIGS if config in present]
    if not frames:
        raise InputError(f"no protocol configs ({', '.join(CONFIGS)}) in the dataset", file=dataset)
    return pd.concat(frames, ignore_index=True)


def read_judge_predictions(specs: list[str], items: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``NAME=FILE`` or ``FILE`` (name = file stem) -> per judge, its predictions (id, label) over its files.

    Every id must be an item of the dataset, every label one of the item's options (``parsed`` false means no label),
    and a judge must answer whole groups (config x attribute or task x condition x placement x format, both orders):
    a partial group would give rates over an arbitrary subset, so it is an error naming the first missing id.
    """
    _check_options_differ_in_more_than_case(items)
    options = items.set_index("id")["options"]
    judges: dict[str, list[pd.DataFrame]] = {}
    stems: dict[str, Path] = {}
    for spec in specs:
        name, sep, file = spec.partition("=")
        path = Path(file if sep else name)
        if not sep:
            name = path.stem
            if name in stems:
                raise InputError(f"two files would both be judge '{name}' ({stems[name]} and {path}); name them "
                                 f"NAME=FILE", file=path)
            stems[name] = path
        judges.setdefault(name, []).append(_read_one(path, options))
    out = {}
    for name, frames in judges.items():
        pred = pd.concat(frames, ignore_index=True)
        dup = pred["id"].duplicated()
        if dup.any():
            raise InputError(f"judge '{name}': id given twice (in {pred.loc[dup, 'file'].iloc[0]})",
                             value=pred.loc[dup, "id"].iloc[0])
        _check_whole_groups(name, pred, items)
        out[name] = pred[["id", "label"]]
    return out


def _check_options_differ_in_more_than_case(items: pd.DataFrame) -> None:
    """Labels are matched without case, so an item whose options differ only in case cannot be scored."""
    for item, options in zip(items["id"], items["options"], strict=True):
        folded = [str(o).casefold() for o in options]
        if len(set(folded)) < len(folded):
            raise InputError(f"item '{item}': options {list(options)} differ only in case, so answers cannot be "
                             f"matched to one of them; rebuild the dataset with `omniaudit build protocols` (it reads "
                             f"such labels as one class)")


def _read_one(path: Path, options: pd.Series) -> pd.DataFrame:
    raw, rows = read_records(path)
    missing = [c for c in ("id", "label") if c not in raw.columns]
    if missing:
        raise InputError(f"missing column(s) {missing} (a predictions file from `omniaudit judge` has id, order, raw, "
                         f"label, parsed)", file=path)
    ids = raw["id"].astype(str)
    unknown = ~ids.isin(options.index)
    fail_at(unknown, f"id not in the dataset ({int(unknown.sum())} unknown id(s))", path, rows, "id", ids)
    labels = []
    parsed = raw["parsed"] if "parsed" in raw.columns else pd.Series(True, index=raw.index)
    for row, item, label, ok in zip(rows, ids, raw["label"], parsed, strict=True):
        if label is None or label != label or str(label).strip() == "" or str(ok).strip().lower() in ("false", "0"):
            labels.append(None)
            continue
        by_case = {o.casefold(): o for o in options[item]}  # labels match whatever their case
        if str(label).strip().casefold() not in by_case:
            raise InputError(f"label is not one of the item's options {list(options[item])}", file=path, row=row,
                             column="label", value=label)
        labels.append(by_case[str(label).strip().casefold()])
    return pd.DataFrame({"id": ids, "label": labels, "file": str(path)})


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


def _estimates(cells: stats.ClusterRatios, config: ProtocolAuditConfig) -> dict[tuple, dict]:
    point, samples, counts = cells.resample(config.n_resamples, config.seed)
    return {key: stats.estimate(point[key], samples[key], counts[key]) for key in point}


def _nest(out: dict, keys: tuple, value: object) -> None:
    for k in keys[:-1]:
        out = out.setdefault(k, {})
    out[keys[-1]] = value


def audit_judge(items: pd.DataFrame, pred: pd.DataFrame, config: ProtocolAuditConfig = ProtocolAuditConfig()) -> dict:
    """All protocol metrics of one judge over the configs it answered."""
    df = items.merge(pred, on="id", how="left")
    result: dict = {}
    for name in CONFIGS:
        part = df[df["config"] == name].reset_index(drop=True)
        mask_answered = part["id"].isin(pred["id"]).to_numpy()
        if not mask_answered.any():
            continue
        part = part[mask_answered].reset_index(drop=True)  # a judge may answer a subset of conditions
        label, gold, cue = (part[c].to_numpy(dtype=object) for c in ("label", "gold", "cue"))
        parsed = pd.notna(part["label"]).to_numpy()
        correct = parsed & (label == gold)
        if name == "pairwise":
            _pairwise(part, label, parsed, correct, config, result)
            continue
        cells = stats.ClusterRatios(part["clip_id"].to_numpy())
        group = [part["attribute"].to_numpy(), part["condition"].to_numpy(),
                 part["placement"].fillna("").to_numpy()]
        for key in sorted(set(zip(*group, strict=True))):
            attribute, condition, placement = key
            mask = (group[0] == attribute) & (group[1] == condition) & (group[2] == placement)
            path = (name, attribute, f"{condition}/{placement}" if placement else condition)
            cells.add(("accuracy", *path), correct, mask)
            cells.add(("parse_rate", *path), parsed, mask)
            if name == "reference" and condition == "wrong":
                cells.add(("rf", attribute, placement), parsed & (label == cue), mask)
            if name == "cue_conflict":
                cells.add(("follow_cue", attribute, condition), parsed & (label == cue), mask)
        k_of = part.groupby("attribute")["k"].first().to_dict()
        for key, est in _estimates(cells, config).items():
            _nest(result, key, est)
            if key[0] == "rf":
                k = int(k_of[key[1]])
                _nest(result, ("rf_normalized", *key[1:]),
                      {"value": rf_normalized(est["value"], k), "ci": [rf_normalized(c, k) for c in est["ci"]],
                       "n": est["n"], "k": k})
    result["n_answered"] = int(df["id"].isin(pred["id"]).sum())
    return result


def _pairwise(part: pd.DataFrame, label: np.ndarray, parsed: np.ndarray, correct: np.ndarray,
              config: ProtocolAuditConfig, result: dict) -> None:
    task, fmt, order = (part[c].to_numpy() for c in ("task", "format", "order"))
    cells = stats.ClusterRatios(part["trial"].to_numpy())
    for t, f in sorted(set(zip(task, fmt, strict=True))):
        mask = (task == t) & (fmt == f)
        cells.add(("parse_rate", "pairwise", t, f), parsed, mask)
        if t == "identical":
            cells.add(("p_a", f), label == "A", mask & parsed)
        else:
            cells.add(("gold_aligned", f, t), correct, mask)
            cells.add(("accuracy", "pairwise", t, f), correct, mask)
    # lock: one indicator per trial with both orders parsed, attached to its AB row
    wide = part.assign(label=label).pivot(index="trial", columns="order", values="label")
    both = wide.dropna()
    same = (both.get("AB") == both.get("BA")) if len(both) else pd.Series(dtype=bool)
    is_ab = (order == "AB") & part["trial"].isin(both.index).to_numpy()
    locked = part["trial"].map(same).eq(True).to_numpy() & is_ab
    for t, f in sorted(set(zip(task, fmt, strict=True))):
        if t != "identical":
            cells.add(("lock", f, t), locked, is_ab & (task == t) & (fmt == f))
    for key, est in _estimates(cells, config).items():
        _nest(result, key, est)


def audit_protocols(items: pd.DataFrame, predictions: dict[str, pd.DataFrame],
                    config: ProtocolAuditConfig = ProtocolAuditConfig()) -> dict:
    """``audit.json``: each metric -> judge -> ... (see the module docstring)."""
    per_judge = {name: audit_judge(items, pred, config) for name, pred in predictions.items()}
    metrics = ("accuracy", "parse_rate", "rf", "rf_normalized", "lock", "gold_aligned", "p_a", "follow_cue")
    out: dict = {"judges": list(per_judge)}
    for metric in metrics:
        out[metric] = {name: res.get(metric, {}) for name, res in per_judge.items()}
    out["n_answered"] = {name: res["n_answered"] for name, res in per_judge.items()}
    out["bootstrap"] = {"n_resamples": config.n_resamples, "seed": config.seed, "confidence": 0.95,
                        "unit": "clip (pairwise: trial)"}
    return out


def run_protocols_audit(out_dir: str | Path, dataset: str | Path, predictions: list[str],
                        config: ProtocolAuditConfig = ProtocolAuditConfig(),
                        progress: Callable[[str], None] | None = None) -> Path:
    from omniaudit.evaluation.protocols_report import protocols_report

    say = progress or (lambda _m: None)
    say("loading dataset")
    items = load_items_meta(dataset)
    say("reading predictions")
    preds = read_judge_predictions(predictions, items)
    say("bootstrapping")
    result = {"dataset": str(dataset), **audit_protocols(items, preds, config)}
    out = Path(out_dir)
    with atomic_dir(out) as tmp:
        (tmp / "audit.json").write_text(to_json(result), encoding="utf-8")
        (tmp / "report.md").write_text(protocols_report(result), encoding="utf-8")
    return out
