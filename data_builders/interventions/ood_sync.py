"""Out-of-distribution sync evaluation in the VGGSoundSync style (Thud §3.1): clips whose audio offset is known.

Input: a folder of clips named ``NAME__off+0.40.mp4`` (offset in seconds, + = audio delayed, heard after the picture;
``NAME__off0`` = in sync), or a manifest (CSV/TSV/JSONL/Parquet) with ``file`` (relative to the manifest, or
absolute) and ``offset_s``, optionally ``source_id``. Clips of one source (the ``NAME`` part, or ``source_id``) form a
cluster: the audit pairs a source's in-sync and offset clips, scores the clips of a source that lacks one condition
unpaired (every clip counts), and resamples each source's clips together. A manifest row whose ``offset_s``
contradicts the offset its file name gives is refused.

Output: a ``diagnostic`` config with the columns of ``build interventions``' own, one sync item per clip, so
``omniaudit judge --config diagnostic`` and ``omniaudit audit interventions`` run on it unchanged (Sync accuracy on
in-sync vs offset clips, offset blindness, direction confusion, false sync alarms, accuracy per |offset| band, offset
MAE and localisation). The gold answer follows the known offset: by default only a zero offset is "synchronized"
(intervention ``original``) and any nonzero one is "not synchronized", delayed or early (``shift``), as the paper
scores VGGSoundSync ("once any nonzero offset is introduced, their accuracy collapses"; its ε_a = 0.5 s is the
tolerance of annotated event times, appendix B, not a sync tolerance). ``tolerance_s`` > 0 is an explicit opt-in that
also calls |offset| <= ``tolerance_s`` synchronized; the card and the build info state it. The clip bytes are stored
as given (no re-encoding): the offset is the file's own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.data_builders.interventions import answers, audio_edits, media
from omniaudit.data_builders.interventions.answers import OOD_SYNC_CATEGORY
from omniaudit.errors import InputError

SYNC_TOLERANCE_S = 0.0  # any nonzero offset is a shift (Thud §3.1 on VGGSoundSync)
ZERO_S = 1e-6  # float slack: an offset this close to the tolerance (0: to zero) counts as within it
NAME_DECIMALS_S = 0.005  # a file name gives the offset to 0.01 s (offset_file_name)
VIDEO_SUFFIXES = (".mp4", ".mkv", ".webm", ".mov", ".m4v", ".avi")
OFFSET_NAME = re.compile(r"^(?P<source>.+?)__off(?P<offset>[+-]?(?:\d+(?:\.\d*)?|\.\d+))s?$")


@dataclass(frozen=True)
class OffsetClip:
    id: str
    path: Path
    offset_s: float  # + = audio delayed
    source_id: str
    row: int | None = None  # manifest row, for errors


def offset_file_name(source: str, offset_s: float, suffix: str = ".mp4") -> str:
    """The file-name convention: ``NAME__off+0.40.mp4``."""
    return f"{source}__off{offset_s:+.2f}{suffix}"


def parse_offset_name(path: Path) -> tuple[str, float] | None:
    """(source, offset s) from a ``NAME__off+0.40.mp4`` file name, else None."""
    m = OFFSET_NAME.match(path.stem)
    return (m["source"], float(m["offset"])) if m else None


def _folder_clips(folder: Path) -> list[OffsetClip]:
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES)
    if not files:
        raise InputError(f"no video files ({', '.join(VIDEO_SUFFIXES)}) in the folder", file=folder)
    clips = []
    for f in files:
        parsed = parse_offset_name(f)
        if parsed is None:
            raise InputError("file name does not give its offset: name clips NAME__off+0.40.mp4 (seconds, + = audio "
                             "delayed) or list them in a manifest with columns file, offset_s", file=f)
        clips.append(OffsetClip(f.stem, f, parsed[1], parsed[0]))
    return clips


def _manifest_clips(path: Path) -> list[OffsetClip]:
    from omniaudit.tables import fail_at, read_records, resolve_media_path

    raw, rows = read_records(path)
    for col in ("file", "offset_s"):
        if col not in raw.columns:
            raise InputError(f"missing column '{col}'; an offset manifest has file, offset_s (and optionally "
                             f"source_id); this one has {list(raw.columns)}", file=path)
    offsets = pd.to_numeric(raw["offset_s"].replace("", np.nan), errors="coerce")
    fail_at(~np.isfinite(offsets.to_numpy(float)), "expected an offset in seconds (+ = audio delayed)", path, rows,
            "offset_s", raw["offset_s"])
    clips = []
    for k, (file, offset, row) in enumerate(zip(raw["file"].astype(str), offsets, rows, strict=True)):
        video = resolve_media_path(file, path, row, "file")
        source = str(raw["source_id"].iloc[k]).strip() if "source_id" in raw.columns else ""
        parsed = parse_offset_name(video)
        if parsed and abs(parsed[1] - float(offset)) > NAME_DECIMALS_S + ZERO_S:
            raise InputError(f"offset_s {float(offset):+g} s contradicts the offset in the file name "
                             f"({parsed[1]:+g} s, + = audio delayed); correct one of them", file=path, row=row,
                             column="offset_s", value=raw["offset_s"].iloc[k])
        source = source or (parsed[0] if parsed else video.stem)
        clips.append(OffsetClip(video.stem, video, float(offset), source, row))
    return clips


def read_offset_clips(source: str | Path) -> list[OffsetClip]:
    """The clips of a folder (file-name convention) or of an offset manifest; ids (file stems) must be distinct."""
    source = Path(source)
    if not source.exists():
        raise InputError("not found: expected a folder of NAME__off+0.40.mp4 clips or an offset manifest", file=source)
    clips = _folder_clips(source) if source.is_dir() else _manifest_clips(source)
    seen: dict[str, Path] = {}
    for c in clips:
        if c.id in seen:
            raise InputError(f"two clips share the id '{c.id}' ({seen[c.id]} and {c.path}); ids are file stems",
                             file=source, row=c.row)
        seen[c.id] = c.path
    return clips


def sync_row(clip: OffsetClip, tolerance_s: float) -> dict:
    """The diagnostic item of one clip (without its video cell): its gold answer and structured targets follow the
    known offset and the tolerance."""
    try:
        info = media.probe(clip.path)
        _, pad_s = media.timeline_audio(info, None, 1)  # decodes the whole track: a corrupt one fails here
    except InputError as exc:
        raise InputError(f"clip '{clip.id}': {exc.message}", file=clip.path, row=clip.row) from exc
    if abs(clip.offset_s) >= info.duration:
        raise InputError(f"offset {clip.offset_s:+g} s is not shorter than the clip ({info.duration:.2f} s)",
                         file=clip.path, row=clip.row)
    synced = abs(clip.offset_s) <= tolerance_s + ZERO_S
    intervention = "original" if synced else "shift"
    offset = 0.0 if synced else clip.offset_s
    answer = answers.sync_answer(answers.Event(), offset)
    return {"id": f"{clip.id}/sync", "system": None, "prompt": answers.QUESTIONS["sync"], "media": ["video"],
            "video_audio": True, "gold": answer, "video_id": clip.id, "source_id": clip.source_id,
            "intervention": intervention, "offset_s": float(clip.offset_s), "partner_id": None, "dimension": "sync",
            "question": answers.QUESTIONS["sync"], "target": answer, **answers.target(intervention, "sync", offset),
            "category": OOD_SYNC_CATEGORY, "visual_event": None, "visual_time": None, "audio_event": None,
            "audio_time": None, "duration_s": info.duration, "audio_pad_s": pad_s,
            "variable_frame_rate": info.variable_frame_rate}


def build_ood_sync_dataset(out_dir: str | Path, source: str | Path, tolerance_s: float = SYNC_TOLERANCE_S,
                           push_repo: str | None = None, progress: Callable[[str], None] | None = None) -> Path:
    """Write the ``diagnostic`` config of an offset-labelled clip folder or manifest (Hub layout); optionally push."""
    from omniaudit.data_builders.hub import ParquetSink, configs_metadata, push_to_hub, shard_name
    from omniaudit.data_builders.interventions.build import BUILD_INFO, SPLIT, features
    from omniaudit.io import atomic_dir, local_name

    if not (np.isfinite(tolerance_s) and tolerance_s >= 0):
        raise InputError("the sync tolerance must be a finite number of seconds >= 0", value=tolerance_s)
    say = progress or (lambda _msg: None)
    clips = read_offset_clips(source)
    out = Path(out_dir)
    counts = {"in_sync": 0, "offset": 0}
    with atomic_dir(out) as tmp:
        (tmp / "diagnostic").mkdir()
        sink = ParquetSink(tmp / "diagnostic" / shard_name(SPLIT), features()["diagnostic"])
        for i, clip in enumerate(clips, start=1):
            say(f"clip {i}/{len(clips)}")
            row = sync_row(clip, tolerance_s)
            counts["in_sync" if row["intervention"] == "original" else "offset"] += 1
            sink.add([{**row, "video": {"bytes": clip.path.read_bytes(), "path": clip.path.name}}])
        sink.close()
        info = {"builder": "interventions-ood-sync", "source": local_name(source), "tolerance_s": tolerance_s,
                "sync_rule": sync_rule(tolerance_s),
                "clips": len(clips), "sources": len({c.source_id for c in clips}), **counts,
                "offsets_s": sorted({round(c.offset_s, 3) for c in clips})}
        (tmp / BUILD_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        (tmp / "README.md").write_text(_card(info, configs_metadata({"diagnostic": [SPLIT]})), encoding="utf-8")
    if push_repo:
        push_to_hub(out, push_repo)
    return out


def sync_rule(tolerance_s: float) -> str:
    """What counts as synchronized, in words (card, CLI)."""
    if tolerance_s <= 0:
        return "only a zero offset is synchronized (any nonzero offset is a shift, as the paper scores VGGSoundSync)"
    return (f"|offset| <= {tolerance_s:g} s is synchronized (an explicit sync tolerance: the paper calls any nonzero "
            "offset a shift)")


def _card(info: dict, configs: list[dict]) -> str:
    import yaml

    from omniaudit.io import redact_paths

    meta = {"pretty_name": "omniaudit out-of-distribution sync set", "tags": ["omniaudit", "audio-visual", "thud",
                                                                             "sync"],
            "task_categories": ["video-text-to-text"], "configs": configs}
    body = f"""# Out-of-distribution audio-visual sync set

Built by omniaudit `build interventions --ood-sync` from **{info['source']}** (VGGSoundSync-style evaluation, *Thud*
§3.1): {info['clips']} clips from {info['sources']} sources, each asked whether its sound is synchronized. Gold
answers follow each clip's known offset (+ = audio delayed): {sync_rule(info['tolerance_s'])}.
{info['in_sync']} clips are in sync, {info['offset']} delayed or early. Clips are stored as given.

```python
from datasets import load_dataset
diagnostic = load_dataset("PATH_OR_REPO", "diagnostic", split="train")
```

Evaluate with `omniaudit judge --dataset PATH --config diagnostic ...` and `omniaudit audit interventions`.
"""
    front = yaml.safe_dump(redact_paths(meta), sort_keys=False, allow_unicode=True, width=119)
    return f"---\n{front}---\n\n{redact_paths(body)}"


def render_offset_clips(manifest: str | Path, out_dir: str | Path, offsets: tuple[float, ...],
                        audio_codec: str = "aac") -> list[Path]:
    """A VGGSoundSync-style folder from an intervention manifest: each clip re-muxed once per offset (video stream
    copied, audio displaced by the offset and re-encoded) as ``NAME__off+0.40.mp4``; an offset of 0 is the clip in
    sync. A stand-in for real offset-labelled sets (tests, dry runs)."""
    from omniaudit.data_builders.interventions.manifest import read_manifest
    from omniaudit.io import atomic_file

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for _, row in read_manifest(manifest).clips.iterrows():
        info = media.probe(row["video"])
        layout, _ = media.output_layout(info, audio_codec)
        audio, _ = media.timeline_audio(info, info.audio_rate, layout=layout)
        for offset in offsets:
            y = audio_edits.shift(audio, int(info.audio_rate), offset) if offset else audio
            dst = out / offset_file_name(row["id"], offset, media.output_suffix(info))
            with atomic_file(dst) as tmp:  # the temporary keeps the suffix: the container follows it
                media.write_with_audio(info, tmp, y, int(info.audio_rate), audio_codec, layout)
            written.append(dst)
    return written
