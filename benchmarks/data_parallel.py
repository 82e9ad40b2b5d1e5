"""Answers per second of the data-parallel judge: one vs two ``accelerate launch`` processes on CPU, one thread each.

The tiny random Qwen2.5-Omni thinker (``omniaudit.tiny_models.tiny_omni``, as ``omniaudit tiny-models`` builds it)
judges the ``judge`` config of the embedded synthetic preference benchmark (``build_preference_dataset``'s default:
3202 A/B items, both orders of every pair, text only; logits mode: one forward pass per batch, no generation),
every item ``--runs`` times (sampled at temperature 1, seeded), so that the judging outweighs the start.
Each run is a whole command as a user starts it, launcher and model loading included:

    accelerate launch --config_file accelerate_configs/cpu.yaml      -m omniaudit judge ...   # 1 process
    accelerate launch --config_file accelerate_configs/cpu_2proc.yaml -m omniaudit judge ...  # 2 processes (gloo)

with ``OMP_NUM_THREADS=1`` (torch's intra-op threads) in every process, so two processes use two cores. The runs
alternate ``--repeats`` times and the fastest of each is kept (other work on a shared machine slows both alike).
A ``--limit 4`` run of each first measures the fixed cost (launcher, imports, model and dataset loading), reported
beside the end-to-end numbers with the ratio it leaves for the judging itself. The CPU seconds of every process a run
started give the ratio two idle cores would allow (2 x the 1-process CPU time / the 2-process CPU time): on a machine
busy with other work the measured ratio falls below it. The two files must have the same rows (the main
process merges the ranks' parts into the single-process file); at ``--batch-size`` > 1 float32 option probabilities
may differ in the 7th decimal, as the ranks' batches are padded differently (a sampled label then flips only when
its draw falls within that difference of the boundary), so rows and labels are compared and reported.

Last lines: ``ratio=<2-process answers/s / 1-process answers/s>`` and the goal ``goal >= 1.6x: met | not met``.

    python benchmarks/data_parallel.py [--items N] [--runs 4] [--batch-size 8] [--repeats 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CONFIGS = {1: REPO / "accelerate_configs/cpu.yaml", 2: REPO / "accelerate_configs/cpu_2proc.yaml"}
GOAL = 1.6


def free_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def launch(processes: int, dataset: Path, model: Path, out: Path, env: dict, batch_size: int,
           limit: int | None, runs: int = 1) -> tuple[float, float]:
    """(wall seconds, CPU seconds of every process it started) of one ``accelerate launch ... -m omniaudit judge``
    run with ``processes`` processes."""
    port = ["--main_process_port", free_port()] if processes > 1 else []
    cmd = [str(BIN / "accelerate"), "launch", "--config_file", str(CONFIGS[processes]), *port, "-m", "omniaudit",
           "-q", "judge", "--dataset", str(dataset), "--config", "judge", "--judge", f"hf:{model}",
           "--batch-size", str(batch_size), "--out", str(out), "--overwrite"]
    if runs > 1:  # every run answers every item again (a forward pass each), its option drawn with a seeded sampler
        cmd += ["--runs", str(runs), "--temperature", "1.0", "--seed", "0"]
    if limit is not None:
        cmd += ["--limit", str(limit)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=out.parent, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if result.returncode != 0:
        sys.exit(f"{processes}-process run failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return seconds, cpu


def compare(one: Path, two: Path) -> tuple[bool, bool, int, float]:
    """(byte-identical, the same rows, rows whose label differs, largest difference of an option probability). The
    ranks' batches hold other items than the single process's (each judges its own shard), so the padding of a batch
    differs and float32 option probabilities may differ in the 7th decimal; at --batch-size 1 the files are equal."""
    import json

    rows = [[json.loads(line) for line in path.read_text().splitlines()] for path in (one, two)]
    keyed = [{(r["id"], r["order"], r["run"]): r for r in side} for side in rows]
    rows_same = keyed[0].keys() == keyed[1].keys()
    flipped = sum(keyed[0][k]["label"] != keyed[1][k]["label"] for k in keyed[0]) if rows_same else -1
    drift = max((abs(p - keyed[1][k]["option_probs"][o]) for k, r in keyed[0].items() if rows_same
                 for o, p in (r.get("option_probs") or {}).items()), default=0.0)
    return one.read_bytes() == two.read_bytes(), rows_same, flipped, drift


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, help="judge a seeded sample of N items (judge --limit; default: all)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--runs", type=int, default=4,
                        help="answer every item this many times (judge --runs, sampled at temperature 1 with a seed), "
                             "so the judging outweighs the fixed cost of starting (default 4)")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    from omniaudit.data_builders.preference import build_preference_dataset
    from omniaudit.runners import load_items
    from omniaudit.tiny_models import tiny_omni

    root = Path(tempfile.mkdtemp(prefix="omniaudit-dp-bench-"))
    try:
        env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
               "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(root / "hf"), "TOKENIZERS_PARALLELISM": "false"}
        for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
            env.pop(name, None)
        dataset = build_preference_dataset(root / "preference")
        model = tiny_omni(root / "omni")
        total = len(load_items(dataset, "judge"))
        items = min(args.items or total, total)
        limit = items if items < total else None
        load = os.getloadavg()
        print(f"tiny omni judging {items} of {total} preference judge items x {args.runs} run(s), batch "
              f"{args.batch_size}, one thread per process; {os.cpu_count()} CPUs, load average {load[0]:.2f} at the "
              "start")

        fixed = {p: launch(p, dataset, model, root / f"warm{p}.jsonl", env, args.batch_size, 4)[0] for p in (1, 2)}
        best, cpu = {1: float("inf"), 2: float("inf")}, {1: float("inf"), 2: float("inf")}
        for _ in range(args.repeats):
            for p in (1, 2):
                wall, used = launch(p, dataset, model, root / f"p{p}.jsonl", env, args.batch_size, limit, args.runs)
                best[p], cpu[p] = min(best[p], wall), min(cpu[p], used)
        same, rows_same, flipped, drift = compare(root / "p1.jsonl", root / "p2.jsonl")
        answers = items * args.runs
        rate = {p: answers / best[p] for p in best}
        steady = {p: answers / max(best[p] - fixed[p], 1e-9) for p in best}

        print(f"{'processes':>9} {'seconds':>8} {'answers/s':>9} {'CPU s':>7} {'fixed s':>8} "
              f"{'answers/s without fixed':>24}")
        for p in (1, 2):
            print(f"{p:>9} {best[p]:>8.1f} {rate[p]:>9.1f} {cpu[p]:>7.1f} {fixed[p]:>8.1f} {steady[p]:>24.1f}")
        ratio = rate[2] / rate[1]
        load = os.getloadavg()
        print(f"files byte-identical: {'yes' if same else 'no'}; same rows: {'yes' if rows_same else 'NO'}; labels "
              f"that differ: {flipped}; largest option probability difference {drift:.1e}; load average "
              f"{load[0]:.2f} at the end")
        print(f"ratio without the fixed cost: {steady[2] / steady[1]:.2f}x")
        # with two idle cores the two processes' CPU time would run side by side: 2 x (1-process CPU / 2-process CPU)
        print(f"ratio projected for two idle cores (2 x CPU s of 1 process / CPU s of 2): {2 * cpu[1] / cpu[2]:.2f}x")
        print(f"ratio={ratio:.2f}x")
        print(f"goal >= {GOAL}x: {'met' if ratio >= GOAL else 'not met'}")
        if not rows_same:
            sys.exit(1)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
