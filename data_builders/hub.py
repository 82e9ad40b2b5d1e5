"""Write, read and publish datasets in the Hugging Face Hub layout.

Layout: ``OUT/<config>/<split>-00000-of-00001.parquet`` plus ``OUT/README.md`` whose YAML ``configs`` entry maps
each config to its files, so ``datasets.load_dataset(OUT, config)`` works on the folder and on a pushed repo alike.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from omniaudit.errors import InputError
from omniaudit.io import MARKER, atomic_dir, read_marker


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
    folder with the same name) would silently be served the first build's rows.
    """
    import datasets

    folder = Path(path_or_repo)
    try:
        if config is None or not (folder / "README.md").is_file():  # a Hub repo, or not a folder omniaudit wrote
            return datasets.load_dataset(str(path_or_repo), config, split=split)
        configs = card_configs(folder)
        if config not in configs:
            raise InputError(f"no config '{config}' in this dataset; its card lists {sorted(configs)}", file=folder)
        patterns = [p for s, p in configs[config] if s == split]
        files = sorted({str(f.resolve()) for p in patterns for f in folder.glob(p) if f.suffix == ".parquet"})
        if not files:
            raise InputError(f"config '{config}' has no Parquet shards for split '{split}'", file=folder)
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


def card_configs(folder: str | Path) -> dict[str, list[tuple[str, str]]]:
    """The ``configs`` of a local folder's README.md card: config name -> [(split, data file pattern)]."""
    import yaml

    folder = Path(folder)
    card = folder / "README.md"
    if not card.is_file():
        raise InputError("no README.md dataset card: not a dataset folder written by omniaudit", file=folder)
    text = card.read_text(encoding="utf-8", errors="replace")
    head, sep, _ = text.removeprefix("---\n").partition("\n---")
    try:
        meta = yaml.safe_load(head) if text.startswith("---\n") and sep else None
    except yaml.YAMLError:
        meta = None
    configs = meta.get("configs") if isinstance(meta, dict) else None
    if not isinstance(configs, list) or not configs:
        raise InputError("README.md has no YAML 'configs' list: not a dataset card written by omniaudit", file=card)
    out = {}
    for entry in configs:
        name = entry.get("config_name") if isinstance(entry, dict) else None
        files = entry.get("data_files") if isinstance(entry, dict) else None
        if not name or not isinstance(files, list) or not files:
            raise InputError("a config of the card lacks config_name or data_files", file=card, value=entry)
        specs = [(f.get("split", "train"), f.get("path")) if isinstance(f, dict) else ("train", f) for f in files]
        if not all(isinstance(p, str) for _, p in specs):
            raise InputError("a config's data_files entry has no path", file=card, value=entry)
        out[name] = specs
    return out


def check_dataset_folder(folder: str | Path) -> list[str]:
    """The config names of a dataset folder written by omniaudit; InputError naming the folder otherwise.

    Checked: the folder exists; its README.md card has YAML ``configs`` whose data files all match Parquet files
    in the folder; and it was written by omniaudit (the ``.omniaudit.json`` marker, or for folders written before
    the marker existed, a card that says so).
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
        for _, pattern in specs:
            if not [f for f in folder.glob(pattern) if f.suffix == ".parquet"]:
                raise InputError(f"config '{name}': no Parquet file matches the card's data file {pattern!r}; "
                                 f"the folder is incomplete", file=folder)
        names.append(name)
    text = card.read_text(encoding="utf-8", errors="replace")
    if read_marker(folder) is None and "omniaudit" not in text:
        raise InputError(f"not written by omniaudit (no {MARKER} marker, and the card does not name omniaudit)",
                         file=folder)
    return names


class HubUnavailable(RuntimeError):
    """Pushing was requested but the Hub cannot be reached (offline mode, no network or no credentials)."""


def push_to_hub(out_dir: str | Path, repo_id: str, private: bool = False, token: str | None = None) -> str:
    """Upload a dataset folder written by omniaudit (card included, local marker left out) as a dataset repo.

    The folder is checked first (:func:`check_dataset_folder`); offline, it fails fast with a clear message.
    """
    from huggingface_hub import HfApi, constants

    check_dataset_folder(out_dir)  # before any Hub call
    where = f"The dataset is complete in {out_dir}; push it later with `omniaudit push {out_dir} {repo_id}`."
    if constants.HF_HUB_OFFLINE:
        raise HubUnavailable(f"cannot push to '{repo_id}': HF_HUB_OFFLINE is set. {where}")
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(folder_path=str(out_dir), repo_id=repo_id, repo_type="dataset",
                                   commit_message="Upload with omniaudit", ignore_patterns=[MARKER])
    except Exception as exc:  # network, auth and permission errors all end the same way for the user
        raise HubUnavailable(f"cannot push to '{repo_id}': {type(exc).__name__}: {exc}. {where}") from exc
    return str(getattr(commit, "commit_url", commit))
