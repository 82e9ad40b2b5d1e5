"""The judge-protocol builder: embedded speech set, derangement, conditions, placements, pairwise trials."""

import io
import itertools
import json

import datasets
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import soundfile as sf

from omniaudit.data_builders.interventions import audio_edits
from omniaudit.data_builders.protocols import read_clip_manifest
from omniaudit.data_builders.protocols.build import BLUEPRINT_CONDITIONS, _specialist_groups, load_clips
from omniaudit.data_builders.protocols.features import (
    connected_groups,
    derangement,
    descriptor_phrases,
    fitted_specialist,
    specialist_folds,
)
from omniaudit.errors import InputError
from omniaudit.evaluation.protocols.audit import ProtocolAuditConfig


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
    # the system placement differs from before / after only in where the sentence is: no persona line
    for _, g in d.groupby(["attribute", "clip_id", "condition"]):
        by = g.set_index("placement")
        line = f"Reference label: {by.at['system', 'reference']}."
        assert by.at["system", "system"] == line
        assert by.at["before", "prompt"] == f"{line}\n{by.at['system', 'prompt']}"
        assert by.at["after", "prompt"] == f"{by.at['system', 'prompt']}\n{line}"


def test_specialist_sentences_use_the_right_article(protocol_dataset):
    d = table(protocol_dataset, "blueprint", META)
    wrong = d[d["condition"] == "wrong"]
    for attribute, article in (("emotion", "an"), ("language", "a")):
        prompts_ = wrong.loc[wrong["attribute"] == attribute, "prompt"]
        assert prompts_.str.contains(f"Specialist: {article} {attribute} classifier predicts").all()
    cue = table(protocol_dataset, "cue_conflict", META)
    spec = cue[(cue["condition"] == "conf_spec") & (cue["attribute"] == "emotion")]
    assert spec["prompt"].str.startswith("An emotion classifier predicts").all()


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
    assert audio_edits.snr_db(clean[None], noisy[None]) == pytest.approx(0.0, abs=0.05)  # 16-bit storage
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


# ------------------------------------------------------------------------------- specialist folds, labels, clips
def voice(path, f0: float, amplitude: float = 0.3, seconds: float = 0.6, seed: int = 0):
    """A voiced-sounding clip: harmonics of ``f0`` with a 4 Hz loudness wobble and a little noise (16 kHz WAV)."""
    t = np.arange(int(seconds * 16000)) / 16000
    wave = sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, 6)) * (1 + 0.3 * np.sin(2 * np.pi * 4 * t))
    noise = 0.02 * np.random.default_rng(seed).standard_normal(t.size)
    sf.write(path, (amplitude * wave / np.abs(wave).max() + noise * amplitude).astype(np.float32), 16000)
    return path


@pytest.fixture
def small_set(tmp_path):
    """Eight clips, two speakers x (angry, neutral) x 2, and the manifest rows for them (emotion attribute)."""
    rows = []
    for i, (speaker, label) in enumerate(itertools.product(["s1", "s2"], ["angry", "neutral"] * 2)):
        f0 = (220 if label == "angry" else 120) * (1.3 if speaker == "s2" else 1.0) + 7 * i
        voice(tmp_path / f"c{i}.wav", f0, 0.5 if label == "angry" else 0.2, seed=i)
        rows.append({"id": f"c{i}", "audio": f"c{i}.wav", "attribute": "emotion", "label": label,
                     "speaker": speaker, "transcript": "one two three"})
    return tmp_path, rows


def build(folder, rows, **options):
    from omniaudit.data_builders.protocols import ProtocolBuildOptions, build_protocols_dataset

    out = build_protocols_dataset(folder / "out", write_manifest(folder, rows),
                                  ProtocolBuildOptions(max_trials=4, **options))
    return out, json.loads((out / "build_info.json").read_text())["summary"]


def test_fitted_specialist_folds_keep_a_recording_together():
    """30 recordings, each in the manifest twice, labels unrelated to the audio: a specialist that sees a clip's
    duplicate in training "recognises" it (~95%); grouped by recording it is at chance, as it should be."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        x = pd.DataFrame(np.repeat(rng.standard_normal((30, 88)), 2, axis=0))
        labels = np.repeat(rng.permutation(np.array(["angry", "neutral"] * 15)), 2)
        recording = np.repeat(np.arange(30), 2)
        fold, folds = specialist_folds(labels, recording, seed)
        assert folds == 5 and (pd.Series(fold).groupby(recording).nunique() == 1).all()
        assert (pd.Series(fold).groupby(labels).value_counts() == 3 * 2).all()  # stratified: 3 recordings a class
        leaky, _ = fitted_specialist(x, labels, seed)
        grouped, _ = fitted_specialist(x, labels, seed, recording)
        assert np.mean(leaky == labels) > 0.9 and np.mean(grouped == labels) < 0.8


def test_fold_groups_join_speakers_and_identical_audio():
    speakers = np.array(["s1", "s1", "s2", "", "", "s3"])
    audio = np.array(["h1", "h2", "h3", "h3", "h4", "h4"])  # clip 3 repeats clip 2, clip 5 repeats clip 4
    groups = connected_groups(speakers, audio)
    assert groups[0] == groups[1] and groups[2] == groups[3] and groups[4] == groups[5]
    assert len(set(groups)) == 3
    assert specialist_folds(np.array(["a", "b"] * 3), groups)[1] == 3  # each class spans the three groups
    one_group = np.array(["a", "a", "b", "b", "a", "a"])  # every b clip is one speaker's: no b left to test on
    assert specialist_folds(one_group, groups)[1] == 0 and specialist_folds(one_group)[1] == 2
    with pytest.raises(InputError, match="different speakers and recordings"):
        fitted_specialist(pd.DataFrame(np.eye(6)), one_group, 0, groups)


def test_duplicated_audio_never_spans_two_specialist_folds(small_set):
    """Each recording copied under a second id with no speaker column: the fitted specialist's folds group the
    copies by content (decoded-audio hash), so a copy is never the training twin of its test clip."""
    folder, rows = small_set
    dup = []
    for r in rows:
        copy = folder / f"{r['id']}_copy.wav"
        copy.write_bytes((folder / r["audio"]).read_bytes())
        dup += [{k: v for k, v in r.items() if k != "speaker"},
                {"id": f"{r['id']}_copy", "audio": copy.name, "attribute": "emotion", "label": r["label"]}]
    manifest = read_clip_manifest(write_manifest(folder, dup))
    store, hashes = load_clips(manifest)
    groups, by = _specialist_groups(manifest, hashes, 0)
    assert by.startswith("identical audio") and len(set(groups)) == len(rows)
    assert all(groups[2 * i] == groups[2 * i + 1] for i in range(len(rows)))
    _, summary = build(folder, dup)
    assert "grouped by identical audio" in summary["attributes"]["emotion"]["specialist_source"]
    _, summary = build(folder, rows)  # with speakers: both voices' clips stay together
    assert "2-fold grouped by speaker and identical audio" in summary["attributes"]["emotion"]["specialist_source"]


def test_labels_differing_only_in_case_are_one_class(small_set, capsys):
    from omniaudit.cli import main
    from omniaudit.evaluation.protocols.audit import audit_protocols, load_items_meta, read_judge_predictions

    folder, rows = small_set
    spellings = ["Angry", "neutral", "angry", "NEUTRAL", "angry", "neutral", "angry", "neutral"]
    for r, spelling in zip(rows, spellings, strict=True):
        r["label"], r["specialist"] = spelling, spelling.upper()  # a specialist that shouts its (right) answers
    manifest = read_clip_manifest(write_manifest(folder, rows))
    assert manifest["label"].tolist() == ["angry", "neutral"] * 4  # the most frequent spelling
    assert manifest["specialist"].tolist() == ["angry", "neutral"] * 4
    assert manifest.attrs["notes"] == [
        "emotion: labels 'Angry', 'angry' differ only in case; all are read as 'angry' (first other spelling at "
        "row 1)",
        "emotion: labels 'neutral', 'NEUTRAL' differ only in case; all are read as 'neutral' (first other spelling "
        "at row 4)"]
    out = folder / "cli_out"
    assert main(["build", "protocols", "--clips", str(folder / "m.jsonl"), "--out", str(out), "--max-trials", "4",
                 "--control", "Emotion", "ANGRY", "Neutral"]) == 0
    err = capsys.readouterr().err.replace("\n", "")
    assert "note: emotion: labels" in err and "warning" not in err  # the control matched whatever the case
    items = load_items_meta(out)
    assert {tuple(o) for o in items.loc[items["config"] == "blueprint", "options"]} == {("angry", "neutral")}
    assert (items["task"] == "attribute").any()
    gold = items[items["config"] == "reference"]
    answers = folder / "shouting.jsonl"  # a judge that answers right, in capitals
    answers.write_text("".join(json.dumps({"id": i, "label": g.upper()}) + "\n"
                               for i, g in zip(gold["id"], gold["gold"], strict=True)))
    result = audit_protocols(items, read_judge_predictions([str(answers)], items),
                             ProtocolAuditConfig(n_resamples=50))
    accuracy = result["accuracy"]["shouting"]["reference"]["emotion"]
    assert {k: v["value"] for k, v in accuracy.items()} == {k: 1.0 for k in accuracy}
    assert "differ only in case" in (out / "README.md").read_text()


def test_items_whose_options_differ_only_in_case_are_refused_by_the_audit():
    from omniaudit.evaluation.protocols.audit import read_judge_predictions

    items = pd.DataFrame({"id": ["blueprint/emotion/c0/audio"], "options": [["Angry", "angry", "sad"]]})
    with pytest.raises(InputError, match=r"item 'blueprint/emotion/c0/audio': options .* differ only in case"):
        read_judge_predictions([], items)


@pytest.mark.parametrize("level", [0.0, 1e-4])
def test_a_silent_or_too_quiet_clip_fails_naming_row_id_and_file_for_every_seed(small_set, level):
    folder, rows = small_set
    sf.write(folder / "c5.wav", np.full(9600, level, np.float32), 16000)
    for seed in (0, 1, 2):
        with pytest.raises(InputError) as err:
            build(folder, rows, seed=seed)
        message = str(err.value)
        assert "m.jsonl:row 6: column 'audio': clip 'c5': silent or too quiet" in message
        assert str(folder / "c5.wav") in message and "dBFS" in message
    assert not (folder / "out").exists()


@pytest.mark.parametrize("kind", ["text", "image", "truncated", "empty"])
def test_corrupt_or_non_audio_files_fail_naming_the_manifest_row(small_set, kind):
    from PIL import Image

    folder, rows = small_set
    bad = folder / "c2.wav"
    if kind == "text":
        bad.write_text("this is not audio\n" * 50)
    elif kind == "image":
        bad = folder / "c2.png"
        Image.new("RGB", (32, 32), "red").save(bad)
        rows[2]["audio"] = bad.name
    elif kind == "truncated":
        bad.write_bytes(bad.read_bytes()[:30])
    else:
        bad.write_bytes(b"")
    with pytest.raises(InputError) as err:
        build(folder, rows)
    message = str(err.value)
    assert "m.jsonl:row 3: column 'audio': clip 'c2': not a usable audio file" in message, message
    assert str(bad) in message


def test_a_missing_control_task_is_a_warning_on_the_cli_and_the_card(small_set, capsys):
    from omniaudit.cli import main

    folder, rows = small_set
    for r in rows:
        r["label"] = {"angry": "happy", "neutral": "sad"}[r["label"]]
    out = folder / "out"
    assert main(["build", "protocols", "--clips", str(write_manifest(folder, rows)), "--out", str(out),
                 "--max-trials", "4"]) == 0
    err = capsys.readouterr().err.replace("\n", "")
    expected = ("the attribute control (emotion: angry vs neutral) was not built: the manifest has no 'angry' or "
                "'neutral' clips (its emotion labels are ['happy', 'sad'])")
    assert f"warning: {expected}" in err
    assert expected in (out / "README.md").read_text()
    assert "attribute" not in set(table(out, "pairwise", ["task"])["task"])


def test_the_speech_set_speaks_the_sentences_it_is_given_and_refuses_too_few(tmp_path):
    import shutil

    from omniaudit.data_builders.protocols import SpeechSetSpec, synthesize_speech_set
    from omniaudit.data_builders.protocols.speech import SENTENCES

    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng not installed")
    own = {lang: [f"{s} ({lang})" for s in ("One two three.",)] for lang in SENTENCES}
    rows = read_clip_manifest(synthesize_speech_set(tmp_path / "own", SpeechSetSpec(sentences_per_cell=1, degraded=2),
                                                    sentences=own))
    assert set(rows["transcript"]) == {s[0] for s in own.values()}
    with pytest.raises(InputError, match="2 or more per language"):
        synthesize_speech_set(tmp_path / "few", SpeechSetSpec(sentences_per_cell=2), sentences=own)
    with pytest.raises(InputError, match="per language"):
        synthesize_speech_set(tmp_path / "en", SpeechSetSpec(sentences_per_cell=1), sentences={"en": ["Hi."]})


def test_the_embedded_sentences_allow_up_to_twelve_per_cell_and_keep_the_defaults_first_four():
    from omniaudit.data_builders.protocols import SpeechSetSpec
    from omniaudit.data_builders.protocols.speech import MAX_SENTENCES, SENTENCES

    assert {len(s) for s in SENTENCES.values()} == {MAX_SENTENCES}
    assert all(len(set(s)) == len(s) for s in SENTENCES.values())  # every clip of a cell says something else
    # the default's clips (4 per cell) are the first four: a larger set only adds clips
    assert SENTENCES["en"][:2] == ["The train leaves the station at seven.", "Please put the book back on the shelf."]
    assert SpeechSetSpec(sentences_per_cell=MAX_SENTENCES).sentences_per_cell == MAX_SENTENCES
    with pytest.raises(InputError, match=f"1..{MAX_SENTENCES}"):
        SpeechSetSpec(sentences_per_cell=MAX_SENTENCES + 1)
