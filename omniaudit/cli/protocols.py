"""Protocols (audio judges under blueprint, reference and pairwise protocols): ``build protocols``, ``manifest``,
``audit protocols`` and ``run-protocols``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from omniaudit.cli import common
from omniaudit.cli.numbers import finite, integer, non_negative, non_negative_int, positive, positive_int

CONFIGS = ["blueprint", "reference", "pairwise", "cue_conflict"]


def _corpus_options(args: argparse.Namespace):
    from omniaudit.data_builders.protocols.corpora import CorpusOptions

    return CorpusOptions(per_class=args.per_class, min_seconds=args.min_seconds, max_seconds=args.max_seconds,
                         languages=tuple(args.languages) if args.languages else None, max_clips=args.max_clips,
                         split=args.split, clips_per_speaker=args.clips_per_speaker, speakers=args.speakers,
                         seed=args.corpus_seed)


@common.writes_own_file
def cmd_manifest(args: argparse.Namespace) -> None:
    """write a clip manifest for `build protocols` from a corpus folder in its own layout

    Read a corpus in the layout it ships in and write the clip manifest (JSONL, absolute audio paths) that `build
    protocols --clips` reads, with the paper's subsets. ravdess: Actor_NN/MM-01-EE-II-SS-RR-AA.wav, emotion /
    statement / actor from the file name, 30 clips per emotion stratified across actors and gender. fleurs: one folder
    per language (en_us/, fr_fr/, ...), audio anywhere below, FLEURS TSVs for transcripts; 3-15 s clips, 15 per
    language. bvcc: a MOS list (sets/test_mos_list.txt: file.wav,MOS) and the wavs; 240 clips evenly spaced in MOS.
    voxceleb1: idNNNNN/VIDEO/NNNNN.wav; 8 clips per speaker over its recordings. `build protocols --corpus NAME DIR`
    does the same in one step.
    """
    from omniaudit.data_builders.protocols.corpora import write_corpus_manifest

    with common.console.status(f"reading {args.corpus} folders"):
        summary = write_corpus_manifest(args.out, [(args.corpus, d) for d in args.folders], _corpus_options(args))
    for name, facts in summary.items():
        print(f"{name}: {facts['clips']} clips, attribute {facts['attribute']}, {facts['classes']} classes")
    print(f"manifest: {args.out} (build the probes with `omniaudit build protocols --clips {args.out} --out DIR`)")


def cmd_build_protocols(args: argparse.Namespace) -> None:
    """audio-judge protocol probes: blueprint, reference placement, pairwise order, cue conflict

    From labelled clips (manifest: id, audio, attribute, label; optional transcript, speaker, mos, specialist) build
    configs blueprint (RQ1 specialist copy), reference (RQ2 placements), pairwise (RQ3 AB/BA, concat with a 0.6 s 880
    Hz tone and native) and cue_conflict. Without --clips, an espeak-ng speech set in four languages and four voices
    is synthesised offline.
    """
    from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset
    from omniaudit.data_builders.protocols.build import PAIRWISE_TASKS

    options = ProtocolBuildOptions(seed=args.seed, max_trials=args.max_trials, noise_snr_db=args.snr,
                                   mos_gap=args.mos_gap, control=tuple(args.control),
                                   conflict_placement=args.conflict_placement,
                                   specialists=tuple(args.specialist or ()),
                                   **{f"{t}_trials": getattr(args, f"{t}_trials") for t in PAIRWISE_TASKS})
    spec = SpeechSetSpec(sentences_per_cell=args.sentences)
    with common.progress_status("building judge-protocol probes") as progress:
        out = build_protocols_dataset(args.out, args.clips, options, spec, args.push_to_hub, progress,
                                      corpora=[tuple(c) for c in args.corpus or []],
                                      corpus_options=_corpus_options(args))
    summary = json.loads((Path(out) / "build_info.json").read_text(encoding="utf-8"))["summary"]
    for kind, messages in (("warning", summary["warnings"]), ("note", summary["notes"])):
        for message in messages:
            common.say(kind, message)
    print(f"dataset written to {out} (configs blueprint, reference, pairwise, cue_conflict)")
    common.print_pushed(args.push_to_hub)


def cmd_audit_protocols(args: argparse.Namespace) -> None:
    """judge-protocol audit: specialist copy, reference following, position lock, cue conflict

    Top-1 accuracy and parse rate per condition, reference-follow rate RF and chance-normalised RF (eqs. 1-2) per
    placement, position lock, gold-aligned rate and slot-A rate (eqs. 3-4) per task and format, follow-cue per
    cue-conflict cell; 95% bootstrap CIs. Writes OUT/audit.json and OUT/report.md (Tables II-V layouts).
    """
    from omniaudit.evaluation.protocols.audit import ProtocolAuditConfig, run_protocols_audit

    config = ProtocolAuditConfig(n_resamples=args.n_resamples, seed=args.bootstrap_seed, partial=args.partial,
                                 extracted=not args.exclude_extracted, **_stability_options(args))
    with common.progress_status("auditing judge protocols") as progress:
        out = run_protocols_audit(args.out, args.dataset, args.predictions, config, progress, args.extractor,
                                  cache_dir=args.cache)
    common.print_outputs(out)


def cmd_run_protocols(args: argparse.Namespace) -> None:
    """judge every config of a protocol dataset with one or more models, then audit

    Run `omniaudit judge` for every config (blueprint, reference, pairwise, cue_conflict) of a protocol dataset and
    every model, then `audit protocols` over all of them. Writes OUT/predictions/NAME.CONFIG.jsonl and OUT/audit/
    (audit.json, report.md); the folder is written whole (an openai model's answers are cached, so a rerun after an
    interruption is cheap).
    """
    from omniaudit.evaluation.protocols.audit import ProtocolAuditConfig
    from omniaudit.evaluation.protocols.run import run_protocols

    config = ProtocolAuditConfig(n_resamples=args.n_resamples, seed=args.bootstrap_seed, **_stability_options(args))
    with common.progress_status("judging and auditing the protocol probes") as progress:
        done = run_protocols(args.out, args.dataset, args.models, args.configs, args.conditions, args.formats,
                             audit=not args.no_audit, audit_config=config, extractor=args.extractor,
                             progress=progress, **common.sampling_kwargs(args), **common.runner_kwargs(args))
    for name, files in done["predictions"].items():
        print(f"{name}: {len(files)} predictions file(s) in {Path(files[0]).parent}")
    if done["audit"]:
        common.print_outputs(done["audit"])


def _add_corpus_options(p) -> None:
    g = p.add_argument_group("corpus subsets (the paper's by default)")
    g.add_argument("--per-class", type=positive_int,
                   help="ravdess: clips per emotion, stratified across actors and gender (default 30: 240 clips); "
                        "fleurs: clips per language (default 15)")
    g.add_argument("--min-seconds", type=non_negative, default=3.0,
                   help="fleurs: shortest clip in seconds (default 3)")
    g.add_argument("--max-seconds", type=positive, default=15.0, help="fleurs: longest clip in seconds (default 15)")
    g.add_argument("--languages", nargs="+", metavar="FOLDER", help="fleurs: language folders (default all)")
    g.add_argument("--max-clips", type=positive_int, default=240,
                   help="bvcc: clips kept, evenly spaced in MOS order (default 240)")
    g.add_argument("--split", default="test", help="bvcc: which *_mos_list.txt (default test)")
    g.add_argument("--clips-per-speaker", type=positive_int, default=8,
                   help="voxceleb1: clips per speaker, round-robin over its recordings (default 8)")
    g.add_argument("--speakers", type=positive_int, help="voxceleb1: at most this many speakers (default all)")
    g.add_argument("--corpus-seed", type=non_negative_int, default=0, help="seed of the subsets (default 0)")


def _corpus_commands(groups: common.Groups) -> None:
    p = common.builder(groups, "protocols", cmd_build_protocols, "--clips",
                       "clip manifest (JSONL/CSV/TSV/Parquet); omitted: the embedded speech set",
                       seed="seed of derangements, trial sampling and noise (0)")
    p.add_argument("--max-trials", type=non_negative_int, default=30, help="pairwise trials per task (default 30)")
    p.add_argument("--snr", type=finite, default=0.0, help="SNR (dB) of the noisy clip in Cleanness pairs (0)")
    p.add_argument("--mos-gap", type=non_negative, default=1.0, help="minimum MOS gap of Naturalness pairs (1.0)")
    p.add_argument("--control", nargs=3, default=["emotion", "angry", "neutral"],
                   metavar=("ATTRIBUTE", "GOLD", "FOIL"), help="attribute control pairs (emotion angry neutral)")
    p.add_argument("--conflict-placement", default="before", choices=["before", "after", "system", "rubric"],
                   help="where the reference goes in the cue-conflict grid (before)")
    p.add_argument("--sentences", type=integer(1, 12), default=2,  # 12: speech.MAX_SENTENCES (kept import-free)
                   help="embedded set: sentences per cell, 1-12 (default 2; the scorecard's default has 10; the "
                        "speech set holds 12, so a larger protocols set needs your own clips: --clips or --corpus)")
    p.add_argument("--corpus", nargs=2, action="append", metavar=("NAME", "DIR"),
                   help="read clips from a corpus folder in its own layout instead of --clips: ravdess (emotion), "
                        "fleurs (language), bvcc (naturalness), voxceleb1 (speaker); repeat for several corpora "
                        "(see `omniaudit manifest --help` for the layouts and the subset options below)")
    _add_corpus_options(p)
    g = p.add_argument_group("pairwise trials per task (default --max-trials; the paper: cleanness 40, attribute "
                             "30, naturalness 60, speaker 100)")
    for task in ("cleanness", "identical", "attribute", "naturalness", "speaker"):
        g.add_argument(f"--{task}-trials", type=non_negative_int, metavar="N",
                       help=f"{task} trials" + (" (default max(2, max-trials // 3))" if task == "identical" else ""))
    p.add_argument("--specialist", nargs="+", metavar="[ATTRIBUTE=]hf:MODEL",
                   help="real specialists: a Transformers audio-classification checkpoint (its classes matched to "
                        "the labels by name; otherwise its embeddings + logistic regression, out-of-fold grouped "
                        "by speaker) for every categorical attribute, or ATTRIBUTE=hf:MODEL for one; "
                        "speaker=hf:MODEL scores the speaker triplets with an x-vector / embedding model (cosine to "
                        "the reference). Default: logistic regression on eGeMAPS, out-of-fold")

    p = common.command(groups.top, "manifest", cmd_manifest)
    p.add_argument("corpus", choices=["ravdess", "fleurs", "bvcc", "voxceleb1"])
    p.add_argument("folders", nargs="+", metavar="DIR", help="corpus folder(s) in that layout")
    common.add_out(p, "manifest file (JSONL)", common.REPLACE_FILE)
    _add_corpus_options(p)


def _add_min_stability_n(p) -> None:
    p.add_argument("--min-stability-n", type=positive_int, metavar="N",
                   help="run stability: cells with fewer items are listed as too few and not read (default 30: "
                        "below ~27 items one changed answer exceeds the paper's largest per-cell range, 0.038)")


def _stability_options(args: argparse.Namespace) -> dict:
    """The --min-stability-n override, if given (the default lives in the audit, not in the parser)."""
    return {} if args.min_stability_n is None else {"min_stability_n": args.min_stability_n}


def register(groups: common.Groups) -> None:
    _corpus_commands(groups)
    p = common.command(groups.audit, "protocols", cmd_audit_protocols)
    p.add_argument("--dataset", required=True, help="protocol dataset folder or Hub repo id")
    p.add_argument("--predictions", nargs="+", required=True, metavar="[NAME=]FILE",
                   help="predictions of `omniaudit judge`; files with the same NAME are one judge (default: stem). "
                        "Sampled runs (--runs N) pool into every cell and add the stability table (per-run range, "
                        "majority-vote shift)")
    common.add_helper_model(p, "--extractor", f"judge that reads free-text answers naming no option ({common.SPEC}); "
                                              "it sees the answer and the options only. Default: answers that name no "
                                              "option are unparseable")
    common.add_partial(p)
    common.add_exclude_extracted(p)
    common.add_bootstrap(p)
    _add_min_stability_n(p)
    common.add_out(p)
    common.add_tracking(p)

    p = common.command(groups.top, "run-protocols", cmd_run_protocols)
    p.add_argument("--dataset", required=True, help="protocol dataset folder or Hub repo id")
    common.renamed(p, "--models", "--judges", nargs="+", required=True, metavar="[NAME=]SPEC",
                   help=f"the models that judge: {common.SPEC}, optionally named NAME=SPEC")
    p.add_argument("--configs", nargs="+", choices=CONFIGS, help="only these configs (default all)")
    p.add_argument("--conditions", nargs="+", help="only items with these condition (or task) values; configs "
                                                   "with none are skipped")
    p.add_argument("--formats", nargs="+", choices=["concat", "native"], help="pairwise: only these formats")
    common.add_sampling(p, "sampling (every model; recorded in every predictions row)")
    g = p.add_argument_group("runners")
    common.add_runner_options(g, "batch_size", "mode", "max_tokens", "concurrency", "dialect", "cache",
                              role="models and extractor")
    g = p.add_argument_group("audit")
    g.add_argument("--extractor", metavar="SPEC", help="judge that reads free-text answers naming no option")
    common.add_bootstrap(g, old_seed=())
    _add_min_stability_n(g)
    g.add_argument("--no-audit", action="store_true", help="only write the predictions")
    common.add_out(p)
