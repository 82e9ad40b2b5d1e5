"""Style control beyond length: Chatbot Arena's style-controlled Bradley-Terry fit on the preference pairs.

Chatbot Arena's style control (Li, Angelopoulos, Chiang, "Does style matter?", LMSYS blog, Aug 2024) adds style
features to the Bradley-Terry logistic regression, so each model's strength is read with the style held fixed:
``logit P(a1 preferred) = b + theta[g1] - theta[g2] + sum_s gamma_s * z_s``, with every style feature the normalised
pair difference ``z = standardise((f1 - f2) / (f1 + f2 + 1))`` (their code adds 1 to the sum; the standardisation is
over the pairs, so each gamma is the logit effect of one standard deviation). Their features are the answer length and
the markdown header, list-item and bold counts; emotion descriptions are mostly prose, so sentences and emphasis
(italic) counts are added, and a feature no description varies in (e.g. no header anywhere) is left out and named
``absent``, never fitted on a constant column.

Here, as in the length-controlled win rate (:mod:`~omniaudit.evaluation.preference.length_control`): the slot
intercept ``b`` is kept (the judge-facing order of the pair is a known bias), every generator has a strength and the
L2 penalty of the probes (C = 1) applies to every strength and style coefficient (so strengths sum to zero, no
reference generator; scikit-learn's ``LogisticRegression(C=1)`` objective, tested). A generator's *style-controlled
win rate* is its modelled win rate over its own pairs with the style terms and the slot intercept zeroed, the
counterpart of its LC win rate. Bootstrap CIs (percentile) refit the model on resampled pairs (seeded, vectorised:
all resamples' Newton steps together, in bounded blocks; the feature scaling of the full data kept).
"""

from __future__ import annotations

import re

import numpy as np

from omniaudit.evaluation.preference.length_control import (
    RIDGE,
    controlled_win_rates,
    fit_logistic,
    generator_columns,
    resampled_fits,
)
from omniaudit.evaluation.stats import BOOTSTRAP_SEED, N_RESAMPLES, percentile_ci

SC_RESAMPLES = N_RESAMPLES  # bootstrap refits for the CIs: the audit's --n-resamples (batched Newton fits, no cap)
FEATURES = ("length", "sentences", "headers", "list_items", "bold", "emphasis")
_PATTERNS = {
    "headers": re.compile(r"^ {0,3}#{1,6}\s+\S", re.MULTILINE),
    "list_items": re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S", re.MULTILINE),
    "bold": re.compile(r"\*\*[^*\n]+?\*\*|__[^_\n]+?__"),
    "emphasis": re.compile(r"(?<![*\w])\*(?![\s*])[^*\n]+?(?<!\s)\*(?!\*)"  # *italic* (bold removed first)
                           r"|(?<![_\w])_(?![\s_])[^_\n]+?(?<!\s)_(?![_\w])"),  # _italic_, not snake_case
    "sentences": re.compile(r"(?<!\d)[.!?]+(?=\s|$)"),  # sentence ends (not "1." of a numbered list)
}


def style_counts(texts: list[str]) -> dict[str, np.ndarray]:
    """Per text: markdown headers, list items, bold spans, emphasis (italic) spans outside bold, and sentences."""
    out = {name: np.zeros(len(texts)) for name in _PATTERNS}
    for i, text in enumerate(texts):
        text = "" if text is None or text != text else str(text)
        for name, pattern in _PATTERNS.items():
            body = _PATTERNS["bold"].sub(" ", text) if name == "emphasis" else text
            out[name][i] = len(pattern.findall(body))
    return out


def style_features(text1, text2, len1, len2) -> tuple[np.ndarray, list[str], dict]:
    """(z (pairs, used features), used feature names, per-feature facts): Chatbot Arena's normalised differences
    ``(f1 - f2) / (f1 + f2 + 1)``, standardised over the pairs; a feature with no variation is ``absent``."""
    c1, c2 = style_counts(list(text1)), style_counts(list(text2))
    raw = {"length": (np.asarray(len1, np.float64), np.asarray(len2, np.float64))}
    raw |= {name: (c1[name], c2[name]) for name in FEATURES[1:]}
    columns, used, facts = [], [], {}
    for name in FEATURES:
        a, b = raw[name]
        ratio = (a - b) / (a + b + 1.0)
        mean, sd = float(ratio.mean()) if ratio.size else 0.0, float(ratio.std()) if ratio.size else 0.0
        both = np.concatenate([a, b])
        facts[name] = {"mean_per_description": float(both.mean()) if both.size else None,
                       "share_of_descriptions_with_any": float(np.mean(both > 0)) if both.size else None,
                       "mean": mean, "sd": sd, "absent": not sd > 1e-12}
        if sd > 1e-12:
            columns.append((ratio - mean) / sd)
            used.append(name)
    z = np.column_stack(columns) if columns else np.zeros((len(raw["length"][0]), 0))
    return z, used, facts


def _interval(lo: np.ndarray, hi: np.ndarray, i: int) -> list[float | None]:
    return [None if not np.isfinite(v) else float(v) for v in (lo[i], hi[i])]


def style_controlled_strengths(gen1, gen2, text1, text2, len1, len2, y: np.ndarray, ridge: float = RIDGE,
                               n_resamples: int = SC_RESAMPLES, seed: int = BOOTSTRAP_SEED,
                               confidence: float = 0.95, clusters: np.ndarray | None = None) -> dict:
    """The style-controlled Bradley-Terry fit over the binary pairs (``y``: 1 = a1 preferred).

    Returns ``generators`` (per generator: ``n`` pairs, raw ``win_rate``, ``strength`` theta with the style held
    fixed and its ``strength_ci``, ``strength_uncontrolled`` (the same fit without style features), the
    ``sc_win_rate`` with its ``sc_ci``), ``style`` (per feature: ``coefficient`` gamma per standard deviation with
    its ``ci``, or ``absent``, and the feature's facts), ``slot_intercept``, ``n`` and ``bootstrap``. CIs resample
    pairs (``clusters``: whole clusters, e.g. copies of a pair); one-class resamples are skipped; a generator absent
    from a resample has no strength there (NaN, left out of its percentiles).
    """
    gen1, gen2 = np.asarray(gen1, dtype=object).astype(str), np.asarray(gen2, dtype=object).astype(str)
    y = np.asarray(y, dtype=np.int64)
    generators = sorted(set(gen1) | set(gen2))
    k = len(generators)
    ident = generator_columns(gen1, gen2, generators)
    z, used, facts = style_features(text1, text2, len1, len2)
    x = np.column_stack([ident, z])
    beta = fit_logistic(x, y, ridge)
    theta, gamma = beta[1:k + 1], beta[k + 1:]
    theta0 = fit_logistic(ident, y, ridge)[1:]
    index = {g: i for i, g in enumerate(generators)}
    c1, c2 = np.array([index[g] for g in gen1], int), np.array([index[g] for g in gen2], int)
    rates = controlled_win_rates(theta, c1, c2, k)
    p = x.shape[1] + 1
    lo = hi = np.full(p + k, np.nan)
    used_resamples = 0
    if n_resamples and y.size:
        member = np.eye(k)[c1] + np.eye(k)[c2]  # (pairs, generators)
        blocks = []
        for w, fits in resampled_fits(x, y, beta, n_resamples, seed, clusters, ridge):
            present = (w @ member) > 0
            strengths = np.where(present, fits[:, 1:k + 1], np.nan)
            blocks.append(np.column_stack([fits[:, :1], strengths, fits[:, k + 1:],
                                           controlled_win_rates(fits[:, 1:k + 1], c1, c2, k, w)]))
        samples = np.concatenate(blocks) if blocks else np.zeros((0, p + k))
        used_resamples = int(samples.shape[0])
        lo, hi = percentile_ci(samples, confidence)
    out = {}
    for g, i in index.items():
        first, second = gen1 == g, gen2 == g
        n = int(first.sum() + second.sum())
        out[g] = {"n": n, "win_rate": float(y[first].sum() + (1 - y[second]).sum()) / n if n else None,
                  "strength": float(theta[i]), "strength_ci": _interval(lo, hi, 1 + i),
                  "strength_uncontrolled": float(theta0[i]),
                  "sc_win_rate": float(rates[i]) if n else None, "sc_ci": _interval(lo, hi, p + i)}
    style = {}
    for name in FEATURES:
        if name in used:
            j = used.index(name)
            style[name] = {"coefficient": float(gamma[j]), "ci": _interval(lo, hi, k + 1 + j), **facts[name]}
        else:
            style[name] = {"coefficient": None, "ci": [None, None], **facts[name]}
    return {"generators": out, "style": style, "features_used": used, "slot_intercept": float(beta[0]),
            "slot_intercept_ci": _interval(lo, hi, 0), "n": int(y.size), "ridge": ridge,
            "bootstrap": {"n_resamples": used_resamples, "requested": n_resamples, "seed": seed,
                          "confidence": confidence,
                          "unit": "pairs" if clusters is None else "clusters",
                          "method": "percentile; the style-controlled fit refitted on each resample (feature scaling "
                                    "kept); one-class resamples skipped"},
            "model": "logit P(a1) = b + theta[g1] - theta[g2] + sum_s gamma_s z_s, z_s = standardised "
                     "(f1 - f2) / (f1 + f2 + 1) (Chatbot Arena style control); L2 (C = 1) on theta and gamma, b free; "
                     "SC win rate: b = gamma = 0"}
