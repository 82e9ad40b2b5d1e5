"""Supervised fine-tuning with TRL's SFTTrainer on omniaudit chat records (text, or messages + an embedded video).

    accelerate launch --config_file accelerate_configs/zero3.yaml training/sft.py \
        --config training/recipes/qwen3-omni-30b-a3b/sft.yaml

From a pip install, in any folder (``omniaudit recipes list`` names the recipes)::

    accelerate launch --config_file "$(omniaudit recipes path accelerate:zero3)" -m omniaudit.training.sft \
        --config recipe:qwen3-omni-30b-a3b/sft

Data: a config with ``messages`` (e.g. ``omniaudit build interventions``' ``sft``). With a ``video`` column the omni
collator feeds frames at ``fps`` and the audio track (``use_audio_in_video``) and trains on the answer only; with an
``audio`` column (``omniaudit remedy label_following``) it feeds the clip's audio alone; without either, contents
are flattened to text and TRL's own tokenisation is used. Full fine-tuning, or LoRA / QLoRA with
``use_peft`` (+ ``load_in_4bit``). On an omni model LoRA adapts the language model only (``lora_target_modules``
are not matched in the audio encoder or the vision tower; ``--lora_language_model_only false`` to match everywhere),
and full fine-tuning can keep the towers frozen (``--freeze_audio_tower`` / ``--freeze_vision_tower``).

``dataset_filter`` trains on some rows only (Thud's "SFT w/ OP", the DPO starting point: the original clips' sync
question, ``{intervention: original, dimension: sync}``). ``heldout_fold: k`` on a preference ``judge_sft`` config
trains one judge of a cross-fitted omni judge: every fold but k, the checkpoint with the best WAF on fold k kept
(:mod:`omniaudit.training.heldout`; the K-fold loop: ``training/judge_folds.sh``).
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field

from omniaudit.errors import InputError
from omniaudit.training.common import (
    DataArguments,
    as_text_messages,
    fold_split,
    freeze_towers,
    load_omni,
    load_split,
    load_tokenizer,
    media_column,
    model_kwargs,
    parse,
    peft_config,
    report_setup,
    split_eval,
    train_and_save,
)


@dataclass
class MediaArguments:
    fps: float = field(default=1.0, metadata={"help": "video frames per second fed to the model"})
    max_frames: int = field(default=12, metadata={"help": "most frames per video"})
    video_max_pixels: int | None = field(default=None, metadata={"help": "largest frame area after resizing "
                                                                         "(default: the processor's)"})
    lora_language_model_only: bool = field(default=True, metadata={
        "help": "LoRA adapts only the language model: lora_target_modules (default: all its linear layers) are never "
                "matched in the audio encoder or the vision tower, whose layers share names with it; false: PEFT's "
                "plain name matching over the whole model"})
    freeze_audio_tower: bool = field(default=False, metadata={"help": "full fine-tuning: keep the audio encoder "
                                                                      "frozen"})
    freeze_vision_tower: bool = field(default=False, metadata={"help": "full fine-tuning: keep the vision tower "
                                                                       "frozen"})

    def video_size(self) -> dict | None:
        return None if self.video_max_pixels is None else {"shortest_edge": 56 * 56,
                                                           "longest_edge": self.video_max_pixels}


def prepare_omni(model, model_args, media_args: MediaArguments):
    """Freeze the towers asked for and return the LoRA config (language model only unless told otherwise)."""
    frozen = freeze_towers(model, audio=media_args.freeze_audio_tower, vision=media_args.freeze_vision_tower)
    if frozen:
        logging.getLogger(__name__).info("frozen: %s", ", ".join(frozen))
    return peft_config(model_args, language_model_of=model if media_args.lora_language_model_only else None)


def main(data_args: DataArguments, training_args, model_args, media_args: MediaArguments):
    from transformers import AutoModelForCausalLM
    from trl import SFTTrainer

    from omniaudit.training.collators import OmniSFTCollator
    from omniaudit.training.heldout import (
        check_heldout_args,
        dataset_record,
        heldout_trainer,
        letter_ids,
        paired_rows,
        write_selection,
    )

    info = report_setup(training_args, data_args, model_args)
    ds = load_split(data_args, ("messages",))
    ds, media = media_column(ds)
    if data_args.heldout_fold is not None:
        if not media:
            raise InputError("heldout_fold trains the omni pairwise judge on a judge_sft config with clips; text "
                             "judges: training/pairwise_judge.py with eval_folds", column="heldout_fold")
        check_heldout_args(training_args)
    if media:
        model, processor = load_omni(model_args)
        lora = prepare_omni(model, model_args, media_args)
        collator = OmniSFTCollator(processor, media_args.fps, media_args.max_frames, training_args.max_length,
                                   video_column=media, video_size=media_args.video_size())
        training_args.remove_unused_columns = False
        training_args.dataset_kwargs = {"skip_prepare_dataset": True}  # the collator tokenises on the fly
        processing_class = processor
    else:
        processing_class = load_tokenizer(model_args)
        ds = ds.map(lambda r: {"messages": as_text_messages(r["messages"])})
        model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **model_kwargs(model_args))
        collator, lora = None, peft_config(model_args)
    if data_args.heldout_fold is None:
        train, held = split_eval(ds, data_args.eval_fraction, training_args.seed)
        trainer = SFTTrainer(model=model, args=training_args, train_dataset=train, eval_dataset=held,
                             processing_class=processing_class, data_collator=collator, peft_config=lora)
        return train_and_save(trainer, training_args, run_info=info)
    fold = data_args.heldout_fold
    train, held = fold_split(ds, fold, data_args.dataset_name)
    held, y_a1 = paired_rows(held)
    trainer = heldout_trainer(SFTTrainer)(model=model, args=training_args, train_dataset=train, eval_dataset=held,
                                          processing_class=processing_class, data_collator=collator,
                                          peft_config=lora)
    trainer.heldout_y_a1, trainer.letters = y_a1, letter_ids(processor.tokenizer)
    train_and_save(trainer, training_args, run_info=info)
    write_selection(trainer, training_args.output_dir, fold, sorted(set(train["fold"])), len(y_a1),
                    sorted(set(held["pair_id"])), dataset_record(data_args.dataset_name, data_args.dataset_config))
    return trainer


if __name__ == "__main__":
    from trl import ModelConfig, SFTConfig

    try:
        main(*parse((DataArguments, SFTConfig, ModelConfig, MediaArguments)))
    except InputError as exc:
        sys.exit(f"error: {exc}")
