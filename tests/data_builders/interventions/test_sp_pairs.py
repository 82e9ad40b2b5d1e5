"""SFT-policy negatives (Thud A.3): a policy's wrong answers become DPO rejected responses. Counts by hand from
scripted policies whose errors are known, the CLI, and a tiny SFT -> sample -> SP pairs -> DPO run on CPU."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import datasets
import pandas as pd
import pytest
from thud_helpers import SHORTCUT, ShortcutPolicy, launch, tiny_thud_root

from omniaudit.cli import main as omniaudit
from omniaudit.data_builders.hub import load_config, load_hub_dataset
from omniaudit.data_builders.interventions.sp_pairs import SPOptions, build_sp_pairs
from omniaudit.errors import InputError

REPO = Path(__file__).resolve().parents[3]


def text(messages: list[dict]) -> str:
    return messages[0]["content"][-1]["text"]


@pytest.fixture(scope="module")
def diagnostic(intervention_dataset) -> pd.DataFrame:
    """42 items: per clip (6) the Original asked 3 questions, 2 Shifts (-2, +2 s), 1 Mute, 1 Swap."""
    diag = load_config(intervention_dataset, "diagnostic", columns=["id", "intervention", "dimension", "gold"])
    assert len(diag) == 42 and diag["intervention"].value_counts().to_dict() == {"original": 18, "shift": 12,
                                                                                 "mute": 6, "swap": 6}
    return diag


def test_the_shortcut_policys_wrong_answers_are_the_pairs(intervention_dataset, diagnostic, tmp_path):
    """The visual shortcut (synchronized / a sound is heard / it matches) is right on the 18 Original items and wrong
    on the 24 intervened ones (12 Shift + 6 Mute + 6 Swap). Three runs: 0 and 2 the shortcut, 1 "I don't know." (42
    unparsed). Pairs: 24 wrong (run 2 repeats run 0: 24 duplicates) + 42 unparsed = 66; parsed only: 24."""
    policy = ShortcutPolicy(hedge_runs=(1,))
    summary = build_sp_pairs(tmp_path / "sp", intervention_dataset, policy, options=SPOptions(runs=3, seed=5))
    assert policy.calls == 3
    assert {k: summary[k] for k in ("items", "runs", "answers", "correct", "wrong", "unparsed", "empty", "missing",
                                    "duplicates", "pairs")} == {
        "items": 42, "runs": 3, "answers": 126, "correct": 36, "wrong": 48, "unparsed": 42, "empty": 0, "missing": 0,
        "duplicates": 24, "pairs": 66}
    assert summary["pairs_by"] == {"mute/existence": 12, "original/consistency": 6, "original/existence": 6,
                                   "original/sync": 6, "shift/sync": 24, "swap/consistency": 12}
    pairs = load_hub_dataset(tmp_path / "sp", "dpo")
    reference = load_hub_dataset(intervention_dataset, "dpo")
    assert pairs.features == reference.features  # the interventions' dpo columns and types: they mix
    assert len(pairs) == 66 and set(pairs["kind"]) == {"sp"}
    gold = diagnostic.set_index("id")["gold"]
    dimension = diagnostic.set_index("id")["dimension"]
    clips = load_hub_dataset(intervention_dataset, "diagnostic").cast_column("video", datasets.Video(decode=False))
    clip_of = dict(zip(clips["id"], (v["bytes"] for v in clips["video"]), strict=True))
    for row in pairs.cast_column("video", datasets.Video(decode=False)):
        item, run = re.fullmatch(r"(.+)/sp/(\d)", row["id"]).groups()
        assert text(row["chosen"]) == gold[item] and row["video"]["bytes"] == clip_of[item]
        assert text(row["rejected"]) == (SHORTCUT[dimension[item]] if run == "0" else "I don't know.")
        assert run in ("0", "1")  # run 2's answers repeat run 0's
        assert text(row["prompt"]) and row["prompt"][0]["content"][0]["type"] == "video"
    info = json.loads((tmp_path / "sp" / "build_info.json").read_text())
    assert info["policy"] == "ShortcutPolicy" and info["options"]["seed"] == 5
    assert len((tmp_path / "sp" / "policy_predictions.jsonl").read_text().splitlines()) == 126
    assert "| 126 | 36 | 48 | 42 | 0 | 0 | 24 | 66 |" in (tmp_path / "sp" / "README.md").read_text()

    strict = build_sp_pairs(tmp_path / "strict", intervention_dataset, ShortcutPolicy(hedge_runs=(1,)),
                            options=SPOptions(runs=2, parsed_only=True))
    assert (strict["wrong"], strict["unparsed"], strict["pairs"]) == (24, 42, 24)
    rows = load_config(tmp_path / "strict", "dpo", columns=["id", "intervention"])
    assert rows["intervention"].value_counts().to_dict() == {"shift": 12, "mute": 6, "swap": 6}


def test_empty_answers_are_no_pairs_and_a_perfect_policy_gives_none(intervention_dataset, diagnostic, tmp_path):
    summary = build_sp_pairs(tmp_path / "empty", intervention_dataset, ShortcutPolicy(empty_runs=(1,)),
                             options=SPOptions(runs=2))
    assert (summary["empty"], summary["wrong"], summary["pairs"]) == (42, 24, 24)
    # the oracle answers the reference: every gold answer is read as correct, so nothing is rejected
    with pytest.raises(InputError, match=r"no SP pairs: none of the policy's 42 answers .*'correct': 42"):
        build_sp_pairs(tmp_path / "oracle", intervention_dataset, "scripted:oracle")
    assert not (tmp_path / "oracle").exists()


def test_cli_from_a_predictions_file(intervention_dataset, diagnostic, tmp_path, capsys):
    """scripted:random answers the reference or "I don't know." per item and run: the pairs are the items with at least
    one "I don't know." (two in one item: one pair), counted here from the predictions file."""
    pred = tmp_path / "random.jsonl"
    assert omniaudit(["judge", "--dataset", str(intervention_dataset), "--config", "diagnostic", "--judge",
                      "scripted:random", "--runs", "2", "--seed", "1", "--out", str(pred)]) == 0
    answers = pd.read_json(pred, lines=True)
    unsure = answers[answers["raw"] == "I don't know."]
    assert 0 < len(unsure) < len(answers)
    capsys.readouterr()
    out = tmp_path / "sp"
    assert omniaudit(["build", "sp-pairs", "--dataset", str(intervention_dataset), "--predictions", str(pred),
                      "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"{len(answers) - len(unsure)} correct, 0 wrong, {len(unsure)} unparsed" in printed
    pairs = load_config(out, "dpo", columns=["id"])
    assert sorted(pairs["id"].str.rsplit("/", n=2).str[0]) == sorted(unsure["id"].unique())
    assert f"{pairs.shape[0]} SP pairs ({len(unsure) - unsure['id'].nunique()} repeated" in printed
    assert (out / "policy_predictions.jsonl").is_file()
    # a policy SPEC through the runners; --parsed-only keeps nothing from "I don't know."
    assert omniaudit(["build", "sp-pairs", "--dataset", str(intervention_dataset), "--policy", "scripted:random",
                      "--parsed-only", "--out", str(tmp_path / "none")]) == 2
    assert "no SP pairs" in capsys.readouterr().err and not (tmp_path / "none").exists()


def test_bad_inputs_fail_naming_them(intervention_dataset, diagnostic, tmp_path, capsys):
    with pytest.raises(InputError, match="either a policy"):
        build_sp_pairs(tmp_path / "x", intervention_dataset)
    with pytest.raises(InputError, match="either a policy"):
        build_sp_pairs(tmp_path / "x", intervention_dataset, "scripted:oracle", predictions=tmp_path / "p.jsonl")
    with pytest.raises(InputError, match="predictions file not found"):
        build_sp_pairs(tmp_path / "x", intervention_dataset, predictions=tmp_path / "p.jsonl")
    (tmp_path / "p.jsonl").write_text(json.dumps({"id": "nope/sync", "raw": "synchronized"}) + "\n")
    with pytest.raises(InputError, match="id not in the dataset"):
        build_sp_pairs(tmp_path / "x", intervention_dataset, predictions=tmp_path / "p.jsonl")
    (tmp_path / "s.jsonl").write_text(json.dumps({"id": diagnostic["id"][0], "synced": True}) + "\n")
    with pytest.raises(InputError, match="no answer text"):
        build_sp_pairs(tmp_path / "x", intervention_dataset, predictions=tmp_path / "s.jsonl")
    with pytest.raises(InputError, match="runner SPEC"):
        build_sp_pairs(tmp_path / "x", intervention_dataset, object())
    from omniaudit.data_builders.hub import configs_metadata, write_hub_dataset
    from omniaudit.hub_cards import dataset_card

    items = pd.DataFrame({"id": ["a"], "prompt": ["Describe the audio."], "media": [[]]})
    write_hub_dataset(tmp_path / "items", {"diagnostic": {"train": items}},
                      dataset_card("tiny_chat.md.j2", {"configs": configs_metadata({"diagnostic": ["train"]})}))
    with pytest.raises(InputError, match=r"lacks column\(s\) \['source_id'.*build interventions"):
        build_sp_pairs(tmp_path / "x", tmp_path / "items", "scripted:oracle")
    assert not (tmp_path / "x").exists()
    with pytest.raises(SystemExit):  # --policy or --predictions
        omniaudit(["build", "sp-pairs", "--dataset", str(intervention_dataset), "--out", str(tmp_path / "x")])
    assert "one of the arguments --policy --predictions is required" in capsys.readouterr().err


@pytest.mark.slow
def test_sft_then_sample_then_sp_pairs_then_dpo_on_cpu(tmp_path_factory):
    """The paper's SP loop with the tiny omni model: SFT (2 steps) -> the SFT checkpoint answers the 28 diagnostic
    items (hf: runner, sampled) -> its wrong answers become pairs -> DPO on CTP + SP pairs (a dataset mixture)."""
    import yaml

    root = tiny_thud_root(tmp_path_factory.mktemp("sp"))
    launch(root, "sft.py", REPO / "training/recipes/tiny/sft_omni.yaml", root / "sft")
    assert omniaudit(["build", "sp-pairs", "--dataset", str(root / "runs/tiny/data/interventions"), "--policy",
                      f"hf:{root / 'sft'}", "--max-tokens", "8", "--fps", "1", "--max-frames", "4", "--seed", "0",
                      "--min-usable", "0", "--out", str(root / "sp")]) == 0  # the random policy writes byte noise
    info = json.loads((root / "sp" / "build_info.json").read_text())["summary"]
    assert info["answers"] == 28 and info["pairs"] == len(load_hub_dataset(root / "sp", "dpo"))
    assert info["pairs"] == info["wrong"] + info["unparsed"] - info["duplicates"] > 0  # a random model is mostly wrong
    recipe = yaml.safe_load((REPO / "training/recipes/tiny/dpo_mixture.yaml").read_text())
    recipe["dataset_mixture"]["datasets"][1] = {"id": str(root / "sp"), "config": "dpo", "weight": 1.0}
    recipe["model_name_or_path"] = str(root / "sft")
    (root / "dpo_sp.yaml").write_text(yaml.safe_dump(recipe))
    result = launch(root, "dpo.py", root / "dpo_sp.yaml", root / "dpo")
    assert (root / "dpo" / "adapter_model.safetensors").is_file()
    epochs = re.findall(r"'epoch': '?([\d.]+)'?", result.stdout + result.stderr)
    assert float(epochs[-1]) == pytest.approx(2 / math.ceil((16 + info["pairs"]) / 2), abs=1e-4)  # 2 steps, batch 2
