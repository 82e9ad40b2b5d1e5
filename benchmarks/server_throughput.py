"""Items per second through a real OpenAI-compatible server (``transformers serve``, CPU) at concurrency 1 vs 4, with
the same items and server in one run.

A tiny model from ``omniaudit.tiny_models`` is served (``--model audio``: the Qwen2-Audio-style LM, one 1-s clip per
item; ``text``: the causal LM, text only) and asked closed-set items by the ``openai:`` runner with its cache off, so
every item is a request. The model is loaded by one warm-up request before timing. Each concurrency is timed
``--repeats`` times; the best is reported.

Last line: ``concurrency_speedup=<items/s at 4 / items/s at 1> items_per_s_c1=<x> items_per_s_c4=<y>``.

    python benchmarks/server_throughput.py [--items 48] [--model audio] [--max-tokens 8]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test suite's server fixture

from transformers_server import TransformersServer, missing_modules  # noqa: E402

from omniaudit.runners.items import JudgeItem, MediaPart  # noqa: E402
from omniaudit.runners.openai_compat import OpenAIJudge  # noqa: E402
from omniaudit.tiny_models import tiny_audio_lm, tiny_causal_lm  # noqa: E402

PROMPT = "Which emotion does the speaker express? Answer with exactly one of: angry, happy, neutral, sad."


def make_items(n: int, audio: bool) -> list[JudgeItem]:
    import numpy as np

    items = []
    for i in range(n):
        media = []
        if audio:
            buf = io.BytesIO()
            sf.write(buf, np.random.default_rng(i).standard_normal(16000).astype("float32") * 0.1, 16000,
                     format="WAV", subtype="PCM_16")
            media = [MediaPart("audio", buf.getvalue(), "audio")]
        items.append(JudgeItem(id=f"item/{i}", prompt=f"{PROMPT} ({i})", options=["angry", "happy", "neutral", "sad"],
                               media=media))
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=48)
    parser.add_argument("--model", choices=["audio", "text"], default="audio")
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    if missing_modules():
        sys.exit(f"transformers serve needs {missing_modules()}: pip install -c requirements/constraints.txt "
                 "-e '.[serve]'")
    with tempfile.TemporaryDirectory(prefix="omniaudit-serve-bench-") as tmp:
        model = (tiny_audio_lm if args.model == "audio" else tiny_causal_lm)(Path(tmp) / args.model)
        items = make_items(args.items, args.model == "audio")
        server = TransformersServer(Path(tmp) / "serve.log")
        try:
            OpenAIJudge(str(model), server.url, None, max_tokens=args.max_tokens).answer(items[:1])  # load the model
            rates = {}
            for concurrency in (1, 4):
                best = 0.0
                for _ in range(args.repeats):
                    judge = OpenAIJudge(str(model), server.url, None, concurrency=concurrency,
                                        max_tokens=args.max_tokens)
                    start = time.perf_counter()
                    answers = judge.answer(items)
                    elapsed = time.perf_counter() - start
                    assert len(answers) == len(items) and judge.requests_sent == len(items)
                    best = max(best, len(items) / elapsed)
                rates[concurrency] = best
                print(f"concurrency {concurrency}: {best:.1f} items/s ({len(items)} items, {args.model} model, "
                      f"{args.max_tokens} answer tokens, best of {args.repeats})")
        finally:
            server.close()
    print(f"concurrency_speedup={rates[4] / rates[1]:.2f} items_per_s_c1={rates[1]:.1f} items_per_s_c4={rates[4]:.1f}")


if __name__ == "__main__":
    main()
