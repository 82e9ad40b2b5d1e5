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
from wandb_records import parsed_records

from omniaudit.cli import main as omniaudit

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
RECIPES = REPO / "training" / "recipes" / "tiny"
# judge_omni and reward_odin_omni_control read the preference clips that `omniaudit tiny-models` writes
SCRIPTS = {"sft": "sft.py", "sft_omni": "sft.py", "dpo": "dpo.py", "dpo_omni": "dpo.py",
           "reward_odin": "reward_odin.py", "pairwise_judge": "pairwise_judge.py",
           "judge_omni": "sft.py", "reward_odin_omni_control": "reward_odin.py"}


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


@pytest.fixture(scope="module")
def recipe_run(tiny_root, tmp_path_factory):
    """``recipe_run(recipe)``: the tiny recipe launched with its own settings, once for the tests that read that run
    (a test that changes the run works on a copy); returns its output folder."""
    root, runs = tmp_path_factory.mktemp("recipes"), {}

    def run(recipe: str) -> Path:
        if recipe not in runs:
            ok(launch(tiny_root, recipe, root / recipe))
            runs[recipe] = root / recipe
        return runs[recipe]

    return run


@pytest.mark.parametrize("recipe", list(SCRIPTS))
@pytest.mark.slow
def test_every_tiny_recipe_runs_through_accelerate_launch(recipe_run, recipe):
    out = recipe_run(recipe)
    files = {p.name for p in out.iterdir()}
    assert files & {"model.safetensors", "adapter_model.safetensors"}, files
    if recipe == "reward_odin":
        metrics = json.loads((out / "odin_metrics.json").read_text())
        assert {"rho_content_length", "rho_content_prior", "rho_length_head_length",
                "rho_prior_head_prior"} <= set(metrics)
    if recipe in ("reward_odin", "pairwise_judge"):
        pred = pd.read_csv(out / "predictions.csv")
        assert list(pred.columns) == ["id", "order", "p_a1"] and pred["p_a1"].between(0, 1).all()
    if recipe == "dpo_omni":  # LoRA q/k/v/o in the thinker's language model, not in the audio encoder's q/k/v
        from safetensors.torch import load_file

        keys = list(load_file(out / "adapter_model.safetensors"))
        assert keys and all(".language_model." in k for k in keys), [k for k in keys if "language_model" not in k]


@pytest.mark.parametrize("recipe", ["reward_odin", "pairwise_judge"])  # the scripts that build their own heads
@pytest.mark.slow
def test_the_same_seed_trains_the_same_weights(tiny_root, recipe_run, tmp_path, recipe):
    first, second = recipe_run(recipe), tmp_path / "second"  # the recipe's run (shared above), then the same again
    ok(launch(tiny_root, recipe, second))
    weights = [{f.name: f.read_bytes() for f in sorted(out.glob("*.safetensors"))} for out in (first, second)]
    assert weights[0] and weights[0] == weights[1]  # heads and LoRA initialised under the seed, not at random


@pytest.mark.slow
def test_a_run_resumes_from_its_last_checkpoint(tiny_root, recipe_run, tmp_path):
    import shutil

    out = tmp_path / "sft"
    shutil.copytree(recipe_run("sft"), out)  # the recipe's run (4 steps, a checkpoint every 2), copied
    state = json.loads((out / "checkpoint-2" / "trainer_state.json").read_text())
    assert state["global_step"] == 2
    (out / "checkpoint-4").rename(tmp_path / "lost")  # the crash took the last two steps with it
    # `true`: the last checkpoint in the output folder (TrainingArguments keeps it as the string "true")
    result = ok(launch(tiny_root, "sft", out, "--resume_from_checkpoint", "true", TRANSFORMERS_VERBOSITY="info"))
    assert json.loads((out / "checkpoint-4" / "trainer_state.json").read_text())["global_step"] == 4
    assert f"Loading model from {out / 'checkpoint-2'}" in result.stdout + result.stderr


def test_resume_point_is_the_runs_or_the_folds_own_checkpoint(tmp_path):
    from omniaudit.errors import InputError
    from omniaudit.training.common import resume_point

    def checkpoint(folder: Path, step: int) -> Path:
        path = folder / f"checkpoint-{step}"
        path.mkdir(parents=True)
        (path / "trainer_state.json").write_text(json.dumps({"global_step": step}))
        return path

    run = tmp_path / "run"
    assert resume_point("true", run) is None  # nothing to resume yet: start afresh
    c2, c10 = checkpoint(run, 2), checkpoint(run, 10)
    assert resume_point("true", run) == resume_point(True, run) == resume_point("auto", run) == str(c10)
    assert resume_point(None, run) is None and resume_point("false", run) is None
    assert resume_point(str(c2), run) == str(c2)  # an explicit checkpoint
    assert resume_point(str(run), run) == str(c10)  # a run folder: its last checkpoint
    with pytest.raises(InputError, match="resume_from_checkpoint"):
        resume_point(str(tmp_path / "nowhere"), run)
    with pytest.raises(InputError, match="holds no checkpoint"):
        resume_point(str(tmp_path), run)
    # several folds: each resumes from its own last checkpoint; a checkpoint path serves its own fold only
    folds = tmp_path / "cv"
    f0, f1 = checkpoint(folds / "fold0", 4), checkpoint(folds / "fold1", 2)
    checkpoint(folds / "fold1", 1)
    assert resume_point("true", folds, folds / "fold0") == str(f0)
    assert resume_point("true", folds, folds / "fold1") == str(f1)
    assert resume_point("true", folds, folds / "fold2") is None  # not started yet
    early = folds / "fold1" / "checkpoint-1"
    assert resume_point(str(early), folds, folds / "fold1") == str(early)
    assert resume_point(str(early), folds, folds / "fold0") == str(f0)
    assert resume_point(str(folds), folds, folds / "fold1") == str(f1)
    with pytest.raises(InputError, match="inside its fold folders"):
        resume_point(str(c2), folds, folds / "fold0")


@pytest.mark.slow
def test_the_lora_adapter_reloads(tiny_root, recipe_run):
    import torch
    from peft import PeftModel
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    out = recipe_run("dpo")
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


@pytest.mark.slow
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


@pytest.mark.slow
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
    # with it, far less (seeded, so the same every run: 0.008 against 0.94; before the heads were initialised under
    # the seed the two fits varied from run to run, and lambda 1 once measured 0.46 against 0.86)
    assert rho[1] < 0.5 * rho[0], rho
    # a full fine-tuning run saves trunk + heads, and load_odin gives back the rewards it predicted
    import datasets
    from transformers import AutoTokenizer

    from omniaudit.training.odin import load_odin
    from omniaudit.training.reward_odin import records

    model = load_odin(tmp_path / "odin1", base_model=str(tiny_root / "runs/tiny/causal_lm"))
    held = records(datasets.load_dataset(str(data), "pairs", split="train"), {0}, held_out=True)[:6]
    predicted = pd.read_csv(tmp_path / "odin1" / "predictions.csv").set_index("id").loc[[r["id"] for r in held]]
    np.testing.assert_allclose(odin_p_a1(model, AutoTokenizer.from_pretrained(tiny_root / "runs/tiny/causal_lm"),
                                         held), predicted["p_a1"], atol=1e-6)


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


@pytest.mark.slow
def test_reward_odin_runs_data_parallel_with_two_cpu_processes(tiny_root, tmp_path):
    out = tmp_path / "odin2"
    result = ok(launch(tiny_root, "reward_odin", out, "--save_strategy", "no", config="cpu_2proc.yaml",
                       TRANSFORMERS_VERBOSITY="info"))
    assert (out / "odin_metrics.json").exists()
    # two processes of batch 8: the global batch the correlations are computed over is 16 pairs
    assert "Total train batch size (w. parallel, distributed & accumulation) = 16" in result.stdout + result.stderr


BAD_INPUT = [
    (["--no_such_key", "1"], "no_such_key"),
    (["--dataset_name", "runs/tiny/data/chat", "--dataset_config", "dpo"], "lacks column(s) ['a1', 'a2'"),
    (["--dataset_config", "dpo"], "no config 'dpo' in this dataset; its card lists ['judge', 'pairs']"),
]


def script_main(script: str, arguments: tuple, argv: list[str]) -> None:
    """``training/<script>.py`` in this process, parsed as its ``__main__`` parses ``argv`` (the recipe's relative
    paths resolve against the working folder) and exiting as it does: ``SystemExit("error: ...")`` on bad input."""
    import importlib

    from omniaudit.errors import InputError
    from omniaudit.training.common import parse

    try:
        importlib.import_module(f"omniaudit.training.{script}").main(*parse(arguments, argv))
    except InputError as exc:
        sys.exit(f"error: {exc}")


@pytest.mark.slow
def test_bad_input_fails_before_training_naming_it(tiny_root, tmp_path, monkeypatch):
    """Through `accelerate launch` once (the run exits non-zero naming the bad input, before any checkpoint), then
    every bad input through the script's entry point in this process (the same checks, without a launch each)."""
    import re

    from transformers import TrainingArguments
    from trl import ModelConfig

    from omniaudit.training.common import DataArguments
    from omniaudit.training.reward_odin import OdinArguments

    extra, message = BAD_INPUT[-1]
    result = launch(tiny_root, "reward_odin", tmp_path / "bad", *extra)
    assert result.returncode != 0 and message in result.stderr, result.stderr[-2000:]
    assert not (tmp_path / "bad" / "checkpoint-3").exists()
    monkeypatch.chdir(tiny_root)
    for i, (extra, message) in enumerate(BAD_INPUT):
        out = tmp_path / f"bad{i}"
        with pytest.raises(SystemExit, match=re.escape(message)):
            script_main("reward_odin", (DataArguments, TrainingArguments, ModelConfig, OdinArguments),
                        ["--config", str(RECIPES / "reward_odin.yaml"), "--output_dir", str(out), *extra])
        assert not (out / "checkpoint-3").exists()


def test_unknown_recipe_key_and_missing_chat_template(tiny_root, tmp_path, monkeypatch):
    """Both through the script's entry point in this process (a launch that exits naming its bad input is
    test_bad_input_fails_before_training_naming_it's): an unknown recipe key exits naming it, a model without a chat
    template exits saying so."""
    from trl import ModelConfig, SFTConfig

    from omniaudit.training.common import DataArguments
    from omniaudit.training.sft import MediaArguments

    arguments = (DataArguments, SFTConfig, ModelConfig, MediaArguments)
    recipe = tmp_path / "bad.yaml"
    recipe.write_text((RECIPES / "sft.yaml").read_text() + "learning_rat: 0.1\n")
    monkeypatch.chdir(tiny_root)
    with pytest.raises(SystemExit, match="learning_rat"):
        script_main("sft", arguments, ["--config", str(recipe), "--output_dir", str(tmp_path / "o")])
    no_template = tmp_path / "lm"
    import shutil

    shutil.copytree(tiny_root / "runs/tiny/causal_lm", no_template)
    (no_template / "chat_template.jinja").unlink()
    config = json.loads((no_template / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (no_template / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(SystemExit, match="no chat template"):
        script_main("sft", arguments, ["--config", str(RECIPES / "sft.yaml"), "--output_dir", str(tmp_path / "o2"),
                                       "--model_name_or_path", str(no_template)])


ODIN_FOLDS = ("--eval_folds", "0,1", "--max_steps", "4", "--save_steps", "2")  # LoRA + heads, two folds


@pytest.fixture(scope="module")
def odin_folds(tiny_root, tmp_path_factory) -> tuple[Path, Path]:
    """One launch of ODIN with LoRA on two folds (4 steps, a checkpoint every 2), tracked by wandb offline with a
    record per step: the run the per-fold saving and resuming test copies, and the one the tracking test reads (one
    launch for both, not one each); (output folder, WANDB_DIR)."""
    root = tmp_path_factory.mktemp("odin-folds")
    ok(launch(tiny_root, "reward_odin", root / "odin", *ODIN_FOLDS, "--report_to", "wandb", "--run_name", "tiny-odin",
              "--logging_steps", "1", WANDB_DIR=str(root), WANDB_PROJECT="omniaudit-tests"))
    return root / "odin", root


@pytest.mark.slow
def test_wandb_offline_tracking_one_run_per_fold(odin_folds):
    _, wandb_dir = odin_folds
    runs = {}
    for folder in (wandb_dir / "wandb").glob("offline-run-*"):
        name, group, history = None, None, []
        for record in parsed_records(next(folder.glob("*.wandb"))):
            if record.WhichOneof("record_type") == "run":
                name, group = record.run.display_name, record.run.run_group
            elif record.WhichOneof("record_type") == "history":
                history.append({item.key or "/".join(item.nested_key): json.loads(item.value_json)
                                for item in record.history.item})
        runs[name] = (group, history)
    assert set(runs) == {"tiny-odin-fold0", "tiny-odin-fold1"}, set(runs)  # not two folds in one run
    for group, history in runs.values():
        keys = set().union(*history)
        assert group == "tiny-odin"
        assert {"train/loss", "train/bt", "train/rho_content_length", "test/rho_content_length"} <= keys, keys
        assert not [k for k in keys if k.startswith("train/train_")]  # no double prefix
        steps = [h["train/global_step"] for h in history if "train/loss" in h]
        assert steps == [1, 2, 3, 4]  # each fold's own steps, once


@pytest.mark.slow
# one launch per script, each DeepSpeed config once (one per path, not one per option): DPO under ZeRO-3 with CPU
# offload, ODIN's LoRA + heads under plain ZeRO-3 (the gathered adapter is checked)
@pytest.mark.parametrize(("recipe", "ds_config"), [("dpo", "ds_zero3_offload.json"), ("reward_odin", "ds_zero3.json")])
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
    if recipe == "reward_odin":  # LoRA under ZeRO-3: the gathered adapter + heads, not the trunk
        from safetensors.torch import load_file

        from omniaudit.training.odin import HEADS_FILE

        files = {p.name for p in out.iterdir()}
        assert {"adapter_model.safetensors", HEADS_FILE} <= files and "model.safetensors" not in files, files
        adapter = load_file(out / "adapter_model.safetensors")
        assert adapter and all("lora_" in k for k in adapter) and all(v.numel() > 0 for v in adapter.values())
        assert load_file(out / HEADS_FILE)["weight"].shape == (3, 64)


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
    answer_start = int(torch.nonzero(batch["labels"][0] != -100).min())
    short = OmniSFTCollator(processor, fps=1.0, max_frames=4, max_length=answer_start + 2)(sft[:1])
    assert short["input_ids"].shape[1] == answer_start + 2  # text after the media was cut, the media kept whole
    assert int((short["labels"] != -100).sum()) == 2
    with pytest.raises(InputError, match="leaves no answer token"):  # not a silent step with zero labels
        OmniSFTCollator(processor, fps=1.0, max_frames=4, max_length=last_media + 3)(sft[:1])
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


def odin_p_a1(model, tokenizer, pairs: list[dict]) -> np.ndarray:
    """p(a1 preferred) of an ODIN model on held-out records (content head only), as reward_odin.py computes it."""
    import torch

    from omniaudit.training.reward_odin import PairCollator

    batch = PairCollator(tokenizer, 64)(pairs)
    with torch.no_grad():
        scores, _ = model(batch["input_ids"], batch["attention_mask"])
    return torch.sigmoid(scores[: len(pairs), 0] - scores[len(pairs):, 0]).numpy()


@pytest.mark.slow
def test_odin_with_lora_saves_adapter_and_heads_reloads_and_resumes_per_fold(tiny_root, odin_folds, tmp_path):
    import shutil

    import datasets
    from safetensors.torch import load_file
    from transformers import AutoTokenizer

    from omniaudit.training.odin import HEADS_FILE, load_odin
    from omniaudit.training.reward_odin import records

    out = tmp_path / "odin"
    shutil.copytree(odin_folds[0], out)  # the module's per-fold run, copied: this test resumes it
    trunk_bytes = (tiny_root / "runs/tiny/causal_lm/model.safetensors").stat().st_size
    for fold in ("fold0", "fold1"):
        for folder in (out / fold, out / fold / "checkpoint-2", out / fold / "checkpoint-4"):
            files = {p.name for p in folder.iterdir()}
            assert {"adapter_model.safetensors", "adapter_config.json", HEADS_FILE} <= files, (folder, files)
            assert "model.safetensors" not in files  # never the (frozen) trunk
            assert (folder / "adapter_model.safetensors").stat().st_size < trunk_bytes / 2
    # the saved adapter + heads give back the rewards the trained model predicted
    model = load_odin(out / "fold1", base_model=str(tiny_root / "runs/tiny/causal_lm"))  # recorded relative to the run
    pairs = datasets.load_dataset(str(tiny_root / "runs/tiny/data/preference"), "pairs", split="train")
    held = records(pairs.select(range(400)), {1}, held_out=True)[:6]
    predicted = pd.read_csv(out / "predictions.csv").set_index("id").loc[[r["id"] for r in held], "p_a1"]
    np.testing.assert_allclose(odin_p_a1(model, AutoTokenizer.from_pretrained(out / "fold1"), held), predicted,
                               atol=1e-6)
    # a crash lost each fold's last checkpoint: `true` resumes every fold from its own, and ends where it would have
    for fold in ("fold0", "fold1"):
        (out / fold / "checkpoint-4").rename(tmp_path / f"lost-{fold}")
    result = ok(launch(tiny_root, "reward_odin", out, *ODIN_FOLDS, "--resume_from_checkpoint", "true",
                       TRANSFORMERS_VERBOSITY="info"))
    log = result.stdout + result.stderr
    assert log.count("Resuming training from checkpoint with epoch 0 and global step 2") == 2, log[-3000:]
    for fold in ("fold0", "fold1"):
        for name in ("adapter_model.safetensors", HEADS_FILE):
            resumed, lost = load_file(out / fold / "checkpoint-4" / name), load_file(tmp_path / f"lost-{fold}" / name)
            assert resumed.keys() == lost.keys()
            assert all(np.array_equal(resumed[k].numpy(), lost[k].numpy()) for k in lost), (fold, name)


def odin_arguments(tiny_root: Path, tmp_path: Path, *extra: str):
    from transformers import TrainingArguments
    from trl import ModelConfig

    from omniaudit.training.common import DataArguments, parse
    from omniaudit.training.reward_odin import OdinArguments

    return parse((DataArguments, TrainingArguments, ModelConfig, OdinArguments),
                 ["--config", str(RECIPES / "reward_odin.yaml"), "--output_dir", str(tmp_path / "o"),
                  "--model_name_or_path", str(tiny_root / "runs/tiny/causal_lm"), *extra])


def test_odin_and_judge_lora_take_trl_options(tiny_root, tmp_path):
    import math

    from transformers import AutoTokenizer

    from omniaudit.training.pairwise_judge import build_model as build_judge
    from omniaudit.training.reward_odin import build_model as build_odin

    _, _, model_args, _ = odin_arguments(tiny_root, tmp_path, "--use_rslora", "true", "--use_dora", "true",
                                         "--lora_modules_to_save", "embed_tokens")
    trunk = build_odin(model_args).trunk
    config = trunk.peft_config["default"]
    assert config.use_rslora and config.use_dora and config.task_type == "FEATURE_EXTRACTION"
    assert "embed_tokens" in config.modules_to_save
    q_proj = trunk.base_model.model.layers[0].self_attn.q_proj
    assert q_proj.scaling["default"] == pytest.approx(16 / math.sqrt(8))  # rsLoRA: alpha / sqrt(r), not alpha / r
    assert "default" in q_proj.lora_magnitude_vector  # DoRA
    linear = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    assert {t.rsplit(".", 1)[-1] for t in config.target_modules} == linear  # all-linear unless told otherwise
    # the judge: the same options; one module name on the command line is a name (TRL makes it a string, which PEFT
    # would read as a regex matching nothing)
    _, _, judge_args, _ = odin_arguments(tiny_root, tmp_path, "--use_rslora", "true", "--lora_target_modules",
                                         "q_proj", "--model_name_or_path", str(tiny_root / "runs/tiny/seq_cls"))
    judge = build_judge(judge_args, AutoTokenizer.from_pretrained(tiny_root / "runs/tiny/seq_cls"))
    config = judge.peft_config["default"]
    assert config.use_rslora and config.task_type == "SEQ_CLS" and config.target_modules == {"q_proj"}
    adapted = {n.split(".lora_")[0].rsplit(".", 1)[-1] for n, _ in judge.named_parameters() if ".lora_" in n}
    assert adapted == {"q_proj"}
    assert any(p.requires_grad for n, p in judge.named_parameters() if "score" in n)  # the head trains in full


def test_odin_gradient_checkpointing_recomputes_the_trunk_with_the_same_gradients(tiny_root, tmp_path):
    import datasets
    import torch
    from transformers import AutoTokenizer, TrainingArguments

    from omniaudit.training.reward_odin import OdinTrainer, PairCollator, build_model, records

    _, _, model_args, _ = odin_arguments(tiny_root, tmp_path, "--lora_dropout", "0")
    pairs = datasets.load_dataset(str(tiny_root / "runs/tiny/data/preference"), "pairs", split="train")
    train = records(pairs.select(range(60)), {0}, held_out=False)[:8]
    tokenizer = AutoTokenizer.from_pretrained(tiny_root / "runs/tiny/causal_lm")
    batch = PairCollator(tokenizer, 64)(train)

    def step(model) -> tuple[int, dict]:
        calls = []
        attention = model.trunk.base_model.model.layers[0].self_attn  # recomputed in the backward pass if checkpointed
        handle = attention.register_forward_hook(lambda *_: calls.append(1))
        model.train()
        scores, orth = model(batch["input_ids"], batch["attention_mask"])
        (scores.sum() + orth).backward()
        handle.remove()
        return len(calls), {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}

    torch.manual_seed(0)
    plain = build_model(model_args)
    torch.manual_seed(0)
    checkpointed = build_model(model_args)
    checkpointed.activation_checkpointing_enable()  # what the Trainer calls for --gradient_checkpointing
    assert checkpointed.is_activation_checkpointing and not plain.is_activation_checkpointing
    calls, grads = step(plain)
    calls_ckpt, grads_ckpt = step(checkpointed)
    assert (calls, calls_ckpt) == (1, 2)  # the layer's attention ran again in the backward pass
    assert grads.keys() == grads_ckpt.keys() and len(grads) > 2
    for name in grads:
        torch.testing.assert_close(grads_ckpt[name], grads[name], rtol=1e-5, atol=1e-7)
    # and through the Trainer (which failed before: OdinRewardModel had no checkpointing entry point)
    args = TrainingArguments(output_dir=str(tmp_path / "gc"), max_steps=1, per_device_train_batch_size=4,
                             gradient_checkpointing=True, use_cpu=True, report_to=[], save_strategy="no",
                             remove_unused_columns=False, disable_tqdm=True)
    trainer = OdinTrainer(model=build_model(model_args), args=args, train_dataset=datasets.Dataset.from_list(train),
                          data_collator=PairCollator(tokenizer, 64))
    assert trainer.train().global_step == 1 and trainer.model.is_activation_checkpointing


def tiny_qwen3_omni_thinker():
    """A tiny Qwen3-Omni MoE thinker from a config (shared/notes/tiny-omni-models.md): fused experts."""
    from transformers import Qwen3OmniMoeThinkerConfig, Qwen3OmniMoeThinkerForConditionalGeneration

    config = Qwen3OmniMoeThinkerConfig(
        audio_config=dict(num_mel_bins=128, d_model=32, encoder_layers=1, encoder_attention_heads=2,
                          encoder_ffn_dim=64, output_dim=64, n_window=50, n_window_infer=800, conv_chunksize=500,
                          downsample_hidden_size=16, max_source_positions=1500),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, in_channels=3, patch_size=16,
                           spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=64,
                           num_position_embeddings=64, deepstack_visual_indexes=[0]),
        text_config=dict(vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, moe_intermediate_size=32,
                         num_experts=4, num_experts_per_tok=2, decoder_sparse_step=1, max_position_embeddings=4096,
                         rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [4, 2, 2]}),
        audio_token_id=290, image_token_id=291, video_token_id=292, audio_start_token_id=293,
        audio_end_token_id=294, vision_start_token_id=295, vision_end_token_id=296, user_token_id=297)
    return Qwen3OmniMoeThinkerForConditionalGeneration._from_config(config)


@pytest.mark.parametrize("thinker", ["qwen2.5-omni", "qwen3-omni"])
def test_omni_lora_adapts_the_language_model_only_and_towers_can_be_frozen(tiny_root, thinker):
    from peft import get_peft_model
    from transformers import AutoModelForMultimodalLM
    from trl import ModelConfig

    from omniaudit.training.sft import MediaArguments, prepare_omni

    def load():
        if thinker == "qwen3-omni":
            return tiny_qwen3_omni_thinker()
        return AutoModelForMultimodalLM.from_pretrained(tiny_root / "runs/tiny/omni")

    def adapted(model, lora) -> set[str]:
        peft_model = get_peft_model(model, lora)
        return {n.split(".lora_")[0].removeprefix("base_model.model.") for n, _ in peft_model.named_parameters()
                if ".lora_" in n}

    recipe = ModelConfig(use_peft=True, lora_target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    model = load()
    modules = adapted(model, prepare_omni(model, recipe, MediaArguments()))
    assert modules and all(m.startswith("model.language_model.layers.") for m in modules), modules
    assert {m.rsplit(".", 1)[-1] for m in modules} == {"q_proj", "k_proj", "v_proj", "o_proj"}
    # PEFT's own name matching (the old behaviour, still available) reaches into the audio encoder's q/k/v_proj
    model = load()
    everywhere = adapted(model, prepare_omni(model, recipe, MediaArguments(lora_language_model_only=False)))
    assert any(m.startswith("model.audio_tower.") for m in everywhere)
    # no targets given: every linear layer of the language model, still nothing in the towers or lm_head
    model = load()
    default = adapted(model, prepare_omni(model, ModelConfig(use_peft=True), MediaArguments()))
    assert default and all(m.startswith("model.language_model.") for m in default)
    # full fine-tuning with both towers frozen
    model = load()
    frozen = MediaArguments(freeze_audio_tower=True, freeze_vision_tower=True)
    assert prepare_omni(model, ModelConfig(use_peft=False), frozen) is None
    grad = {n: p.requires_grad for n, p in model.named_parameters()}
    assert not any(v for n, v in grad.items() if n.startswith(("model.audio_tower.", "model.visual.")))
    assert all(v for n, v in grad.items() if n.startswith(("model.language_model.", "lm_head.")))


SCRIPT_ARGUMENTS = {"sft.py": ("trl:SFTConfig", "omniaudit.training.sft:MediaArguments"),
                    "dpo.py": ("trl:DPOConfig", "omniaudit.training.sft:MediaArguments"),
                    "reward_odin.py": ("transformers:TrainingArguments",
                                       "omniaudit.training.reward_odin:OdinArguments"),
                    "pairwise_judge.py": ("transformers:TrainingArguments",
                                          "omniaudit.training.pairwise_judge:JudgeArguments"),
                    "star_verifier.py": ("trl:SFTConfig", "omniaudit.training.star_verifier:StarArguments")}


@pytest.mark.parametrize("recipe", sorted(str(p.relative_to(RECIPES.parent)) for p in RECIPES.parent.glob("*/*.yaml")))
def test_every_recipe_parses_and_real_runs_bound_their_checkpoints(recipe, tmp_path, monkeypatch):
    import importlib
    import re

    from trl import ModelConfig

    from omniaudit.training.common import DataArguments, parse

    path = RECIPES.parent / recipe
    script = re.search(r"training/(\w+\.py)", path.read_text()).group(1)  # the launch line in the recipe's header
    dataclasses = [getattr(importlib.import_module(m), c) for m, c in (s.split(":") for s in SCRIPT_ARGUMENTS[script])]
    monkeypatch.setattr(os, "environ", dict(os.environ))  # the recipe's env: block
    data, training, model, extra = parse((DataArguments, dataclasses[0], ModelConfig, dataclasses[1]),
                                         ["--config", str(path), "--output_dir", str(tmp_path), "--use_cpu", "true",
                                          "--bf16", "false"])
    if not recipe.startswith("tiny/") and training.save_strategy != "no":
        assert training.save_total_limit is not None and training.save_total_limit <= 2, training.save_total_limit
