"""Thud appendix B's annotation of the clips a Shift / Mute / Swap build reads: ``annotate`` (models give each clip's
event times) and ``check-onsets`` (the annotated audio times against the signal)."""

from __future__ import annotations

import argparse

from omniaudit.cli import common
from omniaudit.cli.interventions import rejected_reasons
from omniaudit.cli.numbers import non_negative


def cmd_annotate(args: argparse.Namespace) -> None:
    """Thud appendix B: ask models for each clip's visual and audio event times

    Ask each annotator (a runner: openai:MODEL@URL for a hosted omni model, hf:PATH, or column:FIELD to answer from a
    manifest column) for every clip's visual event and time and audio event and time, and write a new manifest with
    visual_time_NAME / audio_time_NAME (+ events and raw answers) per annotator. NAME:visual=SPEC annotators see the
    pictures only and locate the named visual event (the paper's GPT/Claude check); NAME:units=SPEC annotators see
    --units frame units (--frames-per-unit frames each, with their time ranges) and pick the unit (appendix B; units
    that overlap count as agreement). Clips an annotator finds no event
    in, or gives no usable time for, are marked `discard`. `build interventions --manifest OUT` then applies the
    agreement filter (0.8 s visual, 0.5 s audio).
    """
    from omniaudit.data_builders.interventions.annotate import annotate_manifest

    with common.progress_status("annotating event times") as progress:
        result = annotate_manifest(args.manifest, args.annotated, args.annotator, primary=args.primary,
                                   eps_visual=args.eps_visual, eps_audio=args.eps_audio, progress=progress,
                                   n_units=args.units, frames_per_unit=args.frames_per_unit,
                                   **common.runner_kwargs(args))
    a = result.agreement
    print(f"{result.rows} clips annotated by {', '.join(result.annotators)}; {result.discarded} marked discard")
    print(f"agreement filter (as `build interventions` applies it): {a['passed_agreement']} kept, {a['rejected']} "
          "rejected" + rejected_reasons(a["rejected_by_reason"]))
    print(f"annotated manifest: {result.out}")


def cmd_check_onsets(args: argparse.Namespace) -> None:
    """Thud appendix B: check annotated audio event times against the signal

    Detect each clip's most salient sound onset (short-time energy rise, 10 ms frames) and compare it with the
    manifest's annotated audio time (--column: audio_time or an annotator's audio_time_NAME). Writes a CSV (id, row,
    annotated_audio_time, detected_onset, difference_s, disagrees) and flags clips whose times differ by more than
    --tolerance (default 0.5 s, the paper's ε_a) or where only one of the two exists: review them before building.
    """
    from omniaudit.data_builders.interventions.onset import check_onsets
    from omniaudit.io import atomic_file, check_out_file

    result = check_onsets(args.manifest, args.tolerance, args.column)
    out = check_out_file(args.out, lambda p: p.read_text(encoding="utf-8").startswith("id,row,annotated_audio_time"),
                         args.overwrite)
    with atomic_file(out) as tmp:
        result.table.to_csv(tmp, index=False)
    s = result.summary()
    print(f"{s['clips']} clips: {s['annotated']} annotated, {s['detected']} with a detected onset; {s['disagree']} "
          f"disagree by more than {s['tolerance_s']:g} s (or only one is given)")
    for _, r in result.table[result.table["disagrees"]].head(10).iterrows():
        print(f"  {r['id']}: annotated {r['annotated_audio_time']}, detected {r['detected_onset']}")
    print(f"onset check: {out}")


def register(groups: common.Groups) -> None:
    p = common.command(groups.top, "annotate", cmd_annotate)
    p.add_argument("--manifest", required=True, help="video manifest (JSONL/CSV/TSV/Parquet: id, video, ...)")
    common.add_out(p, "annotated manifest to write (JSONL; never the input)", common.REPLACE_FILE, dest="annotated",
                   metavar="OUT.jsonl")
    p.add_argument("--annotator", action="append", required=True, metavar="NAME[:visual]=SPEC",
                   help="repeat per annotator, e.g. gemini=openai:gemini-2.5-pro@https://HOST/v1 "
                        "gpt:visual=openai:gpt-5@https://HOST/v1")
    p.add_argument("--primary", metavar="NAME",
                   help="annotator whose events and times fill the row's empty visual_event / audio_event / "
                        "visual_time / audio_time (default: the first full annotator)")
    p.add_argument("--eps-visual", type=non_negative, default=0.8, help="visual agreement tolerance, s (0.8)")
    p.add_argument("--eps-audio", type=non_negative, default=0.5, help="audio agreement tolerance, s (0.5)")
    p.add_argument("--units", type=int, default=8, metavar="N",
                   help="NAME:units annotators: frame units per clip (appendix B; default 8)")
    p.add_argument("--frames-per-unit", type=int, default=2, metavar="K",
                   help="NAME:units annotators: representative frames shown per unit (default 2)")
    common.add_runner_options(p, "max_tokens", "concurrency", "cache", "no_cache", "api_key_env", "allow_insecure_key",
                              "dialect", "fps", "max_frames", max_tokens=256, max_frames=16)

    p = common.command(groups.top, "check-onsets", cmd_check_onsets)
    p.add_argument("--manifest", required=True, help="video manifest (JSONL/CSV/TSV/Parquet: id, video, audio_time)")
    common.add_out(p, "onset check to write (CSV)", common.REPLACE_FILE, metavar="OUT.csv")
    p.add_argument("--tolerance", type=non_negative, default=0.5, metavar="SECONDS",
                   help="flag clips whose annotated and detected onsets differ by more (default 0.5, ε_a)")
    p.add_argument("--column", default="audio_time", help="annotated time column (default audio_time)")
