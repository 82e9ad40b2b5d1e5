"""The audio interventions as pure array operations on audio placed on the video timeline (float32 ``(channels,
samples)``, see :mod:`~.media`): ``shift``, ``mute``, white noise at an exact SNR, a tone between two clips, a length
fitted to the video, and how similar two recordings are. No file is read or written here, so they are testable
without media."""

from __future__ import annotations

import numpy as np

from omniaudit.errors import InputError

TONE_HZ = 880.0
TONE_S = 0.6
TONE_AMPLITUDE = 0.5


def n_samples(duration: float, rate: int) -> int:
    return int(round(duration * rate))


def fit_length(audio: np.ndarray, n: int, loop: bool = False) -> np.ndarray:
    """Trim or extend ``audio`` to ``n`` samples: with digital silence, or by repeating it when ``loop``."""
    have = audio.shape[1]
    if have >= n:
        return audio[:, :n]
    if loop and have:
        return np.tile(audio, (1, -(-n // have)))[:, :n]
    return np.pad(audio, ((0, 0), (0, n - have)))


def shift(audio: np.ndarray, rate: int, offset_s: float) -> np.ndarray:
    """Displace the audio by ``offset_s`` (> 0: delayed, < 0: early), keeping the length; gaps are digital silence."""
    n = audio.shape[1]
    k = n_samples(abs(offset_s), rate)
    if k >= n:
        raise InputError(f"shift of {offset_s:+g} s is not shorter than the clip ({n / rate:g} s)")
    if offset_s >= 0:
        return np.pad(audio[:, : n - k], ((0, 0), (k, 0)))
    return np.pad(audio[:, k:], ((0, 0), (0, k)))


def mute(audio: np.ndarray) -> np.ndarray:
    """Digital silence of the same shape (and so the same length and rate)."""
    return np.zeros_like(audio)


def add_noise(audio: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """Add white Gaussian noise scaled so that signal power / noise power is exactly ``snr_db`` over the clip."""
    signal_power = float(np.mean(audio.astype(np.float64) ** 2))
    if signal_power == 0:
        raise InputError("cannot add noise at a given SNR to a silent signal (signal power is 0)")
    noise = rng.standard_normal(audio.shape)
    noise *= np.sqrt(signal_power / 10 ** (snr_db / 10) / np.mean(noise**2))
    return (audio + noise).astype(np.float32)


def snr_db(clean: np.ndarray, noisy: np.ndarray) -> float:
    clean64 = clean.astype(np.float64)
    return float(10 * np.log10(np.mean(clean64**2) / np.mean((noisy.astype(np.float64) - clean64) ** 2)))


def similarity(x: np.ndarray, y: np.ndarray) -> float:
    """Maximum normalised cross-correlation of two 1-D signals over every lag, in [0, 1] (sign ignored).

    ``max_k |sum_t x'[t] y'[t-k]| / (||x'|| ||y'||)`` with ``x'``, ``y'`` mean-removed and zero-padded to a common
    length (FFT, O(n log n)); the same recording gives 1 at its lag, even when inverted, re-encoded or resampled;
    unrelated recordings give about sqrt(2 ln(2n) / n) for noise. Either signal silent: 0. Equals the maximum of
    ``abs(np.correlate(x', y', "full"))`` divided by the norms (checked in the tests).
    """
    x = np.asarray(x, np.float64) - np.mean(x) if len(x) else np.zeros(1)
    y = np.asarray(y, np.float64) - np.mean(y) if len(y) else np.zeros(1)
    norm = np.sqrt(np.sum(x**2) * np.sum(y**2))
    if norm == 0:
        return 0.0
    size = 1 << int(np.ceil(np.log2(len(x) + len(y) - 1)))
    corr = np.fft.irfft(np.fft.rfft(x, size) * np.conj(np.fft.rfft(y, size)), size)
    return float(min(1.0, np.max(np.abs(corr)) / norm))


def tone(rate: int, channels: int = 1, seconds: float = TONE_S, hz: float = TONE_HZ) -> np.ndarray:
    t = np.arange(n_samples(seconds, rate)) / rate
    return np.tile(TONE_AMPLITUDE * np.sin(2 * np.pi * hz * t, dtype=np.float64), (channels, 1)).astype(np.float32)


def concat_with_tone(first: np.ndarray, second: np.ndarray, rate: int) -> np.ndarray:
    """``first``, a 0.6 s 880 Hz tone, ``second`` (same rate and channel count): the pairwise "concat" format."""
    if first.shape[0] != second.shape[0]:
        raise ValueError(f"channel counts differ: {first.shape[0]} vs {second.shape[0]}")
    return np.concatenate([first, tone(rate, first.shape[0]), second], axis=1)
