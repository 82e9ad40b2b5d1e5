"""Speed of the full preference audit vs a naive reference, in the same run.

The audit (all probes, three slices, 2,000-resample bootstrap CIs, source classifier, permutation and counterfactual
controls) runs on the 2,096-pair embedded benchmark. The naive reference computes the same numbers the obvious way: a
Python loop calling scikit-learn ``f1_score`` per resample, and ``TfidfVectorizer`` refitted per fold. Both give the
same CIs and source accuracies (checked below). Last line: ``speedup=<x> audit_s=<s> naive_s=<s>``.

    python benchmarks/preference_audit.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

from omniaudit.evaluation.audits.preference import SLICES, PreferenceAuditConfig, audit_preference, load_pairs
from omniaudit.evaluation.stats import decide, resample_indices


def naive_bootstrap(y: np.ndarray, pred: np.ndarray, n_resamples: int, seed: int) -> tuple[float, float]:
    vals = []
    for idx in resample_indices(y.size, n_resamples, seed):
        if 0 < y[idx].sum() < y.size:
            vals.append(100 * f1_score(y[idx], pred[idx], average="weighted"))
    return tuple(np.percentile(vals, [2.5, 97.5]))


def naive_source_accuracy(pairs) -> list[float]:
    texts = np.concatenate([pairs["a1"], pairs["a2"]]).astype(object)
    sources = np.concatenate([pairs["model1"], pairs["model2"]]).astype(str)
    fold = np.concatenate([pairs["fold"], pairs["fold"]])
    accs = []
    for k in np.unique(fold):
        vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, max_features=20000)
        model = LogisticRegression(max_iter=2000).fit(vec.fit_transform(texts[fold != k]), sources[fold != k])
        accs.append(float(np.mean(model.predict(vec.transform(texts[fold == k])) == sources[fold == k])))
    return accs


def naive_audit(pairs, config: PreferenceAuditConfig) -> tuple[dict, list[float]]:
    """Same audit with the vectorised parts replaced by the obvious loops."""
    audit, table = audit_preference(pairs, replace(config, n_resamples=0, source_classifier=False))
    y = (table["preference"] == "a1").to_numpy(dtype=np.int64)
    masks = {"full": np.ones(len(table), bool), **{s: table[s].to_numpy(bool) for s in SLICES[1:]}}
    cis = {}
    for name in audit["predictors"]:
        pred = decide(table[f"p_a1__{name}"].to_numpy())
        for s, m in masks.items():
            cis[name, s] = naive_bootstrap(y[m], pred[m], config.n_resamples, config.seed)
    return cis, naive_source_accuracy(pairs)


def main(repeats: int) -> None:
    pairs, _, _ = load_pairs(None)
    config = PreferenceAuditConfig()
    print(f"pairs={len(pairs)} binary={int(pairs['is_binary'].sum())} resamples={config.n_resamples}")
    audit_preference(pairs, config)  # warm-up (imports, caches)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        audit, _ = audit_preference(pairs, config)
        times.append(time.perf_counter() - t0)
    audit_s = min(times)
    t0 = time.perf_counter()
    cis, accs = naive_audit(pairs, config)
    naive_s = time.perf_counter() - t0
    worst = max(abs(a - b) for (name, s), ci in cis.items()
                for a, b in zip(ci, audit["predictors"][name][s]["ci"], strict=True))
    assert worst < 1e-9, f"fast and naive CIs differ by {worst}"
    assert accs == audit["source_classifier"]["fold_accuracy"], "fast and naive source classifiers differ"
    print(f"audit runs: {', '.join(f'{t:.3f}' for t in times)} s; naive and fast CIs agree (max diff {worst:.1e})")
    print(f"speedup={naive_s / audit_s:.1f} audit_s={audit_s:.3f} naive_s={naive_s:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    main(parser.parse_args().repeats)
