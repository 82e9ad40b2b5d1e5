"""Resuming skips a checkpoint torn by a kill mid-save and falls back to the previous complete one, with a warning."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from omniaudit.errors import InputError
from omniaudit.training.common import checkpoint_problem, resume_point


def checkpoint(run: Path, step: int) -> Path:
    """A complete fake checkpoint: weights (safetensors), optimizer (a torch.save-style zip), trainer state."""
    path = run / f"checkpoint-{step}"
    path.mkdir(parents=True)
    save_file({"w": np.ones((4, 4), dtype=np.float32)}, str(path / "model.safetensors"))
    with zipfile.ZipFile(path / "optimizer.pt", "w") as z:
        z.writestr("archive/data.pkl", b"state")
    (path / "trainer_state.json").write_text(json.dumps({"global_step": step}), encoding="utf-8")
    return path


def tear(path: Path, how: str) -> str:
    if how == "no_state":  # the Trainer writes trainer_state.json last: killed before it
        (path / "trainer_state.json").unlink()
        return "no trainer_state.json"
    if how == "state_cut":
        (path / "trainer_state.json").write_text('{"global_st', encoding="utf-8")
        return "trainer_state.json is empty or cut short"
    if how == "empty_model":
        (path / "model.safetensors").write_bytes(b"")
        return "model.safetensors is empty"
    if how == "model_cut":
        data = (path / "model.safetensors").read_bytes()
        (path / "model.safetensors").write_bytes(data[:-10])
        return "model.safetensors is cut short"
    if how == "empty_optimizer":
        (path / "optimizer.pt").write_bytes(b"")
        return "optimizer.pt is empty"
    data = (path / "optimizer.pt").read_bytes()  # optimizer_cut
    (path / "optimizer.pt").write_bytes(data[: len(data) // 2])
    return "optimizer.pt is cut short"


@pytest.mark.parametrize("how", ["no_state", "state_cut", "empty_model", "model_cut", "empty_optimizer",
                                 "optimizer_cut"])
def test_a_torn_last_checkpoint_falls_back_to_the_previous_one(tmp_path, how):
    run = tmp_path / "run"
    checkpoint(run, 10)
    c20 = checkpoint(run, 20)
    assert checkpoint_problem(c20) is None and resume_point("true", run) == str(c20)
    problem = tear(checkpoint(run, 30), how)
    assert checkpoint_problem(run / "checkpoint-30") == problem
    with pytest.warns(RuntimeWarning, match=rf"checkpoint-30: incomplete checkpoint \({problem}"):
        assert resume_point("true", run) == str(c20)
    with pytest.warns(RuntimeWarning, match="checkpoint-30"):
        assert resume_point(str(run), run) == str(c20)  # the run folder named: its last complete checkpoint


def test_torn_checkpoints_everywhere(tmp_path):
    run = tmp_path / "run"
    tear(checkpoint(run, 5), "empty_model")
    with pytest.warns(RuntimeWarning):
        assert resume_point("true", run) is None  # nothing complete: start afresh, as with no checkpoint
    with pytest.warns(RuntimeWarning), pytest.raises(InputError, match="only incomplete ones"):
        resume_point(str(run), run)
    with pytest.raises(InputError, match=r"the checkpoint is incomplete \(model.safetensors is empty\)"):
        resume_point(str(run / "checkpoint-5"), run)  # named explicitly: refused, not silently replaced
    folds = tmp_path / "cv"
    good = checkpoint(folds / "fold0", 2)
    tear(checkpoint(folds / "fold0", 4), "no_state")
    with pytest.warns(RuntimeWarning, match="checkpoint-4"):
        assert resume_point("true", folds, folds / "fold0") == str(good)


def test_checkpoints_of_sharded_and_deepspeed_runs_are_complete(tmp_path):
    path = checkpoint(tmp_path, 7)
    (path / "model.safetensors").unlink()
    for i in (1, 2):
        save_file({f"w{i}": np.zeros(3, dtype=np.float32)}, str(path / f"model-0000{i}-of-00002.safetensors"))
    (path / "global_step7").mkdir()
    with zipfile.ZipFile(path / "global_step7" / "mp_rank_00_model_states.pt", "w") as z:
        z.writestr("archive/data.pkl", b"x")
    assert checkpoint_problem(path) is None
    (path / "global_step7" / "bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt").write_bytes(b"")
    assert checkpoint_problem(path) == "global_step7/bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt is empty"
