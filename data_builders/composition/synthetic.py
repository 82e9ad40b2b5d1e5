"""Embedded default: samples whose answer needs two modalities, made offline.

A picture of coloured squares (NumPy -> PNG) and a spoken instruction (espeak-ng). Three templates:

- ``SpokenSelectorCount`` (IC): the voice says which colour to count; the picture holds the counts.
- ``SpokenPositionColour`` (IC): the voice says which position to look at; the picture holds the colours (a row of
  five squares in three colours, so that its 1,215 configurations rarely repeat: a row of three distinct colours had
  18, and a default build drew each of them three times over, one input answered as several samples).
- ``ContradictedCount`` (CC): the voice states a wrong count; the picture holds the truth.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from omniaudit.io import atomic_dir

COLOURS = {"red": (210, 40, 40), "blue": (40, 80, 210), "green": (40, 160, 60)}
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
POSITIONS = ("first", "second", "third", "fourth", "fifth")  # counted from the left


def _picture(squares: list[tuple[str, int]], rng: np.random.Generator, size=(160, 120)) -> np.ndarray:
    """Coloured squares (colour, count) placed on a grid without overlap."""
    w, h = size
    img = np.full((h, w, 3), 245, np.uint8)
    cells = [(x, y) for y in range(8, h - 20, 22) for x in range(8, w - 20, 22)]
    order = rng.permutation(len(cells))
    k = 0
    for colour, count in squares:
        for _ in range(count):
            x, y = cells[order[k]]
            img[y : y + 16, x : x + 16] = COLOURS[colour]
            k += 1
    return img


def _row_picture(colours: list[str], size=(160, 120)) -> np.ndarray:
    w, h = size
    img = np.full((h, w, 3), 245, np.uint8)
    for i, colour in enumerate(colours):
        x = 7 + i * 30
        img[47:71, x : x + 24] = COLOURS[colour]
    return img


def synthesize_samples(out_dir: str | Path, n: int = 48, seed: int = 0) -> Path:
    """Write ``n`` samples (PNG + WAV each) and ``samples.jsonl``; returns its path."""
    import soundfile as sf
    from PIL import Image

    from omniaudit.data_builders.protocols.speech import RATE, espeak

    rng = np.random.default_rng(seed)
    rows = []
    with atomic_dir(out_dir) as tmp:
        for i in range(n):
            template = ("SpokenSelectorCount", "SpokenPositionColour", "ContradictedCount")[i % 3]
            if template == "SpokenSelectorCount":
                counts = dict(zip(COLOURS, rng.integers(1, 6, size=3).tolist(), strict=True))
                target = list(COLOURS)[int(rng.integers(3))]
                image, speech = _picture(list(counts.items()), rng), f"Count the {target} ones."
                question, answer, category, evidence = "How many are there?", WORDS[counts[target]], "IC", \
                    "audio_visual_fusion"
            elif template == "SpokenPositionColour":
                rng.permutation(3), rng.integers(3)  # the draws of the three-square row: the other samples keep theirs
                row = np.random.default_rng([seed, i])
                colours = [str(c) for c in row.choice(list(COLOURS), size=len(POSITIONS))]
                pos = int(row.integers(len(POSITIONS)))
                image, speech = _row_picture(colours), f"Look at the {POSITIONS[pos]} one from the left."
                question, answer, category, evidence = "Which colour is it?", colours[pos], "IC", \
                    "audio_visual_fusion"
            else:
                count = int(rng.integers(2, 7))
                image = _picture([("red", count)], rng)
                speech = f"I can see {WORDS[count + int(rng.integers(1, 3))]} red squares here."
                question, answer, category, evidence = "How many red squares are there?", WORDS[count], "CC", \
                    "image"
            name = f"s{i:03d}"
            Image.fromarray(image).save(tmp / f"{name}.png")
            sf.write(tmp / f"{name}.wav", espeak(speech, "en", "m3", (50, 165, 100)), RATE, subtype="PCM_16")
            rows.append({"id": name, "template_id": template[:3].upper() + f"_{i % 3}", "template_name": template,
                         "category": category, "tier": 2, "image": f"{name}.png", "audio": f"{name}.wav",
                         "transcript": speech, "question": question, "answer": answer,
                         "evidence_modality": evidence, "generation_confidence": int(rng.integers(3, 6)),
                         "auditor_decision": "REJECT" if rng.random() < 0.1 else "ACCEPT",
                         "difficulty": int(rng.integers(1, 11))})
        (tmp / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return Path(out_dir) / "samples.jsonl"
