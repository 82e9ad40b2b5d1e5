"""Interventions (Thud: audio grounding under Shift / Mute / Swap): ``build interventions``, ``build sp-pairs``,
``merge``, ``audit interventions`` and ``report alignment-tax`` (the annotation commands: :mod:`.annotate`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from omniaudit.cli import common
from omniaudit.cli.numbers import fraction, non_negative, non_negative_int, positive_int

# the defaults of the options only a Shift / Mute / Swap build reads: another value beside --ood-sync is refused
MANIFEST_ONLY = {"shift": [-2.0, 2.0], "shift_range": None, "audio_codec": "aac", "num_proc": 1, "shard": (0, 1),
                 "skip_invalid": False, "swap_max_similarity": 0.5, "media_mode": "embed", "clips": 12,
                 "synthetic_seed": 0}


def rejected_reasons(counts: dict[str, int]) -> str:
    reasons = "; ".join(f"{n} {reason}" for reason, n in counts.items())
    return f" ({reasons})" if reasons else ""


def cmd_build_interventions(args: argparse.Namespace) -> None:
    """audio-visual Shift / Mute / Swap datasets: diagnostic, SFT and DPO configs

    Apply Shift (audio displaced by each --shift), Mute (digital silence) and Swap (another clip's audio) to every clip
    of a video manifest, copying the video stream, and write configs diagnostic, sft and dpo in the Hub layout.
    Manifest: JSONL/CSV with id, video and optionally category, visual_event, visual_time, audio_event, audio_time,
    and annotators' visual_time_<name> / audio_time_<name> (agreement filter: 0.8 s visual, 0.5 s audio).
    Interrupted builds resume. --ood-sync FOLDER instead writes an out-of-distribution sync set (VGGSoundSync style):
    one sync item per clip of known audio offset, gold answers from the offset (any nonzero offset is a shift, as the
    paper scores VGGSoundSync; --sync-tolerance S opts in to calling |offset| <= S synchronized).
    """
    _check_build_options(args)
    if args.ood_sync:
        _build_ood_sync(args)
        return
    from omniaudit.data_builders.interventions import (
        InterventionBuildOptions,
        SyntheticClipSpec,
        build_interventions_dataset,
    )

    ranges = tuple(tuple(r) for r in args.shift_range or [])
    options = InterventionBuildOptions(shifts=tuple(args.shift), shift_ranges=ranges, seed=args.seed,
                                       audio_codec=args.audio_codec, num_proc=args.num_proc,
                                       shard_index=args.shard[0], shard_count=args.shard[1],
                                       skip_invalid=args.skip_invalid, swap_max_similarity=args.swap_max_similarity,
                                       media_mode=args.media_mode)
    spec = SyntheticClipSpec(n_clips=args.clips, seed=args.synthetic_seed)
    with common.progress_status("building intervention dataset") as progress:
        out = build_interventions_dataset(args.out, args.manifest, options, spec, args.push_to_hub, progress)
    built = json.loads((out / "build_info.json").read_text(encoding="utf-8"))
    info, swap = built["manifest"], built["media"]["swap"]
    print(f"clips: {info['used']} used, {info['rejected']} rejected" + rejected_reasons(info["rejected_by_reason"]))
    if swap["refused_partners"]:
        print(f"swap: {swap['refused_partners']} partner(s) refused as too similar to the clip's own audio, "
              f"{swap['clips_without_partner']} clip(s) left without a Swap")
    print(f"dataset written to {out} (configs diagnostic, sft, dpo: datasets.load_dataset('{out}', 'dpo'))")
    common.print_pushed(args.push_to_hub)


def _check_build_options(args: argparse.Namespace) -> None:
    """Refuse options the chosen build would silently ignore."""
    from omniaudit.errors import InputError

    if not args.ood_sync:
        if args.sync_tolerance is not None:
            raise InputError("--sync-tolerance applies only to --ood-sync (an out-of-distribution sync set)")
        return
    if args.manifest:
        raise InputError("give either --manifest (Shift / Mute / Swap of annotated clips) or --ood-sync (clips with "
                         "known offsets), not both")
    ignored = [f"--{k.replace('_', '-')}" for k, default in MANIFEST_ONLY.items()
               if getattr(args, k) != default]
    if ignored:
        raise InputError(f"{' and '.join(ignored)} {'does' if len(ignored) == 1 else 'do'} not apply to --ood-sync "
                         "(the clips are stored as given, in one embedded diagnostic config); drop them")


def _build_ood_sync(args: argparse.Namespace) -> None:
    from omniaudit.data_builders.interventions.ood_sync import SYNC_TOLERANCE_S, build_ood_sync_dataset, sync_rule

    tolerance = SYNC_TOLERANCE_S if args.sync_tolerance is None else args.sync_tolerance
    with common.progress_status("building OOD sync set") as progress:
        out = build_ood_sync_dataset(args.out, args.ood_sync, tolerance, args.push_to_hub, progress)
    info = json.loads((out / "build_info.json").read_text(encoding="utf-8"))
    print(f"clips: {info['clips']} from {info['sources']} sources; {info['in_sync']} in sync, {info['offset']} "
          f"offset: {sync_rule(info['tolerance_s'])}")
    print(f"dataset written to {out} (config diagnostic: `omniaudit judge --config diagnostic`, then "
          "`omniaudit audit interventions`)")
    common.print_pushed(args.push_to_hub)


def cmd_build_sp_pairs(args: argparse.Namespace) -> None:
    """SFT-policy negatives: a policy's own wrong answers as DPO rejected responses (Thud A.3)

    Sample a policy (e.g. the SFT checkpoint) on the diagnostic items of an intervention dataset, score each answer as
    `audit interventions` does, and write every wrong answer as a DPO pair (chosen: the reference answer; rejected:
    the policy's answer; the item's clip) in config dpo, with the columns of `build interventions`' dpo config and
    kind 'sp'. Unparseable answers count as wrong (kept unless --parsed-only); empty ones are left out; a repeated
    answer gives one pair.
    """
    from omniaudit.data_builders.interventions.sp_pairs import SPOptions, build_sp_pairs

    options = SPOptions(**common.sampling_kwargs(args), parsed_only=args.parsed_only, extractor=args.extractor)
    runner = {} if args.predictions else {**common.runner_kwargs(args), "min_usable": args.min_usable}
    with common.progress_status("building SP pairs") as progress:
        s = build_sp_pairs(args.out, args.dataset, args.policy, args.predictions, options, progress, args.push_to_hub,
                           **runner)
    print(f"{s['answers']} answers ({s['items']} items x {s['runs']} run(s)): {s['correct']} correct, {s['wrong']} "
          f"wrong, {s['unparsed']} unparsed, {s['empty']} empty, {s['missing']} missing")
    print(f"{s['pairs']} SP pairs ({s['duplicates']} repeated answers merged) written to {args.out} (config dpo, "
          f"kind sp: datasets.load_dataset('{args.out}', 'dpo'))")


def cmd_merge(args: argparse.Namespace) -> None:
    """merge the folders of sharded builds (--shard I/N) into one dataset

    Copy the Parquet shards of `build interventions --shard I/N` folders into one Hub-layout folder (all N shards
    required) and write a card for the whole.
    """
    from omniaudit.data_builders.interventions.build import merge_shards

    out = merge_shards(args.out, args.shards)
    print(f"merged {len(args.shards)} shard folder(s) into {out}")


def cmd_audit_interventions(args: argparse.Namespace) -> None:
    """audio-grounding audit of a model's answers on an intervention dataset

    Paired accuracy per dimension (Sync, Existence, Consistency) on Original vs Shift/Mute/Swap, Avg Gap, the eight
    failure modes, accuracy per |offset| band and offset MAE, with bootstrap CIs over source clips. A Shift answer is
    correct only when it says not synchronized and names the right direction (Table 1); the yes/no-only rate, Fig.
    6a's binary and three-way accuracies and Fig. 6b's offset-within-tolerance rate are reported beside it.
    Predictions: JSONL/CSV rows with `id` (the diagnostic row id) and either structured fields (synced, direction
    delay|early|none, offset_s in seconds, signed + = delayed unless direction sets the sign | audio_state or
    sound_present | match) or a free-form `response` or `raw` (parsed by a rule-based extractor): the file `omniaudit
    judge --config diagnostic` writes is read as is. Sampled runs (a `run` column) are averaged per item before the
    clip bootstrap and listed run by run. Writes OUT/audit.json, OUT/report.md and OUT/failure_modes.png.
    """
    from omniaudit.evaluation.interventions.audit import InterventionAuditConfig, run_interventions_audit

    config = InterventionAuditConfig(n_resamples=args.n_resamples, seed=args.bootstrap_seed, extractor=args.extractor,
                                     extractor_cache=args.cache, offset_tolerance_s=args.offset_tolerance,
                                     partial=args.partial)
    with common.progress_status("auditing audio grounding") as progress:
        out = run_interventions_audit(args.out, args.dataset, args.predictions, config, progress)
    common.print_outputs(out)


def cmd_report_alignment_tax(args: argparse.Namespace) -> None:
    """Thud Table 2: checkpoints' accuracy on general video benchmarks (lmms-eval logs)

    Read lmms-eval's per-sample logs (run it in its own environment with --log_samples; it cannot be installed beside
    omniaudit) for two or more checkpoints and write OUT/alignment_tax.json, OUT/report.md and a figure: accuracy per
    task with a cluster-bootstrap CI, the macro average, and each run's paired difference from the first (base) run
    with an exact McNemar test.
    """
    from omniaudit.evaluation.interventions.alignment_tax import run_alignment_tax_report

    out = run_alignment_tax_report(args.out, args.runs, args.metric, args.n_resamples, args.bootstrap_seed)
    common.print_outputs(out, "alignment_tax.json")


def _builders(groups: common.Groups) -> None:
    p = common.builder(groups, "interventions", cmd_build_interventions, "--manifest",
                       "video manifest (JSONL/CSV/TSV/Parquet); omitted: embedded synthetic clips",
                       seed="seed of swap partners and rejected-answer choices (0)")
    p.add_argument("--shift", type=float, nargs="*", default=MANIFEST_ONLY["shift"], metavar="SECONDS",
                   help="fixed Shift offsets in seconds, + = audio delayed (default: -2 2); `--shift` with no value: "
                        "none (only the --shift-range draws)")
    p.add_argument("--shift-range", type=float, nargs=2, action="append", metavar=("A", "B"),
                   help="also one Shift per clip with the offset drawn uniformly from [A, B] s (seeded by --seed and "
                        "the clip id, rounded to 0.01 s); repeat for several draws, e.g. --shift-range -3 -0.5 "
                        "--shift-range 0.5 3")
    p.add_argument("--audio-codec", choices=["aac", "alac"], default=MANIFEST_ONLY["audio_codec"],
                   help="audio codec of the written clips: aac (default, lossy) or alac (lossless, bit-exact swaps)")
    p.add_argument("--num-proc", type=positive_int, default=MANIFEST_ONLY["num_proc"],
                   help="clips rendered in parallel (default 1)")
    p.add_argument("--shard", type=common.shard, default=MANIFEST_ONLY["shard"], metavar="I/N",
                   help="build shard I of N (disjoint, split by id); merge the folders with `omniaudit merge`")
    p.add_argument("--skip-invalid", action="store_true",
                   help="record clips with unusable media (no audio, silent, corrupt, not a video) as rejected "
                        "instead of failing")
    p.add_argument("--swap-max-similarity", type=fraction, default=MANIFEST_ONLY["swap_max_similarity"],
                   metavar="R",
                   help="refuse a Swap partner whose audio reaches this max normalised cross-correlation with the "
                        "clip's own (same recording: >= 0.99; default 0.5)")
    p.add_argument("--media-mode", choices=["embed", "paths"], default=MANIFEST_ONLY["media_mode"],
                   help="embed: clip bytes in every config's Parquet (default); paths: each clip stored once under "
                        "media/ and named by the configs (load_dataset(FOLDER, CONFIG) still decodes the video)")
    p.add_argument("--ood-sync", metavar="FOLDER|MANIFEST",
                   help="instead: an out-of-distribution sync set from clips of known audio offset, a folder of "
                        "NAME__off+0.40.mp4 files (s, + = audio delayed) or a CSV/JSONL with file, offset_s "
                        "[, source_id]")
    p.add_argument("--sync-tolerance", type=non_negative, metavar="SECONDS",
                   help="--ood-sync only, opt-in: |offset| up to this also counts as synchronized (default: only a "
                        "zero offset; the paper calls any nonzero offset a shift)")
    p.add_argument("--clips", type=positive_int, default=MANIFEST_ONLY["clips"],
                   help="synthetic clips when --manifest is omitted (default 12)")
    p.add_argument("--synthetic-seed", type=non_negative_int, default=MANIFEST_ONLY["synthetic_seed"],
                   help="seed of the synthetic clips (default 0)")

    p = common.command(groups.build, "sp-pairs", cmd_build_sp_pairs)
    p.add_argument("--dataset", required=True, help="intervention dataset folder or Hub repo id (config diagnostic)")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--policy", metavar="SPEC", help=f"{common.SPEC} (e.g. hf: the SFT output)")
    who.add_argument("--predictions", metavar="FILE",
                     help="instead of --policy: its answers already written by `omniaudit judge --config diagnostic`")
    common.add_out(p)
    g = common.add_sampling(p, "sampling", temperature=1.0, seed=0)
    common.add_runner_options(g, "max_tokens", "batch_size", "fps", "max_frames", "dialect", "concurrency",
                              "api_key_env", "allow_insecure_key", max_tokens=128)
    p.add_argument("--parsed-only", action="store_true",
                   help="keep only answers whose (wrong) verdict the extractor read; drop unparseable ones")
    common.add_min_usable(p, "--policy: stop, writing nothing,")
    p.add_argument("--extractor", metavar="SPEC",
                   help="judge SPEC that reads free-form answers, as the paper's GPT extractor (default: rule-based)")
    common.add_push(p)


def register(groups: common.Groups) -> None:
    _builders(groups)
    p = common.command(groups.top, "merge", cmd_merge)
    p.add_argument("shards", nargs="+", type=Path, help="shard folders")
    common.add_out(p)

    p = common.command(groups.audit, "interventions", cmd_audit_interventions)
    p.add_argument("--dataset", required=True, help="intervention dataset folder or Hub repo id (config diagnostic)")
    p.add_argument("--predictions", required=True,
                   help="the model's predictions (JSONL/CSV), e.g. `omniaudit judge --config diagnostic` output")
    common.add_helper_model(p, "--extractor", f"judge that turns free-form responses into fields ({common.SPEC}); "
                                              "default: rules")
    p.add_argument("--offset-tolerance", type=float, default=0.5, metavar="SECONDS",
                   help="Fig. 6b: a stated offset within this many seconds of the true one counts as localised "
                        "(default 0.5, the paper's audio-timestamp tolerance)")
    common.add_partial(p)
    common.add_bootstrap(p)
    common.add_out(p)
    common.add_tracking(p)

    p = common.command(groups.report, "alignment-tax", cmd_report_alignment_tax)
    p.add_argument("runs", nargs="+", metavar="NAME=PATH",
                   help="lmms-eval --output_path folders (or one *_samples_<task>.jsonl file); the first is the base")
    p.add_argument("--metric", action="append", metavar="[TASK=]KEY",
                   help="the samples' per-sample metric key when a record has several (repeatable)")
    common.add_bootstrap(p)
    common.add_out(p)
