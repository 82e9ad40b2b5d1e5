"""Preference (the EmoPrefer shortcut audit): ``build preference``, ``audit preference``, ``report odin``."""

from __future__ import annotations

import argparse
from pathlib import Path

from omniaudit.cli import common
from omniaudit.cli.numbers import fraction, integer, non_negative, non_negative_int
from omniaudit.errors import InputError


def _spec(args: argparse.Namespace):
    from omniaudit.data_builders.preference import SyntheticSpec

    return SyntheticSpec(n_pairs=args.pairs, n_generators=args.generators, prior_strength=args.prior_strength,
                         content_strength=args.content_strength, seed=args.synthetic_seed)


def _columns(args: argparse.Namespace) -> dict[str, str]:
    from omniaudit.data_builders.preference.read import parse_column_map

    return parse_column_map(args.columns)


def _pairs_input(args: argparse.Namespace) -> str | None:
    """What `audit preference` reads: --dataset (a built folder or Hub repo id), --source (a file), the old --data
    (either: the library tells them apart) or None (the embedded synthetic benchmark)."""
    from omniaudit.tables import SUFFIXES

    def is_file(path: str) -> bool:  # the library's rule
        return Path(path).is_file() or Path(path).suffix.lower() in SUFFIXES

    if args.dataset is not None and is_file(args.dataset):
        raise InputError("--dataset takes a built dataset folder or Hub repo id; a CSV/JSONL/Parquet file goes to "
                         "--source", file=args.dataset)
    if args.source is not None and not is_file(args.source):
        raise InputError("--source takes a CSV/JSONL/Parquet file, and this is none; a built dataset folder or Hub "
                         "repo id goes to --dataset", file=args.source)
    return next((path for path in (args.dataset, args.source, args.data) if path is not None), None)


def cmd_build_preference(args: argparse.Namespace) -> None:
    """pairwise preference benchmark: folds, priors, slices, remedies

    Validate a pairwise preference benchmark (EmoPrefer layout: name, model1, a1, model2, a2, preference in {a1, a2,
    same}) and write it in the Hub layout with 5-fold assignment (seed 42), fold-exclusive generator priors and slice
    flags; optional remedy configs; and config judge: zero-shot judging items (both orders of every binary pair,
    options A/B, with the pair's clip when --media is given) for `omniaudit judge --config judge`.
    """
    from omniaudit.data_builders.preference import PreferenceBuildOptions, build_preference_dataset

    options = PreferenceBuildOptions(source_balanced=args.source_balanced, length_control=args.length_control,
                                     dual_order=args.dual_order, length_tolerance=args.length_tolerance,
                                     remedy_seed=args.seed, media_dir=args.media)
    with common.console.status("building preference dataset"):
        out = build_preference_dataset(args.out, args.data, _columns(args), options, _spec(args), args.push_to_hub)
    print(f"dataset written to {out} (load it with datasets.load_dataset('{out}', 'pairs'); judge it with "
          f"`omniaudit judge --dataset {out} --config judge`)")
    common.print_pushed(args.push_to_hub)


def cmd_audit_preference(args: argparse.Namespace) -> None:
    """content-blind shortcut audit of a pairwise preference benchmark

    Content-blind probes (length, generator, both, win-rate rule), TF-IDF source classifier, permutation and
    counterfactual controls, and external judges, on the full, length-matched and counter-stereotypical slices:
    two-class WAF with 2,000-resample bootstrap CIs, prior-following, exact McNemar. Writes OUT/audit.json,
    OUT/report.md, PNG figures and OUT/predictions.csv.
    """
    from omniaudit.evaluation.preference.audit import PreferenceAuditConfig, run_preference_audit

    config = PreferenceAuditConfig(n_resamples=args.n_resamples, seed=args.bootstrap_seed, reference=args.reference,
                                   source_classifier=not args.no_source_classifier, controls=not args.no_controls,
                                   judges=list(args.predictions or []), judged_only=args.judged_only,
                                   extracted=not args.exclude_extracted, compare=list(args.compare or []),
                                   length_control=not args.no_length_control, style_control=not args.no_style_control,
                                   annotations=args.annotations, odin_runs=list(args.odin or []))
    data = _pairs_input(args)
    with common.progress_status("auditing preference benchmark") as progress:
        out = run_preference_audit(args.out, data, _columns(args), args.config, config, _spec(args), progress)
    common.print_outputs(out)


def cmd_report_odin(args: argparse.Namespace) -> None:
    """Fig. 2a: ODIN head-confound correlations, mean |rho| +- SD across folds, per run

    Read the odin_metrics.json of two or more training/reward_odin.py runs (e.g. lambda = 0 and lambda = 1) and write
    OUT/odin.json (per-fold |rho| and mean +- SD, ddof=1), OUT/report.md and OUT/fig2a_odin_correlations.png.
    """
    from omniaudit.evaluation.preference.odin_report import run_odin_report

    common.print_outputs(run_odin_report(args.out, args.runs), "odin.json")


def _add_pairs_options(p, omitted: str) -> None:
    """The column mapping of generic files and the embedded synthetic benchmark (used when no input is given)."""
    p.add_argument("--columns", nargs="+", metavar="CANON=COLUMN",
                   help="column mapping for generic files, e.g. model1=gen_a a1=text_a preference=label")
    g = p.add_argument_group(f"embedded synthetic benchmark (when {omitted})")
    g.add_argument("--pairs", type=integer(10), default=2096,
                   help="number of pairs, at least 10 (default 2096, as EmoPrefer-V2)")
    g.add_argument("--generators", type=integer(2), default=7, help="number of generators, at least 2 (default 7)")
    g.add_argument("--prior-strength", type=non_negative, default=1.0,
                   help="planted generator prior; 0 = none (default 1)")
    g.add_argument("--content-strength", type=non_negative, default=0.0, help="planted content signal (default 0)")
    g.add_argument("--synthetic-seed", type=non_negative_int, default=0,
                   help="seed of the synthetic benchmark (default 0)")


def register(groups: common.Groups) -> None:
    p = common.builder(groups, "preference", cmd_build_preference, "--data",
                       "EmoPrefer CSV, generic CSV/JSONL/Parquet, or a built dataset folder / Hub repo id; omitted: "
                       "the embedded synthetic benchmark", seed="seed of the source-balanced subsample (default 0)")
    _add_pairs_options(p, "--data is omitted")
    p.add_argument("--source-balanced", action="store_true", help="add config source_balanced (balanced winners "
                                                                  "within each source pairing)")
    p.add_argument("--length-control", type=fraction, metavar="TOL",
                   help="add config length_controlled: pairs with relative length gap < TOL (e.g. 0.15)")
    p.add_argument("--dual-order", action="store_true", help="add config dual_order (both orders, label reversed)")
    p.add_argument("--length-tolerance", type=fraction, default=0.15,
                   help="length-matched slice: relative length gap < this, in (0, 1] (0.15)")
    p.add_argument("--media", metavar="DIR",
                   help="attach each pair's clip DIR/<name>.<ext> (video: mp4 mkv webm mov avi m4v, with its "
                        "soundtrack; or audio: wav flac mp3 m4a ogg opus) to the judge items; a missing clip is an "
                        "error naming the pair's row")

    p = common.command(groups.audit, "preference", cmd_audit_preference)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--dataset", help="built preference dataset folder or Hub repo id (see --config)")
    src.add_argument("--source", help="EmoPrefer CSV or generic CSV/JSONL/Parquet file, validated and built first")
    src.add_argument("--data", action=common.Renamed, old=("--data",),
                     use="--dataset (a built folder or Hub repo id) or --source (a file)",
                     help="deprecated: a file is read as --source, anything else as --dataset")
    _add_pairs_options(p, "--dataset and --source are omitted")
    p.add_argument("--config", default="pairs", help="config to audit when --dataset is a built dataset (pairs)")
    common.renamed(p, "--predictions", "--judges", nargs="+", metavar="[NAME=]FILE",
                   help="judge prediction files: the predictions of `omniaudit judge --config judge` as written (A/B "
                 "mapped to a1/a2 by order, option probabilities used where present, runs averaged), or CSV/JSONL "
                 "with name or id, order ab|ba, p_a1 or label a1|a2; the judge is named NAME or the file's stem; "
                 "files with the same NAME are one judge")
    p.add_argument("--judged-only", action="store_true",
                   help="audit only the binary pairs every judge covers (e.g. predictions for some folds, or one "
                        "shard of a judge run); the report says how many pairs, per fold")
    common.add_exclude_extracted(p)
    p.add_argument("--reference", default="length_generator_lr",
                   help="predictor the exact McNemar tests compare against (default length_generator_lr)")
    common.add_bootstrap(p)
    p.add_argument("--no-source-classifier", action="store_true", help="skip the TF-IDF source classifier")
    p.add_argument("--no-controls", action="store_true", help="skip permutation and counterfactual controls")
    p.add_argument("--compare", nargs="+", metavar="A:B",
                   help="paired comparisons of two predictors (probe or judge names), Table 3: exact McNemar and "
                        "the WAF difference with a paired bootstrap CI, per slice; several in one run")
    p.add_argument("--no-length-control", action="store_true",
                   help="skip per-generator mean length, the wordiest-generator check and length-controlled win "
                        "rates")
    p.add_argument("--no-style-control", action="store_true",
                   help="skip the style-controlled Bradley-Terry fit (Chatbot Arena style control: generator "
                        "strengths with length, sentence and markdown counts held fixed, bootstrap CIs)")
    p.add_argument("--annotations", metavar="FILE",
                   help="per-annotator labels (CSV/JSONL/Parquet: name or id, annotator, label a1|a2|same): "
                        "Fleiss' kappa, majority vote, Dawid-Skene, and every predictor scored against consensus")
    p.add_argument("--odin", nargs="+", metavar="[NAME=]RUN",
                   help="training/reward_odin.py output folders (or their odin_metrics.json), e.g. lambda0=RUN0 "
                        "lambda1=RUN1: Fig. 2a, mean |rho| +- SD across folds, per-fold values kept")
    common.add_out(p)
    common.add_tracking(p)

    p = common.command(groups.report, "odin", cmd_report_odin)
    p.add_argument("runs", nargs="+", metavar="[NAME=]RUN",
                   help="run folders (or their odin_metrics.json); unnamed runs are named lambda=<lambda_dec>")
    common.add_out(p)
