"""Real size on a CPU: the random-weight Qwen2.5-Omni-3B thinker (the published architecture, omniaudit/real_configs/,
nothing downloaded) judged through the ``hf:`` runner and trained one LoRA DPO step, with the memory plan's
CPU-checkable rows (omniaudit/memory_plan.py) set against what was measured.

Stages, each in its own process (peak RSS is the process's ``ru_maxrss``; a step's own peak is read from VmHWM,
reset before it through /proc/self/clear_refs; glibc maps every block over 64 KiB, so freed memory leaves the RSS):

1. **build**: the thinker in bf16 with random weights (``omniaudit.real_size.checkpoint_config`` + ``build_model``)
   saved with ``save_pretrained`` (2 GB shards) beside the offline tokenizer and a processor with the published
   settings: a checkpoint folder like a downloaded one. Parameter bytes: the safetensors written and the RSS the
   model added.
2. **judge**: ``HFJudge(folder, dtype=bfloat16)`` on CPU answers text items (two options) and video+audio items
   (a synthetic 6 s clip, 1 fps, 4 frames, its soundtrack): option scoring (``mode=logits``), then generation of 8
   tokens (``mode=generate``, forced to that length), seconds per answer each.
3. **train** (gradient checkpointing off, then on): the thinker loaded with ``from_pretrained``, TRL's fused LM head
   (``trl.trainer.utils.add_fused_lm_head``, what DPOTrainer adds), LoRA as the recipes set it (r 16, alpha 32,
   dropout 0.05, every linear layer of the language model, through ``omniaudit.training.common.peft_config``), one
   DPO step as TRL takes it: a chosen and a rejected sequence of ``--seq`` tokens in one batch, the reference
   log-probabilities with the adapter disabled under ``no_grad``, the sigmoid loss (beta 0.1), backward. Measured:
   the step's seconds, its peak RSS above the RSS before it, and the bytes autograd saved for backward
   (``saved_tensors_hooks``, each storage once, parameters left out).

The comparison: the plan's parameter bytes (2 per parameter of the meta-device model), LoRA's trainable parameters
(``lora_parameters``, counted from shapes) and activation estimate (``activation_bytes`` at the step's tokens)
against the measured figures; each should agree within 20%.

    python benchmarks/real_size.py [--workdir DIR] [--seq 128] [--keep]   # the heavy run: ~12 GB of RAM, ~30 min
    python benchmarks/real_size.py --workdir DIR --only train   # rerun stages of a kept run
    python benchmarks/real_size.py --docs     # rewrite docs/memory.md's plan table (fast; nothing heavy runs)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAME = "qwen2.5-omni-3b-thinker"
TOLERANCE = 0.20
# glibc keeps freed heap blocks, which RSS would go on counting: every block over 64 KiB is mapped and returned on free
MALLOC = {"MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "0", "MALLOC_ARENA_MAX": "1"}
PROMPT = ("Listen to the audio clip. Description A: the speaker sounds happy and calm. Description B: the speaker "
          "sounds angry and worried. Which description is better? Answer with A or B only.")


# ------------------------------------------------------------------------------------------------------- measuring
def _status(key: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def rss() -> int:
    return _status("VmRSS")


def reset_peak() -> bool:
    """Reset VmHWM (the peak RSS) to the current RSS; False where the kernel refuses."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak() -> int:
    return _status("VmHWM")


def lifetime_peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# ---------------------------------------------------------------------------------------------------------- stages
def stage_build(work: Path) -> dict:
    from omniaudit.io import atomic_dir
    from omniaudit.real_size import build_model, checkpoint_config, omni_processor, real_config_dir
    from omniaudit.tiny_models import build_tokenizer

    tokenizer = build_tokenizer()
    config = checkpoint_config(NAME, tokenizer)
    before, start = rss(), time.perf_counter()
    model = build_model(config, device="cpu")
    built, build_s = rss(), time.perf_counter() - start
    tensor_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    start = time.perf_counter()
    with atomic_dir(work / "ckpt") as tmp:
        model.save_pretrained(tmp, max_shard_size="2GB")
        omni_processor(real_config_dir(NAME), tokenizer).save_pretrained(tmp)
    on_disk = sum(p.stat().st_size for p in (work / "ckpt").glob("*.safetensors"))
    return {"build_s": build_s, "save_s": time.perf_counter() - start, "rss_added": built - before,
            "tensor_bytes": tensor_bytes, "safetensors_bytes": on_disk, "peak_rss": lifetime_peak()}


def judge_items(work: Path) -> list:
    from omniaudit.data_builders.interventions import SyntheticClipSpec
    from omniaudit.data_builders.interventions.synthetic import synthesize_clips
    from omniaudit.runners.items import JudgeItem, MediaPart

    clips = sorted(synthesize_clips(work / "clips", SyntheticClipSpec(n_clips=2)).parent.glob("*.mp4"))
    text = [JudgeItem(f"text-{i}", f"{PROMPT} ({i})", ["A", "B"]) for i in range(4)]
    media = [JudgeItem(f"clip-{i}", PROMPT, ["A", "B"], media=[MediaPart("video", clip.read_bytes(), "video", True)])
             for i, clip in enumerate(clips)]
    return text + media


def _timed_answers(judge, items: list) -> dict:
    out = {}
    for kind in ("text", "clip"):
        chosen = [item for item in items if item.id.startswith(kind)]
        judge.answer(chosen[:1])  # warm-up
        start = time.perf_counter()
        judge.answer(chosen)
        out[kind] = (time.perf_counter() - start) / len(chosen)
    return out


def stage_judge(work: Path) -> dict:
    from omniaudit.runners.hf import HFJudge

    items = judge_items(work)
    out: dict = {"items": {k: sum(i.id.startswith(k) for i in items) for k in ("text", "clip")}}
    for mode in ("logits", "generate"):
        before, start = rss(), time.perf_counter()
        judge = HFJudge(work / "ckpt", mode=mode, dtype="bfloat16", device="cpu", batch_size=1, max_new_tokens=8,
                        min_new_tokens=8 if mode == "generate" else 0, fps=1.0, max_frames=4)
        out[mode] = {"load_s": time.perf_counter() - start, "rss_after_load": rss(), "rss_added": rss() - before,
                     "seconds_per_answer": _timed_answers(judge, items)}
        del judge
    out["peak_rss"] = lifetime_peak()
    return out


def _dpo_model(work: Path, checkpointing: bool):
    import torch
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration
    from trl import ModelConfig
    from trl.trainer.utils import add_fused_lm_head

    from omniaudit.memory_plan import ALL_LINEAR
    from omniaudit.training.common import peft_config

    model = Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(work / "ckpt", dtype=torch.bfloat16)
    with torch.no_grad():  # the weights into process memory: from_pretrained maps the files, paged in on first use
        for param in model.parameters():
            param.data = param.data.clone()
    add_fused_lm_head(model, outputs=("log_probs",))
    args = ModelConfig(use_peft=True, lora_r=16, lora_alpha=32, lora_dropout=0.05, lora_target_modules=ALL_LINEAR)
    from peft import get_peft_model

    model = get_peft_model(model, peft_config(args, language_model_of=model))
    if checkpointing:
        model.base_model.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    return model.train()


def _dpo_step(model, seq: int) -> tuple[float, int]:
    """One DPO step as TRL takes it; returns (loss, bytes autograd saved for backward)."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    prompt = torch.randint(20, 500, (1, seq - 32))
    ids = torch.cat([prompt.repeat(2, 1), torch.randint(20, 500, (2, 32))], dim=1)  # [chosen; rejected]
    labels = ids.clone()
    labels[:, : seq - 32] = -100
    with torch.no_grad(), model.disable_adapter():
        ref = model(input_ids=ids, labels=labels, fused_lm_head=True).log_probs.sum(dim=1)
    params = {p.data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(t):
        if t.data_ptr() not in params:
            saved[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        logps = model(input_ids=ids, labels=labels, fused_lm_head=True).log_probs.sum(dim=1)
        loss = -F.logsigmoid(0.1 * ((logps[0] - ref[0]) - (logps[1] - ref[1])))
    loss.backward()
    return float(loss.detach()), sum(saved.values())


def stage_train(work: Path, seq: int, checkpointing: bool) -> dict:
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    start, empty = time.perf_counter(), rss()
    model = _dpo_model(work, checkpointing)
    load_s, loaded = time.perf_counter() - start, rss() - empty
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    before = rss()
    resettable = reset_peak()
    start = time.perf_counter()
    loss, saved = _dpo_step(model, seq)
    step_s = time.perf_counter() - start
    step_peak = peak() if resettable else lifetime_peak()
    return {"checkpointing": checkpointing, "tokens": 2 * seq, "load_s": load_s, "rss_loaded": loaded,
            "step_s": step_s, "loss": loss,
            "trainable": trainable, "rss_before_step": before, "step_peak_rss": step_peak,
            "step_rss_added": step_peak - before, "saved_bytes": saved, "peak_reset": resettable,
            "peak_rss": lifetime_peak()}


STAGES = {"build": lambda a: stage_build(a.workdir), "judge": lambda a: stage_judge(a.workdir),
          "train": lambda a: stage_train(a.workdir, a.seq, a.checkpointing)}


def run_stage(name: str, args, *extra: str) -> dict:
    """Run stage ``name`` in a fresh process; its JSON result with the wall seconds."""
    command = [sys.executable, __file__, "--stage", name, "--workdir", str(args.workdir), "--seq", str(args.seq),
               *extra]
    print(f">> {name} {' '.join(extra)}", flush=True)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **MALLOC})
    if done.returncode != 0:
        sys.exit(f"stage {name} failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - start
    print(json.dumps(result), flush=True)
    return result


# ------------------------------------------------------------------------------------------------------ comparison
def planned(seq: int) -> dict:
    """The plan's CPU-checkable figures for the 3B thinker: parameter bytes, LoRA's trainable parameters and the
    activations of the benchmark's step (2 sequences of ``seq`` tokens), checkpointing off and on."""
    from omniaudit.memory_plan import (
        ALL_LINEAR,
        HEAD_BYTES_TORCH,
        Recipe,
        activation_bytes,
        layer_adapters,
        model_shape,
    )
    from omniaudit.real_size import lora_parameters, real_config_dir

    shape, meta = model_shape(real_config_dir(NAME))
    recipe = Recipe(name="benchmark", script="dpo", model=NAME, lora=True, r=16, dropout=0.05,
                    targets=tuple(ALL_LINEAR), language_model_only=True, max_length=seq, batch=1,
                    checkpointing=False)
    adapters = layer_adapters(meta, recipe)
    acts = {gc: activation_bytes(shape, 2 * seq, full=False, adapters=adapters, r=16, dropout=True,
                                 checkpointing=gc, fused_head=True, head_bytes=HEAD_BYTES_TORCH)
            for gc in (False, True)}
    return {"param_bytes": 2 * shape.params, "params": shape.params,
            "lora": lora_parameters(meta, list(ALL_LINEAR), 16, True), "activations": acts}


def comparisons(plan: dict, build: dict, trains: list[dict]) -> list[tuple[str, float, float]]:
    """(what, planned, measured) rows."""
    rows = [("parameter bytes vs the safetensors written", plan["param_bytes"], build["safetensors_bytes"]),
            ("parameter bytes vs the RSS of the built model", plan["param_bytes"], build["rss_added"]),
            ("parameter bytes vs the RSS of the loaded model", plan["param_bytes"], trains[0]["rss_loaded"]),
            ("LoRA trainable parameters vs PEFT's", plan["lora"], trains[0]["trainable"])]
    for train in trains:
        act = plan["activations"][train["checkpointing"]]
        tag = f"checkpointing {'on' if train['checkpointing'] else 'off'}"
        rows += [(f"activations saved by the forward vs autograd's ({tag})", act.layers - act.recompute,
                  train["saved_bytes"]),
                 (f"activations + LM head vs the step's RSS growth ({tag})", act.layers + act.head,
                  train["step_rss_added"])]
    return rows


def report(plan: dict, results: dict) -> int:
    """Print the measured figures and the comparison; the number of rows outside the tolerance."""
    gib = 1024 ** 3
    build, judge, trains = results["build"], results["judge"], results["train"]
    print(f"\nqwen2.5-omni-3b thinker, random bf16 weights, {os.cpu_count()} CPU cores "
          f"({plan['params'] / 1e9:.2f} B parameters)")
    print(f"build: {build['build_s']:.0f} s init + {build['save_s']:.0f} s save, peak RSS "
          f"{build['peak_rss'] / gib:.1f} GiB")
    for mode in ("logits", "generate"):
        per = judge[mode]["seconds_per_answer"]
        print(f"judge {mode:<8}: s/answer text {per['text']:.1f}, video+audio {per['clip']:.1f} (batch 1, "
              f"{judge['items']['text']} text and {judge['items']['clip']} video+audio items)")
    print(f"judge peak RSS {judge['peak_rss'] / gib:.1f} GiB (from_pretrained maps the weights: they count once read)")
    for t in trains:
        print(f"LoRA DPO step, checkpointing {'on ' if t['checkpointing'] else 'off'}: {t['step_s']:.0f} s, "
              f"{t['tokens']} tokens, RSS before {t['rss_before_step'] / gib:.2f} GiB, step peak "
              f"{t['step_peak_rss'] / gib:.2f} GiB (+{t['step_rss_added'] / gib:.2f}), saved "
              f"{t['saved_bytes'] / gib:.2f} GiB, process peak {t['peak_rss'] / gib:.2f} GiB")
    outside = 0
    title = f"plan vs measured ({trains[0]['tokens']} tokens a step)"
    print(f"\n{title:<68}{'planned':>15}{'measured':>15}{'ratio':>7}")
    for what, want, got in comparisons(plan, build, trains):
        ratio = want / got if got else float("inf")
        ok = abs(ratio - 1) <= TOLERANCE
        outside += not ok
        print(f"{what:<68}{want:>15,}{got:>15,}{ratio:>7.3f}{'' if ok else '  OUTSIDE 20%'}")
    return outside


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, help="where the checkpoint goes (default: a temporary folder)")
    parser.add_argument("--seq", type=int, default=128, help="tokens per DPO sequence (two per step; default 128)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (a 9.4 GB checkpoint)")
    parser.add_argument("--docs", action="store_true", help="only rewrite docs/memory.md's plan table")
    parser.add_argument("--only", help="run only these stages (build, judge, train; comma-separated; report: none) "
                                       "in --workdir, the others' results from its results.json (a run with --keep)")
    parser.add_argument("--stage", choices=sorted(STAGES), help=argparse.SUPPRESS)
    parser.add_argument("--checkpointing", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage:
        print(json.dumps(STAGES[args.stage](args)))
        return
    if args.docs:
        from omniaudit.memory_tables import DOCS, write_docs

        write_docs()
        print(f"wrote the plan table into {DOCS}")
        return
    own = args.workdir is None
    args.workdir = args.workdir or Path(tempfile.mkdtemp(prefix="omniaudit-real-size-"))
    try:
        results = run_stages(args)
        outside = report(planned(args.seq), results)
    finally:
        if own and not args.keep:
            shutil.rmtree(args.workdir, ignore_errors=True)
    sys.exit(1 if outside else 0)


def run_stages(args) -> dict:
    """Every stage, or with ``--only`` those named, the others' results read from WORKDIR/results.json (an earlier
    run's, ``--keep``); the results are written there after each stage."""
    path = args.workdir / "results.json"
    results = json.loads(path.read_text()) if args.only and path.is_file() else {}
    wanted = [n for n in args.only.split(",") if n != "report"] if args.only else ["build", "judge", "train"]
    for name in wanted:
        if name == "train":
            results["train"] = [run_stage("train", args), run_stage("train", args, "--checkpointing")]
        else:
            results[name] = run_stage(name, args)
        path.write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    main()
