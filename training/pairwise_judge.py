"""Train a text pairwise judge (EmoPrefer audit appendix B, Table 4: "Text judge").

    accelerate launch --config_file accelerate_configs/multi_gpu.yaml training/pairwise_judge.py \\
        --config training/recipes/qwen2.5-7b/pairwise_judge.yaml

From a pip install, in any folder (``omniaudit recipes list`` names the recipes)::

    accelerate launch --config_file "$(omniaudit recipes path accelerate:multi_gpu)" \\
        -m omniaudit.training.pairwise_judge \\
        --config recipe:qwen2.5-7b/pairwise_judge

A two-class sequence-classification head on ``Description A / Description B`` prompts (LoRA on the trunk, the head
trained in full). Training is symmetric by default: every pair appears in both orders with the target reversed
(``train_orders: both``); ``train_orders: ab`` (or ``ba``) trains on one presentation order only, the position-bias
ablation of appendix B ("single-order training collapses into severe position bias (30.9 vs. 79.7 WAF across
opposite orders)"). Inference is always dual-order: ``p(a1) = (p_A(a1, a2) + 1 - p_A(a2, a1)) / 2``, so the averaged
prediction cannot depend on the presentation order, and each order is also scored alone.

Checkpoint selection by held-out-fold WAF (appendix B: "Text and pairwise Omni checkpoints maximize held-out-fold
WAF"): every evaluation scores the held-out fold (``waf``: dual-order; ``waf_ab``, ``waf_ba``: each order alone), and
with ``load_best_model_at_end: true`` + ``metric_for_best_model: waf`` (and matching eval/save strategies) the
checkpoint with the highest held-out WAF, not the last one, makes the predictions. Like the paper's, this selection
is on the scored fold itself (not nested), which favours the judge.

As in the ODIN script, ``eval_folds`` selects held-out folds (``all``: out-of-fold predictions for every pair).
``OUTPUT_DIR/predictions.csv`` holds two rows per pair, ``id, order, p_a1`` for order ``ab`` (P(a1) read from the
a1-first prompt) and ``ba`` (from the a2-first prompt), which ``audit preference --predictions`` averages (the
dual-order score) and scores order by order (per-order WAF). ``judge_metrics.json`` has per fold the held-out WAF
(dual-order and per order), accuracy, order agreement, the share of first-slot choices and the selected checkpoint.
LoRA is TRL's (``use_dora``, ``use_rslora``, ``lora_modules_to_save`` apply); with several folds each has its own
folder, wandb run and, with ``--resume_from_checkpoint true``, its own last checkpoint to resume from.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import numpy as np
import torch
from transformers import Trainer, TrainingArguments, set_seed

from omniaudit.errors import InputError
from omniaudit.evaluation.stats import confusion_weights, decide_with_ties, waf_from_confusion
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
    refuse_heldout_fold,
    report_setup,
    train_and_save,
)

PAIR_COLUMNS = ("id", "a1", "a2", "preference", "fold")
PROMPT = "Description A: {a}\nDescription B: {b}\nWhich description is better? A or B."
ORDERS = ("ab", "ba")
TRAIN_ORDERS = {"both": ORDERS, "ab": ("ab",), "ba": ("ba",)}
SELECTION_METRICS = ("waf", "waf_ab", "waf_ba", "accuracy")


@dataclass
class JudgeArguments:
    eval_folds: str = field(default="0", metadata={"help": "held-out folds, e.g. '0', '0,1' or 'all'"})
    max_length: int = field(default=640, metadata={"help": "tokens per prompt (paper: 640)"})
    train_orders: str = field(default="both", metadata={
        "help": "presentation orders trained on: both (symmetric training, the paper's judges), ab (a1 shown as A "
                "only) or ba (a2 shown as A only): the single-order position-bias ablation"})

    def __post_init__(self) -> None:
        if self.train_orders not in TRAIN_ORDERS:
            raise InputError(f"expected one of {', '.join(TRAIN_ORDERS)}", column="train_orders",
                             value=self.train_orders)


def ordered_examples(rows: list[dict], orders: tuple[str, ...] | bool = ORDERS) -> list[dict]:
    """Prompts with target 0 = A preferred, 1 = B preferred, per pair in ``orders`` (``ab``: a1 shown as A; ``ba``:
    a2 shown as A, target reversed), pair by pair. ``True`` / ``False`` stand for both orders / ``ab`` only."""
    if isinstance(orders, bool):
        orders = ORDERS if orders else ("ab",)
    out = []
    for r in rows:
        a1_wins = r["preference"] == "a1"
        for order in orders:
            a, b = (r["a1"], r["a2"]) if order == "ab" else (r["a2"], r["a1"])
            out.append({"id": r["id"], "order": order, "text": PROMPT.format(a=a, b=b),
                        "label": int(a1_wins != (order == "ab"))})
    return out


def dual_order_p_a1(p_first_ab: np.ndarray, p_first_ba: np.ndarray) -> np.ndarray:
    """Mean of p_A(a1, a2) and 1 - p_A(a2, a1): swapping the presentation cannot change it."""
    return (p_first_ab + (1 - p_first_ba)) / 2


def waf_score(y_a1: np.ndarray, p_a1: np.ndarray) -> float:
    """Two-class WAF (percent) of P(a1) against ``y_a1`` (1: a1 preferred), as the preference audit scores a judge:
    P(a1) = 0.5 is a tie counted half for each class (:func:`~omniaudit.evaluation.stats.decide_with_ties`)."""
    weights = confusion_weights(np.asarray(y_a1, dtype=np.int64), decide_with_ties(p_a1))
    return float(waf_from_confusion(weights.sum(axis=0)))


def held_out_scores(p_first: np.ndarray, y_a1: np.ndarray) -> dict[str, float]:
    """Held-out metrics from P(slot A preferred) of rows alternating ab, ba per pair and the pairs' labels.

    ``waf`` scores the dual-order P(a1); ``waf_ab`` / ``waf_ba`` score each presentation order alone (P(a1) is
    p_A in order ab and 1 - p_A in order ba); ``first_slot_rate`` is the share of (pair, order) decisions for the
    description shown first (0.5 for a judge without position bias, 1.0 for one that always answers A);
    ``first_slot_p`` the mean P(slot A) (0.5 for a judge without a slot prior, even one with no other signal);
    ``order_agreement`` the share of pairs whose two orders pick the same description. A decision of exactly 0.5 is a
    tie, scored as the preference audit scores it: half credit in ``accuracy`` and ``first_slot_rate``, and a pair
    with a tied order picks no description, so its orders do not agree (a judge with no verdict on any item has
    accuracy 0.5, first-slot rate 0.5 and order agreement 0, never 0.75 / 1.0 / 1.0).
    """
    p_first = np.asarray(p_first, dtype=np.float64)
    if p_first.size != 2 * len(y_a1):
        raise ValueError(f"expected 2 rows (ab, ba) per pair: {p_first.size} rows for {len(y_a1)} pairs")
    p_ab, p_ba = p_first[0::2], 1.0 - p_first[1::2]  # P(a1) from each order
    p = dual_order_p_a1(p_first[0::2], p_first[1::2])
    y = np.asarray(y_a1, dtype=bool)
    choice, first = decide_with_ties(p), decide_with_ties(p_first)  # 1, 0 or 0.5 (a tie)
    both = (decide_with_ties(p_ab) != 0.5) & (decide_with_ties(p_ba) != 0.5)
    return {"waf": waf_score(y, p), "waf_ab": waf_score(y, p_ab), "waf_ba": waf_score(y, p_ba),
            "accuracy": float(np.mean(np.where(y, choice, 1.0 - choice))),
            "order_agreement": float(np.mean(both & (decide_with_ties(p_ab) == decide_with_ties(p_ba)))),
            "first_slot_rate": float(np.mean(first)), "first_slot_p": float(np.mean(p_first))}


def eval_metrics(eval_pred) -> dict[str, float]:
    """``compute_metrics`` of the Trainer: the held-out fold scored at each evaluation (rows alternate ab, ba per
    pair; label 0 in order ab means a1 is preferred), so ``metric_for_best_model: waf`` selects the checkpoint."""
    logits, labels = np.asarray(eval_pred.predictions), np.asarray(eval_pred.label_ids)
    p_first = torch.softmax(torch.tensor(logits, dtype=torch.float64), dim=-1)[:, 0].numpy()
    return held_out_scores(p_first, labels[0::2] == 0)


def check_selection(args) -> None:
    """Checkpoint selection needs a held-out metric this script computes and checkpoints at every evaluation."""
    if not args.load_best_model_at_end:
        return
    metric = (args.metric_for_best_model or "loss").removeprefix("eval_")
    if metric not in (*SELECTION_METRICS, "loss"):
        raise InputError(f"expected one of {', '.join(SELECTION_METRICS)} (held-out fold) or loss",
                         column="metric_for_best_model", value=args.metric_for_best_model)
    if str(args.eval_strategy) == "no" or getattr(args.eval_strategy, "value", None) == "no":
        raise InputError("load_best_model_at_end selects among evaluated checkpoints: set eval_strategy (e.g. epoch)",
                         column="eval_strategy")


def selection_record(trainer) -> dict:
    """Which checkpoint made the predictions: the best by ``metric_for_best_model`` or the last step, and the
    held-out WAF at every evaluation."""
    state, args = trainer.state, trainer.args
    skip = ("eval_runtime", "eval_samples_per_second", "eval_steps_per_second")
    history = [{"step": h["step"], "epoch": h.get("epoch"),
                **{k.removeprefix("eval_"): v for k, v in h.items() if k.startswith("eval_") and k not in skip}}
               for h in state.log_history if "eval_waf" in h]
    if args.load_best_model_at_end and state.best_model_checkpoint:
        return {"by": (args.metric_for_best_model or "loss").removeprefix("eval_"),
                "checkpoint": Path(state.best_model_checkpoint).name, "best": state.best_metric,
                "step": state.best_global_step, "history": history}
    return {"by": "last", "checkpoint": None, "step": state.global_step, "history": history}


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

    info = report_setup(training_args, data_args, model_args)
    refuse_heldout_fold(data_args, "training/pairwise_judge.py", "set eval_folds (the folds held out, one judge each)")
    check_selection(training_args)
    if training_args.metric_for_best_model and training_args.metric_for_best_model.removeprefix("eval_") != "loss":
        training_args.greater_is_better = True  # WAF and accuracy: higher is better
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
    train_orders = TRAIN_ORDERS[judge_args.train_orders]
    ids, orders, p_a1, results, selection = [], [], [], {}, {}
    for fold in folds:
        args = fold_arguments(training_args, fold, len(folds))
        train = datasets.Dataset.from_list(ordered_examples([r for r in rows if r["fold"] != fold], train_orders))
        held_rows = [r for r in rows if r["fold"] == fold]
        held = datasets.Dataset.from_list(ordered_examples(held_rows, ORDERS))  # always scored in both orders
        train, held = (d.map(tokenize, batched=True, remove_columns=["text", "id", "order"]) for d in (train, held))
        set_seed(args.seed)  # the classification head and the LoRA are initialised here, before the Trainer seeds
        trainer = Trainer(model=build_model(model_args, tokenizer), args=args, train_dataset=train, eval_dataset=held,
                          data_collator=DataCollatorWithPadding(tokenizer), compute_metrics=eval_metrics)
        # with load_best_model_at_end: the best checkpoint
        train_and_save(trainer, training_args, args.output_dir, run_info={**info, "eval_fold": fold})
        trainer.args.train_sampling_strategy = "random"  # predictions must come back in dataset order (ab, ba, ...)
        logits = trainer.predict(held).predictions
        p_first = torch.softmax(torch.tensor(logits, dtype=torch.float64), dim=-1)[:, 0].numpy()  # P(slot A)
        y = np.array([r["preference"] == "a1" for r in held_rows])
        results[f"fold{fold}"] = held_out_scores(p_first, y)
        selection[f"fold{fold}"] = selection_record(trainer)
        end_fold(trainer, results[f"fold{fold}"])
        for i, r in enumerate(held_rows):  # P(a1) from each presentation order: the audit averages and splits them
            ids += [r["id"], r["id"]]
            orders += list(ORDERS)
            p_a1 += [float(p_first[2 * i]), float(1.0 - p_first[2 * i + 1])]
    return finish_cross_fit(out_dir, "judge_metrics.json", results, ids, p_a1, orders=orders,
                            train_orders=judge_args.train_orders, selection=selection)


if __name__ == "__main__":
    from trl import ModelConfig

    try:
        main(*parse((DataArguments, TrainingArguments, ModelConfig, JudgeArguments)))
    except InputError as exc:
        sys.exit(f"error: {exc}")
