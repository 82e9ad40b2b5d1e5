"""The ``judge`` config: zero-shot pairwise judging items (EmoPrefer audit, appendix B) in the item contract.

Every binary pair becomes two items, one per presentation order: ``ab`` shows ``a1`` as Description A and ``a2`` as
Description B, ``ba`` swaps them. Options are ``["A", "B"]`` (a closed set: runners read option probabilities or parse
the letter); ``audit preference --predictions NAME=FILE`` maps the letter back to a1/a2 by ``order`` and averages
the two orders (appendix B: mean of p_A(d1, d2) and 1 - p_A(d2, d1)). "same" pairs are not judged: they only take part
in fold assignment and are masked before scoring.

The paper does not print its prompt; appendix B says the prompts "ask which description is more faithful, grounded in
what is seen/heard, and human-preferred, returning A/B", and the zero-shot rows use "the same dual-order grounding
prompt". :data:`PROMPTS` is written from that description, one wording per input (video with its soundtrack, video
without one, audio only, descriptions only).

With a media folder, each pair's clip is found by its ``name`` (``DIR/<name>.<ext>``) and attached to both of its
items: a video as the ``video`` column with ``video_audio`` true when the file has an audio stream (EmoPrefer clips are
videos with speech), an audio file as the ``audio`` column. Clips are located and probed (streams only) before
anything is written, and read one row group at a time while the config is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError

OPTIONS = ["A", "B"]
ORDERS = ("ab", "ba")
VIDEO_EXTENSIONS = (".mp4", ".mkv", ".webm", ".mov", ".avi", ".m4v")
AUDIO_EXTENSIONS = (".wav", ".flac", ".mp3", ".m4a", ".ogg", ".opus")

def _prompt(intro: str, clip: str, evidence: str) -> str:
    """The judging prompt (``{a}``, ``{b}``: the descriptions shown as A and B)."""
    return (f"{intro}Two descriptions of the emotional state of the person in {clip} follow.\n\n"
            "Description A: {a}\n\nDescription B: {b}\n\n"
            f"Which description is more faithful to the person's emotion {evidence}, and would be preferred by a "
            "human annotator? Answer with a single letter: A or B.")


PROMPTS = {  # by what the item carries
    "video+audio": _prompt("Watch the video and listen to its audio. ", "the clip", "as seen and heard in the clip"),
    "video": _prompt("Watch the video. ", "the clip", "as seen in the clip"),
    "audio": _prompt("Listen to the audio. ", "the clip", "as heard in the clip"),
    "text": _prompt("", "a video clip", "in the clip"),
}


@dataclass(frozen=True)
class Clip:
    """A pair's media file: ``kind`` video or audio (from its streams, not its extension)."""

    path: Path
    kind: str
    with_audio: bool  # a video with an audio stream (its soundtrack is part of the input)

    @property
    def modality(self) -> str:
        return "video+audio" if self.kind == "video" and self.with_audio else self.kind


def _probe(path: Path, row: int, pair_id: str) -> Clip:
    """Kind and soundtrack of a media file, from its streams (a corrupt or stream-less file fails naming the row)."""
    import av

    from omniaudit.data_builders.interventions.media import check_intact

    try:
        check_intact(path)  # a truncated clip is refused, naming it, before anything is written
    except InputError as exc:
        raise InputError(f"pair '{pair_id}': its clip {path}: {exc.message}", row=row, column="name") from exc
    try:
        with av.open(str(path)) as container:
            video = [s for s in container.streams.video if not s.disposition & av.stream.Disposition.attached_pic]
            audio = bool(container.streams.audio)
    except (av.error.FFmpegError, UnicodeDecodeError) as exc:
        raise InputError(f"pair '{pair_id}': cannot open its clip {path} as media ({type(exc).__name__}: {exc})",
                         row=row, column="name") from exc
    if video:
        return Clip(path, "video", audio)
    if audio:
        return Clip(path, "audio", False)
    raise InputError(f"pair '{pair_id}': its clip {path} has no video or audio stream", row=row, column="name")


def find_clips(pairs: pd.DataFrame, media_dir: str | Path) -> list[Clip | None]:
    """Per row of ``pairs``, the clip of a binary pair (None for "same" pairs, which are not judged).

    The clip of a pair named ``x`` is ``DIR/x.<ext>`` (extension in any case); when a video and an audio file both
    exist, the video is used (its soundtrack is sent with it). Missing clips, two videos (or two audio files) for one
    name, names that lead outside DIR, empty and unreadable files fail naming the pair's row (rows count from 1 in
    source order) and the expected path.
    """
    folder = Path(media_dir)
    if not folder.is_dir():
        raise InputError("media folder not found (expected a folder of clips named <name>.<ext>)", file=folder)
    root = folder.resolve()
    clips: list[Clip | None] = []
    for i, (pair_id, name, binary) in enumerate(zip(pairs["id"], pairs["name"], pairs["is_binary"], strict=True)):
        if not binary:
            clips.append(None)
            continue
        row = i + 1
        if not (folder / f"{name}.x").resolve().is_relative_to(root):
            raise InputError(f"pair '{pair_id}': its name leads outside the media folder {folder}", row=row,
                             column="name", value=name)
        found = {ext: folder / f"{name}{e}" for ext in VIDEO_EXTENSIONS + AUDIO_EXTENSIONS
                 for e in dict.fromkeys((ext, ext.upper())) if (folder / f"{name}{e}").is_file()}
        videos = [p for ext, p in found.items() if ext in VIDEO_EXTENSIONS]
        audios = [p for ext, p in found.items() if ext in AUDIO_EXTENSIONS]
        if not found:
            exts = ", ".join(e.lstrip(".") for e in VIDEO_EXTENSIONS + AUDIO_EXTENSIONS)
            raise InputError(f"pair '{pair_id}': no clip for name '{name}'; expected {folder / str(name)}.<ext> with "
                             f"ext one of {exts}", row=row, column="name", value=name)
        candidates = videos or audios
        if len(candidates) > 1:
            raise InputError(f"pair '{pair_id}': several clips for name '{name}' "
                             f"({', '.join(map(str, candidates))}); keep one", row=row, column="name", value=name)
        path = candidates[0]
        if path.stat().st_size == 0:
            raise InputError(f"pair '{pair_id}': its clip {path} is empty", row=row, column="name", value=name)
        clips.append(_probe(path, row, str(pair_id)))
    return clips


def judge_table(pairs: pd.DataFrame, clips: list[Clip | None] | None = None) -> pd.DataFrame:
    """Both orders of every binary pair as items (``ab`` then ``ba``, pair by pair, in ``pairs`` order).

    Columns: the item contract (``id`` = ``<pair id>/<order>``, ``system``, ``prompt``, ``options``, ``order``; with
    clips ``media``, ``video_audio`` and the clip's path in ``clip`` / ``clip_kind``, read when the config is written)
    and metadata the model never sees: ``pair_id``, ``name``, ``fold``, ``preference`` (the pair's label),
    ``shown_first`` (a1 or a2: the description shown as A) and ``gold`` (the letter of the preferred description in
    this order).
    """
    rows = []
    binary = pairs["is_binary"].to_numpy(dtype=bool)
    for i in np.flatnonzero(binary):
        pair = pairs.iloc[i]
        clip = clips[i] if clips is not None else None
        template = PROMPTS[clip.modality if clip else "text"]
        for order in ORDERS:
            first, second = ("a1", "a2") if order == "ab" else ("a2", "a1")
            row = {"id": f"{pair['id']}/{order}", "system": None,
                   "prompt": template.format(a=pair[first], b=pair[second]), "options": list(OPTIONS),
                   "order": order}
            if clips is not None:
                row.update(media=[clip.kind], video_audio=clip.with_audio, clip=str(clip.path), clip_kind=clip.kind)
            row.update(pair_id=pair["id"], name=pair["name"], fold=int(pair["fold"]), preference=pair["preference"],
                       shown_first=first, gold="A" if pair["preference"] == first else "B")
            rows.append(row)
    return pd.DataFrame(rows)


def features(table: pd.DataFrame):
    """The ``datasets.Features`` of the written config (media columns only for the kinds present)."""
    from datasets import Audio, Features, List, Value, Video

    s = Value("string")
    cols = {"id": s, "system": s, "prompt": s, "options": List(s), "order": s}
    kinds = set(table["clip_kind"]) if "clip_kind" in table.columns else set()
    if kinds:
        cols.update(media=List(s), video_audio=Value("bool"))
        cols.update({k: Video() if k == "video" else Audio() for k in ("video", "audio") if k in kinds})
    cols.update(pair_id=s, name=s, fold=Value("int64"), preference=s, shown_first=s, gold=s)
    return Features(cols)


def records(table: pd.DataFrame, start: int, stop: int, feats) -> list[dict]:
    """Rows ``start:stop`` as Parquet records, clips read from disk (one read per clip: both orders share it)."""
    out, cache = [], {}
    for rec in table.iloc[start:stop].to_dict("records"):
        clip, kind = rec.pop("clip", None), rec.pop("clip_kind", None)
        if clip is not None:
            if clip not in cache:
                cache = {clip: Path(clip).read_bytes()}  # rows of a pair are adjacent: keep only the last clip
            for k in ("video", "audio"):
                if k in feats:
                    rec[k] = {"bytes": cache[clip], "path": Path(clip).name} if k == kind else None
        out.append(rec)
    return out


def summarize(table: pd.DataFrame) -> dict:
    """Counts for the card: items, pairs and the clips attached per input (video+audio, video, audio; empty: none)."""
    out = {"n_items": len(table), "n_pairs": int(table["pair_id"].nunique()) if len(table) else 0, "clips": {}}
    if "clip_kind" in table.columns:
        per_pair = table.drop_duplicates("pair_id")
        modality = np.where(per_pair["clip_kind"] == "video",
                            np.where(per_pair["video_audio"], "video+audio", "video"), per_pair["clip_kind"])
        out["clips"] = {k: int(n) for k, n in pd.Series(modality).value_counts().sort_index().items()}
        out["media_columns"] = sorted(set(per_pair["clip_kind"]), reverse=True)  # video before audio
    out["shown_prompt"] = next((k for k in PROMPTS if k in out["clips"]), "text")  # the wording the card prints
    return out


# Training configs written beside ``judge`` when the pairs have clips (``build preference --media DIR``).
SFT_CONFIG = "judge_sft"  # chat records of the judge items: the omni pairwise judge (training/sft.py)
PAIRS_MEDIA_CONFIG = "pairs_media"  # binary pairs with their clip: Omni ODIN and its BT control (reward_odin.py)
MEDIA_CONFIGS = ("judge", SFT_CONFIG, PAIRS_MEDIA_CONFIG)
PAIR_MEDIA_COLUMNS = ("id", "name", "model1", "a1", "model2", "a2", "preference", "fold", "len1", "len2")


def chat_records(items: pd.DataFrame) -> pd.DataFrame:
    """The ``judge_sft`` config: every judge item (both orders of every binary pair) as a chat record for
    ``training/sft.py`` (EmoPrefer audit Table 4, "Omni judge": next-token A/B, symmetric training).

    ``messages`` is the user turn (the clip as a ``video`` or ``audio`` part, then the item's prompt) and the
    assistant's answer, the gold letter of that order (``A`` when the description shown first is preferred); the clip
    goes in the ``video`` / ``audio`` column as in the ``judge`` config. Metadata: ``pair_id``, ``order``, ``fold`` (to
    train on some folds and judge the others), ``gold``. Items without a clip are an error (text judges train on
    ``pairs`` with ``training/pairwise_judge.py``).
    """
    if "clip_kind" not in items.columns or items["clip_kind"].isna().any():
        raise InputError(f"config {SFT_CONFIG} needs a clip for every judged pair (build preference --media DIR)")
    rows = []
    for item in items.to_dict("records"):
        user = [{"type": item["clip_kind"], "text": None}, {"type": "text", "text": item["prompt"]}]
        rows.append({"id": item["id"], "messages": [{"role": "user", "content": user},
                                                    {"role": "assistant",
                                                     "content": [{"type": "text", "text": item["gold"]}]}],
                     "clip": item["clip"], "clip_kind": item["clip_kind"], "video_audio": item["video_audio"],
                     "pair_id": item["pair_id"], "order": item["order"], "fold": item["fold"], "gold": item["gold"]})
    return pd.DataFrame(rows)


def media_pairs(pairs: pd.DataFrame, clips: list[Clip | None]) -> pd.DataFrame:
    """The ``pairs_media`` config: the binary pairs (``pairs`` columns ODIN reads: descriptions, generators,
    character lengths, fold) with their clip, one row per pair; the candidate input of the omni reward models is
    (video, audio, one description) (EmoPrefer audit appendix B, "Omni encodes video, audio, and one description")."""
    binary = np.flatnonzero(pairs["is_binary"].to_numpy(dtype=bool))
    out = pairs.iloc[binary][list(PAIR_MEDIA_COLUMNS)].reset_index(drop=True)
    chosen = [clips[i] for i in binary]
    out["clip"] = [str(c.path) for c in chosen]
    out["clip_kind"] = [c.kind for c in chosen]
    out["video_audio"] = [c.with_audio for c in chosen]
    return out


def media_tables(pairs: pd.DataFrame, items: pd.DataFrame, clips: list[Clip | None]) -> dict[str, pd.DataFrame]:
    """The training configs that need the clips: ``judge_sft`` and ``pairs_media``."""
    return {SFT_CONFIG: chat_records(items), PAIRS_MEDIA_CONFIG: media_pairs(pairs, clips)}


def config_features(name: str, table: pd.DataFrame):
    """The ``datasets.Features`` of a config with clips (``judge``, ``judge_sft`` or ``pairs_media``)."""
    from datasets import Audio, Features, List, Value, Video

    if name == "judge":
        return features(table)
    s = Value("string")
    media = {k: Video() if k == "video" else Audio() for k in ("video", "audio") if k in set(table["clip_kind"])}
    if name == SFT_CONFIG:
        message = List({"role": s, "content": List({"type": s, "text": s})})
        return Features({"id": s, "messages": message, "video_audio": Value("bool"), **media, "pair_id": s,
                         "order": s, "fold": Value("int64"), "gold": s})
    cols = {c: s for c in PAIR_MEDIA_COLUMNS}
    cols.update(fold=Value("int64"), len1=Value("int64"), len2=Value("int64"), video_audio=Value("bool"), **media)
    return Features(cols)
