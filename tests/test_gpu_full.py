"""``scripts/gpu_check.sh --full`` (benchmarks/gpu_full.py) on a machine without a GPU: it says it is skipped and exits
0; its setup holds (the shipped 7B config builds the 7B thinker's shapes) and the commands it would run are
well-formed (every file they name exists, the judge command parses, the launch line's keys are the scripts')."""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("gpu_full", ROOT / "benchmarks" / "gpu_full.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_a_gpu_the_full_check_is_skipped_with_exit_0(tmp_path):
    if shutil.which("nvidia-smi") or Path("/usr/bin/nvidia-smi").exists():
        pytest.skip("a GPU machine: the full check would run (scripts/gpu_check.sh --full)")
    env = {**os.environ, "PATH": f"{tmp_path}:/usr/bin:/bin"}  # no nvidia-smi on this PATH
    done = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh"), "--full"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "no GPU here" in done.stdout and "skipped" in done.stdout


def test_the_setup_is_the_7b_thinker():
    pytest.importorskip("deepspeed")
    shapes = _module().check_setup()
    assert shapes == {"hidden": 3584, "layers": 28, "q_dim": 3584, "kv_dim": 512, "intermediate": 18944,
                      "params": 8_931_813_888}


def test_the_commands_it_would_run_are_well_formed(tmp_path):
    from omniaudit.cli import build_parser

    gpu_full = _module()
    commands = gpu_full.commands(tmp_path, python=sys.executable, items=4, steps=10)
    assert set(commands) == {"data", "judge-text", "judge-media", "dpo"}
    for name in ("data", "judge-text", "judge-media"):
        command = commands[name]
        assert command[:3] == [sys.executable, "-m", "omniaudit"]
        build_parser().parse_args(command[3:])  # exits on an unknown flag
    launch = commands["dpo"]
    assert Path(launch[0]).name == "accelerate" and launch[1] == "launch"
    assert shlex.split(shlex.join(launch)) == launch
    options = dict(zip(launch[2:], launch[3:], strict=False))
    assert (ROOT / options["--config_file"]).is_file() and options["--num_processes"] == "1"
    assert yaml.safe_load((ROOT / options["--config_file"]).read_text())["deepspeed_config"]["zero_stage"] == 3
    script = next(a for a in launch if a.endswith(".py"))
    assert (ROOT / script).is_file() and script == "training/dpo.py"
    recipe = yaml.safe_load((ROOT / options["--config"]).read_text())
    assert recipe["use_peft"] and options["--max_steps"] == "10"
    assert options["--model_name_or_path"] == str(tmp_path / "omni7b")
    # every key the launch sets is one the recipe sets, or a training argument the check needs
    keys = {a[2:] for a in launch[launch.index(script) + 1:] if a.startswith("--")}
    assert keys - set(recipe) <= {"config", "dataset_name", "output_dir", "lora_target_modules"}


@pytest.mark.slow  # imports TRL and builds the training arguments: ~10 s
def test_the_launch_line_parses_with_the_dpo_script_s_parser(tmp_path, monkeypatch):
    pytest.importorskip("trl")
    from trl import DPOConfig, ModelConfig

    from omniaudit.training.common import DataArguments, parse
    from omniaudit.training.sft import MediaArguments

    launch = _module().commands(tmp_path)["dpo"]
    argv = launch[launch.index("training/dpo.py") + 1:]
    argv[argv.index("--config") + 1] = str(ROOT / argv[argv.index("--config") + 1])
    argv[argv.index("--bf16") + 1], argv[argv.index("--use_cpu") + 1] = "false", "true"  # no GPU here
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "no")
    data, training, model, media = parse((DataArguments, DPOConfig, ModelConfig, MediaArguments), argv)
    assert training.max_steps == 10 and training.gradient_checkpointing and model.lora_r == 16
    assert model.lora_target_modules == ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
