"""``omniaudit export``: a dataset's item configs in another harness's format (``lmms-eval``: task YAML + utils.py)."""

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


def register(groups: common.Groups) -> None:
    from omniaudit.audits import AUDITS
    from omniaudit.evaluation.lmms_eval_export import OUTPUT_TYPES

    formats = groups.top.add_parser("export", help="a dataset's item configs as another harness's tasks",
                                    description="Export item configs for other evaluation harnesses.")
    formats = formats.add_subparsers(dest="what", metavar="FORMAT", required=True)
    p = common.command(formats, "lmms-eval", cmd_lmms_eval)
    p.add_argument("--dataset", required=True, help="built dataset folder (Hub layout) or Hub dataset repo id")
    p.add_argument("--config", action="append", help="item config to export (repeatable; default: every item "
                                                     "config of --audit)")
    p.add_argument("--audit", choices=list(AUDITS), help="the audit whose item configs to export (and check "
                                                         "--config against)")
    common.add_out(p, help="task folder for lmms-eval's --include_path (" + common.OUT_FOLDER + ")")
    g = p.add_argument_group("task")
    g.add_argument("--name", help="task name prefix; tasks are NAME_CONFIG (default omniaudit_<dataset name>)")
    g.add_argument("--dataset-path", help="the YAML's dataset_path, where lmms-eval loads the dataset from (default: "
                                          "the folder's absolute path here, or the repo id); e.g. the Hub repo the "
                                          "folder was pushed to, or its path on the machine that runs lmms-eval")
    g.add_argument("--output-type", choices=OUTPUT_TYPES, default="generate_until",
                   help="generate_until (answers as text, read as `omniaudit judge` reads them) or multiple_choice "
                        "(closed configs: the options scored by log-likelihood, for models that implement it) "
                        "(default generate_until)")
    g.add_argument("--max-new-tokens", type=positive_int, default=32,
                   help="generation_kwargs max_new_tokens (default 32)")
    g.add_argument("--temperature", type=non_negative, default=0.0, help="generation_kwargs temperature (default 0)")
    g.add_argument("--top-p", type=fraction, help="generation_kwargs top_p (default: the model's)")
