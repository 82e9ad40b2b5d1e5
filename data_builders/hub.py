"""Write, read and publish datasets in the Hugging Face Hub layout.

Layout: ``OUT/<config>/<split>-00000-of-00001.parquet`` plus ``OUT/README.md`` whose YAML ``configs`` entry maps each
config to its files, so ``datasets.load_dataset(OUT, config)`` works on the folder and on a pushed repo alike. Each
config also carries a fingerprint of its data (:func:`~.fingerprint.seal_card`), so ``datasets``' cache never serves
one build's rows for another. A push uploads exactly the files the build wrote, to a private repo unless asked
(:func:`push_to_hub`).
"""

from __future__ import annotations

import glob
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from omniaudit.data_builders.card import card_configs, card_entries
from omniaudit.data_builders.fingerprint import config_fingerprint, sealed_fingerprints
from omniaudit.errors import InputError
from omniaudit.io import MARKER, atomic_dir, marker_files, read_marker


def shard_name(split: str, index: int = 0, count: int = 1) -> str:
    return f"{split}-{index:05d}-of-{count:05d}.parquet"


def configs_metadata(configs: dict[str, list[str]], default: str | None = None) -> list[dict]:
    """The ``configs`` list of a dataset card: one entry per config, each split a glob over its shards."""
    entries = []
    for name, splits in configs.items():
        entry: dict = {"config_name": name,
                       "data_files": [{"split": s, "path": f"{name}/{s}-*.parquet"} for s in splits]}
        if name == (default or next(iter(configs))):
            entry["default"] = True
        entries.append(entry)
    return entries


def write_hub_dataset(out_dir: str | Path, tables: dict[str, dict[str, pd.DataFrame | pa.Table]], card: str) -> Path:
    """Write every ``tables[config][split]`` as Parquet and the card, atomically replacing ``out_dir``."""
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        for config, splits in tables.items():
            (tmp / config).mkdir()
            for split, table in splits.items():
                if isinstance(table, pd.DataFrame):
                    table = pa.Table.from_pandas(table, preserve_index=False)
                pq.write_table(table, tmp / config / shard_name(split))
        (tmp / "README.md").write_text(card, encoding="utf-8")
    return out_dir


class ParquetSink:
    """Append rows to one Parquet file in small row groups (memory stays flat in the number of clips)."""

    def __init__(self, path: Path, features, rows_per_group: int = 32) -> None:
        self.schema = features.arrow_schema  # a datasets.Features: its metadata tells load_dataset the feature types
        self.rows_per_group = rows_per_group
        self.writer = pq.ParquetWriter(path, self.schema)
        self.buffer: list[dict] = []

    def add(self, rows: list[dict]) -> None:
        self.buffer.extend(rows)
        if len(self.buffer) >= self.rows_per_group:
            self.flush()

    def flush(self) -> None:
        if self.buffer:
            self.writer.write_table(pa.Table.from_pylist(self.buffer, schema=self.schema))
            self.buffer = []

    def close(self) -> None:
        self.flush()
        self.writer.close()


def merge_shard_files(dest: Path, shards: list[Path], configs: tuple[str, ...]) -> None:
    """Copy the Parquet shards ``<config>/<split>-I-of-N.parquet`` of several folders into ``dest``.

    Every config must end up with shards 0..N-1 of one N, each exactly once, so a merged dataset is never partial.
    """
    seen: dict[str, Path] = {}
    for folder in shards:
        for config in configs:
            files = sorted((folder / config).glob("*.parquet"))
            if not files:
                raise InputError(f"no Parquet files for config '{config}'", file=folder)
            for f in files:
                key = f"{config}/{f.name}"
                if key in seen:
                    raise InputError(f"shard file {key} is in two folders ({seen[key]} and {folder})", file=folder)
                seen[key] = folder
    for config in configs:
        names = [k.split("/", 1)[1] for k in seen if k.startswith(f"{config}/")]
        counts = {int(n.rsplit("-of-", 1)[1].split(".")[0]) for n in names}
        if len(counts) != 1 or len(names) != next(iter(counts)):
            raise InputError(f"config '{config}': shards are incomplete or of different builds (have {sorted(names)})")
    for key, folder in seen.items():
        (dest / key).parent.mkdir(exist_ok=True)
        shutil.copyfile(folder / key, dest / key)


def load_hub_dataset(path_or_repo: str | Path, config: str | None, split: str = "train"):
    """One config/split as a ``datasets.Dataset``: a local Hub-layout folder or a Hub repo id.

    A local folder is read through the ``parquet`` builder on its shards' absolute paths: ``load_dataset(FOLDER,
    config)`` caches by the folder's *name* and the card's relative patterns, so a folder rebuilt in place (or another
    folder with the same name) would silently be served the first build's rows. Its files must still be the ones
    omniaudit wrote (:func:`check_sealed`).
    """
    import datasets

    folder = Path(path_or_repo)
    try:
        if config is None or not (folder / "README.md").is_file():  # a Hub repo, or not a folder omniaudit wrote
            return datasets.load_dataset(str(path_or_repo), config, split=split)
        configs = card_configs(folder)
        if config not in configs:
            raise InputError(f"no config '{config}' in this dataset; its card lists {sorted(configs)}", file=folder)
        if any(e.get("config_name") == config and e.get("metadata_filenames") for e in card_entries(folder)):
            from omniaudit.data_builders.media_store import load_paths_config  # media by path: one copy per clip

            check_sealed(folder, config)
            return load_paths_config(folder, config, split)
        patterns = [p for s, p in configs[config] if s == split]
        files = sorted({str(f.resolve()) for p in patterns for f in folder.glob(p) if f.suffix == ".parquet"})
        if not files:
            raise InputError(f"config '{config}' has no Parquet shards for split '{split}'", file=folder)
        check_sealed(folder, config)
        return datasets.load_dataset("parquet", data_files={split: files}, split=split)
    except InputError:
        raise
    except (ValueError, FileNotFoundError, ConnectionError, datasets.exceptions.DatasetNotFoundError) as exc:
        raise InputError(f"cannot load config '{config}' split '{split}' (expected a folder written by omniaudit "
                         f"or a Hub dataset repo id): {type(exc).__name__}: {exc}", file=path_or_repo) from exc


def load_config(path_or_repo: str | Path, config: str, split: str = "train",
                columns: list[str] | None = None) -> pd.DataFrame:
    """Read one config/split (:func:`load_hub_dataset`) as pandas.

    ``columns`` selects columns before conversion to pandas (e.g. to leave embedded media out).
    """
    ds = load_hub_dataset(path_or_repo, config, split)
    if columns is not None:
        missing = [c for c in columns if c not in ds.column_names]
        if missing:
            raise InputError(f"config '{config}' lacks column(s) {missing}; it has {ds.column_names}",
                             file=path_or_repo)
        ds = ds.select_columns(columns)
    return ds.to_pandas()


def check_sealed(folder: str | Path, config: str) -> None:
    """Refuse a config whose files changed after omniaudit wrote them (its card's fingerprint no longer matches):
    its rows are not the build the card, and any predictions made on it, describe."""
    sealed = sealed_fingerprints(folder).get(config)
    if sealed is not None and sealed != (now := config_fingerprint(folder, config)):
        raise InputError(f"config '{config}': its files changed after omniaudit wrote them (the card says "
                         f"{sealed}, the files are {now}); rebuild the dataset, or restore its files", file=folder)


def check_dataset_folder(folder: str | Path) -> list[str]:
    """The config names of a dataset folder written by omniaudit; InputError naming the folder otherwise.

    Checked: the folder exists; its README.md card has YAML ``configs`` whose data files all match Parquet files
    in the folder; and it was written by omniaudit (the ``.omniaudit.json`` marker, or a card that says so: a
    dataset downloaded from the Hub has no marker and stays readable as input). This check is for *reading* a
    folder: replacing one needs its marker (:func:`omniaudit.io.check_out_dir`), pushing one too (:func:`push_files`).
    """
    folder = Path(folder)
    build = "build one with `omniaudit build ...`"
    if not folder.exists():
        raise InputError("folder not found", file=folder)
    if not folder.is_dir():
        raise InputError(f"not a folder; expected a dataset folder written by omniaudit ({build})", file=folder)
    card = folder / "README.md"
    if not card.is_file():
        hint = (f"; the dataset of a preference audit is in {folder / 'dataset'}"
                if (folder / "dataset" / "README.md").is_file() else f" ({build})")
        raise InputError(f"no README.md dataset card: not a dataset folder written by omniaudit{hint}", file=folder)
    names = []
    for name, specs in card_configs(folder).items():
        for split in {s for s, _ in specs}:  # a split's table (its media by path may sit beside it: media/*.mp4)
            patterns = [p for s, p in specs if s == split]
            if not [f for p in patterns for f in folder.glob(p) if f.suffix == ".parquet"]:
                raise InputError(f"config '{name}': no Parquet file matches the card's data files {patterns!r}; "
                                 f"the folder is incomplete", file=folder)
        names.append(name)
    text = card.read_text(encoding="utf-8", errors="replace")
    if read_marker(folder) is None and "omniaudit" not in text:
        raise InputError(f"not written by omniaudit (no {MARKER} marker, and the card does not name omniaudit)",
                         file=folder)
    return names


class HubUnavailable(RuntimeError):
    """Pushing was requested but the Hub cannot be reached (offline mode, no network or no credentials)."""


_PUBLIC: ContextVar[bool] = ContextVar("omniaudit_push_public", default=False)


@contextmanager
def push_visibility(public: bool = False) -> Iterator[None]:
    """Within the block, :func:`push_to_hub` without an explicit ``private`` creates public repos only when
    ``public`` (the CLI's ``--public``); the default everywhere is private."""
    token = _PUBLIC.set(bool(public))
    try:
        yield
    finally:
        _PUBLIC.reset(token)


def push_files(folder: str | Path) -> list[str]:
    """The files a push of ``folder`` uploads: exactly those its omniaudit marker lists (the build's own files, as
    relative POSIX paths), the marker itself left out. InputError naming the folder when it has no marker (e.g. a
    dataset downloaded from the Hub, or a folder of your own) or a listed file is missing or is a symbolic link."""
    folder = Path(folder)
    if read_marker(folder) is None:
        raise InputError(f"no {MARKER} marker: only a folder written by `omniaudit build` or `merge` can be pushed "
                         f"(the marker lists the files it wrote, and only those are uploaded); rebuild it, or upload "
                         f"it yourself with `hf upload`", file=folder)
    files = [f for f in marker_files(folder) if f != MARKER and not f.endswith("/" + MARKER)]
    missing = [f for f in files if not (folder / f).is_file()]
    links = [f for f in files if (folder / f).is_symlink()]
    if missing or links:
        what = f"missing: {', '.join(missing[:5])}" if missing else f"symbolic links: {', '.join(links[:5])}"
        raise InputError(f"files the build wrote are not as it left them ({what}); rebuild the folder", file=folder)
    return files


def push_to_hub(out_dir: str | Path, repo_id: str, private: bool | None = None, token: str | None = None) -> str:
    """Upload a dataset folder written by omniaudit as a dataset repo: exactly the files the build wrote.

    The folder is checked first (:func:`check_dataset_folder`, then :func:`push_files`: the marker's list of files,
    passed to ``upload_folder`` as exact ``allow_patterns``, so a ``.env``, notes or any other file or folder added
    later stays local); offline, it fails fast with a clear message. ``private`` (default: private unless within
    :func:`push_visibility` ``(public=True)``) applies to a new repo; an existing *public* repo is refused unless
    the push is public.
    """
    from huggingface_hub import HfApi, constants

    check_dataset_folder(out_dir)  # before any Hub call
    files = push_files(out_dir)
    private = (not _PUBLIC.get()) if private is None else private
    where = f"The dataset is complete in {out_dir}; push it later with `omniaudit push {out_dir} {repo_id}`."
    if constants.HF_HUB_OFFLINE:
        raise HubUnavailable(f"cannot push to '{repo_id}': HF_HUB_OFFLINE is set. {where}")
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        public_repo = private and getattr(api.repo_info(repo_id, repo_type="dataset"), "private", True) is False
    except Exception as exc:  # network, auth and permission errors all end the same way for the user
        raise HubUnavailable(f"cannot push to '{repo_id}': {type(exc).__name__}: {exc}. {where}") from exc
    if public_repo:
        raise InputError(f"the dataset repo '{repo_id}' exists and is public; nothing was uploaded. Pass --public to "
                         f"upload to it, or choose another repo", file=out_dir)
    try:
        commit = api.upload_folder(folder_path=str(out_dir), repo_id=repo_id, repo_type="dataset",
                                   commit_message="Upload with omniaudit",
                                   allow_patterns=[glob.escape(f) for f in files])
    except Exception as exc:
        raise HubUnavailable(f"cannot push to '{repo_id}': {type(exc).__name__}: {exc}. {where}") from exc
    return str(getattr(commit, "commit_url", commit))
