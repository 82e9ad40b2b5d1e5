"""Omni ODIN on a preference set where one pair's clip is audio only crashed while building its own
error message (``'NoneType' object has no attribute 'get'``); the message now names the pair and its clip."""

from __future__ import annotations

import re

import pytest

from omniaudit.cli import main as omniaudit
from omniaudit.errors import InputError


@pytest.fixture(scope="module")
def mixed_clips(tmp_path_factory):
    """10 pairs with a video + audio clip each, except pair 2 whose clip is a WAV file (audio only)."""
    import soundfile as sf
    from media_clips import noise_audio, write_clip

    from omniaudit.data_builders.preference import SyntheticSpec, synthesize
    from omniaudit.data_builders.preference.read import COLUMNS

    root = tmp_path_factory.mktemp("odin_audio_only")
    raw = synthesize(SyntheticSpec(n_pairs=10, seed=1, same_rate=0.0))[list(COLUMNS)]
    raw.to_csv(root / "pairs.csv", index=False)
    media = root / "media"
    media.mkdir()
    for i, name in enumerate(raw["name"]):
        if i == 2:
            sf.write(str(media / f"{name}.wav"), noise_audio(2.0, seed=i)[0], 16000, format="WAV")
        else:
            write_clip(media / f"{name}.mp4", seconds=2.0, fps=4, size=(56, 56), audio=noise_audio(2.0, seed=i))
    assert omniaudit(["build", "preference", "--data", str(root / "pairs.csv"), "--media", str(media), "--out",
                      str(root / "ds")]) == 0
    return root / "ds", raw["name"][2]


def test_omni_odin_names_the_audio_only_pair(mixed_clips, tmp_path):
    from transformers import TrainingArguments
    from trl import ModelConfig

    from omniaudit.training.common import DataArguments
    from omniaudit.training.reward_odin import OdinArguments, main

    ds, name = mixed_clips
    data = DataArguments(dataset_name=str(ds), dataset_config="pairs_media")
    args = TrainingArguments(output_dir=str(tmp_path / "odin"), report_to="none", use_cpu=True)
    with pytest.raises(InputError) as err:  # before any model is loaded (the model path does not exist)
        main(data, args, ModelConfig(model_name_or_path=str(tmp_path / "no_model")), OdinArguments())
    message = str(err.value)
    assert re.search(rf"row \d+ \(id '{name}[^']*'\) has no video: its clip is audio only \(column 'audio'\)", message)
    assert "Omni ODIN feeds video clips with their audio track" in message


def test_media_column_says_where_the_clip_is(mixed_clips):
    import datasets

    from omniaudit.training.common import media_column

    ds, name = mixed_clips
    pairs = datasets.load_dataset(str(ds), "pairs_media", split="train")
    with pytest.raises(InputError, match=r"has no video: its clip is audio only \(column 'audio'\); every row needs "
                                         r"a video"):
        media_column(pairs)
    videos = pairs.filter(lambda r: r["video"] is not None)  # leaving the audio-only pair out trains
    out, column = media_column(videos)
    assert column == "video" and len(out) == len(pairs) - 1
