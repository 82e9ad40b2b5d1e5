"""The cross-fitted omni pairwise judge: per-fold SFT with the checkpoint kept by held-out WAF, the letter
probabilities it is selected on, and the whole K-fold loop (training/judge_folds.sh) into one audited judge."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
import torch
from test_training import BIN, REPO, env

from omniaudit.errors import InputError


def test_paired_rows_order_ab_ba_per_pair_and_read_a1_from_the_ab_gold():
    import datasets

    from omniaudit.training.heldout import paired_rows

    rows = [{"pair_id": "q", "order": "ba", "gold": "A", "fold": 1}, {"pair_id": "p", "order": "ab", "gold": "B",
                                                                      "fold": 1},
            {"pair_id": "q", "order": "ab", "gold": "B", "fold": 1}, {"pair_id": "p", "order": "ba", "gold": "A",
                                                                      "fold": 1}]
    held, y = paired_rows(datasets.Dataset.from_list(rows))
    assert [(r["pair_id"], r["order"]) for r in held] == [("q", "ab"), ("q", "ba"), ("p", "ab"), ("p", "ba")]
    assert y.tolist() == [False, False]  # both pairs: B in order ab, i.e. a2 preferred
    with pytest.raises(InputError, match="lacks one of its orders"):
        paired_rows(datasets.Dataset.from_list(rows[:3]))


def test_answer_probs_read_the_letters_where_the_answer_starts(tiny_models):
    """The LM-head pre-hook keeps only the answer positions; P(A) must equal the full forward's, row by row."""
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

    from omniaudit.training.heldout import answer_probs, letter_ids

    tok = PreTrainedTokenizerFast.from_pretrained(tiny_models["text"])
    model = AutoModelForCausalLM.from_pretrained(tiny_models["text"])
    letters = letter_ids(tok)
    prompts = ["which is better? ", "a calm voice and a tense face, pick one: ", "x"]
    answer = {"A": letters[0], "B": letters[1], "x": tok("x", add_special_tokens=False).input_ids[0]}

    def collate(rows):  # prompt + the gold answer token, right-padded, the answer as the only target
        ids = [tok(r["prompt"], add_special_tokens=False).input_ids + [answer[r["gold"]]] for r in rows]
        width = max(map(len, ids))
        input_ids = torch.tensor([i + [tok.pad_token_id] * (width - len(i)) for i in ids])
        labels = torch.full_like(input_ids, -100)
        for k, i in enumerate(ids):
            labels[k, len(i) - 1] = i[-1]
        mask = (torch.arange(width) < torch.tensor([len(i) for i in ids])[:, None]).long()
        return {"input_ids": input_ids, "attention_mask": mask, "labels": labels}

    rows = [{"prompt": p, "gold": g} for p, g in zip(prompts, "ABA", strict=True)]
    got = answer_probs(model, collate, rows, letters, batch_size=2)
    expect = []
    for r in rows:
        ids = tok(r["prompt"], add_special_tokens=False).input_ids
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0, -1, list(letters)]
        expect.append(torch.softmax(logits.double(), -1)[0].item())
    np.testing.assert_allclose(got, expect, rtol=1e-5)
    assert not np.allclose(got, 0.5)  # a random model still prefers one letter a little
    # an answer that does not start with a letter (here "x", e.g. a template adding text first) is refused, named
    assert answer["x"] not in letters
    bad = [*rows, {"prompt": "y", "gold": "x", "pair_id": "q7", "order": "ba"}]
    said = rf"held-out pair 'q7' order ba: its answer starts with token id {answer['x']},"
    with pytest.raises(InputError, match=said):
        answer_probs(model, collate, bad, letters, batch_size=2)


def test_heldout_fold_needs_checkpoint_selection_by_a_held_out_score():
    from transformers import TrainingArguments

    from omniaudit.training.heldout import check_heldout_args

    args = TrainingArguments(output_dir="x", use_cpu=True, report_to="none")
    with pytest.raises(InputError, match="load_best_model_at_end"):
        check_heldout_args(args)
    args = TrainingArguments(output_dir="x", use_cpu=True, report_to="none", eval_strategy="steps", save_steps=1,
                             eval_steps=1, load_best_model_at_end=True)
    with pytest.raises(InputError, match="metric_for_best_model: waf"):
        check_heldout_args(args)


@pytest.mark.slow
def test_two_fold_cross_fit_loop_gives_one_out_of_fold_judge_the_audit_reads(tiny_root, tmp_path):
    """training/judge_folds.sh on the tiny omni model, folds 0 and 1, two steps each (a save and a held-out WAF at
    each): per fold the selected step and its WAF, the kept weights those of that checkpoint, the two judges' fold
    files merged into one judge and audited on the pairs of those folds."""
    from safetensors.torch import load_file

    from omniaudit.data_builders.hub import load_config

    data = tiny_root / "runs/tiny/data/preference_media"
    out = tmp_path / "cv"
    result = subprocess.run(
        [str(REPO / "training/judge_folds.sh"), str(REPO / "training/recipes/tiny/judge_omni_cross_fit.yaml"),
         str(data), str(out), "--disable_tqdm", "true"],
        cwd=tiny_root, capture_output=True, text=True, timeout=900,
        env=env(FOLDS="0 1", ACCELERATE_CONFIG=str(REPO / "accelerate_configs/cpu.yaml"), FPS="1", MAX_FRAMES="2",
                AUDIT_ARGS="--judged-only --n-resamples 20 --no-source-classifier --no-controls",
                PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}"))
    assert result.returncode == 0, result.stderr[-4000:]
    judge = load_config(data, "judge")
    for k in (0, 1):
        chosen = json.loads((out / f"fold{k}" / "heldout_selection.json").read_text())
        assert chosen["heldout_fold"] == k and k not in chosen["train_folds"]
        assert chosen["heldout_pairs"] == judge[judge["fold"] == k]["pair_id"].nunique()
        assert [h["step"] for h in chosen["history"]] == [1, 2]
        wafs = [h["waf"] for h in chosen["history"]]
        assert chosen["waf"] == max(wafs) and chosen["step"] == 1 + wafs.index(max(wafs))  # first best kept
        kept = load_file(out / f"fold{k}" / "model.safetensors")
        best = load_file(out / f"fold{k}" / chosen["checkpoint"] / "model.safetensors")
        assert all(torch.equal(kept[n], best[n]) for n in kept)
    rows = [json.loads(line) for line in (out / "judge.jsonl").read_text().splitlines()]
    record = rows[0]["provenance"]
    assert sorted(record["selection"]["out_of_fold"]) == ["0", "1"]
    assert record["selection"]["out_of_fold"]["1"].endswith("fold1")
    assert sorted(r["id"] for r in rows) == sorted(judge[judge["fold"].isin([0, 1])]["id"])
    audit = json.loads((out / "audit" / "audit.json").read_text())
    assert audit["judges"]["omni"]["n_two_orders"] == len(rows) // 2
