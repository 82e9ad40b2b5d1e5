"""Inputs the corpus readers, the protocols manifest and the preference reader accepted silently are now
a clear error or a counted warning (card / build info)."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pandas as pd
import pytest
from test_protocol_corpora import fleurs_tree, ravdess_tree, wav

from omniaudit.cli import main
from omniaudit.data_builders.protocols.corpora import CorpusOptions, fleurs_rows, ravdess_rows, write_corpus_manifest
from omniaudit.data_builders.protocols.manifest import read_clip_manifest
from omniaudit.errors import InputError


# ------------------------------------------------------------------------------------------------------ FLEURS
def test_fleurs_languages_dropped_by_min_seconds_are_counted(tmp_path):
    root = fleurs_tree(tmp_path / "fleurs")  # clips of 0.1, 0.5, 0.6, 0.8 and 2.0 s per language
    for f in (root / "ja_jp").rglob("*.wav"):  # Japanese: only clips too short for --min-seconds 0.3
        wav(f, 0.2, 1)
    with pytest.warns(UserWarning, match=r"fleurs: ja_jp left out: 0 of its 5 clips last 0.3-1 s"):
        summary = write_corpus_manifest(tmp_path / "m.jsonl", [("fleurs", root)],
                                        CorpusOptions(per_class=3, min_seconds=0.3, max_seconds=1.0))
    facts = next(iter(summary.values()))
    assert facts["classes"] == 2 and len(facts["warnings"]) == 1  # was: two classes and not a word about Japanese
    rows = fleurs_rows(root, CorpusOptions(per_class=4, min_seconds=0.3, max_seconds=1.0))
    assert Counter(r["label"] for r in rows) == {"English": 3, "French": 3}
    assert sorted(rows.warnings) == [
        "fleurs: en_us 3 clips, fewer than the 4 asked: 3 of its 5 clips last 0.3-1 s (--min-seconds / "
        "--max-seconds; its clips last 0.1-2.0 s)",
        "fleurs: fr_fr 3 clips, fewer than the 4 asked: 3 of its 5 clips last 0.3-1 s (--min-seconds / "
        "--max-seconds; its clips last 0.1-2.0 s)",
        "fleurs: ja_jp left out: 0 of its 5 clips last 0.3-1 s (--min-seconds / --max-seconds; its clips last "
        "0.2-0.2 s)"]


def test_a_stray_folder_does_not_become_a_language(tmp_path):
    root = fleurs_tree(tmp_path / "fleurs")
    wav(root / "__MACOSX" / "x.wav", 0.5, 3)  # unpacked archive debris with audio in it
    (root / "docs").mkdir()  # no audio: ignored
    options = CorpusOptions(per_class=2, min_seconds=0.3, max_seconds=1.0)
    with pytest.raises(InputError, match=r"folder '__MACOSX' holds audio but is not a language folder"):
        fleurs_rows(root, options)
    wav(root / "train" / "y.wav", 0.5, 4)
    shutil.rmtree(root / "__MACOSX")
    with pytest.raises(InputError, match=r"folder 'train' holds audio but is not a language folder"):
        fleurs_rows(root, options)
    named = fleurs_rows(root, CorpusOptions(per_class=2, min_seconds=0.3, max_seconds=1.0,
                                            languages=("en_us", "fr_fr")))  # naming the folders picks them
    assert set(r["label"] for r in named) == {"English", "French"}
    shutil.rmtree(root / "train")
    wav(root / "cmn_hans_cn" / "z.wav", 0.5, 5)  # a FLEURS code is a language (and "xx_yy" folders are too)
    assert "Mandarin Chinese" in {r["label"] for r in fleurs_rows(root, CorpusOptions(per_class=1, min_seconds=0.3,
                                                                                  max_seconds=1.0))}


# ------------------------------------------------------------------------------------------------------ RAVDESS
@pytest.mark.parametrize(("name", "match"), [
    ("03-01-05-01-01-01.wav", "not MM-VV-EE-II-SS-RR-AA"),
    ("03-01-05-01-01-01-01 (1).wav", "not MM-VV-EE-II-SS-RR-AA"),
    ("03-01-05-03-01-01-01.wav", r"intensity 03 \(expected 01/02\)"),
    ("03-01-01-02-01-01-01.wav", "no strong neutral"),
    ("03-01-05-01-03-01-01.wav", r"statement 03"),
    ("03-01-05-01-01-01-31.wav", r"actor 31 \(expected 01-24\)"),
])
def test_malformed_ravdess_names_are_refused(tmp_path, name, match):
    root = ravdess_tree(tmp_path / "ravdess", actors=2)
    wav(root / "Actor_01" / name, 0.3, 7)
    with pytest.raises(InputError, match=match) as err:
        ravdess_rows(root, CorpusOptions(per_class=4))
    assert name in str(err.value)


def test_an_actor_folder_contradicting_the_file_name_is_refused(tmp_path):
    root = ravdess_tree(tmp_path / "ravdess", actors=2)
    src = root / "Actor_02" / "03-01-05-01-01-01-02.wav"
    src.rename(root / "Actor_01" / src.name)  # actor 02's clip (female) in actor 01's folder (male)
    with pytest.raises(InputError, match=r"says actor 02 but it sits in folder Actor_01"):
        ravdess_rows(root, CorpusOptions(per_class=4))


# ------------------------------------------------------------------------------------------- protocols manifest
def clip_manifest(tmp_path, rows):
    path = tmp_path / "clips.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_same_audio_under_two_names_with_conflicting_labels_is_refused(tmp_path):
    a = wav(tmp_path / "a.wav", 0.4, 1)
    shutil.copyfile(a, tmp_path / "a_copy.wav")
    b = wav(tmp_path / "b.wav", 0.4, 2)
    rows = [{"id": "a", "audio": "a.wav", "attribute": "emotion", "label": "happy"},
            {"id": "b", "audio": "b.wav", "attribute": "emotion", "label": "sad"},
            {"id": "c", "audio": "a_copy.wav", "attribute": "emotion", "label": "sad"}]
    with pytest.raises(InputError, match=r"the same audio is emotion 'happy' in row 1 \(id 'a'\) and 'sad' in row 3 "
                                         r"\(id 'c'\)") as err:
        read_clip_manifest(clip_manifest(tmp_path, rows))
    assert "row 3" in str(err.value)
    rows[2]["audio"] = "a.wav"  # the same file under two ids
    with pytest.raises(InputError, match="the same audio is emotion"):
        read_clip_manifest(clip_manifest(tmp_path, rows))
    rows[2]["label"] = "happy"  # one label: kept, and noted on the card
    m = read_clip_manifest(clip_manifest(tmp_path, rows))
    assert len(m) == 3 and any("the same audio is listed 2 times with label 'happy'" in n for n in m.attrs["notes"])
    # another attribute of the same clip is no conflict
    rows[2] = {"id": "a", "audio": "a.wav", "attribute": "language", "label": "English"}
    assert len(read_clip_manifest(clip_manifest(tmp_path, rows))) == 3
    assert b.is_file()


# -------------------------------------------------------------------------------------------- preference reader
def test_generator_names_differing_only_in_case_are_one_generator_on_the_card(tmp_path, small_raw):
    raw = small_raw.copy()
    gens = sorted(set(raw["model1"]) | set(raw["model2"]))
    g = gens[0]
    upper = raw.index[raw["model1"] == g][:3]
    raw.loc[upper, "model1"] = g.upper()  # three rows spell it in capitals
    csv = tmp_path / "pairs.csv"
    raw.to_csv(csv, index=False)
    out = tmp_path / "ds"
    assert main(["build", "preference", "--data", str(csv), "--out", str(out)]) == 0
    pairs = pd.read_parquet(next((out / "pairs").glob("*.parquet")))
    assert g.upper() not in set(pairs["model1"]) and set(pairs["model1"]) | set(pairs["model2"]) == set(gens)
    card = (out / "README.md").read_text()
    n = int((raw["model1"] == g).sum() + (raw["model2"] == g).sum())
    assert "Generator names that differ only in case are one generator" in card and "(1 merged)" in card
    assert f"`{g}` ← `{g}` ({n}), `{g.upper()}` (3)" in card
