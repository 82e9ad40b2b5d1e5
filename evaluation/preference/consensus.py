"""Multi-annotator consensus for preference labels (EmoPrefer audit remedy: "multi-annotator consensus").

When a benchmark's source keeps each annotator's label (EmoPrefer-V1 had three per pair; V2 kept one), the audit can
score every predictor against a consensus instead of one rater. Read here: a long annotations file, one row per
(pair, annotator): ``name`` (or ``id``), ``annotator``, ``label`` in {a1, a2, same}. Computed:

* majority vote per pair (a plurality; a tie between the top labels is no consensus) and the share of the pair's
  annotators who agree with it; unanimous pairs;
* Fleiss' kappa over the pairs with at least two ratings (Fleiss, 1971; per-item rater counts may differ, each item's
  agreement uses its own count);
* Dawid-Skene (1979) EM: a full confusion matrix per annotator and a posterior label per pair, initialised from the
  majority-vote shares. cleanlab's multiannotator module needs classifier probabilities and is not in the pinned
  stack, so this is implemented here (pure NumPy) and tested on planted annotators.

:func:`consensus_audit` is the audit's consensus section: every predictor scored against each consensus target.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation.preference.audit_config import PreferenceAuditConfig
from omniaudit.evaluation.stats import bootstrap_waf
from omniaudit.tables import fail_at, read_records

CLASSES = ("a1", "a2", "same")


def read_annotations(path: str | Path, pairs: pd.DataFrame) -> pd.DataFrame:
    """Validated annotation rows ``key, annotator, label`` (key = the dataset's ``id`` or ``name``, as given).

    ``attrs["key"]`` says which column keys the rows. Unknown pairs, bad labels and an annotator labelling one pair
    twice are errors naming the row.
    """
    path = Path(path)
    raw, rows = read_records(path)
    key = "id" if "id" in raw.columns else "name"
    need = [c for c in (key, "annotator", "label") if c not in raw.columns]
    if need:
        raise InputError(f"expected columns name (or id), annotator and label (a1, a2 or same); missing {need}; the "
                         f"file has {list(raw.columns)}", file=path)
    if raw.empty:
        raise InputError("no rows", file=path)
    keys = raw[key].astype(str).str.strip()
    annotators = raw["annotator"].astype(str).str.strip()
    labels = raw["label"].astype(str).str.strip().str.lower()
    fail_at(annotators == "", "expected an annotator id", path, rows, "annotator", raw["annotator"])
    fail_at(~labels.isin(CLASSES), f"expected a label in {', '.join(CLASSES)}", path, rows, "label", raw["label"])
    if key == "name" and not pairs["name"].is_unique:
        raise InputError("dataset names repeat, so annotation rows must carry the dataset's 'id' column", file=path)
    fail_at(~keys.isin(set(pairs[key].astype(str))), f"{key} not in the dataset", path, rows, key, raw[key])
    out = pd.DataFrame({"key": keys, "annotator": annotators, "label": labels})
    fail_at(out.duplicated(["key", "annotator"]), "this annotator already labelled this pair", path, rows,
            "annotator", raw["annotator"])
    out.attrs["key"] = key
    return out


def label_matrix(annotations: pd.DataFrame, keys: pd.Series) -> tuple[np.ndarray, list[str]]:
    """(items x annotators) class codes (index into CLASSES; -1: not rated) for ``keys``, and the annotator ids."""
    annotators = sorted(annotations["annotator"].unique())
    item = pd.Index(keys.astype(str)).get_indexer(annotations["key"])
    col = pd.Index(annotators).get_indexer(annotations["annotator"])
    codes = np.full((len(keys), len(annotators)), -1, dtype=np.int64)
    inside = item >= 0
    codes[item[inside], col[inside]] = pd.Index(CLASSES).get_indexer(annotations["label"])[inside]
    return codes, annotators


def counts_per_item(codes: np.ndarray, n_classes: int = len(CLASSES)) -> np.ndarray:
    """(items, classes) number of ratings of each class per item."""
    return np.stack([(codes == c).sum(axis=1) for c in range(n_classes)], axis=1)


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa from (items, categories) rating counts; items with fewer than two ratings are left out.

    ``P_i = (sum_j n_ij^2 - n_i) / (n_i (n_i - 1))``, ``p_j = sum_i n_ij / sum_i n_i``, kappa = (mean P_i - sum p_j^2)
    / (1 - sum p_j^2). With equal rater counts this is Fleiss (1971); NaN when no item has two ratings or every rating
    is one category.
    """
    counts = np.asarray(counts, dtype=np.float64)
    n_i = counts.sum(axis=1)
    counts, n_i = counts[n_i >= 2], n_i[n_i >= 2]
    if not n_i.size:
        return float("nan")
    p_i = ((counts**2).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_j = counts.sum(axis=0) / n_i.sum()
    p_e = float((p_j**2).sum())
    return float((p_i.mean() - p_e) / (1 - p_e)) if p_e < 1 else float("nan")


def majority_vote(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(class code per item, -1 where the top classes tie or nothing was rated; share of ratings for that class)."""
    counts = np.asarray(counts)
    top = counts.max(axis=1)
    winners = (counts == top[:, None]).sum(axis=1)
    label = np.where((winners == 1) & (top > 0), counts.argmax(axis=1), -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(counts.sum(axis=1) > 0, top / counts.sum(axis=1), np.nan)
    return label, share


def dawid_skene(codes: np.ndarray, n_classes: int = len(CLASSES), max_iter: int = 200,
                tol: float = 1e-8) -> dict:
    """Dawid-Skene EM on (items, annotators) class codes (-1 = not rated).

    E-step: ``T[i, k] ~ prior[k] * prod_a pi[a, k, l_ia]``; M-step: ``pi[a, k, l] = sum_i T[i, k] [l_ia = l] /
    sum_i T[i, k] [a rated i]`` and ``prior = mean_i T[i]``. Starts from the majority-vote shares; a tiny count
    (1e-6) keeps unseen confusions finite. Returns ``posterior`` (items, classes), ``confusion`` (annotators, classes,
    classes; rows = true class), ``prior``, ``label`` (argmax; -1 for unrated items) and ``iterations``.
    """
    codes = np.asarray(codes)
    n_items, n_ann = codes.shape
    onehot = np.stack([(codes == c) for c in range(n_classes)], axis=2).astype(np.float64)  # (i, a, l)
    rated = codes >= 0
    counts = onehot.sum(axis=1)
    total = counts.sum(axis=1, keepdims=True)
    post = np.where(total > 0, counts / np.where(total > 0, total, 1), 1.0 / n_classes)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        prior = post.mean(axis=0)
        conf = np.einsum("ik,ial->akl", post, onehot) + 1e-6
        conf /= conf.sum(axis=2, keepdims=True)
        log_lik = np.log(np.maximum(prior, 1e-300))[None, :] + np.einsum("ial,akl->ik", onehot, np.log(conf))
        log_lik -= log_lik.max(axis=1, keepdims=True)
        new = np.exp(log_lik)
        new /= new.sum(axis=1, keepdims=True)
        done = np.max(np.abs(new - post)) < tol
        post = new
        if done:
            break
    label = np.where(rated.any(axis=1), post.argmax(axis=1), -1)
    return {"posterior": post, "confusion": conf, "prior": post.mean(axis=0), "label": label, "iterations": it}


def consensus_audit(annotations: pd.DataFrame, pairs: pd.DataFrame, binary: pd.DataFrame, names: list[str],
                    decisions: np.ndarray, config: PreferenceAuditConfig, clusters: np.ndarray | None) -> dict:
    """Agreement among annotators and every predictor scored against consensus labels (unanimous pairs, majority
    vote, Dawid-Skene) on the audited binary pairs that have annotations."""
    key = annotations.attrs["key"]
    codes_all, annotators = label_matrix(annotations, pairs[key])
    counts_all = counts_per_item(codes_all)
    rated_all = counts_all.sum(axis=1) > 0
    ds = dawid_skene(codes_all[rated_all])
    ds_label = np.full(len(pairs), -1)
    ds_label[rated_all] = ds["label"]
    majority_all, share_all = majority_vote(counts_all)
    position = pd.Index(pairs[key].astype(str)).get_indexer(binary[key].astype(str))
    counts, majority, ds_bin = counts_all[position], majority_all[position], ds_label[position]
    n_rated = counts.sum(axis=1)
    dataset = (binary["preference"] == "a1").to_numpy(np.int64)
    unanimous_label = np.where((n_rated >= 2) & (counts.max(axis=1) == n_rated), counts.argmax(axis=1), -1)
    targets = {"unanimous": unanimous_label, "majority": majority, "dawid_skene": ds_bin}
    scored = {}
    for target, label in targets.items():
        keep = np.isin(label, (0, 1))  # a1 or a2 (class codes 0 and 1); "same" and no consensus are left out
        y = (label[keep] == 0).astype(np.int64)
        entry: dict = {"n": int(keep.sum()),
                       "agrees_with_dataset_label": float(np.mean(y == dataset[keep])) if keep.any() else None}
        if keep.any() and 0 < y.sum() < y.size:
            est = bootstrap_waf(y, decisions[:, keep], config.n_resamples, config.seed,
                                clusters=None if clusters is None else clusters[keep])
            entry["predictors"] = {n: {"waf": e.value, "ci": list(e.ci)} for n, e in zip(names, est, strict=True)}
        scored[target] = entry
    per_annotator = {}
    for j, name in enumerate(annotators):
        rated = codes_all[:, j] >= 0
        agree = rated & (majority_all >= 0)
        per_annotator[name] = {"n": int(rated.sum()),
                               "agrees_with_majority": float(np.mean(codes_all[agree, j] == majority_all[agree]))
                               if agree.any() else None,
                               "dawid_skene_accuracy": float(ds["prior"] @ np.diag(ds["confusion"][j]))}
    ratings = counts_all[rated_all].sum(axis=1)
    return {"n_pairs_annotated": int(rated_all.sum()), "n_annotators": len(annotators),
            "ratings_per_pair": {"min": int(ratings.min()), "max": int(ratings.max()), "mean": float(ratings.mean())},
            "fleiss_kappa": fleiss_kappa(counts_all), "classes": list(CLASSES),
            "majority_share_mean": float(np.nanmean(share_all[rated_all])),
            "n_binary_annotated": int((n_rated > 0).sum()), "targets": scored, "annotators": per_annotator,
            "dawid_skene_iterations": int(ds["iterations"])}
