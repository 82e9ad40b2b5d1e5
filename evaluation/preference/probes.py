"""Content-blind probes (appendix B) and the TF-IDF source classifier: they never read text, video or audio.

All probes are fitted out-of-fold on the binary pairs with the shared fold column: for fold k, fit on the other
folds, predict fold k. Logistic regression is L2, C = 1, 2,000 iterations (scikit-learn's lbfgs).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn import config_context
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import normalize

from omniaudit.errors import InputError
from omniaudit.evaluation.preference.ngram_counts import ngram_counts

LR_PARAMS = {"C": 1.0, "max_iter": 2000}


def length_features(len1: np.ndarray, len2: np.ndarray) -> np.ndarray:
    """``[l1/1000, l2/1000, (l1 - l2)/1000, log((l1 + 1)/(l2 + 1))]`` on character counts."""
    l1, l2 = np.asarray(len1, dtype=np.float64), np.asarray(len2, dtype=np.float64)
    return np.column_stack([l1 / 1000, l2 / 1000, (l1 - l2) / 1000, np.log((l1 + 1) / (l2 + 1))])


def generator_features(gen1: np.ndarray, gen2: np.ndarray, generators: list[str]) -> np.ndarray:
    """Two concatenated K-way one-hot source vectors (slot 1, slot 2)."""
    eye = np.eye(len(generators))
    index = {g: i for i, g in enumerate(generators)}
    return np.hstack([eye[[index[g] for g in gen1]], eye[[index[g] for g in gen2]]])


def probe_features(pairs: pd.DataFrame, generators: list[str]) -> dict[str, np.ndarray]:
    length = length_features(pairs["len1"].to_numpy(), pairs["len2"].to_numpy())
    gen = generator_features(pairs["model1"].to_numpy(), pairs["model2"].to_numpy(), generators)
    return {"length_lr": length, "generator_lr": gen, "length_generator_lr": np.hstack([length, gen])}


def checked_once():
    """scikit-learn's checks of the parameters (constants here) and of the inputs' finiteness (checked once by the
    caller) left out of every fit and prediction: the same fits, less per-call overhead on the probes' many small
    fits (about a tenth of their time)."""
    return config_context(assume_finite=True, skip_parameter_validation=True)


def oof_logistic(x: np.ndarray, y: np.ndarray, fold: np.ndarray) -> tuple[np.ndarray, list[LogisticRegression]]:
    """Out-of-fold P(a1 preferred) and the fitted model of each fold (in fold order)."""
    x = np.asarray(x, dtype=np.float64)
    if not np.isfinite(x).all():
        raise InputError("the probe features hold NaN or infinite values (are len1 / len2 numbers for every pair?)")
    proba = np.empty(len(y))
    models = []
    with checked_once():
        for k in np.unique(fold):
            test = fold == k
            train_y = y[~test]
            model = LogisticRegression(**LR_PARAMS)
            if np.unique(train_y).size < 2:  # degenerate training fold: predict its only class
                proba[test] = float(train_y[0]) if train_y.size else 0.5
                models.append(None)
                continue
            model.fit(x[~test], train_y)
            proba[test] = model.predict_proba(x[test])[:, 1]
            models.append(model)
    return proba, models


def winrate_rule(prior_choice: np.ndarray, y: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """Pick the candidate whose generator has the larger fold-exclusive prior.

    Where the prior abstains (tie or unknown generator) the rule falls back to the training folds' majority label,
    which is itself label-blind for the test pair.
    """
    pred = np.asarray(prior_choice).copy()
    for k in np.unique(fold):
        test = (fold == k) & (pred < 0)
        if test.any():
            pred[test] = int(y[fold != k].mean() >= 0.5) if (fold != k).any() else 1
    return pred


def tfidf_fold_features(texts: np.ndarray, fold: np.ndarray, k: int, max_features: int = 20000,
                        counts: sparse.csr_matrix | None = None) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """(train, test) TF-IDF matrices for fold ``k``, identical to ``TfidfVectorizer(ngram_range=(1, 2),
    sublinear_tf=True, max_features=max_features)`` fitted on the training folds and applied to fold ``k``.

    The documents are tokenised once (``counts``, the vectorizer's count matrix from
    :func:`~omniaudit.evaluation.preference.ngram_counts.ngram_counts`, reusable across folds); vocabulary, feature
    limit and IDF come from the training rows only, exactly as scikit-learn selects them (alphabetical vocabulary,
    then the most frequent). The weighting is applied in place on the column-selected copy (same arithmetic as the
    vectorizer's, so the same values), keeping one copy of each matrix in memory at 200k-pair scale.
    """
    if counts is None:
        counts = ngram_counts(texts)
    train, test = counts[fold != k], counts[fold == k]
    df = np.bincount(train.indices, minlength=counts.shape[1])
    tfs = np.asarray(train.sum(axis=0)).ravel()
    cols = np.flatnonzero(df > 0)
    if cols.size > max_features:
        cols = np.sort(cols[(-tfs[cols]).argsort()[:max_features]])
    idf = np.log((1 + train.shape[0]) / (1 + df[cols])) + 1.0

    def transform(x: sparse.csr_matrix) -> sparse.csr_matrix:
        x = x[:, cols]
        x.data = 1.0 + np.log(x.data, dtype=np.float64)  # sublinear tf
        x.data *= idf[x.indices]  # = x @ diag(idf), one product per stored entry
        return normalize(x, norm="l2", copy=False)

    return transform(train), transform(test)


def source_classifier(texts: np.ndarray, sources: np.ndarray, fold: np.ndarray) -> dict:
    """Can words reveal which generator wrote a description? Held-out accuracy per fold (appendix B).

    Every description is a document, its generator the target; folds come from the pair, so the two descriptions of a
    pair never straddle folds. TF-IDF on word 1-2-grams, sublinear tf, at most 20,000 features, fitted on training
    folds only; logistic regression with 2,000 iterations.
    """
    counts = ngram_counts(texts)  # CountVectorizer(ngram_range=(1, 2))'s matrix, tokenised once for every fold
    accs = []
    with checked_once():  # TF-IDF weights are finite
        for k in np.unique(fold):
            x_train, x_test = tfidf_fold_features(texts, fold, k, counts=counts)
            model = LogisticRegression(max_iter=2000).fit(x_train, sources[fold != k])
            accs.append(float(np.mean(model.predict(x_test) == sources[fold == k])))
    classes, counts_per_class = np.unique(sources, return_counts=True)
    accs_arr = np.asarray(accs)
    return {
        "accuracy_mean": float(accs_arr.mean()),
        "accuracy_sd": float(accs_arr.std(ddof=1)) if accs_arr.size > 1 else 0.0,
        "fold_accuracy": accs,
        "chance": 1.0 / classes.size,
        "majority": float(counts_per_class.max() / counts_per_class.sum()),
        "n_documents": int(texts.size),
        "n_classes": int(classes.size),
    }
