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
from dataclasses import dataclass

import numpy as np

from omniaudit.evaluation.preference.glm_bootstrap import RIDGE, GLMBootstrap, Matchups, bootstrap_fits
from omniaudit.evaluation.preference.length_control import fit_logistic, generator_columns
from omniaudit.evaluation.stats import BOOTSTRAP_SEED, N_RESAMPLES, percentile_ci

SC_RESAMPLES = N_RESAMPLES  # bootstrap refits for the CIs: the audit's --n-resamples (batched Newton fits, no cap)
FEATURES = ("length", "sentences", "headers", "list_items", "bold", "emphasis")
_PATTERNS = {
    "headers": re.compile(r"^ {0,3}#{1,6}\s+\S", re.MULTILINE),
    "list_items": re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S", re.MULTILINE),
    "bold": re.compile(r"\*\*[^*\n]+?\*\*|__[^_\n]+?__"),
    "emphasis": re.compile(r"(?<![*\w])\*(?![\s*])[^*\n]+?(?<!\s)\*(?!\*)"  # *italic* (bold removed first)
                           r"|(?<![_\w])_(?![\s_])[^_\n]+?(?<!\s)_(?![_\w])"),  # _italic_, not snake_case
    # sentence ends (not "1." of a numbered list): a run of [.!?] not preceded by a digit, then a space or the end;
    # written as ``(?<!\d)[.!?]+(?=\s|$)`` with the look-behind moved after the first character (the same matches,
    # tested), so that the regex engine jumps to candidate characters instead of trying every position
    "sentences": re.compile(r"[.!?](?<!\d[.!?])[.!?]*(?=\s|$)"),
}


def _list_head(text: str) -> bool:
    r"""Whether ``text`` may hold a list item: a marker (-, *, + or digits) after a line's leading white space. On one
    line, its first character that is no white space (``str.lstrip`` strips what ``\s`` matches)."""
    if "\n" in text:
        return True
    head = text.lstrip()[:1]
    return head in ("-", "*", "+") or head.isdigit()


def style_counts(texts: list[str]) -> dict[str, np.ndarray]:
    """Per text: markdown headers, list items, bold spans, emphasis (italic) spans outside bold, and sentences.

    A pattern is only run on the texts holding a character every one of its matches contains (``#`` for a header,
    ``*`` or ``_`` for bold and emphasis, a list marker, sentence punctuation): most descriptions are plain prose,
    so most scans are skipped; the counts are those of every pattern on every text (tested)."""
    texts = ["" if text is None or text != text else str(text) for text in texts]
    marked = ["*" in t or "_" in t for t in texts]
    may = {"headers": ["#" in t for t in texts], "list_items": [_list_head(t) for t in texts], "bold": marked,
           "emphasis": marked, "sentences": ["." in t or "!" in t or "?" in t for t in texts]}
    unbold = {i: _PATTERNS["bold"].sub(" ", t) for i, t in enumerate(texts) if marked[i]}  # emphasis outside bold
    out = {}
    for name, pattern in _PATTERNS.items():
        body = [unbold.get(i, t) for i, t in enumerate(texts)] if name == "emphasis" else texts
        out[name] = np.array([len(pattern.findall(t)) if m else 0 for t, m in zip(body, may[name], strict=True)],
                             dtype=np.float64)
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
    fit = sc_fit(gen1, gen2, text1, text2, len1, len2, y, ridge)
    (samples,) = bootstrap_fits([fit], n_resamples, seed, clusters, ridge)
    return sc_result(fit, samples, n_resamples, seed, confidence, clusters)


@dataclass
class StyleControlFit:
    """The full-data style-controlled fit (pairs, labels, generator matchups, design, features used and their facts,
    ``[b, *theta, *gamma]``, the strengths without style features): what the bootstrap refits and :func:`sc_result`
    reports."""

    gen1: np.ndarray
    gen2: np.ndarray
    y: np.ndarray
    matchups: Matchups
    x: np.ndarray
    used: list[str]
    facts: dict
    beta: np.ndarray
    theta0: np.ndarray
    ridge: float

    def bootstrap_model(self) -> GLMBootstrap:
        """The GLM to refit per resample, keeping ``[b, *theta (NaN for a generator absent from the resample),
        *gamma, *SC win rates]`` per resample."""
        return GLMBootstrap(self.x, self.beta, self._summary)

    def _summary(self, fits: np.ndarray, counts: np.ndarray) -> np.ndarray:
        k = self.matchups.k
        strengths = np.where(self.matchups.present(counts), fits[:, 1:k + 1], np.nan)
        return np.column_stack([fits[:, :1], strengths, fits[:, k + 1:],
                                self.matchups.win_rates(fits[:, 1:k + 1], counts)])


def sc_fit(gen1, gen2, text1, text2, len1, len2, y: np.ndarray, ridge: float = RIDGE) -> StyleControlFit:
    """The style-controlled GLM fitted on all binary pairs (see :func:`style_controlled_strengths`)."""
    gen1, gen2 = np.asarray(gen1, dtype=object).astype(str), np.asarray(gen2, dtype=object).astype(str)
    y = np.asarray(y, dtype=np.int64)
    matchups = Matchups(gen1, gen2)
    ident = generator_columns(gen1, gen2, matchups.generators)
    z, used, facts = style_features(text1, text2, len1, len2)
    x = np.column_stack([ident, z])
    return StyleControlFit(gen1, gen2, y, matchups, x, used, facts, fit_logistic(x, y, ridge),
                           fit_logistic(ident, y, ridge)[1:], ridge)


def sc_result(fit: StyleControlFit, samples: np.ndarray | None, n_resamples: int, seed: int,
              confidence: float = 0.95, clusters: np.ndarray | None = None) -> dict:
    """What :func:`style_controlled_strengths` returns, from the fit and the summaries of the resamples kept (None:
    no resample, no CI)."""
    gen1, gen2, y, beta, k, used = fit.gen1, fit.gen2, fit.y, fit.beta, fit.matchups.k, fit.used
    theta, gamma = beta[1:k + 1], beta[k + 1:]
    rates = fit.matchups.win_rates(theta, fit.matchups.counts())[0]
    p = fit.x.shape[1] + 1
    samples = np.zeros((0, p + k)) if samples is None else samples
    used_resamples = int(samples.shape[0])
    lo, hi = percentile_ci(samples, confidence)
    out = {}
    for i, g in enumerate(fit.matchups.generators):
        first, second = gen1 == g, gen2 == g
        n = int(first.sum() + second.sum())
        out[g] = {"n": n, "win_rate": float(y[first].sum() + (1 - y[second]).sum()) / n if n else None,
                  "strength": float(theta[i]), "strength_ci": _interval(lo, hi, 1 + i),
                  "strength_uncontrolled": float(fit.theta0[i]),
                  "sc_win_rate": float(rates[i]) if n else None, "sc_ci": _interval(lo, hi, p + i)}
    style = {}
    for name in FEATURES:
        if name in used:
            j = used.index(name)
            style[name] = {"coefficient": float(gamma[j]), "ci": _interval(lo, hi, k + 1 + j), **fit.facts[name]}
        else:
            style[name] = {"coefficient": None, "ci": [None, None], **fit.facts[name]}
    return {"generators": out, "style": style, "features_used": used, "slot_intercept": float(beta[0]),
            "slot_intercept_ci": _interval(lo, hi, 0), "n": int(y.size), "ridge": fit.ridge,
            "bootstrap": {"n_resamples": used_resamples, "requested": n_resamples, "seed": seed,
                          "confidence": confidence,
                          "unit": "pairs" if clusters is None else "clusters",
                          "method": "percentile; the style-controlled fit refitted on each resample (feature scaling "
                                    "kept); one-class resamples skipped"},
            "model": "logit P(a1) = b + theta[g1] - theta[g2] + sum_s gamma_s z_s, z_s = standardised "
                     "(f1 - f2) / (f1 + f2 + 1) (Chatbot Arena style control); L2 (C = 1) on theta and gamma, b free; "
                     "SC win rate: b = gamma = 0"}
