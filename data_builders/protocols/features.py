"""What the blueprint and specialist channels carry: eGeMAPS phrases, a specialist's labels, wrong labels.

- Acoustic descriptors: openSMILE eGeMAPSv02 functionals of the decoded audio, rendered as phrases ("mean pitch is
  high") by corpus tertiles, as in TRACE-style blueprints.
- Specialist: the manifest's ``specialist`` column when given; otherwise a real specialist fitted here: a
  standardised logistic regression on the eGeMAPS functionals, predicted out-of-fold (stratified 5-fold, or
  fewer when a class has fewer groups; seeded). Folds are grouped: clips of one speaker, and clips with identical
  audio, always fall in the same fold, so the specialist is never tested on a voice or a recording it was trained
  on (a duplicated clip would otherwise be "recognised" rather than classified).
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


def egemaps(clips: list[str] | list[np.ndarray]) -> tuple[pd.DataFrame, np.ndarray]:
    """eGeMAPSv02 functionals (88 columns) and durations (s), one row per clip: a path (decoded at 16 kHz mono) or
    a 16 kHz mono array."""
    import opensmile

    smile = opensmile.Smile(feature_set=opensmile.FeatureSet.eGeMAPSv02,
                            feature_level=opensmile.FeatureLevel.Functionals)
    rows, durations = [], []
    for clip in clips:
        audio = clip if isinstance(clip, np.ndarray) else decode_audio(clip, RATE, 1)[0][0]
        if audio.shape[-1] < RATE // 10:
            raise InputError("audio shorter than 0.1 s", file=None if isinstance(clip, np.ndarray) else clip)
        rows.append(smile.process_signal(audio.reshape(-1), RATE).iloc[0])
        durations.append(audio.shape[-1] / RATE)
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


def connected_groups(*keys: np.ndarray) -> np.ndarray:
    """Group ids such that clips sharing any non-empty key (speaker, audio hash, ...) are in one group."""
    n = len(keys[0]) if keys else 0
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for key in keys:
        first: dict[object, int] = {}
        for i, value in enumerate(key):
            if value is None or value == "":
                continue
            if value in first:
                parent[root(i)] = root(first[value])
            else:
                first[value] = i
    roots = [root(i) for i in range(n)]
    return np.unique(roots, return_inverse=True)[1]


def specialist_folds(labels: np.ndarray, groups: np.ndarray | None = None, seed: int = 0) -> tuple[np.ndarray, int]:
    """The test fold of every clip and the fold count: stratified by label, grouped by ``groups`` (a group never
    spans two folds); 5 folds, or as many as the class with the fewest groups has (0 when under 2)."""
    from sklearn.model_selection import StratifiedGroupKFold

    labels = np.asarray(labels)
    groups = np.arange(len(labels)) if groups is None else np.asarray(groups)
    per_class = pd.Series(groups).groupby(labels).nunique()
    folds = int(min(5, per_class.min()))
    if folds < 2:
        return np.zeros(len(labels), dtype=int), 0
    fold_of = np.empty(len(labels), dtype=int)
    splitter = StratifiedGroupKFold(folds, shuffle=True, random_state=seed)
    for k, (_, test) in enumerate(splitter.split(np.zeros(len(labels)), labels, groups)):
        fold_of[test] = k
    return fold_of, folds


def fitted_specialist(features: pd.DataFrame, labels: np.ndarray, seed: int = 0,
                      groups: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Out-of-fold predictions of a standardised logistic regression on the eGeMAPS functionals, and the fold count
    (5, or fewer when the smallest class has fewer groups). ``groups`` (e.g. from :func:`connected_groups` over
    speakers and audio hashes) keep each group in one fold; None: every clip is its own group."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import PredefinedSplit, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    fold_of, folds = specialist_folds(labels, groups, seed)
    if folds < 2:
        raise InputError("a fitted specialist needs at least 2 clips per class, from different speakers and "
                         "recordings (folds are grouped by both); give a specialist column instead")
    x = np.nan_to_num(features.to_numpy(float))
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    return cross_val_predict(model, x, labels, cv=PredefinedSplit(fold_of)), folds


def derangement(labels: list[str], seed: int = 0) -> dict[str, str]:
    """A fixed permutation of the classes with no fixed point: each class maps to the next one in a seeded cycle."""
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise InputError(f"a wrong label needs at least two classes; found {classes}")
    order = [classes[i] for i in np.random.default_rng(seed).permutation(len(classes))]
    return {order[i]: order[(i + 1) % len(order)] for i in range(len(order))}
