"""Composition (C3PO-style composition / counterfactual QA): ``build composition``, ``composition-auditor`` and
``audit composition``."""

from __future__ import annotations

import argparse

from omniaudit.cli import common
from omniaudit.cli.numbers import integer, positive_int, share
from omniaudit.errors import InputError


def cmd_build_composition(args: argparse.Namespace) -> None:
    """composition / counterfactual QA: bucketed selection and bypass-test ablations

    Read C3PO-style samples (id, template_id, template_name, category IC|CC, tier, video / audio / image, question,
    answer, evidence_modality, generation_confidence, auditor_decision, difficulty), keep auditor-accepted ones,
    select up to --target per category x difficulty bucket with template diversity, and write configs samples and
    ablations (each grounded modality removed in turn, and text only). Without --samples, synthetic samples (a
    picture of coloured squares + a spoken instruction) are built offline.
    """
    from omniaudit.data_builders.composition import CompositionBuildOptions, build_composition_dataset

    options = CompositionBuildOptions(target=args.target, seed=args.seed, templates=args.templates,
                                      min_confidence=args.min_confidence, swap=tuple(args.swap or ()))
    if args.from_generator is None:
        for flag in ("media", "auditor_results", "imported"):
            if getattr(args, flag) is not None:
                raise InputError(f"--{flag.replace('_', '-')} goes with --from-generator")
    elif args.samples is not None:
        raise InputError("give either --samples or --from-generator, not both")
    with common.console.status("building composition dataset"):
        if args.from_generator is not None:
            from omniaudit.data_builders.composition.generator import build_from_generator

            out = build_from_generator(args.out, args.from_generator, args.media, options, args.auditor_results,
                                       args.imported, args.push_to_hub)
        else:
            out = build_composition_dataset(args.out, args.samples, options, args.synthetic, args.push_to_hub)
    if out is None:
        print(f"imported samples written to {args.imported}; they have no auditor decisions yet. Next: omniaudit "
              f"composition-auditor --samples {args.imported} --auditor SPEC --out AUDITED.jsonl, then omniaudit "
              f"build composition --samples AUDITED.jsonl")
        return
    print(f"dataset written to {out} (configs samples, ablations: free-form items for `omniaudit judge`)")
    _say_what_the_target_left_out(out)


def _say_what_the_target_left_out(out) -> None:
    """One line when --target (per category x difficulty bucket) kept fewer samples than were eligible: a larger
    input or --synthetic does not grow the set past the target's cap."""
    import json

    info = json.loads((out / "build_info.json").read_text(encoding="utf-8"))
    left = info["eligible"] - info["selected"]
    if left > 0:
        full = sorted(k for k, n in info["per_bucket"].items() if n >= info["target"])
        print(f"note: {info['selected']} of {info['eligible']} eligible samples selected: --target "
              f"{info['target']} per category x difficulty bucket left {left} out (full buckets: {', '.join(full)}); "
              f"raise --target to keep more")


def cmd_composition_auditor(args: argparse.Namespace) -> None:
    """C3PO auditor pass: a model grades generated samples (ACCEPT/REJECT + difficulty)

    Send every generated sample (its fields as JSON, its media as media parts) to a runner with C3PO's auditor prompt
    (4-pillar rubric, bypass test, the generation confidence) and read its JSON answer: decision ACCEPT/REJECT and
    difficulty_score 1-10 (or -1). Writes the samples with auditor_decision, difficulty, failure_pillar,
    auditor_rationale, auditor_raw and auditor_parsed for `build composition --samples`. An unreadable answer is
    written REJECT, difficulty -1, auditor_parsed false.
    """
    from omniaudit.data_builders.composition.auditor import audit_samples

    with common.progress_status(f"auditing samples with {args.auditor}") as progress:
        result = audit_samples(args.samples, args.auditor, args.out, progress, **common.runner_kwargs(args))
    print(f"{result.rows} samples audited: {result.accepted} ACCEPT, {result.rejected} REJECT ({result.unparsed} "
          f"unparsed answers, written REJECT with difficulty -1)")
    print(f"audited samples: {result.out} (next: omniaudit build composition --samples {result.out})")


def cmd_audit_composition(args: argparse.Namespace) -> None:
    """graded accuracy of free-form answers by template, category and tier

    Grade each run's answers (id and raw as `omniaudit judge` writes them, or prediction / response) against the
    samples: normalised exact match (case, punctuation, articles, whitespace, number words), then an optional grader
    for semantic equivalence (Yes/No). Accuracy overall and by template, category and tier, mean and sd over runs.
    Writes OUT/audit.json, OUT/graded.csv, OUT/report.md and a figure.
    """
    from omniaudit.evaluation.composition.audit import run_composition_audit

    low, high = args.depth_range
    if low > high:
        raise InputError(f"--depth-range LOW HIGH needs LOW <= HIGH (got {low:g} {high:g})")
    with common.progress_status("grading answers") as progress:
        out = run_composition_audit(args.out, args.dataset, args.predictions, args.grader, args.attention,
                                    depth_range=tuple(args.depth_range), cache_dir=args.cache,
                                    partial=args.partial, progress=progress)
    from omniaudit.evaluation.audit_outputs import read_audit

    result = read_audit(out)
    models = result["models"]  # accuracy per model: runs of different models are never pooled
    fmt = lambda e: "-" if e.get("mean") is None else f"{e['mean']:.1f} ± {e['sd']:.1f}%"  # noqa: E731
    acc = {m: fmt(v["accuracy"]["overall"]) for m, v in models.items()}  # None: no sample graded
    per_model = (next(iter(acc.values())) if len(acc) == 1 else
                 "; ".join(f"{m} {a} ({len(models[m]['runs'])} run(s))" for m, a in acc.items()))
    print(f"{len(result['runs'])} run(s) ({', '.join(result['runs'])}): accuracy {per_model}")
    flagged = [m for m, v in models.items() if v.get("floor_check", {}).get("status") == "flagged"]
    if flagged:
        common.say("warning", f"the failure decomposition of {', '.join(flagged)} does not clear the stability "
                              "floor (ablations move answers no more often than re-runs do; see report.md)")
    ungraded = (result.get("grading") or {}).get("note")
    if ungraded:  # answers no reader read and no judge graded: left out, never read as wrong
        common.say("warning", f"{ungraded}: left out of the accuracy and every measure (see report.md)")
    if args.grader:
        print(f"judge verdicts: {result['n_judged']} asked, {result['n_unparsed_verdicts']} unparsed (counted wrong)")
    common.print_outputs(out)


def register(groups: common.Groups) -> None:
    p = common.builder(groups, "composition", cmd_build_composition, "--samples",
                       "samples file (JSONL/CSV/Parquet); omitted: embedded synthetic samples",
                       seed="seed of the selection (0)")
    p.add_argument("--templates", metavar="FILE",
                   help="table of the known templates (template_id, template_name[, category]; CSV/JSONL/Parquet): "
                        "a sample with a template it does not list is refused")
    p.add_argument("--target", type=positive_int, default=25, help="samples per category x difficulty bucket (25)")
    p.add_argument("--synthetic", type=positive_int, default=48,
                   help="synthetic samples when --samples is omitted (48)")
    p.add_argument("--min-confidence", type=integer(1, 5), default=1, metavar="K",
                   help="keep samples whose generation_confidence is at least K (1-5; default 1: all). Samples whose "
                        "generator self-audit (self_audit.*_passed) has a false flag are always left out")
    p.add_argument("--swap", nargs="+", choices=["audio", "image"], metavar="MODALITY",
                   help="also write swap_audio / swap_image ablations: the sample's audio file or image replaced by "
                        "another sample's of the same template (donor seeded by --seed, preferring a different "
                        "answer; donor_id names it)")
    p.add_argument("--from-generator", metavar="FILE",
                   help="C3PO generator output (the paper's generation JSON: .json object / list, or .jsonl) instead "
                        "of --samples: validated and imported into the samples schema. The media are yours to make "
                        "(TTS speech / AudioLDM2 sound / text-to-image): paths in the JSON or files in --media")
    p.add_argument("--media", metavar="DIR", help="with --from-generator: folder of the media files (base media by "
                                                  "source_file; generated audio / image as <sample_id>.wav|.png, "
                                                  "<sample_id>_audio.*, <sample_id>_image.*)")
    p.add_argument("--auditor-results", metavar="FILE", help="with --from-generator: the auditor's JSON answers "
                                                             "(decision, difficulty_score), each with its sample_id")
    p.add_argument("--imported", metavar="FILE", help="with --from-generator: also write the imported samples "
                                                      "(JSONL); without auditor decisions, stop there (input of "
                                                      "`omniaudit composition-auditor`)")

    p = common.command(groups.top, "composition-auditor", cmd_composition_auditor)
    p.add_argument("--samples", required=True, help="generated samples (JSONL/CSV/Parquet): id, template_id, "
                                                    "template_name, question, answer, generation_confidence, media")
    p.add_argument("--auditor", required=True, metavar="SPEC", help=common.SPEC)
    common.add_out(p, "audited samples file (JSONL)", None)
    common.add_runner_options(p, "max_tokens", "cache", "dialect", role="auditor", max_tokens=1024)

    p = common.command(groups.audit, "composition", cmd_audit_composition)
    p.add_argument("--dataset", required=True, help="composition dataset folder or Hub repo id")
    p.add_argument("--predictions", nargs="+", required=True, metavar="[NAME[@RUN]=]FILE",
                   help="predictions (`omniaudit judge --config samples` / `--config ablations`, or id + prediction). "
                        "Files sharing a NAME are one inference run (its samples and ablations files); a bare FILE "
                        "is its own run; a file with a 'run' column (judge --runs N) holds several runs. An existing "
                        "file is always a FILE ('=' and all); else NAME=FILE is cut at the first '=' followed by an "
                        "existing file. Several models in one audit: MODEL@RUN=FILE makes RUN a run of MODEL, cut at "
                        "the last '@', so MODEL may be a Hub repo id (Qwen/Qwen2.5-Omni-7B@r1=run1.jsonl); a '/' is "
                        "part of a name, not a separator. A NAME without '@' (or a bare FILE) is its own model")
    common.add_helper_model(p, "--grader", f"judge for non-exact answers: {common.SPEC}", "--judge")
    p.add_argument("--attention", nargs="+", metavar="MODEL[=PREDICTIONS]",
                   help="omni models (eager attention) to probe: mid-layer entropy gap between correct and "
                        "incorrect samples, per model and pooled. Each model is scored by its own answers: "
                        "MODEL=PREDICTIONS (repeat MODEL=... for several runs); a bare MODEL uses --predictions "
                        "(only one model may, and only when --predictions are one model's runs). Every model is "
                        "loaded and checked (layers in --depth-range; it encodes every modality of the probed "
                        "samples) before any judge call")
    p.add_argument("--depth-range", nargs=2, type=share, default=[0.25, 0.75], metavar=("LOW", "HIGH"),
                   help="relative layer depths averaged into the mid-layer entropy (0.25 0.75); a model without a "
                        "layer in the range is refused")
    common.add_partial(p)
    common.add_out(p)
    common.add_tracking(p)
