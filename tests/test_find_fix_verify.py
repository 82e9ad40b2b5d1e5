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


@pytest.fixture(scope="module")
def ffv_seeds(ffv):
    import find_fix_verify_seeds  # beside find_fix_verify: the seeds, the shards and the removal table

    return find_fix_verify_seeds


def fabricated_card(shortcut: str, audit: str, statuses: tuple[str, str, str], against: str,
                    accuracy: tuple[float, float, float]) -> dict:
    """A scorecard.json as the benchmark's cards hold it (baseline: the biased model), cut to what the table reads:
    statuses and accuracies of (biased, control, remedied), the remedied model's status against the biased one."""
    values = {"flagged": 1.0, "clear": 0.5}
    models = {m: {"shortcuts": {shortcut: {"status": s, "value": values.get(s), "ci": [0.4, 0.6],
                                           "measure": "slot-A rate"}}} for m, s in zip(
        ("biased", "control", "remedied"), statuses, strict=True)}
    biased_acc = accuracy[0]
    base = {m: {"shortcuts": {shortcut: {"status": status}},
                "accuracy": {audit: {"before": biased_acc, "after": acc, "change": acc - biased_acc,
                                     "ci": [acc - biased_acc - 0.05, acc - biased_acc + 0.05]}}}
            for m, status, acc in (("control", "unchanged", accuracy[1]), ("remedied", against, accuracy[2]))}
    d = accuracy[2] - accuracy[1]  # the card's --control: remedied against control, paired, held above -0.05
    base["remedied"]["against_control"] = {audit: {"before": accuracy[1], "after": accuracy[2], "change": d,
                                                   "ci": [d - 0.04, d + 0.04], "held": d - 0.04 > -0.05}}
    return {"models": models, "baseline": {"baseline": "biased", "control": "control", "margin": 0.05,
                                           "models": base}}


def write_card(work, seed: int, shortcut: str, card: dict) -> None:
    folder = work / f"seed-{seed}" / f"card-{shortcut}"
    folder.mkdir(parents=True)
    (folder / "scorecard.json").write_text(json.dumps(card), encoding="utf-8")


def test_seeds_are_ranges_or_lists_and_shards_split_them_once_each(ffv_seeds):
    assert ffv_seeds.parse_seeds("0-9") == list(range(10))
    assert ffv_seeds.parse_seeds("0,3,5") == [0, 3, 5] and ffv_seeds.parse_seeds("5,0-2,2") == [0, 1, 2, 5]
    for bad in ("", "9-0", "a", "1-"):
        with pytest.raises(ValueError):
            ffv_seeds.parse_seeds(bad)
    seeds = list(range(10))
    shards = [ffv_seeds.shard_seeds(seeds, f"{i}/3") for i in (1, 2, 3)]
    assert shards[0] == [0, 3, 6, 9] and sorted(sum(shards, [])) == seeds
    for bad in ("0/2", "3/2", "1", "a/b"):
        with pytest.raises(ValueError):
            ffv_seeds.shard_seeds(seeds, bad)


def test_the_removal_table_has_a_row_per_shortcut_and_seed_and_counts_the_removals(ffv_seeds, tmp_path):
    met = fabricated_card("position", "preference", ("flagged", "clear", "clear"), "removed", (0.50, 0.54, 0.55))
    not_held = fabricated_card("position", "preference", ("flagged", "clear", "clear"), "removed", (0.50, 0.60, 0.52))
    kept = fabricated_card("style", "preference", ("flagged", "clear", "flagged"), "not removed", (0.55, 0.50, 0.44))
    write_card(tmp_path, 0, "position", met)
    write_card(tmp_path, 1, "position", not_held)
    write_card(tmp_path, 0, "style", kept)  # style has no card at seed 1 yet
    done = tmp_path / "seed-0" / "biased-model"
    done.mkdir()
    (done / "find_fix_verify.json").write_text(json.dumps({"minutes": 1.0, "torch_threads": 2, "deterministic": True}))

    table = ffv_seeds.removal_table(tmp_path, [0, 1], ["position", "style"], {"position": "preference",
                                                                             "style": "preference"}, margin=0.05)
    rows = {(r["shortcut"], r["seed"]): r["outcome"] for r in table["rows"]}
    assert len(rows) == 4 and rows[("style", 1)] is None
    assert rows[("position", 0)]["goal_met"] and rows[("position", 0)]["accuracy"]["held"]
    assert rows[("position", 1)]["against_biased"] == "removed" and not rows[("position", 1)]["goal_met"]
    assert rows[("position", 1)]["accuracy"]["remedied_minus_control"] == pytest.approx(-0.08)
    assert rows[("position", 1)]["accuracy"]["remedied_minus_control_ci"] == pytest.approx([-0.12, -0.04])
    assert rows[("position", 1)]["accuracy"]["held"] is False  # its interval reaches past -0.05
    assert rows[("position", 1)]["accuracy"]["remedied_minus_biased_ci"] == pytest.approx([-0.03, 0.07])
    assert rows[("style", 0)]["remedied"]["status"] == "flagged" and not rows[("style", 0)]["goal_met"]
    assert ffv_seeds.summary_lines(table) == [
        "position: removed at 2 of 2 seeds; goal met at 1 of 2",
        "style: removed at 0 of 2 seeds; goal met at 0 of 2 (no card yet: seed 1)"]
    assert table["training"][0] == {"biased-model": {"torch_threads": 2, "deterministic": True, "torch_version": None}}

    md_path, json_path = ffv_seeds.write_removal_table(tmp_path, table)
    assert (md_path.name, json_path.name) == ("removal_table.md", "removal_table.json")
    md = md_path.read_text(encoding="utf-8")
    assert "| position | 0 | flagged 1.00 | clear 0.50 | clear 0.50 | **removed** | " \
           "+0.010 [-0.030, +0.050] (held) | +0.050 [+0.000, +0.100] | yes |" in md
    assert "| style | 1 | no card | no card | no card | no card |" in md
    assert "- position: removed at 2 of 2 seeds; goal met at 1 of 2" in md and "torch threads: 2" in md
    assert json.loads(json_path.read_text(encoding="utf-8"))["summary"]["style"]["missing"] == [1]
    assert ffv_seeds.write_removal_table(tmp_path, table, "2/3")[0].name == "removal_table.shard-2-of-3.md"


def test_table_only_rebuilds_the_table_from_the_seed_folders_without_training(ffv, tmp_path, capsys):
    write_card(tmp_path, 3, "position", fabricated_card("position", "preference", ("flagged", "clear", "clear"),
                                                        "removed", (0.50, 0.54, 0.55)))
    ffv.main(["--table-only", "--shortcuts", "position", "--workdir", str(tmp_path)])
    assert capsys.readouterr().out.strip().splitlines()[-1] == \
        "find_fix_verify seeds: position: removed at 1 of 1 seeds; goal met at 1 of 1"
    assert (tmp_path / "removal_table.md").is_file() and not (tmp_path / "seed-3" / "tiny-causal-lm").exists()


@pytest.mark.parametrize("argv", [["--seeds", "0-1"], ["--seeds", "0-1", "--workdir", "w", "--seed", "2"],
                                  ["--seed", "1", "--shard", "1/2"], ["--seeds", "0-1", "--workdir", "w",
                                                                      "--shard", "3/2"]])
def test_seed_options_that_cannot_go_together_are_refused(ffv, argv):
    with pytest.raises(SystemExit):
        ffv.parse_args(argv)
    assert ffv.parse_args(["--seed", "3"]).seed == 3 and ffv.parse_args([]).seed == 0
