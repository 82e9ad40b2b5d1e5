"""A dataset card (``README.md`` with YAML ``configs``), read: which Parquet files make up each config."""

from __future__ import annotations

from pathlib import Path

from omniaudit.errors import InputError


def card_entries(folder: Path) -> list:
    """The YAML ``configs`` list of a local folder's README.md card (InputError when there is none)."""
    import yaml

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
    return configs


def card_configs(folder: str | Path) -> dict[str, list[tuple[str, str]]]:
    """The ``configs`` of a local folder's README.md card: config name -> [(split, data file pattern)]."""
    folder = Path(folder)
    card = folder / "README.md"
    configs = card_entries(folder)
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
