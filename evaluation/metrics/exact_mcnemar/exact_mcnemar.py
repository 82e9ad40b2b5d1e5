"""Exact two-sided McNemar test between two predictors scored against the same references."""

import datasets
import evaluate
import numpy as np

from omniaudit.evaluation.stats import mcnemar_exact

_DESCRIPTION = """Exact two-sided McNemar: b counts items only predictions1 gets right, c items only predictions2 gets
right; p = min(1, 2 P[X <= min(b, c)]) with X ~ Binomial(b + c, 1/2). Agreements do not enter the test."""

_KWARGS = """
Args:
    predictions1, predictions2: the two predictors' labels. references: gold labels.
Returns:
    b, c, p.
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class ExactMcnemar(evaluate.Comparison):
    def _info(self):
        return evaluate.ComparisonInfo(
            description=_DESCRIPTION,
            citation="",
            inputs_description=_KWARGS,
            features=datasets.Features({"predictions1": datasets.Value("int64"),
                                        "predictions2": datasets.Value("int64"),
                                        "references": datasets.Value("int64")}),
        )

    def _compute(self, predictions1, predictions2, references):
        ref = np.asarray(references)
        return mcnemar_exact(np.asarray(predictions1) == ref, np.asarray(predictions2) == ref)
