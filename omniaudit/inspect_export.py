"""Export a dataset's item configs as Inspect tasks: ``omniaudit export inspect``.

One folder, runnable by ``inspect eval`` anywhere Inspect is installed (the task file imports nothing from
omniaudit)::

    OUT/<name>.py              the task file: :mod:`omniaudit.inspect_task`'s code, then one @task per config
    OUT/omniaudit_inspect.json each task's identity (dataset, config, fingerprint, items, ids digest) and its
                               generation settings (temperature, max_tokens, top_p)
    OUT/samples/<config>.jsonl one item per line, as omniaudit's runners get it (id, system, prompt, media files in
                               prompt order, options, order, the scored labels)
    OUT/media/<sha256>.<ext>   each media input once, named by the content hash of the bytes sent

Media go as Inspect content parts where Inspect has one: audio as WAV or MP3 (``ContentAudio`` takes only those:
FLAC, OGG and other audio is decoded and written as WAV at the same sample rate and sample format, lossless for
16- and 24-bit PCM, so a model hears the same samples), images as they are stored (PNG, JPEG, GIF, WebP; any
other format re-encoded as PNG), videos as MP4, MOV or MPEG (``ContentVideo``); a video in another container
(Matroska / WebM) is refused, naming the item. Run and audit::

    omniaudit export inspect --dataset data/probes --audit protocols --out tasks/probes
    inspect eval tasks/probes/omniaudit_probes.py --model omniaudit/hf:Qwen/Qwen2.5-Omni-7B --log-dir logs
    omniaudit import inspect logs/<date>_omniaudit-probes-pairwise_<id>.eval --out preds/pairwise.jsonl
    omniaudit audit protocols --dataset data/probes --predictions qwen=preds/pairwise.jsonl ...
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omniaudit import __version__
from omniaudit.errors import InputError
from omniaudit.runners.items import JudgeItem, MediaPart

INFO_FILE = "omniaudit_inspect.json"  # omniaudit.inspect_task.INFO_FILE
_LOSSLESS_WAV = ("PCM_16", "PCM_24", "PCM_32", "FLOAT", "DOUBLE")  # sample formats a WAV file keeps as they are


@dataclass(frozen=True)
class InspectExportOptions:
    name: str | None = None  # the task file's name and the tasks' prefix (default omniaudit_<dataset name>)
    max_tokens: int = 32
    temperature: float = 0.0
    top_p: float | None = None


@dataclass(frozen=True)
class ExportedInspectTask:
    task: str
    config: str
    items: int
    fingerprint: str | None
    file: Path  # the task file, relative to the export folder


def video_format(data: bytes) -> str | None:
    """The ``ContentVideo`` format of a video's bytes (``mp4``, ``mov``, ``mpeg``), None for another container."""
    if data[4:8] == b"ftyp":
        return "mov" if data[8:12] == b"qt  " else "mp4"
    if data[:4] in (b"\x00\x00\x01\xba", b"\x00\x00\x01\xb3"):
        return "mpeg"
    return None


def _audio(data: bytes) -> tuple[bytes, str]:
    """Audio as Inspect takes it: WAV or MP3 as stored, anything else decoded and written as WAV."""
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return data, "wav"
    if data[:3] == b"ID3" or data[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return data, "mp3"
    import soundfile as sf

    info = sf.info(io.BytesIO(data))
    samples, rate = sf.read(io.BytesIO(data), dtype="float64", always_2d=True)
    out = io.BytesIO()
    sf.write(out, samples, rate, format="WAV", subtype=info.subtype if info.subtype in _LOSSLESS_WAV else "PCM_16")
    return out.getvalue(), "wav"


def _image(data: bytes) -> tuple[bytes, str]:
    for magic, ext in ((b"\x89PNG", "png"), (b"\xff\xd8", "jpg"), (b"GIF8", "gif")):
        if data.startswith(magic):
            return data, ext
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return data, "webp"
    from PIL import Image

    out = io.BytesIO()
    Image.open(io.BytesIO(data)).save(out, format="PNG")
    return out.getvalue(), "png"


def media_entry(item: JudgeItem, part: MediaPart, root: Path) -> dict[str, Any]:
    """Write one media input under ``root/media/`` (once per content) and describe it for the samples file."""
    if part.kind == "audio":
        data, fmt = _audio(part.data)
        ext = fmt
    elif part.kind == "image":
        data, ext = _image(part.data)
        fmt = ext
    else:
        found = video_format(part.data)
        if found is None:
            raise InputError(f"item '{item.id}': its video ({part.column}) is not MP4, MOV or MPEG, the containers "
                             f"Inspect's ContentVideo takes (remux it to MP4, e.g. ffmpeg -i IN -c copy OUT.mp4)")
        data, fmt, ext = part.data, found, found
    name = f"media/{hashlib.sha256(data).hexdigest()}.{ext}"
    if not (root / name).is_file():
        (root / "media").mkdir(exist_ok=True)
        (root / name).write_bytes(data)
    return {"kind": part.kind, "file": name, "format": fmt, "column": part.column, "with_audio": part.with_audio}


def item_record(item: JudgeItem, root: Path) -> dict[str, Any]:
    """One line of ``samples/<config>.jsonl``: the item as omniaudit's runners get it, media as files."""
    return {"id": item.id, "system": item.system, "prompt": item.prompt, "options": list(item.options),
            "order": item.order, "gold": item.gold, "reference": item.reference, "specialist": item.specialist,
            "condition": item.condition, "media": [media_entry(item, part, root) for part in item.media]}


def _identity(dataset: str | Path, config: str, task: str, items: list[JudgeItem],
              options: InspectExportOptions) -> dict[str, Any]:
    from omniaudit.data_builders.fingerprint import fingerprint_of
    from omniaudit.records import local_name

    ids = "sha256:" + hashlib.sha256("\n".join(i.id for i in items).encode()).hexdigest()
    generate: dict[str, Any] = {"temperature": options.temperature, "max_tokens": options.max_tokens}
    if options.top_p is not None:
        generate["top_p"] = options.top_p
    return {"task": task, "dataset": local_name(dataset), "config": config,
            "fingerprint": fingerprint_of(dataset, config), "items": len(items), "ids": ids, "omniaudit": __version__,
            "generate": generate}


def _stub(info: dict[str, Any]) -> str:
    name = info["task"]
    return (f"\n\n@task\ndef {name}() -> Task:\n    \"\"\"Config '{info['config']}' of {info['dataset']} "
            f"({info['fingerprint'] or 'fingerprint unknown'}), {info['items']} items.\"\"\"\n"
            f"    return omniaudit_task({name!r})\n")


def task_file_text(infos: list[dict[str, Any]], audit: str | None) -> str:
    """The task file: a header saying how to run and audit it, the template's code, one ``@task`` per config."""
    template = Path(__file__).with_name("inspect_task.py").read_text(encoding="utf-8")  # not imported: no inspect_ai
    header = (f"# Written by `omniaudit export inspect` (omniaudit {__version__}): {len(infos)} task(s) of "
              f"{infos[0]['dataset']}.\n"
              "# Run:   inspect eval THIS_FILE --model omniaudit/SPEC (or any Inspect model) --log-dir logs\n"
              f"# Audit: omniaudit import inspect LOG --out FILE, then omniaudit audit {audit or 'AUDIT'} --dataset "
              "DATASET --predictions NAME=FILE\n")
    template = template.replace("from inspect_ai import Task\n", "from inspect_ai import Task, task\n", 1)
    return header + template + "".join(_stub(i) for i in infos)


def export_config(dataset: str | Path, config: str, root: Path, prefix: str,
                  options: InspectExportOptions) -> dict[str, Any]:
    """Write ``root/samples/<config>.jsonl`` and the media of one config; its task identity."""
    from omniaudit.evaluation.lmms_eval_export import slug
    from omniaudit.runners.items import load_items

    items = load_items(dataset, config)
    info = _identity(dataset, config, f"{prefix}_{slug(config)}", items, options)
    (root / "samples").mkdir(exist_ok=True)
    with (root / "samples" / f"{config}.jsonl").open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(item_record(item, root), ensure_ascii=False) + "\n")
    return info


def export_inspect(dataset: str | Path, out: str | Path, configs: list[str] | None = None, audit: str | None = None,
                   options: InspectExportOptions = InspectExportOptions()) -> list[ExportedInspectTask]:
    """Export ``configs`` of ``dataset`` (default: every item config of ``audit``) as Inspect tasks in the folder
    ``out`` (see the module docstring; written atomically: :func:`omniaudit.io.atomic_dir`)."""
    from omniaudit.audits import get
    from omniaudit.evaluation.lmms_eval_export import slug
    from omniaudit.io import atomic_dir
    from omniaudit.records import local_name

    known = tuple(get(audit).item_configs) if audit else None
    configs = list(dict.fromkeys(configs or known or ()))
    if not configs:
        raise InputError("give the configs to export (--config), or the audit whose item configs to export (--audit)")
    other = [c for c in configs if known and c not in known]
    if other:
        raise InputError(f"audit '{audit}' reads configs {', '.join(known or ())}, not {', '.join(other)}")
    prefix = slug(options.name or f"omniaudit_{slug(local_name(dataset))}")
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", prefix):
        prefix = f"omniaudit_{prefix}"  # a Python name: the task functions are named after it
    names = [f"{prefix}_{slug(c)}" for c in configs]
    if len(set(names)) < len(names):
        raise InputError("two configs give the same task name; export them separately or set --name")
    with atomic_dir(out) as tmp:
        infos = [export_config(dataset, config, tmp, prefix, options) for config in configs]
        (tmp / INFO_FILE).write_text(json.dumps({"omniaudit": __version__, "tasks": {i["task"]: i for i in infos}},
                                                indent=2) + "\n", encoding="utf-8")
        (tmp / f"{prefix}.py").write_text(task_file_text(infos, audit), encoding="utf-8")
    return [ExportedInspectTask(i["task"], i["config"], i["items"], i["fingerprint"], Path(f"{prefix}.py"))
            for i in infos]
