"""A local model's identity hashes every byte of its weights (issue 26), cached by path, size and times."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from omniaudit.runners import identity
from omniaudit.runners.identity import local_model_identity


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch) -> Path:
    """The identity cache in a temporary folder, never the user's."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("OMNIAUDIT_CACHE", str(folder))
    return folder


@pytest.fixture
def count_hashes(monkeypatch) -> list[Path]:
    """Every file the identity reads in full, in order."""
    calls: list[Path] = []
    real = identity.file_sha256

    def counting(file: Path) -> str:
        calls.append(file)
        return real(file)

    monkeypatch.setattr(identity, "file_sha256", counting)
    return calls


def tensors(first: float = 0.0) -> dict[str, np.ndarray]:
    """A first small tensor (at the start of the data, far from the file's middle) and a large one spanning it."""
    return {"a.q_proj.weight": np.full((4, 4), first, dtype=np.float32),
            "b.big.weight": np.arange(1 << 19, dtype=np.float32)}


def checkpoint(folder: Path, first: float = 0.0) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "tiny"}), encoding="utf-8")
    save_file(tensors(first), str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder


def test_a_tensor_far_from_the_middle_changes_the_identity(tmp_path):
    """The old 1-MiB middle sample missed this fine-tune; the full hash does not."""
    base, tuned = checkpoint(tmp_path / "base"), checkpoint(tmp_path / "tuned", first=1e-3)
    size = (base / "model.safetensors").stat().st_size
    assert size == (tuned / "model.safetensors").stat().st_size > 2 << 20  # same size, so only the bytes differ
    ids = [local_model_identity(str(p)) for p in (base, tuned)]
    assert ids[0]["sha256"] != ids[1]["sha256"]
    assert ids[0] == local_model_identity(str(base))  # the same files, the same identity
    assert ids[0]["model"] == "base" and ids[0]["revision"] is None


def test_a_copy_is_the_same_model(tmp_path):
    base = checkpoint(tmp_path / "base")
    shutil.copytree(base, tmp_path / "copy" / "base")
    assert local_model_identity(str(base)) == local_model_identity(str(tmp_path / "copy" / "base"))


def test_the_cache_spares_a_rerun_every_read(tmp_path, cache_dir, count_hashes):
    model = checkpoint(tmp_path / "m")
    first = local_model_identity(str(model))
    assert count_hashes == [(model / "model.safetensors").resolve()]
    assert (cache_dir / identity.CACHE_FILE).is_file()
    count_hashes.clear()
    assert local_model_identity(str(model)) == first
    assert count_hashes == []  # the second call reads no weight file


def test_a_touched_file_is_hashed_again_to_the_same_identity(tmp_path, count_hashes):
    model = checkpoint(tmp_path / "m")
    first = local_model_identity(str(model))
    weights = model / "model.safetensors"
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    count_hashes.clear()
    assert local_model_identity(str(model)) == first
    assert len(count_hashes) == 1  # the cached digest no longer matched, so the bytes were read again


def test_a_file_rewritten_with_its_old_mtime_is_read_again(tmp_path):
    """``cp -p`` of a fine-tune over the base keeps size and mtime; the ctime still changes, so it is re-read."""
    model = checkpoint(tmp_path / "m")
    first = local_model_identity(str(model))
    weights = model / "model.safetensors"
    stat = weights.stat()
    save_file(tensors(1e-3), str(weights), metadata={"format": "pt"})
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert weights.stat().st_size == stat.st_size and weights.stat().st_mtime_ns == stat.st_mtime_ns
    assert local_model_identity(str(model))["sha256"] != first["sha256"]


def test_a_broken_or_unwritable_cache_is_only_slower(tmp_path, cache_dir, monkeypatch):
    model = checkpoint(tmp_path / "m")
    first = local_model_identity(str(model))
    (cache_dir / identity.CACHE_FILE).write_text("{not json", encoding="utf-8")
    assert local_model_identity(str(model)) == first
    monkeypatch.setenv("OMNIAUDIT_CACHE", str(cache_dir / identity.CACHE_FILE / "below-a-file"))
    assert local_model_identity(str(model)) == first
