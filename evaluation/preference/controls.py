"""Diagnostic controls of appendix C: do the probes rest on generator identity, or on something hidden behind it?

* identity permutation: jointly permute each pair's (g1, g2) relative to the labels (seeded), refit the generator
  probe within every fold; the WAF across seeds is the empirical label-blind floor;
* counterfactual swap: with the fitted combined probe fixed, swap only the test-time identity vectors, or only the
  length assignments, and count flipped decisions; exact McNemar on the paired flip indicators.
"""

from __future__ import annotations

import numpy as np

from omniaudit.evaluation.preference.probes import (
    checked_once,
    generator_features,
    length_features,
    oof_logistic,
)
from omniaudit.evaluation.stats import decide, mcnemar_exact, mean_sd, waf


def identity_permutation(gen1: np.ndarray, gen2: np.ndarray, y: np.ndarray, fold: np.ndarray,
                         generators: list[str], seeds: tuple[int, ...] = (0, 1, 2, 3, 4)) -> dict:
    wafs = []
    for seed in seeds:
        perm = np.random.default_rng(seed).permutation(y.size)
        proba, _ = oof_logistic(generator_features(gen1[perm], gen2[perm], generators), y, fold)
        wafs.append(waf(y, decide(proba)))
    return {"probe": "generator_lr", "seeds": list(seeds), "waf": wafs, **mean_sd(np.asarray(wafs))}


def counterfactual_swap(len1: np.ndarray, len2: np.ndarray, gen1: np.ndarray, gen2: np.ndarray, y: np.ndarray,
                        fold: np.ndarray, generators: list[str]) -> dict:
    """Flip rates of the combined (length + generator) probe under identity-only and length-only swaps."""
    length, length_sw = length_features(len1, len2), length_features(len2, len1)
    gen, gen_sw = generator_features(gen1, gen2, generators), generator_features(gen2, gen1, generators)
    _, models = oof_logistic(np.hstack([length, gen]), y, fold)
    flip_identity = np.zeros(y.size, dtype=bool)
    flip_length = np.zeros(y.size, dtype=bool)
    with checked_once():  # the features were checked by oof_logistic
        for k, model in zip(np.unique(fold), models, strict=True):
            if model is None:
                continue
            test = fold == k

            def decisions(lf: np.ndarray, gf: np.ndarray, test: np.ndarray = test, model=model) -> np.ndarray:
                return decide(model.predict_proba(np.hstack([lf[test], gf[test]]))[:, 1])

            base = decisions(length, gen)
            flip_identity[test] = decisions(length, gen_sw) != base
            flip_length[test] = decisions(length_sw, gen) != base
    return {
        "probe": "length_generator_lr",
        "identity_flip_rate": float(flip_identity.mean()),
        "length_flip_rate": float(flip_length.mean()),
        "mcnemar": mcnemar_exact(flip_identity, flip_length),
        "n": int(y.size),
    }
