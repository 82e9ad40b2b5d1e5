"""Train a text pairwise judge (EmoPrefer audit appendix B, Table 4: "Text judge").

    accelerate launch --config_file accelerate_configs/multi_gpu.yaml training/pairwise_judge.py \\
        --config training/recipes/qwen2.5-7b/pairwise_judge.yaml

A two-class sequence-classification head on ``Description A / Description B`` prompts (LoRA on the trunk, the head
trained in full). Training is symmetric: every pair appears in both orders with the target reversed. Inference is
dual-order: ``p(a1) = (p_A(a1, a2) + 1 - p_A(a2, a1)) / 2``, so the prediction cannot depend on the presentation order.
As in the ODIN script, ``eval_folds`` selects held-out folds (``all``: out-of-fold predictions for every pair), and
``OUTPUT_DIR/predictions.csv`` (``id, order, p_a1``) is what ``omniaudit audit preference --judges`` reads. LoRA
is TRL's (``use_dora``, ``use_rslora``, ``lora_modules_to_save`` apply); with several folds each has its own folder,
wandb run and, with ``--resume_from_checkpoint true``, its own last checkpoint to resume from.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import numpy as np
import torch
from transformers import Trainer, TrainingArguments

from omniaudit.errors import InputError
from omniaudit.training.common import (
    DataArguments,
    end_fold,
    finish_cross_fit,
    fold_arguments,
    load_split,
    load_tokenizer,
    model_kwargs,
    parse,
    peft_config,
    report_setup,
    train_and_save,
)

PAIR_COLUMNS = ("id", "a1", "a2", "preference", "fold")
PROMPT = "Description A: {a}\nDescription B: {b}\nWhich description is better? A or B."


@dataclass
class JudgeArguments:
    eval_folds: str = field(default="0", metadata={"help": "held-out folds, e.g. '0', '0,1' or 'all'"})
    max_length: int = field(default=640, metadata={"help": "tokens per prompt (paper: 640)"})


def ordered_examples(rows: list[dict], both_orders: bool) -> list[dict]:
    """Prompts with target 0 = A preferred, 1 = B preferred; ``both_orders`` adds the swapped presentation."""
    out = []
    for r in rows:
        a1_wins = r["preference"] == "a1"
        out.append({"id": r["id"], "order": "ab", "text": PROMPT.format(a=r["a1"], b=r["a2"]),
                    "label": 0 if a1_wins else 1})
        if both_orders:
            out.append({"id": r["id"], "order": "ba", "text": PROMPT.format(a=r["a2"], b=r["a1"]),
                        "label": 1 if a1_wins else 0})
    return out


def dual_order_p_a1(p_first_ab: np.ndarray, p_first_ba: np.ndarray) -> np.ndarray:
    """Mean of p_A(a1, a2) and 1 - p_A(a2, a1): swapping the presentation cannot change it."""
    return (p_first_ab + (1 - p_first_ba)) / 2


def build_model(model_args, tokenizer):
    """The two-class classifier; with ``use_peft`` LoRA on the trunk (TRL's LoRA options, all linear layers unless
    ``lora_target_modules`` says otherwise) and the classification head trained in full."""
    from peft import get_peft_model
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(model_args.model_name_or_path, num_labels=2,
                                                               **model_kwargs(model_args))
    model.config.pad_token_id = tokenizer.pad_token_id
    lora = peft_config(model_args, task_type="SEQ_CLS", default_targets="all-linear")
    return model if lora is None else get_peft_model(model, lora)


def main(data_args: DataArguments, training_args: TrainingArguments, model_args, judge_args: JudgeArguments) -> dict:
    from transformers import DataCollatorWithPadding

    report_setup(training_args)
    tokenizer = load_tokenizer(model_args, need_chat_template=False)
    ds = load_split(data_args, PAIR_COLUMNS)
    rows = [r for r in ds if r["preference"] in ("a1", "a2")]
    all_folds = sorted({r["fold"] for r in rows})
    folds = all_folds if judge_args.eval_folds == "all" else [int(f) for f in judge_args.eval_folds.split(",")]
    if set(folds) - set(all_folds):
        raise InputError(f"eval_folds not in the dataset's folds {all_folds}", value=judge_args.eval_folds)

    def tokenize(batch):
        return tokenizer(batch["text"], truncation=True, max_length=judge_args.max_length)

    out_dir = Path(training_args.output_dir)
    ids, p_a1, results = [], [], {}
    for fold in folds:
        args = fold_arguments(training_args, fold, len(folds))
        train = datasets.Dataset.from_list(ordered_examples([r for r in rows if r["fold"] != fold], True))
        held_rows = [r for r in rows if r["fold"] == fold]
        held = datasets.Dataset.from_list(ordered_examples(held_rows, True))
        train, held = (d.map(tokenize, batched=True, remove_columns=["text", "id", "order"]) for d in (train, held))
        trainer = Trainer(model=build_model(model_args, tokenizer), args=args, train_dataset=train, eval_dataset=held,
                          data_collator=DataCollatorWithPadding(tokenizer))
        train_and_save(trainer, training_args, args.output_dir)
        trainer.args.train_sampling_strategy = "random"  # predictions must come back in dataset order (ab, ba, ...)
        logits = trainer.predict(held).predictions
        p_first = torch.softmax(torch.tensor(logits), dim=-1)[:, 0].numpy()  # P(slot A preferred)
        p = dual_order_p_a1(p_first[0::2], p_first[1::2])  # rows alternate ab, ba per pair
        y = np.array([r["preference"] == "a1" for r in held_rows])
        results[f"fold{fold}"] = {"accuracy": float(np.mean((p >= 0.5) == y)),
                                  "order_agreement": float(np.mean((p_first[0::2] >= 0.5) == (p_first[1::2] < 0.5)))}
        end_fold(trainer, results[f"fold{fold}"])
        ids += [r["id"] for r in held_rows]
        p_a1 += p.tolist()
    # one prediction row per pair: the dual-order mean is already free of the presentation order
    return finish_cross_fit(out_dir, "judge_metrics.json", results, ids, p_a1)


if __name__ == "__main__":
    from trl import ModelConfig

    try:
        main(*parse((DataArguments, TrainingArguments, ModelConfig, JudgeArguments)))
    except InputError as exc:
        sys.exit(f"error: {exc}")
