"""Export a dataset config's items as an lmms-eval task: ``omniaudit export lmms-eval``.

lmms-eval cannot be installed beside omniaudit (its releases pin ``av<16``; see
:mod:`omniaudit.evaluation.interventions.alignment_tax`), so the export writes a folder that lmms-eval, in its own
environment, reads with ``--include_path``; each config becomes ``TASKDIR/<task>/`` holding

- ``<task>.yaml``: where lmms-eval loads the rows from: for a built Hub-layout folder, ``dataset_path: parquet``
  with ``dataset_kwargs.data_files`` naming the config's Parquet shards by paths relative to the YAML's own folder
  (no path of this machine is written; lmms-eval resolves them against the YAML's folder, releases before that
  against the working directory: run it from inside a task folder there); for a Hub repo id, or ``--dataset-path``
  when given, ``dataset_path`` is that and ``dataset_name`` the config. Then ``test_split: train``, ``output_type``
  (``generate_until``; ``multiple_choice`` for a closed config, scored by option log-likelihoods, where the model
  implements them), ``generation_kwargs``, ``process_docs`` / ``doc_to_visual`` / ``doc_to_text`` /
  ``doc_to_messages`` / ``doc_to_target`` / ``process_results`` as ``!function utils.NAME``, and the metrics:
  ``omniaudit`` (the share answered; per document, the record a predictions row is rebuilt from) and the audit's
  shortcut measures that the config's rows allow (:func:`shortcut_metrics`: accuracy, slot-A rate, lock, longer
  description, cue following, Avg Gap), each with its aggregation function;
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
# the shortcut measures a task may carry (lmms_eval_task.VALUES), in this order; higher_is_better as lmms-eval asks:
# accuracy yes, a shortcut measure no (the two-sided ones, slot_a and longer, are best at their null 0.5)
METRICS = {"accuracy": True, "slot_a": False, "lock": False, "longer": False, "follow_cue": False,
           "cue_following": False, "avg_gap": False}
_DESCRIPTIONS = re.compile(r"Description A: .*?\n\nDescription B: .*?\n\n", re.DOTALL)  # lmms_eval_task's


@dataclass(frozen=True)
class ExportOptions:
    name: str | None = None  # task name prefix (default omniaudit_<dataset name>): tasks are <name>_<config>
    dataset_path: str | None = None  # the YAML's dataset_path (default: the folder's shards, relative; or the repo id)
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


def shortcut_metrics(ds) -> list[str]:
    """The shortcut measures the config's rows allow (:data:`METRICS`; see :mod:`.lmms_eval_task`): accuracy where
    rows have a gold answer or an intervention target; slot-A rate where closed rows have an order; lock where they
    also name their trial or pair; longer where pairs of descriptions are shown; cue following where a wrong label
    is supplied on some rows and not on others; Avg Gap on intervention rows."""
    columns = set(ds.column_names)

    def some(column: str) -> bool:
        return column in columns and any(v is not None and v != "" for v in ds[column])

    closed = "options" in columns and any(ds["options"])
    found = {"accuracy": some("gold"), "slot_a": closed and some("order"),
             "lock": closed and some("order") and (some("trial") or some("pair_id")),
             "longer": closed and any(_DESCRIPTIONS.search(p or "") for p in ds["prompt"]),
             "follow_cue": closed and some("cue") and "cue_shown" in columns and any(ds["cue_shown"]),
             "avg_gap": some("dimension") and some("intervention")}
    found["cue_following"] = found["follow_cue"] and not all(ds["cue_shown"])
    return [m for m in METRICS if found[m]]


def _data_location(dataset: str | Path, config: str, options: ExportOptions, folder: Path) -> dict:
    """Where the task's YAML (written in ``folder``) has lmms-eval load the config from: ``--dataset-path`` or a Hub
    repo id as ``dataset_path`` + ``dataset_name``; a built folder's Parquet shards as ``data_files`` relative to
    ``folder`` (a config whose media are stored by path: the folder itself, relative)."""
    import os

    from omniaudit.data_builders.hub import card_configs, card_entries

    local = Path(dataset).expanduser()
    if options.dataset_path or not local.is_dir():
        return {"dataset_path": options.dataset_path or str(dataset), "dataset_name": config}
    by_paths = any(e.get("config_name") == config and e.get("metadata_filenames") for e in card_entries(local))
    if by_paths:
        return {"dataset_path": os.path.relpath(local.resolve(), folder.resolve()), "dataset_name": config}
    patterns = [p for split, p in card_configs(local)[config] if split == "train"]
    files = sorted({f.resolve() for p in patterns for f in local.glob(p) if f.suffix == ".parquet"})
    return {"dataset_path": "parquet", "dataset_kwargs": {
        "data_files": {"train": [os.path.relpath(f, folder.resolve()) for f in files]}}}


def task_config(dataset: str | Path, config: str, options: ExportOptions = ExportOptions(),
                root: Path | None = None) -> tuple[dict, dict]:
    """The task YAML (as a dict, functions as ``!function`` references) and ``omniaudit_task.json`` of one config;
    ``root``: the task folder's root, where the YAML is written in ``root/<task>/`` (its data paths are relative to
    that; default: the current folder)."""
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
    metrics = shortcut_metrics(ds)
    info = {"task": task, "dataset": local_name(dataset), "config": config,
            "fingerprint": fingerprint_of(dataset, config), "items": len(ds), "ids": ids_digest(ds["id"]),
            "media": _media_columns(ds.features), "output_type": options.output_type, "omniaudit": __version__,
            "video_audio": bool("video_audio" in ds.column_names and any(v for v in ds["video_audio"] if v)),
            "metrics": metrics}
    location = _data_location(dataset, config, options, (root or Path(".")) / task)
    body: dict = {"task": task, "tag": ["omniaudit"], **location, "test_split": "train",
                  "output_type": options.output_type}
    body.update({f: _Function(f"utils.{f}") for f in FUNCTIONS})
    if options.output_type == "multiple_choice":
        body["doc_to_choice"] = _Function("utils.doc_to_choice")
    else:
        body["generation_kwargs"] = {"max_new_tokens": options.max_new_tokens, "temperature": options.temperature,
                                     **({"top_p": options.top_p} if options.top_p is not None else {}),
                                     "do_sample": options.temperature > 0, "num_beams": 1}
    body["process_results"] = _Function("utils.process_results")
    body["metric_list"] = [{"metric": "omniaudit", "aggregation": _Function("utils.aggregate_answered"),
                            "higher_is_better": True}] + [
        {"metric": m, "aggregation": _Function(f"utils.aggregate_{m}"), "higher_is_better": METRICS[m]}
        for m in metrics]
    body["metadata"] = {"version": 1, "omniaudit": __version__, "fingerprint": info["fingerprint"]}
    return body, info


def _header(info: dict, audit: str | None, relative: bool = False) -> str:
    lines = [f"Written by `omniaudit export lmms-eval` (omniaudit {info['omniaudit']}): config '{info['config']}' of "
             f"{info['dataset']} ({info['fingerprint'] or 'fingerprint unknown'}), {info['items']} items.",
             f"Run:   python -m lmms_eval --model MODEL --model_args ... --tasks {info['task']} --include_path "
             "TASKDIR --log_samples --output_path logs",
             f"Audit: omniaudit audit {audit or 'AUDIT'} --dataset DATASET --predictions "
             f"NAME=logs/<model>/<date>_samples_{info['task']}.jsonl"]
    if relative:
        lines.append("The rows: the config's Parquet shards, by paths relative to this file (lmms-eval releases up to "
                     "0.7.2 resolve them against the working directory: run those from this folder).")
    if info["video_audio"]:
        lines.append("Some videos are asked about WITH their own soundtrack: run the model with its option for the "
                     "audio of videos (e.g. use_audio_in_video=True in --model_args), or it answers them deaf.")
    if info["output_type"] == "multiple_choice":
        lines.append("multiple_choice: the options are scored by log-likelihood (simple models that implement it).")
    return "".join(f"# {line}\n" for line in lines)


def write_task(dataset: str | Path, config: str, root: Path, options: ExportOptions = ExportOptions(),
               audit: str | None = None, final: Path | None = None) -> ExportedTask:
    """Write ``root/<task>/`` (YAML, utils.py, omniaudit_task.json) for one config; ``final``: the root the folder
    ends up in (its data paths are relative to ``final/<task>``; default ``root``)."""
    from omniaudit.evaluation import lmms_eval_task

    body, info = task_config(dataset, config, options, final or root)
    folder = root / info["task"]
    if folder.exists():
        raise InputError(f"two configs give the task name '{info['task']}'; export them separately or set --name")
    folder.mkdir(parents=True)
    text = _header(info, audit, "dataset_kwargs" in body) + yaml.dump(body, Dumper=_Dumper, sort_keys=False,
                                                                      allow_unicode=True, width=119)
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
        return [write_task(dataset, config, tmp, options, audit, Path(out)) for config in configs]
