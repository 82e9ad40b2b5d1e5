"""The training scripts on CPU with tiny models, offline, through the real ``accelerate launch`` (and torchrun)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from omniaudit.cli import main as omniaudit

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
RECIPES = REPO / "training" / "recipes" / "tiny"
SCRIPTS = {"sft": "sft.py", "sft_omni": "sft.py", "dpo": "dpo.py", "dpo_omni": "dpo.py",
           "reward_odin": "reward_odin.py", "pairwise_judge": "pairwise_judge.py"}


@pytest.fixture(scope="session")
def tiny_root(tmp_path_factory):
    """A working folder holding runs/tiny exactly as `omniaudit tiny-models` writes it."""
    root = tmp_path_factory.mktemp("train")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert omniaudit(["tiny-models"]) == 0
    finally:
        os.chdir(cwd)
    return root


def env(**extra) -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline", "TOKENIZERS_PARALLELISM": "false",
            "TORCH_EXTENSIONS_DIR": str(Path(sys.prefix) / "torch_extensions"), **extra}


def launch(root: Path, recipe: str, out: Path, *extra: str, config: str = "cpu.yaml", timeout: int = 600,
           **env_extra) -> subprocess.CompletedProcess:
    port = ["--main_process_port", free_port()] if config != "cpu.yaml" else []  # several processes: a free port
    cmd = [str(BIN / "accelerate"), "launch", "--config_file", str(REPO / "accelerate_configs" / config), *port,
           str(REPO / "training" / SCRIPTS[recipe]), "--config", str(RECIPES / f"{recipe}.yaml"),
           "--output_dir", str(out), *extra]
    return subprocess.run(cmd, cwd=root, env=env(**env_extra), capture_output=True, text=True, timeout=timeout)


def free_port() -> str:
    """A free local port, so parallel test runs never collide on torchrun's default 29500."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr[-4000:]
    return result


@pytest.mark.parametrize("recipe", list(SCRIPTS))
def test_every_tiny_recipe_runs_through_accelerate_launch(tiny_root, tmp_path, recipe):
    out = tmp_path / recipe
    ok(launch(tiny_root, recipe, out))
    files = {p.name for p in out.iterdir()}
    assert files & {"model.safetensors", "adapter_model.safetensors"}, files
    if recipe == "reward_odin":
        metrics = json.loads((out / "odin_metrics.json").read_text())
        assert {"rho_content_length", "rho_content_prior", "rho_length_head_length",
                "rho_prior_head_prior"} <= set(metrics)
    if recipe in ("reward_odin", "pairwise_judge"):
        pred = pd.read_csv(out / "predictions.csv")
        assert list(pred.columns) == ["id", "order", "p_a1"] and pred["p_a1"].between(0, 1).all()


def test_a_run_resumes_from_its_last_checkpoint(tiny_root, tmp_path):
    out = tmp_path / "sft"
    ok(launch(tiny_root, "sft", out))
    state = json.loads((out / "checkpoint-2" / "trainer_state.json").read_text())
    assert state["global_step"] == 2
    (out / "checkpoint-4").rename(tmp_path / "lost")  # the crash took the last two steps with it
    result = ok(launch(tiny_root, "sft", out, "--resume_from_checkpoint", str(out / "checkpoint-2"),
                       TRANSFORMERS_VERBOSITY="info"))
    assert json.loads((out / "checkpoint-4" / "trainer_state.json").read_text())["global_step"] == 4
    assert f"Loading model from {out / 'checkpoint-2'}" in result.stdout + result.stderr


def test_the_lora_adapter_reloads(tiny_root, tmp_path):
    import torch
    from peft import PeftModel
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    out = tmp_path / "dpo"
    ok(launch(tiny_root, "dpo", out))
    base = AutoModelForCausalLM.from_pretrained(tiny_root / "runs/tiny/causal_lm")
    model = PeftModel.from_pretrained(base, out)
    saved = load_file(out / "adapter_model.safetensors")
    name, tensor = next((k, v) for k, v in saved.items() if "lora_B" in k)
    loaded = dict(model.named_parameters())[name.replace(".weight", ".default.weight")]
    assert torch.equal(loaded.detach(), tensor) and tensor.abs().sum() > 0  # trained, saved, reloaded
    assert model(torch.tensor([[1, 2, 3]])).logits.shape[-1] == base.config.vocab_size


def test_pairwise_judge_dual_order_is_order_invariant():
    from omniaudit.training.pairwise_judge import dual_order_p_a1

    rng = np.random.default_rng(0)
    p_ab, p_ba = rng.random(50), rng.random(50)  # P(slot A) with a1 first, and with a2 first
    p_a1 = dual_order_p_a1(p_ab, p_ba)
    p_a2 = dual_order_p_a1(p_ba, p_ab)  # the same pairs presented the other way round
    np.testing.assert_allclose(p_a1 + p_a2, 1.0)


def test_out_of_fold_predictions_feed_the_preference_audit(tiny_root, tmp_path):
    out = tmp_path / "judge"
    ok(launch(tiny_root, "pairwise_judge", out, "--eval_folds", "all", "--max_train_samples", "100000",
              "--max_steps", "2", "--save_strategy", "no"))
    assert omniaudit(["audit", "preference", "--data", str(tiny_root / "runs/tiny/data/preference"), "--judges",
                      str(out / "predictions.csv"), "--out", str(tmp_path / "audit"), "--n-resamples", "200",
                      "--no-source-classifier", "--no-controls"]) == 0
    audit = json.loads((tmp_path / "audit" / "audit.json").read_text())
    assert "predictions" in audit["predictors"]


def length_dataset(root: Path) -> Path:
    """Pairs whose label is the longer description: length alone predicts every label."""
    from omniaudit.data_builders.hub import configs_metadata, write_hub_dataset
    from omniaudit.hub_cards import dataset_card

    rng = np.random.default_rng(0)
    words = ["calm", "happy", "sad", "angry", "face", "voice", "worried", "the", "a", "bright", "low", "loud"]
    rows = []
    for i in range(600):
        n1, n2 = rng.integers(2, 40, size=2)
        while n1 == n2:
            n2 = rng.integers(2, 40)
        a1, a2 = (" ".join(rng.choice(words, n)) for n in (n1, n2))
        rows.append({"id": f"p{i}", "a1": a1, "a2": a2, "preference": "a1" if len(a1) > len(a2) else "a2",
                     "fold": i % 5, "len1": len(a1), "len2": len(a2), "model1": "g1", "model2": "g2"})
    out = root / "length_pairs"
    card = dataset_card("tiny_chat.md.j2", {"configs": configs_metadata({"pairs": ["train"]})})
    write_hub_dataset(out, {"pairs": {"train": pd.DataFrame(rows)}}, card)
    return out


def test_decorrelation_drives_the_content_head_off_length(tiny_root, tmp_path):
    data = length_dataset(tmp_path)
    rho = {}
    for lam in (0, 1):
        out = tmp_path / f"odin{lam}"
        ok(launch(tiny_root, "reward_odin", out, "--dataset_name", str(data), "--lambda_dec", str(lam),
                  "--max_steps", "80", "--max_train_samples", "100000", "--save_strategy", "no",
                  "--logging_steps", "40", "--use_peft", "false", "--learning_rate", "3e-3"))
        rho[lam] = abs(json.loads((out / "odin_metrics.json").read_text())["rho_content_length"])
    assert rho[0] > 0.3, rho  # without decorrelation the content head learns length
    assert rho[1] < rho[0] / 2, rho  # with it, far less


def test_odin_correlations_under_two_processes_equal_one_process(tmp_path):
    out = tmp_path / "ddp.json"
    cmd = [str(BIN / "torchrun"), "--nproc_per_node", "2", "--master_port", free_port(),
           str(REPO / "tests/training/odin_ddp_check.py"), str(out)]
    result = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    check = json.loads(out.read_text())
    assert check["world"] == 2
    for key, value in check["rho_single"].items():
        assert check["rho_parallel"][key] == pytest.approx(value, abs=1e-6)
    assert check["max_grad_diff"] < 1e-5


def test_reward_odin_runs_data_parallel_with_two_cpu_processes(tiny_root, tmp_path):
    out = tmp_path / "odin2"
    result = ok(launch(tiny_root, "reward_odin", out, "--save_strategy", "no", config="cpu_2proc.yaml",
                       TRANSFORMERS_VERBOSITY="info"))
    assert (out / "odin_metrics.json").exists()
    # two processes of batch 8: the global batch the correlations are computed over is 16 pairs
    assert "Total train batch size (w. parallel, distributed & accumulation) = 16" in result.stdout + result.stderr


@pytest.mark.parametrize(("extra", "message"), [
    (["--no_such_key", "1"], "no_such_key"),
    (["--dataset_name", "runs/tiny/data/chat", "--dataset_config", "dpo"], "lacks column(s) ['a1', 'a2'"),
    (["--dataset_config", "dpo"], "BuilderConfig 'dpo' not found"),
])
def test_bad_input_fails_before_training_naming_it(tiny_root, tmp_path, extra, message):
    result = launch(tiny_root, "reward_odin", tmp_path / "bad", *extra)
    assert result.returncode != 0 and message in result.stderr, result.stderr[-2000:]
    assert not (tmp_path / "bad" / "checkpoint-3").exists()


def test_unknown_recipe_key_and_missing_chat_template(tiny_root, tmp_path):
    recipe = tmp_path / "bad.yaml"
    recipe.write_text((RECIPES / "sft.yaml").read_text() + "learning_rat: 0.1\n")
    cmd = [sys.executable, str(REPO / "training/sft.py"), "--config", str(recipe), "--output_dir", str(tmp_path / "o")]
    result = subprocess.run(cmd, cwd=tiny_root, env=env(), capture_output=True, text=True, timeout=300)
    assert result.returncode != 0 and "learning_rat" in result.stderr
    no_template = tmp_path / "lm"
    import shutil

    shutil.copytree(tiny_root / "runs/tiny/causal_lm", no_template)
    (no_template / "chat_template.jinja").unlink()
    config = json.loads((no_template / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (no_template / "tokenizer_config.json").write_text(json.dumps(config))
    cmd = [sys.executable, str(REPO / "training/sft.py"), "--config", str(RECIPES / "sft.yaml"), "--output_dir",
           str(tmp_path / "o2"), "--model_name_or_path", str(no_template)]
    result = subprocess.run(cmd, cwd=tiny_root, env=env(), capture_output=True, text=True, timeout=300)
    assert result.returncode != 0 and "no chat template" in result.stderr


def test_wandb_offline_tracking(tiny_root, tmp_path):
    out = tmp_path / "tracked"
    ok(launch(tiny_root, "reward_odin", out, "--report_to", "wandb", "--run_name", "tiny-odin",
              WANDB_DIR=str(tmp_path), WANDB_PROJECT="omniaudit-tests"))
    runs = list((tmp_path / "wandb").glob("offline-run-*"))
    assert runs and any(p.suffix == ".wandb" for p in runs[0].iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("ds_config", ["ds_zero3.json", "ds_zero3_offload.json"])
@pytest.mark.parametrize("recipe", ["dpo", "reward_odin"])
def test_deepspeed_zero3_two_cpu_processes(tiny_root, tmp_path, recipe, ds_config):
    out = tmp_path / f"{recipe}_{ds_config}"
    cmd = [str(BIN / "torchrun"), "--nproc_per_node", "2", "--master_port", free_port(),
           str(REPO / "training" / SCRIPTS[recipe]), "--config",
           str(RECIPES / f"{recipe}.yaml"), "--output_dir", str(out), "--save_strategy", "no",
           "--deepspeed", str(REPO / "tests/training/fixtures" / ds_config), "--max_steps", "2"]
    result = subprocess.run(cmd, cwd=tiny_root, env=env(TRANSFORMERS_VERBOSITY="info"), capture_output=True,
                            text=True, timeout=900)
    log = result.stdout + result.stderr
    assert result.returncode == 0, result.stderr[-4000:]
    assert log.count("DeepSpeed ZeRO-3: activating zero.init() for this model") >= 2  # partitioned on both ranks
    per_device = 4 if recipe == "dpo" else 8
    assert f"Total train batch size (w. parallel, distributed & accumulation) = {2 * per_device}" in log


def omni_batch_inputs(root: Path):
    import pyarrow.parquet as pq
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(root / "runs/tiny/omni")
    data = root / "runs/tiny/data/interventions"
    sft = pq.read_table(sorted((data / "sft").glob("*.parquet"))).to_pylist()[:2]
    dpo = pq.read_table(sorted((data / "dpo").glob("*.parquet"))).to_pylist()[:2]
    return processor, sft, dpo


def test_omni_collators_mask_media_and_truncate_only_text(tiny_root):
    import torch

    from omniaudit.errors import InputError
    from omniaudit.training.collators import OmniDPOCollator, OmniSFTCollator

    processor, sft, dpo = omni_batch_inputs(tiny_root)
    collator = OmniSFTCollator(processor, fps=1.0, max_frames=4)
    batch = collator(sft)
    media = torch.isin(batch["input_ids"], torch.tensor(sorted(collator.media_ids)))
    assert media.any() and (batch["labels"][media] == -100).all()  # media placeholders are never targets
    assert batch["input_features"].shape[0] == 2 and batch["video_grid_thw"].shape[0] == 2
    answer = processor.tokenizer(sft[0]["messages"][-1]["content"][0]["text"], add_special_tokens=False).input_ids
    kept = batch["labels"][0][batch["labels"][0] != -100].tolist()
    assert kept[: len(answer)] == answer  # the labels are exactly the answer (+ end of turn)
    last_media = int(torch.nonzero(media[0]).max()) + 1
    short = OmniSFTCollator(processor, fps=1.0, max_frames=4, max_length=last_media + 3)(sft[:1])
    assert short["input_ids"].shape[1] == last_media + 3  # text after the media was cut, the media kept whole
    with pytest.raises(InputError, match="media take"):
        OmniSFTCollator(processor, fps=1.0, max_frames=4, max_length=last_media - 5)(sft[:1])
    pairs = OmniDPOCollator(processor, fps=1.0, max_frames=4)(dpo)
    assert pairs["input_ids"].shape[0] == 4 and pairs["video_grid_thw"].shape[0] == 4  # [chosen; rejected]
    assert pairs["input_features"].shape[0] == 4 and pairs["completion_mask"].sum() > 0
    chosen, rejected = pairs["completion_mask"][:2], pairs["completion_mask"][2:]
    assert (chosen.sum(1) > 0).all() and (rejected.sum(1) > 0).all()


def test_omni_training_updates_every_tower(tiny_root):
    from transformers import AutoModelForMultimodalLM

    from omniaudit.training.collators import OmniSFTCollator

    processor, sft, _ = omni_batch_inputs(tiny_root)
    model = AutoModelForMultimodalLM.from_pretrained(tiny_root / "runs/tiny/omni")
    batch = OmniSFTCollator(processor, fps=1.0, max_frames=4)(sft)
    model(**batch).loss.backward()
    grads = {name for name, p in model.named_parameters() if p.grad is not None and p.grad.abs().sum() > 0}
    for tower in ("audio_tower", "visual", "language_model"):  # audio, vision and text all receive gradient
        assert any(f".{tower}." in f".{name}" for name in grads), tower


def test_odin_priors_come_from_the_training_folds_only():
    from omniaudit.training.reward_odin import records, training_prior

    rows = [{"id": "a", "a1": "x", "a2": "y", "preference": "a1", "fold": 0, "len1": 1, "len2": 1, "model1": "g",
             "model2": "h"},
            {"id": "b", "a1": "x", "a2": "y", "preference": "a2", "fold": 1, "len1": 1, "len2": 1, "model1": "g",
             "model2": "h"}]
    assert training_prior(rows, {1}) == {"g": 1.0, "h": 0.0}  # fold 1 (held out) never counts
    held = records(rows, {1}, held_out=True)
    assert held[0]["prior_1"] == 1.0 and held[0]["prior_2"] == 0.0
