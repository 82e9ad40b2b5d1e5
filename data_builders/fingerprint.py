"""Dataset fingerprints: which build of a dataset a model's answers were made on.

A config's fingerprint is a content hash of its Parquet files: SHA-256 over each file's path inside the dataset
(``<config>/<split>-00000-of-00001.parquet``) and the SHA-256 of its bytes, in path order. Builders are
deterministic (same source, options and seed give the same bytes), so a rebuild with the same inputs has the same
fingerprint and any change of rows, media, seed or options gives another one; a dataset pushed to the Hub and
downloaded again keeps it (the files travel as they are). A merged ``--shard I/N`` build has its own fingerprint
(its rows sit in N files).

``omniaudit judge`` records the fingerprint of the config it answered in every predictions row, and every consumer
compares it with the dataset it is given (:mod:`omniaudit.predictions`). Every card omniaudit writes carries its
configs' fingerprints too (:func:`seal_card`), so ``datasets``' cache never serves one build's rows for another.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from omniaudit.data_builders.card import card_configs, card_entries

PREFIX = "sha256:"
# What a dataset card's config ``description`` starts with when it carries the config's data fingerprint.
FINGERPRINT_PREFIX = "omniaudit data "  # + the config's fingerprint
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


def seal_card(folder: str | Path) -> bool:
    """Give every config of the folder's ``README.md`` card a ``description`` carrying its data fingerprint
    (:data:`FINGERPRINT_PREFIX` + :func:`config_fingerprint`, the value ``omniaudit judge`` records in predictions).
    Returns whether the card was sealed.

    Why: ``datasets.load_dataset(FOLDER, CONFIG)`` caches a local folder under its *name*, the config name and a hash
    of the card's YAML only (the data file patterns, not the files), so two builds in folders of the same name, or a
    folder rebuilt in place, would be served the rows cached first. The fingerprint puts the data into that hash
    (a config's ``description`` is a builder parameter every ``datasets`` builder takes).
    :func:`~omniaudit.io.atomic_dir` calls this before the swap, so every dataset omniaudit writes is sealed. A card
    without YAML ``configs`` is left as is.
    """
    import yaml

    card = Path(folder) / "README.md"
    text = card.read_text(encoding="utf-8")
    head, sep, rest = text.removeprefix("---\n").partition("\n---")
    if not text.startswith("---\n") or not sep:
        return False
    try:
        meta = yaml.safe_load(head)
    except yaml.YAMLError:
        return False
    configs = meta.get("configs") if isinstance(meta, dict) else None
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        return False
    for entry in configs:
        fingerprint = config_fingerprint(folder, str(entry.get("config_name")))
        if fingerprint is not None:
            entry["description"] = FINGERPRINT_PREFIX + fingerprint
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=119)
    card.write_text(f"---\n{front.rstrip(chr(10))}\n---{rest}", encoding="utf-8")
    return True


def sealed_fingerprints(folder: str | Path) -> dict[str, str]:
    """Config -> the fingerprint :func:`seal_card` wrote into the card (configs without one are left out)."""
    return {str(e.get("config_name")): e["description"].removeprefix(FINGERPRINT_PREFIX)
            for e in card_entries(Path(folder))
            if isinstance(e, dict) and str(e.get("description", "")).startswith(FINGERPRINT_PREFIX)}
