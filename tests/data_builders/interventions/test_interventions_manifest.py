"""An interventions manifest column the builder does not know was silently ignored: ``audio_tme`` (a typo)
left the sound's time unknown, so no Shift was checked against it. A near miss of a known column and a media-like
column are errors; other columns are counted in the manifest summary (build info) with a warning."""

from __future__ import annotations

import json

import pytest
from media_clips import noise_audio, write_clip

from omniaudit.data_builders.interventions.manifest import read_manifest
from omniaudit.errors import InputError


def manifest(folder, rows):
    path = folder / "manifest.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def clips(tmp_path):
    write_clip(tmp_path / "a.mp4", seconds=3.0, fps=10, size=(64, 48), audio=noise_audio(3.0, 0))
    write_clip(tmp_path / "b.mp4", seconds=3.0, fps=10, size=(64, 48), audio=noise_audio(3.0, 1))
    return tmp_path


@pytest.mark.parametrize(("column", "suggestion"), [("audio_tme", "audio_time"), ("visual_tim", "visual_time"),
                                                    ("catgory", "category"), ("Video_", "video"),
                                                    ("discrad", "discard")])
def test_a_near_miss_names_the_column_it_resembles(clips, column, suggestion):
    path = manifest(clips, [{"id": "a", "video": "a.mp4", "category": "x", column: 2.9},
                            {"id": "b", "video": "b.mp4", "category": "y"}])
    with pytest.raises(InputError, match=rf"unknown column '{column}': did you mean '{suggestion}'\?") as err:
        read_manifest(path)
    assert "manifest.jsonl" in str(err.value)


@pytest.mark.parametrize("column", ["audio", "image", "video_path", "clip", "wav"])
def test_a_media_like_column_is_refused(clips, column):
    path = manifest(clips, [{"id": "a", "video": "a.mp4", column: "a.wav"}, {"id": "b", "video": "b.mp4"}])
    with pytest.raises(InputError, match=rf"unknown media column '{column}': this builder reads each clip from the "
                                         r"'video' column"):
        read_manifest(path)


def test_other_columns_are_counted_and_annotator_columns_are_known(clips):
    path = manifest(clips, [{"id": "a", "video": "a.mp4", "audio_time": 1.0, "audio_time_human": 1.1,
                             "annotation_gpt": "{}", "visual_event_gpt": "falls", "license": "cc-by",
                             "reply_gem": "1.2 s"},
                            {"id": "b", "video": "b.mp4"}])
    with pytest.warns(UserWarning, match=r"\['license', 'reply_gem'\] are not read"):
        m = read_manifest(path)
    assert m.summary()["ignored_columns"] == ["license", "reply_gem"]
    assert m.clips.set_index("id").loc["a", "audio_time"] == 1.0


def test_the_ignored_columns_reach_the_build_info(clips, tmp_path):
    from omniaudit.data_builders.interventions import InterventionBuildOptions, build_interventions_dataset

    path = manifest(clips, [{"id": "a", "video": "a.mp4", "category": "x", "audio_time": 1.0, "note": "ok"},
                            {"id": "b", "video": "b.mp4", "category": "y", "audio_time": 1.0}])
    with pytest.warns(UserWarning, match="not read"):
        out = build_interventions_dataset(tmp_path / "ds", path, InterventionBuildOptions(shifts=(1.0,)))
    info = json.loads((out / "build_info.json").read_text())
    assert info["manifest"]["ignored_columns"] == ["note"]
