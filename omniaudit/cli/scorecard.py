"""``omniaudit scorecard``: any model through every audit of the registry, one calibrated verdict per shortcut."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from omniaudit.cli import common

# checked by the library before any work (evaluation.scorecard.options.check_options: one line naming the option and
# its range, exit 2), so read as plain numbers here: that one line is the message, not argparse's usage + error
LIBRARY_CHECKED = {"--min-usable": float, "--n-resamples": int, "--temperature": float, "--top-p": float,
                   "--max-tokens": int, "--batch-size": int, "--fps": float, "--max-frames": int,
                   "--concurrency": int, "--max-retries": int, "--timeout": float, "--max-reply-mb": float,
                   "--top-logprobs": int, "--margin": float}


def _named(values: list[str] | None, flag: str, form: str = "AUDIT=PATH") -> dict[str, str]:
    """``KEY=PATH`` pairs -> {key: path}."""
    from omniaudit.errors import InputError

    out = {}
    for text in values or []:
        key, sep, value = text.partition("=")
        if not sep or not key or not value:
            raise InputError(f"{flag} takes {form}", value=text)
        if key in out:
            raise InputError(f"{flag} names '{key}' twice", value=text)
        out[key] = value
    return out


@common.writes_own_file  # --out is checked and locked here: by the main process only, under a multi-process launch
def cmd_scorecard(args: argparse.Namespace) -> None:
    """take models through every audit and write one shortcut scorecard

    Take each model (NAME=SPEC) through every registered audit whose item modalities it accepts (checked before any
    model call; the others are listed as skipped with the reason): the embedded default of each audit, small and
    synthetic with known ground truth, is built once into OUT/datasets/ (or --data AUDIT=PATH is used), the model
    answers its item configs (OUT/models/NAME/CONFIG.jsonl; a killed run resumes) and the audit runs
    (OUT/models/NAME/AUDIT/). Writes OUT/scorecard.json, OUT/scorecard.md and a self-contained OUT/scorecard.html:
    for the shortcuts position, label_following, visual_inference, modality_dominance and style, a verdict flagged
    only when a 95% CI excludes the value of a model without the shortcut and does not rule out an effect of
    interest. scripted:oracle always runs as the calibration row; --references adds planted-shortcut models (rules;
    learned: tiny trained models). A rerun reuses every complete dataset, predictions file and audit; a served model's
    (openai:) predictions only while a canary of its kept answers, asked again, is answered the same (else it is
    asked afresh, with a warning naming the changed items); --no-reuse asks every model afresh.

    --limit N is a smoke run: every judge run answers a seeded, stratified sample of at most N items per config
    (judge --limit), audited as a partial run; the card is marked "smoke run ... verdicts are not valid", the
    calibration is not checked, and the exit is 0. Under `accelerate launch -m omniaudit scorecard` every judge run is
    split across the processes (rank r answers shard r/N, the main process merges); only the main process audits
    and writes the card, the same files a single process writes.
    """
    from contextlib import ExitStack, suppress

    from omniaudit.evaluation.scorecard import ScorecardOptions, run_scorecard
    from omniaudit.evaluation.scorecard.runner import CalibrationFailed
    from omniaudit.io import check_out_dir, output_lock
    from omniaudit.runners.data_parallel import OtherRankReports, launch_world

    world = launch_world()  # (rank, N) under `accelerate launch -m omniaudit scorecard` / torchrun, else None
    main_rank = world is None or world[0] == 0

    audits = tuple(a.strip() for a in args.audits.split(",") if a.strip()) if args.audits else None
    options = ScorecardOptions(audits=audits, data=_named(args.data, "--data"), min_usable=args.min_usable,
                               n_resamples=args.n_resamples, references=args.references,
                               runner=common.runner_kwargs(args),
                               sampling={"temperature": args.temperature, "top_p": args.top_p, "seed": args.seed},
                               shard=args.shard, from_shards=tuple(args.from_shards or ()), reuse=not args.no_reuse,
                               size=args.size, allow_uncalibrated=args.allow_uncalibrated,
                               reader_checks=_named(args.reader_check, "--reader-check", "NAME=FILE"),
                               baseline=args.baseline, control=args.control, margin=args.margin, limit=args.limit)
    if not main_rank:  # answers its shards as the main process asks; says nothing, writes no card
        with suppress(OtherRankReports):  # the main process reports it, for every rank, and exits 2
            run_scorecard(args.out, args.model, options, None, launch=world)
        raise SystemExit(0)  # exiting 2 would have the launcher stop the main process before it says why
    failed = None
    with ExitStack() as held:
        # the output folder checked and locked before any work, as for every command whose --out is a folder
        if Path(args.out).name in ("", ".."):
            args.out = str(check_out_dir(args.out))
        check_out_dir(args.out)
        held.enter_context(output_lock(args.out))
        with common.progress_status("scorecard") as progress:
            try:
                out = run_scorecard(args.out, args.model, options, progress, launch=world)
            except CalibrationFailed as exc:  # the card is written; its verdicts there are inconclusive
                out, failed = Path(args.out), exc
    _warn_canaries(out, audits)
    if args.shard:
        print(f"shard {args.shard[0]}/{args.shard[1]}: answers in {out / 'models'}; when every shard is done, run "
              "the same command with --from-shards SHARD_OUT ... (and no --shard) to merge them and write the card")
        return
    card = json.loads((out / "scorecard.json").read_text(encoding="utf-8"))
    smoke = card.get("smoke")
    if smoke:
        common.say("warning", smoke["text"])
    for name, entry in card["models"].items():
        quiet = [f"{a}: {e['status']}" for a, e in entry["audits"].items() if e["status"] != "ran"]
        print(f"{name}: {entry['summary']}" + (f" ({'; '.join(quiet)})" if quiet else ""))
    for name, entry in card["models"].items():
        for audit, e in entry["audits"].items():
            if e["status"] == "failed":
                common.say("warning", f"{name}: the {audit} audit failed: {e['reason']}")
    print(f"scorecard: {out / 'scorecard.html'}")
    print(f"markdown: {out / 'scorecard.md'}")
    print(f"metrics: {out / 'scorecard.json'}")
    if smoke:  # the run checked that every model gets through every audit; its verdicts are no finding
        print(f"{smoke['text']} (run without --limit for the card)")
    if failed is not None:
        common.say("error", str(failed), "bold red")
        raise SystemExit(3)


def _warn_canaries(out, audits: tuple[str, ...] | None) -> None:
    """A warning for each served model whose kept answers of this run's audits changed or could not be checked (the
    ``canary`` of its status.json)."""
    from omniaudit.audits import AUDITS

    notes = []
    for status in sorted(out.glob("models/*/status.json")):
        entries = json.loads(status.read_text(encoding="utf-8"))
        for audit in audits or AUDITS:
            notes += [c["note"] for c in ((entries.get(audit) or {}).get("canary") or {}).values() if c.get("note")]
    for note in dict.fromkeys(notes):
        common.say("warning", note)


def register(groups: common.Groups) -> None:
    p = common.command(groups.top, "scorecard", cmd_scorecard)
    p.add_argument("--model", "--models", dest="model", nargs="+", required=True, metavar="NAME=SPEC",
                   help=f"the models: {common.SPEC}, named NAME=SPEC (NAME names the folder OUT/models/NAME)")
    p.add_argument("--data", nargs="+", metavar="AUDIT=PATH",
                   help="use your built dataset (folder or Hub repo id) for this audit, not the embedded default")
    p.add_argument("--reader-check", nargs="+", metavar="NAME=FILE",
                   help="a readings.csv of model NAME's own replies with the truth filled in by hand (`omniaudit "
                        "readings sample`): the card reports the readers' agreement and says so when it is below "
                        "95%% or anything was misread")
    p.add_argument("--baseline", metavar="NAME",
                   help="compare every other model under test with model NAME (e.g. before=... after=... --baseline "
                        "before): per shortcut the paired change of each measure on the same items with its CI, "
                        "'removed' when NAME was flagged, the model is clear and the change excludes 0; and the "
                        "change in task accuracy (the alignment tax)")
    p.add_argument("--control", metavar="NAME",
                   help="with --baseline: model NAME was trained as the others but without the remedy; each other "
                        "model's task accuracy against it, paired on the same items, is 'held' when the 95%% "
                        "interval of the change stays above -MARGIN")
    p.add_argument("--margin", type=float, default=0.05, metavar="M",
                   help="the task accuracy a remedied model may lose against --control (default 0.05)")
    p.add_argument("--audits", metavar="A,B,...",
                   help="only these audits, comma-separated (default every registered one: preference, "
                        "interventions, protocols, composition)")
    p.add_argument("--references", nargs="?", const="scripted", choices=("scripted", "learned", "all"),
                   metavar="TIER",
                   help="also run planted-shortcut reference models beside scripted:oracle (always run), each to be "
                        "flagged for its own shortcut or the card says CALIBRATION FAILED there. scripted (a bare "
                        "--references): rules that imitate each shortcut (position-locked, label-follower, deaf, "
                        "verbose, audio-dominant); learned: tiny models trained on data where the shortcut pays "
                        "(learned-pos, learned-label, learned-verbose; shipped with omniaudit); all: both")
    common.add_min_usable(p, "a model is 'not answering' on an audit (listed, never a finding)")
    p.add_argument("--shard", type=common.shard, metavar="I/N",
                   help="answer only shard I of N of every item config (one machine of N; orders of one trial stay "
                        "together) into this --out; no audit, no card")
    p.add_argument("--from-shards", nargs="+", metavar="SHARD_OUT",
                   help="the --out folders of the N shard runs (copied here from their machines): their answers are "
                        "merged (checked to be one run, every shard once) and the audits and card follow")
    p.add_argument("--limit", type=common.positive_int, metavar="N",
                   help="a smoke run: every model answers a seeded, stratified sample of at most N items of every "
                        "item config (judge --limit: whole item groups, drawn with --seed), audited as a partial run; "
                        "the card is marked 'smoke run ... verdicts are not valid', the reference models' calibration "
                        "is not checked and the exit is 0. Its answers are never reused by a full run, nor a full "
                        "run's by it")
    p.add_argument("--size", choices=("default", "small"), default="default",
                   help="the embedded defaults: 'default' is sized to detect each shortcut's minimum effect with 80%% "
                        "power; 'small' the quick sets of a smoke run (the card says what each measure can detect)")
    p.add_argument("--allow-uncalibrated", action="store_true",
                   help="exit 0 even when a reference model fails calibration (the oracle flagged, or a planted "
                        "model not flagged for its own shortcut); otherwise the card is written and the exit is 3")
    p.add_argument("--n-resamples", type=int, default=1000,
                   help="bootstrap resamples of every CI (default 1000; at least 200)")
    p.add_argument("--no-reuse", action="store_true",
                   help="ask every model afresh: no kept predictions or statuses are reused, and served models are "
                        "asked past their response cache (the built datasets are still reused)")
    common.add_sampling(p, "sampling (every model; default greedy)", runs=False)
    g = p.add_argument_group("runners: local models (hf) and servers (openai)")
    common.add_runner_options(g, "max_tokens", "batch_size", "mode", "fps", "max_frames", "dialect", "answer_format",
                              "enable_thinking", "concurrency", "max_retries", "timeout", "max_reply_mb",
                              "top_logprobs", "cache", "no_cache",
                              "api_key_env", "allow_insecure_key")
    common.add_tracking(p)
    common.add_out(p, "output folder: datasets/, models/, scorecard.{json,md,html}; a rerun reuses what is "
                      "complete", "empty --out first and start afresh (also replaces a folder omniaudit did not "
                      "write)")
    for flag, plain in LIBRARY_CHECKED.items():
        p._option_string_actions[flag].type = plain
