"""Speed of the full preference audit vs a naive reference, in the same run.

The audit (all probes, three slices, 2,000-resample bootstrap CIs, length- and style-controlled win rates with their
2,000-refit CIs, source classifier, permutation and counterfactual controls) runs on the 2,096-pair embedded
benchmark. The naive reference computes the same numbers the obvious way: a Python loop calling scikit-learn
``f1_score`` per resample, one scikit-learn ``LogisticRegression`` per bootstrap resample for the length- and
style-controlled win rates, and ``TfidfVectorizer`` refitted per fold. Both give the same CIs and source accuracies
(checked below). Then prints ``speedup=<x> audit_s=<s> naive_s=<s>``, and the naive time of each part. Both run
with one BLAS thread (the audit sets it itself, the naive loops are given the same): with OpenBLAS's default two
threads beside another busy process, the naive GLM refits alone took anywhere from 9 to 58 s on a 2-core machine.

Scale: ``--pairs N`` (N above the default) then builds and audits an embedded benchmark of N pairs, each step in a
fresh process so that its peak RSS is its own, and prints ``scale pairs=<N> audit_s=<s> peak_rss_mb=<MB>``. The
bootstrap draws its resamples in bounded blocks (``stats.resample_weight_chunks``), so memory grows with the pairs,
not with pairs x resamples (the one-matrix bootstrap needed 1.1 GB at 16k pairs). The run fails when a step's peak
RSS exceeds ``--max-rss-gb`` (2). ``--no-speed`` runs the scale step alone.

    python benchmarks/preference_audit.py [--repeats 3] [--pairs 200000] [--max-rss-gb 2] [--no-speed]
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from threadpoolctl import threadpool_limits

from omniaudit.data_builders.preference import SyntheticSpec
from omniaudit.evaluation.preference import length_control, style_control
from omniaudit.evaluation.preference.audit import SLICES, PreferenceAuditConfig, audit_preference, load_pairs
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


def naive_controlled_cis(x: np.ndarray, y: np.ndarray, c1: np.ndarray, c2: np.ndarray, k: int, clusters: np.ndarray,
                         n_resamples: int, seed: int) -> np.ndarray:
    """(generators, 2): percentile CIs of the controlled win rates, one scikit-learn fit per resample of clusters."""
    codes = pd.factorize(clusters)[0]
    members = [np.flatnonzero(codes == c) for c in range(codes.max() + 1)]
    rates = []
    for draw in resample_indices(len(members), n_resamples, seed):
        rows = np.concatenate([members[c] for c in draw])
        if not 0 < y[rows].sum() < rows.size:
            continue
        theta = LogisticRegression(C=1.0, tol=1e-10, max_iter=1000).fit(x[rows], y[rows]).coef_[0][:k]
        p = 1 / (1 + np.exp(-(theta[c1[rows]] - theta[c2[rows]])))
        won = np.bincount(c1[rows], p, k) + np.bincount(c2[rows], 1 - p, k)
        rates.append(won / (np.bincount(c1[rows], minlength=k) + np.bincount(c2[rows], minlength=k)))
    return np.nanpercentile(np.array(rates), [2.5, 97.5], axis=0).T


def naive_glm_cis(pairs, config: PreferenceAuditConfig) -> dict[str, np.ndarray]:
    """The length- and style-controlled win rates' CIs, each GLM refitted per resample by scikit-learn."""
    full = pairs[pairs["is_binary"].astype(bool)].reset_index(drop=True)
    y = (full["preference"] == "a1").to_numpy(dtype=np.int64)
    g1, g2 = full["model1"].astype(str).to_numpy(), full["model2"].astype(str).to_numpy()
    generators = sorted(set(g1) | set(g2))
    index = {g: i for i, g in enumerate(generators)}
    c1, c2 = np.array([index[g] for g in g1]), np.array([index[g] for g in g2])
    x_lc, _ = length_control.lc_design(g1, g2, full["len1"].to_numpy(), full["len2"].to_numpy(), generators)
    z, _, _ = style_control.style_features(full["a1"].to_numpy(dtype=object), full["a2"].to_numpy(dtype=object),
                                           full["len1"].to_numpy(), full["len2"].to_numpy())
    x_sc = np.column_stack([length_control.generator_columns(g1, g2, generators), z])
    clusters = full["dedup_group"].to_numpy()
    return {part: naive_controlled_cis(x, y, c1, c2, len(generators), clusters, config.n_resamples, config.seed)
            for part, x in (("length_controlled", x_lc), ("style_controlled", x_sc))}


def naive_audit(pairs, config: PreferenceAuditConfig) -> tuple[dict, list[float], dict, dict[str, float]]:
    """Same audit with the vectorised parts replaced by the obvious loops; the last item: seconds per part."""
    seconds = {}
    t0 = time.perf_counter()
    audit, table = audit_preference(pairs, replace(config, n_resamples=0, source_classifier=False))
    y = (table["preference"] == "a1").to_numpy(dtype=np.int64)
    masks = {"full": np.ones(len(table), bool), **{s: table[s].to_numpy(bool) for s in SLICES[1:]}}
    cis = {}
    for name in audit["predictors"]:
        pred = decide(table[f"p_a1__{name}"].to_numpy())
        for s, m in masks.items():
            cis[name, s] = naive_bootstrap(y[m], pred[m], config.n_resamples, config.seed)
    seconds["waf_cis"], t0 = time.perf_counter() - t0, time.perf_counter()
    glm = naive_glm_cis(pairs, config)
    seconds["glm_refits"], t0 = time.perf_counter() - t0, time.perf_counter()
    accs = naive_source_accuracy(pairs)
    seconds["source_classifier"] = time.perf_counter() - t0
    return cis, accs, glm, seconds


DEFAULT_PAIRS = SyntheticSpec().n_pairs


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def scale_child(step: str, n_pairs: int, folder: str) -> None:
    """One step of the scale run in its own process (``--child``): its peak RSS is its own, printed as JSON."""
    import json

    import pandas as pd

    t0 = time.perf_counter()
    path = Path(folder) / "pairs.parquet"
    if step == "build":
        pairs, _, _ = load_pairs(None, spec=SyntheticSpec(n_pairs=n_pairs))
        pairs.to_parquet(path)
        extra = {"binary": int(pairs["is_binary"].sum())}
    else:
        audit, _ = audit_preference(pd.read_parquet(path), PreferenceAuditConfig())
        full = audit["predictors"]["length_generator_lr"]["full"]
        extra = {"waf": full["waf"], "ci": full["ci"]}
    print(json.dumps({"seconds": time.perf_counter() - t0, "peak_rss_mb": peak_rss_mb(), **extra}))


def scale(n_pairs: int, max_rss_gb: float) -> None:
    """Build, then audit (probes, 2,000-resample CIs, source classifier, controls), n_pairs embedded pairs, each in a
    fresh process so that each peak RSS is measured alone; both must stay below max_rss_gb."""
    import json
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out = {}
        for step in ("build", "audit"):
            run = subprocess.run([sys.executable, __file__, "--child", step, "--pairs", str(n_pairs), "--folder",
                                  folder], capture_output=True, text=True, check=False)
            if run.returncode:
                raise SystemExit(f"scale {step} failed:\n{run.stderr}")
            out[step] = json.loads(run.stdout.strip().splitlines()[-1])
    b, a = out["build"], out["audit"]
    print(f"scale: {b['binary']} binary pairs, length+generator WAF {a['waf']:.1f} [{a['ci'][0]:.1f}, "
          f"{a['ci'][1]:.1f}]; build {b['seconds']:.1f} s, peak RSS {b['peak_rss_mb']:.0f} MB")
    print(f"scale pairs={n_pairs} audit_s={a['seconds']:.1f} peak_rss_mb={a['peak_rss_mb']:.0f}")
    for step in ("build", "audit"):
        assert out[step]["peak_rss_mb"] < 1024 * max_rss_gb, \
            f"{step}: peak RSS {out[step]['peak_rss_mb']:.0f} MB exceeds {max_rss_gb} GB"


def main(repeats: int, n_pairs: int = DEFAULT_PAIRS, max_rss_gb: float = 2.0) -> None:
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
    with threadpool_limits(limits=1, user_api="blas"):  # as the audit runs (audit_preference): the same BLAS
        cis, accs, glm, parts = naive_audit(pairs, config)  # setting for both, so a busy core slows both alike
    naive_s = time.perf_counter() - t0
    worst = max(abs(a - b) for (name, s), ci in cis.items()
                for a, b in zip(ci, audit["predictors"][name][s]["ci"], strict=True))
    assert worst < 1e-9, f"fast and naive CIs differ by {worst}"
    glm_worst = max(float(np.nanmax(np.abs(cis_ - np.array([g[key] for g in audit[part]["generators"].values()],
                                                             dtype=float))))
                    for (part, key), cis_ in zip((("length_controlled", "lc_ci"), ("style_controlled", "sc_ci")),
                                                 glm.values(), strict=True))
    assert glm_worst < 1e-6, f"fast and naive controlled win-rate CIs differ by {glm_worst}"
    assert accs == audit["source_classifier"]["fold_accuracy"], "fast and naive source classifiers differ"
    print(f"audit runs: {', '.join(f'{t:.3f}' for t in times)} s; naive and fast CIs agree (WAF: max diff "
          f"{worst:.1e}; controlled win rates: {glm_worst:.1e})")
    print("naive parts: " + ", ".join(f"{part} {s:.1f} s" for part, s in parts.items()))
    print(f"speedup={naive_s / audit_s:.1f} audit_s={audit_s:.3f} naive_s={naive_s:.3f}")
    if n_pairs > DEFAULT_PAIRS:
        scale(n_pairs, max_rss_gb)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=DEFAULT_PAIRS,
                        help=f"also audit this many embedded pairs and report peak RSS (default {DEFAULT_PAIRS}: "
                             "speed only)")
    parser.add_argument("--max-rss-gb", type=float, default=2.0, help="fail above this peak RSS (default 2)")
    parser.add_argument("--no-speed", action="store_true", help="skip the speed comparison (scale run only)")
    parser.add_argument("--child", choices=["build", "audit"], help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        scale_child(args.child, args.pairs, args.folder)
    elif args.no_speed:
        scale(args.pairs, args.max_rss_gb)
    else:
        main(args.repeats, args.pairs, args.max_rss_gb)
