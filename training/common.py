"""What every training script shares: argument parsing with clear errors, dataset loading with column checks,
model/tokenizer loading, PEFT configs, and the predictions file the preference audit reads.

Everything that can be wrong with the inputs is checked before the first step: an unknown recipe key, a dataset
without the columns the script needs, a model without the chat template it needs.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from omniaudit.errors import InputError


@dataclass
class DataArguments:
    """Which dataset a script trains on (a folder written by omniaudit or a Hub repo id)."""

    dataset_name: str = field(default="", metadata={"help": "dataset folder or Hub repo id"})
    dataset_config: str | None = field(default=None, metadata={"help": "config name, e.g. dpo or pairs"})
    dataset_train_split: str = field(default="train", metadata={"help": "split to train on"})
    eval_fraction: float = field(default=0.0, metadata={"help": "held-out share of rows for evaluation (sft/dpo)"})
    max_train_samples: int | None = field(default=None, metadata={"help": "use only the first N rows (smoke runs)"})


def _deepspeed_requested(argv: list[str]) -> bool:
    if "--deepspeed" in argv:
        return True
    if "--config" in argv:
        import yaml

        with open(argv[argv.index("--config") + 1]) as fh:
            return bool((yaml.safe_load(fh) or {}).get("deepspeed"))
    return False


def parse(dataclasses: tuple, argv: list[str] | None = None) -> tuple:
    """``TrlParser`` over ``--config recipe.yaml`` + command-line overrides; an unknown key names itself and exits.

    DeepSpeed without GPUs (tests, CPU smoke runs under torchrun): DeepSpeed's communication layer is initialised
    on gloo before the training arguments are built; otherwise every process would believe it is alone.
    """
    import torch
    from trl import TrlParser

    argv = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get("WORLD_SIZE") and not torch.cuda.is_available() and _deepspeed_requested(argv):
        import deepspeed

        deepspeed.init_distributed(dist_backend="gloo")
    parser = TrlParser(dataclasses)
    try:
        return parser.parse_args_and_config(argv)
    except ValueError as exc:
        if "Unknown arguments" in str(exc) or "Some specified arguments are not used" in str(exc):
            sys.exit(f"error: {exc}")
        raise


def load_split(data: DataArguments, required: tuple[str, ...], split: str | None = None):
    """One split as a ``datasets.Dataset``; missing columns fail before training, naming them."""
    import datasets

    if not data.dataset_name:
        raise InputError("no dataset: set dataset_name in the recipe or pass --dataset_name")
    try:
        ds = datasets.load_dataset(data.dataset_name, data.dataset_config, split=split or data.dataset_train_split)
    except (ValueError, FileNotFoundError, ConnectionError, datasets.exceptions.DatasetNotFoundError) as exc:
        raise InputError(f"cannot load the dataset: {type(exc).__name__}: {exc}", file=data.dataset_name) from exc
    missing = [c for c in required if c not in ds.column_names]
    if missing:
        raise InputError(f"config '{data.dataset_config}' lacks column(s) {missing} that this script needs; it has "
                         f"{ds.column_names}", file=data.dataset_name)
    if data.max_train_samples:
        ds = ds.select(range(min(data.max_train_samples, len(ds))))
    return ds


def split_eval(ds, fraction: float, seed: int):
    """(train, eval or None): a seeded held-out share."""
    if fraction <= 0:
        return ds, None
    parts = ds.train_test_split(test_size=fraction, seed=seed)
    return parts["train"], parts["test"]


def load_tokenizer(model_args, need_chat_template: bool = True):
    from transformers import AutoTokenizer

    path = model_args.model_name_or_path
    if not path:
        raise InputError("no model: set model_name_or_path in the recipe or pass --model_name_or_path")
    try:
        tok = AutoTokenizer.from_pretrained(path, revision=model_args.model_revision)
    except OSError as exc:
        raise InputError(f"cannot load a tokenizer: {exc}", file=path) from exc
    if need_chat_template and not tok.chat_template:
        raise InputError("the model has no chat template, which this script needs for chat records", file=path)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def model_kwargs(model_args) -> dict:
    """from_pretrained kwargs: dtype, attention implementation, k-bit quantisation (QLoRA) when asked."""
    import torch
    from trl.trainer.utils import get_quantization_config

    dtype = model_args.dtype if model_args.dtype in ("auto", None) else getattr(torch, model_args.dtype)
    quantization = get_quantization_config(model_args)
    kwargs = {"revision": model_args.model_revision, "attn_implementation": model_args.attn_implementation,
              "dtype": dtype}
    if quantization is not None:  # QLoRA: each process holds its own quantised copy
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if torch.cuda.is_available() else "cpu"
        kwargs.update(quantization_config=quantization, device_map={"": device})
    return {k: v for k, v in kwargs.items() if v is not None}


def report_setup(training_args) -> None:
    """wandb project from the recipe (``env: {WANDB_PROJECT: ...}``); offline mode needs no network."""
    if "wandb" in (training_args.report_to or []):
        os.environ.setdefault("WANDB_PROJECT", "omniaudit")


def finish_cross_fit(out_dir: str | Path, metrics_file: str, results: dict[str, dict], ids: list[str],
                     p_a1: list[float], **extra) -> dict:
    """Average the per-fold metrics; on the main process write them and the predictions (id, order, p_a1)."""
    import json

    import numpy as np

    summary = {k: float(np.mean([r[k] for r in results.values()])) for k in next(iter(results.values()))}
    summary.update(folds=results, **extra)
    if int(os.environ.get("RANK", "0")) == 0:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / metrics_file).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        write_preference_predictions(out_dir / "predictions.csv", ids, p_a1)
    return summary


def train_and_save(trainer, training_args, output_dir: str | None = None):
    """Train (resuming when asked) and save on every process (ZeRO-3 gathers the shards to save them).

    With ``output_dir`` (one of several folds), a resume continues that fold from its own last checkpoint.
    """
    from transformers.trainer_utils import get_last_checkpoint

    resume = training_args.resume_from_checkpoint
    if resume and output_dir and Path(output_dir) != Path(training_args.output_dir):
        resume = get_last_checkpoint(output_dir) if Path(output_dir).is_dir() else None
    trainer.train(resume_from_checkpoint=resume)
    trainer.save_model(output_dir or training_args.output_dir)
    return trainer


def write_preference_predictions(path: str | Path, ids: list[str], p_a1: list[float], order: str = "ab") -> Path:
    """The judge file ``omniaudit audit preference --judges`` reads: id, order, p_a1 (P that a1 is preferred)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    pd.DataFrame({"id": ids, "order": order, "p_a1": p_a1}).to_csv(tmp, index=False)
    os.replace(tmp, path)
    return path


MEDIA_COLUMNS = ("video", "audio", "image")


def media_column(ds) -> tuple[object, str | None]:
    """(dataset, media column): the embedded media column left encoded (the collator decodes it), or None."""
    import datasets
    import pyarrow.compute as pc

    column = next((c for c in MEDIA_COLUMNS if c in ds.column_names), None)
    if column is not None:
        feature = type(ds.features[column])
        if feature in (datasets.Video, datasets.Audio, datasets.Image):
            ds = ds.cast_column(column, feature(decode=False))
        cells = ds.data.column(column)
        missing = pc.or_(pc.is_null(cells), pc.is_null(pc.struct_field(cells, "bytes")))
        if pc.any(missing).as_py():  # a path-only cell would point at a file on the machine that built the dataset
            first = int(pc.index(missing, True).as_py())
            raise InputError(f"row {first} has no embedded {column} bytes (path {ds[first][column].get('path')!r} "
                             f"is not resolvable here); rebuild the dataset with embedded media", column=column)
    return ds, column


def as_text_messages(messages: list[dict]) -> list[dict]:
    """Chat messages with string contents (text models' templates expect strings); media items are dropped."""
    out = []
    for m in messages:
        content = m["content"]
        if not isinstance(content, str):
            content = "".join(c.get("text") or "" for c in content if c.get("type") == "text")
        out.append({"role": m["role"], "content": content})
    return out


def load_omni(model_args):
    """An omni model and its processor (chat template needed)."""
    from transformers import AutoModelForMultimodalLM, AutoProcessor

    path = model_args.model_name_or_path
    processor = AutoProcessor.from_pretrained(path)
    if not getattr(processor, "chat_template", None):
        raise InputError("the processor has no chat template, which the omni collator needs", file=path)
    if not hasattr(processor, "video_processor") or not hasattr(processor, "feature_extractor"):
        raise InputError("the model's processor takes no video and audio; the dataset has videos", file=path)
    model = AutoModelForMultimodalLM.from_pretrained(path, **model_kwargs(model_args))
    # full Qwen-Omni checkpoints load as talker + thinker whose outer forward is not implemented: train the thinker
    return getattr(model, "thinker", model), processor
