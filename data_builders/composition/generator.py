"""Import C3PO's generator output (the paper's generation JSON, Appendix) into the samples schema.

Input: a ``.json`` file holding one generated sample, a list of them or ``{"samples": [...]}``, or a ``.jsonl``
file with one per line. Each is the generator's object: ``sample_id``, ``template_id``, ``template_name``,
``template_selection_rationale``, ``base_modality`` (``type`` video / audio / image, ``source_file``,
``content_summary``, ``processing_action``), ``generated_components`` (``audio``: ``transcript`` and
``voice_style_prompt``, or null; ``text``: ``content``, the question; ``image``: a caption, or null),
``ground_truth`` (``answer``, ``evidence_modality``, ``timestamp_evidence``) and ``self_audit`` (the four
``*_passed`` flags), plus ``generation_confidence_score`` (1-5; else read from the rationale's ``#### <SCORE> ####``
marker). A rationale saying "THIS BASE MEDIA DOES NOT FIT THE GIVEN LOGIC" marks the sample ``base_media_fits``
false (never selected).

The media are inputs the user supplies; nothing is synthesised here. Each file is looked for in order: an explicit
path in the object (``base_modality.source_file``; ``generated_components.audio.file``, ``.image_file`` or a
top-level ``media: {audio, image}``), then in ``media`` (the folder given): the source file's path and name, and
``<sample_id>.<ext>`` / ``<sample_id>_audio.<ext>`` / ``<sample_id>_image.<ext>`` for the generated audio and
image; relative paths are also tried beside the JSON file. A missing file fails naming the JSON file, the sample,
the field, the paths tried and the step that makes it: the prepared base media (the template's
``processing_action`` applied), the speech (Qwen3-TTS VoiceDesign: ``transcript`` -> text,
``voice_style_prompt`` -> instruct) or sound effect (AudioLDM2 from the sanitised prompt, when the transcript is
empty or a placeholder), and the image (a text-to-image model from the caption). A video whose
``processing_action`` mutes or removes its audio must come without a soundtrack; one that retains its original
audio must have one.

Category: a ``category`` field, else the paper's template id (``D_T<k>_<n>``: IC, ``C_T<k>_<n>``: CC), else a
template the paper names; tier: a ``tier`` field, else the id's ``T<k>``, else the grounded streams the media give.
The auditor's pass (decision, difficulty) comes from an ``auditor`` object in the sample (the paper's auditor
JSON), top-level ``auditor_decision`` / ``difficulty``, or a separate file of auditor answers keyed by
``sample_id``; samples without one can be written for ``omniaudit composition-auditor``.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from pathlib import Path

from omniaudit.data_builders.composition.samples import KNOWN_TEMPLATES, PAPER_TEMPLATE_ID
from omniaudit.errors import InputError
from omniaudit.io import atomic_file

AUDIO_EXT = (".wav", ".flac", ".mp3", ".ogg")
IMAGE_EXT = (".png", ".jpg", ".jpeg", ".webp")
_SCORE = re.compile(r"#{2,}\s*([1-5])\s*#{2,}")
MISFIT = "THIS BASE MEDIA DOES NOT FIT THE GIVEN LOGIC"
_PLACEHOLDER = re.compile(r"^\s*(?:\[[^\]]*\]|null|none|n/?a)?\s*$", re.I)
_MUTED = re.compile(r"\b(?:mute|muted|remove|removed|strip|stripped|discard|drop|silence)\w*\b.{0,40}\baudio\b",
                    re.I)
_RETAIN = re.compile(r"\bretain\w*\b.{0,20}\baudio\b", re.I)
STEPS = {"base": "the prepared base media (the template's processing_action applied to the source file)",
         "speech": "the speech (Qwen3-TTS VoiceDesign: transcript -> text, voice_style_prompt -> instruct)",
         "sfx": "the sound effect (AudioLDM2 from the sanitised sound prompt; the transcript is empty)",
         "image": "the image (a text-to-image model from generated_components.image, the caption)"}


def read_objects(path: str | Path) -> list[tuple[int, dict]]:
    """``(row, object)`` per generated sample: row is the 1-based line of a JSONL file or position in a JSON list."""
    path = Path(path)
    if not path.is_file():
        raise InputError("generator file not found", file=path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        out = []
        for k, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append((k, json.loads(line)))
                except ValueError as exc:
                    raise InputError(f"not JSON: {exc}", file=path, row=k) from None
    else:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InputError(f"not JSON: {exc}", file=path) from None
        data = data.get("samples", data) if isinstance(data, dict) and "sample_id" not in data else data
        out = list(enumerate(data if isinstance(data, list) else [data], 1))
    if not out:
        raise InputError("no generated samples", file=path)
    for row, obj in out:
        if not isinstance(obj, dict):
            raise InputError("expected a generated sample (a JSON object)", file=path, row=row)
    return out


def _field(obj: dict, dotted: str, path: Path, row: int, required: bool = True):
    value = obj
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    if required and (value is None or (isinstance(value, str) and not value.strip())):
        raise InputError(f"the generated sample has no {dotted}", file=path, row=row, column=dotted)
    return value.strip() if isinstance(value, str) else value


def _find(candidates: list[Path], path: Path, row: int, column: str, step: str, value) -> Path:
    for c in candidates:
        if c.is_file():
            return c.resolve()
    tried = ", ".join(dict.fromkeys(str(c) for c in candidates)) or "no path given and no --media folder"
    raise InputError(f"missing media file for {STEPS[step]}; tried {tried}. Make it and put it in the --media "
                     f"folder (or give its path in the JSON)", file=path, row=row, column=column, value=value)


def _places(name: str | None, path: Path, media: Path | None) -> list[Path]:
    if not name:
        return []
    p = Path(name)
    if p.is_absolute():
        return [p] + ([media / p.name] if media else [])
    return ([media / p, media / p.name] if media else []) + [path.parent / p]


def _by_id(sample_id: str, kind: str, media: Path | None) -> list[Path]:
    ext = AUDIO_EXT if kind == "audio" else IMAGE_EXT
    return [media / f"{sample_id}{suffix}{e}" for suffix in ("", f"_{kind}") for e in ext] if media else []


def _category(obj: dict, template_id: str, template_name: str, path: Path, row: int) -> str:
    if obj.get("category"):
        return str(obj["category"]).strip().upper()
    letter = re.match(PAPER_TEMPLATE_ID, template_id)
    if letter:
        return {"D": "IC", "C": "CC"}[letter.group(1)]
    if template_name in KNOWN_TEMPLATES:
        return KNOWN_TEMPLATES[template_name]
    raise InputError(f"cannot tell template {template_id} ({template_name}) is composition (IC) or counterfactual "
                     f"(CC): give a category field or a template id in the paper's D_T<k>_<n> / C_T<k>_<n> form",
                     file=path, row=row, column="category")


def _confidence(obj: dict, path: Path, row: int) -> int:
    raw = obj.get("generation_confidence_score", obj.get("generation_confidence"))
    if raw is None:
        found = _SCORE.search(str(obj.get("template_selection_rationale") or ""))
        raw = found.group(1) if found else None
    try:
        score = float(str(raw).strip())
    except ValueError:
        score = float("nan")
    if not (math.isfinite(score) and score == int(score) and 1 <= score <= 5):
        raise InputError("expected generation_confidence_score 1-5 (or the rationale's '#### <SCORE> ####' marker)",
                         file=path, row=row, column="generation_confidence_score", value=raw)
    return int(score)


def _auditor(obj: dict, results: dict[str, dict], sample_id: str) -> dict | None:
    from omniaudit.data_builders.composition.auditor import parse_audit

    given = obj.get("auditor") or results.get(sample_id)
    if given is not None:
        return parse_audit(json.dumps(given) if isinstance(given, dict) else given)
    if obj.get("auditor_decision") is not None and obj.get("difficulty") is not None:
        return parse_audit(json.dumps({"decision": obj["auditor_decision"], "difficulty_score": obj["difficulty"]}))
    return None


def read_auditor_results(path: str | Path) -> dict[str, dict]:
    """Auditor answers (the paper's auditor JSON, each with the ``sample_id`` it grades), keyed by sample id."""
    path = Path(path)
    out = {}
    for row, obj in read_objects(path):
        sid = obj.get("sample_id", obj.get("id"))
        if not sid:
            raise InputError("an auditor answer needs the sample_id it grades", file=path, row=row, column="sample_id")
        out[str(sid)] = obj
    return out


def _audio(obj: dict, sid: str, path: Path, row: int, media: Path | None) -> tuple[Path | None, dict]:
    audio = _field(obj, "generated_components.audio", path, row, required=False)
    if not isinstance(audio, dict) or not any(str(audio.get(k) or "").strip()
                                              for k in ("transcript", "voice_style_prompt")):
        return None, {}
    transcript = str(audio.get("transcript") or "")
    kind = str(audio.get("audio_type") or ("SFX" if _PLACEHOLDER.match(transcript) else "TTS")).upper()
    explicit = audio.get("file") or audio.get("path") or (obj.get("media") or {}).get("audio")
    found = _find(_places(explicit, path, media) + _by_id(sid, "audio", media), path, row,
                  "generated_components.audio", "sfx" if kind == "SFX" else "speech", explicit)
    return found, {"transcript": transcript, "voice_style_prompt": audio.get("voice_style_prompt"),
                   "audio_kind": "sound effect" if kind == "SFX" else "speech"}


def _image(obj: dict, sid: str, path: Path, row: int, media: Path | None) -> tuple[Path | None, dict]:
    caption = _field(obj, "generated_components.image", path, row, required=False)
    explicit = _field(obj, "generated_components.image_file", path, row, False) or (obj.get("media") or {}).get(
        "image")
    if isinstance(caption, dict):  # {"caption"/"description": ..., "file": ...}
        explicit = explicit or caption.get("file") or caption.get("path")
        caption = caption.get("caption") or caption.get("description")
    if not caption and not explicit:
        return None, {}
    found = _find(_places(explicit, path, media) + _by_id(sid, "image", media), path, row,
                  "generated_components.image", "image", explicit)
    return found, {"image_description": caption}


def _base(obj: dict, path: Path, row: int, media: Path | None) -> tuple[str, Path, dict]:
    kind = str(_field(obj, "base_modality.type", path, row)).lower()
    if kind not in ("video", "audio", "image"):
        raise InputError("expected base_modality.type video, audio or image", file=path, row=row,
                         column="base_modality.type", value=kind)
    source = _field(obj, "base_modality.source_file", path, row)
    found = _find(_places(source, path, media), path, row, "base_modality.source_file", "base", source)
    action = str(obj["base_modality"].get("processing_action") or "")
    if kind == "video" and (_MUTED.search(action) or _RETAIN.search(action)):
        from omniaudit.data_builders.composition.media_check import CHECKS, MediaProblem

        try:
            has_audio = CHECKS["video"](found)
        except MediaProblem as exc:
            raise InputError(f"video file {found}: {exc}", file=path, row=row, column="base_modality.source_file",
                             value=source) from exc
        if has_audio == bool(_MUTED.search(action)):
            raise InputError(f"processing_action '{action}' says the original audio is "
                             f"{'muted or removed' if has_audio else 'retained'}, but {found} "
                             f"{'still has a soundtrack' if has_audio else 'has no audio stream'}: supply the base "
                             f"media as prepared", file=path, row=row, column="base_modality.processing_action",
                             value=action)
    return kind, found, {"base_media_type": kind, "source_file": source, "processing_action": action or None,
                         "content_summary": obj["base_modality"].get("content_summary")}


def import_generator(path: str | Path, media: str | Path | None = None,
                     auditor_results: str | Path | None = None) -> list[dict]:
    """The generated samples as samples-schema records (media paths absolute; ``auditor_decision`` /
    ``difficulty`` None where no auditor answer is given); see the module docstring."""
    path = Path(path)
    media = Path(media) if media is not None else None
    if media is not None and not media.is_dir():
        raise InputError("the media folder does not exist", file=media)
    results = read_auditor_results(auditor_results) if auditor_results else {}
    records, seen = [], {}
    for row, obj in read_objects(path):
        sid = str(_field(obj, "sample_id", path, row))
        if sid in seen:
            raise InputError(f"duplicate sample_id (also at {seen[sid]})", file=path, row=row, column="sample_id",
                             value=sid)
        seen[sid] = row
        template_id, template_name = (str(_field(obj, k, path, row)) for k in ("template_id", "template_name"))
        kind, base, base_fields = _base(obj, path, row, media)
        audio, audio_fields = _audio(obj, sid, path, row, media)
        image, image_fields = _image(obj, sid, path, row, media)
        files = {"video": None, "audio": None, "image": None}
        files[kind] = str(base)
        for m, f in (("audio", audio), ("image", image)):
            if f is not None and files[m] is not None:
                raise InputError(f"the base media is an {m} and a generated {m} is given too: a sample holds one "
                                 f"{m}", file=path, row=row, column=f"generated_components.{m}")
            files[m] = str(f) if f is not None else files[m]
        letter = re.match(r"^[DC]_T(\d+)_\d+$", template_id)
        tier = obj.get("tier") or (int(letter.group(1)) if letter else None)
        audit = _auditor(obj, results, sid)
        if audit is None and (sid in results or obj.get("auditor")):
            raise InputError("the auditor answer for this sample is not the paper's auditor JSON (decision "
                             "ACCEPT/REJECT, difficulty_score 1-10 or -1)", file=auditor_results or path, row=row,
                             value=sid)
        rationale = str(obj.get("template_selection_rationale") or "")
        records.append({
            "id": sid, "template_id": template_id, "template_name": template_name,
            "category": _category(obj, template_id, template_name, path, row), "tier": tier, **files,
            "question": _field(obj, "generated_components.text.content", path, row),
            "answer": _field(obj, "ground_truth.answer", path, row),
            "evidence_modality": _field(obj, "ground_truth.evidence_modality", path, row),
            "generation_confidence": _confidence(obj, path, row),
            "auditor_decision": audit["decision"] if audit else None,
            "difficulty": audit["difficulty"] if audit else None,
            "self_audit": _self_audit(obj, path, row),
            "base_media_fits": MISFIT.lower() not in rationale.lower(),
            "template_selection_rationale": rationale or None,
            "reasoning_required": _field(obj, "generated_components.text.reasoning_required", path, row, False),
            "timestamp_evidence": _field(obj, "ground_truth.timestamp_evidence", path, row, False),
            **base_fields, **audio_fields, **image_fields})
    return records


def _self_audit(obj: dict, path: Path, row: int) -> dict:
    audit = obj.get("self_audit") or {}
    if not isinstance(audit, dict):
        raise InputError("expected self_audit as an object of *_passed flags", file=path, row=row,
                         column="self_audit", value=audit)
    return {k: v for k, v in audit.items() if k.endswith("_passed")}


def _streams(record: dict) -> int:
    from omniaudit.data_builders.composition.media_check import CHECKS

    own = bool(CHECKS["video"](record["video"])) if record["video"] else False
    return sum(record[m] is not None for m in ("video", "audio", "image")) + own


def write_samples(records: list[dict], out: str | Path) -> Path:
    """The records as a samples JSONL file (atomic); a missing tier is the count of grounded streams."""
    for r in records:
        if r["tier"] is None:
            r["tier"] = min(_streams(r), 4)
    with atomic_file(out) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return Path(out)


def build_from_generator(out: str | Path, generator: str | Path, media: str | Path | None = None, options=None,
                         auditor_results: str | Path | None = None, imported: str | Path | None = None,
                         push_repo: str | None = None) -> Path | None:
    """Import ``generator`` and build the dataset from it. ``imported``: also write the imported samples there (the
    input of ``omniaudit composition-auditor``); when samples lack an auditor decision, the build stops after
    writing them (returns None), or, without ``imported``, is refused naming the ways to give one."""
    from omniaudit.data_builders.composition.build import CompositionBuildOptions, build_composition_dataset

    records = import_generator(generator, media, auditor_results)
    missing = [r["id"] for r in records if r["auditor_decision"] is None]
    if imported is not None:
        write_samples(records, imported)
        if missing:
            return None
    elif missing:
        raise InputError(f"{len(missing)} of {len(records)} generated samples have no auditor decision (e.g. "
                         f"'{missing[0]}'): give --auditor-results FILE (the auditor's JSON answers, each with its "
                         f"sample_id) or an 'auditor' object per sample, or write the samples with --imported FILE "
                         f"and run `omniaudit composition-auditor --samples FILE`", file=generator)
    options = options or CompositionBuildOptions()
    if imported is not None:
        return build_composition_dataset(out, imported, options, push_repo=push_repo)
    with tempfile.TemporaryDirectory(prefix="omniaudit-generator-") as tmp:
        samples = write_samples(records, Path(tmp) / f"{Path(generator).stem}.jsonl")
        return build_composition_dataset(out, samples, options, push_repo=push_repo)
