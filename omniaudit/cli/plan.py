"""``omniaudit plan RECIPE``: a training recipe's GPU memory, estimated (omniaudit/memory_plan.py)."""

from __future__ import annotations

import argparse

from omniaudit.cli import common
from omniaudit.cli.numbers import positive_int


def cmd_plan(args: argparse.Namespace) -> None:
    """estimate a training recipe's GPU memory (parameters, gradients, optimizer, activations)

    For RECIPE (a packaged recipe, e.g. qwen2.5-omni-7b/judge, or a recipe file) on --gpus H100 80 GB cards with
    DeepSpeed ZeRO-2 or ZeRO-3 (--offload: ZeRO-3 puts parameters and optimizer states on the CPU, ZeRO-2 the
    optimizer): per GPU, the parameters, gradients and optimizer states (DeepSpeed's own estimators, for the model
    built on the meta device from its config: a local folder, or the published architecture omniaudit ships), and
    the activations at the recipe's sequence length and micro-batch (docs/memory.md's formula; video recipes: the
    clip's tokens from the processor config). Estimated, never measured; nothing is downloaded or allocated.
    """
    from omniaudit.memory_plan import Setup, make_plan
    from omniaudit.memory_tables import plan_lines

    plan = make_plan(args.recipe, Setup(args.gpus, args.zero, args.offload), model=args.model)
    print("\n".join(plan_lines(plan)))


def register(groups: common.Groups) -> None:
    p = common.command(groups.top, "plan", cmd_plan)
    p.add_argument("recipe", metavar="RECIPE", help="packaged recipe FOLDER/NAME (recipe: optional; `omniaudit "
                                                    "recipes list`) or a recipe file")
    p.add_argument("--gpus", type=positive_int, default=8, help="GPUs in the node (default 8)")
    p.add_argument("--zero", type=int, choices=(2, 3), default=3, help="DeepSpeed ZeRO stage (default 3)")
    p.add_argument("--offload", action="store_true",
                   help="CPU offload: ZeRO-3 parameters and optimizer (accelerate_configs/zero3_offload.yaml), "
                        "ZeRO-2 the optimizer")
    p.add_argument("--model", metavar="PATH_OR_ID",
                   help="the model to plan for instead of the recipe's model_name_or_path: a local model folder or "
                        "a published id omniaudit ships the architecture of (e.g. Qwen/Qwen2.5-Omni-3B)")
