"""OOD sync sets (VGGSoundSync style): clips of known offset -> sync items -> judge -> the same Shift metrics."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.signal import correlate

from omniaudit.cli import main
from omniaudit.data_builders.interventions import SyntheticClipSpec, media, synthesize_clips
from omniaudit.data_builders.interventions.ood_sync import (
    build_ood_sync_dataset,
    parse_offset_name,
    read_offset_clips,
    render_offset_clips,
)
from omniaudit.errors import InputError

OFFSETS = (0.0, 0.3, 1.5, -1.5)  # 0.3 s lies within the 0.5 s tolerance: "synchronized"


@pytest.fixture(scope="module")
def ood_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("ood")
    manifest = synthesize_clips(root / "src", SyntheticClipSpec(n_clips=2, duration=5.0, width=96, height=64))
    render_offset_clips(manifest, root / "clips", OFFSETS)
    return root


@pytest.fixture(scope="module")
def ood_dataset(ood_folder):
    return build_ood_sync_dataset(ood_folder / "ds", ood_folder / "clips")


def test_rendered_clips_carry_their_offset_and_the_copied_video(ood_folder):
    clips = ood_folder / "clips"
    synced, late = clips / "clip000_ball__off+0.00.mp4", clips / "clip000_ball__off+1.50.mp4"
    assert media.video_packets(synced) == media.video_packets(ood_folder / "src" / "clip000_ball.mp4")
    a, rate, _ = media.decode_audio(synced, channels=1)
    b, _, _ = media.decode_audio(late, channels=1)
    n = min(a.shape[1], b.shape[1])
    xc = correlate(b[0, :n].astype(np.float64), a[0, :n].astype(np.float64), mode="full", method="fft")
    assert (np.argmax(xc) - (n - 1)) / rate == pytest.approx(1.5, abs=0.01)  # the audio lags by the named offset


def test_items_follow_offset_and_tolerance(ood_dataset):
    diag = pd.read_parquet(next((ood_dataset / "diagnostic").glob("*.parquet"))).drop(columns="video")
    assert len(diag) == 8 and set(diag["dimension"]) == {"sync"} and diag["source_id"].nunique() == 2
    by = diag.set_index("video_id")
    assert by.loc["clip000_ball__off+0.30", "intervention"] == "original"  # |0.3| <= 0.5: synchronized
    assert bool(by.loc["clip000_ball__off+0.30", "target_synced"]) and by.loc["clip000_ball__off+0.30",
                                                                               "offset_s"] == 0.3
    late, early = by.loc["clip000_ball__off+1.50"], by.loc["clip001_pot__off-1.50"]
    assert (late["intervention"], late["target_direction"], late["target_offset_s"]) == ("shift", "delay", 1.5)
    assert (early["target_direction"], bool(early["target_synced"])) == ("early", False)
    assert "delayed by about 1.5 s" in late["gold"]
    build = json.loads((ood_dataset / "build_info.json").read_text())
    assert (build["in_sync"], build["offset"], build["sources"]) == (4, 4, 2)


def test_stricter_tolerance_moves_small_offsets_to_shift(ood_folder, tmp_path):
    out = build_ood_sync_dataset(tmp_path / "strict", ood_folder / "clips", tolerance_s=0.1)
    diag = pd.read_parquet(next((out / "diagnostic").glob("*.parquet")), columns=["video_id", "intervention"])
    assert (diag["intervention"] == "shift").sum() == 6


@pytest.mark.parametrize("judge,orig,interv,blind", [("scripted:oracle", 100.0, 100.0, 0.0),
                                                      ("scripted:deaf", 100.0, 0.0, 1.0)])
def test_judge_and_audit_end_to_end(ood_dataset, tmp_path, judge, orig, interv, blind):
    preds = tmp_path / "p.jsonl"
    assert main(["judge", "--dataset", str(ood_dataset), "--config", "diagnostic", "--judge", judge,
                 "--out", str(preds)]) == 0
    assert main(["audit", "interventions", "--dataset", str(ood_dataset), "--predictions", str(preds),
                 "--out", str(tmp_path / "rep"), "--n-resamples", "100"]) == 0
    res = json.loads((tmp_path / "rep" / "audit.json").read_text())
    sync = res["dimensions"]["sync"]
    assert (sync["orig"], sync["interv"], sync["paired"]) == (orig, interv, True)
    assert sync["n"] == {"orig": 4, "interv": 4} and res["failure_modes"]["offset_blindness"] == blind
    assert res["avg_gap"] is None  # eq. 10 needs all three dimensions


def test_unpaired_clips_are_scored_over_all_clips(ood_folder, tmp_path, capsys):
    """A manifest whose clips are independent sources (no source has both conditions): unpaired, every clip kept."""
    clips = sorted((ood_folder / "clips").glob("*.mp4"))
    rows = [{"file": f"clips/{c.name}", "offset_s": parse_offset_name(c)[1], "source_id": c.stem} for c in clips]
    manifest = ood_folder / "offsets.csv"
    pd.DataFrame(rows).to_csv(manifest, index=False)
    out = tmp_path / "ds"
    assert main(["build", "interventions", "--ood-sync", str(manifest), "--out", str(out)]) == 0
    assert "8 from 8 sources; 4 in sync" in capsys.readouterr().out
    diag = pd.read_parquet(next((out / "diagnostic").glob("*.parquet")), columns=["id", "target_synced"])
    # a model that answers "synchronized" on the first clip of each condition, nothing parseable elsewhere
    answers = {i: ("The audio is synchronized." if k % 2 == 0 else "") for k, i in enumerate(diag["id"])}
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": i, "response": r}) + "\n" for i, r in answers.items()))
    assert main(["audit", "interventions", "--dataset", str(out), "--predictions", str(preds),
                 "--out", str(tmp_path / "rep"), "--n-resamples", "100"]) == 0
    res = json.loads((tmp_path / "rep" / "audit.json").read_text())
    sync = res["dimensions"]["sync"]
    said = diag["id"].map(lambda i: bool(answers[i]))
    expect_orig = 100 * (said & diag["target_synced"]).sum() / diag["target_synced"].sum()
    assert sync["paired"] is False and sync["n"] == {"orig": 4, "interv": 4} and sync["orig"] == expect_orig
    assert sync["interv"] == 0.0  # "synchronized" on an offset clip, or no answer: never right
    assert res["n_source_clips"] == 8 and "Unpaired: Temporal sync" in (tmp_path / "rep" / "report.md").read_text()
    assert res["coverage"]["sync"]["parsed"]["value"] == 0.5  # empty answers are unparsed, not findings


def test_bad_inputs_name_the_file(tmp_path):
    (tmp_path / "clip.mp4").write_bytes(b"")
    with pytest.raises(InputError, match="NAME__off"):
        read_offset_clips(tmp_path)
    bad = tmp_path / "m.csv"
    bad.write_text("file,offset_s\nclip.mp4,soon\n")
    with pytest.raises(InputError, match="offset in seconds") as exc:
        read_offset_clips(bad)
    assert "row 1" in str(exc.value) or exc.value.row == 1
    assert parse_offset_name(tmp_path / "dog__off-0.40.mp4") == ("dog", -0.4)
    assert parse_offset_name(tmp_path / "dog.mp4") is None
