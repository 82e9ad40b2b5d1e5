"""Closed-set judging by option probabilities vs ``generate()``, on the same tiny local models and items, in one run.

The embedded protocol probes are built (espeak-ng) and tiny judges are built from configs. Every item is judged twice
by the same judge, with the same batches, prompts and media: by option probabilities (``--mode logits``, the
default: one forward pass over the prompts with the KV cache kept, then each option scored as a whole answer, its
tokens plus the end of turn, against that cache) and by greedy decoding of a 32-token answer, a one-sentence verdict
with a short reason as chat judges write it (forced to that length: a random tiny model would otherwise stop at
once), then parsing it. Media are cached per source: a warm-up pass in each mode decodes and featurises every clip
once (``hf_media.MediaCache``) and, for the Qwen2-Audio judge, runs its encoder over each clip's 30-s padded log-mel
once (``hf_encoders``); that per-question audio work is what held this comparison to 1.3x for the audio judge. The
timed passes (best of ``--repeats``, the modes taking turns) then measure the language model. The text judge is also
timed at 8 and 128 answer tokens, to show how the gap grows with the answer's length.

1. a tiny Qwen2 text judge on the text-only blueprint items;
2. a tiny Qwen2-Audio judge on the ``reference`` items (one clip each, 32 distinct clips).

The floor: the same batches, prompts and media through the prompt pass alone (``hf_scoring.prompt_pass``: encode,
featurise, one forward with the KV cache kept, the last position projected), nothing decoded or scored. Every closed
answer pays it; option scoring's own cost is what it adds on top (goal: within 1.3x of the floor). Beating a long
``generate`` is not the measure: both arms pay the same prompt pass, most of the cost of a short answer.

Last line (32-token answers): ``speedup=<text judge: generate_s / logits_s> audio_speedup=<audio judge>
items_per_s=<text judge, logits items per s> floor_ratio=<text judge: logits_s / floor_s>
audio_floor_ratio=<audio judge>``.

    python benchmarks/judge_logits.py [--items 256] [--batch-size 16] [--repeats 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset
from omniaudit.runners import load_items
from omniaudit.runners.hf import HFJudge
from omniaudit.runners.hf_scoring import prompt_pass
from omniaudit.tiny_models import tiny_audio_lm, tiny_causal_lm

ANSWER_TOKENS = 32
TEXT_CONDITIONS = ["skeleton", "descriptors", "true", "wrong", "no_frame"]


def floor_pass(judge: HFJudge, items: list) -> None:
    """The floor: ``judge.answer``'s batches, prompts and media through the prompt pass only."""
    for _, indices in judge._plan(items):
        for start in range(0, len(indices), judge.batch_size):
            inputs, extra = judge._encode([items[i] for i in indices[start : start + judge.batch_size]])
            prompt_pass(judge.model, inputs, extra, judge.prefill_kwargs)


def time_modes(judge: HFJudge, items: list, tokens: int = ANSWER_TOKENS, repeats: int = 3) -> dict[str, float]:
    """Best seconds per arm (logits, generate, the floor) on ``items`` over ``repeats`` passes, the arms taking turns
    (a busy machine slows all alike), after a warm-up pass in each (every source decoded, featurised and encoded
    once, then cached)."""
    judge.max_new_tokens = judge.min_new_tokens = tokens

    def run(arm: str) -> None:
        if arm == "floor":
            floor_pass(judge, items)
        else:
            judge.mode = arm
            judge.answer(items)

    timings = {"logits": float("inf"), "generate": float("inf"), "floor": float("inf")}
    for arm in timings:
        run(arm)
    for _ in range(repeats):
        for arm in timings:
            start = time.perf_counter()
            run(arm)
            timings[arm] = min(timings[arm], time.perf_counter() - start)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per mode (best kept)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: on a shared machine more threads time the neighbours)")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    root = Path(tempfile.mkdtemp(prefix="omniaudit-bench-"))
    dataset = build_protocols_dataset(root / "ds", None, ProtocolBuildOptions(max_trials=4), SpeechSetSpec())
    judges = {
        "audio judge, reference items": (HFJudge(tiny_audio_lm(root / "audio"), batch_size=args.batch_size),
                                         load_items(dataset, "reference")[: args.items]),
        "text judge, blueprint text items": (HFJudge(tiny_causal_lm(root / "text"), batch_size=args.batch_size),
                                             load_items(dataset, "blueprint", TEXT_CONDITIONS)[: args.items]),
    }
    text_judge, text_items = judges["text judge, blueprint text items"]
    for tokens in (8, 128):
        t = time_modes(text_judge, text_items, tokens, args.repeats)
        print(f"text judge, {tokens}-token answers: generate / logits = {t['generate'] / t['logits']:.1f}x")
    speedups, floors = {}, {}
    for name, (judge, items) in judges.items():
        t = time_modes(judge, items, repeats=args.repeats)
        speedups[name], floors[name] = t["generate"] / t["logits"], t["logits"] / t["floor"]
        print(f"{name}, {ANSWER_TOKENS}-token answers: {len(items)} items, floor {t['floor']:.2f} s, logits "
              f"{t['logits']:.2f} s ({floors[name]:.2f}x the floor), generate {t['generate']:.2f} s "
              f"({speedups[name]:.1f}x logits); media decoded {judge.cache.misses}")
    text, audio = "text judge, blueprint text items", "audio judge, reference items"
    print(f"speedup={speedups[text]:.1f} audio_speedup={speedups[audio]:.1f} "
          f"items_per_s={len(items) / t['logits']:.1f} "
          f"floor_ratio={floors[text]:.2f} audio_floor_ratio={floors[audio]:.2f}")


if __name__ == "__main__":
    main()
