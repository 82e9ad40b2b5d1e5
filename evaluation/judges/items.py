"""What a judge sees (one item: system text, audio inputs, prompt, options) and how its answer is read back.

Items come from any omniaudit dataset config with the judge columns (``system``, ``prompt``, ``options``,
``audio_1``..``audio_3``); the metadata (``gold``, ``reference``, ``specialist``) is only for scripted reference
judges and is never shown to a model.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from omniaudit.errors import InputError

AUDIO_COLUMNS = ("audio_1", "audio_2", "audio_3")
JUDGE_COLUMNS = ("id", "prompt", "options")


@dataclass
class JudgeItem:
    id: str
    prompt: str
    options: list[str]
    system: str | None = None
    audios: list[bytes] = field(default_factory=list)  # encoded audio files (FLAC/WAV), in prompt order
    order: str | None = None  # AB / BA for pairwise trials
    gold: str | None = None
    reference: str | None = None
    specialist: str | None = None
    condition: str | None = None
    unsent_media: list[str] = field(default_factory=list)  # media columns a model runner cannot send (yet)


def load_items(dataset: str | Path, config: str, conditions: list[str] | None = None,
               formats: list[str] | None = None) -> list[JudgeItem]:
    """The items of one config (optionally only some ``condition`` / ``task`` and ``format`` values), audio left
    encoded. A judge that cannot take several audio inputs can be run on ``formats=["concat"]`` only."""
    import datasets

    try:
        ds = datasets.load_dataset(str(dataset), config, split="train")
    except (ValueError, FileNotFoundError, ConnectionError, datasets.exceptions.DatasetNotFoundError) as exc:
        raise InputError(f"cannot load config '{config}': {type(exc).__name__}: {exc}", file=dataset) from exc
    missing = [c for c in JUDGE_COLUMNS if c not in ds.column_names]
    if missing:
        raise InputError(f"config '{config}' has no judge columns {missing}; it has {ds.column_names}", file=dataset)
    for col, feature in ds.features.items():  # media stay encoded: runners decode what they send
        if isinstance(feature, datasets.Audio | datasets.Image | datasets.Video):
            ds = ds.cast_column(col, type(feature)(decode=False))
    items = []
    for row in ds:
        selector = row.get("condition") or row.get("task")
        if (conditions and selector not in conditions) or (formats and row.get("format") not in formats):
            continue
        audios = [row[c]["bytes"] for c in AUDIO_COLUMNS if c in row and row[c] is not None]
        unsent = [c for c in ("audio", "image", "video") if row.get(c) is not None]
        items.append(JudgeItem(id=row["id"], prompt=row["prompt"], options=list(row["options"]),
                               system=row.get("system"), audios=audios, order=row.get("order"),
                               gold=row.get("gold"), reference=row.get("reference"),
                               specialist=row.get("specialist"), condition=selector, unsent_media=unsent))
    if not items:
        raise InputError(f"no items in config '{config}' with condition in {conditions} and format in {formats}",
                         file=dataset)
    return items


def refuse_unsent_media(items: list[JudgeItem], runner: str) -> None:
    """Model runners send audio_1..audio_3 only; an item with other media would be judged blind, so refuse it."""
    for item in items:
        if item.unsent_media:
            raise InputError(f"item '{item.id}' has {', '.join(item.unsent_media)} input(s) that the {runner} runner "
                             f"cannot send yet; a model would answer without them (scripted judges work)")


def decode(audio: bytes, rate: int = 16000):
    """Encoded audio -> float32 mono array at ``rate``."""
    import numpy as np
    import soundfile as sf
    from scipy.signal import resample_poly

    data, sr = sf.read(io.BytesIO(audio), dtype="float32", always_2d=True)
    mono = data.mean(axis=1)
    return mono if sr == rate else resample_poly(mono, rate, sr).astype(np.float32)


def to_wav(audio: bytes) -> bytes:
    """Encoded audio -> 16-bit PCM WAV bytes (what chat APIs accept)."""
    import soundfile as sf

    data, sr = sf.read(io.BytesIO(audio), dtype="int16")
    buf = io.BytesIO()
    sf.write(buf, data, sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()


_MARKUP = re.compile(r"[*`#]|(?<!\w)_+|_+(?!\w)")  # emphasis marks; underscores inside words ("audio_described") stay
_LEADING_SLOT = re.compile(r"^\W*([AB])\s*(?:[.):,;!\-]|$)")  # "B", "A.", "(A)", "B - ..."; not "A clip ..."
# the letter is case-sensitive ("a bit" is not slot A); the cue words are not
_CHOICE = re.compile(r"(?i:\b(?:answer|choice|choose|chose|pick|select|prefer)(?:\s+is)?\s*:?\s*(?:clip|option)?\s*)"
                     r"\(?([AB])\b")
_NAMED = re.compile(r"(?i:\b(?:clip|option|candidate|slot)\s*)\(?([AB])\b")
# "Clip A is cleaner than clip B", "candidate B sounds more natural"
_PREFERRED = re.compile(r"(?i:\b(?:clip|option|candidate)\s*)\(?([AB])\)?(?i:\s+(?:is|sounds|has|was)\s+"
                        r"(?:clearly\s+|much\s+|slightly\s+)?(?:\w+er|more|less|better|the))\b")


def parse_answer(raw: str, options: list[str]) -> str | None:
    """The option a free-form answer names, or None (empty, a refusal, none or several options named)."""
    text = _MARKUP.sub("", raw or "").strip()
    if not text:
        return None
    if sorted(options) == ["A", "B"]:
        for pattern in (_LEADING_SLOT, _CHOICE, _PREFERRED):
            m = pattern.search(text)
            if m:
                return m.group(1)
        named = {m.group(1) for m in _NAMED.finditer(text)}
        return named.pop() if len(named) == 1 else None  # "clip A and clip B sound alike" names no choice
    lowered = text.lower().strip(" \t\n.\"'`*:")
    by_lower = {o.lower(): o for o in options}
    if lowered in by_lower:
        return by_lower[lowered]
    found = [o for o in options if re.search(rf"(?<!\w){re.escape(o.lower())}(?!\w)", lowered)]
    if len(found) == 1:
        return found[0]
    starts = [o for o in found if lowered.startswith(o.lower())]
    return starts[0] if len(starts) == 1 else None
