"""Test-wide setup: no network, private Hugging Face and omniaudit caches, a non-interactive matplotlib backend."""

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
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
# DeepSpeed's CPU ops, built once per environment by scripts/setup_env.sh into the environment's own folder (the
# user-wide default is shared by every environment, and one with other sources would rebuild them in a test)
os.environ.setdefault("TORCH_EXTENSIONS_DIR", os.path.join(sys.prefix, "torch_extensions"))
# pytest-xdist runs a worker per core (addopts in pyproject.toml): each worker, and the processes it launches, gets its
# share of the cores for torch's and the BLAS's threads (by default each would start one per core, oversubscribing
# them), unless the environment sets a number. Set before numpy or torch is imported.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _threads = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, _threads)

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

# the runner tests' items in the item contract (session fixtures, defined with their helpers)
from judge_items import media, mixed_dataset  # noqa: E402, F401

from omniaudit.data_builders.preference import SyntheticSpec, synthesize  # noqa: E402
from omniaudit.data_builders.preference.read import COLUMNS  # noqa: E402


def shared_build(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    """``build(folder)`` once per test run, for read-only artifacts several test files use (tiny models, embedded
    datasets): under pytest-xdist the workers share the run's folder, the first to ask builds it under a file lock and
    the others wait for it and reuse it; run serially, a folder of the session's own. Returns the folder."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # pytest-of-USER/pytest-N, above each worker's popen-gwK
    folder, done = root / f"shared-{name}", root / f"shared-{name}.done"
    with FileLock(str(root / f"shared-{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build an earlier worker left half-written
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


def _copied_build(tmp_path_factory, build: Callable) -> Callable:
    """An audit's ``build`` that, for a small default, copies the run's one build of it (see ``small_defaults``);
    wrapped, so the default's key (which hashes the build's source) stays the build's own."""
    import functools

    @functools.wraps(build)
    def copied(self, out, size: str = "default", progress=None):
        if size != "small":
            return build(self, out, size, progress)
        from omniaudit.evaluation.scorecard.runner import default_key

        built = shared_build(tmp_path_factory, f"small-default-{self.name}-{default_key(self.name, size)}",
                             lambda root: build(self, root / "ds", size, progress))
        shutil.copytree(built / "ds", out)
        return Path(out)

    return copied


@pytest.fixture(scope="module")
def small_defaults(tmp_path_factory):
    """While a module's tests run, a scorecard that builds an embedded small default (``--size small``) copies one
    build of it per test run (``shared_build``, keyed by the default's own key: its builder's code and parameters)
    instead of building it again: the builds are deterministic and record no path, so the copy is byte for byte a
    build, and the runner's own steps around it (stamp, reuse, rebuild) run as they do. Several scorecard test files
    build the same small defaults (~6 s for the four)."""
    from omniaudit.audits import get

    with pytest.MonkeyPatch.context() as patch:
        for name in ("preference", "interventions", "protocols", "composition"):
            audit = type(get(name))
            patch.setattr(audit, "build", _copied_build(tmp_path_factory, audit.build))
        yield


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``--dist loadfile``: each test file runs on one worker, so a module's fixtures are built
    once): the files holding the most slow tests are handed out first, so that a long file does not start last while
    the other workers idle. Each file keeps its tests in order; a serial run (``-n 0``) keeps pytest's order."""
    if not hasattr(config, "workerinput"):
        return
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)
    order = sorted(files.values(), key=lambda tests: -sum(t.get_closest_marker("slow") is not None for t in tests))
    items[:] = [item for tests in order for item in tests]


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

    built = shared_build(tmp_path_factory, "iv", lambda root: build_interventions_dataset(root / "ds",
                                                                                          spec=intervention_spec))
    return built / "ds"


@pytest.fixture(scope="session")
def protocol_dataset(tmp_path_factory):
    """The embedded espeak-ng protocol probes (one sentence per cell), built once per test session."""
    from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset

    built = shared_build(tmp_path_factory, "proto", lambda root: build_protocols_dataset(
        root / "ds", None, ProtocolBuildOptions(max_trials=12), SpeechSetSpec(sentences_per_cell=1)))
    return built / "ds"


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """A tiny text LM and a tiny audio LM (Qwen2 / Qwen2-Audio), built from configs offline."""
    from omniaudit.tiny_models import tiny_audio_lm, tiny_causal_lm

    def build(root: Path) -> None:
        tiny_causal_lm(root / "text")
        tiny_audio_lm(root / "audio")

    root = shared_build(tmp_path_factory, "tiny", build)
    return {"text": root / "text", "audio": root / "audio"}


@pytest.fixture(scope="session")
def tiny_root(tmp_path_factory) -> Path:
    """A working folder holding runs/tiny exactly as `omniaudit tiny-models` writes it (the training tests' models
    and data), built once per run."""
    from omniaudit.cli import main as omniaudit

    def build(root: Path) -> None:
        cwd = os.getcwd()
        os.chdir(root)
        try:
            assert omniaudit(["tiny-models"]) == 0
        finally:
            os.chdir(cwd)

    return shared_build(tmp_path_factory, "tiny-models", build)


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

