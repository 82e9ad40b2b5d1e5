"""Build intervention-augmented datasets: manifest -> plan (variants, swap partners, shard) -> media -> Hub layout.

Configs (one split, ``train``):

- ``diagnostic``: per source clip the Original (asked all three questions) and each intervention (asked the question of
  its dimension), with structured targets. Rows are model items (``omniaudit judge --config diagnostic``): ``prompt``
  (the question), ``system`` (null), no ``options`` (free-form: answers are generated, then read by the audit's
  extractor), ``media`` = ``["video"]`` with ``video_audio`` true (the clip's own soundtrack is the input), and
  ``gold`` (the audio-verified reference answer, = ``target``, read only by ``scripted:oracle``);
- ``sft``: warm-up chat records whose answers verify the audio;
- ``dpo``: preference pairs ``prompt, chosen, rejected, video`` for Shift, Mute, Swap, CTP and OP (Thud §2.2, A.3).

Every clip, the Original included, goes through the same writer (video stream copied, audio re-encoded, channel
layout kept), so Original and intervened clips differ only in their audio content, never in codec history. Rendered
clips are cached in a work folder beside the output: an interrupted build resumes from it and produces the same bytes;
it is removed on success. Planning (``plan.py``) checks every clip and draws Swap partners before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from omniaudit.data_builders import media_store
from omniaudit.data_builders.fingerprint import file_digest
from omniaudit.data_builders.hub import ParquetSink, configs_metadata, push_to_hub, shard_name
from omniaudit.data_builders.interventions import answers, audio_edits, media
from omniaudit.data_builders.interventions.manifest import read_manifest
from omniaudit.data_builders.interventions.plan import (  # noqa: F401  (re-exported: the public names of this module)
    DEFAULT_SHIFTS,
    SWAP_MAX_SIMILARITY,
    ClipPlan,
    InterventionBuildOptions,
    Variant,
    in_shard,
    media_summary,
    plan_clips,
    range_name,
    validate_shift_ranges,
    validate_shifts,
)
from omniaudit.data_builders.interventions.synthetic import SyntheticClipSpec, synthesize_clips
from omniaudit.data_builders.media_store import MediaStore, config_shards, shard_path
from omniaudit.errors import InputError
from omniaudit.hub_cards import dataset_card
from omniaudit.io import atomic_dir, atomic_file, local_name, redact_paths
from omniaudit.records import first_difference, value_at

SPLIT = "train"
CONFIGS = ("diagnostic", "sft", "dpo")


def clip_key(clip_id: str) -> str:
    return hashlib.sha1(clip_id.encode()).hexdigest()[:16]


def _swap_audio(partner: media.ClipInfo, rate: int, layout: str, n: int) -> np.ndarray:
    """The partner's recorded audio (without silence padded onto it) at this clip's rate and channel layout, looped or
    cut to ``n``."""
    audio, pad_s = media.timeline_audio(partner, rate, layout=layout)
    recorded = audio[:, : audio.shape[1] - audio_edits.n_samples(pad_s, rate)]
    return audio_edits.fit_length(recorded, n, loop=True)


def _work_key(clip_id: str, path: str) -> str:
    """Cache key of a clip: its id and the source file's identity (path, size, mtime)."""
    stat = Path(path).stat()
    return hashlib.sha1(f"{clip_id}\0{path}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()[:16]


def _cache_name(plan: ClipPlan, v: Variant) -> str:
    """File stem of a rendered variant; a swap is named after its partner, so a new draw never reuses a stale file."""
    return f"swap-{_work_key(plan.partner_id, plan.partner.path)}" if v.intervention == "swap" else v.name


def _render(job: tuple[ClipPlan, str, str]) -> dict[str, tuple[str, float]]:
    """Write every variant of one clip into the work folder (skipping those already there); name -> (file, pad s)."""
    plan, work, codec = job
    folder = Path(work) / _work_key(plan.id, plan.video)
    folder.mkdir(parents=True, exist_ok=True)
    suffix = media.output_suffix(plan.info)
    done = {v.name: folder / f"{_cache_name(plan, v)}{suffix}" for v in plan.variants}
    pads_file = folder / "pads.json"  # seconds of silence appended to the source track (the same for every variant)
    if all(p.exists() for p in done.values()) and pads_file.exists():
        pad_s = json.loads(pads_file.read_text())["pad_s"]
        return {v.name: (str(done[v.name]), 0.0 if v.intervention == "swap" else pad_s) for v in plan.variants}
    rate = plan.info.audio_rate
    layout = plan.layout or media.output_layout(plan.info, codec)[0]
    try:
        audio, pad_s = media.timeline_audio(plan.info, rate, layout=layout)
    except InputError as exc:  # planning decoded it already: the file changed since, say so with its manifest row
        raise InputError(f"clip '{plan.id}' ({plan.video}): {exc.message}", file=plan.manifest, row=plan.row,
                         column="video") from exc
    for v in plan.variants:
        if done[v.name].exists():
            continue
        if v.intervention == "original":
            y = audio
        elif v.intervention == "shift":
            y = audio_edits.shift(audio, rate, v.offset_s)
        elif v.intervention == "mute":
            y = audio_edits.mute(audio)
        else:
            y = _swap_audio(plan.partner, rate, layout, audio.shape[1])
        with atomic_file(done[v.name]) as tmp:  # the temporary keeps the suffix: the container follows it
            media.write_with_audio(plan.info, tmp, y, rate, codec, layout)
    with atomic_file(pads_file) as tmp:
        tmp.write_text(json.dumps({"pad_s": pad_s}))
    return {v.name: (str(done[v.name]), 0.0 if v.intervention == "swap" else pad_s) for v in plan.variants}


def _messages(role: str, text: str, video: bool = False) -> list[dict]:
    content = ([{"type": "video", "text": None}] if video else []) + [{"type": "text", "text": text}]
    return [{"role": role, "content": content}]


def clip_rows(plan: ClipPlan, files: dict[str, tuple[str, float]], seed: int,
              store: MediaStore | None = None) -> dict[str, list[dict]]:
    """The diagnostic, sft and dpo rows of one clip: video bytes embedded, or (path mode) the clip's file name."""
    rng = np.random.default_rng([seed, int(clip_key(plan.id), 16) % 2**32])
    out: dict[str, list[dict]] = {c: [] for c in CONFIGS}
    ev = plan.event
    suffix = media.output_suffix(plan.info)
    store = store or MediaStore(Path("."), "embed")
    cells = {name: store.cells(path, f"{clip_key(plan.id)}_{name}{suffix}") for name, (path, _) in files.items()}
    for v in plan.variants:
        video_id = f"{plan.id}/{v.name}"
        for dim in v.dimensions:
            row_id = f"{video_id}/{dim}"
            answer = answers.correct_answer(ev, v.intervention, dim, v.offset_s, plan.partner_heard)
            out["diagnostic"].append({
                # the item a model answers (DESIGN.md: items): free-form, the clip with its own soundtrack
                "id": row_id, "system": None, "prompt": answers.QUESTIONS[dim], "media": ["video"],
                "video_audio": True, "gold": answer,
                # metadata the model never sees
                "video_id": video_id, "source_id": plan.id, "intervention": v.intervention,
                "offset_s": v.offset_s, "partner_id": v.partner_id, "dimension": dim,
                "question": answers.QUESTIONS[dim], "target": answer,
                **answers.target(v.intervention, dim, v.offset_s),
                "category": plan.category, "visual_event": ev.visual_event, "visual_time": ev.visual_time,
                "audio_event": ev.audio_event, "audio_time": ev.audio_time, "duration_s": plan.info.duration,
                "audio_pad_s": files[v.name][1], "variable_frame_rate": plan.info.variable_frame_rate,
                **cells[v.name]})
            out["sft"].append({"id": row_id, "source_id": plan.id, "intervention": v.intervention,
                               "offset_s": v.offset_s, "dimension": dim, "visual_time": ev.visual_time,
                               "audio_time": ev.audio_time,  # the collator warns when its window misses them
                               "messages": _messages("user", answers.QUESTIONS[dim], video=True)
                               + _messages("assistant", answer), **cells[v.name]})
    for kind, v, chosen, rejected, tag in _preference_pairs(plan, rng):
        out["dpo"].append({
            "id": f"{plan.id}/{v.name}/{kind}" + (f"/{tag}" if tag else ""), "source_id": plan.id,
            "kind": kind, "intervention": v.intervention, "offset_s": v.offset_s,
            "visual_time": ev.visual_time, "audio_time": ev.audio_time,
            "perturbed_field": tag if kind == "op" else None,
            "prompt": _messages("user", answers.QUESTIONS[answers.INTERVENTION_DIMENSION.get(
                v.intervention, "sync") if kind != "op" else "sync"], video=True),
            "chosen": _messages("assistant", chosen), "rejected": _messages("assistant", rejected),
            **cells[v.name]})
    return out


def _preference_pairs(plan: ClipPlan, rng: np.random.Generator) -> Iterator[tuple]:
    """(kind, video variant, chosen, rejected, id tag) for Shift/Mute/Swap, CTP (both assignments) and OP.

    A Shift pair's rejected answer names the wrong direction; the "synchronized" claim on a shifted clip is the CTP
    pair of the same clip, so no pair appears twice.
    """
    ev = plan.event
    original = plan.variants[0]
    for v in plan.variants[1:]:
        chosen = answers.correct_answer(ev, v.intervention, answers.INTERVENTION_DIMENSION[v.intervention],
                                        v.offset_s, plan.partner_heard)
        yield v.intervention, v, chosen, answers.shortcut_answer(ev, v.intervention, v.offset_s, True), None
    for v in (v for v in plan.variants if v.intervention == "shift"):  # CTP: original vs shifted, both assignments
        synced, shifted = answers.sync_answer(ev, 0.0), answers.sync_answer(ev, v.offset_s)
        yield "ctp", original, synced, shifted, v.name
        yield "ctp", v, shifted, synced, None
    op = _perturbed_event(plan, rng)  # OP: one field of the event tuple perturbed
    if op is not None:
        field_name, wrong = op
        yield "op", original, answers.sync_answer(ev, 0.0), answers.sync_answer(wrong, 0.0), field_name


def _perturbed_event(plan: ClipPlan, rng: np.random.Generator) -> tuple[str, answers.Event] | None:
    ev = plan.event
    options = [f for f in ("visual_event", "visual_time", "audio_event", "audio_time") if getattr(ev, f) is not None]
    if not options:
        return None
    name = options[int(rng.integers(len(options)))]
    if name.endswith("_time"):
        t = getattr(ev, name)
        step = float(rng.uniform(1.0, 2.0))  # a clearly different moment, kept inside the clip
        moved = t + step if t + step < plan.info.duration else max(0.0, t - step)
        return name, replace(ev, **{name: round(moved, 1)})
    other = plan.partner_heard if name == "audio_event" else None
    fallback = "a different sound" if name == "audio_event" else "something else happens"
    return name, replace(ev, **{name: other if other and other != getattr(ev, name) else fallback})


def features() -> dict:
    from datasets import Features, List, Value, Video

    message = List({"role": Value("string"), "content": List({"type": Value("string"), "text": Value("string")})})
    s, f, b = Value("string"), Value("float64"), Value("bool")
    return {
        "diagnostic": Features({
            "id": s, "system": s, "prompt": s, "media": List(s), "video_audio": b, "gold": s,
            "video_id": s, "source_id": s, "intervention": s, "offset_s": f, "partner_id": s,
            "dimension": s, "question": s, "target": s, "target_synced": b, "target_direction": s,
            "target_offset_s": f, "target_sound_present": b, "target_match": b, "category": s, "visual_event": s,
            "visual_time": f, "audio_event": s, "audio_time": f, "duration_s": f, "audio_pad_s": f,
            "variable_frame_rate": b, "video": Video()}),
        "sft": Features({"id": s, "source_id": s, "intervention": s, "offset_s": f, "dimension": s,
                         "visual_time": f, "audio_time": f, "messages": message, "video": Video()}),
        "dpo": Features({"id": s, "source_id": s, "kind": s, "intervention": s, "offset_s": f, "visual_time": f,
                         "audio_time": f, "perturbed_field": s, "prompt": message, "chosen": message,
                         "rejected": message, "video": Video()}),
    }


def summarize(tables: dict[str, pd.DataFrame], fixed_shifts: tuple[float, ...] | None = None) -> dict:
    """Counts for the card. With ``fixed_shifts`` (the build's ``--shift`` values), Shift rows at other offsets (drawn
    from ``--shift-range``) are summarised as a count and a range instead of one entry per offset."""
    diag, dpo = tables["diagnostic"], tables["dpo"]
    originals = diag[diag["intervention"] == "original"].drop_duplicates("source_id")
    shifted = diag[diag["intervention"] == "shift"]["offset_s"].astype(float)
    drawn = pd.Series(False, index=shifted.index)
    if fixed_shifts is not None:
        drawn = ~shifted.map(lambda o: f"{o:+.2f}").isin({f"{s:+.2f}" for s in fixed_shifts})
    return {
        "n_source_clips": int(diag["source_id"].nunique()) if len(diag) else 0,
        "rows": {name: len(t) for name, t in tables.items()},
        "diagnostic": {f"{i}/{d}": int(n) for (i, d), n in
                       diag.groupby(["intervention", "dimension"]).size().items()} if len(diag) else {},
        "shift_offsets": {f"{o:+.2f}": int(n) for o, n in shifted[~drawn].value_counts().sort_index().items()},
        "drawn_shifts": {"rows": int(drawn.sum()), "min_s": float(shifted[drawn].min()),
                         "max_s": float(shifted[drawn].max()),
                         "median_abs_s": float(shifted[drawn].abs().median())} if drawn.any() else None,
        "dpo": {k: int(n) for k, n in dpo["kind"].value_counts().sort_index().items()} if len(dpo) else {},
        # one Original per clip (it has a row per dimension): count clips, not rows
        "audio_padded_clips": int((originals["audio_pad_s"] > 0).sum()),
        "variable_frame_rate_clips": int(originals["variable_frame_rate"].astype(bool).sum()),
    }


BUILD_INFO = "build_info.json"
SUMMARY_COLUMNS = {"diagnostic": ["source_id", "intervention", "dimension", "offset_s", "audio_pad_s",
                                  "variable_frame_rate"], "sft": ["id"], "dpo": ["kind"]}


def write_card(folder: Path, info: dict) -> None:
    """Write ``build_info.json`` and the README card of a built folder, counting rows from its Parquet files (no
    absolute local path in either: they are published with the dataset)."""
    info = redact_paths(info)
    tables = {name: pq.read_table(config_shards(folder, name), columns=cols).to_pandas()
              for name, cols in SUMMARY_COLUMNS.items()}
    paths_mode = info["options"].get("media_mode") == "paths"
    summary = summarize(tables, tuple(info["options"]["shifts"]) if info["options"].get("shift_ranges") else None)
    summary["shard"] = info["shard"]
    metadata = {
        "pretty_name": "omniaudit audio-visual intervention dataset",
        "tags": ["omniaudit", "audio-visual", "shortcut-audit", "thud", "dpo"],
        "task_categories": ["video-text-to-text"],
        "configs": media_store.card_configs(folder, CONFIGS, "diagnostic", SPLIT) if paths_mode
        else configs_metadata({name: [SPLIT] for name in CONFIGS}, default="diagnostic"),
    }
    card = dataset_card("interventions.md.j2", metadata, summary=summary, questions=answers.QUESTIONS,
                        media_info=info.get("media"),
                        **{k: info[k] for k in ("source", "options", "manifest", "skipped_shifts", "spec")})
    (folder / BUILD_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    (folder / "README.md").write_text(card + (media_store.CARD_NOTE if paths_mode else ""), encoding="utf-8")


def merge_shards(out_dir: str | Path, shards: list[str | Path]) -> Path:
    """Merge the folders of ``--shard I/N`` builds into one dataset (all N shards needed) with a card for the whole."""
    from omniaudit.data_builders.hub import merge_shard_files

    infos = []
    for shard in shards:
        path = Path(shard) / BUILD_INFO
        if not path.is_file():
            raise InputError(f"not a folder written by `omniaudit build interventions` (no {BUILD_INFO})", file=shard)
        infos.append(json.loads(path.read_text(encoding="utf-8")))
    same_build = [{k: v for k, v in i.items() if k not in ("shard", "skipped_shifts")} for i in infos]
    for info in same_build:
        info["options"] = {k: v for k, v in info["options"].items() if k not in ("shard_index", "num_proc")}
    for shard, info in zip(shards[1:], same_build[1:], strict=True):
        where = first_difference(same_build[0], info)
        if where:
            raise InputError(f"shard was built from another source or with other options than {shards[0]}: its "
                             f"{where} is {value_at(info, where)!r}, not {value_at(same_build[0], where)!r}",
                             file=shard)
    out = Path(out_dir)
    with atomic_dir(out) as tmp:
        if infos[0]["options"].get("media_mode") == "paths":
            media_store.merge_paths_shards(tmp, [Path(s) for s in shards], CONFIGS)
        else:
            merge_shard_files(tmp, [Path(s) for s in shards], CONFIGS)
        info = dict(infos[0], shard="0/1")
        info["options"] = dict(info["options"], shard_index=0, shard_count=1)
        info["skipped_shifts"] = {}
        for other in infos:
            for offset, n in other["skipped_shifts"].items():
                info["skipped_shifts"][offset] = info["skipped_shifts"].get(offset, 0) + n
        write_card(tmp, info)
    return out


def _work_dir(out: Path, options: InterventionBuildOptions, spec: SyntheticClipSpec | None) -> Path:
    key = hashlib.sha1(f"{options.media_key()}{spec.as_dict() if spec else ''}".encode()).hexdigest()[:12]
    return out.parent / f".{out.name}.work-{key}"


def build_interventions_dataset(out_dir: str | Path, manifest: str | Path | None = None,
                                options: InterventionBuildOptions = InterventionBuildOptions(),  # noqa: B008 (frozen)
                                spec: SyntheticClipSpec | None = None, push_repo: str | None = None,
                                progress: Callable[[str], None] | None = None) -> Path:
    """Build the three configs (this shard's clips) into ``out_dir`` atomically; optionally push. Returns the folder.

    Without ``manifest`` the embedded synthetic clips (``spec``) are generated first, into the work folder.
    """
    out = Path(out_dir)
    spec = (spec or SyntheticClipSpec()) if manifest is None else None
    if spec is not None:
        too_long = [s for s in options.shifts if abs(s) >= spec.duration]
        if too_long:
            raise InputError(f"shifts {', '.join(f'{s:+g}' for s in too_long)} s are not shorter than the synthetic "
                             f"clips ({spec.duration:g} s)", value=options.shifts)
        wide = [r for r in options.shift_ranges if max(abs(r[0]), abs(r[1])) >= spec.duration]
        if wide:
            raise InputError(f"shift ranges {', '.join(f'[{a:g}, {b:g}]' for a, b in wide)} s reach offsets not "
                             f"shorter than the synthetic clips ({spec.duration:g} s)", value=options.shift_ranges)
    work = _work_dir(out, options, spec)
    fresh_work = not work.exists()
    say = progress or (lambda _msg: None)
    try:
        if manifest is None:
            source = "embedded synthetic clips"
            manifest_path = work / "synthetic" / "manifest.jsonl"
            if not manifest_path.exists():
                say("synthesising clips")
                synthesize_clips(manifest_path.parent, spec)
        else:
            source, manifest_path = local_name(manifest), Path(manifest)
        say("reading manifest")
        m = read_manifest(manifest_path, options.eps_visual, options.eps_audio)
        say("checking clips and swap partners")
        plans, unusable = plan_clips(m, options)
    except InputError:
        if fresh_work:  # nothing was rendered yet: leave no work folder behind a refused input
            shutil.rmtree(work, ignore_errors=True)
        raise
    m.rejected.extend(unusable)
    manifest_summary = {**m.summary(), "used": len(plans), "rejected_examples": m.rejected[:20],
                        "sha256": file_digest(manifest_path)}  # an edited manifest is another build
    mine = [p for p in plans if in_shard(p.id, options.shard_index, options.shard_count)]
    skipped: dict[str, int] = {}
    for p in mine:
        for key in [f"{s:+.2f}" for s in p.skipped_shifts] + [range_name(r) for r in p.skipped_ranges]:
            skipped[key] = skipped.get(key, 0) + 1
    feats = features()
    with atomic_dir(out) as tmp:
        sinks, store = {}, MediaStore(tmp, options.media_mode)
        for name in CONFIGS:
            path = shard_path(tmp, name, shard_name(SPLIT, options.shard_index, options.shard_count),
                              options.media_mode)
            path.parent.mkdir(exist_ok=True)
            sinks[name] = ParquetSink(path, media_store.features(feats[name], options.media_mode))
        for i, (plan, files) in enumerate(zip(mine, _render_all(mine, work, options), strict=True), start=1):
            say(f"clip {i}/{len(mine)}")
            for name, rows in clip_rows(plan, files, options.seed, store).items():
                sinks[name].add(rows)
        for sink in sinks.values():
            sink.close()
        write_card(tmp, {"builder": "interventions", "source": source, "options": asdict(options),
                         "manifest": manifest_summary, "skipped_shifts": skipped,
                         "media": media_summary(plans, options.swap_max_similarity),
                         "spec": spec.as_dict() if spec else None,
                         "shard": f"{options.shard_index}/{options.shard_count}"})
    shutil.rmtree(work, ignore_errors=True)
    if push_repo:
        push_to_hub(out, push_repo)
    return out


def _render_all(plans: list[ClipPlan], work: Path, options: InterventionBuildOptions) -> Iterator[dict]:
    jobs = [(p, str(work / "clips"), options.audio_codec) for p in plans]
    if options.num_proc == 1 or len(jobs) < 2:
        yield from map(_render, jobs)
        return
    with get_context("fork").Pool(options.num_proc) as pool:
        yield from pool.imap(_render, jobs)  # in order: rows and bytes do not depend on the process count
