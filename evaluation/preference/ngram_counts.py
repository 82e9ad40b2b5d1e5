"""Word 1-2-gram counts of a corpus: the matrix of scikit-learn's ``CountVectorizer(ngram_range=(1, 2))``, built
with array operations over batches of documents instead of a Python dictionary lookup per n-gram.

The TF-IDF source classifier tokenises every description; the vectorizer's per-n-gram loop was a third of its time.
Here each document is lowercased and tokenised (an ASCII document by a byte translation and ``split``, the runs of
word characters; any other with the vectorizer's own token pattern), the tokens of a batch of documents are numbered
at once (``pandas.factorize``), and the bigrams, the vocabulary and the per-document counts are integer array
operations, batch by batch (memory grows with the batch, not the corpus; the vocabulary is numbered across batches).
The result is the vectorizer's, array for array (tested): the same vocabulary (alphabetical columns), the same
counts, and within each row the entries in the same order (the vectorizer's, by first appearance of the n-gram in
the corpus), so that every sum over a row later is the same sum.
"""

from __future__ import annotations

import re
from itertools import chain

import numpy as np
import pandas as pd
from scipy import sparse

TOKEN = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token_pattern: runs of 2+ word characters
COUNT_CELLS = 1 << 24  # documents x features up to which a batch's counts are one bincount (else a sort)
BATCH_DOCUMENTS = 20_000  # documents handled at once
BIGRAM = 1 << 32  # n-gram numbers: a word w is w, the bigram (a, b) is (a + 1) * BIGRAM + b
# an ASCII document's bytes, lowercased, with every non-word byte (not [A-Za-z0-9_]) made a space: its ``split()``
# is the runs of word characters (the pattern's tokens, and the single characters it skips)
_ASCII_WORDS = bytes(c + 32 if 65 <= c <= 90 else c if chr(c).isalnum() or c == 95 else 32 for c in range(128))
_ASCII_WORDS += bytes(range(128, 256))


def _tokens(doc: str) -> list[bytes]:
    """The document's tokens (UTF-8), lowercased; single-character runs of an ASCII document are kept (dropped by
    the caller: a token of one byte is one)."""
    if doc.isascii():
        return doc.encode("ascii").translate(_ASCII_WORDS).split()
    return [w.encode("utf-8") for w in TOKEN.findall(doc.lower())]


def _word_ids(texts: list[str], vocab: dict[bytes, int]) -> tuple[np.ndarray, np.ndarray]:
    """(word ids of the documents' tokens in order, tokens per document); ``vocab`` (word -> id) grows."""
    tokens = [_tokens(doc) for doc in texts]
    per_doc = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    codes, words = pd.factorize(np.fromiter(chain.from_iterable(tokens), dtype=object, count=int(per_doc.sum())))
    keep = np.fromiter(map(len, words), dtype=np.int64, count=len(words))[codes] > 1
    lengths = np.bincount(np.repeat(np.arange(per_doc.size), per_doc)[keep], minlength=per_doc.size)
    ids = np.array([vocab.setdefault(w, len(vocab)) if len(w) > 1 else -1 for w in words], dtype=np.int64)
    return ids[codes[keep]], lengths


def _stream(uni: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The vectorizer's n-gram stream (per document its unigrams, then its bigrams, each in text order; numbered as
    ``BIGRAM`` says) and the document of each entry, placed without a sort."""
    pairs = np.maximum(lengths - 1, 0)  # bigrams per document
    segment = np.cumsum(lengths + pairs) - (lengths + pairs)  # where each document's n-grams start
    doc = np.repeat(np.arange(lengths.size), lengths)
    pos = np.arange(uni.size) - (np.cumsum(lengths) - lengths)[doc]  # a token's position in its document
    first = np.flatnonzero(pos < lengths[doc] - 1)  # tokens followed by another of their document
    value = np.empty(uni.size + first.size, dtype=np.int64)
    value[segment[doc] + pos] = uni
    value[segment[doc[first]] + lengths[doc[first]] + pos[first]] = (uni[first] + 1) * BIGRAM + uni[first + 1]
    return value, np.repeat(np.arange(lengths.size), lengths + pairs)


def _row_counts(stream_doc: np.ndarray, code: np.ndarray, n_docs: int, n_features: int):
    """(document * n_features + feature, count) of every n-gram present, by document, then by feature number."""
    keys = stream_doc * n_features + code
    if n_docs * n_features <= COUNT_CELLS:  # a count per cell: no sort
        counts = np.bincount(keys, minlength=n_docs * n_features)
        present = np.flatnonzero(counts)
        return present, counts[present]
    return np.unique(keys, return_counts=True)


def _batch(texts: list[str], vocab: dict[bytes, int], numbers: dict[int, int]):
    """(n-grams per document, their vectorizer numbers in row order, their counts) of a batch of documents;
    ``vocab`` and ``numbers`` (n-gram -> number, by first appearance in the corpus) grow."""
    value, stream_doc = _stream(*_word_ids(texts, vocab))
    local, ngrams = pd.factorize(value)  # by first appearance in the batch, which follows the earlier batches
    code = np.array([numbers.setdefault(v, len(numbers)) for v in ngrams.tolist()], dtype=np.int64)[local]
    n_features = max(len(numbers), 1)
    keys, counts = _row_counts(stream_doc, code, len(texts), n_features)
    per_doc = np.bincount(keys // n_features, minlength=len(texts))
    return per_doc, (keys % n_features).astype(np.int32 if n_features < 2**31 else np.int64), counts.astype(np.int32)


def ngram_counts(texts) -> sparse.csr_matrix:
    """``CountVectorizer(ngram_range=(1, 2), dtype=np.int32).fit_transform(texts)`` for a sequence of strings."""
    texts = list(texts)
    if not all(isinstance(t, str) for t in texts):  # bytes, NaN...: the vectorizer's own handling and errors
        from sklearn.feature_extraction.text import CountVectorizer

        return sparse.csr_matrix(CountVectorizer(ngram_range=(1, 2), dtype=np.int32).fit_transform(texts))
    vocab: dict[bytes, int] = {}
    numbers: dict[int, int] = {}
    batches = [_batch(texts[s0:s0 + BATCH_DOCUMENTS], vocab, numbers) for s0 in range(0, len(texts), BATCH_DOCUMENTS)]
    if not numbers:
        raise ValueError("empty vocabulary; perhaps the documents only contain stop words")
    words = [w.decode("utf-8") for w in vocab]
    names = [words[v] if v < BIGRAM else f"{words[v // BIGRAM - 1]} {words[v % BIGRAM]}" for v in numbers]
    rank = np.empty(len(names), dtype=np.int64)
    rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))  # alphabetical column
    nnz = sum(int(b[1].size) for b in batches)
    index_dtype = np.int32 if nnz <= np.iinfo(np.int32).max else np.int64
    indptr = np.concatenate([[0], np.cumsum(np.concatenate([b[0] for b in batches]))]).astype(index_dtype)
    indices = np.concatenate([rank[b[1]].astype(index_dtype) for b in batches])
    data = np.concatenate([b[2] for b in batches])
    return sparse.csr_matrix((data, indices, indptr), shape=(len(texts), len(names)))
