"""The intervention builder: manifest validation, agreement filter, configs, shards, resume, determinism."""

import json

import datasets
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from media_clips import noise_audio, write_clip

from omniaudit.data_builders.interventions import (
    InterventionBuildOptions,
    SyntheticClipSpec,
    build_interventions_dataset,
    media,
    read_manifest,
)
from omniaudit.data_builders.interventions.build import merge_shards
from omniaudit.errors import InputError

SPEC = SyntheticClipSpec(n_clips=6, width=96, height=64)


@pytest.fixture
def built(intervention_dataset, intervention_spec):
    assert intervention_spec == SPEC
    return intervention_dataset


def table(folder, config, columns=None):
    return pq.read_table(sorted((folder / config).glob("*.parquet")), columns=columns).to_pandas()


def test_configs_load_offline_with_features(built):
    diag = datasets.load_dataset(str(built), "diagnostic", split="train")
    dpo = datasets.load_dataset(str(built), "dpo", split="train")
    sft = datasets.load_dataset(str(built), "sft", split="train")
    assert isinstance(diag.features["video"], datasets.Video) and isinstance(dpo.features["video"], datasets.Video)
    assert len(diag) == 6 * 7 and len(sft) == len(diag)  # original x3 + shift x2 + mute + swap
    assert {"prompt", "chosen", "rejected", "video"} <= set(dpo.column_names)
    first = dpo.cast_column("video", datasets.Video(decode=False))[0]  # decoding needs torchcodec; bytes do not
    assert first["prompt"][0]["content"][0]["type"] == "video" and first["chosen"][0]["role"] == "assistant"
    assert first["video"]["bytes"][4:8] == b"ftyp"  # an embedded MP4
    assert not list(built.parent.glob(".ds.work-*"))  # the work folder is gone after success


def test_diagnostic_rows_and_targets(built):
    d = table(built, "diagnostic", ["id", "intervention", "dimension", "offset_s", "target_synced",
                                    "target_direction", "target_sound_present", "target_match", "source_id"])
    counts = d.groupby(["intervention", "dimension"]).size().to_dict()
    assert counts == {("original", "sync"): 6, ("original", "existence"): 6, ("original", "consistency"): 6,
                      ("shift", "sync"): 12, ("mute", "existence"): 6, ("swap", "consistency"): 6}
    shift = d[d["intervention"] == "shift"]
    assert (~shift["target_synced"].astype(bool)).all()
    assert (shift["target_direction"] == np.where(shift["offset_s"] > 0, "delay", "early")).all()
    assert not d.loc[d["intervention"] == "mute", "target_sound_present"].astype(bool).any()
    assert not d.loc[d["intervention"] == "swap", "target_match"].astype(bool).any()
    assert d["id"].is_unique


def test_every_written_clip_is_the_intervention_it_claims(built, tmp_path):
    d = table(built, "diagnostic", ["video_id", "source_id", "intervention", "offset_s", "partner_id", "video"])
    d = d.drop_duplicates("video_id")
    clips = {}
    for r in d.itertuples():
        path = tmp_path / f"{r.video_id.replace('/', '_')}.mp4"
        path.write_bytes(r.video["bytes"])
        clips[r.video_id] = (r, path)
    for r, path in clips.values():
        info = media.probe(path)
        audio, _ = media.timeline_audio(info)
        orig_path = clips[f"{r.source_id}/original"][1]
        orig, _ = media.timeline_audio(media.probe(orig_path))
        assert media.video_packets(path) == media.video_packets(orig_path)
        assert info.duration == pytest.approx(SPEC.duration)
        if r.intervention == "mute":
            assert np.abs(audio).max() == 0.0
        elif r.intervention == "shift":
            lag = np.argmax(np.correlate(audio[0], orig[0], "full")) - (orig.shape[1] - 1)
            assert abs(lag / info.audio_rate - r.offset_s) <= 1024 / info.audio_rate  # within one AAC frame
        elif r.intervention == "swap":
            partner, _ = media.timeline_audio(media.probe(clips[f"{r.partner_id}/original"][1]))
            assert np.corrcoef(audio[0], partner[0])[0, 1] > 0.95


def test_swap_partners_come_from_another_category(built):
    d = table(built, "diagnostic", ["source_id", "intervention", "partner_id", "category"])
    cat = d.drop_duplicates("source_id").set_index("source_id")["category"]
    swaps = d[d["intervention"] == "swap"]
    assert (swaps["partner_id"].map(cat).to_numpy() != swaps["category"].to_numpy()).all()


def test_dpo_pairs_cover_every_kind_and_chosen_differs_from_rejected(built):
    p = table(built, "dpo", ["id", "kind", "chosen", "rejected", "intervention", "perturbed_field"])
    assert p["id"].is_unique
    assert p["kind"].value_counts().to_dict() == {"ctp": 24, "shift": 12, "mute": 6, "swap": 6, "op": 6}
    text = lambda m: m[0]["content"][0]["text"]  # noqa: E731
    assert all(text(c) != text(r) for c, r in zip(p["chosen"], p["rejected"], strict=True))
    pairs = [(text(c), text(r)) for c, r in zip(p["chosen"], p["rejected"], strict=True)]
    assert len(set(pairs)) == len(pairs)  # no pair repeated under two kinds
    assert all("synchronized" not in text(r).split(":")[0] or "not" in text(r)
               for r in p.loc[p["kind"] == "shift", "rejected"])  # Shift rejects name the wrong direction
    ctp = p[p["kind"] == "ctp"]
    assert set(ctp["intervention"]) == {"original", "shift"}  # both assignments
    assert p.loc[p["kind"] == "op", "perturbed_field"].notna().all()


def test_card_reports_counts_and_codec(built):
    card = (built / "README.md").read_text()
    assert "config_name: dpo" in card and "| `diagnostic` | 42 |" in card and "copied packet for packet" in card


def test_same_seed_same_bytes_across_processes_and_resume(tmp_path, built, monkeypatch):
    parallel = build_interventions_dataset(tmp_path / "par", spec=SPEC, options=InterventionBuildOptions(num_proc=2))
    for config in ("diagnostic", "sft", "dpo"):
        name = "train-00000-of-00001.parquet"
        assert (parallel / config / name).read_bytes() == (built / config / name).read_bytes()
    # interrupt a build after a few clips were written, then run it again: same bytes as an uninterrupted build
    calls = {"n": 0}
    real = media.write_with_audio

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 9:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(media, "write_with_audio", flaky)
    with pytest.raises(KeyboardInterrupt):
        build_interventions_dataset(tmp_path / "resumed", spec=SPEC)
    assert not (tmp_path / "resumed").exists() and list(tmp_path.glob(".resumed.work-*"))
    monkeypatch.setattr(media, "write_with_audio", real)
    build_interventions_dataset(tmp_path / "resumed", spec=SPEC)
    for config in ("diagnostic", "sft", "dpo"):
        name = "train-00000-of-00001.parquet"
        assert (tmp_path / "resumed" / config / name).read_bytes() == (built / config / name).read_bytes()


def test_shards_are_disjoint_and_merge_into_the_full_build(tmp_path, built):
    shards = [build_interventions_dataset(tmp_path / f"s{i}", spec=SPEC,
                                          options=InterventionBuildOptions(shard_index=i, shard_count=3))
              for i in range(3)]
    ids = [set(table(s, "diagnostic", ["source_id"])["source_id"]) for s in shards]
    assert sum(map(len, ids)) == 6 and len(set().union(*ids)) == 6
    merged = merge_shards(tmp_path / "merged", shards)
    a = table(merged, "dpo").sort_values("id").reset_index(drop=True)
    b = table(built, "dpo").sort_values("id").reset_index(drop=True)
    assert a.drop(columns="video").to_json() == b.drop(columns="video").to_json()
    assert [v["bytes"] for v in a["video"]] == [v["bytes"] for v in b["video"]]
    assert (merged / "README.md").read_text().split("## Configs")[1] == (built / "README.md").read_text().split(
        "## Configs")[1]
    assert len(datasets.load_dataset(str(merged), "diagnostic", split="train")) == 42
    with pytest.raises(InputError, match="incomplete"):
        merge_shards(tmp_path / "partial", shards[:2])


def write_manifest(folder, rows, name="manifest.jsonl"):
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def two_clips(tmp_path):
    write_clip(tmp_path / "a.mp4", seconds=4.0, audio=noise_audio(4.0, 0))
    write_clip(tmp_path / "b.mp4", seconds=4.0, audio=noise_audio(4.0, 1))
    return tmp_path


def test_agreement_filter_keeps_and_rejects_with_reasons(two_clips):
    rows = [
        {"id": "a", "video": "a.mp4", "visual_time": 1.0, "visual_time_gpt": 1.5, "visual_time_claude": 1.7,
         "audio_time": 1.1, "audio_time_human": 1.4},
        {"id": "b", "video": "b.mp4", "visual_time": 1.0, "visual_time_gpt": 2.0, "audio_time": 1.0},
        {"id": "c", "video": "a.mp4", "visual_time": 2.0, "audio_time": 2.0, "audio_time_human": 2.6},
        {"id": "d", "video": "b.mp4", "visual_time_gpt": 1.0, "visual_time_claude": 1.4},
    ]
    m = read_manifest(write_manifest(two_clips, rows))
    assert list(m.clips["id"]) == ["a", "d"]
    assert m.clips.loc[m.clips["id"] == "d", "visual_time"].item() == pytest.approx(1.2)  # annotators' median
    assert m.clips.loc[m.clips["id"] == "a", "visual_time"].item() == 1.0  # the primary annotation
    reasons = {r["id"]: r["reason"] for r in m.rejected}
    assert reasons["b"].startswith("visual timestamps disagree: spread 1.00 s > 0.8 s")
    assert reasons["c"].startswith("audio timestamps disagree: spread 0.60 s > 0.5 s")
    assert m.summary()["rejected_by_reason"] == {"visual timestamps disagree": 1, "audio timestamps disagree": 1}


@pytest.mark.parametrize(("row", "match"), [
    ({"id": "a", "video": "../outside.mp4"}, "escapes the manifest's folder"),
    ({"id": "a", "video": "nope.mp4"}, "video file not found"),
    ({"id": "", "video": "a.mp4"}, "non-empty id"),
    ({"id": "a", "video": "a.mp4", "visual_time": "soon"}, "time in seconds"),
    ({"id": "a", "video": "a.mp4", "audio_time": -1}, "time in seconds"),
])
def test_manifest_errors_name_row_and_column(two_clips, row, match):
    with pytest.raises(InputError, match=match) as err:
        read_manifest(write_manifest(two_clips, [row]))
    assert "manifest.jsonl:row 1" in str(err.value)


def test_manifest_duplicates_and_missing_columns(two_clips):
    with pytest.raises(InputError, match="duplicate id") as err:
        read_manifest(write_manifest(two_clips, [{"id": "a", "video": "a.mp4"}, {"id": "a", "video": "b.mp4"}]))
    assert "row 2" in str(err.value)
    csv = two_clips / "m.csv"
    pd.DataFrame({"id": ["a"], "path": ["a.mp4"]}).to_csv(csv, index=False)
    with pytest.raises(InputError, match="missing column 'video'"):
        read_manifest(csv)


def test_absolute_paths_outside_the_folder_are_allowed(two_clips, tmp_path_factory):
    other = tmp_path_factory.mktemp("elsewhere")
    m = read_manifest(write_manifest(other, [{"id": "a", "video": str(two_clips / "a.mp4")}]))
    assert m.clips["video"].item() == str(two_clips / "a.mp4")


def test_unusable_clips_fail_or_are_recorded(two_clips, tmp_path):
    write_clip(two_clips / "silent.mp4", seconds=4.0, with_audio=False)
    rows = [{"id": "a", "video": "a.mp4", "category": "x"}, {"id": "b", "video": "b.mp4", "category": "y"},
            {"id": "s", "video": "silent.mp4", "category": "x"}]
    manifest = write_manifest(two_clips, rows)
    with pytest.raises(InputError, match="clip 's'.*no audio stream") as err:
        build_interventions_dataset(tmp_path / "out", manifest)
    assert "row 3" in str(err.value) and not (tmp_path / "out").exists()
    out = build_interventions_dataset(tmp_path / "out", manifest, InterventionBuildOptions(skip_invalid=True))
    assert set(table(out, "diagnostic", ["source_id"])["source_id"]) == {"a", "b"}
    assert "unusable media" in (out / "README.md").read_text()


def test_shifts_longer_than_the_clip_fail_and_shifts_moving_the_sound_out_are_skipped(two_clips, tmp_path):
    rows = [{"id": "a", "video": "a.mp4", "audio_time": 3.0}, {"id": "b", "video": "b.mp4", "audio_time": 1.0}]
    manifest = write_manifest(two_clips, rows)
    with pytest.raises(InputError, match="shift \\+5 s is not shorter than clip 'a'"):
        build_interventions_dataset(tmp_path / "o", manifest, InterventionBuildOptions(shifts=(5.0,)))
    out = build_interventions_dataset(tmp_path / "o", manifest, InterventionBuildOptions(shifts=(-1.5, 1.5)))
    d = table(out, "diagnostic", ["source_id", "offset_s", "intervention"])
    shifted = d[d["intervention"] == "shift"].groupby("source_id")["offset_s"].apply(sorted).to_dict()
    assert shifted == {"a": [-1.5], "b": [1.5]}
    assert "+1.50 s on 1 clip(s)" in (out / "README.md").read_text()


def test_options_are_validated():
    with pytest.raises(InputError, match="non-zero"):
        InterventionBuildOptions(shifts=(0.0,))
    with pytest.raises(InputError, match="shard"):
        InterventionBuildOptions(shard_index=2, shard_count=2)


def test_a_resumed_build_never_reuses_a_swap_rendered_for_another_partner(two_clips, tmp_path, monkeypatch):
    write_clip(two_clips / "c.mp4", seconds=4.0, audio=noise_audio(4.0, 2))
    rows = [{"id": k, "video": f"{k}.mp4", "category": k} for k in ("a", "b", "c")]
    calls = {"n": 0}
    real = media.write_with_audio

    def interrupt_late(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 14:  # after the first clips' swaps were cached
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(media, "write_with_audio", interrupt_late)
    with pytest.raises(KeyboardInterrupt):
        build_interventions_dataset(tmp_path / "out", write_manifest(two_clips, rows))
    monkeypatch.setattr(media, "write_with_audio", real)
    out = build_interventions_dataset(tmp_path / "out", write_manifest(two_clips, rows[:2]))  # partners change
    d = table(out, "diagnostic", ["video_id", "intervention", "partner_id", "video"]).drop_duplicates("video_id")
    sources = {k: media.timeline_audio(media.probe(two_clips / f"{k}.mp4"))[0][0] for k in ("a", "b", "c")}
    for r in d[d["intervention"] == "swap"].itertuples():
        path = tmp_path / f"{r.video_id.replace('/', '_')}.mp4"
        path.write_bytes(r.video["bytes"])
        audio = media.timeline_audio(media.probe(path))[0][0]
        assert np.corrcoef(audio, sources[r.partner_id])[0, 1] > 0.95


def test_merge_refuses_shards_of_different_builds(tmp_path):
    a = build_interventions_dataset(tmp_path / "a", spec=SPEC, options=InterventionBuildOptions(shard_index=0,
                                                                                                shard_count=2))
    b = build_interventions_dataset(tmp_path / "b", spec=SPEC, options=InterventionBuildOptions(
        shard_index=1, shard_count=2, seed=5))
    with pytest.raises(InputError, match="other options"):
        merge_shards(tmp_path / "m", [a, b])
