"""The intervention builder: manifest validation, agreement filter, configs, shards, resume, determinism."""

import json
import re

import datasets
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from media_clips import layout_audio, noise_audio, write_av, write_clip, write_image, write_truncated

from omniaudit.data_builders.interventions import (
    InterventionBuildOptions,
    SyntheticClipSpec,
    answers,
    build_interventions_dataset,
    media,
    read_manifest,
)
from omniaudit.data_builders.interventions.build import merge_shards, plan_clips, summarize
from omniaudit.errors import InputError
from omniaudit.runners.items import check_modalities, load_items

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


def test_diagnostic_rows_are_free_form_items_with_the_clip_and_its_soundtrack(built):
    """The item contract: prompt (the paper's question), no system, no options, the video with its own audio."""
    items = load_items(built, "diagnostic")
    d = table(built, "diagnostic", ["id", "dimension", "question", "target", "gold", "media", "video_audio"]
              ).set_index("id")
    assert [i.id for i in items] == list(d.index) and len(items) == 42
    for item in items:
        row = d.loc[item.id]
        assert item.prompt == answers.QUESTIONS[row["dimension"]] == row["question"]
        assert item.system is None and item.options == [] and not item.closed
        assert [(m.kind, m.column, m.with_audio, m.modality) for m in item.media] == [
            ("video", "video", True, "video+audio")]
        assert item.media[0].data[4:8] == b"ftyp" and item.gold == row["target"]
        assert list(row["media"]) == ["video"] and row["video_audio"]
    # the Original is asked three questions on one clip: one source for a runner's per-source media cache
    first = items[0].id.split("/")[0]
    original = [i for i in items if i.id.startswith(f"{first}/original/")]
    assert len(original) == 3 and len({i.media[0].key for i in original}) == 1
    assert len({i.media[0].key for i in items if i.id.startswith(f"{first}/")}) == 5  # original, 2 shifts, mute, swap
    with pytest.raises(InputError, match=r"item '.+/original/sync' has a video\+audio input \(video\)"):
        check_modalities(items, "hf:tiny", {"video", "image"})  # a model that cannot hear the clip refuses
    check_modalities(items, "hf:tiny", {"audio", "image", "video", "video+audio"})
    # the neutral prompts are the paper's words (Thud appendix H)
    assert answers.QUESTIONS["existence"] == "Describe the audio you hear in this video."
    assert answers.QUESTIONS["consistency"] == "Describe what you see in the video and what you hear in the audio."


@pytest.mark.parametrize(("config", "why"), [("sft", r"lacks the item columns \['prompt'\]"),
                                             ("dpo", "'prompt' column is a List")])
def test_training_configs_are_not_model_items(built, config, why):
    with pytest.raises(InputError, match=f"config '{config}' is not a set of model items: .*{why}"):
        load_items(built, config)


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
    with pytest.raises(InputError, match="other options .*: its options.seed is '5', not '0'"):
        merge_shards(tmp_path / "m", [a, b])


def test_merge_refuses_shards_built_from_an_edited_manifest(two_clips):
    rows = [{"id": "a", "video": "a.mp4", "category": "x", "audio_time": 1.0},
            {"id": "b", "video": "b.mp4", "category": "y", "audio_time": 2.0}]
    manifest = write_manifest(two_clips, rows)
    shard = lambda i: InterventionBuildOptions(shifts=(1.0,), shard_index=i, shard_count=2)  # noqa: E731
    a = build_interventions_dataset(two_clips / "s0", manifest, shard(0))
    write_manifest(two_clips, [rows[0], {**rows[1], "audio_time": 2.2}])  # same counts, another annotation
    b = build_interventions_dataset(two_clips / "s1", manifest, shard(1))
    with pytest.raises(InputError, match="its manifest.sha256 is"):
        merge_shards(two_clips / "m", [a, b])


# ---- Swap partners that are no swap, --shift values, multichannel and messy media, non-video rows ----------------

def build_info(folder):
    return json.loads((folder / "build_info.json").read_text())


def decoded(tmp_path, cell, name):
    path = tmp_path / name
    path.write_bytes(cell["bytes"])
    return media.timeline_audio(media.probe(path), 16000, 1)[0][0]


def expected_refusals(n_clips, candidates_of, similar, seed):
    """The documented draw rule replayed: draw a partner, refuse it if similar, draw again among the others."""
    rng, refused = np.random.default_rng(seed), 0
    for i in range(n_clips):
        candidates = np.asarray(candidates_of(i))
        while candidates.size:
            j = int(rng.choice(candidates))
            if (i, j) not in similar:
                break
            refused += 1
            candidates = candidates[candidates != j]
    return refused


def test_swap_partners_with_the_clips_own_audio_are_refused_and_counted(two_clips, tmp_path):
    """The same file listed twice, and the same recording re-encoded under another category: never a Swap."""
    write_clip(two_clips / "a_copy.mp4", seconds=4.0, audio=noise_audio(4.0, 0))  # a.mp4's audio, encoded again
    rows = [{"id": "a", "video": "a.mp4", "category": "x"}, {"id": "a_again", "video": "a.mp4", "category": "x"},
            {"id": "a_copy", "video": "a_copy.mp4", "category": "y"}, {"id": "b", "video": "b.mp4", "category": "y"}]
    same = {(i, j) for i in range(3) for j in range(3) if i != j}
    cats = np.array(["x", "x", "y", "y"])
    # a seed at which a or a_again also draws the copy first (a_copy refuses both x clips at every seed)
    seed = next(s for s in range(20) if expected_refusals(4, lambda i: np.flatnonzero(cats != cats[i]), same, s) > 2)
    out = build_interventions_dataset(tmp_path / "out", write_manifest(two_clips, rows),
                                      InterventionBuildOptions(seed=seed))
    d = table(out, "diagnostic", ["video_id", "source_id", "intervention", "partner_id", "video"])
    d = d.drop_duplicates("video_id").set_index("video_id")
    swaps = d[d["intervention"] == "swap"]
    partners = dict(zip(swaps["source_id"], swaps["partner_id"], strict=True))
    assert partners["a"] == partners["a_again"] == "b" and partners["b"] in ("a", "a_again")
    assert "a_copy" not in partners  # no Swap row rather than a Swap that is the clip's own audio
    for r in swaps.itertuples():
        audio = decoded(tmp_path, r.video, f"{r.source_id}_swap.mp4")
        own = decoded(tmp_path, d.loc[f"{r.source_id}/original", "video"], f"{r.source_id}_orig.mp4")
        partner = decoded(tmp_path, d.loc[f"{r.partner_id}/original", "video"], f"{r.partner_id}_orig.mp4")
        assert abs(np.corrcoef(audio, own)[0, 1]) < 0.1 and np.corrcoef(audio, partner)[0, 1] > 0.95
    info = build_info(out)["media"]["swap"]
    assert info["refused_partners"] == expected_refusals(4, lambda i: np.flatnonzero(cats != cats[i]), same, seed)
    assert info["clips_without_partner"] == 1 and info["without_partner_examples"] == ["a_copy"]
    assert all(r["similarity"] >= 0.99 for r in info["refused_examples"])
    assert {(r["id"], r["partner_id"]) for r in info["refused_examples"]} >= {("a_copy", "a"), ("a_copy", "a_again")}
    card = (out / "README.md").read_text()
    assert f"Refused partners: **{info['refused_partners']}**" in card and "**1** (a_copy)" in card


def test_swap_refusal_without_categories_never_pairs_a_file_with_itself(two_clips, tmp_path):
    rows = [{"id": "a", "video": "a.mp4"}, {"id": "a_again", "video": "a.mp4"}, {"id": "b", "video": "b.mp4"}]
    same = {(0, 1), (1, 0)}
    others = lambda i: np.delete(np.arange(3), i)  # noqa: E731
    seed = next(s for s in range(20) if expected_refusals(3, others, same, s) > 0)
    plans, _ = plan_clips(read_manifest(write_manifest(two_clips, rows)), InterventionBuildOptions(seed=seed))
    partners = {p.id: p.partner_id for p in plans}
    assert partners["a"] == partners["a_again"] == "b" and partners["b"] in ("a", "a_again")
    assert sum(len(p.refused_partners) for p in plans) == expected_refusals(3, others, same, seed)


@pytest.mark.parametrize(("shifts", "match"), [
    ((2.0, 2.0), r"distinct at 0.01 s resolution .*2, 2 -> \+2.00 s"),
    ((0.331, 0.334, -1.0), r"distinct .*0.331, 0.334 -> \+0.33 s"),
    ((float("nan"), 2.0), "finite .*not finite: nan"),
    ((float("inf"),), "finite .*not finite: inf"),
    ((0.004, 1.0), "non-zero .*zero: 0.004"),
    ((-0.0,), "non-zero"),
    ((), "at least one shift"),
])
def test_bad_shift_values_are_refused_up_front(shifts, match):
    with pytest.raises(InputError, match=match):
        InterventionBuildOptions(shifts=shifts)


@pytest.mark.parametrize("values", [["2", "2"], ["nan"], ["1", "0.001"]])
def test_cli_refuses_bad_shifts_before_any_folder_is_made(tmp_path, capsys, values):
    from omniaudit.cli import main

    assert main(["build", "interventions", "--out", str(tmp_path / "o"), "--clips", "2", "--shift", *values]) == 2
    assert "shifts must be" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # no output, no work folder, no temp folder


def test_a_shift_longer_than_the_synthetic_clips_leaves_no_work_folder(tmp_path):
    with pytest.raises(InputError, match=r"not shorter than the synthetic clips \(6 s\)"):
        build_interventions_dataset(tmp_path / "o", spec=SPEC, options=InterventionBuildOptions(shifts=(7.0,)))
    assert list(tmp_path.iterdir()) == []


def test_a_refused_manifest_leaves_no_work_folder(two_clips, tmp_path):
    write_clip(two_clips / "silent.mp4", seconds=4.0, audio=np.zeros((1, 64000), np.float32))
    rows = [{"id": "a", "video": "a.mp4"}, {"id": "s", "video": "silent.mp4"}]
    out = tmp_path / "built"
    with pytest.raises(InputError, match="clip 's'.*silent"):
        build_interventions_dataset(out, write_manifest(two_clips, rows))
    assert not list(tmp_path.glob(".built*")) and not out.exists()


@pytest.fixture(scope="module")
def messy(tmp_path_factory):
    """Real-world shapes: 5.1 AAC, mono 44.1 kHz with a short track, FLAC 5.1(side) in MKV, Opus/VP9 in WebM, VFR."""
    d = tmp_path_factory.mktemp("messy")
    write_av(d / "surround.mp4", audio=layout_audio(3.0, "5.1", 48000), layout="5.1", rate=48000)
    write_av(d / "mono44.mp4", audio=noise_audio(1.5, 7, 44100), layout="mono", rate=44100)  # 1.5 s of 3 s
    write_av(d / "flac51.mkv", audio=layout_audio(3.0, "5.1(side)", 48000, seed=3), layout="5.1(side)", rate=48000,
             audio_codec="flac")
    write_av(d / "opus.webm", audio=layout_audio(3.0, "stereo", 48000, seed=5), layout="stereo", rate=48000,
             audio_codec="libopus", video_codec="libvpx-vp9")
    write_clip(d / "vfr.mp4", vfr=True, audio=noise_audio(3.0, 9))
    rows = [{"id": k, "video": f"{k}{ext}", "category": k} for k, ext in (
        ("surround", ".mp4"), ("mono44", ".mp4"), ("flac51", ".mkv"), ("opus", ".webm"), ("vfr", ".mp4"))]
    out = build_interventions_dataset(d / "ds", write_manifest(d, rows), InterventionBuildOptions(shifts=(-1.0, 1.0)))
    return d, out


def test_every_variant_keeps_the_source_channel_layout(messy, tmp_path):
    src, out = messy
    expected = {"surround": ("5.1", 6, 48000), "mono44": ("mono", 1, 44100), "flac51": ("5.1", 6, 48000),
                "opus": ("stereo", 2, 48000), "vfr": ("mono", 1, 16000)}
    d = table(out, "diagnostic", ["video_id", "source_id", "intervention", "partner_id", "video"])
    d = d.drop_duplicates("video_id")
    assert len(d) == 5 * 5  # original, two shifts, mute, swap
    for r in d.itertuples():
        path = tmp_path / r.video["path"]
        path.write_bytes(r.video["bytes"])
        info = media.probe(path)
        assert (info.audio_layout, info.audio_channels, info.audio_rate) == expected[r.source_id], r.video_id
    m = build_info(out)["media"]
    assert m["audio_layouts"] == {"5.1": 2, "mono": 2, "stereo": 1}
    assert m["layout_changes"] == {"converted: 5.1(side) -> 5.1": 1}  # AAC has no side-surround 5.1
    source_layout = {"surround": "5.1", "mono44": "mono", "flac51": "5.1(side)", "opus": "stereo", "vfr": "mono"}
    swaps = d[d["intervention"] == "swap"]
    notes: dict[str, int] = {}
    for r in swaps.itertuples():
        if source_layout[r.partner_id] != expected[r.source_id][0]:
            key = f"{source_layout[r.partner_id]} -> {expected[r.source_id][0]}"
            notes[key] = notes.get(key, 0) + 1
    assert m["swap_partner_layout_changes"] == notes
    card = (out / "README.md").read_text()
    assert "converted: 5.1(side) -> 5.1 (1 clip(s))" in card and "5.1 (2 clip(s))" in card


def test_card_counts_padded_and_vfr_clips_once_per_clip(messy):
    _, out = messy
    d = table(out, "diagnostic", ["source_id", "intervention", "dimension", "offset_s", "audio_pad_s",
                                  "variable_frame_rate"])
    assert (d["intervention"] == "original").sum() == 15  # three rows (dimensions) per clip's Original
    by_hand = {"audio_padded_clips": 1, "variable_frame_rate_clips": 1}  # mono44 (1.5 s of 3 s) and vfr
    summary = summarize({"diagnostic": d, "sft": pd.DataFrame({"id": []}), "dpo": pd.DataFrame({"kind": []})})
    assert {k: summary[k] for k in by_hand} == by_hand
    card = (out / "README.md").read_text()
    assert "`audio_pad_s`\n  (1 clip(s))" in card and "`variable_frame_rate` (1 clip(s))" in card


def garble_audio(src, dst):
    data = bytearray(src.read_bytes())
    start = data.find(b"mdat") + 200
    data[start : start + 3000] = np.random.default_rng(0).integers(0, 256, 3000, dtype=np.uint8).tobytes()
    dst.write_bytes(bytes(data))
    return dst


BAD_MEDIA = {
    "audio_only.m4a": (lambda d: write_av(d / "audio_only.m4a", with_video=False), "no video stream .*audio-only"),
    "still.png": (lambda d: write_image(d / "still.png"), "its only picture is a still image"),
    "cut.mp4": (lambda d: write_truncated(d / "a.mp4", d / "cut.mp4"), "cannot open as a media file"),
    "notes.mp4": (lambda d: d.joinpath("notes.mp4").write_text("not a video\n" * 50), "cannot open as a media file"),
    "hush.mp4": (lambda d: write_clip(d / "hush.mp4", seconds=4.0, audio=np.zeros((1, 64000), np.float32)),
                 "audio track is silent"),
    "garbled.mp4": (lambda d: garble_audio(d / "a.mp4", d / "garbled.mp4"), "corrupt audio stream"),
}


@pytest.mark.parametrize("name", list(BAD_MEDIA))
def test_a_manifest_row_that_is_not_a_usable_video_fails_naming_row_and_file(two_clips, name):
    make, match = BAD_MEDIA[name]
    make(two_clips)
    rows = [{"id": "a", "video": "a.mp4"}, {"id": "b", "video": "b.mp4"}, {"id": "bad", "video": name}]
    with pytest.raises(InputError, match=f"clip 'bad' \\({'.*'}{name}\\): .*{match}") as err:
        plan_clips(read_manifest(write_manifest(two_clips, rows)), InterventionBuildOptions())
    assert "manifest.jsonl:row 3" in str(err.value) and "column 'video'" in str(err.value)


def test_unusable_rows_are_recorded_with_skip_invalid(two_clips, tmp_path):
    for make, _ in BAD_MEDIA.values():
        make(two_clips)
    rows = [{"id": "a", "video": "a.mp4"}, {"id": "b", "video": "b.mp4"}] + [
        {"id": name, "video": name} for name in BAD_MEDIA]
    plans, rejected = plan_clips(read_manifest(write_manifest(two_clips, rows)),
                                 InterventionBuildOptions(skip_invalid=True))
    assert [p.id for p in plans] == ["a", "b"]
    assert [r["row"] for r in rejected] == list(range(3, 3 + len(BAD_MEDIA)))
    for r in rejected:
        assert r["reason"].startswith(f"unusable media: clip '{r['id']}'")
        assert re.search(BAD_MEDIA[r["id"]][1], r["reason"]), r


def test_swap_similarity_separates_other_sounds_from_the_same_sound(tmp_path):
    """The threshold's margin on the synthetic corpus: other event classes score low, the same impact sound (even at
    another time, which would make a Swap a Shift) scores near 1."""
    from omniaudit.data_builders.interventions.plan import SWAP_MAX_SIMILARITY, _swap_similarity
    from omniaudit.data_builders.interventions.synthetic import synthesize_clips

    manifest = synthesize_clips(tmp_path / "clips", SyntheticClipSpec(n_clips=6, width=32, height=32))
    plans, _ = plan_clips(read_manifest(manifest), InterventionBuildOptions())
    other = [_swap_similarity(a, b) for a in plans for b in plans if a.category != b.category]
    same = [_swap_similarity(a, b) for a in plans for b in plans if a is not b and a.category == b.category
            and a.category in ("ball", "pot")]  # deterministic sounds; "block"/"glass" draw fresh noise per clip
    assert len(same) == 4 and max(other) < 0.2 < SWAP_MAX_SIMILARITY < 0.95 < min(same)
