"""How a training run's weights were made: the intra-op thread count and torch's deterministic algorithms, set
before the model is built (:func:`apply_determinism`, from ``parse``) and written beside the saved weights as
``determinism.json`` (:func:`write_determinism_record`, from ``train_and_save``), so a reader knows what the same seed
reproduces.

Measured on CPU (torch 2.9.1, oneDNN 3.7, MKL 2024.2; docs/training.md#determinism): the same seed and the same thread
count train bitwise-identical weights in two processes. Across thread counts the tiny text models (the causal LM,
its reward and pairwise heads) train the same weights too, but the tiny Qwen2.5-Omni thinker does not: its weights
after 6 SFT steps differ by up to 3e-7 between 1 and 2 threads, with or without the deterministic flags (they order
no reductions across threads). So pin ``threads`` to reproduce a run on another machine: ``accelerate launch`` sets
``OMP_NUM_THREADS`` to the machine's physical cores per process when it is unset, so an unpinned count follows the
machine.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

RECORD_FILE = "determinism.json"
CUBLAS_WORKSPACE = ":4096:8"  # what cuBLAS needs for deterministic GEMMs (CUDA >= 10.2)


@dataclass
class DeterminismArguments:
    """The run's reproducibility settings (every training script takes them; a recipe may set them too)."""

    threads: int | None = field(default=None, metadata={
        "help": "intra-op CPU threads (torch.set_num_threads), set before the model loads and recorded in "
                "OUTPUT_DIR/determinism.json; default: torch's, which under accelerate launch is the machine's "
                "physical cores per process. The same seed trains bitwise-identical weights at the same thread "
                "count; across thread counts only some models do (measured: the tiny text models yes, the tiny "
                "omni thinker no, up to 3e-7 apart after 6 steps), so pin it to reproduce a run elsewhere"})
    deterministic: bool | None = field(default=None, metadata={
        "help": "torch.use_deterministic_algorithms(True, warn_only=True), and on CUDA cuDNN's deterministic "
                "kernels without autotuning and CUBLAS_WORKSPACE_CONFIG=:4096:8; default: on for CPU runs (where it "
                "cost no measurable speed), off on GPUs (deterministic CUDA kernels can be slower); it does not make "
                "different thread counts agree"})

    def __post_init__(self):
        if self.threads is not None and self.threads < 1:
            from omniaudit.errors import InputError

            raise InputError("threads must be at least 1", column="threads", value=self.threads)


def apply_determinism(settings: DeterminismArguments) -> dict:
    """Set the thread count and the deterministic algorithms as ``settings`` ask (``deterministic`` None: on
    without CUDA); returns :func:`determinism_record`. On CUDA, ``CUBLAS_WORKSPACE_CONFIG`` is set only when unset
    (before cuBLAS starts: call this before the model is built)."""
    import torch

    if settings.threads is not None:
        torch.set_num_threads(settings.threads)
    deterministic = settings.deterministic
    if deterministic is None:
        deterministic = not torch.cuda.is_available()
    torch.use_deterministic_algorithms(deterministic, warn_only=True)
    if deterministic and torch.cuda.is_available():
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
    return determinism_record()


def determinism_record() -> dict:
    """What the process trains under now (read from torch, so a Trainer's ``full_determinism`` shows too):
    ``torch_threads``, ``deterministic`` (and whether it only warns), ``torch_version``, ``device`` and, on CUDA,
    ``cublas_workspace_config`` and ``cudnn_deterministic``."""
    import torch

    record = {"torch_threads": torch.get_num_threads(), "deterministic": torch.are_deterministic_algorithms_enabled(),
              "deterministic_warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
              "torch_version": torch.__version__, "device": "cuda" if torch.cuda.is_available() else "cpu"}
    if torch.cuda.is_available():
        record.update(cublas_workspace_config=os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
                      cudnn_deterministic=torch.backends.cudnn.deterministic)
    return record


def write_determinism_record(out_dir: str | Path, seed: int | None = None) -> Path | None:
    """``OUT_DIR/determinism.json`` (:func:`determinism_record` and the run's ``seed``), written by the main process
    only (None elsewhere)."""
    if int(os.environ.get("RANK", "0")) != 0:
        return None
    path = Path(out_dir) / RECORD_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({**determinism_record(), "seed": seed}, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
