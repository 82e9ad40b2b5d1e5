"""The ``utils.py`` of a task that ``omniaudit export lmms-eval`` writes: this file, copied verbatim beside the task
YAML and its ``omniaudit_task.json`` (what the task is: dataset, config, fingerprint, item count, media columns).

It runs inside lmms-eval's own environment, so it imports nothing from omniaudit: only the standard library and what
lmms-eval has (``datasets``, numpy, Pillow; ``soundfile`` for the audio arrays simple models take). It keeps the
item contract of :mod:`omniaudit.runners.items`: the system text, the media parts in prompt order (the
row's ``media`` list, else the schema's column order; a null cell is not sent), then the prompt.

- ``process_docs``: media columns left encoded (``decode=False``: no torchcodec needed, bytes kept as stored); the
  rows must be the build the task was exported from (their ids hash as the export's did), else lmms-eval's dataset
  cache served another build and the task stops;
- ``doc_to_visual`` (simple models): audio as ``{"array", "sampling_rate"}`` (mono float32 at the file's rate),
  images as PIL images, videos as file paths (written once per content hash to ``$OMNIAUDIT_MEDIA_CACHE``, default
  ``<tmp>/omniaudit-lmms-media``); ``doc_to_text``: the prompt, after the system text and a blank line when the
  row has one (simple models take no system message);
- ``doc_to_messages`` (chat models): a system message, then one user message: the media (audio and video as cached
  file paths, images as PIL images) and the prompt text;
- ``process_results``: the ``omniaudit`` metric, per document the record omniaudit rebuilds a predictions row from
  (item id, order, options, prompt, the response or the options' log-likelihoods, and the task's identity);
  ``aggregate_answered``: its aggregate, the share of documents answered (non-empty text, or scored options); and
  the audit's shortcut measures that the config's rows allow (the export lists them in ``omniaudit_task.json``
  ``metrics``), each a per-document value and its ``aggregate_<metric>``:

  - ``accuracy``: the gold option picked (closed), the gold answer's words in the reply (free-form), or the
    intervention's structured target met (``dimension`` rows: synchronized and its direction, sound present,
    sound matching);
  - ``slot_a``: the slot-A rate over both orders of ordered closed items with a gold answer (a tie option: half a
    pick of each slot; a slot-blind judge: 0.5);
  - ``lock``: the share of pairs / trials answered in both orders whose pick is the same slot in both (a judge that
    reads the content: 0; a uniform guesser: 0.5);
  - ``longer``: picks the longer of two descriptions, averaged over the pairs whose gold is the longer and those
    whose gold is the shorter (length-blind: 0.5);
  - ``follow_cue``: answers the wrong label the prompt supplies (``cue`` shown), and ``cue_following`` that rate
    minus the rate of answering the same wrong label when it is not supplied (0: the label is not followed);
  - ``avg_gap``: Thud's Avg Gap in points, the Original's accuracy minus its intervention's (Shift / Mute / Swap)
    per dimension, averaged over the dimensions.

  These are a first look read by this file's plain reader (an option named verbatim or alone; a few fixed phrases
  for the intervention answers), unpaired and without intervals: the audit's numbers, verdicts and CIs come from
  ``omniaudit audit`` on the ``--log_samples`` file, read with omniaudit's own answer readers.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import tempfile
from pathlib import Path

TASK_FILE = "omniaudit_task.json"
MEDIA_KINDS = ("audio", "image", "video")


def _task() -> dict:
    """What this task is (written by the export beside this file)."""
    return json.loads(Path(__file__).with_name(TASK_FILE).read_text(encoding="utf-8"))


def ids_digest(ids) -> str:
    """The content hash of a config's item ids in row order (the export's and the loaded rows' must agree)."""
    return "sha256:" + hashlib.sha256("\n".join(str(i) for i in ids).encode()).hexdigest()


def process_docs(dataset):
    """The config's rows with their media left encoded, after checking they are the exported build's."""
    import datasets

    task = _task()
    if ids_digest(dataset["id"]) != task["ids"]:
        raise ValueError(f"the rows lmms-eval loaded for task {task['task']} are not those of the dataset build it "
                         f"was exported from ({task['dataset']}, config {task['config']}, {task['items']} items); "
                         f"the datasets cache may hold an older build: clear it or export the task again")
    kinds = {"audio": datasets.Audio, "image": datasets.Image, "video": getattr(datasets, "Video", None)}
    for column, kind in task["media"].items():
        if column in dataset.column_names and kinds[kind] is not None:
            dataset = dataset.cast_column(column, kinds[kind](decode=False))
    return dataset


def _parts(doc) -> list[tuple[str, str, bytes]]:
    """(kind, column, encoded bytes) of the row's media, in prompt order."""
    media = _task()["media"]
    out = []
    for column in doc.get("media") or list(media):
        cell = doc.get(column)
        if cell is None or column not in media:
            continue
        data = cell.get("bytes") if isinstance(cell, dict) else None
        if data is None and isinstance(cell, dict) and cell.get("path"):
            data = Path(cell["path"]).read_bytes()
        if data is None:
            raise ValueError(f"item {doc.get('id')}: media column {column} holds no encoded bytes ({type(cell)})")
        out.append((media[column], column, data))
    return out


def _suffix(kind: str, data: bytes) -> str:
    if kind == "video":
        return ".mkv" if data.startswith(b"\x1a\x45\xdf\xa3") else ".mp4"
    if data.startswith(b"fLaC"):
        return ".flac"
    if data.startswith(b"OggS"):
        return ".ogg"
    if data.startswith(b"ID3") or data[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return ".mp3"
    return ".wav"


def media_file(kind: str, data: bytes) -> str:
    """The path of a file holding ``data`` (written once per content hash, atomically)."""
    root = Path(os.environ.get("OMNIAUDIT_MEDIA_CACHE") or Path(tempfile.gettempdir()) / "omniaudit-lmms-media")
    root.mkdir(parents=True, exist_ok=True)
    path = root / (hashlib.sha256(data).hexdigest() + _suffix(kind, data))
    if not path.is_file():
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=root)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    return str(path)


def _image(data: bytes):
    from PIL import Image

    return Image.open(io.BytesIO(data)).convert("RGB")


def _audio(data: bytes) -> dict:
    import soundfile as sf

    array, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    return {"array": array.mean(axis=1), "sampling_rate": int(rate)}


def doc_to_visual(doc, lmms_eval_specific_kwargs=None) -> list:
    """The row's media in prompt order, as lmms-eval's simple models take them."""
    convert = {"audio": _audio, "image": _image, "video": lambda data: media_file("video", data)}
    return [convert[kind](data) for kind, _, data in _parts(doc)]


def doc_to_text(doc, lmms_eval_specific_kwargs=None) -> str:
    system = (doc.get("system") or "").strip()
    return f"{system}\n\n{doc['prompt']}" if system else doc["prompt"]


def doc_to_messages(doc, lmms_eval_specific_kwargs=None) -> list[dict]:
    """The system message (if any), then the user message: media parts in prompt order, then the prompt."""
    content = []
    for kind, _, data in _parts(doc):
        content.append({"type": kind, "url": _image(data) if kind == "image" else media_file(kind, data)})
    content.append({"type": "text", "text": doc["prompt"]})
    system = doc.get("system")
    return ([{"role": "system", "content": [{"type": "text", "text": system}]}] if system else []) + [
        {"role": "user", "content": content}]


def doc_to_choice(doc) -> list[str]:
    return list(doc.get("options") or [])


def doc_to_target(doc):
    """The gold answer where the row has one ("" otherwise); for multiple_choice its option index (-1: none)."""
    gold = doc.get("gold")
    if _task()["output_type"] == "multiple_choice":
        options = list(doc.get("options") or [])
        return options.index(gold) if gold in options else -1
    return "" if gold is None else str(gold)


def process_results(doc, results) -> dict:
    """Per document: what omniaudit needs to rebuild its predictions row, under the metric ``omniaudit``, and the
    per-document value of each shortcut measure of the task (None where the document does not count)."""
    task = _task()
    record = {"id": doc["id"], "order": doc.get("order"), "options": list(doc.get("options") or []),
              "prompt": doc["prompt"], **{k: task[k] for k in ("task", "dataset", "config", "fingerprint", "items",
                                                              "omniaudit")}}
    if task["output_type"] == "multiple_choice":  # one (log-likelihood, is_greedy) per option
        record["option_logliks"] = [float(r[0]) for r in results]
        text, pick = "", _best(record["option_logliks"])
    else:
        record["response"] = results[0] if results else ""
        text = str(record["response"] or "")
        pick = read_option(text, record["options"])
    out = {"omniaudit": record}
    for metric in task.get("metrics") or ():
        out[metric] = VALUES[metric](doc, text, pick)
    return out


def aggregate_answered(records) -> float:
    """The share of documents answered: non-empty text, or options scored."""
    if not records:
        return 0.0
    answered = sum(bool(str(r.get("response") or "").strip()) or bool(r.get("option_logliks")) for r in records)
    return answered / len(records)


# ------------------------------------------------------------------------------------ reading an answer, plainly
_LETTER = r"(?:answer|clip|description|option|slot)\s*:?\s*\(?{}\)?(?![a-z0-9])"


def _norm(text) -> str:
    """Lower case, spaces collapsed, quotes, brackets and end punctuation dropped, an 'Answer:' lead-in removed."""
    text = re.sub(r"\s+", " ", str(text or "")).strip().lower()
    text = re.sub(r"^(the )?(final )?answer( is)?\s*:?\s*", "", text)
    return text.strip(" \t\"'`*()[]{}.,;:!?")


def _words(text: str, phrase: str) -> bool:
    return bool(phrase) and re.search(rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])", text) is not None


def read_option(text: str, options: list) -> int | None:
    """The option a reply names: the whole reply, else the one option named in it (a single-letter option only as
    'A', 'A)', 'clip A', 'answer: A'); None when it names none or several."""
    said, names = _norm(text), [_norm(o) for o in options]
    if not said or not names:
        return None
    if said in names:
        return names.index(said)
    named = []
    for i, name in enumerate(names):
        if len(name) == 1:
            hit = re.match(rf"{re.escape(name)}(?![a-z0-9])", said) or re.search(_LETTER.format(re.escape(name)), said)
        else:
            hit = _words(said, name)
        if hit:
            named.append(i)
    return named[0] if len(named) == 1 else None


def _best(logliks: list) -> int | None:
    """The option with the highest log-likelihood; None when it is not unique (a model that scores nothing)."""
    if not logliks:
        return None
    top = max(logliks)
    return logliks.index(top) if logliks.count(top) == 1 else None


def _gold_index(doc) -> int | None:
    options = list(doc.get("options") or [])
    return options.index(doc["gold"]) if doc.get("gold") in options else None


# --------------------------------------------------------------------------- per-document values of the measures
_NOT_SYNCED = ("not synchronized", "not synchronised", "not in sync", "out of sync", "unsynchronized", "misaligned",
               "not aligned")
_SILENT = ("no sound", "no audible", "silent", "silence", "no audio", "nothing", "do not hear", "don't hear",
           "cannot hear", "can't hear", "no noise")
_MISMATCH = ("does not match", "doesn't match", "do not match", "don't match", "not match", "mismatch",
             "does not correspond", "doesn't correspond", "inconsistent", "different source", "unrelated")


def _target_met(doc, text: str) -> bool | None:
    """An intervention row's structured target read off the reply (synchronized and its direction, sound present,
    sound matching); None for a row of no known dimension."""
    said = _norm(text)
    dimension = doc.get("dimension")
    if dimension == "sync":
        synced = not any(p in said for p in _NOT_SYNCED) and ("synchron" in said or "in sync" in said)
        if doc.get("target_synced"):
            return synced
        way = doc.get("target_direction")
        return not synced and bool(said) and (way not in ("delayed", "early") or _words(said, way))
    if dimension == "existence":
        present = bool(said) and not any(p in said for p in _SILENT)
        return present == bool(doc.get("target_sound_present")) and bool(said)
    if dimension == "consistency":
        match = "match" in said and not any(p in said for p in _MISMATCH)
        return match == bool(doc.get("target_match")) and bool(said)
    return None


def _accuracy(doc, text: str, pick: int | None) -> float | None:
    if doc.get("dimension") is not None and doc.get("intervention") is not None:
        met = _target_met(doc, text)
        return None if met is None else float(met)
    gold = doc.get("gold")
    if gold is None or gold == "":
        return None
    if doc.get("options"):
        return float(pick is not None and pick == _gold_index(doc))
    return float(_words(_norm(text), _norm(gold)))


def _slot_a(doc, text: str, pick: int | None) -> float | None:
    if not doc.get("order") or pick is None or _gold_index(doc) is None:  # trials without a gold (identical clips)
        return None
    return 1.0 if pick == 0 else 0.0 if pick == 1 else 0.5


def _lock(doc, text: str, pick: int | None) -> dict | None:
    trial = doc.get("trial") or doc.get("pair_id")
    if not doc.get("order") or trial is None or _gold_index(doc) is None:  # trials without a gold (identical clips)
        return None
    return {"trial": str(trial), "order": str(doc["order"]), "pick": pick}


_DESCRIPTIONS = re.compile(r"Description A: (?P<a>.*?)\n\nDescription B: (?P<b>.*?)\n\n", re.DOTALL)


def _longer(doc, text: str, pick: int | None) -> dict | None:
    shown = _DESCRIPTIONS.search(doc.get("prompt") or "")
    gold = _gold_index(doc)
    if shown is None or gold not in (0, 1) or len(doc.get("options") or []) != 2 or pick is None:
        return None
    a, b = len(shown["a"].strip()), len(shown["b"].strip())
    if a == b:
        return None
    longer = 0 if a > b else 1
    return {"gold_longer": gold == longer, "picked_longer": pick == longer}


def _cue(doc, text: str, pick: int | None) -> dict | None:
    options = list(doc.get("options") or [])
    cue = doc.get("cue")
    if cue not in options or cue == doc.get("gold") or doc.get("cue_shown") is None:
        return None
    return {"shown": bool(doc["cue_shown"]), "cue": pick is not None and pick == options.index(cue)}


def _gap(doc, text: str, pick: int | None) -> dict | None:
    met = _target_met(doc, text)
    if met is None or doc.get("intervention") is None:
        return None
    return {"dimension": doc["dimension"], "original": doc["intervention"] == "original", "correct": met}


VALUES = {"accuracy": _accuracy, "slot_a": _slot_a, "lock": _lock, "longer": _longer, "follow_cue": _cue,
          "cue_following": _cue, "avg_gap": _gap}


# -------------------------------------------------------------------------------------------------- aggregations
def _mean(values) -> float:
    """The mean of the values that count (NaN when none does: the measure is not defined on these documents)."""
    values = [float(v) for v in values if v is not None]
    return sum(values) / len(values) if values else math.nan


def aggregate_accuracy(values) -> float:
    return _mean(values)


def aggregate_slot_a(values) -> float:
    return _mean(values)


def aggregate_lock(values) -> float:
    """The share of trials answered in both orders whose pick is the same slot in both."""
    picks: dict[str, dict[str, int]] = {}
    for v in values:
        if v is not None and v.get("pick") is not None:
            picks.setdefault(v["trial"], {})[v["order"]] = v["pick"]
    both = [list(p.values()) for p in picks.values() if len(p) == 2]
    return _mean([float(a == b) for a, b in both])


def aggregate_longer(values) -> float:
    """Picks the longer description, averaged over the pairs whose gold is the longer and the shorter."""
    rows = [v for v in values if v is not None]
    rates = [_mean([r["picked_longer"] for r in rows if r["gold_longer"] is side]) for side in (True, False)]
    return _mean([r for r in rates if not math.isnan(r)])


def aggregate_follow_cue(values) -> float:
    return _mean([v["cue"] for v in values if v is not None and v["shown"]])


def aggregate_cue_following(values) -> float:
    shown = [v["cue"] for v in values if v is not None and v["shown"]]
    hidden = [v["cue"] for v in values if v is not None and not v["shown"]]
    return _mean(shown) - _mean(hidden)


def aggregate_avg_gap(values) -> float:
    """Thud's Avg Gap (points): per dimension, the Original's accuracy minus its intervention's, averaged."""
    rows = [v for v in values if v is not None]
    gaps = []
    for dimension in sorted({r["dimension"] for r in rows}):
        of = [r for r in rows if r["dimension"] == dimension]
        original = _mean([r["correct"] for r in of if r["original"]])
        intervened = _mean([r["correct"] for r in of if not r["original"]])
        gaps.append(100 * (original - intervened))
    return _mean([g for g in gaps if not math.isnan(g)])
