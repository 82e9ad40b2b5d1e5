"""The eight failure modes of Thud appendix H (audio hallucination, audio denial, question avoidance and the temporal
ones), counted over the answers a model gave: unparsed answers are coverage, not failures."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from omniaudit.evaluation import stats

FAILURE_MODES = {  # name: (group, what it counts)
    "mute_hallucination": ("Audio hallucination", "describes audio on a muted clip"),
    "swap_false_match": ("Audio hallucination", "accepts swapped audio as a natural match"),
    "false_silence": ("Audio denial", "claims silence on a clip with its real audio"),
    "swap_false_mismatch": ("Audio denial", "claims a mismatch on a naturally paired clip"),
    "audio_dodge": ("Question avoidance", "visual-only answer to the audio question (mean of muted and real)"),
    "offset_blindness": ("Temporal", "calls a shifted clip synchronized"),
    "direction_confusion": ("Temporal", "detected offset, wrong direction (delay vs early)"),
    "false_sync_alarm": ("Temporal", "calls an original clip desynchronized"),
}


def add_failure_modes(r: stats.ClusterRatios, diag: pd.DataFrame, pred: pd.DataFrame, parsed: np.ndarray,
                      answered: np.ndarray, dimensions: Iterable[str]) -> None:
    """The failure-mode ratios (rates over the answers a model gave: unparsed ones are coverage, not counted) and
    the parsed and answered shares of each of ``dimensions``."""
    dim, iv = diag["dimension"].to_numpy(), diag["intervention"].to_numpy()
    orig = iv == "original"
    state = pred["audio_state"].to_numpy(dtype=object)
    match = pred["match"].to_numpy(dtype=object)
    synced = pred["synced"].to_numpy(dtype=object)
    direction = pred["direction"].to_numpy(dtype=object)
    shift = (dim == "sync") & (iv == "shift") & parsed
    exist, cons, sync_parsed = (dim == "existence") & parsed, (dim == "consistency") & parsed, (dim == "sync") & parsed
    r.add("mute_hallucination", state == "audio_described", exist & (iv == "mute"))
    r.add("false_silence", state == "muted", exist & orig)
    r.add("dodge_muted", state == "visual_only", exist & (iv == "mute"))
    r.add("dodge_real", state == "visual_only", exist & orig)
    r.add("swap_false_match", match == "match", cons & (iv == "swap"))
    r.add("swap_false_mismatch", match == "mismatch", cons & orig)
    r.add("offset_blindness", synced == True, shift)  # noqa: E712
    flagged = shift & (synced == False)  # noqa: E712
    target_dir = diag["target_direction"].to_numpy(dtype=object)
    opposite = ((direction == "delay") & (target_dir == "early")) | ((direction == "early") & (target_dir == "delay"))
    r.add("direction_confusion", opposite, flagged)
    r.add("direction_accuracy", direction == target_dir, flagged)
    r.add("false_sync_alarm", synced == False, sync_parsed & orig)  # noqa: E712
    for d in dimensions:
        r.add(f"parsed.{d}", parsed, dim == d)
        r.add(f"answered.{d}", answered, dim == d)
