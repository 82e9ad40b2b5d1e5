"""Training-step time of ``training/reward_odin.py`` vs TRL's ``RewardTrainer``, same tiny model and batches, one run.

Both train a tiny Qwen2 trunk (the same weights, the same LoRA) on the same preference pairs (those that fit in 256
tokens, so neither trainer drops or truncates any) with the same batch size for the same number of steps. ODIN adds
its two extra heads, the global-batch correlations and the orthogonality term. The time of ``trainer.train()`` is
measured after a warm-up run of each, best of ``--repeats``. Last line:
``ratio=<odin_s / trl_s> odin_s=<s> trl_s=<s>`` (target: ratio <= 1.15).

    python benchmarks/odin_step.py [--steps 30] [--batch-size 8] [--repeats 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import datasets
from peft import LoraConfig
from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer, TrainingArguments
from trl import RewardConfig, RewardTrainer

from omniaudit.data_builders.preference import build_preference_dataset
from omniaudit.tiny_models import tiny_causal_lm
from omniaudit.training.odin import OdinRewardModel
from omniaudit.training.reward_odin import OdinTrainer, PairCollator, records

LORA = dict(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
MAX_LENGTH = 256
COMMON = dict(learning_rate=1e-3, logging_steps=1000, save_strategy="no", report_to="none", use_cpu=True,
              bf16=False, seed=0, disable_tqdm=True, dataloader_num_workers=0)


def odin_seconds(model_dir: Path, tok, train, steps: int, batch: int, out: Path) -> float:
    from peft import get_peft_model

    trunk = get_peft_model(AutoModel.from_pretrained(model_dir), LoraConfig(task_type="FEATURE_EXTRACTION", **LORA))
    model = OdinRewardModel(trunk, trunk.config.hidden_size)
    args = TrainingArguments(output_dir=str(out), max_steps=steps, per_device_train_batch_size=batch,
                             remove_unused_columns=False, **COMMON)
    trainer = OdinTrainer(model=model, args=args, train_dataset=train, data_collator=PairCollator(tok, MAX_LENGTH))
    start = time.perf_counter()
    trainer.train()
    return time.perf_counter() - start


def trl_seconds(model_dir: Path, tok, train, steps: int, batch: int, out: Path) -> float:
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, num_labels=1)
    model.config.pad_token_id = tok.pad_token_id
    pairs = train.map(lambda r: {"chosen": r["text_1"], "rejected": r["text_2"]},
                      remove_columns=train.column_names)
    args = RewardConfig(output_dir=str(out), max_steps=steps, per_device_train_batch_size=batch,
                        max_length=MAX_LENGTH, gradient_checkpointing=False, **COMMON)
    trainer = RewardTrainer(model=model, args=args, train_dataset=pairs, processing_class=tok,
                            peft_config=LoraConfig(task_type="SEQ_CLS", **LORA))
    start = time.perf_counter()
    trainer.train()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="omniaudit-bench-"))
    model_dir = tiny_causal_lm(root / "lm")
    data = build_preference_dataset(root / "pref")
    pairs = datasets.load_dataset(str(data), "pairs", split="train")
    tok = AutoTokenizer.from_pretrained(model_dir)
    # only pairs that fit in MAX_LENGTH tokens: TRL drops longer ones and ODIN would truncate them, so keeping the
    # rest makes both trainers see exactly the same sequences
    fits = lambda t: len(tok(t).input_ids) < MAX_LENGTH - 4  # noqa: E731
    train = datasets.Dataset.from_list([r for r in records(pairs, {0}, held_out=False)
                                        if fits(r["text_1"]) and fits(r["text_2"])])
    timings = {"odin": [], "trl": []}
    for repeat in range(args.repeats + 1):  # the first round warms up both
        for name, fn in (("odin", odin_seconds), ("trl", trl_seconds)):
            seconds = fn(model_dir, tok, train, args.steps, args.batch_size, root / f"{name}{repeat}")
            if repeat:
                timings[name].append(seconds)
    odin_s, trl_s = min(timings["odin"]), min(timings["trl"])
    print(f"{len(train)} pairs, {args.steps} steps of batch {args.batch_size}: ODIN {odin_s:.2f} s, "
          f"TRL RewardTrainer {trl_s:.2f} s")
    print(f"ratio={odin_s / trl_s:.2f} odin_s={odin_s:.2f} trl_s={trl_s:.2f}")


if __name__ == "__main__":
    main()
