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

Refused, naming the generator (or auditor) file, row and field: a ``sample_id``, question, answer or template that
is not a JSON string, ``generated_components.audio`` that is not an object (or null), a tier outside 1-4, a
category other than IC / CC, a malformed auditor answer (or top-level ``auditor_decision`` / ``difficulty`` pair), a
sample_id answered twice in the auditor file or one the generator file does not have. A problem the build finds in
the imported samples names the generator file and the sample's row there (the samples go through a temporary file
without ``--imported``). ``--imported`` never overwrites an input (the generator or auditor file) or a path
inside ``--out``.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from pathlib import Path

from omniaudit.data_builders.composition.samples import CATEGORIES, KNOWN_TEMPLATES, PAPER_TEMPLATE_ID
from omniaudit.errors import InputError
from omniaudit.io import atomic_file

AUDIO_EXT = (".wav", ".flac", ".mp3", ".ogg")
IMAGE_EXT = (".png", ".jpg", ".jpeg", ".webp")
_SCORE = re.compile(r"#{2,}\s*([1-5])\s*#{2,}")
MISFIT = "THIS BASE MEDIA DOES NOT FIT THE GIVEN LOGIC"
_PLACEHOLDER = re.compile(r"^\s*(?:\[[^\]]*\]|null|none|n/?a)?\s*$", re.I)
# "mute" must act on the audio itself ("remove the original audio", "audio muted"), not on another part of the
# action ("remove watermark, keep original audio"); a retain / keep match wins (:func:`audio_removed`)
_AUDIO = r"(?:audio|soundtrack)"
_OF_AUDIO = r"(?:\s+(?:the|its|any|all|original|source|background|existing|clip's|video's))*\s+" + _AUDIO + r"\b"
_AUDIO_IS = r"\b" + _AUDIO + r"(?:\s+track)?\s+(?:is\s+|was\s+)?"


def _acting_on_audio(verbs: str, participles: str) -> re.Pattern:
    return re.compile(rf"\b(?:{verbs})\w*{_OF_AUDIO}|{_AUDIO_IS}(?:{participles})\b", re.I)


_MUTED = _acting_on_audio("mut|remov|strip|discard|drop|silenc|delet",
                          "muted|removed|stripped|discarded|dropped|silenced|deleted")
_RETAIN = _acting_on_audio("retain|keep|kept|preserv|maintain", "retained|kept|preserved|intact|unchanged")
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
    if path.suffix.lower() == ".jsonl":
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


def _text(obj: dict, dotted: str, path: Path, row: int, required: bool = True) -> str | None:
    """A text field: a JSON string (never a number, list or object turned into one), None where optional."""
    value = _field(obj, dotted, path, row, required)
    if value is not None and not isinstance(value, str):
        raise InputError("expected text (a JSON string)", file=path, row=row, column=dotted, value=value)
    return value


def _object(value, column: str, path: Path, row: int, text: bool = False) -> dict | str | None:
    """An object (or null; ``text``: or a string) where the generator's JSON has one."""
    if value is not None and not isinstance(value, dict) and not (text and isinstance(value, str)):
        raise InputError("expected an object" + (", a string" if text else "") + " or null", file=path, row=row,
                         column=column, value=value)
    return value


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
    if obj.get("category") is not None and obj["category"] != "":
        given = obj["category"]
        if not isinstance(given, str) or given.strip().upper() not in CATEGORIES:
            raise InputError(f"expected category one of {', '.join(CATEGORIES)}", file=path, row=row,
                             column="category", value=given)
        return given.strip().upper()
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


def _tier(obj: dict, template_id: str, path: Path, row: int) -> int | None:
    """The ``tier`` field, else the paper's template id's ``T<k>``, else None (counted from the media later)."""
    raw, column = obj.get("tier"), "tier"
    if raw is None:
        letter = re.match(r"^[DC]_T(\d+)_\d+$", template_id)
        if not letter:
            return None
        raw, column = letter.group(1), "template_id"
    try:
        tier = float("nan") if isinstance(raw, bool) else float(str(raw).strip())
    except ValueError:
        tier = float("nan")
    if not (math.isfinite(tier) and tier == int(tier) and 1 <= tier <= 4):
        raise InputError("expected tier an integer 1-4 (the grounded modalities)", file=path, row=row,
                         column=column, value=obj.get(column))
    return int(tier)


_NOT_AUDIT = "is not the paper's auditor JSON (decision ACCEPT/REJECT, difficulty_score 1-10 or -1)"


def _auditor(obj: dict, results: dict[str, tuple[int, dict]], sid: str, path: Path, row: int,
             auditor_results: str | Path | None) -> dict | None:
    """The sample's auditor pass: its ``auditor`` object, else its answer in the auditor file, else the top-level
    ``auditor_decision`` / ``difficulty`` pair; None when none is given. One given that does not parse is refused,
    naming the file and row it came from."""
    from omniaudit.data_builders.composition.auditor import parse_audit

    if obj.get("auditor") is not None:
        given = obj["auditor"]
        audit = parse_audit(json.dumps(given) if isinstance(given, dict) else given)
        if audit is None:
            raise InputError(f"the sample's auditor answer {_NOT_AUDIT}", file=path, row=row, column="auditor",
                             value=given)
        return audit
    if sid in results:
        at, given = results[sid]
        audit = parse_audit(json.dumps(given))
        if audit is None:
            raise InputError(f"the auditor answer {_NOT_AUDIT}", file=auditor_results, row=at, value=sid)
        return audit
    pair = {"auditor_decision": obj.get("auditor_decision"), "difficulty": obj.get("difficulty")}
    if pair["auditor_decision"] is None and pair["difficulty"] is None:
        return None
    audit = parse_audit(json.dumps({"decision": pair["auditor_decision"], "difficulty_score": pair["difficulty"]}))
    if audit is None:
        raise InputError(f"the auditor_decision / difficulty pair {_NOT_AUDIT}", file=path, row=row,
                         column="auditor_decision", value=pair)
    return audit


def read_auditor_results(path: str | Path) -> dict[str, tuple[int, dict]]:
    """Auditor answers (the paper's auditor JSON, each with the ``sample_id`` it grades), keyed by sample id, each
    with its row; a sample answered twice is refused."""
    path = Path(path)
    out: dict[str, tuple[int, dict]] = {}
    for row, obj in read_objects(path):
        sid = obj.get("sample_id", obj.get("id"))
        if not isinstance(sid, str) or not sid.strip():
            raise InputError("an auditor answer needs the sample_id it grades (a JSON string)", file=path, row=row,
                             column="sample_id", value=sid)
        if sid.strip() in out:
            raise InputError(f"duplicate sample_id (also at row {out[sid.strip()][0]}): which answer holds?",
                             file=path, row=row, column="sample_id", value=sid)
        out[sid.strip()] = (row, obj)
    return out


def _audio(obj: dict, sid: str, path: Path, row: int, media: Path | None) -> tuple[Path | None, dict]:
    audio = _object(_field(obj, "generated_components.audio", path, row, required=False),
                    "generated_components.audio", path, row)
    if audio is None or not any(str(audio.get(k) or "").strip()
                                              for k in ("transcript", "voice_style_prompt")):
        return None, {}
    transcript = str(audio.get("transcript") or "")
    kind = str(audio.get("audio_type") or ("SFX" if _PLACEHOLDER.match(transcript) else "TTS")).upper()
    explicit = audio.get("file") or audio.get("path") or _given_media(obj, "audio", path, row)
    found = _find(_places(explicit, path, media) + _by_id(sid, "audio", media), path, row,
                  "generated_components.audio", "sfx" if kind == "SFX" else "speech", explicit)
    return found, {"transcript": transcript, "voice_style_prompt": audio.get("voice_style_prompt"),
                   "audio_kind": "sound effect" if kind == "SFX" else "speech"}


def _given_media(obj: dict, kind: str, path: Path, row: int) -> str | None:
    """The top-level ``media: {audio, image}`` path of ``kind``, if given."""
    return _text(obj, f"media.{kind}", path, row, False) if _object(obj.get("media"), "media", path, row) else None


def _image(obj: dict, sid: str, path: Path, row: int, media: Path | None) -> tuple[Path | None, dict]:
    caption = _object(_field(obj, "generated_components.image", path, row, required=False),
                      "generated_components.image", path, row, text=True)
    explicit = _text(obj, "generated_components.image_file", path, row, False) or _given_media(obj, "image", path, row)
    if isinstance(caption, dict):  # {"caption"/"description": ..., "file": ...}
        explicit = explicit or caption.get("file") or caption.get("path")
        caption = caption.get("caption") or caption.get("description")
    if not caption and not explicit:
        return None, {}
    found = _find(_places(explicit, path, media) + _by_id(sid, "image", media), path, row,
                  "generated_components.image", "image", explicit)
    return found, {"image_description": caption}


def audio_removed(action: str) -> bool | None:
    """Whether a processing_action mutes or removes the original audio (True), keeps it (False; a keep / retain
    match wins), or says neither (None)."""
    if _RETAIN.search(action):
        return False
    return True if _MUTED.search(action) else None


def _base(obj: dict, path: Path, row: int, media: Path | None) -> tuple[str, Path, dict]:
    kind = _text(obj, "base_modality.type", path, row).lower()
    if kind not in ("video", "audio", "image"):
        raise InputError("expected base_modality.type video, audio or image", file=path, row=row,
                         column="base_modality.type", value=kind)
    source = _text(obj, "base_modality.source_file", path, row)
    found = _find(_places(source, path, media), path, row, "base_modality.source_file", "base", source)
    action = str(obj["base_modality"].get("processing_action") or "")
    muted = audio_removed(action)
    if kind == "video" and muted is not None:
        from omniaudit.data_builders.composition.media_check import CHECKS, MediaProblem

        try:
            has_audio = CHECKS["video"](found)
        except MediaProblem as exc:
            raise InputError(f"video file {found}: {exc}", file=path, row=row, column="base_modality.source_file",
                             value=source) from exc
        if has_audio == muted:
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
    return [record for _, record in _import_rows(path, media, auditor_results)]


def _import_rows(path: str | Path, media: str | Path | None = None,
                 auditor_results: str | Path | None = None) -> list[tuple[int, dict]]:
    """``(row in the generator file, record)`` per generated sample (:func:`import_generator`)."""
    path = Path(path)
    media = Path(media) if media is not None else None
    if media is not None and not media.is_dir():
        raise InputError("the media folder does not exist", file=media)
    results = read_auditor_results(auditor_results) if auditor_results else {}
    records, seen = [], {}
    for row, obj in read_objects(path):
        sid = _text(obj, "sample_id", path, row)
        if sid in seen:
            raise InputError(f"duplicate sample_id (also at {seen[sid]})", file=path, row=row, column="sample_id",
                             value=sid)
        seen[sid] = row
        template_id, template_name = (_text(obj, k, path, row) for k in ("template_id", "template_name"))
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
        audit = _auditor(obj, results, sid, path, row, auditor_results)
        rationale = str(obj.get("template_selection_rationale") or "")
        records.append((row, {
            "id": sid, "template_id": template_id, "template_name": template_name,
            "category": _category(obj, template_id, template_name, path, row),
            "tier": _tier(obj, template_id, path, row), **files,
            "question": _text(obj, "generated_components.text.content", path, row),
            "answer": _text(obj, "ground_truth.answer", path, row),
            "evidence_modality": _text(obj, "ground_truth.evidence_modality", path, row),
            "generation_confidence": _confidence(obj, path, row),
            "auditor_decision": audit["decision"] if audit else None,
            "difficulty": audit["difficulty"] if audit else None,
            "self_audit": _self_audit(obj, path, row),
            "base_media_fits": MISFIT.lower() not in rationale.lower(),
            "template_selection_rationale": rationale or None,
            "reasoning_required": _field(obj, "generated_components.text.reasoning_required", path, row, False),
            "timestamp_evidence": _field(obj, "ground_truth.timestamp_evidence", path, row, False),
            **base_fields, **audio_fields, **image_fields}))
    unknown = sorted((at, sid) for sid, (at, _) in results.items() if sid not in seen)
    if unknown:
        raise InputError(f"an auditor answer for a sample_id the generator file {path} does not have (a typo?)",
                         file=auditor_results, row=unknown[0][0], column="sample_id", value=unknown[0][1])
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


# where a column of the samples schema comes from in the generator's JSON (a build error names that field)
SOURCE_FIELD = {"id": "sample_id", "question": "generated_components.text.content", "answer": "ground_truth.answer",
                "evidence_modality": "ground_truth.evidence_modality", "tier": "tier",
                "generation_confidence": "generation_confidence_score", "auditor_decision": "auditor",
                "difficulty": "auditor", "self_audit": "self_audit", "base_media_fits": "template_selection_rationale"}


def _at_source(exc: InputError, written: Path, generator: Path, rows: list[tuple[int, dict]]) -> InputError:
    """A build error about the temporary samples file, re-pointed at the generator file and the sample's row."""
    if exc.file is None or Path(exc.file).resolve() != written.resolve():
        return exc
    row, record = rows[exc.row - 1] if exc.row is not None and 0 < exc.row <= len(rows) else (None, {})
    column = exc.column
    if column in ("video", "audio", "image"):
        column = "base_modality.source_file" if record.get("base_media_type") == column else \
            f"generated_components.{column}"
    else:
        column = SOURCE_FIELD.get(column, column)
    message = exc.message.replace(str(written), str(generator))
    return InputError(f"{message} (the imported samples' column '{exc.column}')" if exc.column else message,
                      file=generator, row=row, column=column, value=exc.value)


def _check_imported(imported: str | Path, out: str | Path, inputs: dict[str, str | Path | None]) -> None:
    """``--imported`` is written: never over an input of the build, nor inside ``--out`` (which the build replaces)."""
    target = Path(imported).resolve()
    for what, given in inputs.items():
        if given is not None and Path(given).resolve() == target:
            raise InputError(f"--imported is {what}: the import would overwrite it; give a new file", file=imported)
    root = Path(out).resolve()
    if target == root or root in target.parents:
        raise InputError(f"--imported is inside --out ({out}), which the build replaces; write it elsewhere",
                         file=imported)


def build_from_generator(out: str | Path, generator: str | Path, media: str | Path | None = None, options=None,
                         auditor_results: str | Path | None = None, imported: str | Path | None = None,
                         push_repo: str | None = None) -> Path | None:
    """Import ``generator`` and build the dataset from it. ``imported``: also write the imported samples there (the
    input of ``omniaudit composition-auditor``; never the generator or auditor file, nor inside ``out``); when
    samples lack an auditor decision, the build stops after writing them (returns None), or, without ``imported``,
    is refused naming the ways to give one. Without ``imported``, build errors name the generator file's rows."""
    from omniaudit.data_builders.composition.build import CompositionBuildOptions, build_composition_dataset

    if imported is not None:
        _check_imported(imported, out, {"the generator file": generator, "the auditor results": auditor_results})
    rows = _import_rows(generator, media, auditor_results)
    records = [record for _, record in rows]
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
        try:
            return build_composition_dataset(out, samples, options, push_repo=push_repo)
        except InputError as exc:
            located = _at_source(exc, samples, Path(generator), rows)
            if located is exc:
                raise
            raise located from exc
