"""Embedded default: seeded synthetic clips of an object falling, with its impact sound at the contact frame.

Each event class pairs a look (colour, size) with a sound (a damped bounce, a clang, a knock, shattering glass), so
vision alone predicts the sound: exactly the shortcut the interventions break. Clips are written as H.264 + AAC MP4s
with a manifest (JSONL) in the format users bring, and the builder reads them like any user corpus.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from omniaudit.errors import InputError
from omniaudit.io import atomic_dir

# name: (colour RGB, object size in px at 240p, visual event, audio event); sounds: impact_sound()
EVENT_CLASSES = {
    "ball": ((210, 40, 40), 22, "a red ball hits the floor and bounces", "a rubbery bounce"),
    "pot": ((120, 120, 130), 30, "a metal pot falls onto the floor", "a metallic clang"),
    "block": ((140, 90, 40), 26, "a wooden block drops onto the floor", "a dull wooden knock"),
    "glass": ((60, 140, 220), 18, "a glass falls and shatters on the floor", "glass shattering"),
}


@dataclass(frozen=True)
class SyntheticClipSpec:
    n_clips: int = 12
    duration: float = 6.0
    width: int = 320
    height: int = 240
    fps: int = 25
    sample_rate: int = 16000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n_clips < 2:
            raise InputError("synthetic clips: Swap needs at least 2 clips", value=self.n_clips)
        if self.duration < 5.0:
            raise InputError("synthetic clips must last at least 5 s (the event sits 2.2 s from either end so that "
                             "+-2 s shifts keep the sound inside the clip)", value=self.duration)

    def as_dict(self) -> dict:
        return asdict(self)


def impact_sound(kind: str, rate: int, rng: np.random.Generator) -> np.ndarray:
    """About 0.4-1.0 s of the impact sound of ``kind``, peak-normalised to 0.8."""
    t = np.arange(int(rate * 1.0)) / rate
    if kind == "ball":
        y = np.sin(2 * np.pi * 160 * t) * np.exp(-t / 0.05) + 0.5 * np.sin(2 * np.pi * 90 * t) * np.exp(-t / 0.08)
    elif kind == "pot":
        y = sum(a * np.sin(2 * np.pi * f * t) for a, f in ((1.0, 523), (0.6, 1410), (0.4, 2630))) * np.exp(-t / 0.35)
    elif kind == "block":
        y = np.sin(2 * np.pi * 720 * t) * np.exp(-t / 0.03) + 0.4 * rng.standard_normal(t.size) * np.exp(-t / 0.01)
    elif kind == "glass":
        crackle = (rng.random(t.size) < 0.02) * rng.standard_normal(t.size)
        y = (rng.standard_normal(t.size) * np.exp(-t / 0.06) + 2 * crackle * np.exp(-t / 0.3)) * np.sin(
            2 * np.pi * 3000 * t) ** 2
    else:
        raise ValueError(f"unknown event class {kind!r}")
    return (0.8 * y / np.max(np.abs(y))).astype(np.float32)


def _frames(kind: str, spec: SyntheticClipSpec, contact: float) -> np.ndarray:
    """(n_frames, H, W, 3) uint8: the object falls under gravity, lands at ``contact`` and rests on the floor."""
    colour, size = EVENT_CLASSES[kind][:2]
    size = max(4, int(size * spec.height / 240))
    floor = int(spec.height * 0.8)
    n = int(round(spec.duration * spec.fps))
    t = np.arange(n) / spec.fps
    fall = 0.6  # seconds from the top of the frame to the floor
    progress = np.clip(1 - (contact - t) / fall, 0, 1) ** 2  # quadratic: free fall
    top = np.where(t < contact - fall, -size, (progress * (floor - size)).astype(int))
    frames = np.empty((n, spec.height, spec.width, 3), np.uint8)
    frames[:] = (235, 235, 230)
    frames[:, floor:] = (90, 90, 95)
    x0 = spec.width // 2 - size // 2
    for i in range(n):
        y0 = top[i]
        if y0 + size > 0:
            frames[i, max(0, y0) : y0 + size, x0 : x0 + size] = colour
    return frames


def _write_clip(path: Path, frames: np.ndarray, audio: np.ndarray, spec: SyntheticClipSpec) -> None:
    import av

    from omniaudit.data_builders.interventions import media

    with av.open(str(path), "w", format="mp4") as out:
        video = media.add_video_stream(out, spec.fps, spec.width, spec.height)
        sound = media.add_audio_stream(out, 1, spec.sample_rate, "aac")
        media.mux_frames(out, video, frames)
        media.mux_audio(out, sound, audio[None], start_pts=0)


def synthesize_clips(out_dir: str | Path, spec: SyntheticClipSpec = SyntheticClipSpec()) -> Path:
    """Write ``spec.n_clips`` clips and ``manifest.jsonl`` into ``out_dir`` (atomically); returns the manifest path."""
    rng = np.random.default_rng(spec.seed)
    kinds = list(EVENT_CLASSES)
    rows = []
    with atomic_dir(out_dir) as tmp:
        for i in range(spec.n_clips):
            kind = kinds[i % len(kinds)]
            contact = float(np.round(rng.uniform(2.2, spec.duration - 2.4), 2))  # +-2 s shifts stay in the clip
            n = int(round(spec.duration * spec.sample_rate))
            audio = (0.003 * rng.standard_normal(n)).astype(np.float32)  # room tone, so the track is never silent
            hit = impact_sound(kind, spec.sample_rate, rng)
            k = int(round(contact * spec.sample_rate))
            audio[k : k + hit.size] += hit[: n - k]
            name = f"clip{i:03d}_{kind}"
            _write_clip(tmp / f"{name}.mp4", _frames(kind, spec, contact), audio, spec)
            _, _, visual, sound = EVENT_CLASSES[kind]
            rows.append({"id": name, "video": f"{name}.mp4", "category": kind, "visual_event": visual,
                         "visual_time": contact, "audio_event": sound, "audio_time": contact})
        (tmp / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return Path(out_dir) / "manifest.jsonl"
