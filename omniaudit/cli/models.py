"""Running models, for every audit: ``judge`` (one model over one dataset config), ``merge-predictions`` (the shards
of a judge run) and ``tiny-models`` (the offline models and datasets of the tiny recipes)."""

from __future__ import annotations

import argparse
from pathlib import Path

from omniaudit.cli import common
from omniaudit.cli.numbers import positive_int


def _judged(counts: dict) -> str:
    """One line: how many items were judged and how many answers are usable."""
    runs = f" x {counts['runs']} runs" if counts["runs"] > 1 else ""
    part = f" (shard {counts['shard']})" if counts["shard"] else ""
    if counts.get("processes"):
        part += f" by {counts['processes']} processes"
    if counts.get("limit"):
        part += f" (--limit {counts['limit']}: a seeded sample of {counts['items']} of {counts['selected']} items)"
    parts = [f"{counts['items']} items{runs} judged{part}"]
    if counts["closed"]:
        parts.append(f"{counts['parsed']} of {counts['closed']} closed answers parsed, {counts['with_probs']} with "
                     "option probabilities" + (f" ({counts['probs_dropped']} dropped: the text named no option or "
                                               "another one)" if counts.get("probs_dropped") else ""))
        if counts.get("unread"):
            parts.append("unread: " + ", ".join(_why(why, n, counts) for why, n in counts["unread"].items()))
        if counts.get("extracted"):
            parts.append(f"{counts['extracted']} of them read by the extractor (read_by: extractor)")
        if counts.get("from_reasoning"):
            parts.append(f"{counts['from_reasoning']} of them read from the reasoning trace (read_by: reasoning)")
        if counts.get("reasoning"):
            parts.append(f"{counts['reasoning']} with a reasoning trace (set apart, read only with --read-reasoning)")
        if counts.get("answer_format", "free") != "free":
            parts.append("answer paths: " + ", ".join(f"{n} {path}" for path, n in counts["answer_paths"].items()))
    if counts["free_form"]:
        parts.append(f"{counts['generated']} of {counts['free_form']} free-form answers non-empty")
    if counts["requests"] is not None:
        parts.append(f"{counts['requests']} HTTP requests")
    return ", ".join(parts)


def _why(why: str, n: int, counts: dict) -> str:
    """``3 language (ru 2, el 1)``: the replies left unread for a reason, with the languages no reader glosses."""
    if why == "language" and counts.get("languages"):
        return f"{n} language ({', '.join(f'{lang} {k}' for lang, k in counts['languages'].items())})"
    return f"{n} {why}"


def folds_list(text: str) -> list[int]:
    """``--folds 0,1`` -> [0, 1] (distinct non-negative integers)."""
    try:
        folds = [int(f) for f in text.split(",") if f.strip()]
    except ValueError:
        folds = []
    if not folds or min(folds) < 0 or len(set(folds)) != len(folds):
        raise argparse.ArgumentTypeError(f"expected distinct fold numbers separated by commas, e.g. 0,1; got {text!r}")
    return folds


def fold_conditions(conditions: list[str] | None, folds: list[int] | None) -> list[str] | None:
    """The item selection of a fold-filtered run: the folds join ``--conditions`` as ``fold=K`` (values of one
    column are alternatives), so the predictions' provenance records them in its selection."""
    if not folds:
        return conditions
    return [*(conditions or []), *(f"fold={k}" for k in sorted(folds))]


@common.writes_own_file
def cmd_judge(args: argparse.Namespace) -> None:
    """run a judge over a dataset config and write its predictions

    Put a judge in front of every item of a config and write PRED.jsonl, one row per item and run: id, order, run,
    raw, label and parsed (closed sets; free-form items are generated, never matched to options), option_probs (where
    the runner has them), temperature, top_p, seed. JUDGE: hf:PATH_OR_REPO (local Transformers model; closed-set
    answers from option logits), openai:MODEL@URL (OpenAI-compatible chat server, e.g. http://localhost:8000/v1 for
    vLLM; API key from $OPENAI_API_KEY; answers cached, so an interrupted run resumes), scripted:NAME (always-a,
    always-b, copy-reference, copy-specialist, oracle, random), or KIND:... for an installed runner plugin (entry
    point group omniaudit.runners).
    """
    from contextlib import nullcontext

    from omniaudit.errors import InputError
    from omniaudit.runners import run_judge
    from omniaudit.runners.data_parallel import OtherRankReports, judge_data_parallel, launch_world
    from omniaudit.runners.folds import check_judge_folds

    world = launch_world()  # (rank, N) under `accelerate launch -m omniaudit judge` / torchrun, else None
    main_rank = world is None or world[0] == 0
    if world is not None and args.shard:  # said once, by the main process (whose exit status the launch reports)
        if not main_rank:
            raise SystemExit(0)  # exiting 2 would have the launcher stop the main process before it says why
        raise InputError(f"--shard {args.shard[0]}/{args.shard[1]} cannot be combined with a multi-process launch "
                         f"(WORLD_SIZE={world[1]}): the launch's processes are the shards already (rank r of N judges "
                         "shard r/N); drop --shard, or run each shard as a single process")
    # before any model is loaded: never answer a trained-on fold, nor another build than it held out
    held = check_judge_folds(args.judge, args.folds, args.dataset, args.config)
    if held is not None and args.folds is None and main_rank:
        common.say("warning", f"{args.judge} is a cross-fitted judge trained without fold {held} only: its answers on "
                              f"every other fold are in-sample; for out-of-fold answers run it with --folds {held}")
    conditions = fold_conditions(args.conditions, args.folds)
    options = {"min_usable": args.min_usable, "dump_prompts": args.dump_prompts, "limit": args.limit,
               **common.sampling_kwargs(args), **common.runner_kwargs(args),
               **({"extractor": args.extractor} if args.extractor else {}),
               **({"read_reasoning": True} if args.read_reasoning else {})}
    status = common.progress_status(f"judging {args.config} with {args.judge}") if main_rank else nullcontext()
    counts: dict | None
    with status as progress:
        if world is None:
            counts = run_judge(args.dataset, args.config, args.judge, args.out, conditions, progress, args.formats,
                               shard=args.shard, **options)
        else:
            try:
                counts = judge_data_parallel(args.dataset, args.config, args.judge, args.out, conditions, progress,
                                             args.formats, **options)
            except OtherRankReports:  # the main process reports it, for every rank, and exits 2
                raise SystemExit(0) from None
    if counts is None:  # a data-parallel rank other than the main one: its part is merged, nothing to say
        return
    print(_judged(counts))
    bad = (counts["rejected"] or 0) + (counts["not_completions"] or 0)
    if bad:
        common.say("warning", f"{bad} of {counts['rows']} replies were not answers ({counts['rejected']} rejected by "
                              f"the server, {counts['not_completions']} not chat completions); they are kept as "
                              "unparseable and asked again on a rerun")
    print(f"predictions: {args.out}")


@common.writes_own_file
def cmd_merge_predictions(args: argparse.Namespace) -> None:
    """join the predictions of a sharded judge run (judge --shard I/N), or of cross-fitted judges (judge --folds)

    Join the N files of `omniaudit judge --shard I/N` (all N required, each once) into the file an unsharded run
    writes, byte for byte. Or join the fold-filtered files of K cross-fitted judges (`omniaudit judge --folds K`
    with the judge trained without fold K: one fold per file, a distinct judge per file, each trained model on the
    fold its heldout_selection.json names) into one out-of-fold predictions file whose provenance names each fold's
    judge; the audits read it as one judge.
    """
    from omniaudit.runners.folds import is_fold_file, merge_fold_predictions
    from omniaudit.runners.shards import merge_predictions

    if is_fold_file(args.shards[0]):
        counts = merge_fold_predictions(args.out, args.shards)
        print(f"merged {counts['files']} fold-filtered runs (folds {', '.join(map(str, counts['folds']))}): "
              f"{counts['items']} items x {counts['runs']} run(s) into {args.out}")
        return
    counts = merge_predictions(args.out, args.shards)
    print(f"merged {counts['shards']} shards: {counts['items']} items x {counts['runs']} run(s) into {args.out}")


@common.writes_own_file
def cmd_tiny_models(args: argparse.Namespace) -> None:
    """write tiny random models, a tokenizer and the datasets the tiny recipes use

    Build, offline and from configs: a tiny Qwen2 causal LM, a tiny sequence classifier, a tiny Qwen2.5-Omni thinker
    (audio + vision + text), a tiny Qwen2-Audio-style audio LM (audio_lm) and a locally trained tokenizer, plus the
    datasets of the tiny recipes (`omniaudit recipes list`: tiny/*; our builders' embedded defaults). Then train on
    them, from this folder, with the line it prints last:
    """
    from omniaudit.tiny_models import build_tiny_suite, train_command

    with common.progress_status("building tiny models and datasets") as progress:
        paths = build_tiny_suite(args.out, progress)
    for name, path in paths.items():
        print(f"{name}: {path}")
    print(f"train with: {train_command(args.out)}")


def register(groups: common.Groups) -> None:
    p = common.command(groups.top, "judge", cmd_judge)
    p.add_argument("--dataset", required=True, help="dataset folder or Hub repo id")
    p.add_argument("--config", required=True, help="config to judge, e.g. reference")
    p.add_argument("--judge", required=True, metavar="SPEC", help=common.SPEC)
    common.add_out(p, "predictions file (JSONL)", common.REPLACE_FILE)
    p.add_argument("--conditions", nargs="+", metavar="[COLUMN=]VALUE",
                   help="only these items: values of the config's selector columns (protocols condition / task, "
                        "interventions intervention / dimension, composition ablation / template_name / template_id "
                        "/ category); values of one column are alternatives, of different columns all must hold")
    p.add_argument("--folds", type=folds_list, metavar="K[,K...]",
                   help="only the items of these folds (the config's fold column, e.g. the preference judge config): "
                        "one cross-fitted judge answers the fold it was not trained on (an hf: model whose "
                        "heldout_selection.json names another fold is refused); recorded in the predictions' "
                        "provenance, and joined with the other folds' files by `omniaudit merge-predictions`")
    p.add_argument("--formats", nargs="+", choices=["concat", "native"],
                   help="pairwise: only these formats (native needs a judge that takes several audio inputs)")
    common.add_sampling(p, "sampling (recorded in every predictions row)")
    p.add_argument("--shard", type=common.shard, metavar="I/N",
                   help="judge only shard I of N (orders of one trial stay together); join the N files with "
                        "`omniaudit merge-predictions`. Under `accelerate launch -m omniaudit judge` (or torchrun) "
                        "the processes are the shards (rank r of N judges r/N, the main one merges): no --shard")
    p.add_argument("--limit", type=positive_int, metavar="N",
                   help="a smoke run: judge a seeded sample of N items of the selection (after --conditions / "
                        "--formats / --folds; stratified by condition, both orders of a pair kept together, seed "
                        "--seed or 0; every run of them); recorded in the provenance, so the audits refuse the file "
                        "as incomplete unless --partial and merges refuse to join it with a full run")
    common.add_min_usable(p, "exit 2 and write no predictions")
    p.add_argument("--extractor", metavar="SPEC",
                   help="a model (judge SPEC, e.g. openai:MODEL@URL) that reads the closed replies the rules did not "
                        "understand (no option named in a form they know, or a language they do not gloss), asked "
                        "for the option the reply chooses or none; rows it reads say read_by: extractor. Replies "
                        "that hedge, negate, tie or take a choice back are never put to it (default: rules only)")
    p.add_argument("--read-reasoning", action="store_true",
                   help="read a closed reply that is deliberation only (a reasoning trace that concluded, then no "
                        "visible answer) from its trace; rows read so say read_by: reasoning. Off by default: a "
                        "trace weighs options it may drop, so such replies are unread (reasoning-only). A trace cut "
                        "off by the token limit, or a visible answer, is never read this way")
    p.add_argument("--dump-prompts", action="store_true",
                   help="add a column rendered_prompt: the exact prompt of every item as the runner sends it (hf: "
                        "the chat template's text, with the template's default system prompt kept; openai: the JSON "
                        "messages, media as stand-ins without their bytes), as lmms-eval's logged samples do")
    g = p.add_argument_group("runners: local models (hf) and servers (openai)")
    common.add_runner_options(g, "max_tokens", "batch_size", "mode", "fps", "max_frames", "dialect", "answer_format",
                              "enable_thinking", "concurrency", "max_retries", "timeout", "max_reply_mb",
                              "top_logprobs", "cache", "no_cache", "api_key_env", "allow_insecure_key")
    common.add_tracking(p)

    p = common.command(groups.top, "merge-predictions", cmd_merge_predictions)
    p.add_argument("shards", nargs="+", type=Path, metavar="FILE",
                   help="the shard files of one run (judge --shard), or the fold-filtered files of cross-fitted "
                        "judges (judge --folds), JSONL")
    common.add_out(p, "merged predictions file (JSONL)", common.REPLACE_FILE)

    p = common.command(groups.top, "tiny-models", cmd_tiny_models)
    from omniaudit.errors import InputError
    from omniaudit.tiny_models import train_command

    try:  # in the form that runs where the help is asked for
        p.description = f"{p.description} {train_command()}"
    except InputError as exc:  # an install without its recipes: every other command still works
        p.description = f"{p.description} (none: {exc})"
    common.add_out(p, "output folder (default runs/tiny, what the recipes expect)",
                   "replace existing subfolders that omniaudit did not write", default="runs/tiny")
