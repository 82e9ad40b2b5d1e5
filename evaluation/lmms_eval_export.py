"""Export a dataset config's items as an lmms-eval task: ``omniaudit export lmms-eval``.

lmms-eval cannot be installed beside omniaudit (its releases pin ``av<16``; see
:mod:`omniaudit.evaluation.interventions.alignment_tax`), so the export writes a folder that lmms-eval, in its own
environment, reads with ``--include_path``; each config becomes ``TASKDIR/<task>/`` holding

- ``<task>.yaml``: ``dataset_path`` (the built Hub-layout folder's absolute path, or the Hub repo id),
  ``dataset_name`` (the config), ``test_split: train``, ``output_type`` (``generate_until``; ``multiple_choice`` for a
  closed config, scored by option log-likelihoods, where the model implements them), ``generation_kwargs``,
  ``process_docs`` / ``doc_to_visual`` / ``doc_to_text`` / ``doc_to_messages`` / ``doc_to_target`` /
  ``process_results`` as ``!function utils.NAME``, and the one metric ``omniaudit`` (the share answered);
- ``utils.py``: :mod:`omniaudit.evaluation.lmms_eval_task`, copied verbatim;
- ``omniaudit_task.json``: the task's identity (dataset name, config, fingerprint, item count and ids digest, media
  columns), which ``process_results`` writes into every logged sample so that
  :mod:`omniaudit.evaluation.lmms_eval` can read the ``--log_samples`` file back as predictions of this build.

Run and audit::

    omniaudit export lmms-eval --dataset data/iv --audit interventions --out tasks/iv
    python -m lmms_eval --model qwen2_5_omni --model_args pretrained=CKPT --tasks omniaudit_iv_diagnostic \\
        --include_path tasks/iv --batch_size 1 --log_samples --output_path logs
    omniaudit audit interventions --dataset data/iv \\
        --predictions qwen=logs/<model>/<date>_samples_omniaudit_iv_diagnostic.jsonl
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from omniaudit import __version__
from omniaudit.errors import InputError

OUTPUT_TYPES = ("generate_until", "multiple_choice")
FUNCTIONS = ("process_docs", "doc_to_visual", "doc_to_text", "doc_to_messages", "doc_to_target")


@dataclass(frozen=True)
class ExportOptions:
    name: str | None = None  # task name prefix (default omniaudit_<dataset name>): tasks are <name>_<config>
    dataset_path: str | None = None  # the YAML's dataset_path (default: the folder's absolute path, or the repo id)
    output_type: str = "generate_until"
    max_new_tokens: int = 32
    temperature: float = 0.0
    top_p: float | None = None


@dataclass(frozen=True)
class ExportedTask:
    task: str
    config: str
    yaml: Path  # relative to the task folder's root
    items: int
    fingerprint: str | None
    video_audio: bool  # some videos are sent with their own soundtrack


class _Function(str):
    """A ``!function utils.NAME`` reference in the task YAML."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Function, lambda dumper, value: dumper.represent_scalar("!function", str(value)))


def slug(text: str) -> str:
    """A task-name part: lower case letters, digits and underscores."""
    return re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "dataset"


def _media_columns(features) -> dict[str, str]:
    import datasets

    kinds = {datasets.Audio: "audio", datasets.Image: "image", getattr(datasets, "Video", None): "video"}
    return {col: kinds[type(f)] for col, f in features.items() if type(f) in kinds}


def task_config(dataset: str | Path, config: str, options: ExportOptions = ExportOptions()) -> tuple[dict, dict]:
    """The task YAML (as a dict, functions as ``!function`` references) and ``omniaudit_task.json`` of one config."""
    from omniaudit.data_builders.fingerprint import fingerprint_of
    from omniaudit.data_builders.hub import load_hub_dataset
    from omniaudit.evaluation.lmms_eval_task import ids_digest
    from omniaudit.records import local_name

    if options.output_type not in OUTPUT_TYPES:
        raise InputError(f"unknown output type; expected one of {', '.join(OUTPUT_TYPES)}", value=options.output_type)
    ds = load_hub_dataset(dataset, config)
    missing = [c for c in ("id", "prompt") if c not in ds.column_names]
    if missing or getattr(ds.features["prompt"], "dtype", None) not in ("string", "large_string"):
        raise InputError(f"config '{config}' is not a set of model items (the item contract: id, a text prompt, "
                         f"media, options); it has {ds.column_names}", file=dataset)
    options_column = ds["options"] if "options" in ds.column_names else [None] * len(ds)
    free = sum(not o for o in options_column)
    if options.output_type == "multiple_choice" and free:
        raise InputError(f"config '{config}' has {free} free-form item(s) (no options): they can only be generated "
                         f"(--output-type generate_until)", file=dataset)
    name = options.name or f"omniaudit_{slug(local_name(dataset))}"
    task = f"{slug(name)}_{slug(config)}"
    local = Path(dataset).expanduser()
    info = {"task": task, "dataset": local_name(dataset), "config": config,
            "fingerprint": fingerprint_of(dataset, config), "items": len(ds), "ids": ids_digest(ds["id"]),
            "media": _media_columns(ds.features), "output_type": options.output_type, "omniaudit": __version__,
            "video_audio": bool("video_audio" in ds.column_names and any(v for v in ds["video_audio"] if v))}
    body: dict = {
        "task": task, "tag": ["omniaudit"],
        "dataset_path": options.dataset_path or (str(local.resolve()) if local.is_dir() else str(dataset)),
        "dataset_name": config, "test_split": "train", "output_type": options.output_type}
    body.update({f: _Function(f"utils.{f}") for f in FUNCTIONS})
    if options.output_type == "multiple_choice":
        body["doc_to_choice"] = _Function("utils.doc_to_choice")
    else:
        body["generation_kwargs"] = {"max_new_tokens": options.max_new_tokens, "temperature": options.temperature,
                                     **({"top_p": options.top_p} if options.top_p is not None else {}),
                                     "do_sample": options.temperature > 0, "num_beams": 1}
    body["process_results"] = _Function("utils.process_results")
    body["metric_list"] = [{"metric": "omniaudit", "aggregation": _Function("utils.aggregate_answered"),
                            "higher_is_better": True}]
    body["metadata"] = {"version": 1, "omniaudit": __version__, "fingerprint": info["fingerprint"]}
    return body, info


def _header(info: dict, audit: str | None) -> str:
    lines = [f"Written by `omniaudit export lmms-eval` (omniaudit {info['omniaudit']}): config '{info['config']}' of "
             f"{info['dataset']} ({info['fingerprint'] or 'fingerprint unknown'}), {info['items']} items.",
             f"Run:   python -m lmms_eval --model MODEL --model_args ... --tasks {info['task']} --include_path "
             "TASKDIR --log_samples --output_path logs",
             f"Audit: omniaudit audit {audit or 'AUDIT'} --dataset DATASET --predictions "
             f"NAME=logs/<model>/<date>_samples_{info['task']}.jsonl"]
    if info["video_audio"]:
        lines.append("Some videos are asked about WITH their own soundtrack: run the model with its option for the "
                     "audio of videos (e.g. use_audio_in_video=True in --model_args), or it answers them deaf.")
    if info["output_type"] == "multiple_choice":
        lines.append("multiple_choice: the options are scored by log-likelihood (simple models that implement it).")
    return "".join(f"# {line}\n" for line in lines)


def write_task(dataset: str | Path, config: str, root: Path, options: ExportOptions = ExportOptions(),
               audit: str | None = None) -> ExportedTask:
    """Write ``root/<task>/`` (YAML, utils.py, omniaudit_task.json) for one config."""
    from omniaudit.evaluation import lmms_eval_task

    body, info = task_config(dataset, config, options)
    folder = root / info["task"]
    if folder.exists():
        raise InputError(f"two configs give the task name '{info['task']}'; export them separately or set --name")
    folder.mkdir(parents=True)
    text = _header(info, audit) + yaml.dump(body, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=119)
    (folder / f"{info['task']}.yaml").write_text(text, encoding="utf-8")
    shutil.copyfile(lmms_eval_task.__file__, folder / "utils.py")
    (folder / lmms_eval_task.TASK_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return ExportedTask(info["task"], config, Path(info["task"]) / f"{info['task']}.yaml", info["items"],
                        info["fingerprint"], info["video_audio"])


def export_lmms_eval(dataset: str | Path, out: str | Path, configs: list[str] | None = None, audit: str | None = None,
                     options: ExportOptions = ExportOptions()) -> list[ExportedTask]:
    """Export ``configs`` of ``dataset`` (default: every item config of ``audit``, from the registry) as lmms-eval
    tasks in the folder ``out`` (written atomically: :func:`omniaudit.io.atomic_dir`)."""
    from omniaudit.audits import get
    from omniaudit.io import atomic_dir

    known = tuple(get(audit).item_configs) if audit else None
    configs = list(dict.fromkeys(configs or known or ()))
    if not configs:
        raise InputError("give the configs to export (--config), or the audit whose item configs to export (--audit)")
    if known:
        other = [c for c in configs if c not in known]
        if other:
            raise InputError(f"audit '{audit}' reads configs {', '.join(known)}, not {', '.join(other)}")
    with atomic_dir(out) as tmp:
        return [write_task(dataset, config, tmp, options, audit) for config in configs]
