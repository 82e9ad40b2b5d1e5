"""Shortcut audit of a pairwise preference benchmark (EmoPrefer audit, §3-4 and appendices A-C).

Input: the annotated ``pairs`` table written by ``omniaudit build preference`` (fold, lengths, fold-exclusive priors,
slice flags) and optional external judge files. Output: the ``audit.json`` structure plus a per-pair predictions
table. Metrics never see a model: probes are fitted here, judges come in as prediction files.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from omniaudit.data_builders.hub import load_config
from omniaudit.data_builders.preference.build import (
    build_from_source,
    summarize,
    write_preference_dataset,
)
from omniaudit.data_builders.preference.judge import judge_table
from omniaudit.data_builders.preference.slices import SOURCE_PAIR_SEP
from omniaudit.data_builders.preference.synthetic import SyntheticSpec
from omniaudit.errors import InputError
from omniaudit.evaluation.audit_outputs import schema, shown_input
from omniaudit.evaluation.preference import (
    consensus,
    controlled,
    controls,
    length_control,
    odin_report,
    probes,
    report,
)
from omniaudit.evaluation.preference.audit_config import PROBES, SLICES, PreferenceAuditConfig
from omniaudit.evaluation.preference.comparisons import comparison, parse_comparisons, position_bias
from omniaudit.evaluation.preference.judge_files import (
    ORDERS,
    JudgeScores,
    judge_scores,
    parse_judge_specs,
    read_judge,
)
from omniaudit.evaluation.stats import (
    TIE,
    decide_with_ties,
    mcnemar_exact,
    prior_following,
    waf_against_null,
)
from omniaudit.io import atomic_dir, to_json
from omniaudit.tables import SUFFIXES

REQUIRED = ("id", "name", "model1", "a1", "model2", "a2", "preference", "fold", "len1", "len2", "prior_choice",
            "is_binary", "length_matched", "counter_stereotypical", "source_pair")


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

    A pairing whose winner is lopsided is where a style prior pays off (§6: report source-pair slices). ``correct``
    holds per-pair correctness in [0, 1] (a tie counts half).
    """
    out = {}
    winner = np.where(y == 1, binary["model1"], binary["model2"])
    for pair, idx in binary.groupby("source_pair", sort=True).indices.items():
        first = pair.split(SOURCE_PAIR_SEP)[0]
        out[pair] = {"n": int(idx.size), "first": first, "first_win_rate": float(np.mean(winner[idx] == first)),
                     "accuracy": {name: float(c[idx].mean()) for name, c in correct.items()}}
    return out


def bootstrap_clusters(binary: pd.DataFrame) -> tuple[np.ndarray | None, str]:
    """(cluster key per pair or None, what one resampling unit is).

    Rows that are not independent are resampled together: both orders of a source pair in a ``dual_order`` table
    (``pair_id``) and the copies of one pair (``dedup_group``, written by the builder). Otherwise pairs are resampled
    one by one, as in the paper.
    """
    column = next((c for c in ("dedup_group", "pair_id") if c in binary.columns), None)
    if column is None:
        return None, "pairs"
    key = binary[column].astype(str).to_numpy()
    n_units = len(set(key))
    if n_units == len(key):
        return None, "pairs"
    n_pairs = binary["pair_id"].nunique() if "pair_id" in binary.columns else len(binary)
    together = [what for what, present in (("both orders", n_pairs < len(binary)), ("duplicates", n_units < n_pairs))
                if present]
    return key, f"source pairs ({' and '.join(together)} together)"


def load_judges(config: PreferenceAuditConfig, binary: pd.DataFrame,
                all_ids: pd.Series) -> tuple[list[JudgeScores], dict[str, np.ndarray]]:
    """Every judge file read and checked against the audited pairs (before any probe is fitted), and each judge's
    P(a1) per presentation order: (pairs, 2) for orders ab, ba (runs averaged; NaN where that order is missing)."""
    specs = parse_judge_specs(config.judges)
    for spec in specs:
        spec.dataset, spec.partial, spec.extracted = config.dataset, config.judged_only, config.extracted
        if spec.name in PROBES:
            raise InputError(f"judge name '{spec.name}' clashes with a probe; name the judge with NAME=FILE",
                             file=spec.files[0])
    if config.judged_only and not specs:
        raise InputError("--judged-only restricts the audit to the pairs the judges cover, but no judge was given")
    judges = [judge_scores(spec, binary, all_ids=all_ids, allow_missing=config.judged_only) for spec in specs]
    return judges, {spec.name: per_order_scores(spec, binary) for spec in specs}


def per_order_scores(spec, binary: pd.DataFrame) -> np.ndarray:
    """(pairs, 2) P(a1) of one judge in order ab and in order ba alone, aligned with ``binary`` (NaN: not judged in
    that order, or every answer in it left unread); several runs of one (pair, order) are averaged, as for the
    averaged score. An unread answer is no pick of either slot: counted as half of each, a judge whose answers with
    the gold in slot B go unread would read as slot-A biased (a declared tie stays half a pick)."""
    rows = read_judge(spec)
    rows = rows.assign(p_a1=rows["p_a1"].where(~rows["source"].isin(("unparsed", "excluded"))))
    per_order = rows.groupby(["key", "order"])["p_a1"].mean().unstack()
    return per_order.reindex(index=binary[rows.attrs["key"]].astype(str), columns=list(ORDERS)).to_numpy(np.float64)


# one BLAS thread: the audit's matrix products are many small ones (blocks of bootstrap resamples), where a second
# thread costs more in synchronisation than it saves, and stalls them when another process holds a core
@threadpool_limits.wrap(limits=1, user_api="blas")
def audit_preference(pairs: pd.DataFrame, config: PreferenceAuditConfig | None = None,
                     progress=None) -> tuple[dict, pd.DataFrame]:
    """Run the audit; returns (audit.json dict, per-pair predictions DataFrame).

    Decisions come from P(a1) with ties kept (:func:`~omniaudit.evaluation.stats.decide_with_ties`): a tie counts
    half for each class in WAF, accuracy, prior-following and source-pair accuracy, and is left out of the exact
    McNemar tests (which need a right/wrong outcome); ties are counted per predictor and slice.
    """
    config = config or PreferenceAuditConfig()
    step = progress or (lambda _msg: None)
    _check_columns(pairs)
    binary = pairs[pairs["is_binary"].astype(bool)].reset_index(drop=True)
    if binary["preference"].nunique() < 2:
        raise InputError("the binary pairs hold a single label; WAF needs both a1 and a2")
    step("judge files")
    judges, orders = load_judges(config, binary, pairs["id"])  # a bad file fails before minutes of probe fitting
    annotations = consensus.read_annotations(config.annotations, pairs) if config.annotations else None
    odin = odin_report.odin_correlations(config.odin_runs) if config.odin_runs else None
    compare = parse_comparisons(config.compare, [*PROBES, *(js.name for js in judges)])
    y_all = (binary["preference"] == "a1").to_numpy(dtype=np.int64)
    generators = sorted(set(pairs["model1"]) | set(pairs["model2"]))

    step("content-blind probes")
    scores = predictor_scores(binary, generators, y_all)  # out-of-fold on every binary pair
    judge_meta = {}
    for js in judges:
        scores[js.name] = js.p_a1
        judge_meta[js.name] = _judge_meta(js)
    if config.reference not in scores:
        raise InputError(f"unknown McNemar reference '{config.reference}'; choose one of {sorted(scores)}")
    judged_only = None
    if config.judged_only:
        binary, scores, orders, judged_only = _judged_only(binary, scores, orders, judges)
    y = (binary["preference"] == "a1").to_numpy(dtype=np.int64)
    masks = {"full": np.ones(len(binary), dtype=bool),
             "length_matched": binary["length_matched"].to_numpy(dtype=bool),
             "counter_stereotypical": binary["counter_stereotypical"].to_numpy(dtype=bool)}
    clusters, unit = bootstrap_clusters(binary)
    names = list(scores)
    decisions = np.stack([decide_with_ties(scores[n]) for n in names])  # 1 a1, 0 a2, 0.5 tie
    correct = np.where(y == 1, decisions, 1.0 - decisions)  # 1 right, 0 wrong, 0.5 tie
    step("bootstrap CIs")
    prior = binary["prior_choice"].map({"a1": 1, "a2": 0, "abstain": -1}).to_numpy()
    predictors = _slice_estimates(y, names, decisions, correct, prior, masks, config, clusters)
    if judges:
        step("per-order WAF of the judges")
        for name, per_order in orders.items():
            judge_meta[name]["position_bias"] = position_bias(y, per_order, predictors[name], masks, config, clusters)
    if compare:
        step("paired comparisons")
    comparisons = [{"a": a, "b": b, "slices": comparison(y, decisions, names.index(a), names.index(b), masks, config,
                                                         clusters)} for a, b in compare]
    summary = summarize(pairs)
    decided = decisions != TIE
    audit = {
        "dataset": summary,
        "source_pairs": by_source_pair(binary, y, dict(zip(names, correct, strict=True))),
        "slices": {s: {"n": int(m.sum())} for s, m in masks.items()},
        "predictors": predictors,
        "judges": judge_meta,
        "bootstrap": {"n_resamples": config.n_resamples, "seed": config.seed, "confidence": 0.95,
                      "unit": unit,
                      "method": f"percentile, resampling {unit} within each slice, one-class resamples skipped"},
        "ties": {"rule": "P(a1) = 0.5 after averaging the orders is a tie: half credit for each class (WAF, "
                         "accuracy, prior-following); left out of McNemar",
                 "null": "null_waf is the WAF of a tie on every pair of the slice (a judge with no information; "
                         "not 50 when the labels are unbalanced); vs_null is WAF minus it with a paired CI",
                 "counts": {n: int((~decided[i]).sum()) for i, n in enumerate(names)}},
        **({"judged_only": judged_only} if judged_only is not None else {}),
        **({"comparisons": comparisons} if comparisons else {}),
    }
    audit.update(_benchmark_sections(pairs, y_all, generators, summary, config, step))
    if annotations is not None:
        step("multi-annotator consensus")
        scored = consensus.consensus_audit(annotations, pairs, binary, names, decisions, config, clusters)
        audit["consensus"] = {"file": str(config.annotations), **scored}
    if odin is not None:
        audit["odin"] = odin
    return audit, _pair_table(binary, names, scores, decisions, orders)


def _judge_meta(js) -> dict:
    """What audit.json says of one judge's file (its pairs in one or two orders, agreement, ties)."""
    meta = {"file": str(js.files[0]), "n_two_orders": int((js.n_orders == 2).sum()),
            "n_one_order": int((js.n_orders == 1).sum()), "order_agreement": js.order_agreement,
            "n_ties": js.n_ties, **js.meta}
    if len(js.files) > 1:
        meta["files"] = [str(f) for f in js.files]
    return meta


def _judged_only(binary: pd.DataFrame, scores: dict, orders: dict, judges: list):
    """``--judged-only``: the binary pairs every judge answered, with the scores and orders cut to them, and the
    record of what was kept."""
    covered = np.logical_and.reduce([js.covered for js in judges])
    if not covered.any():
        raise InputError("--judged-only: no binary pair is covered by every judge")
    folds = binary["fold"].to_numpy()
    record = {"n_pairs": int(covered.sum()), "n_binary": len(binary),
              "by_fold": {str(k): {"judged": int(covered[folds == k].sum()), "total": int((folds == k).sum())}
                          for k in np.unique(folds)},
              "per_judge": {js.name: int(js.covered.sum()) for js in judges}}
    return (binary[covered].reset_index(drop=True), {n: s[covered] for n, s in scores.items()},
            {n: o[covered] for n, o in orders.items()}, record)


def _slice_estimates(y, names: list[str], decisions, correct, prior, masks: dict, config: PreferenceAuditConfig,
                     clusters) -> dict[str, dict]:
    """Per predictor and slice: WAF with its CI against the slice's content-blind null, accuracy, prior-following,
    ties, and the exact McNemar test against the reference predictor."""
    decided = decisions != TIE
    ref = names.index(config.reference)
    predictors: dict[str, dict] = {n: {} for n in names}
    for slice_name, mask in masks.items():
        estimates, null, vs_null = waf_against_null(y[mask], decisions[:, mask], config.n_resamples, config.seed,
                                                    clusters=None if clusters is None else clusters[mask])
        for i, name in enumerate(names):
            entry = {"waf": estimates[i].value, "ci": list(estimates[i].ci), "n": int(mask.sum()),
                     "null_waf": null, "vs_null": vs_null[i],
                     "accuracy": float(correct[i, mask].mean()) if mask.any() else float("nan"),
                     "prior_following": prior_following(decisions[i, mask], prior[mask]),
                     "ties": int((~decided[i, mask]).sum())}
            if i != ref:
                both = mask & decided[i] & decided[ref]
                test = mcnemar_exact(correct[i, both] == 1, correct[ref, both] == 1)
                entry["mcnemar"] = {"reference": config.reference, **test,
                                    "n_ties_excluded": int((mask & ~both).sum())}
            predictors[name][slice_name] = entry
    return predictors


def _benchmark_sections(pairs: pd.DataFrame, y_all, generators: list[str], summary: dict,
                        config: PreferenceAuditConfig, step) -> dict:
    """What the audit says of the benchmark itself, whatever the judges (the scorecard leaves the costly ones out):
    generator lengths and length-controlled win rates, style-controlled strengths, the TF-IDF source classifier,
    the permutation and counterfactual controls."""
    out = {}
    full = pairs[pairs["is_binary"].astype(bool)].reset_index(drop=True)
    g1, g2 = full["model1"].to_numpy(dtype=object), full["model2"].to_numpy(dtype=object)
    clusters = full["dedup_group"].to_numpy() if "dedup_group" in full else None
    if config.length_control:
        step("generator lengths")
        out["lengths"] = length_control.length_by_generator(
            pairs["model1"].to_numpy(dtype=object), pairs["model2"].to_numpy(dtype=object), pairs["len1"].to_numpy(),
            pairs["len2"].to_numpy(), summary["win_rates"])
    if config.length_control or config.style_control:
        step("length- and style-controlled win rates (one set of bootstrap draws)")
        out.update(controlled.controlled_win_rates(
            g1, g2, full["a1"].to_numpy(dtype=object), full["a2"].to_numpy(dtype=object), full["len1"].to_numpy(),
            full["len2"].to_numpy(), y_all, config.n_resamples, config.seed, clusters, length=config.length_control,
            style=config.style_control))
    if config.source_classifier:
        step("TF-IDF source classifier")
        texts = np.concatenate([pairs["a1"].to_numpy(dtype=object), pairs["a2"].to_numpy(dtype=object)])
        sources = np.concatenate([pairs["model1"].to_numpy(dtype=object), pairs["model2"].to_numpy(dtype=object)])
        fold2 = np.concatenate([pairs["fold"].to_numpy(), pairs["fold"].to_numpy()])
        out["source_classifier"] = probes.source_classifier(texts, sources.astype(str), fold2)
    if config.controls:
        step("permutation and counterfactual controls")
        fold = full["fold"].to_numpy()
        out["controls"] = {
            "identity_permutation": controls.identity_permutation(g1, g2, y_all, fold, generators,
                                                                  config.permutation_seeds),
            "counterfactual_swap": controls.counterfactual_swap(full["len1"].to_numpy(), full["len2"].to_numpy(),
                                                                g1, g2, y_all, fold, generators),
        }
    return out


def _pair_table(binary: pd.DataFrame, names: list[str], scores: dict, decisions, orders: dict) -> pd.DataFrame:
    """The per-pair predictions table: each predictor's P(a1), decision, and a judge's P(a1) per order."""
    table = binary[["id", "name", "model1", "model2", "preference", "fold", "prior_choice", *SLICES[1:]]].copy()
    for i, name in enumerate(names):
        table[f"p_a1__{name}"] = scores[name]
        table[f"pred__{name}"] = np.select([decisions[i] == 1, decisions[i] == 0], ["a1", "a2"], "tie")
        if name in orders:
            for j, order in enumerate(ORDERS):
                table[f"p_a1_{order}__{name}"] = orders[name][:, j]
    return table


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
    with atomic_dir(out_dir) as tmp:
        if card is not None:  # written first: judge files are checked against its `judge` config
            write_preference_dataset(tmp / "dataset", {"pairs": pairs, "judge": judge_table(pairs)}, card)
        dataset = tmp / "dataset" if card is not None else data
        audit, predictions = audit_preference(pairs, replace(config, dataset=config.dataset or dataset), progress)
        write_audit_outputs(tmp, audit, predictions, pairs, source, config.judges, base=out_dir)
    return Path(out_dir)


def shown_files(audit: dict, base: str | Path | None = None) -> dict:
    """``audit`` with the input files it names (judges' ``file`` / ``files``, the consensus ``file``, ODIN runs'
    ``file``) as :func:`~omniaudit.evaluation.audit_outputs.shown_input` names them: relative to the output folder
    ``base`` when inside it, else by name, never where they live on this machine. In place; returned."""
    for meta in (audit.get("judges") or {}).values():
        if "file" in meta:
            meta["file"] = shown_input(meta["file"], base)
        if "files" in meta:
            meta["files"] = [shown_input(f, base) for f in meta["files"]]
    for entry in (audit.get("consensus") or {}, *((audit.get("odin") or {}).get("runs") or {}).values()):
        if "file" in entry:
            entry["file"] = shown_input(entry["file"], base)
    return audit


def write_audit_outputs(tmp: Path, audit: dict, predictions: pd.DataFrame, pairs: pd.DataFrame, source: str,
                        judges: list = (), base: str | Path | None = None) -> None:
    """audit.json, report.md, the figures and predictions.csv of a preference audit, into ``tmp`` (the folder that
    becomes ``base``, the output folder; default ``tmp``): every input file named relative to it or by its name
    (:func:`shown_files`), never where it lives on this machine."""
    base = tmp if base is None else base
    shown_files(audit, base)
    audit["source"] = shown_input(source, base)
    figures = {"full_vs_counter": "waf_full_vs_counter.png", "win_rates": "generator_win_rates.png"}
    if "odin" in audit:
        figures["odin"] = "fig2a_odin_correlations.png"
    audit["figures"] = figures
    binary = pairs[pairs["is_binary"].astype(bool)]
    counter = binary[binary["counter_stereotypical"].astype(bool)]
    prevalence = (float((binary["preference"] == "a1").mean()),
                  float((counter["preference"] == "a1").mean()) if len(counter) else 0.5)
    report.plot_full_vs_counter(audit, prevalence, tmp / figures["full_vs_counter"])
    report.plot_win_rates(audit["dataset"]["win_rates"], tmp / figures["win_rates"])
    if "odin" in audit:
        odin_report.plot_odin_correlations(audit["odin"], tmp / figures["odin"])
    audit = {"schema": schema("preference", source, [str(j) for j in judges], base), **audit}
    (tmp / "audit.json").write_text(to_json(audit), encoding="utf-8")
    (tmp / "report.md").write_text(report.preference_report(audit, figures, source), encoding="utf-8")
    predictions.to_csv(tmp / "predictions.csv", index=False)
