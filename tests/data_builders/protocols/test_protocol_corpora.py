"""Corpus layouts for the judge-protocol probes (RAVDESS, FLEURS, BVCC, VoxCeleb1), per-task trial counts and real
specialists from tiny Transformers checkpoints, on fake trees built here."""

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import soundfile as sf

from omniaudit.cli import main
from omniaudit.data_builders.protocols.corpora import (
    CorpusOptions,
    bvcc_rows,
    fleurs_rows,
    ravdess_rows,
    voxceleb1_rows,
)
from omniaudit.errors import InputError

RATE = 16000


def wav(path: Path, seconds: float = 0.4, seed: int = 0, f0: float = 180.0) -> Path:
    """A voiced-ish clip: a harmonic tone with a little noise, different per seed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    f = f0 * (1 + 0.3 * rng.random())
    x = sum(np.sin(2 * np.pi * f * k * t) / k for k in range(1, 5)) * 0.2 + 0.01 * rng.standard_normal(t.size)
    sf.write(path, x.astype(np.float32), RATE, subtype="PCM_16")
    return path


def ravdess_tree(root: Path, actors: int = 4) -> Path:
    seed = 0
    for actor in range(1, actors + 1):
        for emotion in range(1, 9):
            for intensity in ((1,) if emotion == 1 else (1, 2)):
                for statement in (1, 2):
                    for rep in (1, 2):
                        seed += 1
                        name = f"03-01-{emotion:02d}-{intensity:02d}-{statement:02d}-{rep:02d}-{actor:02d}.wav"
                        wav(root / f"Actor_{actor:02d}" / name, 0.3, seed, 120 + 20 * emotion)
        wav(root / f"Actor_{actor:02d}" / f"03-02-03-01-01-01-{actor:02d}.wav", 0.3, 999)  # song: skipped
    (root / "README.txt").write_text("not audio")
    return root


def test_ravdess_fields_come_from_the_file_name_and_the_subset_is_actor_and_gender_stratified(tmp_path):
    root = ravdess_tree(tmp_path / "ravdess")
    rows = ravdess_rows(root, CorpusOptions(per_class=6))
    assert len(rows) == 8 * 6 and Counter(r["label"] for r in rows) == {e: 6 for e in
                                                                        ("neutral", "calm", "happy", "sad", "angry",
                                                                         "fearful", "disgust", "surprised")}
    for emotion in {r["label"] for r in rows}:
        picked = [r for r in rows if r["label"] == emotion]
        assert {r["speaker"] for r in picked} == {"actor_01", "actor_02", "actor_03", "actor_04"}  # every actor
        assert Counter(r["gender"] for r in picked) == {"male": 3, "female": 3}
    one = next(r for r in ravdess_rows(root, CorpusOptions(per_class=100))
               if r["id"] == "ravdess_03-01-05-02-02-01-03")
    assert (one["label"], one["speaker"], one["gender"], one["transcript"], one["intensity"]) == (
        "angry", "actor_03", "male", "Dogs are sitting by the door.", "strong")
    everything = ravdess_rows(root, CorpusOptions(per_class=100))  # fewer clips than asked: all speech clips
    assert len(everything) == 4 * (4 + 7 * 8) and not any(r["id"].startswith("ravdess_03-02-") for r in everything)
    assert ravdess_rows(root, CorpusOptions(per_class=6, seed=1)) != rows  # seeded
    assert ravdess_rows(root, CorpusOptions(per_class=6)) == rows
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no speech clips"):
        ravdess_rows(tmp_path / "empty")


def fleurs_tree(root: Path) -> Path:
    for k, lang in enumerate(("en_us", "fr_fr", "ja_jp")):
        folder = root / lang / "audio" / "test"
        for i, seconds in enumerate((0.1, 0.5, 0.6, 0.8, 2.0)):
            wav(folder / f"{1000 * k + i}.wav", seconds, 10 * k + i)
        (root / lang / "test.tsv").write_text("".join(
            f"{i}\t{1000 * k + i}.wav\tSentence {i} in {lang}.\tsentence {i}\ts e n\t{RATE}\t"
            f"{'MALE' if i % 2 else 'FEMALE'}\n" for i in range(5)))
    return root


def test_fleurs_language_folders_durations_and_transcripts(tmp_path):
    root = fleurs_tree(tmp_path / "fleurs")
    rows = fleurs_rows(root, CorpusOptions(per_class=2, min_seconds=0.3, max_seconds=1.0))
    assert Counter(r["label"] for r in rows) == {"English": 2, "French": 2, "Japanese": 2}
    kept = {Path(r["audio"]).stem for r in rows}
    assert kept <= {f"{1000 * k + i}" for k in range(3) for i in (1, 2, 3)}  # 0.1 s and 2.0 s are out of range
    en = next(r for r in rows if r["label"] == "English")
    i = int(Path(en["audio"]).stem)
    assert en["transcript"] == f"Sentence {i} in en_us." and en["gender"] == ("male" if i % 2 else "female")
    only = fleurs_rows(root, CorpusOptions(languages=("en_us", "ja_jp"), min_seconds=0.3, max_seconds=1.0))
    assert Counter(r["label"] for r in only) == {"English": 3, "Japanese": 3}
    with pytest.raises(InputError, match="no language folder"):
        fleurs_rows(root, CorpusOptions(languages=("de_de",)))
    with pytest.raises(InputError, match="per-language folders"):
        fleurs_rows(root, CorpusOptions(min_seconds=5, max_seconds=6))


def bvcc_tree(root: Path) -> Path:
    scores = [3.5, 1.25, 4.75, 2.0, 1.0, 4.0, 2.5, 3.0, 4.5]
    for i in range(len(scores)):
        wav(root / "DATA" / "wav" / f"sys{i % 3}-utt{i}.wav", 0.3, i)
    sets = root / "DATA" / "sets"
    sets.mkdir(parents=True)
    (sets / "test_mos_list.txt").write_text("".join(f"sys{i % 3}-utt{i}.wav,{m}\n" for i, m in enumerate(scores)))
    (sets / "train_mos_list.txt").write_text("sys0-utt0.wav,3.5\nsys1-utt1.wav,1.25\n")
    return root


def test_bvcc_mos_list_and_clips_evenly_spaced_in_mos(tmp_path):
    root = bvcc_tree(tmp_path / "bvcc")
    rows = bvcc_rows(root, CorpusOptions(max_clips=5))
    # sorted MOS 1.0 1.25 2.0 2.5 3.0 3.5 4.0 4.5 4.75; linspace(0, 8, 5) picks ranks 0 2 4 6 8
    assert sorted(r["mos"] for r in rows) == [1.0, 2.0, 3.0, 4.0, 4.75]
    assert {r["attribute"] for r in rows} == {"naturalness"}
    assert next(r for r in rows if r["mos"] == 4.75)["speaker"] == "sys2"
    assert [r["mos"] for r in bvcc_rows(root, CorpusOptions(split="train"))] == [3.5, 1.25]  # sorted by id
    (root / "DATA" / "sets" / "test_mos_list.txt").write_text("sys0-utt0.wav,3.5\nmissing.wav,2\n")
    with pytest.raises(InputError, match="no audio file named missing.wav") as err:
        bvcc_rows(root)
    assert "row 2" in str(err.value)


def vox_tree(root: Path, speakers: int = 3) -> Path:
    for s in range(speakers):
        for v, video in enumerate(("vidA", "vidB")):
            for u in range(3):
                wav(root / "wav" / f"id1000{s}" / f"{video}{s}" / f"0000{u}.wav", 0.3, 100 * s + 10 * v + u,
                    110 + 60 * s)
    return root


def test_voxceleb1_speaker_and_recording_from_the_path(tmp_path):
    root = vox_tree(tmp_path / "vox")
    rows = voxceleb1_rows(root, CorpusOptions(clips_per_speaker=4))
    assert Counter(r["label"] for r in rows) == {"id10000": 4, "id10001": 4, "id10002": 4}
    for speaker in ("id10000", "id10001"):
        assert Counter(r["recording"] for r in rows if r["speaker"] == speaker) == {
            f"vidA{speaker[-1]}": 2, f"vidB{speaker[-1]}": 2}  # round-robin over recordings
    assert len(voxceleb1_rows(root, CorpusOptions(speakers=2))) == 2 * 6


def test_build_from_corpus_folders_with_per_task_trials_on_the_cli(tmp_path, capsys):
    ravdess = ravdess_tree(tmp_path / "ravdess", actors=4)
    vox, bvcc = vox_tree(tmp_path / "vox", 4), bvcc_tree(tmp_path / "bvcc")
    manifest = tmp_path / "m.jsonl"
    assert main(["manifest", "voxceleb1", str(vox), "--out", str(manifest), "--clips-per-speaker", "4"]) == 0
    assert "16 clips, attribute speaker, 4 classes" in capsys.readouterr().out
    assert len(manifest.read_text().splitlines()) == 16
    assert main(["manifest", "fleurs", str(tmp_path), "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "per-language folders" in capsys.readouterr().err
    out = tmp_path / "ds"
    assert main(["build", "protocols", "--corpus", "ravdess", str(ravdess), "--corpus", "voxceleb1", str(vox),
                 "--corpus", "bvcc", str(bvcc), "--per-class", "4", "--clips-per-speaker", "4", "--out", str(out),
                 "--cleanness-trials", "5", "--identical-trials", "2", "--attribute-trials", "3",
                 "--naturalness-trials", "2", "--speaker-trials", "3", "--control", "emotion", "angry",
                 "neutral"]) == 0
    info = json.loads((out / "build_info.json").read_text())
    assert info["summary"]["pairwise_tasks"] == {"attribute": 3, "cleanness": 5, "identical": 2, "naturalness": 2,
                                                 "speaker": 3}
    assert info["summary"]["attributes"]["emotion"]["clips"] == 32
    # corpora named by their folder's name only: no absolute local path is published
    assert set(info["summary"]["corpora"]["clips"]) == {f"ravdess ({ravdess.name})", f"voxceleb1 ({vox.name})",
                                                        f"bvcc ({bvcc.name})"}
    pairs = pq.read_table(sorted((out / "pairwise").glob("*.parquet")), columns=["task", "clip_id"]).to_pandas()
    for clips in pairs.loc[pairs["task"] == "speaker", "clip_id"]:
        ref, a, b = clips.split("|")
        # vox1_<speaker>_<recording>_<utt>: the same-speaker candidate is another recording of the reference voice
        same = a if a.split("_")[1] == ref.split("_")[1] else b
        assert same.split("_")[2] != ref.split("_")[2]
    assert "Clips read from corpus folders" in (out / "README.md").read_text()


def test_hf_specialists_from_tiny_checkpoints_match_an_independent_reference(tmp_path):
    """A tiny audio classifier whose classes are the emotions (pretrained path, checked against the Transformers
    pipeline), the same model on language labels it does not name (embeddings + out-of-fold regression, checked by
    refitting), and a tiny x-vector model scoring speaker triplets (checked by hand cosine)."""
    import torch
    from transformers import AutoFeatureExtractor, AutoModelForAudioXVector, pipeline

    from omniaudit.data_builders.protocols.features import fitted_specialist
    from omniaudit.data_builders.protocols.specialists import (
        hf_attribute_specialist,
        parse_specialists,
        speaker_triplet_scores,
    )
    from omniaudit.tiny_models import tiny_audio_classifier, tiny_speaker_embedder

    labels = ["Angry", "happy", "neutral", "sad"]
    clf = tiny_audio_classifier(tmp_path / "clf", ["ang", "hap", "neu", "sad"])  # superb-style short class names
    spk = tiny_speaker_embedder(tmp_path / "spk")
    rng = np.random.default_rng(0)
    audios = [(0.2 * rng.standard_normal(RATE // 2)).astype(np.float32) for _ in range(8)]
    truth = np.array(labels * 2)
    groups = np.arange(8) % 4  # speakers
    pred, source = hf_attribute_specialist(f"{clf}", audios, truth, groups)
    top = pipeline("audio-classification", model=str(clf), device="cpu")
    expected = [{"ang": "Angry", "hap": "happy", "neu": "neutral", "sad": "sad"}[
        top({"raw": a, "sampling_rate": RATE}, top_k=1)[0]["label"]] for a in audios]
    assert list(pred) == expected and "pretrained audio classifier" in source
    lang = np.array(["English", "French"] * 4)
    pred, source = hf_attribute_specialist(f"{clf}", audios, lang, np.arange(8) % 4, seed=1)
    assert "embeddings (its classes name none of the labels)" in source and "2-fold" in source
    fe = AutoFeatureExtractor.from_pretrained(clf)
    from transformers import AutoModelForAudioClassification

    model = AutoModelForAudioClassification.from_pretrained(clf).eval()
    with torch.no_grad():
        emb = np.stack([model(**fe(a, sampling_rate=RATE, return_tensors="pt"), output_hidden_states=True)
                        .hidden_states[-1][0].mean(0).numpy() for a in audios])
    import pandas as pd

    again, _ = fitted_specialist(pd.DataFrame(emb), lang, 1, np.arange(8) % 4)
    assert list(pred) == list(again)
    trials = [{"reference": "c0", "first": "c1", "second": "c2", "gold": 0},
              {"reference": "c3", "first": "c4", "second": "c5", "gold": 1}]
    clips = {f"c{i}": a for i, a in enumerate(audios[:6])}
    got = speaker_triplet_scores(str(spk), trials, clips.__getitem__)
    xv = AutoModelForAudioXVector.from_pretrained(spk).eval()
    with torch.no_grad():
        e = {c: xv(**fe(a, sampling_rate=RATE, return_tensors="pt")).embeddings[0].numpy() for c, a in clips.items()}
    cos = lambda a, b: float(e[a] @ e[b] / np.linalg.norm(e[a]) / np.linalg.norm(e[b]))  # noqa: E731
    same = [cos("c0", "c1"), cos("c3", "c5")]
    other = [cos("c0", "c2"), cos("c3", "c4")]
    assert got["cosine_margin"] == pytest.approx(np.mean(np.subtract(same, other)), abs=1e-5)
    assert got["specialist_accuracy"] == np.mean(np.greater(same, other)) and got["triplets"] == 2
    assert parse_specialists(["hf:a", "speaker=hf:b"]) == (("*", "a"), ("speaker", "b"))
    with pytest.raises(InputError, match="hf:MODEL"):
        parse_specialists(["emotion=wav2vec"])
