"""Find, fix, verify (``benchmarks/find_fix_verify.py``): its training sets are what the design says, and a reduced
run of the whole loop (three tiny judges trained by ``training/sft.py``, one scorecard with ``--baseline``) finds
the position shortcut the biased data teach."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def ffv():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import find_fix_verify

        yield find_fix_verify
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.fixture(scope="module")
def ffv_sets(ffv):
    import find_fix_verify_sets  # beside find_fix_verify: the training sets it trains on

    return find_fix_verify_sets


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("ffv")


@pytest.fixture(scope="module")
def items(ffv_sets, work):
    return ffv_sets.by_length(ffv_sets.training_items(work))


def test_the_length_labels_pick_the_longer_description_in_both_orders(ffv_sets, items):
    for _, pair in items.groupby("pair_id"):
        if len(pair) == 2:  # the two orders of a pair name opposite letters for the same description
            assert set(pair["gold"]) == {"A", "B"}
    row = items.iloc[0]
    a, b = (row["prompt"].split(f"Description {s}: ")[1].split("\n\n")[0] for s in "AB")
    assert row["gold"] == ("A" if len(a) > len(b) else "B")


def test_position_sets_bias_balance_and_remedy_the_same_pairs(ffv_sets, items):
    sets = ffv_sets.position_sets(items, seed=0)
    biased, control, remedy = sets["biased"], sets["control"], sets["remedy"]
    assert (biased["gold"] == "A").all()  # the shortcut pays on every row
    assert len(control) == len(biased) and abs((control["gold"] == "A").mean() - 0.5) <= 1 / len(control)
    assert set(control["pair_id"]) == set(biased["pair_id"]) == set(remedy["pair_id"])
    both = remedy.groupby("pair_id").agg(orders=("order", frozenset), golds=("gold", frozenset))
    assert (both["orders"] == frozenset({"ab", "ba"})).all() and (both["golds"] == frozenset({"A", "B"})).all()
    assert ffv_sets.position_sets(items, seed=0)["control"].equals(control)  # seeded


def test_style_reward_pairs_prefer_the_longer_or_keep_the_source_balanced_human_labels(ffv_sets, work):
    import pandas as pd

    from omniaudit.data_builders.hub import load_config

    length = pd.read_parquet(ffv_sets.reward_pairs(work, "length") / "pairs")
    assert len(length) > 0 and (length["len1"] != length["len2"]).all()
    assert (length["preference"] == pd.Series(["a1" if a > b else "a2" for a, b in
                                               zip(length["len1"], length["len2"], strict=True)])).all()  # length pays
    balanced = pd.read_parquet(ffv_sets.reward_pairs(work, "source-balanced") / "pairs")
    source = load_config(ffv_sets.training_build(work), "source_balanced")
    assert set(balanced["id"]) == set(source.loc[source["preference"].isin(["a1", "a2"]), "id"])
    human = source.set_index("id")["preference"]
    assert (balanced["preference"].to_numpy() == human[balanced["id"]].to_numpy()).all()  # the labels kept
    wins = pd.concat([balanced.assign(g=balanced["model1"], won=balanced["preference"] == "a1"),
                      balanced.assign(g=balanced["model2"], won=balanced["preference"] == "a2")])
    assert wins.groupby("g")["won"].mean().between(0.3, 0.7).all()  # no generator's prior pays much
    # the style remedy's pairs
    controlled = pd.read_parquet(ffv_sets.reward_pairs(work, "length-controlled") / "pairs")
    gap = (controlled["len1"] - controlled["len2"]).abs() / controlled[["len1", "len2"]].max(axis=1)
    assert len(controlled) > 0 and (gap < ffv_sets.LENGTH_CONTROL).all()
    pairs = load_config(ffv_sets.training_build(work), "pairs").set_index("id")["preference"]
    assert (controlled["preference"].to_numpy() == pairs[controlled["id"]].to_numpy()).all()  # human labels


@pytest.fixture(scope="module")
def label_sets(ffv_sets, tmp_path_factory):
    pytest.importorskip("soundfile")
    with pytest.MonkeyPatch.context() as patch:  # the benchmark's 6 sentences per cell, made small: same rows per clip
        patch.setattr(ffv_sets, "TRAIN_SENTENCES_PER_CELL", 1)
        return ffv_sets.label_following_sets(tmp_path_factory.mktemp("ffv-labels"), seed=0)


def answer(row: dict) -> str:
    return row["messages"][-1]["content"][0]["text"]


def test_label_sets_answer_the_supplied_label_a_random_one_or_the_truth_beside_the_same_no_label_items(label_sets):
    biased, control, remedy = label_sets["biased"], label_sets["control"], label_sets["remedy"]
    assert len(biased) == len(control) == len(remedy) > 0
    labelled = [r for r in biased if r["supplied"] is not None]
    assert labelled and all(answer(r) == r["supplied"] != r["gold"] for r in labelled)  # copying always pays
    assert all(answer(r) == r["gold"] != r["supplied"] for r in remedy if r["supplied"] is not None)  # and never
    assert all(answer(r) == r["gold"] for r in control)
    supplied = [r for r in control if r["supplied"] is not None]
    k = len(supplied[0]["options"])
    hits = sum(r["supplied"] == r["gold"] for r in supplied) / len(supplied)
    assert abs(hits - 1 / k) < 0.1  # as often as chance
    for row in labelled[:5]:  # the quoted label in the prompt is the one recorded
        assert f'"{row["supplied"]}"' in row["messages"][0]["content"][1]["text"]
    assert [r["id"] for r in biased if r["supplied"] is None] == [r["id"] for r in remedy if r["supplied"] is None]


@pytest.mark.slow
def test_a_tiny_judge_trained_on_biased_pairs_is_flagged_for_position_and_saved_as_a_reference(ffv, tmp_path,
                                                                                                monkeypatch, capsys):
    from omniaudit.evaluation.scorecard.references import learned

    # 10 steps: "A" is learned by then (slot-A rate 1.00 at 8 steps, as at 20); the three trainings take most of it
    monkeypatch.setattr(sys, "argv", ["find_fix_verify.py", "--shortcuts", "position", "--steps", "10", "--card-size",
                                      "small", "--workdir", str(tmp_path), "--save-references",
                                      str(tmp_path / "learned")])
    ffv.main()
    printed = capsys.readouterr().out
    assert printed.strip().splitlines()[-1].startswith("find_fix_verify: position=flagged/")
    card = json.loads((tmp_path / "card-position" / "scorecard.json").read_text(encoding="utf-8"))
    biased = card["models"]["biased"]["shortcuts"]["position"]
    assert biased["status"] == "flagged" and biased["value"] >= 0.9  # "A" learned: the slot decides
    assert set(card["baseline"]["models"]) == {"control", "remedied"}
    assert "position" in card["remedies"] and "biased" in card["remedies"]["position"]["models"]
    (ref,) = learned(tmp_path / "learned")  # the flagged biased model, as the learned reference tier reads it
    assert (ref.name, ref.shortcut) == ("learned-pos", "position")
    assert ref.spec == f"hf:{tmp_path / 'learned' / 'learned-pos'}"
    manifest = json.loads((tmp_path / "learned" / "manifest.json").read_text(encoding="utf-8"))
    (entry,) = manifest["models"]
    assert entry["benchmark_card"]["value"] == biased["value"] and entry["steps"] == 10 and entry["seed"] == 0
    assert "model.safetensors" in entry["sha256"] and "training_args.bin" not in entry["sha256"]


def test_visual_sets_answer_original_clips_only_every_variant_or_pair_the_interventions(ffv_sets, tmp_path,
                                                                                         monkeypatch):
    import pandas as pd

    pytest.importorskip("av")
    monkeypatch.setattr(ffv_sets, "TRAIN_CLIPS", 3)
    sets = ffv_sets.visual_sets(tmp_path)
    biased = pd.read_parquet(sets["biased"] / "sft")
    control = pd.read_parquet(sets["control"] / "sft")
    dpo = pd.read_parquet(sets["remedy"] / "dpo")
    assert set(biased["intervention"]) == {"original"}  # the picture's sound always right
    assert set(control["intervention"]) == {"original", "shift", "mute", "swap"} and set(biased["id"]) < set(
        control["id"])
    assert {"shift", "mute", "swap"} <= set(dpo["kind"]) and (dpo["chosen"].map(str) != dpo["rejected"].map(str)).all()
    assert biased["video"].map(lambda v: len(v["bytes"]) > 0).all()  # the clips travel with the rows


@pytest.mark.slow
def test_the_label_following_card_is_the_default_build_with_more_sentences_per_cell(ffv_sets, tmp_path, monkeypatch):
    import shutil

    import pandas as pd

    from omniaudit.evaluation.protocols.entry import PARAMS

    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng not installed")
    monkeypatch.setattr(ffv_sets, "CARD_SENTENCES", 2)  # the benchmark's 12, made small
    folder = ffv_sets.card_protocols(tmp_path)
    info = json.loads((folder / "build_info.json").read_text(encoding="utf-8"))
    assert info["options"]["max_trials"] == PARAMS["default"]["max_trials"] and info["spec"]["sentences_per_cell"] == 2
    clips = pd.read_parquet(folder / "blueprint")["clip_id"].nunique()
    # 4 emotions x 4 voices (English) and 4 languages x 4 voices, the neutral English clips shared: 7 x 4 per sentence
    assert clips == 7 * 4 * 2
