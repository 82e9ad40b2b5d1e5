"""Which model answered: an identity every predictions row records and the response cache is keyed by.

- ``hf:`` (a local folder or a cached Hub repo): a hash of the model's config, tokenizer and processor files, its
  weights index and, per weight file, its name, size and the SHA-256 of its full content (a fine-tune that changes two
  tensors anywhere is another model), plus the Hub revision when the folder is a Hub cache snapshot; and
  ``heldout_fold``, the fold a cross-fitted judge was held out from, when its folder has the
  ``heldout_selection.json`` that ``training/sft.py --heldout_fold K`` writes (merging fold files checks each judge
  answered only that fold). Each weight file's digest is cached by (resolved path, size, mtime, ctime) in
  ``$OMNIAUDIT_CACHE/identity.json`` (default ``~/.cache/omniaudit``), so a rerun on an unchanged 7B checkpoint reads
  none of its 15 GB again; a file rewritten in place gets a new mtime or ctime and is read again.
- ``openai:``: what the server says of the model (``/v1/models``), without fields that change per request
  (``OpenAIJudge.identity``).
- ``scripted:``: its name.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from omniaudit.errors import InputError
from omniaudit.io import atomic_file

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
META_FILES = ("config.json", "generation_config.json", "model.safetensors.index.json", "pytorch_model.bin.index.json",
              "adapter_config.json", "tokenizer_config.json", "chat_template.jinja", "chat_template.json",
              "preprocessor_config.json", "processor_config.json", "video_preprocessor_config.json",
              "tokenizer.json", "tokenizer.model", "vocab.json", "merges.txt", "special_tokens_map.json",
              "added_tokens.json")
CHUNK_BYTES = 8 << 20
CACHE_FILE = "identity.json"
CACHE_VERSION = 1
SELECTION_FILE = "heldout_selection.json"  # a cross-fitted judge's record (omniaudit.training.heldout)


def _model_folder(path: str) -> tuple[Path | None, str | None]:
    """(local folder, Hub revision or None); (None, None) when the model is neither a folder nor cached."""
    folder = Path(path)
    if folder.is_dir():
        return folder, None
    try:
        from huggingface_hub import snapshot_download

        snapshot = Path(snapshot_download(path, local_files_only=True))
    except Exception:  # noqa: BLE001 - not cached or not a repo id
        return None, None
    return snapshot, snapshot.name


def file_sha256(file: Path) -> str:
    """SHA-256 of every byte of ``file``, read sequentially in 8 MiB chunks.

    This is enough for any weight format: a ``.safetensors`` file is its 8-byte header length, its JSON header (tensor
    names, dtypes, shapes, offsets, metadata) and the raw tensor bytes, so hashing the whole file covers each of them;
    ``.bin``/``.pt``/``.gguf`` files are likewise nothing but what the loader reads. Sequential reads run at disk or
    SHA-256 speed (about 1-2 GB/s), and the digest cache below makes it a one-off per checkpoint."""
    h = hashlib.sha256()
    buffer = bytearray(CHUNK_BYTES)
    view = memoryview(buffer)
    with file.open("rb") as fh:
        while n := fh.readinto(buffer):
            h.update(view[:n])
    return h.hexdigest()


def identity_cache_path() -> Path:
    """``$OMNIAUDIT_CACHE/identity.json`` (default ``~/.cache/omniaudit``, as the judge response cache)."""
    return Path(os.environ.get("OMNIAUDIT_CACHE", Path.home() / ".cache" / "omniaudit")) / CACHE_FILE


class DigestCache:
    """Weight-file digests by resolved path, valid while the file's size, mtime and ctime are unchanged (ctime too:
    ``cp -p``/``rsync -t`` can restore an old mtime on new bytes, but nothing sets ctime back). A missing or unreadable
    cache is empty; one that cannot be written is skipped (the identity is the same, only slower next time)."""

    def __init__(self, path: Path) -> None:
        self.path, self.changed = path, False
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            self.files = data["files"] if data.get("version") == CACHE_VERSION else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.files = {}

    def digest(self, file: Path) -> str:
        resolved, stat = file.resolve(), file.stat()
        key = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns}
        entry = self.files.get(str(resolved))
        if isinstance(entry, dict) and all(entry.get(k) == v for k, v in key.items()) and entry.get("sha256"):
            return entry["sha256"]
        digest = file_sha256(resolved)
        self.files[str(resolved)] = {**key, "sha256": digest}
        self.changed = True
        return digest

    def save(self) -> None:
        """Write the cache atomically when it changed, dropping entries of files that no longer exist."""
        if not self.changed:
            return
        files = {p: e for p, e in self.files.items() if Path(p).is_file()}
        try:
            with atomic_file(self.path) as tmp:
                tmp.write_text(json.dumps({"version": CACHE_VERSION, "files": files}, indent=0), encoding="utf-8")
        except OSError:
            pass  # a read-only home: the identity stands, the next run hashes again


def heldout_fold(folder: str | Path) -> int | None:
    """The fold a cross-fitted judge was trained without (``heldout_fold`` of its ``heldout_selection.json``), or
    None when the folder has no such file; an unreadable one is an error (guessing could score in-fold answers)."""
    file = Path(folder) / SELECTION_FILE
    if not file.is_file():
        return None
    try:
        fold = json.loads(file.read_text(encoding="utf-8")).get("heldout_fold")
    except (OSError, ValueError, AttributeError) as exc:
        raise InputError(f"not a held-out selection record ({exc})", file=file) from exc
    if fold is not None and (not isinstance(fold, int) or isinstance(fold, bool) or fold < 0):
        raise InputError("expected heldout_fold to be a fold number", file=file, column="heldout_fold", value=fold)
    return fold


def local_model_identity(path: str) -> dict:
    """``{"kind": "hf", "model": path, "revision": ..., "sha256": ...}`` of a local or cached model, plus
    ``heldout_fold`` for a cross-fitted judge (:func:`heldout_fold`)."""
    folder, revision = _model_folder(path)
    identity: dict[str, Any]
    identity = {"kind": "hf", "model": Path(path).name if Path(path).is_dir() else path, "revision": revision}
    if folder is None:
        return {**identity, "sha256": None}
    if (fold := heldout_fold(folder)) is not None:
        identity["heldout_fold"] = fold
    h = hashlib.sha256()
    for name in META_FILES:
        if (folder / name).is_file():
            h.update(f"{name}\0".encode() + (folder / name).read_bytes())
    cache = DigestCache(identity_cache_path())
    for file in sorted(f for f in folder.rglob("*") if f.suffix in WEIGHT_SUFFIXES and f.is_file()):
        h.update(f"{file.relative_to(folder).as_posix()}\0{file.stat().st_size}\0{cache.digest(file)}\0".encode())
    cache.save()
    return {**identity, "sha256": h.hexdigest()[:32]}


def runner_identity(judge, refresh: bool = False) -> dict:
    """The identity of a runner made by ``make_judge`` (:meth:`~omniaudit.runners.base.Runner.identity`).

    ``refresh`` asks a server again: `transformers serve` lists a local model under ``/v1/models`` only once a
    request has loaded it, so a run that began with the model unlisted asks once more at its end."""
    from omniaudit.runners.base import as_runner

    runner = as_runner(judge)
    return dict(runner.identity(refresh=True) if refresh else runner.identity())
