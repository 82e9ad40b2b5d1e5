"""Items per second of the local runner (``hf:``) with its per-source media cache vs without it, in the same run.

A tiny Qwen2.5-Omni thinker (built from a config, ``omniaudit.tiny_models.tiny_omni``) answers interventions-
diagnostic items: the builder's default synthetic clips (6 s, 320 x 240, 25 fps, H.264 + AAC; Originals and their
Shift / Mute / Swap versions), each asked the three diagnostic questions (sync, existence, consistency) with its own
soundtrack as input, as the diagnostic config asks an Original. Items come question-major (every clip's sync
question, then every existence question, ...), so a cache that only remembered the last clip would not help.
Answers are generated (free-form, ``--max-new-tokens`` tokens, forced to that length: a random tiny model would
otherwise stop at once).

The same items run through two judges with the same settings: one with the media cache (each clip decoded with
PyAV, featurised by the processor and encoded by the thinker's vision and audio encoders once) and one with
``media_cache_bytes=0`` (decoded, featurised and encoded per question, the model's own encoders on every batch).
Each is warmed up on a held-out clip, then the two are timed in turn ``--repeats`` times (best time kept, cache
emptied before each timing).

Last line: ``cache_speedup=<uncached_s / cached_s> items_per_s=<items per s with the cache>``.

    python benchmarks/judge_throughput.py [--clips 4] [--batch-size 8] [--max-new-tokens 16] [--fps 2]
        [--max-frames 16] [--repeats 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from omniaudit.data_builders.interventions import SyntheticClipSpec, build_interventions_dataset
from omniaudit.data_builders.interventions.answers import QUESTIONS
from omniaudit.runners import load_items
from omniaudit.runners.hf import HFJudge
from omniaudit.runners.items import JudgeItem
from omniaudit.tiny_models import tiny_omni


def diagnostic_items(dataset: Path) -> list[JudgeItem]:
    """Every clip of the diagnostic config asked all three questions, question-major."""
    clips = {}
    for item in load_items(dataset, "diagnostic"):
        clips.setdefault(item.media[0].key, item)
    return [JudgeItem(f"{item.id}/{dim}", question, [], media=item.media)
            for dim, question in QUESTIONS.items() for item in clips.values()]


def timed(judges: dict[str, HFJudge], items: list[JudgeItem], repeats: int) -> dict[str, tuple[float, dict]]:
    """Per judge: (best seconds over ``repeats`` runs, media decoded / featurised per run). Runs alternate between
    the judges, so a busy machine slows both alike."""
    best: dict[str, float] = {name: float("inf") for name in judges}
    work: dict[str, dict[str, int]] = {}
    for _ in range(repeats):
        for name, judge in judges.items():
            judge.cache.clear()
            before = dict(judge.cache.misses)
            start = time.perf_counter()
            judge.answer(items)
            best[name] = min(best[name], time.perf_counter() - start)
            work[name] = {k: v - before.get(k, 0) for k, v in judge.cache.misses.items()}
    return {name: (best[name], work[name]) for name in judges}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=4, help="synthetic source clips (each gives 5 videos)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--fps", type=float, default=2.0)
    parser.add_argument("--max-frames", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="omniaudit-bench-"))
    dataset = build_interventions_dataset(root / "iv", spec=SyntheticClipSpec(n_clips=args.clips + 1))
    items = diagnostic_items(dataset)
    held_out = items[0].media[0].key  # the warm-up clip, not timed
    warm = [it for it in items if it.media[0].key == held_out]
    items = [it for it in items if it.media[0].key != held_out]
    model = tiny_omni(root / "omni")
    settings = dict(batch_size=args.batch_size, mode="generate", max_new_tokens=args.max_new_tokens,
                    min_new_tokens=args.max_new_tokens, fps=args.fps, max_frames=args.max_frames)
    judges = {"cached": HFJudge(model, **settings), "uncached": HFJudge(model, **settings, media_cache_bytes=0)}
    for judge in judges.values():
        judge.answer(warm)
    runs = timed(judges, items, args.repeats)
    seconds = {name: run[0] for name, run in runs.items()}
    n_clips = len({it.media[0].key for it in items})
    print(f"{len(items)} items on {n_clips} clips (video with its soundtrack, {args.fps:g} fps, <= {args.max_frames} "
          f"frames), batch {args.batch_size}, {args.max_new_tokens}-token answers")
    for name, (s, work) in runs.items():
        encoded = (f"{work['encoder:video']} frame and {work.get('encoder:audio', 0)} soundtrack encodings"
                   if "encoder:video" in work else "every question's media encoded")
        print(f"{name + ':':10s} {s:.2f} s ({len(items) / s:.1f} items/s); per run: {work.get('decode:video', 0)} "
              f"video decodes, {work.get('features:video_processor', 0)} frame featurisations, "
              f"{work.get('features:feature_extractor', 0)} soundtrack featurisations, {encoded}")
    speedup = seconds["uncached"] / seconds["cached"]
    print(f"cache_speedup={speedup:.2f} items_per_s={len(items) / seconds['cached']:.1f}")


if __name__ == "__main__":
    main()
