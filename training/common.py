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
from omniaudit.training.checkpoints import checkpoint_problem, resume_point  # noqa: F401 - re-exported
from omniaudit.training.determinism import DeterminismArguments, apply_determinism, write_determinism_record
from omniaudit.training.run_tracking import report_setup, tracking_callback  # noqa: F401 - re-exported


@dataclass
class DataArguments:
    """Which dataset a script trains on (a folder written by omniaudit or a Hub repo id)."""

    dataset_name: str = field(default="", metadata={"help": "dataset folder or Hub repo id"})
    dataset_config: str | None = field(default=None, metadata={"help": "config name, e.g. dpo or pairs"})
    dataset_train_split: str = field(default="train", metadata={"help": "split to train on"})
    eval_fraction: float = field(default=0.0, metadata={"help": "held-out share of rows for evaluation (sft/dpo)"})
    max_train_samples: int | None = field(default=None, metadata={"help": "use only the first N rows (smoke runs)"})
    dataset_filter: dict | None = field(default=None, metadata={
        "help": "train only on rows whose columns hold these values, {column: value or [values]} (recipe only), e.g. "
                "Thud's SFT w/ OP: {intervention: original, dimension: sync}; null matches empty (null) cells. With "
                "dataset_mixture it applies to the mixed rows, after each source's weight (select before the weight "
                "with a source's kinds)"})
    heldout_fold: int | None = field(default=None, metadata={
        "help": "train on every fold but this one (the config's fold column) and keep the checkpoint with the best "
                "held-out WAF on it (training/sft.py on a preference judge_sft config; one judge per fold)"})
    dataset_mixture: dict | None = field(default=None, metadata={
        "help": "instead of dataset_name: several datasets with per-source weights and pair kinds, in "
                "alignment-handbook's style (recipe only; see omniaudit.training.mixture)"})

    def __post_init__(self):
        if self.dataset_filter is not None:
            check_filter(self.dataset_filter)
        if self.dataset_mixture is not None:  # checked before any model is loaded
            from omniaudit.training.mixture import parse_mixture

            if self.dataset_name:
                raise InputError("set either dataset_name or dataset_mixture, not both", value=self.dataset_name)
            self.dataset_mixture = parse_mixture(self.dataset_mixture)
            test = self.dataset_mixture.test_split_size
            if test is not None and self.eval_fraction and self.eval_fraction != test:
                raise InputError(f"dataset_mixture.test_split_size ({test}) and eval_fraction ({self.eval_fraction}) "
                                 "disagree; set one of them")
            self.eval_fraction = test if test is not None else self.eval_fraction


def _deepspeed_requested(argv: list[str]) -> bool:
    if "--deepspeed" in argv:
        return True
    if "--config" in argv:
        import yaml

        with open(argv[argv.index("--config") + 1]) as fh:
            return bool((yaml.safe_load(fh) or {}).get("deepspeed"))
    return False


def parse(dataclasses: tuple, argv: list[str] | None = None) -> tuple:
    """``TrlParser`` over ``--config recipe.yaml`` (or ``recipe:NAME``, a packaged recipe) + command-line overrides; an
    unknown key names itself and exits. Every script also takes :class:`DeterminismArguments` (``threads``,
    ``deterministic``), applied before any model is built and not returned. DeepSpeed without GPUs (tests, CPU smoke
    runs under torchrun): its communication layer is initialised on gloo before the training arguments are built;
    otherwise every process would believe it is alone."""
    import torch
    from trl import TrlParser

    from omniaudit.launch_files import resolve_config_argument

    argv = resolve_config_argument(list(sys.argv[1:] if argv is None else argv))
    if os.environ.get("WORLD_SIZE") and not torch.cuda.is_available() and _deepspeed_requested(argv):
        import deepspeed

        deepspeed.init_distributed(dist_backend="gloo")
    launcher = os.environ.get("ACCELERATE_MIXED_PRECISION")  # before TrainingArguments reads (and keeps) it
    parser = TrlParser((*dataclasses, DeterminismArguments))
    try:
        parsed = parser.parse_args_and_config(argv)
    except ValueError as exc:
        if "Unknown arguments" in str(exc) or "Some specified arguments are not used" in str(exc):
            sys.exit(f"error: {exc}")
        raise
    check_launch_precision(parsed, {**os.environ, "ACCELERATE_MIXED_PRECISION": launcher or "no"})
    apply_determinism(parsed[-1])
    return parsed[:-1]


def check_launch_precision(parsed, environ=None) -> None:
    """Refuse, before any model is loaded, a DeepSpeed launch whose precision the recipe does not share.

    ``accelerate launch`` with a DeepSpeed config passes its ``mixed_precision`` (``ACCELERATE_MIXED_PRECISION``)
    to the Trainer's DeepSpeed plugin; a recipe with ``bf16: false`` and ``fp16: false`` (every tiny recipe) then
    meets ``bf16.enabled=True`` and DeepSpeed refuses the mismatch only once the model and data are loaded (minutes
    in). A recipe's own ``deepspeed`` JSON decides for itself and is not checked.
    """
    env = os.environ if environ is None else environ
    if str(env.get("ACCELERATE_USE_DEEPSPEED", "false")).lower() not in ("true", "1", "yes"):
        return
    launcher = str(env.get("ACCELERATE_MIXED_PRECISION") or "no").lower()
    for args in parsed:
        if not (hasattr(args, "bf16") and hasattr(args, "fp16")) or getattr(args, "deepspeed", None):
            continue
        if launcher in ("bf16", "fp16") and not (args.bf16 or args.fp16):
            raise InputError(f"the accelerate launch config runs DeepSpeed in {launcher} (its mixed_precision), but "
                             f"the recipe trains in full precision (bf16: false, fp16: false), which DeepSpeed "
                             f"refuses; launch with a full-precision config (accelerate_configs/zero3_cpu.yaml on "
                             f"CPU, or add --mixed_precision no to `accelerate launch`) or pass --{launcher} true")


def load_split(data: DataArguments, required: tuple[str, ...], split: str | None = None):
    """One split as a ``datasets.Dataset``; missing columns fail before training, naming them."""
    from omniaudit.data_builders.hub import load_hub_dataset

    if data.dataset_mixture is not None:  # each source names its own split
        from omniaudit.training.mixture import load_mixture

        ds = load_mixture(data.dataset_mixture, required).dataset
        # after the weights: a weight is a share of its source's (kinds-selected) rows, not of the filtered ones
        ds = filter_rows(ds, data.dataset_filter, "dataset_mixture") if data.dataset_filter else ds
        return ds.select(range(min(data.max_train_samples, len(ds)))) if data.max_train_samples else ds
    if not data.dataset_name:
        raise InputError("no dataset: set dataset_name (or dataset_mixture) in the recipe or pass --dataset_name")
    ds = load_hub_dataset(data.dataset_name, data.dataset_config, split or data.dataset_train_split)
    missing = [c for c in required if c not in ds.column_names]
    if missing:
        raise InputError(f"config '{data.dataset_config}' lacks column(s) {missing} that this script needs; it has "
                         f"{ds.column_names}", file=data.dataset_name)
    if data.dataset_filter:
        ds = filter_rows(ds, data.dataset_filter, data.dataset_name)
    if data.max_train_samples:
        ds = ds.select(range(min(data.max_train_samples, len(ds))))
    return ds


def check_filter(wanted) -> dict:
    """A ``dataset_filter`` is a mapping ``{column: value or [values]}`` with at least one value per column."""
    if not isinstance(wanted, dict):
        raise InputError("expected a mapping {column: value or [values]}, e.g. {intervention: original}",
                         column="dataset_filter", value=wanted)
    for column, values in wanted.items():
        if isinstance(values, list | tuple) and not values:
            raise InputError(f"the value list of '{column}' is empty, so no row could match; give at least one "
                             "value or leave the column out", column="dataset_filter")
    return wanted


def _cell_key(value) -> str | None:
    return None if value is None else str(value)  # null is its own value, never the text "None"


def filter_rows(ds, wanted: dict, source: str | None = None):
    """The rows whose columns hold the wanted values (``{column: value or [values]}``, compared as text; a null
    value matches null cells only, and the text "None" does not match them; columns must all hold). A filter that is
    not a mapping, an empty value list, an unknown column or a value no row has is an error listing what there is;
    so is no row left."""
    import numpy as np

    check_filter(wanted)
    keep = np.ones(len(ds), dtype=bool)
    for column, values in wanted.items():
        if column not in ds.column_names:
            raise InputError(f"dataset_filter: no column '{column}'; the config has {ds.column_names}", file=source)
        values = {_cell_key(v) for v in (values if isinstance(values, list | tuple) else [values])}
        cells = [_cell_key(v) for v in ds[column]]
        order = lambda v: (v is not None, str(v))  # noqa: E731 - null first
        unknown = sorted(values - set(cells), key=order)
        if unknown:
            raise InputError(f"dataset_filter: no row has {column} {unknown}; its values: "
                             f"{sorted(set(cells), key=order)}", file=source, column=column)
        keep &= np.array([c in values for c in cells], dtype=bool)
    if not keep.any():
        raise InputError(f"dataset_filter {wanted} leaves no row (each value exists, but no row has them all)",
                         file=source)
    return ds.select(np.flatnonzero(keep).tolist())


def fold_split(ds, fold: int, source: str | None = None):
    """(train, held out): the rows of every other fold, and those of ``fold`` (the config's ``fold`` column)."""
    import numpy as np

    if "fold" not in ds.column_names:
        raise InputError("heldout_fold needs a config with a fold column (e.g. a preference dataset's judge_sft)",
                         file=source, column="fold")
    folds = np.asarray(ds["fold"])
    if fold not in set(folds.tolist()):
        raise InputError(f"heldout_fold {fold} is not a fold of the config (folds {sorted(set(folds.tolist()))})",
                         file=source, column="heldout_fold", value=fold)
    return ds.select(np.flatnonzero(folds != fold).tolist()), ds.select(np.flatnonzero(folds == fold).tolist())


def refuse_heldout_fold(data: DataArguments, script: str, instead: str) -> None:
    """A script with its own fold handling (or none) refuses ``heldout_fold`` rather than ignore it."""
    if data.heldout_fold is not None:
        raise InputError(f"{script} does not take heldout_fold; {instead}", column="heldout_fold",
                         value=data.heldout_fold)


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


def peft_config(model_args, task_type: str | None = None, default_targets: str | list[str] | None = None,
                language_model_of=None):
    """The LoRA config, built by TRL's ``get_peft_config`` so every ``ModelConfig`` option applies (``use_dora``,
    ``use_rslora``, ``lora_modules_to_save``, ``lora_target_parameters``); None without ``use_peft``.

    ``task_type`` is the script's own (it knows the model it builds); ``default_targets`` stands in for an unset
    ``lora_target_modules``. A single plain module name (``--lora_target_modules q_proj``, which TRL turns into the
    string ``"q_proj"`` and PEFT would read as a full-match regex matching nothing) is matched as a name.
    ``language_model_of``: a multimodal model whose language model alone is adapted (:func:`language_model_only`).
    """
    import dataclasses
    import re

    from trl.trainer.utils import get_peft_config

    config = get_peft_config(model_args)
    if config is None:
        return None
    targets = model_args.lora_target_modules
    if targets is None:
        targets = default_targets
    if isinstance(targets, str) and re.fullmatch(r"\w+", targets):
        targets = [targets]
    changes = {"target_modules": targets}
    if task_type:
        changes["task_type"] = task_type
    if language_model_of is not None:
        changes["exclude_modules"] = language_model_only(language_model_of)
        if targets is None or targets == "all-linear":  # PEFT's all-linear breaks on fused MoE models (Qwen3-Omni)
            changes["target_modules"] = language_model_linear_names(language_model_of)
    return dataclasses.replace(config, **changes)


def language_model_only(model) -> str | None:
    """A PEFT ``exclude_modules`` regex (a string is a full match on module names) that leaves only the modules of
    ``model``'s language model to adapt: the audio encoder's q/k/v_proj and the vision tower's gate/up/down_proj
    share the language model's layer names, and PEFT's plain name matching would adapt them too. A filter, not a
    target regex, so PEFT's own handling of the targets (``all-linear``, fused MoE experts) is unchanged. None when
    the model is its own language model."""
    import re

    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model
    prefix = next(name for name, module in model.named_modules() if module is decoder)
    return rf"(?!{re.escape(prefix)}\.).*" if prefix else None


def language_model_linear_names(model) -> list[str]:
    """The names of the linear layers of ``model``'s language model (``q_proj``, ..., ``down_proj``)."""
    from torch import nn

    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model
    return sorted({name.rsplit(".", 1)[-1] for name, module in decoder.named_modules()
                   if isinstance(module, nn.Linear)})


def freeze_towers(model, audio: bool = False, vision: bool = False) -> list[str]:
    """Freeze the audio encoder and/or the vision tower (full fine-tuning of the rest); returns the module names
    frozen. A tower the model does not have is an error."""
    frozen = []
    for modality, wanted in (("audio", audio), ("video", vision)):
        if not wanted:
            continue
        tower = model.get_encoder(modality=modality) if hasattr(model, "get_encoder") else model
        if tower is model:
            raise InputError(f"freeze_{'audio' if modality == 'audio' else 'vision'}_tower: the model "
                             f"({type(model).__name__}) has no {modality} encoder",
                             file=getattr(model, "name_or_path", None))
        tower.requires_grad_(False)
        frozen.append(next(name for name, module in model.named_modules() if module is tower))
    return frozen


def finish_cross_fit(out_dir: str | Path, metrics_file: str, results: dict[str, dict], ids: list[str],
                     p_a1: list[float], orders: list[str] | str = "ab", **extra) -> dict:
    """Average the per-fold metrics; on the main process write them and the predictions (id, order, p_a1).
    ``orders``: the presentation order of each prediction row (one order for all rows by default)."""
    import json

    import numpy as np

    summary = {k: float(np.mean([r[k] for r in results.values()])) for k in next(iter(results.values()))}
    summary.update(folds=results, **extra)
    if int(os.environ.get("RANK", "0")) == 0:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / metrics_file).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        write_preference_predictions(out_dir / "predictions.csv", ids, p_a1, orders)
    return summary


def train_and_save(trainer, training_args, output_dir: str | None = None, run_info: dict | None = None):
    """Train (resuming when asked) and save on every process (ZeRO-3 gathers the shards to save them), with
    ``determinism.json`` beside the weights. ``run_info`` (:func:`report_setup`'s): the dataset and model, added to
    the tracking run's config.

    ``--resume_from_checkpoint true`` continues from the run's last checkpoint (or starts afresh without one); with
    ``output_dir`` (one of several folds), each fold continues from its own last checkpoint (:func:`resume_point`).
    """
    import logging

    out = output_dir or training_args.output_dir
    if run_info:
        trainer.add_callback(tracking_callback(run_info))
    resume = resume_point(training_args.resume_from_checkpoint, training_args.output_dir, out)
    if training_args.resume_from_checkpoint and resume is None:
        logging.getLogger(__name__).warning("no checkpoint in %s: training %s from the start", out, out)
    trainer.train(resume_from_checkpoint=resume)
    trainer.save_model(out)
    write_determinism_record(out, training_args.seed)
    return trainer


def fold_arguments(training_args, fold: int, n_folds: int):
    """The training arguments of one held-out fold: with several folds, its own folder ``output_dir/foldK`` and its
    own tracking run ``RUN_NAME-foldK`` (one wandb run per fold, grouped under ``RUN_NAME``; five folds logging into
    one run would overwrite each other's steps)."""
    import copy

    args = copy.deepcopy(training_args)
    if n_folds > 1:
        base = training_args.run_name or Path(training_args.output_dir).name
        args.output_dir = str(Path(training_args.output_dir) / f"fold{fold}")
        args.run_name = f"{base}-fold{fold}"
        if "wandb" in (training_args.report_to or []):
            os.environ.setdefault("WANDB_RUN_GROUP", base)
    return args


def end_fold(trainer, held_out_metrics: dict[str, float] | None = None) -> None:
    """Log held-out metrics that ``trainer.predict`` did not report itself to the fold's tracking run (``test/...``
    in wandb), then close that run so the next fold opens its own."""
    if held_out_metrics:
        trainer.log({f"test_{k}": v for k, v in held_out_metrics.items()})
    if "wandb" in (trainer.args.report_to or []) and trainer.is_world_process_zero():
        import wandb

        if wandb.run is not None:  # the next fold's trainer opens a new run
            wandb.finish()


def write_preference_predictions(path: str | Path, ids: list[str], p_a1: list[float],
                                 order: list[str] | str = "ab") -> Path:
    """The judge file ``omniaudit audit preference --predictions`` reads: id, order, p_a1 (P that a1 is preferred);
    ``order`` one presentation order for every row or one per row."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    pd.DataFrame({"id": ids, "order": order, "p_a1": p_a1}).to_csv(tmp, index=False)
    os.replace(tmp, path)
    return path


MEDIA_COLUMNS = ("video", "audio", "image")


def media_column(ds, need: str | None = None) -> tuple[object, str | None]:
    """(dataset, media column): the media column left encoded (the collator decodes it), or None.

    Only the rows the dataset holds count (after ``select`` / ``filter`` / a mixture's shuffle, not the whole Arrow
    table underneath). A cell without embedded bytes is read from its ``path`` when that file exists here (a
    ``.jsonl`` / ``.csv`` source can only give paths; a relative path is taken from the current folder) and
    embedded, so the collator always gets bytes; a path that does not resolve is an error naming the row. A row
    with no clip in the column (e.g. an audio-only pair of a preference set whose other pairs have videos) is an
    error naming the row and the column its clip is in; ``need`` says what the calling script needs instead.
    """
    import datasets
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    column = next((c for c in MEDIA_COLUMNS if c in ds.column_names), None)
    if column is None:
        return ds, None
    kinds = {"video": datasets.Video, "audio": datasets.Audio, "image": datasets.Image}
    feature = ds.features[column]
    if type(feature) in (datasets.Video, datasets.Audio, datasets.Image):
        ds = ds.cast_column(column, type(feature)(decode=False))
    elif isinstance(feature, datasets.Value) and feature.dtype in ("string", "large_string"):
        ds = ds.cast_column(column, kinds[column](decode=False))  # file paths (a JSONL / CSV source)
    else:
        raise InputError(f"expected a {column} feature (embedded bytes or a file path), got {feature}", column=column)
    cells = ds.data.column(column)
    missing = pc.or_(pc.is_null(cells), pc.is_null(pc.struct_field(cells, "bytes")))
    missing = pc.fill_null(missing, True)
    indices = getattr(ds, "_indices", None)  # the rows this dataset holds, when it is a selection of its table
    if indices is not None:
        missing = pc.take(missing, indices.column(0))
    missing = missing.combine_chunks() if isinstance(missing, pa.ChunkedArray) else missing
    rows = np.flatnonzero(missing.to_numpy(zero_copy_only=False))
    if rows.size == 0:
        return ds, column
    ids = ds["id"] if "id" in ds.column_names else None
    others = [c for c in MEDIA_COLUMNS if c != column and c in ds.column_names]
    unresolved, absent = [], []
    for i in rows:
        row = ds.select_columns([column, *others])[int(i)]
        cell = row[column]
        if cell is None:  # no clip in this column at all
            absent.append((int(i), next((c for c in others if row[c] is not None), None)))
            continue
        path = cell.get("path")
        if not path or not Path(path).is_file():
            unresolved.append((int(i), path))
    where = lambda i: f"row {i}" + (f" (id {ids[i]!r})" if ids is not None else "")  # noqa: E731
    if absent:
        i, other = absent[0]
        more = f" ({len(absent)} such rows)" if len(absent) > 1 else ""
        clip = (f"its clip is {other} only (column '{other}')" if other
                else f"it has no clip in any of {[column, *others]}")
        raise InputError(f"{where(i)} has no {column}: {clip}{more}; "
                         + (need or f"every row needs a {column}: give it one or leave the row out"), column=column)
    if unresolved:
        i, path = unresolved[0]
        more = f" ({len(unresolved)} such rows)" if len(unresolved) > 1 else ""
        raise InputError(f"{where(i)} has no embedded {column} bytes and its path {path!r} is not a file here "
                         f"(relative paths are taken from {Path.cwd()}){more}; embed the media or fix the paths",
                         column=column)

    def embed(cell):
        if cell.get("bytes") is None:
            cell = {**cell, "bytes": Path(cell["path"]).read_bytes()}
        return {column: cell}

    ds = ds.map(embed, input_columns=[column], features=ds.features, desc=f"embedding {column} files")
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
