"""Direct preference optimisation with TRL's DPOTrainer (sigmoid loss) on omniaudit preference pairs.

    accelerate launch --config_file accelerate_configs/zero3.yaml training/dpo.py \
        --config training/recipes/qwen3-omni-30b-a3b/dpo.yaml

From a pip install, in any folder (``omniaudit recipes list`` names the recipes)::

    accelerate launch --config_file "$(omniaudit recipes path accelerate:zero3)" -m omniaudit.training.dpo \
        --config recipe:qwen3-omni-30b-a3b/dpo

Data: ``prompt`` / ``chosen`` / ``rejected`` message lists (``omniaudit build interventions``' ``dpo``), with or
without an embedded ``video``. With LoRA (``use_peft``) the reference model is the adapter-disabled policy; for full
fine-tuning a separate reference model is loaded with ``from_pretrained`` *after* the training arguments exist, so
that under DeepSpeed ZeRO-3 it is partitioned like the policy and TRL wraps it in its own DeepSpeed engine (a
``deepcopy`` of a ZeRO-3 model, as ``create_reference_model`` does, copies empty shards).
"""

from __future__ import annotations

import sys

from omniaudit.errors import InputError
from omniaudit.training.common import (
    DataArguments,
    as_text_messages,
    load_omni,
    load_split,
    load_tokenizer,
    media_column,
    model_kwargs,
    parse,
    peft_config,
    refuse_heldout_fold,
    report_setup,
    split_eval,
    train_and_save,
)
from omniaudit.training.sft import MediaArguments, prepare_omni

PREFERENCE_COLUMNS = ("prompt", "chosen", "rejected")


def media_dpo_trainer():
    """DPOTrainer that leaves media datasets untouched: the omni collator tokenises and decodes on the fly."""
    from trl import DPOTrainer

    class MediaDPOTrainer(DPOTrainer):
        def _prepare_dataset(self, dataset, *args, **kwargs):
            return dataset

        def _set_signature_columns_if_needed(self):
            self._signature_columns = None  # remove_unused_columns is off: the collator needs every column

    return MediaDPOTrainer


def main(data_args: DataArguments, training_args, model_args, media_args: MediaArguments):
    from transformers import AutoModelForCausalLM
    from trl import DPOTrainer

    from omniaudit.training.collators import OmniDPOCollator

    info = report_setup(training_args, data_args, model_args)
    refuse_heldout_fold(data_args, "training/dpo.py", "select rows with dataset_filter")
    ds = load_split(data_args, PREFERENCE_COLUMNS)
    ds, media = media_column(ds)
    if media:
        model, processor = load_omni(model_args)
        lora = prepare_omni(model, model_args, media_args)
        ref_model = None if lora else load_omni(model_args)[0]
        collator = OmniDPOCollator(processor, media_args.fps, media_args.max_frames, training_args.max_length,
                                   video_column=media, video_size=media_args.video_size())
        training_args.remove_unused_columns = False
        trainer_cls, processing_class = media_dpo_trainer(), processor
    else:
        processing_class = load_tokenizer(model_args)
        ds = ds.map(lambda r: {k: as_text_messages(r[k]) for k in PREFERENCE_COLUMNS})
        kwargs = model_kwargs(model_args)
        lora = peft_config(model_args)
        model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **kwargs)
        ref_model = None if lora else AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **kwargs)
        collator, trainer_cls = None, DPOTrainer
    train, held = split_eval(ds, data_args.eval_fraction, training_args.seed)
    trainer = trainer_cls(model=model, ref_model=ref_model, args=training_args, train_dataset=train,
                          eval_dataset=held, processing_class=processing_class, data_collator=collator,
                          peft_config=lora)
    return train_and_save(trainer, training_args, run_info=info)


if __name__ == "__main__":
    from trl import DPOConfig, ModelConfig

    try:
        main(*parse((DataArguments, DPOConfig, ModelConfig, MediaArguments)))
    except InputError as exc:
        sys.exit(f"error: {exc}")
