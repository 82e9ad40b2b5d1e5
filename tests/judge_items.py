"""Items in the item contract for runner tests: tiny media and a small Hub-layout dataset (config `mixed`: every
modality, closed and free-form; config `table`: no item columns)."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
import soundfile as sf
import yaml
from media_clips import noise_audio, write_clip

EMOTIONS = "Which emotion does the speaker express? Answer with exactly one of: angry, sad."


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _flac(seed: int) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, noise_audio(0.5, seed)[0], 16000, format="FLAC")
    return buf.getvalue()


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.full((32, 48, 3), 200, np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture(scope="session")
def media(tmp_path_factory):
    root = tmp_path_factory.mktemp("media")
    return {"audio": _flac(1), "audio2": _flac(2), "image": _png(),
            "video": write_clip(root / "clip.mp4", seconds=1.0, fps=10).read_bytes()}


@pytest.fixture(scope="session")
def mixed_dataset(tmp_path_factory, media):
    """Config `mixed`: closed audio / image / pairwise items, free-form video items (three questions on one clip, two
    with its soundtrack) and a text item, in the item contract (``condition``: the id's first part, silent_video for
    the video without its soundtrack); config `table`: no item columns."""
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    s = datasets.Value("string")
    features = datasets.Features({
        "id": s, "condition": s, "system": s, "prompt": s, "options": datasets.List(s), "media": datasets.List(s),
        "video_audio": datasets.Value("bool"), "order": s, "audio_1": datasets.Audio(), "audio_2": datasets.Audio(),
        "image": datasets.Image(), "video": datasets.Video()})

    def cell(data):
        return None if data is None else {"bytes": data, "path": None}

    def row(id, prompt, options=(), media_cols=(), video_audio=False, order=None, system=None, condition=None,
            **cells):
        out = {"id": id, "condition": condition or id.split("/")[0], "system": system, "prompt": prompt,
               "options": list(options), "media": list(media_cols), "video_audio": video_audio, "order": order}
        return out | {c: cell(cells.get(c)) for c in ("audio_1", "audio_2", "image", "video")}

    m = media
    rows = [
        row("audio/1", EMOTIONS, ["angry", "sad"], ["audio_1"], system="You are an expert audio judge.",
            audio_1=m["audio"]),
        row("image/1", "Is the picture bright? Answer with exactly one of: yes, no.", ["yes", "no"], ["image"],
            image=m["image"]),
        row("pair/1/AB", "Which clip is cleaner? Answer with A or B only.", ["A", "B"], ["audio_1", "audio_2"],
            order="AB", audio_1=m["audio"], audio_2=m["audio2"]),
        row("pair/1/BA", "Which clip is cleaner? Answer with A or B only.", ["A", "B"], ["audio_1", "audio_2"],
            order="BA", audio_1=m["audio2"], audio_2=m["audio"]),
        row("video/sync", "Is the audio synchronized with the video?", [], ["video"], True, video=m["video"]),
        row("video/sound", "Is there a sound?", [], ["video"], True, video=m["video"]),
        row("video/silent", "What happens in the video?", [], ["video"], False, condition="silent_video",
            video=m["video"]),
        row("text/1", "Name a colour. Answer with exactly one of: red, blue.", [], []),  # free-form despite the list
    ]
    root = tmp_path_factory.mktemp("mixed") / "ds"
    for config, table in (("mixed", pa.Table.from_pylist(rows, schema=features.arrow_schema)),
                          ("table", pa.table({"id": ["x"], "text": ["no prompt here"]}))):
        (root / config).mkdir(parents=True)
        pq.write_table(table, root / config / "train-00000-of-00001.parquet")
    card = {"configs": [{"config_name": c, "data_files": [{"split": "train", "path": f"{c}/train-*.parquet"}]}
                        for c in ("mixed", "table")]}
    (root / "README.md").write_text(f"---\n{yaml.safe_dump(card)}---\n")
    return root


