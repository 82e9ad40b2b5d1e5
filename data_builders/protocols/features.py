"""What the blueprint and specialist channels carry: eGeMAPS phrases, a specialist's labels, wrong labels.

- Acoustic descriptors: openSMILE eGeMAPSv02 functionals of the decoded audio, rendered as phrases ("mean pitch is
  high") by corpus tertiles, as in TRACE-style blueprints.
- Specialist: the manifest's ``specialist`` column when given; otherwise a real specialist fitted here: a
  standardised logistic regression on the eGeMAPS functionals, predicted out-of-fold (stratified 5-fold, or
  fewer when a class is smaller; seeded).
- Wrong labels: one fixed derangement per attribute (a seeded cycle through the classes, so no class maps to
  itself and, on a class-balanced probe set, the wrong labels are uniform).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from omniaudit.data_builders.interventions.media import decode_audio
from omniaudit.errors import InputError

RATE = 16000
# (phrase subject, eGeMAPSv02 functional)
DESCRIPTORS = (
    ("mean pitch", "F0semitoneFrom27.5Hz_sma3nz_amean"),
    ("pitch variability", "F0semitoneFrom27.5Hz_sma3nz_stddevNorm"),
    ("loudness", "loudness_sma3_amean"),
    ("speaking rate", "VoicedSegmentsPerSec"),
    ("harmonics-to-noise ratio", "HNRdBACF_sma3nz_amean"),
    ("jitter", "jitterLocal_sma3nz_amean"),
    ("shimmer", "shimmerLocaldB_sma3nz_amean"),
)
LEVELS = ("low", "medium", "high")


def egemaps(paths: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """eGeMAPSv02 functionals (88 columns) and durations (s), one row per path, from audio decoded at 16 kHz mono."""
    import opensmile

    smile = opensmile.Smile(feature_set=opensmile.FeatureSet.eGeMAPSv02,
                            feature_level=opensmile.FeatureLevel.Functionals)
    rows, durations = [], []
    for path in paths:
        audio, _, _ = decode_audio(path, RATE, 1)
        if audio.shape[1] < RATE // 10:
            raise InputError("audio shorter than 0.1 s", file=path)
        rows.append(smile.process_signal(audio[0], RATE).iloc[0])
        durations.append(audio.shape[1] / RATE)
    return pd.DataFrame(rows).reset_index(drop=True), np.array(durations)


def descriptor_phrases(features: pd.DataFrame) -> list[str]:
    """One sentence per clip: each descriptor as low / medium / high against the corpus tertiles."""
    levels = {}
    for subject, column in DESCRIPTORS:
        values = features[column].to_numpy(float)
        cuts = np.nanpercentile(values, [100 / 3, 200 / 3])
        levels[subject] = np.digitize(values, cuts)
    return ["; ".join(f"{subject} is {LEVELS[levels[subject][i]]}" for subject, _ in DESCRIPTORS) + "."
            for i in range(len(features))]


def fitted_specialist(features: pd.DataFrame, labels: np.ndarray, seed: int = 0) -> tuple[np.ndarray, int]:
    """Out-of-fold predictions of a standardised logistic regression on the eGeMAPS functionals, and the fold count
    (5, or fewer when the smallest class has fewer clips)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    _, counts = np.unique(labels, return_counts=True)
    folds = int(min(5, counts.min()))
    if folds < 2:
        raise InputError("a fitted specialist needs at least 2 clips per class; give a specialist column instead")
    x = np.nan_to_num(features.to_numpy(float))
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    return cross_val_predict(model, x, labels, cv=StratifiedKFold(folds, shuffle=True, random_state=seed)), folds


def derangement(labels: list[str], seed: int = 0) -> dict[str, str]:
    """A fixed permutation of the classes with no fixed point: each class maps to the next one in a seeded cycle."""
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise InputError(f"a wrong label needs at least two classes; found {classes}")
    order = [classes[i] for i in np.random.default_rng(seed).permutation(len(classes))]
    return {order[i]: order[(i + 1) % len(order)] for i in range(len(order))}
