"""Two-class weighted F1 (WAF, percent) with an optional percentile bootstrap CI, as in the EmoPrefer audit."""

import datasets
import evaluate
import numpy as np

from omniaudit.evaluation.stats import BOOTSTRAP_SEED, N_RESAMPLES, accuracy, bootstrap_waf

_DESCRIPTION = """Support-weighted F1 over the two classes (1 = a1 preferred, 0 = a2 preferred), in percent. "same"
items must be excluded beforehand. With ``bootstrap=True`` also returns the 2.5/97.5 percentiles of WAF over
``n_resamples`` resamples of the items (seeded; resamples with a single gold class are skipped)."""

_KWARGS = """
Args:
    predictions: list of 0/1 decisions.
    references: list of 0/1 gold labels.
    bootstrap: also return a 95% percentile bootstrap CI (default False).
    n_resamples: bootstrap resamples (default 2000). seed: bootstrap seed (default 0).
Returns:
    waf (percent), accuracy (fraction), and ci_low / ci_high when bootstrap=True.
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class Waf(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation="",
            inputs_description=_KWARGS,
            features=datasets.Features({"predictions": datasets.Value("int64"),
                                        "references": datasets.Value("int64")}),
        )

    def _compute(self, predictions, references, bootstrap=False, n_resamples=N_RESAMPLES, seed=BOOTSTRAP_SEED):
        y_true, y_pred = np.asarray(references), np.asarray(predictions)
        est = bootstrap_waf(y_true, y_pred, n_resamples=n_resamples if bootstrap else 0, seed=seed)[0]
        out = {"waf": est.value, "accuracy": accuracy(y_true, y_pred)}
        if bootstrap:
            out.update(ci_low=est.ci[0], ci_high=est.ci[1])
        return out
