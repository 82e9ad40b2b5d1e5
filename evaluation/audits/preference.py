"""Shortcut audit of a pairwise preference benchmark (EmoPrefer audit, §3-4 and appendices A-C).

Input: the annotated ``pairs`` table written by ``omniaudit build preference`` (fold, lengths, fold-exclusive priors,
slice flags) and optional external judge files. Output: the ``audit.json`` structure plus a per-pair predictions
table. Metrics never see a model: probes are fitted here, judges come in as prediction files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.data_builders.hub import load_config, write_hub_dataset
from omniaudit.data_builders.preference.build import (
    SPLIT,
    build_from_source,
    summarize,
)
from omniaudit.data_builders.preference.slices import SOURCE_PAIR_SEP
from omniaudit.data_builders.preference.synthetic import SyntheticSpec
from omniaudit.errors import InputError
from omniaudit.evaluation import controls, probes, report
from omniaudit.evaluation.judge_files import judge_scores
from omniaudit.evaluation.stats import (
    BOOTSTRAP_SEED,
    N_RESAMPLES,
    accuracy,
    bootstrap_waf,
    decide,
    mcnemar_exact,
    prior_following,
)
from omniaudit.io import atomic_dir, to_json
from omniaudit.tables import SUFFIXES

SLICES = ("full", "length_matched", "counter_stereotypical")
PROBES = ("length_lr", "generator_lr", "length_generator_lr", "winrate_rule")
REQUIRED = ("id", "name", "model1", "a1", "model2", "a2", "preference", "fold", "len1", "len2", "prior_choice",
            "is_binary", "length_matched", "counter_stereotypical", "source_pair")


@dataclass
class PreferenceAuditConfig:
    n_resamples: int = N_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    reference: str = "length_generator_lr"  # McNemar reference predictor
    permutation_seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    source_classifier: bool = True
    controls: bool = True
    judges: list[Path] = field(default_factory=list)


def _check_columns(pairs: pd.DataFrame) -> None:
    missing = [c for c in REQUIRED if c not in pairs.columns]
    if missing:
        raise InputError(f"not an omniaudit preference table: missing column(s) {missing}; build it with "
                         "`omniaudit build preference` first")


def predictor_scores(binary: pd.DataFrame, generators: list[str], y: np.ndarray) -> dict[str, np.ndarray]:
    """Out-of-fold P(a1) of each content-blind probe (the win-rate rule gives 0/1)."""
    fold = binary["fold"].to_numpy()
    features = probes.probe_features(binary, generators)
    scores = {name: probes.oof_logistic(x, y, fold)[0] for name, x in features.items()}
    choice = binary["prior_choice"].map({"a1": 1, "a2": 0, "abstain": -1}).to_numpy()
    scores["winrate_rule"] = probes.winrate_rule(choice, y, fold).astype(np.float64)
    return scores


def by_source_pair(binary: pd.DataFrame, y: np.ndarray, correct: dict[str, np.ndarray]) -> dict:
    """Per unordered source pairing: size, how often its first generator wins, and each predictor's accuracy.

    A pairing whose winner is lopsided is where a style prior pays off (§6: report source-pair slices).
    """
    out = {}
    winner = np.where(y == 1, binary["model1"], binary["model2"])
    for pair, idx in binary.groupby("source_pair", sort=True).indices.items():
        first = pair.split(SOURCE_PAIR_SEP)[0]
        out[pair] = {"n": int(idx.size), "first": first, "first_win_rate": float(np.mean(winner[idx] == first)),
                     "accuracy": {name: float(c[idx].mean()) for name, c in correct.items()}}
    return out


def audit_preference(pairs: pd.DataFrame, config: PreferenceAuditConfig | None = None,
                     progress=None) -> tuple[dict, pd.DataFrame]:
    """Run the audit; returns (audit.json dict, per-pair predictions DataFrame)."""
    config = config or PreferenceAuditConfig()
    step = progress or (lambda _msg: None)
    _check_columns(pairs)
    binary = pairs[pairs["is_binary"].astype(bool)].reset_index(drop=True)
    if binary["preference"].nunique() < 2:
        raise InputError("the binary pairs hold a single label; WAF needs both a1 and a2")
    y = (binary["preference"] == "a1").to_numpy(dtype=np.int64)
    generators = sorted(set(pairs["model1"]) | set(pairs["model2"]))
    prior = binary["prior_choice"].map({"a1": 1, "a2": 0, "abstain": -1}).to_numpy()
    masks = {"full": np.ones(len(binary), dtype=bool),
             "length_matched": binary["length_matched"].to_numpy(dtype=bool),
             "counter_stereotypical": binary["counter_stereotypical"].to_numpy(dtype=bool)}

    step("content-blind probes")
    scores = predictor_scores(binary, generators, y)
    judge_meta = {}
    for path in config.judges:
        js = judge_scores(path, binary, all_ids=pairs["id"])
        if js.name in scores:
            raise InputError(f"judge name '{js.name}' clashes with another predictor; rename the file", file=path)
        scores[js.name] = js.p_a1
        judge_meta[js.name] = {"file": str(path), "n_two_orders": int((js.n_orders == 2).sum()),
                               "n_one_order": int((js.n_orders == 1).sum()), "order_agreement": js.order_agreement}
    if config.reference not in scores:
        raise InputError(f"unknown McNemar reference '{config.reference}'; choose one of {sorted(scores)}")

    names = list(scores)
    decisions = np.stack([decide(scores[n]) for n in names])
    correct = decisions == y
    ref = names.index(config.reference)
    step("bootstrap CIs")
    predictors: dict[str, dict] = {n: {} for n in names}
    for slice_name, mask in masks.items():
        estimates = bootstrap_waf(y[mask], decisions[:, mask], config.n_resamples, config.seed)
        for i, name in enumerate(names):
            entry = {"waf": estimates[i].value, "ci": list(estimates[i].ci), "n": int(mask.sum()),
                     "accuracy": accuracy(y[mask], decisions[i, mask]) if mask.any() else float("nan"),
                     "prior_following": prior_following(decisions[i, mask], prior[mask])}
            if i != ref:
                test = mcnemar_exact(correct[i, mask], correct[ref, mask])
                entry["mcnemar"] = {"reference": config.reference, **test}
            predictors[name][slice_name] = entry

    audit = {
        "dataset": summarize(pairs),
        "source_pairs": by_source_pair(binary, y, dict(zip(names, correct, strict=True))),
        "slices": {s: {"n": int(m.sum())} for s, m in masks.items()},
        "predictors": predictors,
        "judges": judge_meta,
        "bootstrap": {"n_resamples": config.n_resamples, "seed": config.seed, "confidence": 0.95,
                      "method": "percentile, resampling pairs within each slice, one-class resamples skipped"},
    }
    if config.source_classifier:
        step("TF-IDF source classifier")
        texts = np.concatenate([pairs["a1"].to_numpy(dtype=object), pairs["a2"].to_numpy(dtype=object)])
        sources = np.concatenate([pairs["model1"].to_numpy(dtype=object), pairs["model2"].to_numpy(dtype=object)])
        fold2 = np.concatenate([pairs["fold"].to_numpy(), pairs["fold"].to_numpy()])
        audit["source_classifier"] = probes.source_classifier(texts, sources.astype(str), fold2)
    if config.controls:
        step("permutation and counterfactual controls")
        g1, g2 = binary["model1"].to_numpy(dtype=object), binary["model2"].to_numpy(dtype=object)
        fold = binary["fold"].to_numpy()
        audit["controls"] = {
            "identity_permutation": controls.identity_permutation(g1, g2, y, fold, generators,
                                                                  config.permutation_seeds),
            "counterfactual_swap": controls.counterfactual_swap(binary["len1"].to_numpy(), binary["len2"].to_numpy(),
                                                                g1, g2, y, fold, generators),
        }

    table = binary[["id", "name", "model1", "model2", "preference", "fold", "prior_choice", *SLICES[1:]]].copy()
    for name in names:
        table[f"p_a1__{name}"] = scores[name]
        table[f"pred__{name}"] = np.where(decide(scores[name]) == 1, "a1", "a2")
    return audit, table


def load_pairs(data: str | Path | None, columns: dict[str, str] | None = None, dataset_config: str = "pairs",
               spec: SyntheticSpec | None = None) -> tuple[pd.DataFrame, str, str | None]:
    """(pairs to audit, source description, card of a freshly built dataset or None) for ``--data``.

    None builds the embedded default; a CSV/JSONL/Parquet file is validated and built; a folder in the Hub layout
    (or a Hub repo id) is read with ``datasets.load_dataset``.
    """
    if data is not None and not Path(data).is_file() and Path(data).suffix.lower() not in SUFFIXES:
        return load_config(data, dataset_config), str(data), None  # a built folder, or a Hub repo id
    tables, source, card = build_from_source(data, columns, spec=spec)
    return tables["pairs"], source, card


def run_preference_audit(out_dir: str | Path, data: str | Path | None = None, columns: dict[str, str] | None = None,
                         dataset_config: str = "pairs", config: PreferenceAuditConfig | None = None,
                         spec: SyntheticSpec | None = None, progress=None) -> Path:
    """Audit and write ``audit.json``, ``report.md``, two PNG figures, ``predictions.csv``, and ``dataset/`` (the
    Hub-layout dataset) when the pairs were built from a file or the embedded default.

    The folder appears complete or not at all.
    """
    config = config or PreferenceAuditConfig()
    pairs, source, card = load_pairs(data, columns, dataset_config, spec)
    audit, predictions = audit_preference(pairs, config, progress)
    audit["source"] = source
    figures = {"full_vs_counter": "waf_full_vs_counter.png", "win_rates": "generator_win_rates.png"}
    audit["figures"] = figures
    binary = pairs[pairs["is_binary"].astype(bool)]
    counter = binary[binary["counter_stereotypical"].astype(bool)]
    prevalence = (float((binary["preference"] == "a1").mean()),
                  float((counter["preference"] == "a1").mean()) if len(counter) else 0.5)
    with atomic_dir(out_dir) as tmp:
        if card is not None:
            write_hub_dataset(tmp / "dataset", {"pairs": {SPLIT: pairs}}, card)
        report.plot_full_vs_counter(audit, prevalence, tmp / figures["full_vs_counter"])
        report.plot_win_rates(audit["dataset"]["win_rates"], tmp / figures["win_rates"])
        (tmp / "audit.json").write_text(to_json(audit), encoding="utf-8")
        (tmp / "report.md").write_text(report.preference_report(audit, figures, source), encoding="utf-8")
        predictions.to_csv(tmp / "predictions.csv", index=False)
    return Path(out_dir)
