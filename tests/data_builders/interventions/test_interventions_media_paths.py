"""--media-mode paths: one copy of each clip under media/, load_dataset(folder, config) decodes, sealed by SHA-256;
and a loaded row's soundtrack decodes (torchcodec AudioDecoder) in both modes."""

import hashlib
import json
import os

import datasets
import numpy as np
import pandas as pd
import pytest
from scipy.signal import correlate

from omniaudit.data_builders.fingerprint import config_fingerprint
from omniaudit.data_builders.hub import sealed_fingerprints
from omniaudit.data_builders.interventions import InterventionBuildOptions, build_interventions_dataset
from omniaudit.data_builders.interventions.build import CONFIGS, merge_shards
from omniaudit.data_builders.media_store import (
    load_paths_config,
    soundtrack,
    verify_media,
)
from omniaudit.errors import InputError
from omniaudit.evaluation.interventions.audit import load_diagnostic


@pytest.fixture(scope="module")
def paths_dataset(tmp_path_factory, intervention_spec):
    """The session dataset's clips, built in path mode."""
    return build_interventions_dataset(tmp_path_factory.mktemp("paths") / "ds", spec=intervention_spec,
                                       options=InterventionBuildOptions(media_mode="paths"))


def folder_size(folder):
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def test_one_copy_of_each_clip_with_the_embedded_bytes(paths_dataset, intervention_dataset):
    clips = sorted((paths_dataset / "media").iterdir())
    embedded = pd.read_parquet(next((intervention_dataset / "diagnostic").glob("*.parquet")), columns=["id", "video"])
    rows = pd.read_parquet(paths_dataset / "diagnostic-train-00000-of-00001.parquet")
    assert rows["id"].tolist() == embedded["id"].tolist() and "video" not in rows.columns
    assert len(clips) == rows["video_file_name"].nunique() == 6 * 5  # original, 2 shifts, mute, swap per clip
    for (_, e), (_, p) in zip(embedded.iterrows(), rows.iterrows(), strict=True):  # the same bytes, stored once
        digest = hashlib.sha256(e["video"]["bytes"]).hexdigest()
        assert p["video_sha256"] == digest == hashlib.sha256((paths_dataset / p["video_file_name"]).read_bytes()
                                                             ).hexdigest()
    assert folder_size(paths_dataset) < 0.5 * folder_size(intervention_dataset)


def test_load_dataset_decodes_every_config_from_any_folder(paths_dataset, tmp_path):
    cwd = os.getcwd()
    os.chdir(tmp_path)  # relative names must resolve against the dataset, not the working folder
    try:
        for config in CONFIGS:
            ds = datasets.load_dataset(str(paths_dataset), config, split="train")
            video = ds[0]["video"]
            assert video.metadata.num_frames == 150 and video.get_frame_at(0).data.shape == (3, 64, 96)
    finally:
        os.chdir(cwd)
    assert len(load_paths_config(paths_dataset, "dpo")) == len(pd.read_parquet(
        paths_dataset / "dpo-train-00000-of-00001.parquet", columns=["id"]))
    assert load_diagnostic(paths_dataset).shape[0] == 42  # the audit reads the tables as before


def test_fingerprint_seals_the_clips(paths_dataset, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(paths_dataset, copy)
    assert sealed_fingerprints(copy)["sft"] == config_fingerprint(copy, "sft")
    assert verify_media(copy, "sft") == 30
    victim = sorted((copy / "media").iterdir())[3]
    victim.write_bytes(victim.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(InputError, match="changed after the build"):
        load_paths_config(copy, "diagnostic")
    victim.unlink()
    with pytest.raises(InputError, match="missing"):
        verify_media(copy, "dpo")


def test_sharded_paths_builds_merge(tmp_path, intervention_spec):
    shards = [build_interventions_dataset(tmp_path / f"s{i}", spec=intervention_spec, options=InterventionBuildOptions(
        media_mode="paths", shard_index=i, shard_count=2, shifts=(2.0,))) for i in range(2)]
    merged = merge_shards(tmp_path / "all", shards)
    ds = datasets.load_dataset(str(merged), "diagnostic", split="train")
    assert len(ds) == 6 * 3 + 6 * 2 + 6  # 6 clips: original x3, shift, mute, swap
    assert len(list((merged / "media").iterdir())) == 6 * 4 and verify_media(merged, "diagnostic") == 24


@pytest.mark.parametrize("mode", ["embed", "paths"])
def test_soundtrack_of_a_loaded_row(mode, intervention_dataset, paths_dataset):
    folder = intervention_dataset if mode == "embed" else paths_dataset
    ds = datasets.load_dataset(str(folder), "diagnostic", split="train")
    ds = ds.cast_column("video", datasets.Video(decode=False))
    rows = {r["video_id"]: i for i, r in enumerate(ds.select_columns(["video_id"])) if r["video_id"].startswith(
        "clip000")}
    original, rate = soundtrack(ds[rows["clip000_ball/original"]]["video"])
    shifted, rate2 = soundtrack(ds[rows["clip000_ball/shift+2.00"]]["video"])
    muted, _ = soundtrack(ds[rows["clip000_ball/mute"]]["video"])
    assert rate == rate2 == 16000 and original.shape[0] == 1
    assert np.abs(muted).max() < 1e-4 < np.abs(original).max()
    n = min(original.shape[1], shifted.shape[1])
    xc = correlate(shifted[0, :n].astype(np.float64), original[0, :n].astype(np.float64), "full", "fft")
    assert (np.argmax(xc) - (n - 1)) / rate == pytest.approx(2.0, abs=0.01)
    decoded = datasets.load_dataset(str(folder), "diagnostic", split="train")[rows["clip000_ball/original"]]["video"]
    again, _ = soundtrack(decoded)  # the decoded clip (torchcodec VideoDecoder) works too
    assert np.array_equal(again, original)
    resampled, r8 = soundtrack(ds[rows["clip000_ball/original"]]["video"], sample_rate=8000)
    assert r8 == 8000 and abs(resampled.shape[1] - original.shape[1] / 2) <= 2


def test_judge_and_audit_read_a_paths_dataset(paths_dataset, intervention_dataset, tmp_path):
    """`omniaudit judge` and `audit interventions` on the path-mode build answer and score exactly as on the embedded
    one (the same items, the same clips), and `push`'s folder check accepts it."""
    from omniaudit.cli import main
    from omniaudit.data_builders.hub import check_dataset_folder

    assert set(check_dataset_folder(paths_dataset)) >= {"diagnostic", "sft", "dpo"}
    scores = {}
    for name, folder in (("paths", paths_dataset), ("embed", intervention_dataset)):
        pred = tmp_path / f"{name}.jsonl"
        assert main(["judge", "--dataset", str(folder), "--config", "diagnostic", "--judge", "scripted:deaf",
                     "--out", str(pred)]) == 0
        assert main(["audit", "interventions", "--dataset", str(folder), "--predictions", str(pred),
                     "--n-resamples", "50", "--out", str(tmp_path / f"audit-{name}")]) == 0
        scores[name] = json.loads((tmp_path / f"audit-{name}" / "audit.json").read_text())
    assert scores["paths"]["avg_gap"] == scores["embed"]["avg_gap"] > 0
    # scripted:deaf never opens a clip: the items a real judge reads must be the same clips, with their soundtrack
    from omniaudit.runners import load_items

    paths, embed = load_items(paths_dataset, "diagnostic"), load_items(intervention_dataset, "diagnostic")
    assert [i.id for i in paths] == [i.id for i in embed] and len(paths) == 42
    for a, b in zip(paths, embed, strict=True):
        assert [(m.kind, m.with_audio) for m in a.media] == [(m.kind, m.with_audio) for m in b.media] == [
            ("video", True)]
        assert a.media[0].data == b.media[0].data and a.prompt == b.prompt


def test_sp_pairs_from_a_paths_dataset_embed_their_clips(paths_dataset, intervention_dataset, tmp_path):
    """SP pairs of a path-mode build carry the clip bytes (not the source folder's absolute path): they load after
    the source folder is gone, byte-identical to the embedded build's clips."""
    import shutil

    from thud_helpers import ShortcutPolicy

    from omniaudit.data_builders.hub import load_hub_dataset
    from omniaudit.data_builders.interventions.sp_pairs import build_sp_pairs

    source = tmp_path / "source"
    shutil.copytree(paths_dataset, source)
    summary = build_sp_pairs(tmp_path / "sp", source, ShortcutPolicy())
    shutil.rmtree(source)
    pairs = load_hub_dataset(tmp_path / "sp", "dpo").cast_column("video", datasets.Video(decode=False))
    embedded = load_hub_dataset(intervention_dataset, "diagnostic").cast_column("video", datasets.Video(decode=False))
    clip_of = {i: v["bytes"] for i, v in zip(embedded["id"], embedded["video"], strict=True)}
    assert len(pairs) == summary["pairs"] == 24
    for row in pairs:
        item = row["id"].rsplit("/sp/", 1)[0]
        assert row["video"]["bytes"] == clip_of[item] and "/" not in row["video"]["path"]
