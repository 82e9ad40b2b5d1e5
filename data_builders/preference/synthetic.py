"""Embedded default: a seeded synthetic EmoPrefer-like benchmark whose shortcuts are planted, so findings are known.

Generative model (documented in the dataset card):

* K generators, each with a fixed writing style (openers, emotion verbs, cue phrases, sign-off) and verbosity (number
  of cue sentences ~ 1 + Poisson(v_g)); verbosity ranks are a fixed shuffle, so the wordiest generator is not the best.
* Each clip has a hidden true emotion; generator g names it with probability acc_g, otherwise another emotion.
* Each pair draws two distinct generators uniformly in order. With probability ``same_rate`` the label is "same";
  otherwise P(a1) = sigmoid(theta_g1 - theta_g2 + content_strength * (c1 - c2) + position_bias), where
  theta_g = prior_strength * linspace(-1, 1, K)[rank_g] is the planted generator prior and c_i = 1 when description i
  names the true emotion (the content signal, invisible to content-blind probes).

Positive control: prior_strength > 0 (probes beat the label-blind floor, prior rule scores 0 on counter-stereotypical
pairs). Negative control: prior_strength = 0 (probes fall to the floor). Content control: content_strength > 0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

EMOTIONS = ("happy", "sad", "angry", "fearful", "surprised", "disgusted", "anxious", "calm")
NAMES = ("aurora-7b", "borealis-av", "cirrus-omni", "delta-vl", "ember-chat", "fjord-13b", "gale-mm")
STYLE_SEED = 20260417  # styles are part of the benchmark definition, independent of the data seed

_OPENERS = (
    "In this clip,", "Overall,", "From the video,", "Judging by the scene,", "Based on the audio and visuals,",
    "At first glance,", "Taken together,", "In summary,", "Looking closely,", "Throughout the clip,",
    "From the facial cues,", "Considering the voice,", "Across the frames,", "On balance,",
)
_VERBS = (
    "the person appears", "the speaker seems", "the subject looks", "the character is clearly",
    "the individual comes across as", "the woman sounds", "the man feels", "the protagonist is evidently",
    "the speaker is mostly", "the face reads as",
)
_CUES = (
    "The brows are drawn together.", "The voice trembles slightly.", "A faint smile appears near the end.",
    "The speaking rate is fast and clipped.", "Shoulders are raised and tense.", "The gaze drops to the floor.",
    "Pitch rises sharply on the last words.", "Hands move in quick, restless gestures.", "The jaw is set firmly.",
    "Breathing is audible and uneven.", "The eyes widen for a moment.", "The tone stays flat and low.",
    "Laughter breaks through the sentence.", "The lips press into a thin line.", "Pauses grow longer over time.",
    "The head tilts while listening.", "Volume drops to almost a whisper.", "The posture is relaxed and open.",
)
_SIGNOFFS = (
    "", "Confidence: moderate.", "This reading is tentative.", "These cues point the same way.",
    "The emotional state is consistent.", "No strong contradictions were observed.", "Evidence is mixed but clear.",
)


@dataclass(frozen=True)
class SyntheticSpec:
    n_pairs: int = 2096
    n_generators: int = 7
    prior_strength: float = 1.0
    content_strength: float = 0.0
    position_bias: float = 0.45
    same_rate: float = 0.225
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n_generators < 2:
            raise ValueError("synthetic benchmark needs at least 2 generators")
        if not 0 <= self.same_rate < 1:
            raise ValueError(f"same_rate must be in [0, 1), got {self.same_rate}")
        if self.n_pairs < 10:
            raise ValueError(f"n_pairs must be at least 10, got {self.n_pairs}")

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class GeneratorStyle:
    name: str
    openers: tuple[str, ...]
    verbs: tuple[str, ...]
    cues: tuple[str, ...]
    signoff: str
    verbosity: float
    accuracy: float
    theta: float


def generator_styles(spec: SyntheticSpec) -> list[GeneratorStyle]:
    rng = np.random.default_rng(STYLE_SEED)
    k = spec.n_generators
    names = list(NAMES[:k]) + [f"gen-{i}" for i in range(len(NAMES), k)]
    verbosity_rank = rng.permutation(k)
    quality = np.linspace(-1.0, 1.0, k)
    styles = []
    for i, name in enumerate(names):
        styles.append(GeneratorStyle(
            name=name,
            openers=tuple(rng.choice(_OPENERS, size=2, replace=False)),
            verbs=tuple(rng.choice(_VERBS, size=2, replace=False)),
            cues=tuple(rng.choice(_CUES, size=6, replace=False)),
            signoff=_SIGNOFFS[i % len(_SIGNOFFS)],
            verbosity=0.5 + 4.0 * verbosity_rank[i] / max(k - 1, 1),
            accuracy=float(rng.uniform(0.45, 0.85)),
            theta=float(spec.prior_strength * quality[i]),
        ))
    return styles


def _describe(style: GeneratorStyle, emotion: str, rng: np.random.Generator) -> str:
    n_cues = 1 + rng.poisson(style.verbosity)
    cues = rng.choice(style.cues, size=min(n_cues, len(style.cues)), replace=False)
    parts = [f"{rng.choice(style.openers)} {rng.choice(style.verbs)} {emotion}.", *cues, style.signoff]
    return " ".join(p for p in parts if p)


def synthesize(spec: SyntheticSpec = SyntheticSpec()) -> pd.DataFrame:
    """The benchmark as canonical rows plus hidden truth columns prefixed ``synthetic_``."""
    rng = np.random.default_rng(spec.seed)
    styles = generator_styles(spec)
    k, n = len(styles), spec.n_pairs
    g1 = rng.integers(0, k, n)
    g2 = (g1 + rng.integers(1, k, n)) % k  # distinct generators, uniform over ordered pairs
    truth = rng.integers(0, len(EMOTIONS), n)
    rows = []
    for i in range(n):
        said, correct = [], []
        for g in (g1[i], g2[i]):
            ok = rng.random() < styles[g].accuracy
            emotion = truth[i] if ok else (truth[i] + rng.integers(1, len(EMOTIONS))) % len(EMOTIONS)
            said.append(_describe(styles[g], EMOTIONS[emotion], rng))
            correct.append(bool(ok))
        logit = (styles[g1[i]].theta - styles[g2[i]].theta + spec.content_strength * (correct[0] - correct[1])
                 + spec.position_bias)
        if rng.random() < spec.same_rate:
            pref = "same"
        else:
            pref = "a1" if rng.random() < 1.0 / (1.0 + np.exp(-logit)) else "a2"
        rows.append({
            "name": f"clip_{i:05d}", "model1": styles[g1[i]].name, "a1": said[0],
            "model2": styles[g2[i]].name, "a2": said[1], "preference": pref,
            "synthetic_emotion": EMOTIONS[truth[i]],
            "synthetic_correct1": correct[0], "synthetic_correct2": correct[1],
        })
    return pd.DataFrame(rows)
