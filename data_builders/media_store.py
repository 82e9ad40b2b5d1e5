"""Where an intervention dataset keeps its clips: embedded in every config (``embed``) or once, by path (``paths``).

``embed`` (default): each config's Parquet shard ``<config>/train-*.parquet`` holds the clip bytes in its ``video``
cell, so the diagnostic, sft and dpo configs hold three copies of every clip.

``paths``: every rendered clip is written once to ``media/<key>_<variant>.mp4`` and each config is a metadata table
``<config>-train-*.parquet`` at the dataset root whose ``video_file_name`` names its clip. Why this shape: datasets
5.2's Parquet builder does not resolve a relative path in a Video/Audio cell (``{"path": "media/x.mp4"}`` is opened
relative to the process's working directory, and from a Hub repo it is never downloaded). Its folder-based builders
do: a metadata table's ``file_name`` / ``<column>_file_name`` is joined to the metadata file's own folder (``..`` is
refused), for a local folder and for a Hub repo alike (Hub files are fetched with ``hf_hub_download``, which keeps the
repo's tree). The card lists a config's data files as its metadata table plus ``media/*.mp4`` and names the table in
``metadata_filenames``, so ``datasets.load_dataset(FOLDER_OR_REPO, config)`` infers ``videofolder`` and yields a
decodable ``video`` column, and one clip file serves every config.

Sealing: every row carries ``video_sha256``, the SHA-256 of its clip, inside the Parquet that the config's
fingerprint (:mod:`omniaudit.data_builders.fingerprint`) hashes, so any change of a clip at build time gives another
fingerprint; :func:`verify_media` re-hashes the files against those digests when a path-mode config is loaded
(:func:`load_paths_config`), so a clip edited after the build is refused.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq

from omniaudit.data_builders.fingerprint import file_digest
from omniaudit.errors import InputError

MEDIA_MODES = ("embed", "paths")
MEDIA_DIR = "media"
PATH_COLUMN = "video_file_name"  # videofolder turns <column>_file_name into a Video column named <column>
DIGEST_COLUMN = "video_sha256"


def metadata_name(config: str, shard: str) -> str:
    """The root-level metadata table of one config shard in path mode: ``diagnostic-train-00000-of-00001.parquet``."""
    return f"{config}-{shard}"


def shard_path(folder: Path, config: str, shard: str, media_mode: str) -> Path:
    """Where one config shard is written: ``<config>/<shard>`` (embed) or ``<config>-<shard>`` at the root (paths)."""
    return folder / config / shard if media_mode == "embed" else folder / metadata_name(config, shard)


def config_shards(folder: Path, config: str) -> list[Path]:
    """The Parquet shards of one config in either layout."""
    return sorted((folder / config).glob("*.parquet")) or sorted(folder.glob(f"{config}-*.parquet"))


class MediaStore:
    """Collects a build's clips: embedded cells, or one file per clip under ``media/`` referenced by name."""

    def __init__(self, folder: Path, mode: str) -> None:
        if mode not in MEDIA_MODES:
            raise InputError(f"media mode must be one of {', '.join(MEDIA_MODES)}", value=mode)
        self.folder, self.mode = folder, mode
        if mode == "paths":
            (folder / MEDIA_DIR).mkdir(exist_ok=True)

    def cells(self, source: str, name: str) -> dict:
        """The row fields that carry the clip ``source`` stored as ``name`` (one copy in path mode)."""
        if self.mode == "embed":
            return {"video": {"bytes": Path(source).read_bytes(), "path": name}}
        dest = self.folder / MEDIA_DIR / name
        if not dest.exists():
            shutil.copyfile(source, dest)
        return {PATH_COLUMN: f"{MEDIA_DIR}/{name}", DIGEST_COLUMN: file_digest(dest)}


def features(feats, mode: str):
    """``feats`` (a datasets.Features with a ``video`` column) as this mode writes it."""
    from datasets import Features, Value

    if mode == "embed":
        return feats
    out = {k: v for k, v in feats.items() if k != "video"}
    return Features({**out, PATH_COLUMN: Value("string"), DIGEST_COLUMN: Value("string")})


def card_configs(folder: Path, configs: tuple[str, ...], default: str, split: str) -> list[dict]:
    """The card's ``configs`` entries for a path-mode folder: each config's metadata tables plus the media files."""
    suffixes = sorted({p.suffix for p in (folder / MEDIA_DIR).iterdir() if p.is_file()})
    entries = []
    for name in configs:
        tables = [p.name for p in sorted(folder.glob(f"{name}-{split}-*.parquet"))]
        if len(list((folder / MEDIA_DIR).iterdir())) <= len(tables):
            # datasets picks the builder by the most common extension; more tables than clips would pick parquet
            raise InputError(f"config '{name}' has {len(tables)} metadata table(s) and fewer clips: path mode needs "
                             "at least as many clips as shards; build with --media-mode embed", file=folder)
        entry = {"config_name": name, "data_files": [f"{name}-{split}-*.parquet"]
                 + [f"{MEDIA_DIR}/*{s}" for s in suffixes], "metadata_filenames": tables, "drop_labels": True}
        if name == default:
            entry["default"] = True
        entries.append(entry)
    return entries


def verify_media(folder: str | Path, config: str) -> int:
    """Check every clip a path-mode config names against the SHA-256 its rows record; returns the clips checked."""
    folder = Path(folder)
    seen: dict[str, str] = {}
    for table in config_shards(folder, config):
        t = pq.read_table(table, columns=[PATH_COLUMN, DIGEST_COLUMN]).to_pydict()
        for row, (rel, digest) in enumerate(zip(t[PATH_COLUMN], t[DIGEST_COLUMN], strict=True), start=1):
            path = folder / rel
            if rel in seen:
                continue
            if not path.is_file():
                raise InputError(f"clip {rel} is missing from the dataset folder", file=table, row=row,
                                 column=PATH_COLUMN)
            if file_digest(path) != digest:
                raise InputError(f"clip {rel} changed after the build (its SHA-256 is not the one the row records); "
                                 "rebuild the dataset or restore the clip", file=table, row=row, column=DIGEST_COLUMN)
            seen[rel] = digest
    return len(seen)


def load_paths_config(folder: str | Path, config: str, split: str = "train"):
    """A path-mode config of a local folder as ``datasets.Dataset`` (clips verified first), read with the same
    builder ``load_dataset(folder, config)`` infers, on absolute file paths (no cache keyed by the folder's name)."""
    import datasets

    folder = Path(folder)
    verify_media(folder, config)
    tables = [str(p.resolve()) for p in sorted(folder.glob(f"{config}-{split}-*.parquet"))]
    if not tables:
        raise InputError(f"no metadata table for config '{config}' split '{split}'", file=folder)
    clips = [str(p.resolve()) for p in sorted((folder / MEDIA_DIR).iterdir()) if p.is_file()]
    return datasets.load_dataset("videofolder", data_files={split: tables + clips}, split=split, drop_labels=True,
                                 metadata_filenames=[Path(t).name for t in tables])


def merge_paths_shards(dest: Path, shards: list[Path], configs: tuple[str, ...]) -> None:
    """Copy the metadata tables and clips of several path-mode shard folders into ``dest``; every config must end up
    with shards 0..N-1 of one N, each exactly once (as :func:`~omniaudit.data_builders.hub.merge_shard_files`)."""
    (dest / MEDIA_DIR).mkdir()
    for config in configs:
        names: dict[str, Path] = {}
        for folder in shards:
            tables = sorted(folder.glob(f"{config}-*-of-*.parquet"))
            if not tables:
                raise InputError(f"no metadata table for config '{config}' (not a --media-mode paths build?)",
                                 file=folder)
            for t in tables:
                if t.name in names:
                    raise InputError(f"shard file {t.name} is in two folders ({names[t.name]} and {folder})",
                                     file=folder)
                names[t.name] = folder
        counts = {int(n.rsplit("-of-", 1)[1].split(".")[0]) for n in names}
        if len(counts) != 1 or len(names) != next(iter(counts)):
            raise InputError(f"config '{config}': shards are incomplete or of different builds (have {sorted(names)})")
        for name, folder in names.items():
            shutil.copyfile(folder / name, dest / name)
    for folder in shards:
        for clip in sorted((folder / MEDIA_DIR).iterdir()):
            target = dest / MEDIA_DIR / clip.name
            if target.exists() and file_digest(target) != file_digest(clip):
                raise InputError(f"clip {clip.name} differs between shard folders", file=folder)
            if not target.exists():
                shutil.copyfile(clip, target)


CARD_NOTE = f"""
## Media by path

This dataset was built with `--media-mode paths`: each clip is stored once under `{MEDIA_DIR}/` and every config's
rows name it in `{PATH_COLUMN}` (with its SHA-256 in `{DIGEST_COLUMN}`). `datasets.load_dataset(PATH_OR_REPO, CONFIG)`
reads the config's metadata table with the `videofolder` builder, which joins each name to the dataset folder (or the
downloaded Hub snapshot) and gives a decodable `video` column; the card's `metadata_filenames` tell it which table is
the config's. Copy or upload the whole folder: a config without `{MEDIA_DIR}/` has no clips.
"""


def soundtrack(cell, sample_rate: int | None = None) -> tuple:
    """The soundtrack of a loaded row's clip: ``(samples, rate)``, samples float32 ``(channels, n)``.

    ``cell``: the row's ``video`` value, decoded (a torchcodec ``VideoDecoder``, as ``load_dataset`` gives it) or not
    (``{"bytes", "path"}``, after ``ds.cast_column("video", Video(decode=False))``); embedded bytes and path-mode
    files alike. Read with torchcodec's ``AudioDecoder`` (the audio stream of the same file; ``sample_rate``
    resamples). The clip's soundtrack is the model's audio input (``video_audio``), so no separate Audio column.
    """
    from torchcodec.decoders import AudioDecoder

    encoded = getattr(cell, "_hf_encoded", cell)  # datasets keeps a decoded clip's {"path", "bytes"} here
    if not isinstance(encoded, dict) or (encoded.get("bytes") is None and not encoded.get("path")):
        raise InputError("expected a video cell ({'bytes', 'path'}) or a decoded video from datasets",
                         value=type(cell).__name__)
    source = encoded["bytes"] if encoded.get("bytes") is not None else str(encoded["path"])
    samples = AudioDecoder(source, sample_rate=sample_rate).get_all_samples()
    return samples.data.numpy().astype("float32", copy=False), int(samples.sample_rate)
