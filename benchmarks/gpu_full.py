"""The full-size GPU check (``scripts/gpu_check.sh --full``): the random-weight Qwen2.5-Omni-7B thinker (the published
architecture shipped in omniaudit/real_configs/, nothing downloaded) judged in bf16 and trained 10 LoRA DPO steps
under DeepSpeed ZeRO-3, with GPU memory and throughput printed beside the memory plan's estimate.

1. **checkpoint**: ``omniaudit.real_size.random_checkpoint`` builds the thinker on the GPU with random bf16 weights
   and saves it (about 18 GB) with the offline tokenizer and a processor with the published settings.
2. **data**: ``omniaudit tiny-models`` writes the datasets (its tiny models are not used).
3. **judge**: ``omniaudit judge --judge hf:CHECKPOINT --torch-dtype bfloat16 --device-map auto`` on text items
   (the preference judge config) and on video+audio items (clips, 1 fps, 4 frames).
4. **dpo**: ``accelerate launch --config_file accelerate_configs/zero3.yaml --num_processes 1 training/dpo.py
   --config training/recipes/tiny/dpo_omni.yaml`` on the checkpoint, 10 steps, bf16, LoRA (r 16 on every linear
   layer of the language model, as the real recipes), gradient checkpointing on.

Each step prints its seconds, items (or steps) per second and peak GPU memory (nvidia-smi ``memory.used`` sampled
every 100 ms, summed over the GPUs). Without a GPU it prints that it is skipped and exits 0. ``--dry-run`` checks the
setup without a GPU: the config loads, the model's shapes are the 7B's (built on the meta device), and it prints the
commands it would run.

    scripts/gpu_check.sh --full [--dry-run] [--items 16] [--steps 10] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "qwen2.5-omni-7b-thinker"
LORA = ["--lora_r", "16", "--lora_alpha", "32", "--lora_target_modules", "q_proj", "k_proj", "v_proj", "o_proj",
        "gate_proj", "up_proj", "down_proj"]
EXPECTED = {"hidden": 3584, "layers": 28, "q_dim": 3584, "kv_dim": 512, "intermediate": 18944}


def commands(work: Path, python: str = sys.executable, items: int = 16, steps: int = 10) -> dict[str, list[str]]:
    """The commands of steps 2-4, by name (argument lists, run from the repository root)."""
    ckpt, tiny = work / "omni7b", work / "tiny"
    judge = [python, "-m", "omniaudit", "-q", "judge", "--judge", f"hf:{ckpt}", "--torch-dtype", "bfloat16",
             "--device-map", "auto"]
    accelerate = str(Path(python).parent / "accelerate")
    return {
        "data": [python, "-m", "omniaudit", "-q", "tiny-models", "--out", str(tiny)],
        "judge-text": [*judge, "--dataset", str(tiny / "data" / "preference"), "--config", "judge", "--limit",
                       str(items), "--out", str(work / "text.jsonl")],
        "judge-media": [*judge, "--dataset", str(tiny / "data" / "preference_media"), "--config", "judge", "--fps",
                        "1", "--max-frames", "4", "--limit", str(items), "--out", str(work / "media.jsonl")],
        "dpo": [accelerate, "launch", "--config_file", "accelerate_configs/zero3.yaml", "--num_processes", "1",
                "training/dpo.py", "--config", "training/recipes/tiny/dpo_omni.yaml", "--model_name_or_path",
                str(ckpt), "--dataset_name", str(tiny / "data" / "interventions"), "--output_dir", str(work / "dpo"),
                "--max_steps", str(steps), "--save_strategy", "no", "--logging_steps", "1", "--report_to", "none",
                "--bf16", "true", "--use_cpu", "false", "--gradient_checkpointing", "true", *LORA],
    }


def check_setup() -> dict[str, int]:
    """The shipped 7B config loads and its model (meta device) has the 7B's shapes; returns the shapes."""
    from omniaudit.real_size import build_model, count_parameters, load_config, real_config_dir

    config = load_config(real_config_dir(NAME))
    model = build_model(config, device="meta")
    text = config.get_text_config()
    layer = model.get_decoder().layers[0]
    found = {"hidden": text.hidden_size, "layers": len(model.get_decoder().layers),
             "q_dim": layer.self_attn.q_proj.out_features, "kv_dim": layer.self_attn.k_proj.out_features,
             "intermediate": layer.mlp.up_proj.out_features}
    params = count_parameters(model).total
    if found != EXPECTED or params != 8_931_813_888:
        raise SystemExit(f"error: the shipped {NAME} config does not give the 7B thinker: {found}, {params}")
    return {**found, "params": params}


def gpus() -> int:
    """Visible GPUs (0 without nvidia-smi or a CUDA torch)."""
    if shutil.which("nvidia-smi") is None:
        return 0
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU ")
    if not listed:
        return 0
    import torch

    return listed if torch.cuda.is_available() else 0


class Sampler:
    """nvidia-smi ``memory.used`` of every GPU each 100 ms while a step runs; ``peak``: the largest sum (MiB)."""

    def __init__(self, work: Path, n: int) -> None:
        self.path, self.n = work / "mem.raw", n
        self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits",
                                      "-lms", "100"], stdout=self.path.open("w"), stderr=subprocess.DEVNULL)

    def peak(self) -> int:
        self.proc.terminate()
        self.proc.wait()
        values = [int(v) for v in self.path.read_text().split() if v.strip().isdigit()]
        return max((sum(values[i:i + self.n]) for i in range(0, len(values) - self.n + 1, self.n)), default=0)


def run(name: str, command: list[str], work: Path, n: int, count=None) -> dict:
    """Run one step (its log in WORK/NAME.log), measured."""
    print(f">> {name}: {shlex.join(command)}", flush=True)
    sampler, start = Sampler(work, n), time.perf_counter()
    with (work / f"{name}.log").open("w") as log:
        done = subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, timeout=1800)
    seconds, peak = time.perf_counter() - start, sampler.peak()
    row = {"step": name, "ok": done.returncode == 0, "seconds": seconds, "peak_mib": peak}
    if count is not None and row["ok"]:
        row["rate"] = count() / seconds
    if not row["ok"]:
        print((work / f"{name}.log").read_text()[-3000:], file=sys.stderr)
    return row


def dpo_rate(work: Path) -> float | None:
    import re

    found = re.findall(r"train_steps_per_second'?: '?([0-9.]+)", (work / "dpo.log").read_text())
    return float(found[-1]) if found else None


def full_check(work: Path, args) -> list[dict]:
    from omniaudit.real_size import random_checkpoint

    n = gpus()
    rows = []
    sampler, start = Sampler(work, n), time.perf_counter()
    random_checkpoint(NAME, work / "omni7b", device="cuda")
    rows.append({"step": "checkpoint", "ok": True, "seconds": time.perf_counter() - start, "peak_mib": sampler.peak()})
    steps = commands(work, args.python, args.items, args.steps)
    rows.append(run("data", steps["data"], work, n))
    for name in ("judge-text", "judge-media"):
        out = work / ("text.jsonl" if name == "judge-text" else "media.jsonl")
        rows.append(run(name, steps[name], work, n, count=lambda out=out: len(out.read_text().splitlines())))
    rows.append(run("dpo", steps["dpo"], work, n))
    rows[-1]["rate"] = dpo_rate(work) if rows[-1]["ok"] else None
    return rows


def plan_line() -> str:
    from omniaudit.memory_plan import GIB, Setup, make_plan

    plan = make_plan("qwen2.5-omni-7b/judge", Setup(1, 3, False), model=str(ROOT / "omniaudit/real_configs" / NAME))
    return (f"plan (estimated) for qwen2.5-omni-7b/judge on 1 GPU, ZeRO-3: {plan.total / GIB:.1f} GiB per GPU "
            f"({plan.tokens.per_sequence:,} tokens per sequence; the check's clips are shorter)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="check the setup and print the commands; no GPU used")
    parser.add_argument("--items", type=int, default=16, help="items judged per judge step (default 16)")
    parser.add_argument("--steps", type=int, default=10, help="DPO steps (default 10)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (an 18 GB checkpoint)")
    parser.add_argument("--python", default=sys.executable, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.dry_run and gpus() == 0:
        print("no GPU here (nvidia-smi and a CUDA torch are needed): the full-size check is skipped")
        return
    os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", WANDB_MODE="disabled")
    shapes = check_setup()
    print(f"{NAME}: " + ", ".join(f"{k} {v:,}" for k, v in shapes.items()))
    work = Path(tempfile.mkdtemp(prefix="omniaudit-gpu-full-"))
    if args.dry_run:
        for name, command in commands(work, args.python, args.items, args.steps).items():
            print(f"{name}: {shlex.join(command)}")
        shutil.rmtree(work)
        return
    try:
        rows = full_check(work, args)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nomniaudit full-size GPU check ({gpus()} GPU(s)): {NAME}, random bf16 weights")
    for row in rows:
        rate = f"{row['rate']:.2f}/s" if row.get("rate") else "-"
        print(f"{row['step']:<12} {'ok' if row['ok'] else 'FAIL':<5} {row['seconds']:>8.1f} s {rate:>10} "
              f"{row['peak_mib']:>8} MiB peak")
    print(plan_line())
    sys.exit(0 if all(row["ok"] for row in rows) else 1)


if __name__ == "__main__":
    main()
