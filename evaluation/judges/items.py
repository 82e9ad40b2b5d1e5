"""What a model is asked (one item: system text, media parts in prompt order, prompt, options) and how its answer is
read back.

The item contract (DESIGN.md), kept by every dataset config that a model answers:

- ``id``, ``prompt`` (required), ``system`` (optional), ``order`` (where the protocol has orders);
- ``options``: the closed answer set, or an empty list / no column for a free-form item (generated, never scored
  against a list);
- media: any number of ``datasets.Audio`` / ``Image`` / ``Video`` columns; ``media`` (optional, list of column names)
  gives their prompt order per row, else they follow the schema's column order; a null cell is not sent;
- ``video_audio`` (optional bool): the videos' own soundtracks are part of the input;
- everything else (``gold``, ``reference``, ``specialist``, ...) is metadata that only scripted reference models read.
"""

from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from omniaudit.errors import InputError

AUDIO_COLUMNS = ("audio_1", "audio_2", "audio_3")
JUDGE_COLUMNS = ("id", "prompt")
MODALITIES = ("audio", "image", "video")


@dataclass(frozen=True)
class MediaPart:
    """One encoded media input as stored in the dataset (FLAC/WAV, PNG/JPEG, MP4/MKV/WebM bytes)."""

    kind: str  # audio | image | video
    data: bytes
    column: str
    with_audio: bool = False  # video only: its own soundtrack is part of the input

    @cached_property
    def key(self) -> str:
        """Content hash: runners decode and featurise each unique source once."""
        return hashlib.sha256(self.data).hexdigest()

    @property
    def modality(self) -> str:
        """What a model must take to receive this part (a video with its soundtrack needs audio too)."""
        return "video+audio" if self.kind == "video" and self.with_audio else self.kind


@dataclass
class JudgeItem:
    id: str
    prompt: str
    options: list[str] = field(default_factory=list)  # empty: free-form (generated)
    system: str | None = None
    media: list[MediaPart] = field(default_factory=list)  # in prompt order
    order: str | None = None  # AB / BA for pairwise trials
    gold: str | None = None
    reference: str | None = None
    specialist: str | None = None
    condition: str | None = None

    @property
    def closed(self) -> bool:
        return bool(self.options)

    @property
    def audios(self) -> list[bytes]:
        return [m.data for m in self.media if m.kind == "audio"]

    @property
    def kinds(self) -> set[str]:
        return {m.kind for m in self.media}


@dataclass(frozen=True)
class Sampling:
    """How a runner samples its answers (temperature 0: greedy). ``run`` numbers repeated samples (``--runs N``):
    run r uses ``seed + r`` (when a seed is set) and runners key their caches by it, so repeated samples of one item
    are never collapsed into one answer."""

    temperature: float = 0.0
    top_p: float | None = None  # None: the model's / server's default
    seed: int | None = None  # None: not sent (servers pick one)
    run: int = 0

    def for_run(self, run: int) -> Sampling:
        return replace(self, run=run, seed=None if self.seed is None else self.seed + run)

    def record(self) -> dict:
        """The fields every predictions row carries."""
        return {"run": self.run, "temperature": self.temperature, "top_p": self.top_p, "seed": self.seed}


class Answer(str):
    """A runner's answer to one item: the raw text (a ``str``, so callers that want only text are unchanged) and, for
    a closed item, ``option_probs`` (option -> probability, summing to 1) where the runner has them (option logits,
    a server's logprobs), else None: the text is parsed instead."""

    option_probs: dict[str, float] | None

    def __new__(cls, raw: str, option_probs: dict[str, float] | None = None) -> Answer:
        answer = super().__new__(cls, raw)
        answer.option_probs = option_probs
        return answer


def _media_columns(features) -> dict[str, str]:
    import datasets

    kinds = {datasets.Audio: "audio", datasets.Image: "image", datasets.Video: "video"}
    return {col: kinds[type(f)] for col, f in features.items() if type(f) in kinds}


def load_items(dataset: str | Path, config: str, conditions: list[str] | None = None,
               formats: list[str] | None = None) -> list[JudgeItem]:
    """The items of one config (optionally only some ``condition`` / ``task`` and ``format`` values), media left
    encoded. A judge that cannot take several audio inputs can be run on ``formats=["concat"]`` only."""
    from omniaudit.data_builders.hub import load_hub_dataset

    ds = load_hub_dataset(dataset, config)
    missing = [c for c in JUDGE_COLUMNS if c not in ds.column_names]
    if missing:
        raise InputError(f"config '{config}' is not a set of model items: it lacks the item columns {missing} "
                         f"(it has {ds.column_names})", file=dataset)
    if getattr(ds.features["prompt"], "dtype", None) not in ("string", "large_string"):  # e.g. a DPO config's chat
        raise InputError(f"config '{config}' is not a set of model items: its 'prompt' column is a "
                         f"{type(ds.features['prompt']).__name__} (e.g. chat messages), not text", file=dataset)
    media_cols = _media_columns(ds.features)
    for col in media_cols:  # media stay encoded: runners decode what they send
        ds = ds.cast_column(col, type(ds.features[col])(decode=False))
    items = []
    for i, row in enumerate(ds):
        selector = row.get("condition") or row.get("task")
        if (conditions and selector not in conditions) or (formats and row.get("format") not in formats):
            continue
        order = row.get("media") or list(media_cols)
        unknown = [c for c in order if c not in media_cols]
        if unknown:
            raise InputError(f"'media' names {unknown}, which are not media columns of config '{config}' "
                             f"({sorted(media_cols)})", file=dataset, row=i + 1)
        parts = []
        for col in order:
            cell = row[col]
            if cell is None:
                continue
            data = cell.get("bytes")
            if data is None and cell.get("path"):
                data = Path(cell["path"]).read_bytes()
            kind = media_cols[col]
            parts.append(MediaPart(kind, data, col, kind == "video" and bool(row.get("video_audio"))))
        items.append(JudgeItem(id=row["id"], prompt=row["prompt"], options=list(row.get("options") or []),
                               system=row.get("system"), media=parts, order=row.get("order"),
                               gold=row.get("gold"), reference=row.get("reference"),
                               specialist=row.get("specialist"), condition=selector))
    if not items:
        raise InputError(f"no items in config '{config}' with condition in {conditions} and format in {formats}",
                         file=dataset)
    return items


def check_modalities(items: list[JudgeItem], runner: str, accepts: set[str]) -> None:
    """Refuse, before any model call, an item with an input the model cannot take: it would be answered blind."""
    for item in items:
        for part in item.media:
            if part.modality not in accepts:
                raise InputError(f"item '{item.id}' has a {part.modality} input ({part.column}) but {runner} takes "
                                 f"no {part.modality} (it takes only {', '.join(sorted(accepts)) or 'text'})")


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

# How a free-form answer names an option (pairwise letters A/B or a closed label set):
# * explicit choices name it: a cue ("Answer: B", "my choice is clip B"), a choice verb ("I choose B", "I'd go with
#   B"), a conclusion ("..., so B."), an attribute-free verdict ("B is better", "clip A is the better one"), a
#   sentence or line that is only the option ("B.", "I think clip B."), or an answer that leads with it ("B - it has
#   less hiss", "Angry, not sad"); when several are present, the LAST one wins (a final answer after reasoning);
# * comparatives of the judged attribute only describe ("Clip A is noisier than clip B", "B is cleaner"): the parser
#   does not know which attribute was asked, and "B is cleaner" reads exactly like "B is noisier", so they name no
#   choice (unparsed) unless an explicit choice follows;
# * a negated ("not A", "I wouldn't pick B") or coordinated ("A or B", "neither A nor B", "happy/sad") mention
#   names nothing; a closed-set answer without an explicit choice names the option only if it is the one option
#   mentioned (negated mentions aside).
_SLOT = r"(?:clip|option|candidate|slot|sample|recording|audio|response)"
_LETTER_REF = rf"(?:(?i:{_SLOT})\s*)?\(?\b([AB])\b\)?"  # the letter is case-sensitive: "a bit" is not slot A
_HEDGE = (r"(?:i\s+think|i\s+believe|i'?d\s+say|i\s+would\s+say|i\s+guess|probably|definitely|clearly|likely|"
          r"certainly|obviously|surely|it'?s|it\s+is|that'?s|that\s+is|(?:(?:my|the)\s+)?(?:final\s+)?answer"
          r"(?:\s+is)?)")
_CONCLUDE = (r"(?i:\b(?:so|thus|therefore|hence|overall|ultimately|finally|in\s+conclusion|in\s+summary|"
             rf"to\s+conclude)\b\s*[,:]?\s*(?:{_HEDGE}\s*[:,]?\s*)?)")
_END = r"(?=[^\w\n]*(?:\n|$)|\s*[.!;,)\]])"  # the option ends its clause
_NEGATED = re.compile(r"(?i:(?:\bnot|n't|\bnever|\bno|\bwithout)\s+(?:\w+\s+)?)$")
_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]*")
_AB_CUE = (r"(?i:\b(?:answer|choice|verdict|decision|pick|selection|preference|winner|"
           r"(?:better|preferred)\s+(?:one|clip|option|candidate|sample|recording))\b(?:\s+(?:is|would\s+be|"
           r"will\s+be|goes\s+to))?(?:\s+for)?\s*[:=\-\u2013]?\s*)")
_AB_VERB = (r"(?i:\b(?:choose|chose|choosing|pick|picked|picking|select|selected|selecting|prefer|preferred|"
            r"go\s+with|going\s+with|went\s+with|opt\s+for|vote\s+for|recommend)\s+)")
_AB_GOOD = (r"(?i:\s+(?:wins\b|(?:is|was|sounds|seems|would\s+be)\s+(?:(?:clearly|much|slightly|definitely|"
            r"somewhat|far|overall|the|a\s+bit)\s+)*(?:better|best|preferred|preferable|superior|the\s+winner|"
            r"(?:my|the)\s+(?:choice|pick|answer)|correct)\b))")
_LABEL_CUE = (r"(?i:\b(?:answer|label|verdict|choice|prediction|classification|category|class|emotion|language)\b"
              r"(?:\s+(?:is|would\s+be|will\s+be))?\s*[:=\-\u2013]?\s*)")
_LABEL_VERB = (r"(?i:\b(?:choose|chose|pick|picked|select|selected|go\s+with|going\s+with|"
               r"(?:classify|label|identify|classified|labelled|labeled|identified)(?:\s+(?:it|this|the\s+\w+))?"
               r"\s+as)\s+)")
_NOT_CLAUSE = r"(?!\s*(?i:which|with|that|whose|who)\b)"  # "A, which hisses, is noisier" does not lead with A
_ITS = r"(?i:\b(?:it'?s|it\s+is|that'?s|that\s+is)\s+)"  # "..., it's B."


def _sentence_choices(text: str, ref: str) -> list[tuple[int, int, str]]:
    """Sentences (or lines) that are only the option, possibly hedged: "B.", "I think clip B.", "Answer: sad"."""
    bare = re.compile(rf"\W*(?i:{_HEDGE}\W+)*{ref}[^\w]*")
    found = []
    for sentence in _SENTENCE.finditer(text):
        m = bare.fullmatch(sentence.group())
        if m:
            found.append((sentence.start() + m.start(1), sentence.start() + m.end(1), m.group(1)))
    return found


def _excluded(text: str, start: int, end: int, coord_ref: str) -> bool:
    """A negated or coordinated mention ("not A", "A or B", "neither A nor B", "happy/sad") names no choice."""
    before, after = text[:start], text[end:]
    if _NEGATED.search(before):
        return True
    joint = r"(?:[/&]|(?i:\b(?:or|and|nor|vs\.?|versus|between|either|neither|both)\b))"
    if re.search(rf"{joint}\s*(?:(?i:{_SLOT})\s*)?\(?$", before) or re.search(rf"{coord_ref}\)?\s*,\s*\(?$", before):
        return True
    return bool(re.match(rf"\)?\s*(?:[/&,]|(?i:(?:or|and|nor|vs\.?|versus)\b))\s*{coord_ref}", after))


def _last_choice(text: str, patterns: list[re.Pattern], ref: str, coord_ref: str) -> str | None:
    """The option of the last explicit choice that is neither negated nor coordinated."""
    spans = [(m.start(1), m.end(1), m.group(1)) for p in patterns for m in p.finditer(text)]
    spans += _sentence_choices(text, ref)
    spans = [s for s in spans if not _excluded(text, s[0], s[1], coord_ref)]
    return max(spans)[2] if spans else None


def _parse_letter(text: str) -> str | None:
    coord = rf"(?:(?i:{_SLOT})\s*)?\(?\b[AB]\b"
    patterns = [re.compile(_AB_CUE + _LETTER_REF), re.compile(_AB_VERB + _LETTER_REF),
                re.compile(_CONCLUDE + _LETTER_REF + _END), re.compile(_ITS + _LETTER_REF + _END),
                re.compile(_LETTER_REF + _AB_GOOD),
                re.compile(rf"^\W*\(?\b([AB])\b\)?(?=\s*(?:[.)!;]|[-\u2013]\s|,{_NOT_CLAUSE}|$))")]
    # "A: ..." leads only when it is not the first of per-clip headers ("A: noisy. B: clean.")
    headers = set(re.findall(rf"(?:^|\n|[.;]\s+)\W*(?:(?i:{_SLOT})\s*)?\(?\b([AB])\b\)?\s*:", text))
    if len(headers) < 2:
        patterns.append(re.compile(r"^\W*\(?\b([AB])\b\)?(?=\s*:)"))
    return _last_choice(text, patterns, _LETTER_REF, coord)


def _parse_label(text: str, options: list[str]) -> str | None:
    by_lower = {o.lower(): o for o in options}
    lowered = text.lower().strip(" \t\n.\"'`*:!")
    if lowered in by_lower:
        return by_lower[lowered]
    alternation = "|".join(re.escape(o) for o in sorted(options, key=len, reverse=True))
    ref = rf"(?i:(?<!\w)({alternation})(?!\w))"
    coord = rf"(?i:(?<!\w)(?:{alternation})(?!\w))"
    patterns = [re.compile(_LABEL_CUE + ref), re.compile(_LABEL_VERB + ref), re.compile(_CONCLUDE + ref + _END),
                re.compile(_ITS + ref + _END),
                re.compile(rf"^\W*{ref}(?=\s*(?:[.)!;:]|[-\u2013]\s|,{_NOT_CLAUSE}|$))")]
    choice = _last_choice(text, patterns, ref, coord)
    if choice is not None:
        return by_lower[choice.lower()]
    mentions = list(re.finditer(ref, text))
    if any(_excluded(text, m.start(1), m.end(1), coord) and not _NEGATED.search(text[:m.start(1)])
           for m in mentions):
        return None  # "happy/sad", "angry or sad": more than one option offered
    named = {m.group(1).lower() for m in mentions if not _NEGATED.search(text[:m.start(1)])}
    return by_lower[named.pop()] if len(named) == 1 else None


def parse_answer(raw: str, options: list[str]) -> str | None:
    """The option a free-form answer names, or None (empty, a refusal, none or several options named, a comparison
    without a choice). A final explicit choice wins over earlier mentions; see the rules above."""
    text = _MARKUP.sub("", raw or "").strip()
    if not text or not options:
        return None
    if sorted(options) == ["A", "B"]:
        return _parse_letter(text)
    return _parse_label(text, options)
