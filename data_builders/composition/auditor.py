"""The auditor pass of C3PO's benchmark construction: a model grades each generated sample with the paper's rubric.

Each sample is sent to a runner (any ``omniaudit judge`` SPEC, e.g. a hosted model behind ``openai:``) with the
paper's auditor prompt (Appendix: the 4-pillar rubric and the bypass test), filled with the sample's generation
confidence, its template logic (a ``template_logic`` column, else the template's name) and the sample's fields as
JSON (media files are sent as media parts in prompt order: video, image, audio). The answer is read as the JSON
object the prompt asks for: ``decision`` ACCEPT / REJECT and ``difficulty_score`` (an integer 1-10, or -1 when the
media are too poor to judge); ``failure_pillar`` and ``rationale`` are kept. An answer that is not such an object
(no JSON, a decision other than ACCEPT / REJECT, a difficulty outside 1-10 / -1) is unparsed: the sample is written
REJECT with difficulty -1 and ``auditor_parsed`` false, and counted, never guessed.

The output is the samples file with ``auditor_decision``, ``difficulty``, ``failure_pillar``, ``auditor_rationale``,
``auditor_raw`` and ``auditor_parsed`` (re)written and media paths made absolute, ready for
``omniaudit build composition --samples OUT [--min-confidence K]``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from omniaudit.data_builders.composition.samples import MEDIA, media_path
from omniaudit.errors import InputError
from omniaudit.io import atomic_file
from omniaudit.tables import fail_at, read_records, resolve_media_path

# C3PO appendix, the auditor's prompt verbatim; {SCORE}, {TEMPLATE_LOGIC} and {SAMPLE_DATA} are filled per sample
AUDITOR_PROMPT = (
    'You are the **Multimodal Benchmark Auditor**. Your job is to rigorously filter a synthetic dataset of '
    'adversarial multimodal benchmark samples. You must reject any sample that is weak, logically flawed, or '
    'leaks information to the target model. **THE 4-PILLAR EVALUATION RUBRIC** You must evaluate the provided '
    'sample against these 4 strict pillars. If it fails ANY pillar, you must REJECT it. 1. **Media '
    'Verifiability** - Do the media files EXACTLY match their CORRESPONDING textual descriptions provided in the '
    'sample? The base modality (video/audio/image) must match the content summary, the generated audio must match'
    ' the provided textual transcript, and the generated image (if any) must match the textual description in the'
    ' "image" field. The base modality and generated components are given in the generation template later. - Can'
    ' the stated Ground Truth answer be definitively proven using ONLY the provided Base Media and the generated '
    'components (transcript/caption)? - Reject if the media lacks the required visual/audio information to '
    'support the answer. - Are all media and the entire sample is in the English language? If not, REJECT. - Are '
    'all the media files coherent and clearly understandable? If not, REJECT. 2. **Query Sanitization** - The '
    'Text Query MUST be short and nondescript. - The Text Query MUST NOT contain meta-vocabulary (e.g., "audio", '
    '"video", "narrator", "visual", "discrepancy", "claim", "image"). - Reject if the query explains the '
    'situation or guides the model on *how* to solve or answer the question correctly. - Does the question make '
    'sense realistically, and does it seem natural? -> Should be YES. Does the question seem unnecessarily '
    'cryptic and fabricated? -> Should be NO. 3. **Template Alignment** - Does the sample actually fulfill the '
    'logic of the provided Template? - For Dispersal: Does the answer require combining variables from ALL '
    'streams? (If it’s solvable WITHOUT requiring all modalities, REJECT). - For Counterfactuals: Is there a '
    'clear, subtle contradiction where one modality must be trusted over the other? Can the ground truth answer '
    'be unambiguously determined? (If it’s just two unrelated statements, reject). - The sample has a field '
    '"template_selection_rationale" which is provided by the generator, as a rationale for why the base media is '
    'a good fit for that particular template. Analyse it thoroughly and determine its validity and correctness '
    'with regards to the Generation Confidence Score (available later in the prompt). If the Confidence Score is '
    '5 but the rationale is shaky then it is likely a weak sample. 4. **Coherence and Naturalness** - Does the '
    'combination of media, audio transcript, and text query feel like a plausible real-world scenario? - Reject '
    'if the generated transcript is nonsensical given the visual context. **THE BYPASS TEST** * **Missing '
    'Modality:** Can the question be answered using the Text + Image/Video alone (ignoring Audio)? -> *Result '
    'must be NO.* * **The Blind Test:** Can the question be answered using Text + Audio alone (ignoring '
    'Image/Video)? -> *Result must be NO.* * **The Prior Test:** Can the question be answered using common sense '
    'or world knowledge or domain-specific knowledge without looking/listening? -> *Result must be NO.* * **The '
    'Ambiguity Check:** Is there *exactly one* logical answer? (Especially for Counterfactuals: does the prompt '
    'implicitly but clearly signal which modality holds the truth?) -> *Result must be YES.* * **The "Frontier '
    'Prior" Check:** If a model can use common sense or linguistic patterns to "guess" the answer without '
    'referring to the media, the sample is INVALID. * **Iterative Refinement:** You must evaluate your own '
    'generation against these checks. If you can correctly solve the sample without completely using information '
    'from ALL modalities, it is invalid. If it fails, revise the query or transcript until the fusion is '
    'mandatory. * **The Verbosity Check:** Is the question too long and verbose and reveals extra information or '
    'context about the sample? Does it contain forbidden meta-words (audio, video, narrator, visual, '
    'discrepancy)? -> *Answer to both must be NO.* **PRIOR CONFIDENCE SCORE** You will be provided with the '
    'Generating Model’s self-rated confidence score (1 to 5). - If Score is 1 or 2: Run the 4 pillars normally, '
    'because we already know the sample is not a very good fit. The generator struggled to fit the template to '
    'this media. Look closely for forced logic or unverifiable claims. - If Score is 4 or 5: The generator was '
    'highly confident. Apply MAXIMUM SCRUTINY, and ensure that the sample passes all quality checks. **OUTPUT '
    'FORMAT** You must output a strict JSON object. Do not include markdown formatting blocks. DO NOT format the '
    'JSON object with \\n or any other formatting characters. Simply output the json as a single string. DO NOT '
    'output any textual content except the JSON object AFTER the </think> tag. The JSON must strictly follow this'
    ' schema: {{ "template_id": "[template_id]", "decision": "ACCEPT" or "REJECT", "failure_pillar": "[Name of '
    'the failed pillar, or null if ACCEPT]", "rationale": "[Brief explanation of exactly why it passed or '
    'failed]", "generation_confidence_score": "[generation_confidence_score]", "difficulty_score": [Integer 1-10,'
    ' or -1. CRITICAL RULES: Use -1 if the media is too blurry, noisy, unintelligible, or ambiguous to fairly '
    'evaluate. For clean media, use 1-10 based strictly on the cognitive/reasoning complexity required. Reserve '
    '10 ONLY for pristine, crystal-clear samples that demand complex, edge-of-capabilities cross-modal '
    'reasoning.] }} **SAMPLE TO AUDIT** **Generation Confidence Score:** {SCORE} / 5 **Generation Logic:** '
    '{TEMPLATE_LOGIC} **Sample Information:** {SAMPLE_DATA} Evaluate this sample against the 4 Pillars. Output '
    'the strict JSON decision.')
NEEDED = ("id", "template_id", "template_name", "question", "answer", "generation_confidence")
AUDITOR_COLUMNS = ("auditor_decision", "difficulty", "failure_pillar", "auditor_rationale", "auditor_raw",
                   "auditor_parsed")
PROMPT_ORDER = ("video", "image", "audio")
_THINK = re.compile(r"<think>.*?</think>|<think>.*\Z", re.S | re.I)


@dataclass
class AuditorResult:
    out: Path
    rows: int
    accepted: int
    rejected: int
    unparsed: int


def parse_audit(raw: object) -> dict | None:
    """``{"decision", "difficulty", "failure_pillar", "rationale"}`` from the auditor's answer, or None.

    The last JSON object in the answer (after any ``<think>`` block; markdown fences allowed) must hold ``decision``
    ACCEPT / REJECT (any case) and ``difficulty_score`` an integer 1-10 or -1 (an integral number or numeric text).
    """
    text = _THINK.sub(" ", str(raw or ""))
    found = None
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[start:])
        except ValueError:
            continue
        if isinstance(obj, dict) and "decision" in obj:
            found = obj
    if found is None:
        return None
    decision = str(found.get("decision", "")).strip().upper()
    try:
        score = float(str(found.get("difficulty_score")).strip())
    except ValueError:
        return None
    # NaN / Infinity (JSON allows them; numeric text too) are no difficulty: unparsed, never a crash at int()
    if (decision not in ("ACCEPT", "REJECT") or not math.isfinite(score) or score != int(score)
            or not (1 <= score <= 10 or score == -1)):
        return None
    pillar = found.get("failure_pillar")
    return {"decision": decision, "difficulty": int(score),
            "failure_pillar": None if pillar in (None, "null", "") else str(pillar),
            "rationale": str(found.get("rationale") or "")}


def _has_audio(file: Path) -> bool:
    from omniaudit.data_builders.composition.media_check import CHECKS

    return bool(CHECKS["video"](file))


def _sample_data(record: dict) -> str:
    """The sample as the auditor reads it: every field but the auditor's own, the confidence and the media paths."""
    skip = set(AUDITOR_COLUMNS) | {"generation_confidence", "template_logic", "row", *MEDIA}
    return json.dumps({k: v for k, v in record.items() if k not in skip}, ensure_ascii=False, default=str)


def auditor_items(path: str | Path) -> tuple[pd.DataFrame, list]:
    """The samples (media paths absolute) and one free-form item per sample for the auditor."""
    from omniaudit.runners.items import JudgeItem, MediaPart

    path = Path(path)
    raw, rows = read_records(path)
    missing = [c for c in NEEDED if c not in raw.columns]
    if missing:
        raise InputError(f"missing column(s) {missing}; the file has {list(raw.columns)}", file=path)
    if raw.empty:
        raise InputError("no rows", file=path)
    raw = raw.astype(object).where(raw.notna(), None)
    confidence = pd.to_numeric(raw["generation_confidence"], errors="coerce")
    fail_at(~confidence.between(1, 5) | (confidence != confidence.round()), "expected an integer 1-5", path, rows,
            "generation_confidence", raw["generation_confidence"])
    ids = raw["id"].astype(str).str.strip()
    fail_at(ids == "", "expected a non-empty value", path, rows, "id")
    fail_at(ids.duplicated(), "duplicate id", path, rows, "id", ids)
    items = []
    for i, r in enumerate(rows):
        record = raw.iloc[i].to_dict()
        parts = []
        for m in PROMPT_ORDER:
            value = media_path(record.get(m)) if m in raw.columns else None
            if value is None:
                continue
            file = resolve_media_path(value, path, r, m)
            if not file.is_file():
                raise InputError("media file not found", file=path, row=r, column=m, value=value)
            raw.at[raw.index[i], m] = str(file)
            # a video's own soundtrack is input too (the auditor checks audio against its transcript)
            parts.append(MediaPart(m, file.read_bytes(), m, with_audio=m == "video" and bool(_has_audio(file))))
        logic = record.get("template_logic") or record["template_name"]
        prompt = AUDITOR_PROMPT.format(SCORE=int(confidence.iloc[i]), TEMPLATE_LOGIC=logic,
                                       SAMPLE_DATA=_sample_data(record))
        items.append(JudgeItem(id=ids.iloc[i], prompt=prompt, media=parts))
    return raw, items


def audit_samples(samples: str | Path, auditor, out: str | Path, progress=None, **judge_options) -> AuditorResult:
    """Ask ``auditor`` (a runner SPEC, or any object with ``answer(items)``) for each sample's decision and
    difficulty; write the audited samples (JSONL) to ``out`` atomically. ``progress`` hears the runner's "k/n"."""
    from omniaudit.io import check_out_file, looks_like

    out = check_out_file(out, lambda p: looks_like(p, {"auditor_decision", "auditor_raw"}))
    try:  # the output's folder exists (or can be made) before any auditor call is paid for
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output's folder: {exc.strerror or exc}", file=out.parent) from exc
    table, items = auditor_items(samples)
    if isinstance(auditor, str):
        from omniaudit.runners import make_judge

        auditor = make_judge(auditor, **judge_options)
    import inspect

    heard = progress is not None and len(inspect.signature(auditor.answer).parameters) > 1  # a runner takes progress
    answers = auditor.answer(items, progress) if heard else auditor.answer(items)
    if len(answers) != len(items):
        raise InputError(f"the auditor returned {len(answers)} answers for {len(items)} samples")
    raws = [a if isinstance(a, str) else getattr(a, "raw", a) for a in answers]
    parsed = [parse_audit(r) for r in raws]
    table["auditor_decision"] = [p["decision"] if p else "REJECT" for p in parsed]
    table["difficulty"] = [p["difficulty"] if p else -1 for p in parsed]
    table["failure_pillar"] = [p["failure_pillar"] if p else "unparsed auditor answer" for p in parsed]
    table["auditor_rationale"] = [p["rationale"] if p else None for p in parsed]
    table["auditor_raw"] = [None if r is None else str(r) for r in raws]
    table["auditor_parsed"] = [p is not None for p in parsed]
    with atomic_file(out) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for record in table.to_dict("records"):
            fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    accepted = int((table["auditor_decision"] == "ACCEPT").sum())
    unparsed = int(sum(p is None for p in parsed))
    return AuditorResult(out, len(table), accepted, len(table) - accepted, unparsed)
