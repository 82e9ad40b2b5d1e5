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

OFFSETS = (0.0, 0.3, 1.5, -1.5)  # 0.3 s is nonzero: a shift by default, "synchronized" only with --sync-tolerance


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


def test_items_follow_offset_and_any_nonzero_offset_is_a_shift(ood_dataset):
    """The paper scores VGGSoundSync so that any nonzero offset is a shift: a 0.3 s clip is "not synchronized"."""
    diag = pd.read_parquet(next((ood_dataset / "diagnostic").glob("*.parquet"))).drop(columns="video")
    assert len(diag) == 8 and set(diag["dimension"]) == {"sync"} and diag["source_id"].nunique() == 2
    by = diag.set_index("video_id")
    small = by.loc["clip000_ball__off+0.30"]
    assert (small["intervention"], bool(small["target_synced"]), small["target_direction"]) == ("shift", False,
                                                                                                "delay")
    assert small["target_offset_s"] == small["offset_s"] == 0.3
    late, early = by.loc["clip000_ball__off+1.50"], by.loc["clip001_pot__off-1.50"]
    assert (late["intervention"], late["target_direction"], late["target_offset_s"]) == ("shift", "delay", 1.5)
    assert (early["target_direction"], bool(early["target_synced"])) == ("early", False)
    assert "delayed by about 1.5 s" in late["gold"]
    assert set(by.index[by["intervention"] == "original"]) == {"clip000_ball__off+0.00", "clip001_pot__off+0.00"}
    build = json.loads((ood_dataset / "build_info.json").read_text())
    assert (build["in_sync"], build["offset"], build["sources"], build["tolerance_s"]) == (2, 6, 2, 0.0)
    assert "only a zero offset is synchronized" in (ood_dataset / "README.md").read_text()


def test_an_explicit_sync_tolerance_is_opt_in_and_stated(ood_folder, tmp_path, capsys):
    out = tmp_path / "tol"
    assert main(["build", "interventions", "--ood-sync", str(ood_folder / "clips"), "--sync-tolerance", "0.5",
                 "--out", str(out)]) == 0
    assert "4 in sync, 4 offset: |offset| <= 0.5 s is synchronized" in capsys.readouterr().out
    diag = pd.read_parquet(next((out / "diagnostic").glob("*.parquet")), columns=["video_id", "intervention"])
    assert diag.set_index("video_id").loc["clip000_ball__off+0.30", "intervention"] == "original"
    assert "|offset| <= 0.5 s is synchronized (an explicit sync tolerance" in (out / "README.md").read_text()
    strict = build_ood_sync_dataset(tmp_path / "strict", ood_folder / "clips", tolerance_s=0.1)
    diag = pd.read_parquet(next((strict / "diagnostic").glob("*.parquet")), columns=["intervention"])
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
    assert sync["rows"] == {"paired": 8, "unpaired": 0, "left_out": 0}
    assert sync["n"] == {"orig": 2, "interv": 6} and res["failure_modes"]["offset_blindness"] == blind
    assert res["avg_gap"] is None  # eq. 10 needs all three dimensions
    assert res["ood_sync"] == {"in_sync_max_abs_offset_s": 0.0}
    assert "only clips with a zero offset are synchronized" in (tmp_path / "rep" / "report.md").read_text()


def test_unpaired_clips_are_scored_over_all_clips(ood_folder, tmp_path, capsys):
    """A manifest whose clips are independent sources (no source has both conditions): unpaired, every clip kept."""
    clips = sorted((ood_folder / "clips").glob("*.mp4"))
    rows = [{"file": f"clips/{c.name}", "offset_s": parse_offset_name(c)[1], "source_id": c.stem} for c in clips]
    manifest = ood_folder / "offsets.csv"
    pd.DataFrame(rows).to_csv(manifest, index=False)
    out = tmp_path / "ds"
    assert main(["build", "interventions", "--ood-sync", str(manifest), "--out", str(out)]) == 0
    assert "8 from 8 sources; 2 in sync" in capsys.readouterr().out
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
    assert sync["paired"] is False and sync["n"] == {"orig": 2, "interv": 6} and sync["orig"] == expect_orig
    assert sync["rows"] == {"paired": 0, "unpaired": 8, "left_out": 0}
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


def test_sources_are_paired_one_by_one(ood_folder, tmp_path):
    """Review repro (m5): source A has an in-sync and an offset clip, B only an in-sync one, C-G only offset clips.
    Every clip is scored: A's rows paired, the others unpaired (the paired rule used to drop B's in-sync clip while
    calling the dimension paired)."""
    names = {"A": ["clip000_ball__off+0.00", "clip000_ball__off+1.50"], "B": ["clip001_pot__off+0.00"],
             "C": ["clip001_pot__off+0.30"], "D": ["clip001_pot__off+1.50"], "E": ["clip001_pot__off-1.50"],
             "F": ["clip000_ball__off-1.50"], "G": ["clip000_ball__off+0.30"]}
    rows = [{"file": f"clips/{n}.mp4", "offset_s": parse_offset_name(ood_folder / f"{n}.mp4")[1], "source_id": s}
            for s, stems in names.items() for n in stems]
    manifest = ood_folder / "mixed.csv"
    pd.DataFrame(rows).to_csv(manifest, index=False)
    out = build_ood_sync_dataset(tmp_path / "ds", manifest)
    # right on A's in-sync clip, wrong on B's; every offset clip called delayed (right on the + offsets only)
    answers = {"clip000_ball__off+0.00/sync": "The audio is synchronized.",
               "clip001_pot__off+0.00/sync": "Not synchronized: the audio is delayed."}
    diag = pd.read_parquet(next((out / "diagnostic").glob("*.parquet")), columns=["id", "offset_s"])
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": i, "response": answers.get(i, "Not synchronized: the audio is "
                                                                               "delayed.")}) + "\n"
                             for i in diag["id"]))
    assert main(["audit", "interventions", "--dataset", str(out), "--predictions", str(preds),
                 "--out", str(tmp_path / "rep"), "--n-resamples", "50"]) == 0
    sync = json.loads((tmp_path / "rep" / "audit.json").read_text())["dimensions"]["sync"]
    shifted = diag[diag["offset_s"] != 0]
    assert sync["n"] == {"orig": 2, "interv": 6} and sync["orig"] == 50.0
    assert sync["interv"] == pytest.approx(100 * (shifted["offset_s"] > 0).mean())
    assert sync["paired"] is False and sync["rows"] == {"paired": 2, "unpaired": 6, "left_out": 0}
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "6 of 8 rows come from sources without both conditions" in report
    assert "source_id clusters" in report and "its own bootstrap cluster" not in report


def test_a_manifest_offset_must_agree_with_the_file_name(ood_folder):
    bad = ood_folder / "contradicts.csv"
    bad.write_text("file,offset_s\nclips/clip000_ball__off+0.00.mp4,0\nclips/clip000_ball__off+1.50.mp4,-1.5\n")
    with pytest.raises(InputError, match=r"contradicts the offset in the file name \(\+1.5 s") as exc:
        read_offset_clips(bad)
    assert exc.value.row == 2 and exc.value.column == "offset_s"
    fine = ood_folder / "agrees.csv"
    fine.write_text("file,offset_s\nclips/clip000_ball__off+1.50.mp4,1.503\nclips/clip000_ball__off+0.00.mp4,0\n")
    assert [c.offset_s for c in read_offset_clips(fine)] == [1.503, 0.0]  # the name gives 0.01 s


@pytest.mark.parametrize("flags", [["--media-mode", "paths"], ["--shard", "0/2"], ["--shift", "1"],
                                   ["--skip-invalid"], ["--shift-range", "0.5", "3"], ["--audio-codec", "alac"]])
def test_options_an_ood_build_would_ignore_are_refused(ood_folder, tmp_path, capsys, flags):
    assert main(["build", "interventions", "--ood-sync", str(ood_folder / "clips"), *flags,
                 "--out", str(tmp_path / "o")]) == 2
    assert f"{flags[0]} does not apply to --ood-sync" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_sync_tolerance_without_ood_sync_is_refused(tmp_path, capsys):
    assert main(["build", "interventions", "--clips", "2", "--sync-tolerance", "0.5", "--out",
                 str(tmp_path / "o")]) == 2
    assert "--sync-tolerance applies only to --ood-sync" in capsys.readouterr().err
