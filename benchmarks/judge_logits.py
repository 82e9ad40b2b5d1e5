"""Closed-set judging by option logits vs ``generate()``, on the same tiny local models and items, in one run.

The embedded protocol probes are built (espeak-ng) and tiny judges are built from configs. Every item is judged twice
with the same batches and prompts: by the next-token logits of the options after one forward pass (``--mode
logits``, the default) and by greedy decoding of a 32-token answer, a one-sentence verdict with a short reason as
chat judges write it (forced to that length: a random tiny model would otherwise stop at once), then parsing it.
The text judge is also timed at 8 and 128 answer tokens, to show how the gap grows with the answer's length.

1. a tiny Qwen2 text judge on the text-only blueprint items (model compute only);
2. a tiny Qwen2-Audio judge on the ``reference`` items (one clip each): here the Whisper feature extraction of
   30-s padded audio, paid by both modes, dominates on a CPU, so the gap is smaller.

Last line (text judge, 32-token answers): ``speedup=<generate_s / logits_s> items_per_s=<logits items per s>``.

    python benchmarks/judge_logits.py [--items 256] [--batch-size 16]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset
from omniaudit.evaluation.judges import load_items
from omniaudit.evaluation.judges.hf import HFJudge
from omniaudit.tiny_models import tiny_audio_lm, tiny_causal_lm

ANSWER_TOKENS = 32
TEXT_CONDITIONS = ["skeleton", "descriptors", "true", "wrong", "no_frame"]


def time_modes(model: Path, items: list, batch_size: int, tokens: int = ANSWER_TOKENS) -> dict[str, float]:
    timings = {}
    for mode in ("logits", "generate"):
        judge = HFJudge(model, batch_size=batch_size, mode=mode, max_new_tokens=tokens, min_new_tokens=tokens)
        judge.answer(items[:batch_size])  # warm-up
        start = time.perf_counter()
        judge.answer(items)
        timings[mode] = time.perf_counter() - start
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="omniaudit-bench-"))
    dataset = build_protocols_dataset(root / "ds", None, ProtocolBuildOptions(max_trials=4), SpeechSetSpec())
    runs = {
        "audio judge, reference items": (tiny_audio_lm(root / "audio"), load_items(dataset, "reference")),
        "text judge, blueprint text items": (tiny_causal_lm(root / "text"),
                                             load_items(dataset, "blueprint", TEXT_CONDITIONS)),
    }
    text_model, text_items = runs["text judge, blueprint text items"]
    for tokens in (8, 128):
        t = time_modes(text_model, text_items[: args.items], args.batch_size, tokens)
        print(f"text judge, {tokens}-token answers: generate / logits = {t['generate'] / t['logits']:.1f}x")
    for name, (model, items) in runs.items():
        items = items[: args.items]
        t = time_modes(model, items, args.batch_size)
        print(f"{name}, {ANSWER_TOKENS}-token answers: {len(items)} items, logits {t['logits']:.2f} s, generate "
              f"{t['generate']:.2f} s ({t['generate'] / t['logits']:.1f}x)")
    print(f"speedup={t['generate'] / t['logits']:.1f} items_per_s={len(items) / t['logits']:.1f}")


if __name__ == "__main__":
    main()
