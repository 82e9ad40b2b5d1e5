"""The judge-protocol builder: embedded speech set, derangement, conditions, placements, pairwise trials."""

import io
import json

import datasets
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import soundfile as sf

from omniaudit.data_builders.interventions import media
from omniaudit.data_builders.protocols import read_clip_manifest
from omniaudit.data_builders.protocols.build import BLUEPRINT_CONDITIONS
from omniaudit.data_builders.protocols.features import derangement, descriptor_phrases
from omniaudit.errors import InputError


def table(folder, config, columns=None):
    return pq.read_table(sorted((folder / config).glob("*.parquet")), columns=columns).to_pandas()


def audio(cell) -> np.ndarray:
    data, rate = sf.read(io.BytesIO(cell["bytes"]), dtype="float32")
    assert rate == 16000
    return data


META = ["id", "attribute", "task", "condition", "placement", "clip_id", "trial", "order", "format", "options", "gold",
        "cue", "cue_shown", "reference", "specialist", "system", "prompt", "n_audio"]


def test_configs_load_offline(protocol_dataset):
    for config in ("blueprint", "reference", "pairwise", "cue_conflict"):
        ds = datasets.load_dataset(str(protocol_dataset), config, split="train")
        assert isinstance(ds.features["audio_1"], datasets.Audio) and len(ds) > 0
    card = (protocol_dataset / "README.md").read_text()
    assert "config_name: cue_conflict" in card and "Table I layout" in card


@pytest.mark.parametrize("k", [2, 3, 4, 8])
def test_derangement_has_no_fixed_point_and_uniform_wrong_labels(k):
    labels = [f"c{i}" for i in range(k)]
    for seed in range(5):
        wrong = derangement(labels * 30, seed)
        assert sorted(wrong) == labels and all(wrong[c] != c for c in labels)
        counts = pd.Series([wrong[c] for c in labels * 30]).value_counts()
        assert set(counts) == {30}  # balanced probe set -> uniform wrong labels
    assert derangement(labels, 1) == derangement(labels, 1)
    with pytest.raises(InputError, match="at least two classes"):
        derangement(["only"] * 3)


def test_blueprint_conditions_and_wrong_labels(protocol_dataset):
    d = table(protocol_dataset, "blueprint", META)
    assert set(d["condition"]) == set(BLUEPRINT_CONDITIONS) and set(d["attribute"]) == {"emotion", "language"}
    assert (d["cue"] != d["gold"]).all()
    shown = d[d["condition"].isin(["wrong", "no_frame", "wrong_audio"])]
    assert shown["cue_shown"].all() and all(c in p for c, p in zip(shown["cue"], shown["prompt"], strict=True))
    assert (d.loc[d["condition"] == "no_frame", "prompt"].str.contains("classifier")).sum() == 0
    assert (d.loc[d["condition"] == "wrong", "prompt"].str.contains("classifier predicts")).all()
    assert set(d.loc[d["n_audio"] == 1, "condition"]) == {"audio", "wrong_audio"}
    skeleton = d[d["condition"] == "skeleton"]["prompt"]
    assert not skeleton.str.contains("Acoustic descriptors").any() and skeleton.str.contains("Transcript").all()
    # the wrong label is one fixed map per attribute
    for _, g in d.groupby("attribute"):
        assert (g.groupby("gold")["cue"].nunique() == 1).all()


def test_reference_placements(protocol_dataset):
    d = table(protocol_dataset, "reference", META)
    assert set(d["placement"]) == {"before", "after", "system", "rubric"}
    sys_rows = d[d["placement"] == "system"]
    assert all(r in s for r, s in zip(sys_rows["reference"], sys_rows["system"], strict=True))
    other = d[d["placement"] != "system"]
    assert other["system"].isna().all() and all(r in p for r, p in zip(other["reference"], other["prompt"],
                                                                        strict=True))
    assert (d.loc[d["condition"] == "match", "reference"] == d.loc[d["condition"] == "match", "gold"]).all()
    assert (d.loc[d["condition"] == "wrong", "reference"] != d.loc[d["condition"] == "wrong", "gold"]).all()
    before = d[d["placement"] == "before"]["prompt"].iloc[0]
    assert before.index("Reference label") < before.index("Listen")


def test_pairwise_trials_orders_formats_and_audio(protocol_dataset):
    d = table(protocol_dataset, "pairwise", META + ["audio_1", "audio_2", "audio_3"])
    assert set(d["task"]) == {"cleanness", "identical", "attribute", "naturalness", "speaker"}
    per_trial = d.groupby("trial")["order"].apply(sorted)
    assert all(o == ["AB", "BA"] for o in per_trial)
    golds = d[d["task"] != "identical"].pivot(index="trial", columns="order", values="gold")
    assert ((golds["AB"] == "A") == (golds["BA"] == "B")).all()  # the gold clip changes slot with the order
    assert abs((golds["AB"] == "A").mean() - 0.5) <= 0.1  # and sits in slot A in about half of the trials
    assert d.loc[d["task"] == "identical", "gold"].isna().all()
    native = d[(d["format"] == "native") & (d["task"] == "cleanness") & (d["order"] == "AB")].iloc[0]
    concat = d[(d["trial"] == native["trial"].replace("native", "concat")) & (d["order"] == "AB")].iloc[0]
    a, b, joined = audio(native["audio_1"]), audio(native["audio_2"]), audio(concat["audio_1"])
    assert joined.size == a.size + int(0.6 * 16000) + b.size
    gap = joined[a.size : a.size + int(0.6 * 16000)]
    assert np.argmax(np.abs(np.fft.rfft(gap))) * 16000 / gap.size == pytest.approx(880, abs=2)
    clean, noisy = (a, b) if native["gold"] == "A" else (b, a)
    assert media.snr_db(clean[None], noisy[None]) == pytest.approx(0.0, abs=0.05)  # 16-bit storage
    triplets = d[(d["task"] == "speaker") & (d["format"] == "native")]
    assert (triplets["n_audio"] == 3).all() and triplets["prompt"].str.contains("reference").all()
    assert (triplets["clip_id"].str.count(r"\|") == 2).all()  # reference|A|B
    for task in ("naturalness", "speaker"):  # no clip in two trials: trials are independent bootstrap units
        ab = d[(d["task"] == task) & (d["format"] == "native") & (d["order"] == "AB")]
        clips = [c for ids in ab["clip_id"] for c in ids.split("|")]
        assert len(clips) == len(set(clips)) > 0
    noisy = d[(d["task"] == "cleanness") & (d["format"] == "native") & (d["order"] == "AB")]
    noise = [audio(r.audio_2 if r.gold == "A" else r.audio_1) - audio(r.audio_1 if r.gold == "A" else r.audio_2)
             for r in noisy.itertuples()]
    assert abs(np.corrcoef(noise[0][:4000], noise[1][:4000])[0, 1]) < 0.1  # each clip gets its own noise


def test_cue_conflict_grid(protocol_dataset):
    d = table(protocol_dataset, "cue_conflict", META)
    assert set(d["condition"]) == {"none", "conf_spec", "conf_ref", "conf_both"}
    none = d[d["condition"] == "none"]
    asked = [p.split("Answer with")[0] for p in none["prompt"]]  # the options list names every label
    assert not none["cue_shown"].any() and all(c not in q for c, q in zip(none["cue"], asked, strict=True))
    both = d[d["condition"] == "conf_both"]
    assert (both["reference"] == both["cue"]).all() and (both["specialist"] == both["cue"]).all()


def test_descriptor_phrases_use_corpus_tertiles():
    from omniaudit.data_builders.protocols.features import DESCRIPTORS

    feats = pd.DataFrame({col: np.arange(30, dtype=float) for _, col in DESCRIPTORS})
    phrases = descriptor_phrases(feats)
    assert phrases[0].startswith("mean pitch is low") and phrases[-1].startswith("mean pitch is high")
    levels = pd.Series([p.split(";")[0].split()[-1] for p in phrases]).value_counts()
    assert levels.to_dict() == {"low": 10, "medium": 10, "high": 10}


def test_specialist_is_fitted_and_beats_chance(protocol_dataset):
    card = (protocol_dataset / "README.md").read_text()
    line = next(x for x in card.splitlines() if x.startswith("| emotion |"))
    accuracy = float(line.rsplit("|", 2)[1].strip().rstrip("%"))
    assert accuracy > 50  # K = 4: a real classifier on real acoustic differences


@pytest.fixture
def clips(tmp_path):
    for name in ("a", "b"):
        sf.write(tmp_path / f"{name}.wav", 0.1 * np.random.default_rng(0).standard_normal(8000), 16000)
    return tmp_path


def write_manifest(folder, rows):
    path = folder / "m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(("rows", "match"), [
    ([{"id": "a", "audio": "missing.wav", "attribute": "emotion", "label": "x"}], "audio file not found"),
    ([{"id": "a", "audio": "a.wav", "attribute": "colour", "label": "x"}], "unknown attribute"),
    ([{"id": "a", "audio": "a.wav", "attribute": "emotion", "label": ""}], "non-empty label"),
    ([{"id": "a", "audio": "a.wav", "attribute": "naturalness", "label": "good"}], "numeric mos"),
    ([{"id": "a", "audio": "a.wav", "attribute": "emotion", "label": "sad", "specialist": "sad"},
      {"id": "b", "audio": "b.wav", "attribute": "emotion", "label": "angry", "specialist": "bored"}],
     "specialist label is not a emotion label"),
    ([{"id": "a", "audio": "a.wav", "attribute": "emotion", "label": "sad"},
      {"id": "a", "audio": "b.wav", "attribute": "emotion", "label": "sad"}], "duplicate"),
])
def test_manifest_errors_name_row_and_column(clips, rows, match):
    with pytest.raises(InputError, match=match) as err:
        read_clip_manifest(write_manifest(clips, rows))
    assert "m.jsonl:row" in str(err.value)
