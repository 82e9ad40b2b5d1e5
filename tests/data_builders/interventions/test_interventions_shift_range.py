"""``--shift-range A B``: one Shift per clip with Δ drawn (seeded by the build's seed and the clip id) from [A, B]."""

import hashlib
import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from media_clips import noise_audio, write_clip

from omniaudit.data_builders.interventions import InterventionBuildOptions, build_interventions_dataset, media
from omniaudit.data_builders.interventions.build import merge_shards
from omniaudit.data_builders.interventions.plan import draw_shifts
from omniaudit.errors import InputError

SECONDS = 4.0


def table(folder, config, columns=None):
    return pq.read_table(sorted((folder / config).glob("*.parquet")), columns=columns).to_pandas()


def replay(clip_id, seed, ranges, fixed=()):
    """The documented rule, by hand: one generator per clip, rng([seed, sha1 words 1-2, 0x5348]); per range in order
    Δ = round(Uniform[A, B], 2), drawn again while it is 0 or an offset the clip already has."""
    h = hashlib.sha1(clip_id.encode()).hexdigest()
    rng = np.random.default_rng([seed, int(h[:8], 16), int(h[8:16], 16), 0x5348])
    used, out = {f"{u:+.2f}" for u in fixed}, []
    for a, b in ranges:
        while True:
            offset = round(float(rng.uniform(a, b)), 2)
            if offset != 0 and f"{offset:+.2f}" not in used:
                break
        used.add(f"{offset:+.2f}")
        out.append(offset)
    return out


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    d = tmp_path_factory.mktemp("clips")
    for i, k in enumerate("abcd"):
        write_clip(d / f"{k}.mp4", seconds=SECONDS, audio=noise_audio(SECONDS, i))
    return d


def manifest(folder, audio_times):
    path = folder / "manifest.jsonl"
    path.write_text("".join(json.dumps({"id": k, "video": str(folder / f"{k}.mp4"), "category": k, "audio_time": t})
                            + "\n" for k, t in audio_times.items()))
    return path


def test_draws_follow_the_documented_rule_and_do_not_depend_on_order_or_shard():
    ranges = ((-3.0, 3.0), (0.5, 1.5))
    options = InterventionBuildOptions(shifts=(-2.0, 2.0), shift_ranges=ranges, seed=7)
    for clip in ("a", "clip/01", "zzz"):
        drawn = draw_shifts(clip, options)
        assert [d[0] for d in drawn] == replay(clip, 7, ranges, fixed=(-2.0, 2.0))
        assert [d[1] for d in drawn] == list(ranges)
        assert -3.0 <= drawn[0][0] <= 3.0 and 0.5 <= drawn[1][0] <= 1.5
        assert all(round(d[0], 2) == d[0] and f"{d[0]:+.2f}" not in ("-2.00", "+2.00") for d in drawn)
        assert draw_shifts(clip, options) == drawn  # a pure function of (seed, clip id, options): no order, no shard
    seven = [draw_shifts(c, InterventionBuildOptions(shift_ranges=ranges[:1], seed=7))[0][0] for c in "abcdef"]
    eight = [draw_shifts(c, InterventionBuildOptions(shift_ranges=ranges[:1], seed=8))[0][0] for c in "abcdef"]
    assert seven != eight and len(set(seven)) > 1  # the seed and the clip id both matter


def test_a_draw_never_repeats_a_fixed_offset_or_rounds_to_zero():
    # [1.995, 2.014] rounds to 2.00 or 2.01; 2.00 is fixed, so every clip must land on 2.01
    options = InterventionBuildOptions(shifts=(2.0,), shift_ranges=((1.995, 2.014),))
    assert {draw_shifts(c, options)[0][0] for c in "abcdefgh"} == {2.01}
    # [-0.012, 0.004] rounds to -0.01 or 0.00; zero is the Original, so every clip gets -0.01
    options = InterventionBuildOptions(shifts=(), shift_ranges=((-0.012, 0.004),))
    assert {draw_shifts(c, options)[0][0] for c in "abcdefgh"} == {-0.01}


@pytest.mark.parametrize(("ranges", "shifts", "match"), [
    (((2.0, 1.0),), (-2.0,), "needs A < B"),
    (((1.0, 1.0),), (-2.0,), "needs A < B"),
    (((float("nan"), 1.0),), (-2.0,), "finite"),
    (((0.001, 0.004),), (-2.0,), "holds no non-zero offset at 0.01 s"),
    (((1.995, 2.004),), (2.0,), "not already a fixed --shift"),
    (((1.0,),), (-2.0,), "two numbers"),
    ((), (), "at least one shift"),
])
def test_bad_ranges_are_refused_up_front(ranges, shifts, match):
    with pytest.raises(InputError, match=match):
        InterventionBuildOptions(shifts=shifts, shift_ranges=ranges)


def test_build_with_drawn_offsets_hand_checked(clips, tmp_path):
    """Four 4 s clips with sounds at 0.5, 1.5, 2.5 and 3.5 s, Δ ~ U[-3, 3] per clip plus the fixed +1 s: each Shift
    exists exactly when the sound stays inside the clip (0 <= t + Δ < 4): fixed +1 skips d, the draws skip d."""
    times = {"a": 0.5, "b": 1.5, "c": 2.5, "d": 3.5}
    seed = 0
    expected = {k: replay(k, seed, [(-3.0, 3.0)], fixed=(1.0,))[0] for k in times}
    # pinned: at seed 0 the draws are these; d's sound would land at 3.5 + 2.90 = 6.4 s, past the 4 s clip
    assert expected == {"a": 2.53, "b": -0.99, "c": -1.43, "d": 2.9}
    kept = {"a": True, "b": True, "c": True, "d": False}  # 0 <= t + Δ < 4 by hand
    options = InterventionBuildOptions(shifts=(1.0,), shift_ranges=((-3.0, 3.0),), seed=seed)
    out = build_interventions_dataset(tmp_path / "ds", manifest(clips, times), options)
    d = table(out, "diagnostic", ["id", "source_id", "intervention", "offset_s", "target_direction",
                                  "target_offset_s", "video"])
    shifts = d[d["intervention"] == "shift"]
    fixed_kept = {k for k, t in times.items() if t + 1.0 < SECONDS}
    for k in times:
        offsets = sorted(shifts.loc[shifts["source_id"] == k, "offset_s"])
        want = sorted(([1.0] if k in fixed_kept else []) + ([expected[k]] if kept[k] else []))
        assert offsets == want, k
    drawn = shifts[shifts["offset_s"] != 1.0]
    assert all(f"/shift{o:+.2f}/" in i for i, o in zip(drawn["id"], drawn["offset_s"], strict=True))
    assert (drawn["target_direction"] == np.where(drawn["offset_s"] > 0, "delay", "early")).all()
    assert (drawn["target_offset_s"] == drawn["offset_s"]).all()
    assert d["id"].is_unique
    # the rendered audio is displaced by the drawn Δ (within one AAC frame)
    r = drawn.iloc[0]
    orig = d[(d["source_id"] == r["source_id"]) & (d["intervention"] == "original")].iloc[0]
    (tmp_path / "s.mp4").write_bytes(r["video"]["bytes"])
    (tmp_path / "o.mp4").write_bytes(orig["video"]["bytes"])
    y = media.timeline_audio(media.probe(tmp_path / "s.mp4"))[0][0]
    x = media.timeline_audio(media.probe(tmp_path / "o.mp4"))[0][0]
    rate = media.probe(tmp_path / "o.mp4").audio_rate
    lag = np.argmax(np.correlate(y, x, "full")) - (x.size - 1)
    assert abs(lag / rate - r["offset_s"]) <= 1024 / rate
    info = json.loads((out / "build_info.json").read_text())
    n_skipped = 1  # d
    assert info["skipped_shifts"].get("drawn in [-3.00, +3.00]") == n_skipped
    assert info["skipped_shifts"].get("+1.00") == 4 - len(fixed_kept)
    assert info["options"]["shift_ranges"] == [[-3.0, 3.0]]
    card = (out / "README.md").read_text()
    assert "Offsets drawn per clip (`--shift-range` [-3.0, 3.0] s" in card and f"{len(drawn)} Shift rows" in card
    assert "+1.00 (" in card and f"drawn in [-3.00, +3.00] s on {n_skipped} clip(s)" in card
    dpo = table(out, "dpo", ["id", "kind", "offset_s"])
    assert len(dpo[(dpo["kind"] == "ctp") & dpo["offset_s"].isin(drawn["offset_s"])]) == len(drawn)  # shifted side

    # byte-identical rebuild, and shards that merge into the same bytes
    again = build_interventions_dataset(tmp_path / "again", manifest(clips, times), options)
    for config in ("diagnostic", "sft", "dpo"):
        name = "train-00000-of-00001.parquet"
        assert (again / config / name).read_bytes() == (out / config / name).read_bytes()
    shards = [build_interventions_dataset(tmp_path / f"s{i}", manifest(clips, times), InterventionBuildOptions(
        shifts=(1.0,), shift_ranges=((-3.0, 3.0),), seed=seed, shard_index=i, shard_count=2)) for i in range(2)]
    merged = merge_shards(tmp_path / "merged", shards)
    a = table(merged, "diagnostic").sort_values("id").reset_index(drop=True)
    b = table(out, "diagnostic").sort_values("id").reset_index(drop=True)
    assert a.drop(columns="video").to_json() == b.drop(columns="video").to_json()
    assert json.loads((merged / "build_info.json").read_text())["skipped_shifts"] == info["skipped_shifts"]


def test_a_range_wider_than_a_clip_fails_naming_the_row(clips, tmp_path):
    with pytest.raises(InputError, match=r"shift range \[-1, 4\] s reaches offsets not shorter than clip 'a'") as e:
        build_interventions_dataset(tmp_path / "o", manifest(clips, {"a": 1.0, "b": 1.0}),
                                    InterventionBuildOptions(shift_ranges=((-1.0, 4.0),)))
    assert "row 1" in str(e.value) and not (tmp_path / "o").exists()


def test_cli_shift_range_without_fixed_offsets(clips, tmp_path, capsys):
    from omniaudit.cli import main

    m = manifest(clips, {"a": 2.0, "b": 2.0})
    assert main(["build", "interventions", "--manifest", str(m), "--out", str(tmp_path / "o"), "--shift",
                 "--shift-range", "-1.5", "-0.5", "--shift-range", "0.5", "1.5", "--seed", "3"]) == 0
    d = table(tmp_path / "o", "diagnostic", ["source_id", "intervention", "offset_s"])
    got = {k: sorted(g["offset_s"]) for k, g in d[d["intervention"] == "shift"].groupby("source_id")}
    assert got == {k: sorted(replay(k, 3, [(-1.5, -0.5), (0.5, 1.5)])) for k in "ab"}
    assert main(["build", "interventions", "--manifest", str(m), "--out", str(tmp_path / "p"), "--shift"]) == 2
    assert "at least one shift" in capsys.readouterr().err
