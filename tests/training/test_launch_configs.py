"""`accelerate launch --config_file accelerate_configs/zero3.yaml --num_processes 1 training/dpo.py
--config training/recipes/tiny/dpo.yaml` failed after minutes ("ds bf16.enabled=True vs hf bf16 ... False"). Every
launch config's precision matches the recipes it is for, a CPU ZeRO-3 config runs the tiny recipes, and a mismatch
is refused before any model is loaded."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import yaml
from test_training import BIN, RECIPES, REPO, SCRIPTS, env, ok

from omniaudit.errors import InputError
from omniaudit.training.common import check_launch_precision

CONFIGS = sorted((REPO / "accelerate_configs").glob("*.yaml"))


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def precision(recipe: dict) -> str:
    return "bf16" if recipe.get("bf16") else "fp16" if recipe.get("fp16") else "no"


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.name)
def test_every_launch_config_has_the_precision_of_the_recipes_it_runs(config):
    """CPU configs run the tiny recipes (full precision); GPU configs the real ones (bf16)."""
    cfg = load(config)
    mixed = str(cfg.get("mixed_precision", "no"))
    recipes = sorted((REPO / "training/recipes").glob("*/*.yaml"))
    tiny = [r for r in recipes if r.parent.name == "tiny"]
    claimed = tiny if cfg.get("use_cpu") else [r for r in recipes if r not in tiny]
    assert claimed
    for recipe in claimed:
        assert precision(load(recipe)) == mixed, (config.name, recipe.relative_to(REPO), mixed)
    if cfg.get("distributed_type") == "DEEPSPEED" and cfg.get("use_cpu"):
        assert cfg["deepspeed_config"]["zero_stage"] == 3 and mixed == "no"


def test_zero3_cpu_config_exists_for_the_tiny_recipes():
    cfg = load(REPO / "accelerate_configs/zero3_cpu.yaml")
    assert cfg["distributed_type"] == "DEEPSPEED" and cfg["use_cpu"] and cfg["mixed_precision"] == "no"


class Args:
    def __init__(self, bf16=False, fp16=False, deepspeed=None):
        self.bf16, self.fp16, self.deepspeed = bf16, fp16, deepspeed


def test_a_precision_mismatch_is_refused_before_loading():
    ds = {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_MIXED_PRECISION": "bf16"}
    with pytest.raises(InputError, match=r"runs DeepSpeed in bf16 .* but the recipe trains in full precision .*"
                                         r"accelerate_configs/zero3_cpu.yaml"):
        check_launch_precision((object(), Args()), ds)
    check_launch_precision((Args(bf16=True),), ds)  # the recipe's precision is the launcher's
    check_launch_precision((Args(deepspeed="ds.json"),), ds)  # its own DeepSpeed JSON decides
    check_launch_precision((Args(),), {**ds, "ACCELERATE_MIXED_PRECISION": "no"})  # zero3_cpu.yaml
    check_launch_precision((Args(),), {"ACCELERATE_MIXED_PRECISION": "bf16"})  # no DeepSpeed: not checked


def launch(root: Path, config: str, out: Path, *extra: str) -> tuple[subprocess.CompletedProcess, float]:
    cmd = [str(BIN / "accelerate"), "launch", "--config_file", str(REPO / "accelerate_configs" / config), *extra,
           str(REPO / "training" / SCRIPTS["dpo"]), "--config", str(RECIPES / "dpo.yaml"), "--output_dir", str(out),
           "--max_steps", "1", "--save_strategy", "no"]
    start = time.monotonic()
    result = subprocess.run(cmd, cwd=root, env=env(TRANSFORMERS_VERBOSITY="info"), capture_output=True, text=True,
                            timeout=600)
    return result, time.monotonic() - start


@pytest.mark.slow
def test_tiny_dpo_under_zero3_on_cpu_and_the_gpu_config_refused_at_once(tiny_root, tmp_path):
    result, _ = launch(tiny_root, "zero3_cpu.yaml", tmp_path / "zero3_cpu")
    ok(result)
    assert "activating zero.init() for this model" in result.stdout + result.stderr  # ZeRO-3 partitioned
    assert (tmp_path / "zero3_cpu" / "adapter_model.safetensors").is_file()
    result, seconds = launch(tiny_root, "zero3.yaml", tmp_path / "zero3", "--num_processes", "1")
    assert result.returncode != 0
    assert "error: the accelerate launch config runs DeepSpeed in bf16" in result.stderr
    assert "bf16.enabled=True vs hf" not in result.stderr  # refused before DeepSpeed's own check, minutes in
    assert seconds < 120, seconds
