"""EmoPrefer training experiments on CPU with tiny models: the single-order position-bias ablation and checkpoint
selection of the pairwise judge, the omni judge's chat records, Omni ODIN and the omni single-head BT control."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_training import RECIPES, ok

from omniaudit.cli import main as omniaudit

WORDS = ["calm", "happy", "sad", "angry", "face", "voice", "worried", "the", "a", "bright", "low", "loud", "tense"]


def position_prior_csv(path: Path, n: int = 200, a1_share: float = 0.8, seed: int = 0) -> Path:
    """EmoPrefer-layout pairs whose descriptions carry no signal and whose label is a1 in ``a1_share`` of the pairs:
    only the presentation position predicts the label (the V1 situation the paper's ablation exposes)."""
    rng = np.random.default_rng(seed)
    rows = [{"name": f"clip{i:04d}", "model1": "g1", "a1": " ".join(rng.choice(WORDS, rng.integers(4, 12))),
             "model2": "g2", "a2": " ".join(rng.choice(WORDS, rng.integers(4, 12))),
             "preference": "a1" if rng.random() < a1_share else "a2"} for i in range(n)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def run_judge(root: Path, data: Path, out: Path, *extra: str) -> dict:
    """training/pairwise_judge.py in this process (full fine-tuning of the tiny classifier, fold 0 held out)."""
    from transformers import TrainingArguments
    from trl import ModelConfig

    from omniaudit.training.common import DataArguments, parse
    from omniaudit.training.pairwise_judge import JudgeArguments, main

    args = parse((DataArguments, TrainingArguments, ModelConfig, JudgeArguments),
                 ["--config", str(RECIPES / "pairwise_judge.yaml"), "--output_dir", str(out),
                  "--model_name_or_path", str(root / "runs/tiny/seq_cls"), "--dataset_name", str(data),
                  "--max_train_samples", "100000", "--use_peft", "false", "--learning_rate", "3e-3",
                  "--per_device_train_batch_size", "16", "--max_length", "64", "--disable_tqdm", "true", *extra])
    main(*args)
    return json.loads((out / "judge_metrics.json").read_text())


def test_single_order_examples_and_held_out_scores_match_a_hand_computation():
    from sklearn.metrics import f1_score

    from omniaudit.errors import InputError
    from omniaudit.training.pairwise_judge import JudgeArguments, held_out_scores, ordered_examples

    rows = [{"id": "p", "a1": "x", "a2": "y", "preference": "a1"},
            {"id": "q", "a1": "u", "a2": "v", "preference": "a2"}]
    both = ordered_examples(rows)
    assert [(e["id"], e["order"], e["label"]) for e in both] == [("p", "ab", 0), ("p", "ba", 1), ("q", "ab", 1),
                                                                  ("q", "ba", 0)]
    assert both[1]["text"].startswith("Description A: y\nDescription B: x")  # ba: a2 shown first
    assert [(e["id"], e["order"]) for e in ordered_examples(rows, ("ab",))] == [("p", "ab"), ("q", "ab")]
    assert [(e["order"], e["label"]) for e in ordered_examples(rows, ("ba",))] == [("ba", 1), ("ba", 0)]
    with pytest.raises(InputError, match="train_orders"):
        JudgeArguments(train_orders="abba")
    # four pairs (y: a1, a1, a1, a2) scored by an A-locked judge: P(slot A) = 0.9 in every row
    y = np.array([1, 1, 1, 0], dtype=bool)
    s = held_out_scores(np.full(8, 0.9), y)
    # order ab alone: always a1 -> f1(a1) = 6/7, f1(a2) = 0, weighted 3/4 * 6/7 = 64.29; order ba: always a2 ->
    # f1(a2) = 2/5, weighted 1/4 * 2/5 = 10.0; averaged: P(a1) = (0.9 + 0.1) / 2 = 0.5, a tie in every pair (half
    # credit per class: tn = fp = 0.5, fn = tp = 1.5 -> f1(a1) = 3/5, f1(a2) = 1/3 -> 3/4 * 3/5 + 1/4 * 1/3 = 53.33)
    assert s["waf_ab"] == pytest.approx(100 * 3 / 4 * 6 / 7) == pytest.approx(
        100 * f1_score(y, np.ones(4, bool), average="weighted", zero_division=0))
    assert s["waf_ba"] == pytest.approx(10.0) == pytest.approx(
        100 * f1_score(y, np.zeros(4, bool), average="weighted", zero_division=0))
    assert s["waf"] == pytest.approx(100 * (3 / 4 * 3 / 5 + 1 / 4 * 1 / 3))
    assert s["first_slot_rate"] == 1.0 and s["order_agreement"] == 0.0
    # a position-free judge that is right in both orders
    right = held_out_scores(np.array([0.8, 0.3, 0.7, 0.2, 0.6, 0.1, 0.4, 0.9]), y)
    assert right["waf"] == right["waf_ab"] == right["waf_ba"] == 100.0 and right["order_agreement"] == 1.0
    assert right["first_slot_rate"] == 0.5


@pytest.mark.slow
def test_single_order_training_is_position_biased_and_the_best_held_out_checkpoint_is_kept(tiny_root,
                                                                                            tmp_path):
    data = tmp_path / "ds"
    assert omniaudit(["build", "preference", "--data", str(position_prior_csv(tmp_path / "p.csv")),
                      "--out", str(data)]) == 0
    # order ba only (a1 shown as B), evaluated every 2 steps, checkpoints selected by the held-out (dual-order) WAF
    single = run_judge(tiny_root, data, tmp_path / "ba", "--train_orders", "ba", "--max_steps", "16",
                       "--learning_rate", "2e-3", "--eval_strategy", "steps", "--eval_steps", "2",
                       "--save_strategy", "steps", "--save_steps", "2", "--load_best_model_at_end", "true",
                       "--metric_for_best_model", "waf")
    sel = single["selection"]["fold0"]
    history = {h["step"]: h for h in sel["history"]}
    assert sorted(history) == list(range(2, 17, 2)) and single["train_orders"] == "ba"
    # trained on order ba, the judge answers "B" for the majority (a1 in 80%): right in order ba, reversed in ab
    assert history[16]["waf_ba"] - history[16]["waf_ab"] > 40, history
    assert history[16]["first_slot_p"] < 0.35, history
    best = max(history, key=lambda s: (history[s]["waf"], -s))  # the first of equal bests, as the Trainer keeps
    assert sel["by"] == "waf" and sel["step"] == best and sel["checkpoint"] == f"checkpoint-{best}"
    assert sel["best"] == pytest.approx(history[best]["waf"])
    assert best < 16 and history[best]["waf"] > history[16]["waf"] + 5, history  # not the last checkpoint
    for key in ("waf", "waf_ab", "waf_ba"):  # the predictions come from the selected checkpoint
        assert single["folds"]["fold0"][key] == pytest.approx(history[best][key], abs=1e-9), key
    pred = pd.read_csv(tmp_path / "ba" / "predictions.csv")
    assert list(pred.columns) == ["id", "order", "p_a1"]
    assert len(pred) == 2 * 40 and set(pred.groupby("id")["order"].apply(tuple)) == {("ab", "ba")}  # fold 0: 40
    # the preference audit reads both orders and scores each alone: the same WAFs as the trainer's
    assert omniaudit(["audit", "preference", "--data", str(data), "--judges", f"ba={tmp_path / 'ba/predictions.csv'}",
                      "--judged-only", "--out", str(tmp_path / "audit"), "--n-resamples", "200",
                      "--no-source-classifier", "--no-controls"]) == 0
    audit = json.loads((tmp_path / "audit" / "audit.json").read_text())
    bias = audit["judges"]["ba"]["position_bias"]["orders"]
    for order in ("ab", "ba"):
        assert bias[order]["full"]["waf"] == pytest.approx(single["waf_" + order], abs=1e-9)
    assert bias["averaged"]["full"]["waf"] == pytest.approx(single["waf"], abs=1e-9)
    # symmetric training on the same pairs: the slot prior fades (mean P(slot A) towards 0.5; this tiny judge has no
    # content signal to learn), while single-order training drives it away from 0.5
    both = run_judge(tiny_root, data, tmp_path / "both", "--train_orders", "both", "--max_steps", "20",
                     "--eval_strategy", "no", "--save_strategy", "no", "--load_best_model_at_end", "false")
    assert both["train_orders"] == "both" and both["selection"]["fold0"]["by"] == "last"
    assert abs(both["first_slot_p"] - 0.5) < abs(history[16]["first_slot_p"] - 0.5) / 2, (history[16], both)
    with pytest.raises(Exception, match="metric_for_best_model"):
        run_judge(tiny_root, data, tmp_path / "bad", "--eval_strategy", "steps", "--eval_steps", "5",
                  "--save_steps", "5", "--load_best_model_at_end", "true", "--metric_for_best_model", "bleu")


@pytest.fixture(scope="module")
def omni_preference(tmp_path_factory):
    """A 10-pair benchmark ("same" pairs included) built with a 2-s video + audio clip per pair (distinct bytes)."""
    from media_clips import noise_audio, write_clip

    from omniaudit.data_builders.preference import SyntheticSpec, synthesize
    from omniaudit.data_builders.preference.read import COLUMNS

    root = tmp_path_factory.mktemp("omni_pref")
    raw = synthesize(SyntheticSpec(n_pairs=10, seed=1, same_rate=0.2))[list(COLUMNS)]
    raw.to_csv(root / "pairs.csv", index=False)
    media = root / "media"
    media.mkdir()
    for i, name in enumerate(raw["name"]):
        write_clip(media / f"{name}.mp4", seconds=2.0, fps=4, size=(56, 56), audio=noise_audio(2.0, seed=i))
    out = root / "ds"
    assert omniaudit(["build", "preference", "--data", str(root / "pairs.csv"), "--media", str(media),
                      "--out", str(out)]) == 0
    return raw, media, out


def launch_recipe(root: Path, script: str, recipe: str, out: Path, *extra: str):
    import subprocess
    import sys

    from test_training import BIN, REPO, env

    cmd = [str(BIN / "accelerate"), "launch", "--config_file", str(REPO / "accelerate_configs" / "cpu.yaml"),
           str(REPO / "training" / script), "--config", str(RECIPES / recipe), "--output_dir", str(out), *extra]
    assert sys.executable
    return subprocess.run(cmd, cwd=root, env=env(), capture_output=True, text=True, timeout=900)


def test_judge_sft_and_pairs_media_configs_carry_each_pairs_clip_in_both_orders(omni_preference):
    import pyarrow.parquet as pq

    raw, media, ds = omni_preference
    judge = pq.read_table(sorted((ds / "judge").glob("*.parquet"))).to_pylist()
    sft = pq.read_table(sorted((ds / "judge_sft").glob("*.parquet"))).to_pylist()
    pairs = pq.read_table(sorted((ds / "pairs_media").glob("*.parquet"))).to_pylist()
    binary = raw[raw["preference"] != "same"]
    assert len(sft) == len(judge) == 2 * len(binary) and len(pairs) == len(binary) > 0
    for item, rec in zip(judge, sft, strict=True):  # the judge items, one chat record each, in the same order
        user, answer = rec["messages"]
        assert rec["id"] == item["id"] and rec["order"] == item["order"] and rec["fold"] == item["fold"]
        assert [c["type"] for c in user["content"]] == ["video", "text"]
        assert user["content"][1]["text"] == item["prompt"]
        assert answer == {"role": "assistant", "content": [{"type": "text", "text": item["gold"]}]}
        assert rec["video"]["bytes"] == item["video"]["bytes"] == (media / f"{item['name']}.mp4").read_bytes()
        pair = binary.set_index("name").loc[item["name"]]
        first = pair["a1"] if item["order"] == "ab" else pair["a2"]
        assert f"Description A: {first}\n" in item["prompt"]
        assert rec["gold"] == ("A" if pair["preference"] == ("a1" if item["order"] == "ab" else "a2") else "B")
    for rec in pairs:
        pair = binary.set_index("name").loc[rec["name"]]
        assert (rec["a1"], rec["a2"], rec["preference"]) == (pair["a1"], pair["a2"], pair["preference"])
        assert rec["len1"] == len(pair["a1"]) and rec["video"]["bytes"] == (media / f"{rec['name']}.mp4").read_bytes()
    assert "`judge_sft`" in (ds / "README.md").read_text()


@pytest.mark.slow
def test_tiny_omni_judge_trains_on_chat_records_and_is_judged_in_both_orders(tiny_root, omni_preference,
                                                                             tmp_path):
    _, _, ds = omni_preference
    out = tmp_path / "judge_omni"
    ok(launch_recipe(tiny_root, "sft.py", "judge_omni.yaml", out, "--dataset_name", str(ds)))
    assert (out / "model.safetensors").is_file()
    pred = tmp_path / "omni.jsonl"
    assert omniaudit(["judge", "--dataset", str(ds), "--config", "judge", "--judge", f"hf:{out}", "--out", str(pred),
                      "--fps", "1", "--max-frames", "2"]) == 0
    rows = [json.loads(line) for line in pred.read_text().splitlines()]
    assert {r["order"] for r in rows} == {"ab", "ba"} and all(r["option_probs"] for r in rows)
    assert omniaudit(["audit", "preference", "--data", str(ds), "--judges", f"omni={pred}", "--out",
                      str(tmp_path / "audit"), "--n-resamples", "100", "--no-source-classifier", "--no-controls"]) == 0
    audit = json.loads((tmp_path / "audit" / "audit.json").read_text())
    meta = audit["judges"]["omni"]
    assert meta["n_two_orders"] == len(rows) // 2 and meta["p_a1_from"] == {"probs": len(rows)}


def test_odin_single_head_loss_is_bradley_terry_on_the_content_head():
    import torch

    from omniaudit.training.odin import Heads, odin_loss

    chosen, rejected = torch.tensor([[0.5], [2.0], [-1.0]]), torch.tensor([[0.0], [1.0], [1.0]])
    lengths, priors = torch.tensor([10.0, 30.0, 20.0, 5.0, 7.0, 9.0]), torch.tensor([0.2, 0.4, 0.6, 0.5, 0.5, 0.1])
    terms = odin_loss(chosen, rejected, torch.tensor(0.0), lengths, priors, lambda_dec=0.0, lambda_orth=1.0)
    hand = -np.mean(np.log(1 / (1 + np.exp(-np.array([0.5, 1.0, -2.0])))))  # -log sigmoid(r_C(d+) - r_C(d-))
    assert float(terms["loss"]) == pytest.approx(hand) and float(terms["bt"]) == pytest.approx(hand)
    assert set(terms) == {"loss", "bt", "dec", "orth", "rho_content_length", "rho_content_prior"}
    scores = np.array([0.5, 2.0, -1.0, 0.0, 1.0, 1.0])
    assert float(terms["rho_content_length"]) == pytest.approx(np.corrcoef(scores, lengths.numpy())[0, 1], abs=1e-6)
    with pytest.raises(ValueError, match="lambda_dec must be 0"):
        odin_loss(chosen, rejected, torch.tensor(0.0), lengths, priors, lambda_dec=1.0)
    heads = Heads(8, n_heads=1)
    out, orth = heads(torch.ones(2, 8))
    assert out.shape == (2, 1) and float(orth) == 0.0


@pytest.mark.parametrize(("recipe", "n_heads"), [("reward_odin_omni.yaml", 3), ("reward_odin_omni_control.yaml", 1)])
@pytest.mark.slow
def test_omni_odin_and_the_single_head_control_train_on_clips_and_reload(tiny_root, omni_preference,
                                                                        tmp_path, recipe, n_heads):
    import datasets
    import torch
    from transformers import AutoProcessor

    from omniaudit.training.common import media_column
    from omniaudit.training.odin import HEADS_FILE, load_odin
    from omniaudit.training.reward_odin import OmniPairCollator, records

    raw, _, ds = omni_preference
    out = tmp_path / "odin"
    ok(launch_recipe(tiny_root, "reward_odin.py", recipe, out, "--dataset_name", str(ds), "--eval_folds", "all"))
    metrics = json.loads((out / "odin_metrics.json").read_text())
    assert metrics["n_heads"] == n_heads and metrics["inputs"] == "video+audio+description"
    rho = {"rho_content_length", "rho_content_prior"} | (
        {"rho_length_head_length", "rho_prior_head_prior"} if n_heads == 3 else set())
    assert rho <= set(metrics) and all(rho <= set(f) for f in metrics["folds"].values())
    assert n_heads == 3 or "rho_length_head_length" not in metrics
    pred = pd.read_csv(out / "predictions.csv")
    assert pred["p_a1"].between(0, 1).all() and len(pred) == (raw["preference"] != "same").sum()  # out-of-fold
    # LoRA in the thinker's language model only; the saved adapter + heads give back the predicted rewards
    fold = sorted(p for p in out.iterdir() if p.name.startswith("fold"))[0]
    from safetensors.torch import load_file

    keys = list(load_file(fold / "adapter_model.safetensors"))
    assert keys and all("language_model" in k for k in keys), keys[:5]
    assert load_file(fold / HEADS_FILE)["weight"].shape == (n_heads, 64)
    model = load_odin(fold, base_model=str(tiny_root / "runs/tiny/omni"))
    k = int(fold.name.removeprefix("fold"))
    pairs, media = media_column(datasets.load_dataset(str(ds), "pairs_media", split="train"))
    held = records(pairs, {k}, held_out=True, media=media)
    batch = OmniPairCollator(AutoProcessor.from_pretrained(tiny_root / "runs/tiny/omni"), 1.0, 2, 2048)(held)
    media_inputs = {k: v for k, v in batch.items() if k not in ("input_ids", "attention_mask", "lengths", "priors",
                                                                "labels")}
    with torch.no_grad():
        scores, _ = model(batch["input_ids"], batch["attention_mask"], **media_inputs)
    n = len(held)
    p = torch.sigmoid(scores[:n, 0] - scores[n:, 0]).numpy()
    np.testing.assert_allclose(p, pred.set_index("id").loc[[r["id"] for r in held], "p_a1"], atol=1e-5)


def test_held_out_scores_count_ties_as_no_verdict():
    """A judge with no verdict on any held-out item (every P(slot A) = 0.5) once scored accuracy 0.75 and order
    agreement 1.0; it is a fair coin: accuracy 0.5, first-slot rate 0.5, and its orders never agree."""
    import numpy as np

    from omniaudit.training.pairwise_judge import held_out_scores

    s = held_out_scores(np.full(8, 0.5), np.array([True, True, True, False]))
    assert (s["accuracy"], s["first_slot_rate"], s["order_agreement"]) == (0.5, 0.5, 0.0)
