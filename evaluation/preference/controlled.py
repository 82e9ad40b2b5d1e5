"""The audit's length- and style-controlled win rates, both GLMs refitted on one set of bootstrap draws.

The two fits share the binary pairs, the labels, the seed and the resampling unit, so their resamples are the same
draws: :func:`~omniaudit.evaluation.preference.glm_bootstrap.bootstrap_glms` draws each block once and refits both
GLMs on it. Each section is what :func:`~omniaudit.evaluation.preference.length_control.length_controlled_win_rates`
and :func:`~omniaudit.evaluation.preference.style_control.style_controlled_strengths` return on their own.
"""

from __future__ import annotations

import numpy as np

from omniaudit.evaluation.preference import length_control, style_control
from omniaudit.evaluation.preference.glm_bootstrap import RIDGE, bootstrap_fits


def controlled_win_rates(gen1: np.ndarray, gen2: np.ndarray, text1: np.ndarray, text2: np.ndarray, len1: np.ndarray,
                         len2: np.ndarray, y: np.ndarray, n_resamples: int, seed: int,
                         clusters: np.ndarray | None = None, ridge: float = RIDGE, length: bool = True,
                         style: bool = True) -> dict:
    """``{"length_controlled": ..., "style_controlled": ...}`` (those asked for) over the binary pairs."""
    fits = {}
    if length:
        fits["length_controlled"] = length_control.lc_fit(gen1, gen2, len1, len2, y, ridge)
    if style:
        fits["style_controlled"] = style_control.sc_fit(gen1, gen2, text1, text2, len1, len2, y, ridge)
    if not fits:
        return {}
    samples = bootstrap_fits(list(fits.values()), n_resamples, seed, clusters, ridge)
    report = {"length_controlled": length_control.lc_result, "style_controlled": style_control.sc_result}
    return {name: report[name](fit, s, n_resamples, seed, clusters=clusters)
            for (name, fit), s in zip(fits.items(), samples, strict=True)}
