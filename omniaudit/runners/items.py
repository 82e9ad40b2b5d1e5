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
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import cast

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
    a server's logprobs), else None: the text is parsed instead. ``finish_reason`` is why generation stopped as the
    runner reports it (a chat completion's ``"stop"``, ``"length"``, ...), None when unknown. ``served_model`` and
    ``system_fingerprint`` are a served model's own word on who answered (a chat completion's ``model`` and
    ``system_fingerprint``), None where the runner has none. ``reasoning`` is a reasoning trace the runner got apart
    from the text (a server's ``reasoning_content``): never read as the answer."""

    option_probs: dict[str, float] | None
    finish_reason: str | None
    served_model: str | None
    system_fingerprint: str | None
    reasoning: str | None

    def __new__(cls, raw: str, option_probs: dict[str, float] | None = None, finish_reason: str | None = None,
                served_model: str | None = None, system_fingerprint: str | None = None,
                reasoning: str | None = None) -> Answer:
        answer = super().__new__(cls, raw)
        answer.option_probs = option_probs
        answer.finish_reason = finish_reason
        answer.served_model = served_model
        answer.system_fingerprint = system_fingerprint
        answer.reasoning = reasoning
        return answer


def _media_columns(features) -> dict[str, str]:
    import datasets

    kinds = {datasets.Audio: "audio", datasets.Image: "image", datasets.Video: "video"}
    return {col: kinds[type(f)] for col, f in features.items() if type(f) in kinds}


def load_items(dataset: str | Path, config: str, conditions: list[str] | None = None,
               formats: list[str] | None = None) -> list[JudgeItem]:
    """The items of one config (optionally only some ``conditions`` and ``format`` values), media left encoded.

    ``conditions`` selects on the columns the config has: ``condition`` (or, where a row has none, its ``task``:
    protocols), ``intervention`` and ``dimension`` (interventions diagnostic), ``ablation``, ``template_name``,
    ``template_id`` and ``category`` (composition). Each value is looked up in those columns (``COLUMN=VALUE`` names
    the column); values of one column are alternatives, values of different columns must all hold (``shift sync``:
    the Shift items of the sync dimension). A value the config does not have is an error listing the valid values.
    A judge that cannot take several audio inputs can be run on ``formats=["concat"]`` only."""
    from omniaudit.data_builders.hub import load_hub_dataset

    ds = load_hub_dataset(dataset, config)
    missing = [c for c in JUDGE_COLUMNS if c not in ds.column_names]
    if missing:
        raise InputError(f"config '{config}' is not a set of model items: it lacks the item columns {missing} "
                         f"(it has {ds.column_names})", file=dataset)
    if getattr(ds.features["prompt"], "dtype", None) not in ("string", "large_string"):  # e.g. a DPO config's chat
        raise InputError(f"config '{config}' is not a set of model items: its 'prompt' column is a "
                         f"{type(ds.features['prompt']).__name__} (e.g. chat messages), not text", file=dataset)
    selected = _select_rows(ds, config, dataset, conditions, formats)
    media_cols = _media_columns(ds.features)
    for col in media_cols:  # media stay encoded: runners decode what they send
        ds = ds.cast_column(col, type(ds.features[col])(decode=False))
    items = []
    for i in selected:
        row = ds[i]
        selector = row.get("condition") or row.get("task")
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
        raise InputError(f"no items in config '{config}'", file=dataset)
    return items


# What an item's ``doc_hash`` covers (:func:`doc_hash`): the fields that decide what the model is shown and how its
# answer is scored; ``media``: per non-null media input in prompt order its column, kind, soundtrack flag and size
DOC_FIELDS = ("id", "order", "condition", "system", "prompt", "options", "gold", "reference", "specialist")


def _doc_digest(fields: dict, media: list[tuple[str, str, bool, int]]) -> str:
    from omniaudit.records import canonical

    record = {name: fields.get(name) for name in DOC_FIELDS}
    record["options"] = list(record["options"] or [])
    record["media"] = [{"column": c, "kind": k, "with_audio": a, "bytes": n} for c, k, a, n in media]
    return hashlib.sha256(canonical(record).encode()).hexdigest()


def doc_hash(item: JudgeItem) -> str:
    """The SHA-256 (hex) of ``item`` as the judge saw it, a predictions row's ``doc_hash`` (as lm-evaluation-harness's
    ``doc_hash``): the canonical JSON of its :data:`DOC_FIELDS` (``id``, ``order``, ``condition`` (the row's condition,
    else its task), ``system``, ``prompt``, ``options``, and the scored labels ``gold``, ``reference``,
    ``specialist``) and of its media inputs in prompt order, each as its column, kind, soundtrack flag
    (``with_audio``) and size in bytes. The media bytes themselves are not hashed here: the dataset fingerprint of the
    run's provenance binds every file's content, and the ``prompt_hash`` of ``openai:`` / ``scripted:`` rows carries
    each input's SHA-256 (:func:`~.payload.render_messages`); so an audit recomputes it (:func:`doc_hashes`) from the
    dataset's rows and the media cells' sizes without reading the media. Where a media cell is stored by path (a
    path-mode build), its size is the file's. Deterministic: no path, time or machine enters it."""
    return _doc_digest({name: getattr(item, name) for name in DOC_FIELDS},
                       [(p.column, p.kind, p.with_audio, len(p.data)) for p in item.media])


def doc_hashes(dataset: str | Path, config: str) -> dict[tuple[str, str | None], set[str]]:
    """(id, order) -> the :func:`doc_hash` of every item of ``config`` with that id and order (as text; no order:
    None), as :func:`load_items`
    would make the items (all of them, whatever selection), read without decoding or copying any media (their sizes
    come from the Arrow offsets, or for a path-mode cell the file's size)."""
    import os

    import pyarrow.compute as pc

    from omniaudit.data_builders.hub import load_hub_dataset

    ds = load_hub_dataset(dataset, config)
    missing = [c for c in JUDGE_COLUMNS if c not in ds.column_names]
    if missing:
        raise InputError(f"config '{config}' is not a set of model items: it lacks the item columns {missing}",
                         file=dataset)
    media_cols = _media_columns(ds.features)
    table = ds.with_format("arrow")[:]
    sizes: dict[str, list[int | None]] = {}
    for col in media_cols:
        cells = table.column(col).combine_chunks()
        data, paths = pc.struct_field(cells, "bytes"), pc.struct_field(cells, "path")
        lengths = pc.binary_length(data).to_pylist()
        null = cells.is_null().to_pylist()
        out: list[int | None] = []
        for n, (length, path, empty) in enumerate(zip(lengths, paths.to_pylist(), null, strict=True)):
            if empty:
                out.append(None)
            elif length is not None:
                out.append(length)
            elif path:
                out.append(os.stat(path).st_size)
            else:
                raise InputError(f"media column '{col}' holds neither bytes nor a path", file=dataset, row=n + 1)
        sizes[col] = out
    names = [c for c in ds.column_names if c not in media_cols]
    rows = table.select(names).to_pylist()
    hashes: dict[tuple[str, str | None], set[str]] = {}
    for i, row in enumerate(rows):
        order = row.get("media") or list(media_cols)
        media = []
        for col in order:
            if col not in media_cols:
                raise InputError(f"'media' names {col!r}, which is not a media column of config '{config}' "
                                 f"({sorted(media_cols)})", file=dataset, row=i + 1)
            if sizes[col][i] is not None:
                kind = media_cols[col]
                media.append((col, kind, kind == "video" and bool(row.get("video_audio")), cast(int, sizes[col][i])))
        fields = {**row, "condition": row.get("condition") or row.get("task")}
        key = (str(row["id"]), None if row.get("order") is None else str(row["order"]))
        hashes.setdefault(key, set()).add(_doc_digest(fields, media))
    return hashes


# columns ``--conditions`` selects on, in the order a value is looked up; "condition" is a row's condition, else
# its task (protocols: pairwise rows have a task and no condition)
SELECTOR_COLUMNS = ("condition", "intervention", "dimension", "ablation", "template_name", "template_id", "category")
# selected only when named (``fold=K``, what ``judge --folds`` passes): a bare "0" is never read as a fold
NAMED_ONLY_COLUMNS = ("fold",)


def _select_rows(ds, config: str, dataset, conditions: list[str] | None, formats: list[str] | None) -> list[int]:
    """Indices of the rows ``conditions`` and ``formats`` select (see :func:`load_items`); ``fold=K`` selects the
    items of fold K (the preference judge config's ``fold``: one cross-fitted judge answers its held-out fold)."""
    import numpy as np

    columns = _selector_columns(ds)
    values = {name: sorted({str(v) for v in col if v is not None}) for name, col in columns.items()}

    def listing() -> str:
        shown = [f"{name}: {', '.join(v)}" for name, v in values.items() if v]
        return "; ".join(shown) if shown else "none (this config has no column to select on)"

    wanted = _wanted_values(conditions, values, config, dataset, listing)
    keep = np.ones(len(ds), dtype=bool)
    for column, allowed in wanted.items():
        keep &= np.array([v is not None and str(v) in allowed for v in columns[column]], dtype=bool)
    if formats:
        keep &= _format_mask(ds, config, dataset, formats)
    if (conditions or formats) and not keep.any():
        chosen = "; ".join(f"{c} in {sorted(v)}" for c, v in wanted.items())
        chosen += ("; " if chosen and formats else "") + (f"format in {list(formats)}" if formats else "")
        raise InputError(f"no items in config '{config}' with {chosen} (each value exists, but no item has them "
                         f"all); valid values: {listing()}", file=dataset)
    return np.flatnonzero(keep).tolist()


def _selector_columns(ds) -> dict:
    """The columns a row can be selected on (``condition``: a row's condition, else its task), as arrays."""
    import numpy as np

    columns: dict[str, np.ndarray] = {}
    for name in SELECTOR_COLUMNS:
        if name == "condition" and ("condition" in ds.column_names or "task" in ds.column_names):
            cond = ds["condition"] if "condition" in ds.column_names else [None] * len(ds)
            task = ds["task"] if "task" in ds.column_names else [None] * len(ds)
            columns[name] = np.array([c or t for c, t in zip(cond, task, strict=True)], dtype=object)
        elif name != "condition" and name in ds.column_names:
            columns[name] = np.array(ds[name], dtype=object)
    for name in NAMED_ONLY_COLUMNS:
        if name in ds.column_names:
            columns[name] = np.array(ds[name], dtype=object)
    return columns


def _wanted_values(conditions: list[str] | None, values: dict[str, list[str]], config: str, dataset,
                   listing) -> dict[str, set[str]]:
    """column -> the values ``conditions`` select (``column=value``, or a bare value found in one column). A value
    no column has is refused when nothing else is selected, else ignored with a warning (e.g. ``run-protocols``
    passes every config the values of all of them)."""
    wanted: dict[str, set[str]] = {}
    absent: list[str] = []
    column: str | None
    for raw in conditions or ():
        value = str(raw).strip()
        column, sep, rest = value.partition("=")
        if sep and column in SELECTOR_COLUMNS + NAMED_ONLY_COLUMNS + ("task",):
            column, value = ("condition" if column == "task" else column), rest.strip()
            if column in NAMED_ONLY_COLUMNS and value not in values.get(column, ()):  # a fold the config lacks
                have = ", ".join(values.get(column, ())) or f"none (config '{config}' has no {column} column)"
                raise InputError(f"--conditions / --folds: {column} {value!r} is not in config '{config}'; its "
                                 f"{column}s: {have}", file=dataset)
            column = column if value in values.get(column, ()) else None
        else:
            column = next((c for c in values if c not in NAMED_ONLY_COLUMNS and value in values[c]), None)
        if column is None:
            absent.append(str(raw))
        else:
            wanted.setdefault(column, set()).add(value)
    if absent and not wanted:
        raise InputError(f"--conditions: {', '.join(repr(a) for a in absent)} "
                         f"{'is not a value' if len(absent) == 1 else 'are not values'} config '{config}' can be "
                         f"selected on; valid values: {listing()}", file=dataset)
    if absent:
        import warnings

        warnings.warn(f"--conditions: {', '.join(repr(a) for a in absent)} not in config '{config}', ignored "
                      f"(valid values: {listing()})", UserWarning, stacklevel=4)
    return wanted


def _format_mask(ds, config: str, dataset, formats: list[str]):
    """The rows of the pairwise ``formats`` asked for (a format the config lacks is refused, naming the valid ones)."""
    import numpy as np

    if "format" not in ds.column_names:
        raise InputError(f"--formats: config '{config}' has no 'format' column (formats belong to the protocols' "
                         f"pairwise config)", file=dataset)
    fmt = np.array(ds["format"], dtype=object)
    known = sorted({str(v) for v in fmt if v is not None})
    unknown = [f for f in formats if f not in known]
    if unknown:
        raise InputError(f"--formats: config '{config}' has no format {unknown}; valid values: "
                         f"{', '.join(known)}", file=dataset)
    return np.isin(fmt, list(formats))


def check_modalities(items: list[JudgeItem], runner: str, accepts: set[str] | frozenset[str]) -> None:
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


def parse_answer(raw: str, options: list[str], question: str | None = None) -> str | None:
    """The option a free-form answer names, or None: no option, several, or doubt (a negated, hedged, reversed or
    conflicting choice); ``question`` (the item's prompt, of which only the question sentence is read) lets a
    statement in its own comparative words answer it. :func:`omniaudit.runners.reading.read_answer` also
    says why; the rules are in :mod:`omniaudit.runners.reading`."""
    from omniaudit.runners.reading import parse_answer as read

    return read(raw, options, question)
