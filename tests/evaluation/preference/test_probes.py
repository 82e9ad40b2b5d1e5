"""Probe features and the TF-IDF source classifier against scikit-learn's own pipeline."""

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from omniaudit.data_builders.preference import SyntheticSpec, synthesize
from omniaudit.evaluation.preference import probes


def test_length_features_as_appendix_b():
    x = probes.length_features(np.array([1200]), np.array([300]))
    np.testing.assert_allclose(x, [[1.2, 0.3, 0.9, np.log(1201 / 301)]])


def test_generator_features_are_two_one_hots():
    x = probes.generator_features(np.array(["b", "a"]), np.array(["c", "b"]), ["a", "b", "c"])
    np.testing.assert_array_equal(x, [[0, 1, 0, 0, 0, 1], [1, 0, 0, 0, 1, 0]])


@pytest.mark.parametrize("max_features", [20000, 150])
def test_tfidf_folds_identical_to_sklearn_vectorizer(max_features):
    df = synthesize(SyntheticSpec(n_pairs=200, seed=9))
    texts = np.concatenate([df["a1"], df["a2"]]).astype(object)
    sources = np.concatenate([df["model1"], df["model2"]]).astype(str)
    fold = np.tile(np.arange(200) % 5, 2)
    for k in range(5):
        ours_train, ours_test = probes.tfidf_fold_features(texts, fold, k, max_features=max_features)
        vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, max_features=max_features)
        ref_train = vec.fit_transform(texts[fold != k])
        ref_test = vec.transform(texts[fold == k])
        np.testing.assert_allclose(ours_train.toarray(), ref_train.toarray(), atol=1e-12)
        np.testing.assert_allclose(ours_test.toarray(), ref_test.toarray(), atol=1e-12)
        a = LogisticRegression(max_iter=2000).fit(ours_train, sources[fold != k]).predict(ours_test)
        b = LogisticRegression(max_iter=2000).fit(ref_train, sources[fold != k]).predict(ref_test)
        assert (a == b).all()


def test_oof_logistic_never_sees_its_test_fold():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(100, 3))
    y = (x[:, 0] > 0).astype(int)
    fold = np.arange(100) % 5
    proba, models = probes.oof_logistic(x, y, fold)
    for k, model in enumerate(models):
        ref = LogisticRegression(C=1.0, max_iter=2000).fit(x[fold != k], y[fold != k])
        np.testing.assert_allclose(proba[fold == k], ref.predict_proba(x[fold == k])[:, 1])
        np.testing.assert_allclose(model.coef_, ref.coef_)
