"""Dataset fingerprints: which build of a dataset a model's answers were made on.

A config's fingerprint is a content hash of its Parquet files: SHA-256 over each file's path inside the dataset
(``<config>/<split>-00000-of-00001.parquet``) and the SHA-256 of its bytes, in path order. Builders are
deterministic (same source, options and seed give the same bytes), so a rebuild with the same inputs has the same
fingerprint and any change of rows, media, seed or options gives another one; a dataset pushed to the Hub and
downloaded again keeps it (the files travel as they are). A merged ``--shard I/N`` build has its own fingerprint
(its rows sit in N files).

``omniaudit judge`` records the fingerprint of the config it answered in every predictions row, and every consumer
compares it with the dataset it is given (:mod:`omniaudit.predictions`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

PREFIX = "sha256:"
_CHUNK = 1 << 20
_FILE_DIGESTS: dict[tuple[str, int, int], str] = {}  # (resolved path, size, mtime_ns) -> digest, per process


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes (memoised per process while its size and modification time stay the same)."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _FILE_DIGESTS:
        h = hashlib.sha256()
        with path.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
        _FILE_DIGESTS[key] = h.hexdigest()
    return _FILE_DIGESTS[key]


def _combine(entries: list[tuple[str, str]]) -> str:
    h = hashlib.sha256()
    for name, digest in sorted(entries):
        h.update(f"{name}\0{digest}\n".encode())
    return PREFIX + h.hexdigest()[:32]


def config_files(folder: Path, config: str) -> list[Path]:
    """The Parquet files of one config, as the folder's card maps them (every split)."""
    from omniaudit.data_builders.hub import card_configs

    patterns = card_configs(folder).get(config)
    if patterns is None:
        return []
    return sorted({f for _, p in patterns for f in folder.glob(p) if f.suffix == ".parquet" and f.is_file()})


def config_fingerprint(folder: str | Path, config: str) -> str | None:
    """The fingerprint of ``config`` in a local dataset folder (None when the folder has no such config)."""
    folder = Path(folder)
    files = config_files(folder, config)
    if not files:
        return None
    return _combine([(f.relative_to(folder).as_posix(), file_digest(f)) for f in files])


def local_dataset(path_or_repo: str | Path) -> Path | None:
    """A local folder holding the dataset's files: the folder itself, or the Hub cache's copy of a repo id (only
    what is cached: nothing is downloaded). None when neither is at hand."""
    folder = Path(path_or_repo)
    if folder.is_dir():
        return folder
    text = str(path_or_repo)
    if text.count("/") != 1 or text.startswith((".", "/")):
        return None
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(text, repo_type="dataset", local_files_only=True))
    except Exception:  # noqa: BLE001 - not cached, not a repo id: the fingerprint is unknown
        return None


def fingerprint_of(path_or_repo: str | Path, config: str) -> str | None:
    """The fingerprint of ``config`` of a dataset folder or (cached) Hub repo; None when it cannot be computed."""
    folder = local_dataset(path_or_repo)
    if folder is None or not (folder / "README.md").is_file():
        return None
    try:
        return config_fingerprint(folder, config)
    except Exception:  # noqa: BLE001 - an unreadable card: the dataset loader reports it with its own message
        return None
