"""Build the composition / counterfactual dataset: samples -> selection -> bypass-test ablations -> Hub layout.

Configs (split ``train``): ``samples`` (the selected samples, media embedded) and ``ablations`` (per sample, one copy
per grounded modality with that modality removed: ``mute_audio`` (digital silence of the same length, channels,
layout and sample rate, for the audio file and for a video's own soundtrack alike, so no audio is left playing; the
video stream is copied), ``drop_image``, ``blank_video`` (black frames at the source's frame times, the soundtrack
copied packet for packet), plus ``text_only``: each changes only its own modality (:mod:`.ablate`); with
``swap``, ``swap_audio`` / ``swap_image``: the audio file or image of another sample of the same template,
``donor_id`` naming it, see :mod:`.swap`). A model that still answers an ablated copy correctly did not need the
removed modality: the sample fails the bypass test for that model.
Without ``--samples`` an embedded synthetic set is built offline: a picture of coloured squares and a spoken
instruction (espeak-ng), whose answer needs both.

Rows of both configs are free-form model items (DESIGN.md, items; ``omniaudit judge --config samples|ablations``):
``system`` (C3PO's standardised evaluation prompt), ``prompt`` (the question and the paper's answer-format
instruction), ``media`` (the row's media columns in prompt order: video, image, audio), ``video_audio`` (the video's
own soundtrack is part of the input) and no ``options`` column: answers are generated, then graded (exact match, then
an optional LLM judge), never scored against a list. ``gold`` is the answer (read only by ``scripted:oracle``);
``answer_vocabulary`` (the template's answers) and the C3PO fields are metadata the runners never read.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from omniaudit.data_builders.composition.ablate import black_video, muted_video, silent_audio_file
from omniaudit.data_builders.composition.samples import MEDIA, eligible, media_path, read_samples, select
from omniaudit.data_builders.composition.swap import check_swap, choose_donors, swap_name
from omniaudit.data_builders.hub import ParquetSink, configs_metadata, push_to_hub, shard_name
from omniaudit.errors import InputError
from omniaudit.hub_cards import dataset_card
from omniaudit.io import atomic_dir, local_name

SPLIT = "train"
ABLATIONS = {"audio": "mute_audio", "image": "drop_image", "video": "blank_video"}
PROMPT_ORDER = ("video", "image", "audio")  # the order media parts precede the question in the prompt
# C3PO appendix: the standardised instructions every model (and human evaluator) answers under
EVALUATION_PROMPT = (
    "There are two types of samples: Information Composition (where the information to find the correct answer is "
    "spread across multiple modalities) and Counterfactuals (where at least two modalities present conflicting "
    "information, and the correct has to be determined by focusing precisely on what the question is asking). Pay "
    "careful attention to all the media files and the question. Answer the question directly, accurately, and "
    "concisely based ONLY on the provided media streams. Do not refuse to answer. Answer in only one word or few "
    "words, not in a full sentence. The ground truth answer is only one word or few words and your answer has to be "
    "semantically equivalent to the ground truth answer to be considered correct. If you believe there is "
    "insufficient information to answer the question, say Insufficient Information.")
# C3PO §3: "as specific as possible ... and within a few words"; repeated after the question for models that weigh
# the user turn over the system prompt
ANSWER_INSTRUCTION = "Answer as specifically as possible in one word or a few words."


@dataclass(frozen=True)
class CompositionBuildOptions:
    target: int = 25  # per category x difficulty bucket
    seed: int = 0
    templates: str | None = None  # table of known templates (template_id, template_name[, category]); None: any
    min_confidence: int = 1  # lowest generation_confidence (1-5) kept
    swap: tuple[str, ...] = ()  # modalities (audio, image) also swapped for another sample's of the same template

    def __post_init__(self) -> None:
        object.__setattr__(self, "swap", check_swap(self.swap))


def features(ablations: bool) -> object:
    from datasets import Audio, Features, Image, List, Value, Video

    s, i = Value("string"), Value("int32")
    cols = {"id": s, "system": s, "prompt": s, "media": List(s), "video_audio": Value("bool"), "gold": s,
            "template_id": s, "template_name": s, "category": s, "tier": i, "bucket": i, "question": s,
            "answer": s, "evidence_modality": s, "generation_confidence": i, "auditor_decision": s, "difficulty": i,
            "answer_vocabulary": List(s), "video": Video(), "audio": Audio(), "image": Image()}
    if ablations:
        cols = {"id": s, "sample_id": s, "ablation": s, "donor_id": s,
                **{k: v for k, v in cols.items() if k != "id"}}
    return Features(cols)


def _cell(path: str | None, data: bytes | None = None) -> dict | None:
    if path is None and data is None:
        return None
    return {"bytes": data if data is not None else Path(path).read_bytes(), "path": Path(path).name}


def _has_audio(path: str) -> bool:
    from omniaudit.data_builders.interventions import media

    return media.probe(path).has_audio


def sample_rows(chosen: pd.DataFrame, work: Path, source: str | Path | None = None, swap: tuple[str, ...] = (),
                seed: int = 0) -> tuple[list[dict], list[dict]]:
    """Rows of both configs, each a free-form model item (``system``, ``prompt``, ``media``, ``video_audio``,
    ``gold``; no ``options``: answers are generated and graded, never picked from a list). ``answer_vocabulary`` (the
    answers of the sample's template) is metadata for analysis; no runner reads it. A media problem met while
    ablating names ``source`` (the samples file) and the sample's ``row``. ``swap``: modalities also swapped for a
    donor's (:mod:`.swap`, seeded by ``seed``); ``gold`` stays the sample's own answer."""
    samples, ablations = [], []
    swap = check_swap(swap)
    donors = choose_donors(chosen, swap, seed) if swap else {}
    donor_paths = {r["id"]: {m: media_path(r.get(m)) for m in MEDIA} for r in chosen.to_dict("records")}
    keys = ("template_id", "template_name", "category", "tier", "bucket", "question", "answer", "evidence_modality",
            "generation_confidence", "auditor_decision", "difficulty")
    vocabulary = chosen.groupby("template_id")["answer"].apply(lambda a: sorted(set(a))).to_dict()
    for r in chosen.to_dict("records"):
        paths = {m: media_path(r.get(m)) for m in MEDIA}  # absent: None, whatever pandas made of it
        try:
            sample, variants = _sample_variants(r, paths, work / str(len(ablations)))
            video_audio = _video_has_audio(r, paths)
        except InputError as exc:
            if r.get("row") is None or exc.row is not None:
                raise
            raise InputError(f"while ablating sample '{r['id']}': {exc}", file=source, row=r["row"]) from exc
        base = {k: r[k] for k in keys} | {"answer_vocabulary": vocabulary[r["template_id"]]}
        samples.append({"id": r["id"], **_item(r, sample, video_audio), **base, **sample})
        donor_of = {}
        for m in swap:
            if (r["id"], m) in donors:
                donor_of[swap_name(m)] = donors[(r["id"], m)]
                variants[swap_name(m)] = sample | {m: _cell(donor_paths[donor_of[swap_name(m)]][m])}
        for name, media_cells in variants.items():
            ablations.append({"id": f"{r['id']}/{name}", "sample_id": r["id"], "ablation": name,
                              "donor_id": donor_of.get(name), **_item(r, media_cells, video_audio), **base,
                              **media_cells})
    return samples, ablations


def _item(r: dict, cells: dict[str, dict | None], video_audio: bool) -> dict:
    """The item columns of one row: the media it holds in prompt order, and whether its video's soundtrack is input.

    A video's soundtrack stays part of the input in every copy that keeps the video: under ``blank_video`` (black
    frames) it is the audio evidence the copy keeps, and under ``mute_audio`` it is digital silence of the same
    length, sent like the silenced audio file, so an ablated copy differs from its sample only in the removed
    modality's content, never in the layout of the model's input.
    """
    media = [m for m in PROMPT_ORDER if cells.get(m) is not None]
    return {"system": EVALUATION_PROMPT, "prompt": f"{r['question']}\n{ANSWER_INSTRUCTION}", "media": media,
            "video_audio": video_audio and "video" in media, "gold": r["answer"]}


def _video_has_audio(r: dict, paths: dict[str, str | None]) -> bool:
    return paths["video"] is not None and (
        bool(r["video_has_audio"]) if r.get("video_has_audio") is not None else _has_audio(paths["video"]))


def _sample_variants(r: dict, paths: dict[str, str | None], stem: Path) -> tuple[dict, dict[str, dict]]:
    """The sample's media cells and its ablations (name -> media cells): ``mute_audio`` silences every audio the
    sample has (its audio file and the video's own soundtrack), ``blank_video``, ``drop_image``, ``text_only``."""
    cells = {m: _cell(paths[m]) for m in MEDIA}
    video_audio = _video_has_audio(r, paths)
    variants = {}
    if paths["audio"] is not None or video_audio:
        muted = dict(cells)
        if paths["audio"] is not None:
            muted["audio"] = _cell(paths["audio"], silent_audio_file(paths["audio"]))
        if video_audio:  # the video's own track is audio too: silence it, keep the pictures
            muted["video"] = _cell(paths["video"], muted_video(paths["video"], Path(f"{stem}_muted.mp4")))
        variants["mute_audio"] = muted
    if paths["video"] is not None:
        variants["blank_video"] = cells | {"video": _cell(paths["video"], black_video(paths["video"],
                                                                                      Path(f"{stem}_black.mp4")))}
    if paths["image"] is not None:
        variants["drop_image"] = cells | {"image": None}
    variants["text_only"] = {m: None for m in MEDIA}
    return cells, variants


def build_composition_dataset(out_dir: str | Path, samples: str | Path | None = None,
                              options: CompositionBuildOptions = CompositionBuildOptions(),
                              n_synthetic: int = 48, push_repo: str | None = None) -> Path:
    from omniaudit.data_builders.composition.synthetic import synthesize_samples

    out = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="omniaudit-composition-") as tmp:
        if samples is None:
            samples_path, source = synthesize_samples(Path(tmp) / "synthetic", n_synthetic, options.seed), \
                "embedded synthetic samples"
        else:
            samples_path, source = Path(samples), local_name(samples)
        table = read_samples(samples_path, options.templates)
        chosen = select(table, options.target, options.seed, options.min_confidence)
        if chosen.empty:
            raise InputError(f"no sample is auditor-accepted with a difficulty score, a passed self-audit and a "
                             f"generation confidence >= {options.min_confidence}", file=samples_path)
        rows, ablation_rows = sample_rows(chosen, Path(tmp), samples_path, options.swap, options.seed)
        summary = {
            "read": len(table), "accepted": int((table["auditor_decision"] == "ACCEPT").sum()),
            "min_confidence": options.min_confidence,
            "below_min_confidence": int((table["generation_confidence"] < options.min_confidence).sum()),
            "self_audit_failed": int((~table["self_audit_passed"]).sum()),
            "base_media_misfit": int((~table["base_media_fits"]).sum()),
            # eligible samples the per-bucket --target left out: a larger input does not make a larger set
            "eligible": len(eligible(table, options.min_confidence)), "target": options.target,
            "selected": len(chosen), "ablations": len(ablation_rows),
            "per_ablation": {k: int(v) for k, v in
                             pd.Series([r["ablation"] for r in ablation_rows]).value_counts().sort_index().items()},
            **({"swap_without_donor": {swap_name(m): int(sum(chosen[m].map(media_path).notna())
                                                         - sum(r["ablation"] == swap_name(m) for r in ablation_rows))
                                       for m in options.swap}} if options.swap else {}),
            "per_bucket": {f"{c}/bucket {b}": int(n) for (c, b), n in chosen.groupby(["category", "bucket"]).size()
                           .items()},
            "per_template": {t: int(n) for t, n in chosen["template_name"].value_counts().sort_index().items()},
        }
        with atomic_dir(out) as dest:
            for config, data, abl in (("samples", rows, False), ("ablations", ablation_rows, True)):
                (dest / config).mkdir()
                sink = ParquetSink(dest / config / shard_name(SPLIT), features(abl))
                sink.add(data)
                sink.close()
            metadata = {"pretty_name": "omniaudit composition and counterfactual QA",
                        "tags": ["omniaudit", "omni", "composition", "counterfactual", "c3po"],
                        "configs": configs_metadata({"samples": [SPLIT], "ablations": [SPLIT]})}
            card = dataset_card("composition.md.j2", metadata, source=source, summary=summary,
                                options={"target": options.target, "seed": options.seed,
                                         "swap": list(options.swap)})
            (dest / "README.md").write_text(card, encoding="utf-8")
            (dest / "build_info.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if push_repo:
        push_to_hub(out, push_repo)
    return out
