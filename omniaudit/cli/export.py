"""``omniaudit export``: a dataset's item configs in another harness's format (``lmms-eval``: task YAML + utils.py;
``inspect``: an Inspect task file with its samples and media); ``omniaudit import``: another harness's log as a
predictions file (``inspect``: an Inspect eval log)."""

from __future__ import annotations

import argparse

from omniaudit.cli import common
from omniaudit.cli.numbers import fraction, non_negative, positive_int


def cmd_lmms_eval(args: argparse.Namespace) -> None:
    """export item configs as lmms-eval tasks (YAML + utils.py)

    Write one lmms-eval task per config into --out (TASKDIR/<task>/: <task>.yaml, utils.py, omniaudit_task.json), for
    lmms-eval in its own environment: `python -m lmms_eval --model M --model_args ... --tasks TASK --include_path
    TASKDIR --log_samples --output_path logs`. Its samples file (logs/<model>/<date>_samples_<task>.jsonl) is then
    read by every audit as a predictions file (--predictions NAME=FILE), checked against this dataset build.
    Configs: --config (repeatable) or every item config of --audit.
    """
    from omniaudit.evaluation.lmms_eval_export import ExportOptions, export_lmms_eval

    options = ExportOptions(name=args.name, dataset_path=args.dataset_path, output_type=args.output_type,
                            max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_p=args.top_p)
    with common.progress_status(f"exporting {args.dataset} as lmms-eval tasks"):
        tasks = export_lmms_eval(args.dataset, args.out, args.config, args.audit, options)
    for t in tasks:
        print(f"task {t.task}: config {t.config}, {t.items} items ({t.fingerprint or 'fingerprint unknown'}) -> "
              f"{args.out}/{t.yaml.as_posix()}")
        if t.video_audio:
            common.say("note", f"{t.task}: some videos are asked about with their own soundtrack; run the model with "
                               "its option for the audio of videos (e.g. use_audio_in_video=True in --model_args)")
    print(f"run: python -m lmms_eval --model MODEL --model_args ... --tasks {','.join(t.task for t in tasks)} "
          f"--include_path {args.out} --log_samples --output_path logs")


def cmd_inspect(args: argparse.Namespace) -> None:
    """export item configs as Inspect tasks (a task file, its samples and media)

    Write one Inspect task per config into --out: <name>.py (one @task per config, importing only inspect_ai),
    samples/<config>.jsonl, media/ and omniaudit_inspect.json (each task's dataset build). Run it with any Inspect
    model, e.g. omniaudit's own runners: `inspect eval OUT/<name>.py --model omniaudit/scripted:oracle` (or
    omniaudit/hf:PATH, omniaudit/openai:MODEL@URL; needs omniaudit's [inspect] extra), then read each log back with
    `omniaudit import inspect LOG --out FILE` and audit FILE. Configs: --config (repeatable) or every item config of
    --audit.
    """
    from omniaudit.inspect_export import InspectExportOptions, export_inspect

    options = InspectExportOptions(name=args.name, max_tokens=args.max_new_tokens, temperature=args.temperature,
                                   top_p=args.top_p)
    with common.progress_status(f"exporting {args.dataset} as Inspect tasks"):
        tasks = export_inspect(args.dataset, args.out, args.config, args.audit, options)
    for t in tasks:
        print(f"task {t.task}: config {t.config}, {t.items} items ({t.fingerprint or 'fingerprint unknown'})")
    print(f"run: inspect eval {args.out}/{tasks[0].file.as_posix()} --model omniaudit/SPEC --log-dir logs, then: "
          "omniaudit import inspect LOG --out FILE")


@common.writes_own_file
def cmd_import_inspect(args: argparse.Namespace) -> None:
    """read an Inspect eval log of an exported task as a predictions file

    Read the log (.eval or .json) of a task written by `omniaudit export inspect` and write the predictions file
    `omniaudit judge` writes for the same answers (one row per sample and epoch, read by omniaudit's answer reader),
    with a provenance naming the Inspect model, task and the log's SHA-256; every audit reads it
    (--predictions NAME=FILE) and checks it against the dataset build.
    """
    from omniaudit.inspect_import import import_inspect

    done = import_inspect(args.log, args.out, args.overwrite or None)
    print(f"{done.rows} answers of task {done.task} (config {done.config}, model {done.model}, {done.runs} run(s)) "
          f"-> {args.out}" + (f"; {done.skipped} samples that ended in an error left out" if done.skipped else ""))


def _task_options(p) -> None:
    from omniaudit.audits import AUDITS

    p.add_argument("--dataset", required=True, help="built dataset folder (Hub layout) or Hub dataset repo id")
    p.add_argument("--config", action="append", help="item config to export (repeatable; default: every item "
                                                     "config of --audit)")
    p.add_argument("--audit", choices=list(AUDITS), help="the audit whose item configs to export (and check "
                                                         "--config against)")


def register(groups: common.Groups) -> None:
    from omniaudit.evaluation.lmms_eval_export import OUTPUT_TYPES

    formats = groups.top.add_parser("export", help="a dataset's item configs as another harness's tasks",
                                    description="Export item configs for other evaluation harnesses.")
    formats = formats.add_subparsers(dest="what", metavar="FORMAT", required=True)
    p = common.command(formats, "lmms-eval", cmd_lmms_eval)
    _task_options(p)
    common.add_out(p, help="task folder for lmms-eval's --include_path (" + common.OUT_FOLDER + ")")
    g = p.add_argument_group("task")
    g.add_argument("--name", help="task name prefix; tasks are NAME_CONFIG (default omniaudit_<dataset name>)")
    g.add_argument("--dataset-path", help="the YAML's dataset_path + dataset_name, where lmms-eval loads the config "
                                          "from: e.g. the Hub repo the folder was pushed to (default: a built "
                                          "folder's Parquet shards by paths relative to the task YAML, or the repo "
                                          "id)")
    g.add_argument("--output-type", choices=OUTPUT_TYPES, default="generate_until",
                   help="generate_until (answers as text, read as `omniaudit judge` reads them) or multiple_choice "
                        "(closed configs: the options scored by log-likelihood, for models that implement it) "
                        "(default generate_until)")
    g.add_argument("--max-new-tokens", type=positive_int, default=32,
                   help="generation_kwargs max_new_tokens (default 32)")
    g.add_argument("--temperature", type=non_negative, default=0.0, help="generation_kwargs temperature (default 0)")
    g.add_argument("--top-p", type=fraction, help="generation_kwargs top_p (default: the model's)")

    p = common.command(formats, "inspect", cmd_inspect)
    _task_options(p)
    common.add_out(p, help="folder of the Inspect task file, its samples and media (" + common.OUT_FOLDER + ")")
    g = p.add_argument_group("task")
    g.add_argument("--name", help="the task file's name and the tasks' prefix; tasks are NAME_CONFIG (default "
                                  "omniaudit_<dataset name>)")
    g.add_argument("--max-new-tokens", type=positive_int, default=32,
                   help="the tasks' generate config max_tokens (default 32)")
    g.add_argument("--temperature", type=non_negative, default=0.0, help="generate config temperature (default 0)")
    g.add_argument("--top-p", type=fraction, help="generate config top_p (default: the model's)")

    logs = groups.top.add_parser("import", help="another harness's log as a predictions file",
                                 description="Read other evaluation harnesses' logs as predictions files.")
    logs = logs.add_subparsers(dest="what", metavar="FORMAT", required=True)
    p = common.command(logs, "inspect", cmd_import_inspect)
    p.add_argument("log", help="Inspect eval log (.eval or .json) of a task written by `omniaudit export inspect`")
    common.add_out(p, help="predictions file to write (JSON lines; replaces only an earlier predictions file)",
                   overwrite=common.REPLACE_FILE)
