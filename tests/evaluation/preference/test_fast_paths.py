"""Issue 40: the audit's fast paths give the numbers of the plain ones they replace: the n-gram counts are
scikit-learn's CountVectorizer matrix array for array, the style counts skip only texts a pattern cannot match, and
the length- and style-controlled fits refitted on one set of draws equal each refitted on its own."""

import random
import re

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from omniaudit.data_builders.preference import SyntheticSpec, build_tables, synthesize
from omniaudit.evaluation.preference import controlled, glm_bootstrap, length_control, style_control
from omniaudit.evaluation.preference import ngram_counts as ngram_counts_module
from omniaudit.evaluation.preference.ngram_counts import ngram_counts

WORDS = ["Ab", "ab", "é", "Über", "x", "a_b", "12", "١٢", "the", "The", "in", "ﬁne", "İs", "ß", "o'k", "e-mail", "I"]


def _random_docs(rng: random.Random, n: int) -> list[str]:
    seps = ["", " ", ".", ", ", "\n", "\t", "!", "\x1c"]
    return [" ".join(rng.choice(WORDS) + rng.choice(seps) for _ in range(rng.randint(0, 9))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(40))
def test_ngram_counts_are_the_count_vectorizers_matrix(seed, monkeypatch):
    if seed % 2:
        monkeypatch.setattr(ngram_counts_module, "COUNT_CELLS", 0)  # the sorted path of large corpora
    if seed % 3:
        monkeypatch.setattr(ngram_counts_module, "BATCH_DOCUMENTS", seed % 5 + 1)  # numbered across batches
    rng = random.Random(seed)
    docs = _random_docs(rng, rng.randint(1, 40))
    if seed == 0:
        docs = list(np.concatenate([synthesize(SyntheticSpec(n_pairs=60, seed=1))[c] for c in ("a1", "a2")]))
    try:
        ref = CountVectorizer(ngram_range=(1, 2), dtype=np.int32).fit_transform(docs)
    except ValueError as exc:  # no token at all
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            ngram_counts(docs)
        return
    ours = ngram_counts(docs)
    assert ours.shape == ref.shape
    for part in ("data", "indices", "indptr"):  # the row order of the entries too: every later row sum is the same
        a, b = getattr(ours, part), getattr(ref, part)
        assert a.dtype == b.dtype and np.array_equal(a, b), part


def test_ngram_counts_of_documents_that_are_not_strings_are_the_vectorizers():
    with pytest.raises(ValueError, match="np.nan is an invalid document"):
        ngram_counts(["a b", np.nan])


def _plain_style_counts(texts: list) -> dict[str, np.ndarray]:
    """Every pattern on every text (the sentence pattern as first written)."""
    patterns = dict(style_control._PATTERNS, sentences=re.compile(r"(?<!\d)[.!?]+(?=\s|$)"))
    out = {name: np.zeros(len(texts)) for name in patterns}
    for i, text in enumerate(texts):
        text = "" if text is None or text != text else str(text)
        for name, pattern in patterns.items():
            body = patterns["bold"].sub(" ", text) if name == "emphasis" else text
            out[name][i] = len(pattern.findall(body))
    return out


def test_style_counts_skip_only_texts_a_pattern_cannot_match():
    rng = random.Random(3)
    pieces = ["# ", "## ", "\n", " ", "  ", "- ", "* ", "+ ", "1. ", "2) ", "١. ", "². ", "**b**", "__u__", "*i*",
              "_e_", "word", "snake_case", ".", "!", "?", "3.5", "\t", "x*y", "\r", "\u2003", "..", "1..", "a!?"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 15))) for _ in range(20_000)]
    texts += [None, float("nan"), ""]
    ours, plain = style_control.style_counts(texts), _plain_style_counts(texts)
    for name in plain:
        np.testing.assert_array_equal(ours[name], plain[name], err_msg=name)
        assert plain[name].any(), name  # each pattern matched somewhere: the test exercises it


def test_both_controlled_fits_on_one_set_of_draws_equal_each_on_its_own():
    pairs = build_tables(synthesize(SyntheticSpec(n_pairs=400, seed=5)))["pairs"]
    full = pairs[pairs["is_binary"].astype(bool)].reset_index(drop=True)
    y = (full["preference"] == "a1").to_numpy(np.int64)
    args = (full["model1"].to_numpy(object), full["model2"].to_numpy(object), full["a1"].to_numpy(object),
            full["a2"].to_numpy(object), full["len1"].to_numpy(), full["len2"].to_numpy())
    clusters = full["dedup_group"].to_numpy()
    both = controlled.controlled_win_rates(*args, y, n_resamples=150, seed=4, clusters=clusters)
    lc = length_control.length_controlled_win_rates(*args[:2], *args[4:], y, n_resamples=150, seed=4,
                                                    clusters=clusters)
    sc = style_control.style_controlled_strengths(*args, y, n_resamples=150, seed=4, clusters=clusters)
    assert both["length_controlled"] == lc and both["style_controlled"] == sc  # the same draws, the same blocks
    assert list(controlled.controlled_win_rates(*args, y, 150, 4, length=False)) == ["style_controlled"]


def test_batched_fits_equal_one_fit_per_resample():
    """Phase 1 (one product), float32 steps, then float64: each resample's fit is the float64 fit of its rows."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 4))
    y = (rng.random(300) < 1 / (1 + np.exp(-x @ [1.0, -0.5, 0.3, 0.0]))).astype(np.int64)
    weights = np.stack([np.bincount(rng.integers(0, 300, 300), minlength=300) for _ in range(30)])
    start = length_control.fit_logistic(x, y)
    fits = glm_bootstrap.fit_logistic_resamples(x, y, weights, start=start)
    for w, fit in zip(weights, fits, strict=True):
        rows = np.repeat(np.arange(300), w)
        np.testing.assert_allclose(fit, length_control.fit_logistic(x[rows], y[rows], tol=1e-14), atol=1e-9)

