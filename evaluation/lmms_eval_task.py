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
  ``aggregate_answered``: its aggregate, the share of documents answered (non-empty text, or scored options).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
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
    """Per document: what omniaudit needs to rebuild its predictions row, under the metric ``omniaudit``."""
    task = _task()
    record = {"id": doc["id"], "order": doc.get("order"), "options": list(doc.get("options") or []),
              "prompt": doc["prompt"], **{k: task[k] for k in ("task", "dataset", "config", "fingerprint", "items",
                                                              "omniaudit")}}
    if task["output_type"] == "multiple_choice":  # one (log-likelihood, is_greedy) per option
        record["option_logliks"] = [float(r[0]) for r in results]
    else:
        record["response"] = results[0] if results else ""
    return {"omniaudit": record}


def aggregate_answered(records) -> float:
    """The share of documents answered: non-empty text, or options scored."""
    if not records:
        return 0.0
    answered = sum(bool(str(r.get("response") or "").strip()) or bool(r.get("option_logliks")) for r in records)
    return answered / len(records)
