"""The ``omniaudit`` command: one subcommand per job (build datasets, audit, push).

Examples::

    omniaudit audit preference --out runs/demo                 # build + audit the embedded synthetic benchmark
    omniaudit audit preference --data emoprefer_v2.csv --judges judge_ab_ba.jsonl --out runs/v2
    omniaudit build preference --data emoprefer_v2.csv --dual-order --out data/v2 [--push-to-hub me/v2-audit]
"""

from __future__ import annotations

import argparse
import errno
import json
import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.text import Text

from omniaudit import __version__
from omniaudit.errors import InputError, ServiceError

console = Console(stderr=True)


@contextmanager
def progress_status(title: str):
    """A rich spinner whose text follows the audit's steps; yields the callback audits accept as ``progress``."""
    with console.status(title) as status:
        yield lambda msg: status.update(f"{title}: {msg}")


def _add_data_source(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", help="EmoPrefer CSV, generic CSV/JSONL/Parquet, or a built dataset folder / Hub repo id; "
                                  "omitted: the embedded synthetic benchmark")
    p.add_argument("--columns", nargs="+", metavar="CANON=COLUMN",
                   help="column mapping for generic files, e.g. model1=gen_a a1=text_a preference=label")
    g = p.add_argument_group("embedded synthetic benchmark (when --data is omitted)")
    g.add_argument("--pairs", type=int, default=2096, help="number of pairs (default 2096, as EmoPrefer-V2)")
    g.add_argument("--generators", type=int, default=7, help="number of generators (default 7)")
    g.add_argument("--prior-strength", type=float, default=1.0, help="planted generator prior; 0 = none (default 1)")
    g.add_argument("--content-strength", type=float, default=0.0, help="planted content signal (default 0)")
    g.add_argument("--synthetic-seed", type=int, default=0, help="seed of the synthetic benchmark (default 0)")


def _add_out(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="output folder (replaced atomically; refused when it holds files "
                                                "omniaudit did not write, unless --overwrite)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace --out even when it is not an earlier output of this command (deletes its contents)")


def _add_corpus_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("corpus subsets (the paper's by default)")
    g.add_argument("--per-class", type=int, help="ravdess: clips per emotion, stratified across actors and gender "
                                                  "(default 30: 240 clips); fleurs: clips per language (default 15)")
    g.add_argument("--min-seconds", type=float, default=3.0, help="fleurs: shortest clip in seconds (default 3)")
    g.add_argument("--max-seconds", type=float, default=15.0, help="fleurs: longest clip in seconds (default 15)")
    g.add_argument("--languages", nargs="+", metavar="FOLDER", help="fleurs: language folders (default all)")
    g.add_argument("--max-clips", type=int, default=240,
                   help="bvcc: clips kept, evenly spaced in MOS order (default 240)")
    g.add_argument("--split", default="test", help="bvcc: which *_mos_list.txt (default test)")
    g.add_argument("--clips-per-speaker", type=int, default=8,
                   help="voxceleb1: clips per speaker, round-robin over its recordings (default 8)")
    g.add_argument("--speakers", type=int, help="voxceleb1: at most this many speakers (default all)")
    g.add_argument("--corpus-seed", type=int, default=0, help="seed of the subsets (default 0)")


def _add_tracking(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("tracking")
    g.add_argument("--report-to", choices=["none", "wandb"], default="none",
                   help="log the headline metrics, tables, figures and predictions to wandb (needs the [track] "
                        "extra; WANDB_MODE=offline logs locally, WANDB_DIR says where) (default none)")
    g.add_argument("--project", help="wandb project (default $WANDB_PROJECT or omniaudit)")
    g.add_argument("--run-name", help="wandb run name (default: the command and the --out name)")


def _tracking(args: argparse.Namespace):
    """``--report-to``: a tracking run opened before the command works (None without one)."""
    from contextlib import nullcontext

    if getattr(args, "report_to", "none") == "none":
        return nullcontext(None)
    from omniaudit.evaluation.runners.transport import redact
    from omniaudit.evaluation.tracking import TrackingOptions, tracking_run

    # judge specs may carry credentials in their URLs (refused later, but the run opens first): never log them
    config = {k: redact(str(v)) if isinstance(v, str | Path) else v for k, v in vars(args).items() if k != "func"}
    return tracking_run(TrackingOptions(args.report_to, args.project, args.run_name), job=args.job,
                        kind=getattr(args, "what", None), out=getattr(args, "out", None), config=config)


def _log_output(tracker, args: argparse.Namespace) -> None:
    """After the command wrote its output: the judge's predictions file, or the audit's folder and its inputs."""
    from omniaudit.evaluation.tracking import named_files

    if args.job == "judge":
        tracker.log_predictions(args.out, {"dataset": str(args.dataset), "config": args.config, "judge": args.judge})
    else:
        tracker.log_audit(args.what, args.out, named_files(getattr(args, "judges", None)
                                                           or getattr(args, "predictions", None)))


def _add_partial(p: argparse.ArgumentParser) -> None:
    p.add_argument("--partial", action="store_true",
                   help="audit a predictions file that is one shard of a judge run (--shard I/N) or an incomplete "
                        "run; refused by default (missing answers would count as wrong). The report says so")


def _add_bootstrap(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")


def _spec(args: argparse.Namespace):
    from omniaudit.data_builders.preference import SyntheticSpec

    return SyntheticSpec(n_pairs=args.pairs, n_generators=args.generators, prior_strength=args.prior_strength,
                         content_strength=args.content_strength, seed=args.synthetic_seed)


def _columns(args: argparse.Namespace) -> dict[str, str]:
    from omniaudit.data_builders.preference.read import parse_column_map

    return parse_column_map(args.columns)


def cmd_build_preference(args: argparse.Namespace) -> None:
    from omniaudit.data_builders.preference import PreferenceBuildOptions, build_preference_dataset

    options = PreferenceBuildOptions(source_balanced=args.source_balanced, length_control=args.length_control,
                                     dual_order=args.dual_order, length_tolerance=args.length_tolerance,
                                     remedy_seed=args.seed, media_dir=args.media)
    with console.status("building preference dataset"):
        out = build_preference_dataset(args.out, args.data, _columns(args), options, _spec(args), args.push_to_hub)
    print(f"dataset written to {out} (load it with datasets.load_dataset('{out}', 'pairs'); judge it with "
          f"`omniaudit judge --dataset {out} --config judge`)")
    if args.push_to_hub:
        print(f"pushed to https://huggingface.co/datasets/{args.push_to_hub}")


def _shard(text: str) -> tuple[int, int]:
    index, sep, count = text.partition("/")
    if not sep or not index.isdigit() or not count.isdigit() or not 0 <= int(index) < int(count):
        raise argparse.ArgumentTypeError(f"expected I/N with 0 <= I < N, e.g. 0/8 (got {text!r})")
    return int(index), int(count)


def cmd_build_interventions(args: argparse.Namespace) -> None:
    from omniaudit.data_builders.interventions import (
        InterventionBuildOptions,
        SyntheticClipSpec,
        build_interventions_dataset,
    )

    ranges = tuple(tuple(r) for r in args.shift_range or [])
    options = InterventionBuildOptions(shifts=tuple(args.shift), shift_ranges=ranges, seed=args.seed,
                                       audio_codec=args.audio_codec, num_proc=args.num_proc,
                                       shard_index=args.shard[0], shard_count=args.shard[1],
                                       skip_invalid=args.skip_invalid, swap_max_similarity=args.swap_max_similarity)
    spec = SyntheticClipSpec(n_clips=args.clips, seed=args.synthetic_seed)
    with progress_status("building intervention dataset") as progress:
        out = build_interventions_dataset(args.out, args.manifest, options, spec, args.push_to_hub, progress)
    built = json.loads((out / "build_info.json").read_text(encoding="utf-8"))
    info, swap = built["manifest"], built["media"]["swap"]
    reasons = "; ".join(f"{n} {reason}" for reason, n in info["rejected_by_reason"].items())
    print(f"clips: {info['used']} used, {info['rejected']} rejected" + (f" ({reasons})" if reasons else ""))
    if swap["refused_partners"]:
        print(f"swap: {swap['refused_partners']} partner(s) refused as too similar to the clip's own audio, "
              f"{swap['clips_without_partner']} clip(s) left without a Swap")
    print(f"dataset written to {out} (configs diagnostic, sft, dpo: datasets.load_dataset('{out}', 'dpo'))")
    if args.push_to_hub:
        print(f"pushed to https://huggingface.co/datasets/{args.push_to_hub}")


def cmd_build_sp_pairs(args: argparse.Namespace) -> None:
    from omniaudit.data_builders.interventions.sp_pairs import SPOptions, build_sp_pairs

    options = SPOptions(runs=args.runs, temperature=args.temperature, top_p=args.top_p, seed=args.seed,
                        parsed_only=args.parsed_only, extractor=args.extractor)
    runner = {} if args.predictions else {
        "max_tokens": args.max_tokens, "batch_size": args.batch_size, "fps": args.fps, "max_frames": args.max_frames,
        "dialect": args.dialect, "concurrency": args.concurrency, "api_key_env": args.api_key_env,
        "allow_insecure_key": args.allow_insecure_key}
    with progress_status("building SP pairs") as progress:
        s = build_sp_pairs(args.out, args.dataset, args.policy, args.predictions, options, progress, args.push_to_hub,
                           **runner)
    print(f"{s['answers']} answers ({s['items']} items x {s['runs']} run(s)): {s['correct']} correct, {s['wrong']} "
          f"wrong, {s['unparsed']} unparsed, {s['empty']} empty, {s['missing']} missing")
    print(f"{s['pairs']} SP pairs ({s['duplicates']} repeated answers merged) written to {args.out} (config dpo, "
          f"kind sp: datasets.load_dataset('{args.out}', 'dpo'))")


def _corpus_options(args: argparse.Namespace):
    from omniaudit.data_builders.protocols.corpora import CorpusOptions

    return CorpusOptions(per_class=args.per_class, min_seconds=args.min_seconds, max_seconds=args.max_seconds,
                         languages=tuple(args.languages) if args.languages else None, max_clips=args.max_clips,
                         split=args.split, clips_per_speaker=args.clips_per_speaker, speakers=args.speakers,
                         seed=args.corpus_seed)


def cmd_manifest(args: argparse.Namespace) -> None:
    from omniaudit.data_builders.protocols.corpora import write_corpus_manifest

    with console.status(f"reading {args.corpus} folders"):
        summary = write_corpus_manifest(args.out, [(args.corpus, d) for d in args.folders], _corpus_options(args))
    for name, facts in summary.items():
        print(f"{name}: {facts['clips']} clips, attribute {facts['attribute']}, {facts['classes']} classes")
    print(f"manifest: {args.out} (build the probes with `omniaudit build protocols --clips {args.out} --out DIR`)")


def cmd_build_protocols(args: argparse.Namespace) -> None:
    from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset
    from omniaudit.data_builders.protocols.build import PAIRWISE_TASKS

    options = ProtocolBuildOptions(seed=args.seed, max_trials=args.max_trials, noise_snr_db=args.snr,
                                   mos_gap=args.mos_gap, control=tuple(args.control),
                                   conflict_placement=args.conflict_placement,
                                   specialists=tuple(args.specialist or ()),
                                   **{f"{t}_trials": getattr(args, f"{t}_trials") for t in PAIRWISE_TASKS})
    spec = SpeechSetSpec(sentences_per_cell=args.sentences)
    with progress_status("building judge-protocol probes") as progress:
        out = build_protocols_dataset(args.out, args.clips, options, spec, args.push_to_hub, progress,
                                      corpora=[tuple(c) for c in args.corpus or []],
                                      corpus_options=_corpus_options(args))
    summary = json.loads((Path(out) / "build_info.json").read_text(encoding="utf-8"))["summary"]
    for kind, messages in (("warning", summary["warnings"]), ("note", summary["notes"])):
        for message in messages:
            console.print(Text(f"{kind}: ", style="bold yellow") + Text(message), highlight=False, soft_wrap=True)
    print(f"dataset written to {out} (configs blueprint, reference, pairwise, cue_conflict)")
    if args.push_to_hub:
        print(f"pushed to https://huggingface.co/datasets/{args.push_to_hub}")


def cmd_build_composition(args: argparse.Namespace) -> None:
    from omniaudit.data_builders.composition import CompositionBuildOptions, build_composition_dataset

    options = CompositionBuildOptions(target=args.target, seed=args.seed, templates=args.templates,
                                      min_confidence=args.min_confidence)
    with console.status("building composition dataset"):
        out = build_composition_dataset(args.out, args.samples, options, args.synthetic, args.push_to_hub)
    print(f"dataset written to {out} (configs samples, ablations: free-form items for `omniaudit judge`)")


def cmd_composition_auditor(args: argparse.Namespace) -> None:
    from omniaudit.data_builders.composition.auditor import audit_samples

    with console.status(f"auditing samples with {args.auditor}"):
        result = audit_samples(args.samples, args.auditor, args.out, max_tokens=args.max_tokens,
                               cache_dir=args.cache, dialect=args.dialect)
    print(f"{result.rows} samples audited: {result.accepted} ACCEPT, {result.rejected} REJECT ({result.unparsed} "
          f"unparsed answers, written REJECT with difficulty -1)")
    print(f"audited samples: {result.out} (next: omniaudit build composition --samples {result.out})")


def cmd_judge(args: argparse.Namespace) -> None:
    from omniaudit.evaluation.runners import run_judge

    with progress_status(f"judging {args.config} with {args.judge}") as progress:
        counts = run_judge(args.dataset, args.config, args.judge, args.out, args.conditions, progress, args.formats,
                           temperature=args.temperature, top_p=args.top_p, seed=args.seed, runs=args.runs,
                           shard=args.shard, min_usable=args.min_usable, dump_prompts=args.dump_prompts,
                           batch_size=args.batch_size, mode=args.mode,
                           concurrency=args.concurrency,
                           max_retries=args.max_retries, cache_dir=args.cache, use_cache=not args.no_cache,
                           api_key_env=args.api_key_env, max_tokens=args.max_tokens, dialect=args.dialect,
                           timeout_s=args.timeout, top_logprobs=args.top_logprobs, fps=args.fps,
                           max_frames=args.max_frames, allow_insecure_key=args.allow_insecure_key,
                           max_reply_bytes=max(1, int(args.max_reply_mb * 2 ** 20)))
    runs = f" x {counts['runs']} runs" if counts["runs"] > 1 else ""
    shard = f" (shard {counts['shard']})" if counts["shard"] else ""
    parts = [f"{counts['items']} items{runs} judged{shard}"]
    if counts["closed"]:
        parts.append(f"{counts['parsed']} of {counts['closed']} closed answers parsed, {counts['with_probs']} with "
                     "option probabilities")
    if counts["free_form"]:
        parts.append(f"{counts['generated']} of {counts['free_form']} free-form answers non-empty")
    if counts["requests"] is not None:
        parts.append(f"{counts['requests']} HTTP requests")
    print(", ".join(parts))
    bad = (counts["rejected"] or 0) + (counts["not_completions"] or 0)
    if bad:
        console.print(Text(f"warning: {bad} of {counts['rows']} replies were not answers ({counts['rejected']} "
                           f"rejected by the server, {counts['not_completions']} not chat completions); they are kept "
                           "as unparseable and asked again on a rerun", style="bold yellow"), soft_wrap=True)
    print(f"predictions: {args.out}")


def cmd_merge_predictions(args: argparse.Namespace) -> None:
    from omniaudit.evaluation.runners.shards import merge_predictions

    counts = merge_predictions(args.out, args.shards)
    print(f"merged {counts['shards']} shards: {counts['items']} items x {counts['runs']} run(s) into {args.out}")


def cmd_audit_preference(args: argparse.Namespace) -> None:
    from omniaudit.evaluation.preference.audit import PreferenceAuditConfig, run_preference_audit

    config = PreferenceAuditConfig(n_resamples=args.n_resamples, seed=args.seed, reference=args.reference,
                                   source_classifier=not args.no_source_classifier, controls=not args.no_controls,
                                   judges=list(args.judges or []), judged_only=args.judged_only,
                                   compare=list(args.compare or []), length_control=not args.no_length_control,
                                   annotations=args.annotations, odin_runs=list(args.odin or []))
    with progress_status("auditing preference benchmark") as progress:
        out = run_preference_audit(args.out, args.data, _columns(args), args.config, config, _spec(args), progress)
    print(f"report: {out / 'report.md'}")
    print(f"metrics: {out / 'audit.json'}")


def cmd_report_odin(args: argparse.Namespace) -> None:
    from omniaudit.evaluation.preference.odin_report import run_odin_report

    out = run_odin_report(args.out, args.runs)
    print(f"report: {out / 'report.md'}")
    print(f"metrics: {out / 'odin.json'}")


def cmd_report_alignment_tax(args: argparse.Namespace) -> None:
    from omniaudit.evaluation.interventions.alignment_tax import run_alignment_tax_report

    out = run_alignment_tax_report(args.out, args.runs, args.metric, args.n_resamples, args.seed)
    print(f"report: {out / 'report.md'}")
    print(f"metrics: {out / 'alignment_tax.json'}")


def cmd_annotate(args: argparse.Namespace) -> None:
    from omniaudit.data_builders.interventions.annotate import annotate_manifest

    with progress_status("annotating event times") as progress:
        result = annotate_manifest(args.manifest, args.annotated, args.annotator, primary=args.primary,
                                   eps_visual=args.eps_visual, eps_audio=args.eps_audio, progress=progress,
                                   max_tokens=args.max_tokens, concurrency=args.concurrency, cache_dir=args.cache,
                                   use_cache=not args.no_cache, api_key_env=args.api_key_env, fps=args.fps,
                                   max_frames=args.max_frames, dialect=args.dialect,
                                   allow_insecure_key=args.allow_insecure_key)
    a = result.agreement
    reasons = "; ".join(f"{n} {reason}" for reason, n in a["rejected_by_reason"].items())
    print(f"{result.rows} clips annotated by {', '.join(result.annotators)}; {result.discarded} marked discard")
    print(f"agreement filter (as `build interventions` applies it): {a['passed_agreement']} kept, {a['rejected']} "
          "rejected" + (f" ({reasons})" if reasons else ""))
    print(f"annotated manifest: {result.out}")


def cmd_merge(args: argparse.Namespace) -> None:
    from omniaudit.data_builders.interventions.build import merge_shards

    out = merge_shards(args.out, args.shards)
    print(f"merged {len(args.shards)} shard folder(s) into {out}")


def cmd_audit_interventions(args: argparse.Namespace) -> None:
    from omniaudit.evaluation.interventions.audit import InterventionAuditConfig, run_interventions_audit

    config = InterventionAuditConfig(n_resamples=args.n_resamples, seed=args.seed, extractor=args.extractor,
                                     extractor_cache=args.cache, offset_tolerance_s=args.offset_tolerance,
                                     partial=args.partial)
    with progress_status("auditing audio grounding") as progress:
        out = run_interventions_audit(args.out, args.dataset, args.predictions, config, progress)
    print(f"report: {out / 'report.md'}")
    print(f"metrics: {out / 'audit.json'}")


def cmd_audit_protocols(args: argparse.Namespace) -> None:
    from omniaudit.evaluation.protocols.audit import ProtocolAuditConfig, run_protocols_audit

    config = ProtocolAuditConfig(n_resamples=args.n_resamples, seed=args.seed, partial=args.partial)
    with progress_status("auditing judge protocols") as progress:
        out = run_protocols_audit(args.out, args.dataset, args.predictions, config, progress, args.extractor,
                                  cache_dir=args.cache)
    print(f"report: {out / 'report.md'}")
    print(f"metrics: {out / 'audit.json'}")


def cmd_run_protocols(args: argparse.Namespace) -> None:
    from omniaudit.evaluation.protocols.audit import ProtocolAuditConfig
    from omniaudit.evaluation.protocols.run import run_protocols

    config = ProtocolAuditConfig(n_resamples=args.n_resamples, seed=args.bootstrap_seed)
    with progress_status("judging and auditing the protocol probes") as progress:
        done = run_protocols(args.out, args.dataset, args.judges, args.configs, args.conditions, args.formats,
                             audit=not args.no_audit, audit_config=config, extractor=args.extractor,
                             progress=progress, runs=args.runs, temperature=args.temperature, top_p=args.top_p,
                             seed=args.seed, batch_size=args.batch_size, mode=args.mode, max_tokens=args.max_tokens,
                             concurrency=args.concurrency, cache_dir=args.cache, dialect=args.dialect)
    for name, files in done["predictions"].items():
        print(f"{name}: {len(files)} predictions file(s) in {Path(files[0]).parent}")
    if done["audit"]:
        print(f"report: {done['audit'] / 'report.md'}")
        print(f"metrics: {done['audit'] / 'audit.json'}")


def cmd_tiny_models(args: argparse.Namespace) -> None:
    from omniaudit.tiny_models import build_tiny_suite

    with progress_status("building tiny models and datasets") as progress:
        paths = build_tiny_suite(args.out, progress)
    for name, path in paths.items():
        print(f"{name}: {path}")


def cmd_audit_composition(args: argparse.Namespace) -> None:
    from omniaudit.evaluation.composition.audit import run_composition_audit

    with console.status("grading answers"):
        out = run_composition_audit(args.out, args.dataset, args.predictions, args.judge, args.attention,
                                    depth_range=tuple(args.depth_range), cache_dir=args.cache,
                                    partial=args.partial)
    result = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    models = result["models"]  # accuracy per model: runs of different models are never pooled
    acc = {m: f"{v['accuracy']['overall']['mean']:.1f} ± {v['accuracy']['overall']['sd']:.1f}%"
           for m, v in models.items()}
    per_model = (next(iter(acc.values())) if len(acc) == 1 else
                 "; ".join(f"{m} {a} ({len(models[m]['runs'])} run(s))" for m, a in acc.items()))
    print(f"{len(result['runs'])} run(s) ({', '.join(result['runs'])}): accuracy {per_model}")
    flagged = [m for m, v in models.items() if v.get("floor_check", {}).get("status") == "flagged"]
    if flagged:
        console.print(Text(f"warning: the failure decomposition of {', '.join(flagged)} does not clear the stability "
                           "floor (ablations move answers no more often than re-runs do; see report.md)",
                           style="bold yellow"), soft_wrap=True)
    if args.judge:
        print(f"judge verdicts: {result['n_judged']} asked, {result['n_unparsed_verdicts']} unparsed (counted wrong)")
    print(f"report: {out / 'report.md'}")
    print(f"metrics: {out / 'audit.json'}")


def _add_push(p: argparse.ArgumentParser) -> None:
    """``--push-to-hub REPO`` and the repo's visibility (private unless --public) for a builder."""
    p.add_argument("--push-to-hub", metavar="REPO",
                   help="also push the dataset to this Hub dataset repo (private unless --public); only the files the "
                        "build wrote are uploaded")
    _add_visibility(p)


def _add_visibility(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--public", action="store_true",
                   help="create the Hub repo public (default: private; an existing public repo needs --public)")
    g.add_argument("--private", action="store_true", help="create the Hub repo private (the default; kept for old "
                                                          "scripts)")


def cmd_push(args: argparse.Namespace) -> None:
    from omniaudit.data_builders.hub import push_files, push_to_hub

    url = push_to_hub(args.folder, args.repo, private=not args.public)  # checks the folder before any Hub call
    files = push_files(args.folder)
    print(f"pushed {len(files)} file(s) written by the build to {'public' if args.public else 'private'} dataset "
          f"repo {args.repo}: {url}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="omniaudit",
        description="Find and remove shortcuts in multimodal judges and omni models. Build audit datasets in the "
                    "Hugging Face Hub layout, audit judges and benchmarks with bootstrap CIs and exact tests, and "
                    "write JSON + Markdown + PNG reports.",
        epilog="Run `omniaudit COMMAND --help` for the options of each command.",
    )
    parser.add_argument("--version", action="version", version=f"omniaudit {__version__}")
    jobs = parser.add_subparsers(dest="job", metavar="COMMAND", required=True)

    build = jobs.add_parser("build", help="build an audit dataset (Hub layout)", description="Build audit datasets.")
    builders = build.add_subparsers(dest="what", metavar="DATASET", required=True)
    p = builders.add_parser(
        "preference", help="pairwise preference benchmark: folds, priors, slices, remedies",
        description="Validate a pairwise preference benchmark (EmoPrefer layout: name, model1, a1, model2, a2, "
                    "preference in {a1, a2, same}) and write it in the Hub layout with 5-fold assignment (seed 42), "
                    "fold-exclusive generator priors and slice flags; optional remedy configs; and config judge: "
                    "zero-shot judging items (both orders of every binary pair, options A/B, with the pair's clip "
                    "when --media is given) for `omniaudit judge --config judge`.")
    _add_data_source(p)
    _add_out(p)
    p.add_argument("--source-balanced", action="store_true", help="add config source_balanced (balanced winners "
                                                                  "within each source pairing)")
    p.add_argument("--length-control", type=float, metavar="TOL",
                   help="add config length_controlled: pairs with relative length gap < TOL (e.g. 0.15)")
    p.add_argument("--dual-order", action="store_true", help="add config dual_order (both orders, label reversed)")
    p.add_argument("--length-tolerance", type=float, default=0.15, help="length-matched slice tolerance (0.15)")
    p.add_argument("--media", metavar="DIR",
                   help="attach each pair's clip DIR/<name>.<ext> (video: mp4 mkv webm mov avi m4v, with its "
                        "soundtrack; or audio: wav flac mp3 m4a ogg opus) to the judge items; a missing clip is an "
                        "error naming the pair's row")
    p.add_argument("--seed", type=int, default=0, help="seed of the source-balanced subsample (default 0)")
    _add_push(p)
    p.set_defaults(func=cmd_build_preference)

    p = builders.add_parser(
        "interventions", help="audio-visual Shift / Mute / Swap datasets: diagnostic, SFT and DPO configs",
        description="Apply Shift (audio displaced by each --shift), Mute (digital silence) and Swap (another clip's "
                    "audio) to every clip of a video manifest, copying the video stream, and write configs "
                    "diagnostic, sft and dpo in the Hub layout. Manifest: JSONL/CSV with id, video and optionally "
                    "category, visual_event, visual_time, audio_event, audio_time, and annotators' "
                    "visual_time_<name> / audio_time_<name> (agreement filter: 0.8 s visual, 0.5 s audio). "
                    "Interrupted builds resume.")
    p.add_argument("--manifest", help="video manifest (JSONL/CSV/TSV/Parquet); omitted: embedded synthetic clips")
    _add_out(p)
    p.add_argument("--shift", type=float, nargs="*", default=[-2.0, 2.0], metavar="SECONDS",
                   help="fixed Shift offsets in seconds, + = audio delayed (default: -2 2); `--shift` with no value: "
                        "none (only the --shift-range draws)")
    p.add_argument("--shift-range", type=float, nargs=2, action="append", metavar=("A", "B"),
                   help="also one Shift per clip with the offset drawn uniformly from [A, B] s (seeded by --seed and "
                        "the clip id, rounded to 0.01 s); repeat for several draws, e.g. --shift-range -3 -0.5 "
                        "--shift-range 0.5 3")
    p.add_argument("--seed", type=int, default=0, help="seed of swap partners and rejected-answer choices (0)")
    p.add_argument("--audio-codec", choices=["aac", "alac"], default="aac",
                   help="audio codec of the written clips: aac (default, lossy) or alac (lossless, bit-exact swaps)")
    p.add_argument("--num-proc", type=int, default=1, help="clips rendered in parallel (default 1)")
    p.add_argument("--shard", type=_shard, default=(0, 1), metavar="I/N",
                   help="build shard I of N (disjoint, split by id); merge the folders with `omniaudit merge`")
    p.add_argument("--skip-invalid", action="store_true",
                   help="record clips with unusable media (no audio, silent, corrupt, not a video) as rejected "
                        "instead of failing")
    p.add_argument("--swap-max-similarity", type=float, default=0.5, metavar="R",
                   help="refuse a Swap partner whose audio reaches this max normalised cross-correlation with the "
                        "clip's own (same recording: >= 0.99; default 0.5)")
    p.add_argument("--clips", type=int, default=12, help="synthetic clips when --manifest is omitted (default 12)")
    p.add_argument("--synthetic-seed", type=int, default=0, help="seed of the synthetic clips (default 0)")
    _add_push(p)
    p.set_defaults(func=cmd_build_interventions)

    p = builders.add_parser(
        "sp-pairs", help="SFT-policy negatives: a policy's own wrong answers as DPO rejected responses (Thud A.3)",
        description="Sample a policy (e.g. the SFT checkpoint) on the diagnostic items of an intervention dataset, "
                    "score each answer as `audit interventions` does, and write every wrong answer as a DPO pair "
                    "(chosen: the reference answer; rejected: the policy's answer; the item's clip) in config dpo, "
                    "with the columns of `build interventions`' dpo config and kind 'sp'. Unparseable answers count "
                    "as wrong (kept unless --parsed-only); empty ones are left out; a repeated answer gives one pair.")
    p.add_argument("--dataset", required=True, help="intervention dataset folder or Hub repo id (config diagnostic)")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--policy", metavar="SPEC", help="hf:PATH (e.g. the SFT output) | openai:MODEL@URL | "
                                                      "scripted:NAME")
    who.add_argument("--predictions", metavar="FILE",
                     help="instead of --policy: its answers already written by `omniaudit judge --config diagnostic`")
    _add_out(p)
    g = p.add_argument_group("sampling")
    g.add_argument("--runs", type=int, default=1, help="answers sampled per item (default 1)")
    g.add_argument("--temperature", type=float, default=1.0, help="sampling temperature; 0 = greedy (default 1)")
    g.add_argument("--top-p", type=float, help="nucleus sampling mass (default: the model's / server's)")
    g.add_argument("--seed", type=int, default=0, help="sampling seed; run r uses SEED + r (default 0)")
    g.add_argument("--max-tokens", type=int, default=128, help="longest answer in tokens (default 128)")
    g.add_argument("--batch-size", type=int, default=8, help="hf: items per forward pass (8)")
    g.add_argument("--fps", type=float, default=2.0, help="video frames per second sampled (default 2)")
    g.add_argument("--max-frames", type=int, default=32, help="most frames per video (default 32)")
    g.add_argument("--dialect", choices=["vllm", "openai", "frames"], default="vllm",
                   help="openai: how media are sent (see `omniaudit judge --help`; default vllm)")
    g.add_argument("--concurrency", type=int, default=4, help="openai: requests in flight (4)")
    g.add_argument("--api-key-env", metavar="VAR",
                   help="openai: environment variable holding the API key ('none': no key; default: none for a "
                        "loopback URL, OPENAI_API_KEY otherwise)")
    g.add_argument("--allow-insecure-key", action="store_true",
                   help="openai: send the key over plain http:// to a host that is not this machine (refused "
                        "otherwise)")
    p.add_argument("--parsed-only", action="store_true",
                   help="keep only answers whose (wrong) verdict the extractor read; drop unparseable ones")
    p.add_argument("--extractor", metavar="SPEC",
                   help="judge SPEC that reads free-form answers, as the paper's GPT extractor (default: rule-based)")
    _add_push(p)
    p.set_defaults(func=cmd_build_sp_pairs)

    p = builders.add_parser(
        "protocols", help="audio-judge protocol probes: blueprint, reference placement, pairwise order, cue conflict",
        description="From labelled clips (manifest: id, audio, attribute, label; optional transcript, speaker, mos, "
                    "specialist) build configs blueprint (RQ1 specialist copy), reference (RQ2 placements), pairwise "
                    "(RQ3 AB/BA, concat with a 0.6 s 880 Hz tone and native) and cue_conflict. Without --clips, an "
                    "espeak-ng speech set in four languages and four voices is synthesised offline.")
    p.add_argument("--clips", help="clip manifest (JSONL/CSV/TSV/Parquet); omitted: the embedded speech set")
    _add_out(p)
    p.add_argument("--seed", type=int, default=0, help="seed of derangements, trial sampling and noise (0)")
    p.add_argument("--max-trials", type=int, default=30, help="pairwise trials per task (default 30)")
    p.add_argument("--snr", type=float, default=0.0, help="SNR (dB) of the noisy clip in Cleanness pairs (0)")
    p.add_argument("--mos-gap", type=float, default=1.0, help="minimum MOS gap of Naturalness pairs (1.0)")
    p.add_argument("--control", nargs=3, default=["emotion", "angry", "neutral"],
                   metavar=("ATTRIBUTE", "GOLD", "FOIL"), help="attribute control pairs (emotion angry neutral)")
    p.add_argument("--conflict-placement", default="before", choices=["before", "after", "system", "rubric"],
                   help="where the reference goes in the cue-conflict grid (before)")
    p.add_argument("--sentences", type=int, default=2, help="embedded set: sentences per cell, 1-4 (default 2)")
    p.add_argument("--corpus", nargs=2, action="append", metavar=("NAME", "DIR"),
                   help="read clips from a corpus folder in its own layout instead of --clips: ravdess (emotion), "
                        "fleurs (language), bvcc (naturalness), voxceleb1 (speaker); repeat for several corpora "
                        "(see `omniaudit manifest --help` for the layouts and the subset options below)")
    _add_corpus_options(p)
    g = p.add_argument_group("pairwise trials per task (default --max-trials; the paper: cleanness 40, attribute "
                             "30, naturalness 60, speaker 100)")
    for task in ("cleanness", "identical", "attribute", "naturalness", "speaker"):
        g.add_argument(f"--{task}-trials", type=int, metavar="N",
                       help=f"{task} trials" + (" (default max(2, max-trials // 3))" if task == "identical" else ""))
    p.add_argument("--specialist", nargs="+", metavar="[ATTRIBUTE=]hf:MODEL",
                   help="real specialists: a Transformers audio-classification checkpoint (its classes matched to "
                        "the labels by name; otherwise its embeddings + logistic regression, out-of-fold grouped "
                        "by speaker) for every categorical attribute, or ATTRIBUTE=hf:MODEL for one; "
                        "speaker=hf:MODEL scores the speaker triplets with an x-vector / embedding model (cosine to "
                        "the reference). Default: logistic regression on eGeMAPS, out-of-fold")
    _add_push(p)
    p.set_defaults(func=cmd_build_protocols)

    p = builders.add_parser(
        "composition", help="composition / counterfactual QA: bucketed selection and bypass-test ablations",
        description="Read C3PO-style samples (id, template_id, template_name, category IC|CC, tier, video / audio / "
                    "image, question, answer, evidence_modality, generation_confidence, auditor_decision, "
                    "difficulty), keep auditor-accepted ones, select up to --target per category x difficulty "
                    "bucket with template diversity, and write configs samples and ablations (each grounded "
                    "modality removed in turn, and text only). Without --samples, synthetic samples (a picture "
                    "of coloured squares + a spoken instruction) are built offline.")
    p.add_argument("--samples", help="samples file (JSONL/CSV/Parquet); omitted: embedded synthetic samples")
    _add_out(p)
    p.add_argument("--target", type=int, default=25, help="samples per category x difficulty bucket (25)")
    p.add_argument("--seed", type=int, default=0, help="seed of the selection (0)")
    p.add_argument("--synthetic", type=int, default=48, help="synthetic samples when --samples is omitted (48)")
    p.add_argument("--templates", metavar="FILE",
                   help="table of the known templates (template_id, template_name[, category]; CSV/JSONL/Parquet): "
                        "a sample with a template it does not list is refused")
    p.add_argument("--min-confidence", type=int, default=1, choices=range(1, 6), metavar="K",
                   help="keep samples whose generation_confidence is at least K (1-5; default 1: all). Samples whose "
                        "generator self-audit (self_audit.*_passed) has a false flag are always left out")
    _add_push(p)
    p.set_defaults(func=cmd_build_composition)

    p = jobs.add_parser(
        "composition-auditor", help="C3PO auditor pass: a model grades generated samples (ACCEPT/REJECT + difficulty)",
        description="Send every generated sample (its fields as JSON, its media as media parts) to a runner with "
                    "C3PO's auditor prompt (4-pillar rubric, bypass test, the generation confidence) and read its "
                    "JSON answer: decision ACCEPT/REJECT and difficulty_score 1-10 (or -1). Writes the samples "
                    "with auditor_decision, difficulty, failure_pillar, auditor_rationale, auditor_raw and "
                    "auditor_parsed for `build composition --samples`. An unreadable answer is written REJECT, "
                    "difficulty -1, auditor_parsed false.")
    p.add_argument("--samples", required=True, help="generated samples (JSONL/CSV/Parquet): id, template_id, "
                                                    "template_name, question, answer, generation_confidence, media")
    p.add_argument("--auditor", required=True, metavar="SPEC", help="hf:PATH | openai:MODEL@URL | scripted:NAME")
    p.add_argument("--out", required=True, help="audited samples file (JSONL)")
    p.add_argument("--max-tokens", type=int, default=1024, help="longest auditor answer in tokens (1024)")
    p.add_argument("--cache", help="openai auditor: response cache folder")
    p.add_argument("--dialect", choices=["vllm", "openai", "frames"], default="vllm",
                   help="openai auditor: how media are sent, as `omniaudit judge --dialect` (vllm = video_url with "
                        "its soundtrack; openai = standard parts; frames = JPEG frames + the soundtrack as "
                        "input_audio, for OpenAI / Gemini endpoints) (default vllm)")
    p.set_defaults(func=cmd_composition_auditor)

    p = jobs.add_parser(
        "manifest", help="write a clip manifest for `build protocols` from a corpus folder in its own layout",
        description="Read a corpus in the layout it ships in and write the clip manifest (JSONL, absolute audio "
                    "paths) that `build protocols --clips` reads, with the paper's subsets. ravdess: "
                    "Actor_NN/MM-01-EE-II-SS-RR-AA.wav, emotion / statement / actor from the file name, 30 clips "
                    "per emotion stratified across actors and gender. fleurs: one folder per language (en_us/, "
                    "fr_fr/, ...), audio anywhere below, FLEURS TSVs for transcripts; 3-15 s clips, 15 per language. "
                    "bvcc: a MOS list (sets/test_mos_list.txt: file.wav,MOS) and the wavs; 240 clips evenly spaced "
                    "in MOS. voxceleb1: idNNNNN/VIDEO/NNNNN.wav; 8 clips per speaker over its recordings. "
                    "`build protocols --corpus NAME DIR` does the same in one step.")
    p.add_argument("corpus", choices=["ravdess", "fleurs", "bvcc", "voxceleb1"])
    p.add_argument("folders", nargs="+", metavar="DIR", help="corpus folder(s) in that layout")
    p.add_argument("--out", required=True, help="manifest file (JSONL)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out file omniaudit did not write")
    _add_corpus_options(p)
    p.set_defaults(func=cmd_manifest)

    p = jobs.add_parser(
        "judge", help="run a judge over a dataset config and write its predictions",
        description="Put a judge in front of every item of a config and write PRED.jsonl, one row per item and "
                    "run: id, order, run, raw, label and parsed (closed sets; free-form items are generated, never "
                    "matched to options), option_probs (where the runner has them), temperature, top_p, seed. "
                    "JUDGE: hf:PATH_OR_REPO (local Transformers model; closed-set answers from option logits), "
                    "openai:MODEL@URL (OpenAI-compatible chat server, e.g. http://localhost:8000/v1 for vLLM; API "
                    "key from $OPENAI_API_KEY; answers cached, so an interrupted run resumes), scripted:NAME "
                    "(always-a, always-b, copy-reference, copy-specialist, oracle, random).")
    p.add_argument("--dataset", required=True, help="dataset folder or Hub repo id")
    p.add_argument("--config", required=True, help="config to judge, e.g. reference")
    p.add_argument("--judge", required=True, metavar="SPEC", help="hf:PATH | openai:MODEL@URL | scripted:NAME")
    p.add_argument("--out", required=True, help="predictions file (JSONL)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing --out file that omniaudit did not write")
    p.add_argument("--conditions", nargs="+", metavar="[COLUMN=]VALUE",
                   help="only these items: values of the config's selector columns (protocols condition / task, "
                        "interventions intervention / dimension, composition ablation / template_name / template_id "
                        "/ category); values of one column are alternatives, of different columns all must hold")
    p.add_argument("--formats", nargs="+", choices=["concat", "native"],
                   help="pairwise: only these formats (native needs a judge that takes several audio inputs)")
    p.add_argument("--max-tokens", type=int, default=32,
                   help="longest answer in tokens (openai; hf with --mode generate) (default 32; raise it for "
                        "thinking models)")
    g = p.add_argument_group("sampling (recorded in every predictions row)")
    g.add_argument("--temperature", type=float, default=0.0, help="sampling temperature; 0 = greedy (default 0)")
    g.add_argument("--top-p", type=float, help="nucleus sampling mass (default: the model's / server's)")
    g.add_argument("--seed", type=int,
                   help="sampling seed; run r uses SEED + r (default: none sent; scripted:random uses 0)")
    g.add_argument("--runs", type=int, default=1,
                   help="answers per item, e.g. 5 runs at --temperature 0.7 for a majority vote, 3 for a mean over "
                        "runs; rows carry their run index (default 1)")
    p.add_argument("--shard", type=_shard, metavar="I/N",
                   help="judge only shard I of N (orders of one trial stay together); join the N files with "
                        "`omniaudit merge-predictions`")
    p.add_argument("--min-usable", type=float, default=0.2, metavar="SHARE",
                   help="write the predictions only when at least this share of the answers is usable (an option "
                        "named, or free-form text that is not empty, a refusal or an error reply); a run below it "
                        "exits 2 and writes nothing (default 0.2; 0 writes any run; scripted: judges are exempt)")
    p.add_argument("--dump-prompts", action="store_true",
                   help="add a column rendered_prompt: the exact prompt of every item as the runner sends it (hf: "
                        "the chat template's text, with the template's default system prompt kept; openai: the JSON "
                        "messages, media as stand-ins without their bytes), as lmms-eval's logged samples do")
    p.add_argument("--batch-size", type=int, default=8, help="hf: items per forward pass (8)")
    p.add_argument("--mode", choices=["logits", "generate"], default="logits",
                   help="hf: read option logits (default) or generate text")
    p.add_argument("--fps", type=float, default=2.0,
                   help="video frames per second sampled (hf; openai with --dialect frames) (default 2)")
    p.add_argument("--max-frames", type=int, default=32,
                   help="most frames per video, from its start (default 32; --dialect frames sends each as an "
                        "image: lower it for hosted APIs)")
    g = p.add_argument_group("openai: servers")
    g.add_argument("--dialect", choices=["vllm", "openai", "frames"], default="vllm",
                   help="how media are sent: vllm = video_url, a video's own soundtrack through mm_processor_kwargs "
                        "use_audio_in_video (vLLM, Qwen-Omni); openai = standard parts, video_url without its "
                        "soundtrack; frames = no video_url: sampled JPEG frames + the soundtrack as input_audio "
                        "(OpenAI, Gemini's OpenAI-compatible endpoint). Audio (input_audio WAV) and images "
                        "(image_url) are the same in all three (default vllm)")
    g.add_argument("--concurrency", type=int, default=4, help="requests in flight (4)")
    g.add_argument("--max-retries", type=int, default=5, help="retries per request, with backoff (5)")
    g.add_argument("--timeout", type=float, default=120.0,
                   help="seconds for each request as a whole, from connecting to the reply's last byte; each retry "
                        "gets its own (120)")
    g.add_argument("--max-reply-mb", type=float, default=8.0,
                   help="largest reply read, in MB; a bigger one is cut and kept as a non-answer (8)")
    g.add_argument("--top-logprobs", type=int, default=10,
                   help="closed items: ask for logprobs with this many alternatives, read as option probabilities "
                        "where the server returns them; 0 = do not ask (default 10)")
    g.add_argument("--cache", help="response cache folder (default $OMNIAUDIT_CACHE or ~/.cache/omniaudit, "
                                   "judge-responses/)")
    g.add_argument("--no-cache", action="store_true", help="ask every request again and store nothing")
    g.add_argument("--api-key-env", metavar="VAR",
                   help="environment variable holding the API key, sent only as a Bearer header to the judge's URL "
                        "(never to a redirect target); 'none': no key. Default: none for a loopback URL "
                        "(localhost, 127.x, ::1), OPENAI_API_KEY otherwise")
    g.add_argument("--allow-insecure-key", action="store_true",
                   help="send the key over plain http:// to a host that is not this machine (refused otherwise)")
    _add_tracking(p)
    p.set_defaults(func=cmd_judge)

    audit = jobs.add_parser("audit", help="audit a benchmark or judges and write a report",
                            description="Audit benchmarks and judges.")
    audits = audit.add_subparsers(dest="what", metavar="AUDIT", required=True)
    p = audits.add_parser(
        "preference", help="content-blind shortcut audit of a pairwise preference benchmark",
        description="Content-blind probes (length, generator, both, win-rate rule), TF-IDF source classifier, "
                    "permutation and counterfactual controls, and external judges, on the full, length-matched and "
                    "counter-stereotypical slices: two-class WAF with 2,000-resample bootstrap CIs, prior-following, "
                    "exact McNemar. Writes OUT/audit.json, OUT/report.md, PNG figures and OUT/predictions.csv.")
    _add_data_source(p)
    p.add_argument("--config", default="pairs", help="config to audit when --data is a built dataset (pairs)")
    p.add_argument("--judges", nargs="+", metavar="[NAME=]FILE",
                   help="judge prediction files: the predictions of `omniaudit judge --config judge` as written "
                        "(A/B mapped to a1/a2 by order, option probabilities used where present, runs averaged), or "
                        "CSV/JSONL with name or id, order ab|ba, p_a1 or label a1|a2; the judge is named NAME or the "
                        "file's stem; files with the same NAME are one judge")
    p.add_argument("--judged-only", action="store_true",
                   help="audit only the binary pairs every judge covers (e.g. predictions for some folds, or one "
                        "shard of a judge run); the report says how many pairs, per fold")
    p.add_argument("--reference", default="length_generator_lr",
                   help="predictor the exact McNemar tests compare against (default length_generator_lr)")
    _add_bootstrap(p)
    p.add_argument("--no-source-classifier", action="store_true", help="skip the TF-IDF source classifier")
    p.add_argument("--no-controls", action="store_true", help="skip permutation and counterfactual controls")
    p.add_argument("--compare", nargs="+", metavar="A:B",
                   help="paired comparisons of two predictors (probe or judge names), Table 3: exact McNemar and "
                        "the WAF difference with a paired bootstrap CI, per slice; several in one run")
    p.add_argument("--no-length-control", action="store_true",
                   help="skip per-generator mean length, the wordiest-generator check and length-controlled win "
                        "rates")
    p.add_argument("--annotations", metavar="FILE",
                   help="per-annotator labels (CSV/JSONL/Parquet: name or id, annotator, label a1|a2|same): "
                        "Fleiss' kappa, majority vote, Dawid-Skene, and every predictor scored against consensus")
    p.add_argument("--odin", nargs="+", metavar="[NAME=]RUN",
                   help="training/reward_odin.py output folders (or their odin_metrics.json), e.g. lambda0=RUN0 "
                        "lambda1=RUN1: Fig. 2a, mean |rho| +- SD across folds, per-fold values kept")
    _add_out(p)
    _add_tracking(p)
    p.set_defaults(func=cmd_audit_preference)

    p = audits.add_parser(
        "interventions", help="audio-grounding audit of a model's answers on an intervention dataset",
        description="Paired accuracy per dimension (Sync, Existence, Consistency) on Original vs Shift/Mute/Swap, "
                    "Avg Gap, the eight failure modes, accuracy per |offset| band and offset MAE, with bootstrap CIs "
                    "over source clips. A Shift answer is correct only when it says not synchronized and names the "
                    "right direction (Table 1); the yes/no-only rate, Fig. 6a's binary and three-way accuracies and "
                    "Fig. 6b's offset-within-tolerance rate are reported beside it. Predictions: JSONL/CSV rows with "
                    "`id` (the diagnostic row id) and either "
                    "structured fields (synced, direction delay|early|none, offset_s in seconds, signed + = delayed "
                    "unless direction sets the sign | audio_state or sound_present | match) or a "
                    "free-form `response` or `raw` (parsed by a rule-based extractor): the file `omniaudit judge "
                    "--config diagnostic` writes is read as is. Sampled runs (a `run` column) are averaged per item "
                    "before the clip bootstrap and listed run by run. Writes OUT/audit.json, OUT/report.md "
                    "and OUT/failure_modes.png.")
    p.add_argument("--dataset", required=True, help="intervention dataset folder or Hub repo id (config diagnostic)")
    p.add_argument("--predictions", required=True,
                   help="the model's predictions (JSONL/CSV), e.g. `omniaudit judge --config diagnostic` output")
    p.add_argument("--extractor", metavar="SPEC", help="judge that turns free-form responses into fields "
                                                       "(openai:MODEL@URL, hf:PATH, scripted:NAME); default: rules")
    p.add_argument("--cache", help="openai extractor: response cache folder")
    p.add_argument("--offset-tolerance", type=float, default=0.5, metavar="SECONDS",
                   help="Fig. 6b: a stated offset within this many seconds of the true one counts as localised "
                        "(default 0.5, the paper's audio-timestamp tolerance)")
    _add_partial(p)
    _add_bootstrap(p)
    _add_out(p)
    _add_tracking(p)
    p.set_defaults(func=cmd_audit_interventions)

    p = audits.add_parser(
        "protocols", help="judge-protocol audit: specialist copy, reference following, position lock, cue conflict",
        description="Top-1 accuracy and parse rate per condition, reference-follow rate RF and chance-normalised RF "
                    "(eqs. 1-2) per placement, position lock, gold-aligned rate and slot-A rate (eqs. 3-4) per "
                    "task and format, follow-cue per cue-conflict cell; 95% bootstrap CIs. Writes OUT/audit.json "
                    "and OUT/report.md (Tables II-V layouts).")
    p.add_argument("--dataset", required=True, help="protocol dataset folder or Hub repo id")
    p.add_argument("--predictions", nargs="+", required=True, metavar="[NAME=]FILE",
                   help="predictions of `omniaudit judge`; files with the same NAME are one judge (default: stem). "
                        "Sampled runs (--runs N) pool into every cell and add the stability table (per-run range, "
                        "majority-vote shift)")
    p.add_argument("--extractor", metavar="SPEC",
                   help="judge that reads free-text answers naming no option (openai:MODEL@URL, hf:PATH, "
                        "scripted:NAME); it sees the answer and the options only. Default: answers that name no "
                        "option are unparseable")
    p.add_argument("--cache", help="openai extractor: response cache folder")
    _add_partial(p)
    _add_bootstrap(p)
    _add_out(p)
    _add_tracking(p)
    p.set_defaults(func=cmd_audit_protocols)

    p = audits.add_parser(
        "composition", help="graded accuracy of free-form answers by template, category and tier",
        description="Grade each run's answers (id and raw as `omniaudit judge` writes them, or prediction / "
                    "response) against the samples: normalised exact "
                    "match (case, punctuation, articles, whitespace, number words), then an optional judge for "
                    "semantic equivalence (Yes/No). Accuracy overall and by template, category and tier, mean and "
                    "sd over runs. Writes OUT/audit.json, OUT/graded.csv, OUT/report.md and a figure.")
    p.add_argument("--dataset", required=True, help="composition dataset folder or Hub repo id")
    p.add_argument("--predictions", nargs="+", required=True, metavar="[NAME[@RUN]=]FILE",
                   help="predictions (`omniaudit judge --config samples` / `--config ablations`, or id + prediction). "
                        "Files sharing a NAME are one inference run (its samples and ablations files); a bare FILE "
                        "is its own run; a file with a 'run' column (judge --runs N) holds several runs. An existing "
                        "file is always a FILE ('=' and all); else NAME=FILE is cut at the first '=' followed by an "
                        "existing file. Several models in one audit: MODEL@RUN=FILE makes RUN a run of MODEL, cut at "
                        "the last '@', so MODEL may be a Hub repo id (Qwen/Qwen2.5-Omni-7B@r1=run1.jsonl); a '/' is "
                        "part of a name, not a separator. A NAME without '@' (or a bare FILE) is its own model")
    p.add_argument("--judge", metavar="SPEC", help="judge for non-exact answers: hf:PATH | openai:MODEL@URL | "
                                                   "scripted:NAME")
    p.add_argument("--cache", help="openai judge: response cache folder")
    p.add_argument("--attention", nargs="+", metavar="MODEL[=PREDICTIONS]",
                   help="omni models (eager attention) to probe: mid-layer entropy gap between correct and "
                        "incorrect samples, per model and pooled. Each model is scored by its own answers: "
                        "MODEL=PREDICTIONS (repeat MODEL=... for several runs); a bare MODEL uses --predictions "
                        "(only one model may, and only when --predictions are one model's runs). Every model is "
                        "loaded and checked (layers in --depth-range; it encodes every modality of the probed "
                        "samples) before any judge call")
    p.add_argument("--depth-range", nargs=2, type=float, default=[0.25, 0.75], metavar=("LOW", "HIGH"),
                   help="relative layer depths averaged into the mid-layer entropy (0.25 0.75); a model without a "
                        "layer in the range is refused")
    _add_partial(p)
    _add_out(p)
    _add_tracking(p)
    p.set_defaults(func=cmd_audit_composition)

    p = jobs.add_parser(
        "run-protocols", help="judge every config of a protocol dataset with one or more judges, then audit",
        description="Run `omniaudit judge` for every config (blueprint, reference, pairwise, cue_conflict) of a "
                    "protocol dataset and every judge, then `audit protocols` over all of them. Writes "
                    "OUT/predictions/NAME.CONFIG.jsonl and OUT/audit/ (audit.json, report.md); the folder is "
                    "written whole (an openai judge's answers are cached, so a rerun after an interruption is "
                    "cheap).")
    p.add_argument("--dataset", required=True, help="protocol dataset folder or Hub repo id")
    p.add_argument("--judges", nargs="+", required=True, metavar="[NAME=]SPEC",
                   help="judges: hf:PATH | openai:MODEL@URL | scripted:NAME, optionally named NAME=SPEC")
    p.add_argument("--configs", nargs="+", choices=["blueprint", "reference", "pairwise", "cue_conflict"],
                   help="only these configs (default all)")
    p.add_argument("--conditions", nargs="+", help="only items with these condition (or task) values; configs "
                                                   "with none are skipped")
    p.add_argument("--formats", nargs="+", choices=["concat", "native"], help="pairwise: only these formats")
    g = p.add_argument_group("sampling (every judge; recorded in every predictions row)")
    g.add_argument("--runs", type=int, default=1, help="answers per item (e.g. 5 at --temperature 0.7: §V-B)")
    g.add_argument("--temperature", type=float, default=0.0, help="sampling temperature; 0 = greedy (default 0)")
    g.add_argument("--top-p", type=float, help="nucleus sampling mass (default: the model's / server's)")
    g.add_argument("--seed", type=int, help="sampling seed; run r uses SEED + r")
    g = p.add_argument_group("runners")
    g.add_argument("--batch-size", type=int, default=8, help="hf: items per forward pass (8)")
    g.add_argument("--mode", choices=["logits", "generate"], default="logits", help="hf: option logits or text")
    g.add_argument("--max-tokens", type=int, default=32, help="longest answer in tokens (default 32)")
    g.add_argument("--concurrency", type=int, default=4, help="openai: requests in flight (4)")
    g.add_argument("--dialect", choices=["vllm", "openai", "frames"], default="vllm", help="openai: media dialect")
    g.add_argument("--cache", help="openai: response cache folder (judges and extractor)")
    g = p.add_argument_group("audit")
    g.add_argument("--extractor", metavar="SPEC", help="judge that reads free-text answers naming no option")
    g.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    g.add_argument("--bootstrap-seed", type=int, default=0, help="bootstrap seed (default 0)")
    g.add_argument("--no-audit", action="store_true", help="only write the predictions")
    _add_out(p)
    p.set_defaults(func=cmd_run_protocols)

    p = jobs.add_parser(
        "merge-predictions", help="join the predictions of a sharded judge run (judge --shard I/N) into one file",
        description="Join the N files of `omniaudit judge --shard I/N` (all N required, each once) into the file an "
                    "unsharded run writes, byte for byte.")
    p.add_argument("shards", nargs="+", type=Path, help="shard predictions files (JSONL)")
    p.add_argument("--out", required=True, help="merged predictions file (JSONL)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing --out file that omniaudit did not write")
    p.set_defaults(func=cmd_merge_predictions)

    p = jobs.add_parser(
        "annotate", help="Thud appendix B: ask models for each clip's visual and audio event times",
        description="Ask each annotator (a runner: openai:MODEL@URL for a hosted omni model, hf:PATH, or "
                    "column:FIELD to answer from a manifest column) for every clip's visual event and time and "
                    "audio event and time, and write a new manifest with visual_time_NAME / audio_time_NAME (+ "
                    "events and raw answers) per annotator. NAME:visual=SPEC annotators see the pictures only and "
                    "locate the named visual event (the paper's GPT/Claude check). Clips an annotator finds no "
                    "event in, or gives no usable time for, are marked `discard`. `build interventions "
                    "--manifest OUT` then applies the agreement filter (0.8 s visual, 0.5 s audio).")
    p.add_argument("--manifest", required=True, help="video manifest (JSONL/CSV/TSV/Parquet: id, video, ...)")
    p.add_argument("--out", dest="annotated", required=True, metavar="OUT.jsonl",
                   help="annotated manifest to write (JSONL; never the input)")
    p.add_argument("--annotator", action="append", required=True, metavar="NAME[:visual]=SPEC",
                   help="repeat per annotator, e.g. gemini=openai:gemini-2.5-pro@https://HOST/v1 "
                        "gpt:visual=openai:gpt-5@https://HOST/v1")
    p.add_argument("--primary", metavar="NAME",
                   help="annotator whose events and times fill the row's empty visual_event / audio_event / "
                        "visual_time / audio_time (default: the first full annotator)")
    p.add_argument("--eps-visual", type=float, default=0.8, help="visual agreement tolerance, s (0.8)")
    p.add_argument("--eps-audio", type=float, default=0.5, help="audio agreement tolerance, s (0.5)")
    p.add_argument("--max-tokens", type=int, default=256, help="most tokens per answer (256)")
    p.add_argument("--concurrency", type=int, default=4, help="openai: requests in flight (4)")
    p.add_argument("--cache", help="openai: response cache folder (default ~/.cache/omniaudit/judge-responses)")
    p.add_argument("--no-cache", action="store_true", help="openai: do not reuse cached responses")
    p.add_argument("--api-key-env", metavar="VAR",
                   help="openai: environment variable holding the API key ('none': no key; default: none for a "
                        "loopback URL, OPENAI_API_KEY otherwise)")
    p.add_argument("--allow-insecure-key", action="store_true",
                   help="openai: send the key over plain http:// to a host that is not this machine (refused "
                        "otherwise)")
    p.add_argument("--dialect", choices=["vllm", "openai", "frames"], default="vllm",
                   help="openai: how a video is sent: vllm (video_url, Qwen-Omni on vLLM) or frames (images + "
                        "input_audio, for hosted APIs); openai takes no video+audio")
    p.add_argument("--fps", type=float, default=2.0, help="frames per second sampled from each video (2)")
    p.add_argument("--max-frames", type=int, default=16, help="most frames per video (16)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing OUT that omniaudit did not write")
    p.set_defaults(func=cmd_annotate)

    p = jobs.add_parser("merge", help="merge the folders of sharded builds (--shard I/N) into one dataset",
                        description="Copy the Parquet shards of `build interventions --shard I/N` folders into one "
                                    "Hub-layout folder (all N shards required) and write a card for the whole.")
    p.add_argument("shards", nargs="+", type=Path, help="shard folders")
    _add_out(p)
    p.set_defaults(func=cmd_merge)

    p = jobs.add_parser(
        "tiny-models", help="write tiny random models, a tokenizer and the datasets the tiny recipes use",
        description="Build, offline and from configs: a tiny Qwen2 causal LM, a tiny sequence classifier, a tiny "
                    "Qwen2.5-Omni thinker (audio + vision + text), a tiny Qwen2-Audio-style audio LM (audio_lm) and "
                    "a locally trained tokenizer, plus the datasets "
                    "of training/recipes/tiny/*.yaml (our builders' embedded defaults). Then, from the repository "
                    "root: accelerate launch --config_file accelerate_configs/cpu.yaml training/dpo.py --config "
                    "training/recipes/tiny/dpo.yaml --output_dir OUT")
    p.add_argument("--out", default="runs/tiny", help="output folder (default runs/tiny, what the recipes expect)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace existing subfolders that omniaudit did not write")
    p.set_defaults(func=cmd_tiny_models)

    report = jobs.add_parser("report", help="reports that combine finished runs",
                             description="Reports over the outputs of finished runs.")
    reports = report.add_subparsers(dest="what", metavar="REPORT", required=True)
    p = reports.add_parser(
        "odin", help="Fig. 2a: ODIN head-confound correlations, mean |rho| +- SD across folds, per run",
        description="Read the odin_metrics.json of two or more training/reward_odin.py runs (e.g. lambda = 0 and "
                    "lambda = 1) and write OUT/odin.json (per-fold |rho| and mean +- SD, ddof=1), OUT/report.md "
                    "and OUT/fig2a_odin_correlations.png.")
    p.add_argument("runs", nargs="+", metavar="[NAME=]RUN",
                   help="run folders (or their odin_metrics.json); unnamed runs are named lambda=<lambda_dec>")
    _add_out(p)
    p.set_defaults(func=cmd_report_odin)
    p = reports.add_parser(
        "alignment-tax", help="Thud Table 2: checkpoints' accuracy on general video benchmarks (lmms-eval logs)",
        description="Read lmms-eval's per-sample logs (run it in its own environment with --log_samples; it cannot "
                    "be installed beside omniaudit) for two or more checkpoints and write OUT/alignment_tax.json, "
                    "OUT/report.md and a figure: accuracy per task with a cluster-bootstrap CI, the macro average, "
                    "and each run's paired difference from the first (base) run with an exact McNemar test.")
    p.add_argument("runs", nargs="+", metavar="NAME=PATH",
                   help="lmms-eval --output_path folders (or one *_samples_<task>.jsonl file); the first is the base")
    p.add_argument("--metric", action="append", metavar="[TASK=]KEY",
                   help="the samples' per-sample metric key when a record has several (repeatable)")
    p.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples (2000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    _add_out(p)
    p.set_defaults(func=cmd_report_alignment_tax)

    p = jobs.add_parser("push", help="push a built dataset folder to the Hugging Face Hub",
                        description="Upload a dataset folder written by `omniaudit build` or `merge` (README card "
                                    "whose configs match its Parquet files; checked before any Hub call) as a "
                                    "dataset repo. Needs "
                                    "network access and a token (HF_TOKEN or `hf auth login`).")
    p.add_argument("folder", type=Path)
    p.add_argument("repo", help="dataset repo id, e.g. me/emoprefer-audit")
    _add_visibility(p)
    p.set_defaults(func=cmd_push)
    return parser


def _out_folder(out: str) -> str:
    """``--out`` checked (see omniaudit.io.check_out_dir); a path without a name ('.', '..') becomes absolute."""
    from omniaudit.io import check_out_dir

    path = check_out_dir(out)
    return str(path) if Path(out).name in ("", "..") else out


_OS_ERRORS = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded",
              errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
              errno.EROFS: "the file system is read-only", errno.ENOENT: "no such file or folder",
              errno.EIO: "input/output error", errno.EMFILE: "too many open files",
              errno.ENAMETOOLONG: "the file name is too long", errno.ENOTDIR: "a part of the path is not a folder",
              errno.EISDIR: "expected a file, found a folder", errno.EXDEV: "cannot move across file systems"}


def _os_error(exc: OSError) -> str:
    """One line for an OS error: ``<what> (<path>): <strerror>`` (no traceback: the cause is the machine's)."""
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    if exc.errno is None and not paths:  # e.g. a connection error raised without errno
        return f"{type(exc).__name__}: {exc}"
    what = _OS_ERRORS.get(exc.errno, "cannot read or write a file")
    where = f" ({' -> '.join(paths)})" if paths else ""
    return f"{what}{where}: {exc.strerror or exc}"


def main(argv: Sequence[str] | None = None) -> int:
    from contextlib import ExitStack

    from omniaudit.data_builders.hub import HubUnavailable, push_visibility
    from omniaudit.io import output_lock, output_policy

    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], None] = args.func
    command = " ".join(["omniaudit", args.job] + ([args.what] if getattr(args, "what", None) else []))
    try:
        with output_policy(overwrite=getattr(args, "overwrite", False), command=command), \
                push_visibility(public=getattr(args, "public", False)), ExitStack() as held:
            own_file = (cmd_judge, cmd_merge_predictions, cmd_tiny_models, cmd_manifest)  # checked by the command
            if getattr(args, "out", None) is not None and func not in own_file:
                args.out = _out_folder(args.out)  # fail before any work; the judge's file is checked by run_judge
                held.enter_context(output_lock(args.out))  # a second run on the same --out is refused, not raced
            with _tracking(args) as tracker:  # opened before the command: no package or login fails before work
                func(args)
                if tracker is not None:
                    _log_output(tracker, args)
    except (InputError, HubUnavailable, ServiceError) as exc:
        # user text (values, paths) is printed verbatim: no markup, no highlighting, no hard wrapping
        console.print(Text("error: ", style="bold red") + Text(str(exc)), highlight=False, soft_wrap=True)
        return 2
    except OSError as exc:  # disk full, permission denied, ...: one line, not a chained traceback
        console.print(Text("error: ", style="bold red") + Text(_os_error(exc)), highlight=False, soft_wrap=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
