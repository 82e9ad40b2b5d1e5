"""One judge of a cross-fitted omni pairwise judge: SFT on every fold but k, checkpoint kept by held-out WAF on k.

EmoPrefer audit appendix B: "Text and pairwise Omni checkpoints maximize held-out-fold WAF" (not nested selection,
which favours the judge; the paper says so). ``training/sft.py`` with ``heldout_fold: k`` on a preference dataset's
``judge_sft`` config trains on the other folds' chat records and, at every evaluation (``eval_strategy`` equal to
``save_strategy``, so every save is scored), reads the next-token P(A) and P(B) at the answer position of every
held-out record in both orders, exactly as the omni collator feeds training (:func:`answer_probs`), and scores them
as the preference audit does (dual-order P(a1), ties counted half: :func:`held_out_scores`). With
``load_best_model_at_end`` and ``metric_for_best_model: waf`` the best checkpoint is what ``output_dir`` holds at
the end; ``heldout_selection.json`` there says which step won, its WAF and the WAF of every evaluation.

Then ``omniaudit judge --folds k`` runs that judge on fold k only, and ``omniaudit merge-predictions`` joins the K
fold files into one out-of-fold judge (``training/judge_folds.sh`` runs the whole loop).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from omniaudit.errors import InputError
from omniaudit.runners.identity import SELECTION_FILE  # noqa: F401 - re-exported; judges read it there
from omniaudit.training.pairwise_judge import check_selection, held_out_scores, selection_record

PAIR_COLUMNS = ("pair_id", "order", "gold", "fold")
LETTERS = ("A", "B")


def paired_rows(held) -> tuple[object, np.ndarray]:
    """(held-out rows ordered ab, ba per pair, y_a1 per pair); a pair without both orders is an error."""
    missing = [c for c in PAIR_COLUMNS if c not in held.column_names]
    if missing:
        raise InputError(f"heldout_fold scores a preference judge_sft config: the held-out rows lack {missing}")
    pos: dict[str, dict[str, int]] = {}
    for i, (pair, order) in enumerate(zip(held["pair_id"], held["order"], strict=True)):
        pos.setdefault(pair, {})[order] = i
    broken = next((p for p, o in pos.items() if set(o) != {"ab", "ba"}), None)
    if broken is not None:
        raise InputError(f"pair '{broken}' lacks one of its orders ab / ba in the held-out fold", column="order")
    index = [pos[p][o] for p in pos for o in ("ab", "ba")]
    gold = held["gold"]
    y_a1 = np.array([gold[pos[p]["ab"]] == "A" for p in pos])
    return held.select(index), y_a1


def letter_ids(tokenizer) -> tuple[int, int]:
    """The token ids of the answers "A" and "B" (each must be one token, as the judge reads them)."""
    ids = [tokenizer(letter, add_special_tokens=False).input_ids for letter in LETTERS]
    if any(len(i) != 1 for i in ids):
        raise InputError(f"the tokenizer splits the answer letters into several tokens ({ids}); the held-out WAF "
                         "reads one next-token logit per letter")
    return ids[0][0], ids[1][0]


def _head(model):
    inner = model
    while hasattr(inner, "get_output_embeddings") and inner.get_output_embeddings() is None and hasattr(inner,
                                                                                                         "module"):
        inner = inner.module
    head = inner.get_output_embeddings() if hasattr(inner, "get_output_embeddings") else None
    if head is None:
        raise InputError(f"{type(model).__name__} has no output embeddings (LM head) to read letter logits from")
    return head


@torch.no_grad()
def answer_probs(model, collator, rows: list[dict], letters: tuple[int, int], batch_size: int = 1,
                 prepare=lambda b: b) -> np.ndarray:
    """P(A) / (P(A) + P(B)) at the answer position of each chat record, as the collator feeds training: the
    position before the first target token, which must be one of ``letters`` (else an error naming the record).
    Only those positions go through the LM head (a pre-hook keeps them), so no full-vocabulary logits of the whole
    sequence are built. ``prepare`` moves a batch to the model's device."""
    head = _head(model)
    keep: list[torch.Tensor] = []
    hook = head.register_forward_pre_hook(lambda _m, args: (args[0][:, keep[0].to(args[0].device), :], *args[1:]))
    was_training = model.training
    model.eval()
    out = []
    try:
        for start in range(0, len(rows), batch_size):
            batch = collator(rows[start:start + batch_size])
            labels = batch.pop("labels")
            target = labels != -100
            if not bool(target.any(dim=1).all()):
                raise InputError("a held-out record has no answer token to score")
            pos = target.int().argmax(dim=1) - 1  # the last prompt token predicts the answer
            first = labels[torch.arange(len(pos)), pos + 1]
            wrong = ~torch.isin(first, torch.tensor(letters, dtype=first.dtype))
            if bool(wrong.any()):
                k = int(wrong.nonzero()[0])
                row = rows[start + k]
                who = (f"pair '{row['pair_id']}' order {row.get('order')}" if isinstance(row, dict) and "pair_id" in
                       row else f"record {start + k}")
                raise InputError(f"held-out {who}: its answer starts with token id {int(first[k])}, not the letter A "
                                 f"or B (ids {list(letters)}), so P(A) / P(B) there is not the judge's answer; the "
                                 "judge_sft answers must be the bare letter as the chat template renders it")
            cols = torch.unique(pos)
            keep[:] = [cols]
            logits = model(**prepare(batch)).logits  # (B, len(cols), V)
            pick = torch.searchsorted(cols, pos).to(logits.device)
            pair = logits[torch.arange(len(pos), device=logits.device), pick][:, list(letters)].float()
            out.append(torch.softmax(pair, dim=-1)[:, 0].cpu())
    finally:
        hook.remove()
        model.train(was_training)
    return torch.cat(out).numpy().astype(np.float64) if out else np.zeros(0)


def heldout_trainer(base):
    """``base`` (SFTTrainer) whose evaluation is the held-out fold's WAF (see the module docstring): each process
    scores every N-th record (padded to equal counts, so ZeRO-3's collective forwards line up), then all gather."""

    class HeldOutJudgeTrainer(base):
        heldout_y_a1: np.ndarray
        letters: tuple[int, int]

        def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
            ds = self.eval_dataset
            n, world, rank = len(ds), self.accelerator.num_processes, self.accelerator.process_index
            mine = list(range(rank, n, world))
            mine += [mine[-1] if mine else 0] * (-(-n // world) - len(mine))  # pad: same forwards everywhere
            p = answer_probs(self.model, self.data_collator, [ds[i] for i in mine], self.letters,
                             self.args.per_device_eval_batch_size, self._prepare_inputs)
            index = torch.tensor([i if k < len(range(rank, n, world)) else -1 for k, i in enumerate(mine)])
            both = self.accelerator.gather(torch.stack([index.double(), torch.tensor(p)], dim=1).to(
                self.accelerator.device)).cpu().numpy()
            p_first = np.full(n, np.nan)
            for i, value in both:
                if i >= 0:
                    p_first[int(i)] = value
            scores = held_out_scores(p_first, self.heldout_y_a1)
            metrics = {f"{metric_key_prefix}_{k}": v for k, v in scores.items()}
            self.log(metrics)
            self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
            return metrics

        def _load_best_model(self) -> None:
            """A full model's best checkpoint, read back as ``from_pretrained`` reads it: the Trainer's own loader
            takes the saved (checkpoint-format) keys as they are, which an omni thinker's state dict does not
            have (nothing is loaded, with a warning), so the last step's weights would be kept."""
            from peft import PeftModel

            best = Path(self.state.best_model_checkpoint)
            full = any(best.glob("model*.safetensors"))  # one file or shards
            if self.is_deepspeed_enabled or isinstance(self.model, PeftModel) or not full:
                return super()._load_best_model()
            reloaded = type(self.model).from_pretrained(best, dtype=self.model.dtype)
            self.model.load_state_dict(reloaded.state_dict(), strict=True)

    return HeldOutJudgeTrainer


def check_heldout_args(training_args) -> None:
    """Checkpoint selection by held-out WAF needs evaluations at the saves and the best one loaded at the end."""
    if not training_args.load_best_model_at_end:
        raise InputError("heldout_fold keeps the checkpoint with the best held-out WAF: set load_best_model_at_end: "
                         "true, metric_for_best_model: waf and equal eval_strategy / save_strategy (steps or epoch)",
                         column="load_best_model_at_end")
    if (training_args.metric_for_best_model or "loss").removeprefix("eval_") == "loss":
        raise InputError("heldout_fold selects by a held-out judge score: set metric_for_best_model: waf (or "
                         "waf_ab, waf_ba, accuracy)", column="metric_for_best_model")
    check_selection(training_args)
    training_args.greater_is_better = True


def dataset_record(dataset: str | Path, config: str | None) -> dict:
    """What a fold judge trained on: the dataset's name, the config, its fingerprint
    (:func:`~omniaudit.data_builders.fingerprint.fingerprint_of`) and the fingerprint of every config of the same
    build (``fingerprints``: the judge answers another config of it, e.g. ``judge``, whose fingerprint the fold
    checks compare with the answers' provenance). Fingerprints that cannot be computed are null (the checks refuse)."""
    from omniaudit.data_builders.card import card_configs
    from omniaudit.data_builders.fingerprint import fingerprint_of, local_dataset

    folder = local_dataset(dataset) if dataset else None
    try:
        configs = sorted(card_configs(folder)) if folder is not None else []
    except InputError:
        configs = []
    fingerprints = {c: fingerprint_of(folder, c) for c in configs}
    fingerprint = fingerprints.get(config) if config in fingerprints else (
        fingerprint_of(dataset, config) if dataset and config else None)
    name = Path(dataset).name if dataset and Path(dataset).exists() else (str(dataset) if dataset else None)
    return {"name": name, "config": config, "fingerprint": fingerprint, "fingerprints": fingerprints}


def write_selection(trainer, out_dir: str | Path, fold: int, train_folds: list[int], n_pairs: int,
                    pair_ids: list[str] | None = None, dataset: dict | None = None) -> Path:
    """``heldout_selection.json``: the held-out fold, the folds trained on, the dataset trained on
    (:func:`dataset_record`), the held-out pair ids, the winning step, its WAF and the WAF of every evaluation (main
    process only). The fold checks (:mod:`omniaudit.runners.folds`) refuse answers of a judge whose
    record is missing, of another build, or whose held-out pairs are not the fold's pairs answered."""
    from omniaudit.io import atomic_file

    record = selection_record(trainer)
    won = next((h for h in record["history"] if h["step"] == record["step"]), {})
    summary = {"heldout_fold": fold, "train_folds": train_folds, "heldout_pairs": n_pairs,
               "heldout_pair_ids": sorted(map(str, pair_ids or [])), "dataset": dataset or {}, "selected_by":
               record["by"], "step": record["step"], "checkpoint": record["checkpoint"], "waf": won.get("waf"),
               "best_metric": record.get("best"), "history": record["history"]}
    path = Path(out_dir) / SELECTION_FILE
    if trainer.is_world_process_zero():
        with atomic_file(path) as tmp:
            tmp.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return path
