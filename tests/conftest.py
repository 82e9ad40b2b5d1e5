"""Test-wide setup: no network, private Hugging Face and omniaudit caches, a non-interactive matplotlib backend."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
# Private caches, whatever the environment sets: a datasets cache shared with an earlier run keys a folder by its
# path, and pytest's numbered temporary folders repeat from one run to the next, so rows of another build could be
# served; and no test may touch a user's caches.
# They are removed when the session ends (each holds up to ~0.5 GB of cached datasets; left behind, a few hundred
# runs fill the disk, and a full disk truncates the media later runs write).
_HF = tempfile.mkdtemp(prefix="omniaudit-hf-")
os.environ["HF_HOME"] = _HF
os.environ["HF_DATASETS_CACHE"] = os.path.join(_HF, "datasets")
os.environ["HF_HUB_CACHE"] = os.path.join(_HF, "hub")
os.environ["OMNIAUDIT_CACHE"] = tempfile.mkdtemp(prefix="omniaudit-cache-")
for _folder in (_HF, os.environ["OMNIAUDIT_CACHE"]):
    atexit.register(shutil.rmtree, _folder, ignore_errors=True)
os.environ["MPLBACKEND"] = "Agg"

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

# the runner tests' items in the item contract (session fixtures, defined with their helpers)
from judge_items import media, mixed_dataset  # noqa: E402, F401

from omniaudit.data_builders.preference import SyntheticSpec, synthesize  # noqa: E402
from omniaudit.data_builders.preference.read import COLUMNS  # noqa: E402


@pytest.fixture(scope="session")
def small_spec() -> SyntheticSpec:
    return SyntheticSpec(n_pairs=600, seed=3)


@pytest.fixture(scope="session")
def small_raw(small_spec) -> pd.DataFrame:
    """A 600-pair synthetic benchmark in the canonical columns (hidden truth dropped)."""
    return synthesize(small_spec)[list(COLUMNS)]


@pytest.fixture
def emoprefer_csv(tmp_path, small_raw):
    """The synthetic benchmark written in the official EmoPrefer CSV layout."""
    path = tmp_path / "emoprefer.csv"
    small_raw.to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def intervention_spec():
    from omniaudit.data_builders.interventions import SyntheticClipSpec

    return SyntheticClipSpec(n_clips=6, width=96, height=64)


@pytest.fixture(scope="session")
def intervention_dataset(tmp_path_factory, intervention_spec):
    """The embedded synthetic intervention dataset (6 clips), built once per test session."""
    from omniaudit.data_builders.interventions import build_interventions_dataset

    return build_interventions_dataset(tmp_path_factory.mktemp("iv") / "ds", spec=intervention_spec)


@pytest.fixture(scope="session")
def protocol_dataset(tmp_path_factory):
    """The embedded espeak-ng protocol probes (one sentence per cell), built once per test session."""
    from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset

    return build_protocols_dataset(tmp_path_factory.mktemp("proto") / "ds", None,
                                   ProtocolBuildOptions(max_trials=12), SpeechSetSpec(sentences_per_cell=1))


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """A tiny text LM and a tiny audio LM (Qwen2 / Qwen2-Audio), built from configs offline."""
    from omniaudit.tiny_models import tiny_audio_lm, tiny_causal_lm

    root = tmp_path_factory.mktemp("tiny")
    return {"text": tiny_causal_lm(root / "text"), "audio": tiny_audio_lm(root / "audio")}


@pytest.fixture(autouse=True)
def _no_wandb_run_left_open():
    """A wandb run a test leaves open would swallow the next test's run (the Trainer's callback reuses an open run),
    and wandb's process-wide setup keeps the settings (folders) of the first test that used it, so every test ends
    with no run open and the setup torn down."""
    yield
    import sys

    wandb = sys.modules.get("wandb")
    if wandb is not None and getattr(wandb, "run", None) is not None:
        wandb.finish()
    if wandb is not None:
        wandb.teardown()


@pytest.fixture
def offline(tmp_path, monkeypatch) -> Path:
    """wandb in offline mode with every folder it writes under tmp_path; returns WANDB_DIR."""
    pytest.importorskip("wandb")
    for var, name in (("WANDB_DIR", "wandb-runs"), ("WANDB_DATA_DIR", "wandb-data"),
                      ("WANDB_CACHE_DIR", "wandb-cache"), ("WANDB_CONFIG_DIR", "wandb-config")):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(var, str(tmp_path / name))
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    for var in ("WANDB_PROJECT", "WANDB_RUN_GROUP", "WANDB_NAME", "WANDB_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "wandb-runs"
