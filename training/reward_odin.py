"""Train the ODIN-style diagnostic reward model on a preference dataset built by ``omniaudit build preference``.

    accelerate launch --config_file accelerate_configs/zero3.yaml training/reward_odin.py \\
        --config training/recipes/qwen2.5-7b/reward_odin.yaml [--lambda_dec 0 --output_dir runs/odin_control]

From a pip install, in any folder (``omniaudit recipes list`` names the recipes)::

    accelerate launch --config_file "$(omniaudit recipes path accelerate:zero3)" -m omniaudit.training.reward_odin \\
        --config recipe:qwen2.5-7b/reward_odin [--lambda_dec 0 --output_dir runs/odin_control]

Data: the ``pairs`` config (binary pairs; ``fold``, character lengths ``len1/len2``, generators ``model1/model2``).
For each held-out fold in ``eval_folds`` a model is trained on the other folds and scores the held-out pairs with its
content head; the generator prior of every candidate is the win rate over the training folds only, recomputed per
held-out fold. ``eval_folds: all`` gives out-of-fold predictions for every pair.

Writes ``OUTPUT_DIR/odin_metrics.json`` (``rho_content_length``, ``rho_content_prior``, ``rho_length_head_length``,
``rho_prior_head_prior`` and content-head accuracy on the held-out pairs, per fold and averaged) and
``OUTPUT_DIR/predictions.csv`` (``id, order, p_a1``) for ``omniaudit audit preference --predictions``. The four
correlations are logged (wandb, when ``report_to`` has it) at every evaluation; with several folds each fold is its
own run (``RUN_NAME-foldK``, grouped under ``RUN_NAME``) in its own folder ``OUTPUT_DIR/foldK``.

Omni ODIN (Table 4, "Omni, ODIN"): on a dataset with clips (the ``pairs_media`` config that ``omniaudit build
preference --media DIR`` writes: the same pair columns plus the pair's ``video``) the trunk is the omni model's thinker
(audio tower + vision tower + language model) and each candidate is (video frames at ``fps``, the audio track, one
description), as in the omni collators; LoRA then adapts the language model only. ``n_heads: 1`` is the omni
no-decorrelation control ("single-head BT on r_C": the content head alone, ``L_BT`` only; needs ``lambda_dec: 0`` and
reports the content head's two correlations).

With LoRA (``use_peft``; TRL's LoRA options apply) every checkpoint and the final folder hold the trunk's adapter
(``adapter_model.safetensors``) and the heads (``odin_heads.safetensors``), never the frozen trunk;
``omniaudit.training.odin.load_odin(folder)`` reloads them. ``--resume_from_checkpoint true`` continues each fold
from its own last checkpoint; ``--gradient_checkpointing`` recomputes the trunk's activations.
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
from omniaudit.training.collators import PER_SEQUENCE, _OmniBase
from omniaudit.training.common import (
    DataArguments,
    end_fold,
    finish_cross_fit,
    fold_arguments,
    load_split,
    load_tokenizer,
    media_column,
    model_kwargs,
    parse,
    peft_config,
    refuse_heldout_fold,
    report_setup,
    train_and_save,
)
from omniaudit.training.odin import HEADS_FILE, N_HEADS, OdinRewardModel, load_trunk, odin_loss, pearson

PAIR_COLUMNS = ("id", "a1", "a2", "preference", "fold", "len1", "len2", "model1", "model2")
NOT_MEDIA = ("input_ids", "attention_mask", "lengths", "priors", "labels")
# the omni candidate (v, a, d): the clip, then one description (EmoPrefer audit appendix B)
OMNI_PROMPT = ("Watch the video and listen to its audio. A description of the emotional state of the person in the "
               "clip:\n{d}")


@dataclass
class OdinArguments:
    lambda_dec: float = field(default=1.0, metadata={"help": "weight of L_dec (0: the no-decorrelation control)"})
    lambda_orth: float = field(default=1.0, metadata={"help": "weight of L_orth"})
    eval_folds: str = field(default="0", metadata={"help": "held-out folds, e.g. '0', '0,1' or 'all'"})
    max_length: int = field(default=400, metadata={"help": "tokens per description (paper: 400); omni: per "
                                                            "candidate, media included (none: no limit)"})
    n_heads: int = field(default=3, metadata={
        "help": "3: content, length and prior heads (ODIN); 1: the content head alone trained with BT (the omni "
                "single-head no-decorrelation control; needs lambda_dec 0)"})
    fps: float = field(default=1.0, metadata={"help": "omni: video frames per second fed to the model"})
    max_frames: int = field(default=12, metadata={"help": "omni: most frames per clip (paper: 12 at 1 fps)"})
    video_max_pixels: int | None = field(default=None, metadata={"help": "omni: largest frame area after resizing"})
    lora_language_model_only: bool = field(default=True, metadata={
        "help": "omni: LoRA adapts only the thinker's language model, not the audio encoder or the vision tower"})

    def __post_init__(self) -> None:
        if self.n_heads not in N_HEADS:
            raise InputError(f"expected one of {N_HEADS}", column="n_heads", value=self.n_heads)
        if self.n_heads == 1 and self.lambda_dec:
            raise InputError("the single-head control has no confound heads to decorrelate against: set "
                             "lambda_dec 0 (and lambda_orth is moot)", column="lambda_dec", value=self.lambda_dec)


def training_prior(ds, held: set[int]) -> dict[str, float]:
    """Generator win rates over the binary pairs of the training folds only (the held-out folds never enter)."""
    wins: dict[str, float] = {}
    apps: dict[str, int] = {}
    for r in ds:
        if r["preference"] not in ("a1", "a2") or r["fold"] in held:
            continue
        for g, won in ((r["model1"], r["preference"] == "a1"), (r["model2"], r["preference"] == "a2")):
            apps[g] = apps.get(g, 0) + 1
            wins[g] = wins.get(g, 0) + won
    return {g: wins[g] / apps[g] for g in apps}


def records(ds, folds: set[int], held_out: bool, media: str | None = None) -> list[dict]:
    """Training records (chosen = preferred description) or held-out records (slot 1 = a1), each candidate with its
    character length and the training-fold prior of its generator (0.5 when unseen in the training folds); with
    ``media`` (a column of embedded clips) each record carries its pair's clip."""
    prior = training_prior(ds, folds)
    out = []
    for r in ds:
        if r["preference"] not in ("a1", "a2") or (r["fold"] in folds) != held_out:
            continue
        p1, p2 = prior.get(r["model1"], 0.5), prior.get(r["model2"], 0.5)
        first = held_out or r["preference"] == "a1"  # held out: keep dataset order; training: preferred first
        a, b = (("a1", "len1", p1), ("a2", "len2", p2)) if first else (("a2", "len2", p2), ("a1", "len1", p1))
        out.append({"id": r["id"], "text_1": r[a[0]], "text_2": r[b[0]], "len_1": float(r[a[1]]),
                    "len_2": float(r[b[1]]), "prior_1": float(a[2]), "prior_2": float(b[2]),
                    "label": float(r["preference"] == "a1")})
        if media:
            out[-1]["video"] = r[media]
    return out


class PairCollator:
    """Tokenise both descriptions of each pair into one right-padded batch [slot 1; slot 2]."""

    def __init__(self, tokenizer, max_length: int) -> None:
        self.tokenizer, self.max_length = tokenizer, max_length
        self.tokenizer.padding_side = "right"

    def __call__(self, batch: list[dict]) -> dict:
        texts = [b["text_1"] for b in batch] + [b["text_2"] for b in batch]
        enc = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], **_targets(batch)}


def _targets(batch: list[dict]) -> dict:
    col = lambda k: torch.tensor([b[k] for b in batch], dtype=torch.float32)  # noqa: E731
    return {"lengths": torch.cat([col("len_1"), col("len_2")]), "priors": torch.cat([col("prior_1"), col("prior_2")]),
            "labels": torch.stack([col("len_1"), col("len_2"), col("prior_1"), col("prior_2"), col("label")], 1)}


class OmniPairCollator(_OmniBase):
    """Omni candidates (the pair's clip: frames at ``fps`` + its audio track, then one description) in one right-padded
    batch [slot 1; slot 2]; the media tensors are repeated for the two halves (both candidates of a pair share the
    clip), as :class:`~omniaudit.training.collators.OmniDPOCollator` does."""

    def __call__(self, batch: list[dict]) -> dict:
        seqs: dict[str, list[torch.Tensor]] = {"input_ids": [], "attention_mask": []}
        halves: dict[str, list] = {"text_1": [], "text_2": []}
        media = []
        for ex in batch:
            frames, audio = self._video(ex)
            for slot in halves:
                messages = [{"role": "user", "content": [{"type": "video", "text": None},
                                                         {"type": "text", "text": OMNI_PROMPT.format(d=ex[slot])}]}]
                text = self.processor.apply_chat_template(messages, tokenize=False)
                enc = self._encode(text, frames, audio)
                ids = enc["input_ids"][0]
                keep = self._truncate(ids, ex.get("id"))
                halves[slot].append((ids[:keep], enc["attention_mask"][0][:keep]))
            media.append({k: v for k, v in enc.items() if k not in PER_SEQUENCE})
        for slot in halves:
            for ids, mask in halves[slot]:
                seqs["input_ids"].append(ids)
                seqs["attention_mask"].append(mask)
        return {**self._pad(seqs, media, repeat=2), **_targets(batch)}


def media_inputs(inputs: dict) -> dict:
    """The processor's media tensors of a batch (what an omni trunk takes besides ids and mask); empty for text."""
    return {k: v for k, v in inputs.items() if k not in NOT_MEDIA}


class OdinTrainer(Trainer):
    def __init__(self, *args, lambda_dec: float = 1.0, lambda_orth: float = 1.0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lambda_dec, self.lambda_orth = lambda_dec, lambda_orth

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        scores, orth = model(inputs["input_ids"], inputs["attention_mask"], **media_inputs(inputs))
        half = scores.size(0) // 2
        terms = odin_loss(scores[:half], scores[half:], orth, inputs["lengths"], inputs["priors"],
                          self.lambda_dec, self.lambda_orth)
        if self.model.training and self.state.global_step % max(1, self.args.logging_steps) == 0:
            # plain names: the wandb callback prefixes training logs with train/ itself (not train/train_bt)
            self._terms = {k: float(v.detach()) for k, v in terms.items() if k != "loss"}
        return (terms["loss"], {"scores": scores}) if return_outputs else terms["loss"]

    def log(self, logs: dict, *args, **kwargs) -> None:
        if "loss" in logs and getattr(self, "_terms", None):
            logs = {**logs, **self._terms}
        super().log(logs, *args, **kwargs)

    def _lora(self) -> bool:
        from peft import PeftModel

        return isinstance(self.accelerator.unwrap_model(self.model).trunk, PeftModel)

    def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
        """With LoRA under ZeRO-3, gather only the trainable weights (adapter + heads), not the frozen trunk."""
        if self.is_deepspeed_enabled and self._lora() and self.deepspeed.zero_optimization_stage() == 3:
            state_dict = self.deepspeed._zero3_consolidated_16bit_state_dict(exclude_frozen_parameters=True)
            self._save(output_dir, state_dict=state_dict)
            return
        super().save_model(output_dir, _internal_call)

    def _save(self, output_dir: str | None = None, state_dict: dict | None = None) -> None:
        """A LoRA run saves the trunk's adapter and the heads (OdinRewardModel.save) at every checkpoint and at the
        end, not the whole trunk (a full copy of a 7B model each time); full fine-tuning saves everything."""
        if not self._lora():
            return super()._save(output_dir, state_dict)
        if not self.args.should_save:
            return None
        output_dir = output_dir or self.args.output_dir
        self.accelerator.unwrap_model(self.model).save(output_dir, state_dict)
        processing = getattr(self.data_collator, "tokenizer", None) or getattr(self.data_collator, "processor", None)
        if processing is not None:
            processing.save_pretrained(output_dir)
        torch.save(self.args, Path(output_dir) / "training_args.bin")
        return None

    def _load_from_checkpoint(self, resume_from_checkpoint: str, model=None) -> None:
        if self._lora() and (Path(resume_from_checkpoint) / HEADS_FILE).is_file():
            self.accelerator.unwrap_model(model or self.model).load_trained(resume_from_checkpoint)
            return
        super()._load_from_checkpoint(resume_from_checkpoint, model)

    def _load_best_model(self) -> None:
        if self._lora() and not self.is_deepspeed_enabled:
            self.accelerator.unwrap_model(self.model).load_trained(self.state.best_model_checkpoint)
            return
        super()._load_best_model()

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad():
            scores, _ = model(inputs["input_ids"], inputs["attention_mask"], **media_inputs(inputs))
        half = scores.size(0) // 2
        return None, torch.cat([scores[:half], scores[half:]], dim=1), inputs["labels"]


def content_p_a1(predictions: np.ndarray) -> np.ndarray:
    """P(a1 preferred) from the content head: predictions are [slot 1 heads, slot 2 heads] per held-out pair."""
    n_heads = predictions.shape[1] // 2
    return 1 / (1 + np.exp(-(predictions[:, 0] - predictions[:, n_heads])))


def metrics(eval_pred) -> dict:
    """Head-confound correlations over both candidates of the held-out pairs, and content-head accuracy (one head:
    the content head's two correlations)."""
    preds, labels = np.asarray(eval_pred.predictions), np.asarray(eval_pred.label_ids)
    n_heads = preds.shape[1] // 2
    scores = torch.tensor(np.concatenate([preds[:, :n_heads], preds[:, n_heads:]]))
    lengths = torch.tensor(np.concatenate([labels[:, 0], labels[:, 1]]))
    priors = torch.tensor(np.concatenate([labels[:, 2], labels[:, 3]]))
    out = {"rho_content_length": float(pearson(scores[:, 0], lengths)),
           "rho_content_prior": float(pearson(scores[:, 0], priors))}
    if n_heads > 1:
        out.update(rho_length_head_length=float(pearson(scores[:, 1], lengths)),
                   rho_prior_head_prior=float(pearson(scores[:, 2], priors)))
    out["content_accuracy"] = float(np.mean((content_p_a1(preds) >= 0.5) == (labels[:, 4] == 1)))
    return out


def build_model(model_args, odin_args: OdinArguments | None = None) -> OdinRewardModel:
    """The trunk (a text model, or an omni thinker's multimodal model; LoRA-adapted with ``use_peft``: TRL's LoRA
    options, all linear layers unless ``lora_target_modules`` says otherwise, in an omni trunk those of its language
    model) and the heads (three, or the content head alone)."""
    from peft import get_peft_model
    from transformers import AutoConfig

    from omniaudit.training.odin import is_omni

    odin_args = odin_args or OdinArguments()
    config = AutoConfig.from_pretrained(model_args.model_name_or_path)
    trunk = load_trunk(model_args.model_name_or_path, **model_kwargs(model_args))
    language_model = trunk if is_omni(config) and odin_args.lora_language_model_only else None
    lora = peft_config(model_args, task_type="FEATURE_EXTRACTION", default_targets="all-linear",
                       language_model_of=language_model)
    if lora is not None:
        trunk = get_peft_model(trunk, lora)
    hidden = config.get_text_config().hidden_size
    return OdinRewardModel(trunk, hidden, odin_args.n_heads)


def omni_collator(model_args, odin_args: OdinArguments, media: str) -> OmniPairCollator:
    from transformers import AutoProcessor

    path = model_args.model_name_or_path
    processor = AutoProcessor.from_pretrained(path)
    if not getattr(processor, "chat_template", None) or not hasattr(processor, "video_processor"):
        raise InputError("the dataset has clips, but the model's processor takes no video (or has no chat template): "
                         "Omni ODIN needs an omni model", file=path)
    size = None if odin_args.video_max_pixels is None else {"shortest_edge": 56 * 56,
                                                            "longest_edge": odin_args.video_max_pixels}
    return OmniPairCollator(processor, odin_args.fps, odin_args.max_frames, odin_args.max_length or None,
                            video_column=media, video_size=size)


def main(data_args: DataArguments, training_args: TrainingArguments, model_args, odin_args: OdinArguments) -> dict:
    info = report_setup(training_args, data_args, model_args)
    refuse_heldout_fold(data_args, "training/reward_odin.py", "set eval_folds (the folds held out, one model each)")
    training_args.remove_unused_columns = False  # the collator needs the raw text, lengths and priors
    ds = load_split(data_args, PAIR_COLUMNS)
    ds, media = media_column(ds, need="Omni ODIN feeds video clips with their audio track: give the pair a video or "
                                      "leave it out")
    if media and media != "video":
        raise InputError(f"Omni ODIN feeds video clips with their audio track; this dataset's clips are in column "
                         f"'{media}'", file=data_args.dataset_name)
    if media:
        collator = omni_collator(model_args, odin_args, media)
    else:
        collator = PairCollator(load_tokenizer(model_args, need_chat_template=False), odin_args.max_length)
    all_folds = sorted(set(ds["fold"]))
    folds = all_folds if odin_args.eval_folds == "all" else [int(f) for f in odin_args.eval_folds.split(",")]
    unknown = sorted(set(folds) - set(all_folds))
    if unknown:
        raise InputError(f"eval_folds {unknown} not in the dataset's folds {all_folds}", value=odin_args.eval_folds)
    out_dir = Path(training_args.output_dir)
    results, ids, p_a1 = {}, [], []
    for fold in folds:
        args = fold_arguments(training_args, fold, len(folds))
        train = datasets.Dataset.from_list(records(ds, {fold}, held_out=False, media=media))
        held = datasets.Dataset.from_list(records(ds, {fold}, held_out=True, media=media))
        set_seed(args.seed)  # the heads and the LoRA are initialised here, before the Trainer seeds
        trainer = OdinTrainer(model=build_model(model_args, odin_args), args=args, train_dataset=train,
                              eval_dataset=held, data_collator=collator, compute_metrics=metrics,
                              lambda_dec=odin_args.lambda_dec, lambda_orth=odin_args.lambda_orth)
        train_and_save(trainer, training_args, args.output_dir, run_info={**info, "eval_fold": fold})
        out = trainer.predict(held)
        results[f"fold{fold}"] = {k.removeprefix("test_"): v for k, v in out.metrics.items()
                                  if k.startswith("test_rho") or k == "test_content_accuracy"}
        end_fold(trainer)  # predict() has logged the held-out metrics (test/...)
        ids += held["id"]
        p_a1 += content_p_a1(out.predictions).tolist()
    return finish_cross_fit(out_dir, "odin_metrics.json", results, ids, p_a1, lambda_dec=odin_args.lambda_dec,
                            lambda_orth=odin_args.lambda_orth, n_heads=odin_args.n_heads,
                            inputs="video+audio+description" if media else "description")


if __name__ == "__main__":
    from trl import ModelConfig

    try:
        main(*parse((DataArguments, TrainingArguments, ModelConfig, OdinArguments)))
    except InputError as exc:
        sys.exit(f"error: {exc}")
