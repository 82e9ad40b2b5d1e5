"""``omniaudit scorecard``: any model through every audit of the registry, one calibrated verdict per shortcut."""

from __future__ import annotations

import argparse
import json

from omniaudit.cli import common


def _named(values: list[str] | None, flag: str) -> dict[str, str]:
    """``AUDIT=PATH`` pairs -> {audit: path}."""
    from omniaudit.errors import InputError

    out = {}
    for text in values or []:
        key, sep, value = text.partition("=")
        if not sep or not key or not value:
            raise InputError(f"{flag} takes AUDIT=PATH", value=text)
        if key in out:
            raise InputError(f"{flag} names audit '{key}' twice", value=text)
        out[key] = value
    return out


def cmd_scorecard(args: argparse.Namespace) -> None:
    """take models through every audit and write one shortcut scorecard

    Take each model (NAME=SPEC) through every registered audit whose item modalities it accepts (checked before any
    model call; the others are listed as skipped with the reason): the embedded default of each audit, small and
    synthetic with known ground truth, is built once into OUT/datasets/ (or --data AUDIT=PATH is used), the model
    answers its item configs (OUT/models/NAME/CONFIG.jsonl; a killed run resumes) and the audit runs
    (OUT/models/NAME/AUDIT/). Writes OUT/scorecard.json, OUT/scorecard.md and a self-contained OUT/scorecard.html:
    for the shortcuts position, label_following, visual_inference, modality_dominance and style, a verdict flagged
    only when a 95% CI excludes the value of a model without the shortcut. scripted:oracle always runs as the
    calibration row; --references adds the planted-shortcut models (position-locked, label-follower, deaf,
    verbose, audio-dominant). A rerun reuses every complete dataset, predictions file and audit.
    """
    from omniaudit.evaluation.scorecard import ScorecardOptions, run_scorecard

    audits = tuple(a.strip() for a in args.audits.split(",") if a.strip()) if args.audits else None
    options = ScorecardOptions(audits=audits, data=_named(args.data, "--data"), min_usable=args.min_usable,
                               n_resamples=args.n_resamples, references=args.references,
                               runner=common.runner_kwargs(args),
                               sampling={"temperature": args.temperature, "top_p": args.top_p, "seed": args.seed},
                               shard=args.shard, from_shards=tuple(args.from_shards or ()))
    with common.progress_status("scorecard") as progress:
        out = run_scorecard(args.out, args.model, options, progress)
    if args.shard:
        print(f"shard {args.shard[0]}/{args.shard[1]}: answers in {out / 'models'}; when every shard is done, run "
              "the same command with --from-shards SHARD_OUT ... (and no --shard) to merge them and write the card")
        return
    card = json.loads((out / "scorecard.json").read_text(encoding="utf-8"))
    for name, entry in card["models"].items():
        flagged = card["flagged"][name]
        quiet = [f"{a}: {e['status']}" for a, e in entry["audits"].items() if e["status"] != "ran"]
        print(f"{name}: {'flags ' + ', '.join(flagged) if flagged else 'no shortcut flagged'}"
              + (f" ({'; '.join(quiet)})" if quiet else ""))
    for name, entry in card["models"].items():
        for audit, e in entry["audits"].items():
            if e["status"] == "failed":
                common.say("warning", f"{name}: the {audit} audit failed: {e['reason']}")
    print(f"scorecard: {out / 'scorecard.html'}")
    print(f"markdown: {out / 'scorecard.md'}")
    print(f"metrics: {out / 'scorecard.json'}")


def register(groups: common.Groups) -> None:
    p = common.command(groups.top, "scorecard", cmd_scorecard)
    p.add_argument("--model", "--models", dest="model", nargs="+", required=True, metavar="NAME=SPEC",
                   help=f"the models: {common.SPEC}, named NAME=SPEC (NAME names the folder OUT/models/NAME)")
    p.add_argument("--data", nargs="+", metavar="AUDIT=PATH",
                   help="use your built dataset (folder or Hub repo id) for this audit, not the embedded default")
    p.add_argument("--audits", metavar="A,B,...",
                   help="only these audits, comma-separated (default every registered one: preference, "
                        "interventions, protocols, composition)")
    p.add_argument("--references", action="store_true",
                   help="also run the planted-shortcut reference models (scripted:position-locked, label-follower, "
                        "deaf, verbose, audio-dominant) beside scripted:oracle, which always runs")
    common.add_min_usable(p, "a model is 'not answering' on an audit (listed, never a finding)")
    p.add_argument("--shard", type=common.shard, metavar="I/N",
                   help="answer only shard I of N of every item config (one machine of N; orders of one trial stay "
                        "together) into this --out; no audit, no card")
    p.add_argument("--from-shards", nargs="+", metavar="SHARD_OUT",
                   help="the --out folders of the N shard runs (copied here from their machines): their answers are "
                        "merged (checked to be one run, every shard once) and the audits and card follow")
    p.add_argument("--n-resamples", type=int, default=1000, help="bootstrap resamples of every CI (default 1000)")
    common.add_sampling(p, "sampling (every model; default greedy)", runs=False)
    g = p.add_argument_group("runners: local models (hf) and servers (openai)")
    common.add_runner_options(g, "max_tokens", "batch_size", "mode", "fps", "max_frames", "dialect", "concurrency",
                              "max_retries", "timeout", "max_reply_mb", "top_logprobs", "cache", "no_cache",
                              "api_key_env", "allow_insecure_key")
    common.add_tracking(p)
    common.add_out(p, "output folder: datasets/, models/, scorecard.{json,md,html}; a rerun reuses what is "
                      "complete", "empty --out first and start afresh (also replaces a folder omniaudit did not "
                      "write)")
