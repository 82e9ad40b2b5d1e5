"""A local model's identity: the full-content hash (issue 26), cold and warm, vs the old 1-MiB sample, in one run.

A synthetic safetensors checkpoint (``--gib`` GiB, default 2, in ``--shards`` shards, default 4, of random float32
tensors, plus ``config.json`` and the weights index) is written to a temporary folder, with the identity cache in a
temporary folder too. Timed:

1. cold: ``local_model_identity`` with an empty cache, reading every byte of every shard (SHA-256 in 8 MiB chunks);
2. warm: the same call again, every digest from the cache (``identity.json``), no weight file read;
3. the baseline: the old identity (before issue 26: per shard its name, size, safetensors header and one MiB from its
   middle), which a fine-tune changing tensors outside that MiB fooled.

Before the cold and the baseline passes the shards are dropped from the page cache (``posix_fadvise``, best effort:
no root needed) so the cold pass reads the disk as a first run on a downloaded checkpoint does; ``--keep-page-cache``
times SHA-256 alone. The cold rate is extrapolated to a 15 GB 7B checkpoint.

Last line: ``cold_mb_s=<MB/s of the full hash> cold_7b_s=<s for 15 GB> warm_s=<cache hit> sample_s=<old 1-MiB
sample> cold_vs_sample=<cold_s / sample_s> warm_vs_sample=<warm_s / sample_s>``.

    python benchmarks/model_identity.py [--gib 2] [--shards 4] [--repeats 3] [--keep-page-cache]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

from omniaudit.runners import identity
from omniaudit.runners.identity import META_FILES, WEIGHT_SUFFIXES, local_model_identity

SAMPLE_BYTES = 1 << 20
TENSOR_BYTES = 64 << 20
SEVEN_B_BYTES = 15e9


def write_checkpoint(folder: Path, gib: float, shards: int, seed: int = 0) -> int:
    """A sharded safetensors checkpoint of ``gib`` GiB of random float32 tensors; its weight bytes."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "synthetic"}), encoding="utf-8")
    per_shard, weight_map = int(gib * (1 << 30)) // shards, {}
    for s in range(shards):
        name = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        sizes = [TENSOR_BYTES] * (per_shard // TENSOR_BYTES) + ([per_shard % TENSOR_BYTES] if per_shard % TENSOR_BYTES
                                                                 else [])
        tensors = {f"layers.{s}.t{i}.weight": rng.random(n // 4, dtype=np.float32) for i, n in enumerate(sizes)}
        save_file(tensors, str(folder / name), metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(tensors, name))
    index = {"metadata": {"total_size": per_shard * shards}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    return sum(f.stat().st_size for f in folder.glob("*.safetensors"))


def drop_page_cache(folder: Path) -> None:
    """Ask the kernel to forget the shards' cached pages (flushed first), so the next read goes to the disk."""
    for file in folder.glob("*.safetensors"):
        fd = os.open(file, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def sampled_identity(folder: Path) -> str:
    """The identity before issue 26: meta files, then per weight file its name, size, header and middle MiB."""
    h = hashlib.sha256()
    for name in META_FILES:
        if (folder / name).is_file():
            h.update(f"{name}\0".encode() + (folder / name).read_bytes())
    for file in sorted(f for f in folder.rglob("*") if f.suffix in WEIGHT_SUFFIXES and f.is_file()):
        size = file.stat().st_size
        h.update(f"{file.relative_to(folder).as_posix()}\0{size}\0".encode())
        with file.open("rb") as fh:
            head = fh.read(8)
            if file.suffix == ".safetensors" and len(head) == 8:
                head += fh.read(min(int.from_bytes(head, "little"), 100 << 20))
            fh.seek(max(0, size // 2 - SAMPLE_BYTES // 2))
            h.update(head + fh.read(SAMPLE_BYTES))
    return h.hexdigest()[:32]


def timed(fn, repeats: int, before=None) -> float:
    """Best seconds of ``repeats`` calls of ``fn``, ``before`` run (untimed) ahead of each."""
    best = float("inf")
    for _ in range(repeats):
        if before is not None:
            before()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=2.0)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep-page-cache", action="store_true")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="omniaudit-bench-identity-"))
    os.environ["OMNIAUDIT_CACHE"] = str(root / "cache")
    cache_file = identity.identity_cache_path()
    try:
        model = root / "model"
        start = time.perf_counter()
        weight_bytes = write_checkpoint(model, args.gib, args.shards)
        print(f"wrote {weight_bytes / 1e9:.2f} GB in {args.shards} shards in {time.perf_counter() - start:.1f} s")
        drop = None if args.keep_page_cache else (lambda: drop_page_cache(model))

        def cold() -> None:
            cache_file.unlink(missing_ok=True)
            local_model_identity(str(model))

        cold_s = timed(cold, args.repeats, drop)
        warm_s = timed(lambda: local_model_identity(str(model)), args.repeats)
        sample_s = timed(lambda: sampled_identity(model), args.repeats, drop)
        mb_s = weight_bytes / 1e6 / cold_s
        cold_7b_s = SEVEN_B_BYTES / (weight_bytes / cold_s)
        print(f"cold (full SHA-256, {'page cache kept' if args.keep_page_cache else 'page cache dropped'}): "
              f"{cold_s:.2f} s, {mb_s:.0f} MB/s -> 15 GB 7B checkpoint: {cold_7b_s:.1f} s")
        print(f"warm (digest cache hit): {warm_s * 1e3:.2f} ms; old 1-MiB sample: {sample_s * 1e3:.2f} ms")
        print(f"cold_mb_s={mb_s:.0f} cold_7b_s={cold_7b_s:.1f} warm_s={warm_s:.4f} sample_s={sample_s:.4f} "
              f"cold_vs_sample={cold_s / sample_s:.0f} warm_vs_sample={warm_s / sample_s:.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
