"""A dataset folder rebuilt in place, or another folder with the same name, is read afresh (no stale cache)."""

import pandas as pd

from omniaudit.data_builders.hub import configs_metadata, load_config, write_hub_dataset
from omniaudit.runners.items import load_items


def _build(folder, n: int, tag: str):
    rows = pd.DataFrame({"id": [f"{tag}{i}" for i in range(n)], "prompt": [f"q{i}" for i in range(n)],
                         "options": [["A", "B"]] * n})
    import yaml

    card = "---\n" + yaml.safe_dump({"configs": configs_metadata({"items": ["train"]})}) + "---\nomniaudit test\n"
    return write_hub_dataset(folder, {"items": {"train": rows}}, card)


def test_a_rebuilt_folder_and_a_namesake_folder_are_read_afresh(tmp_path):
    first = _build(tmp_path / "a" / "ds", 5, "x")
    assert len(load_config(first, "items")) == 5
    _build(first, 3, "y")  # rebuilt in place: same name, same card patterns
    assert load_config(first, "items")["id"].tolist() == ["y0", "y1", "y2"]
    other = _build(tmp_path / "b" / "ds", 4, "z")  # another folder with the same name
    assert [i.id for i in load_items(other, "items")] == ["z0", "z1", "z2", "z3"]
    assert [i.id for i in load_items(first, "items")] == ["y0", "y1", "y2"]


def test_load_dataset_as_users_type_it_reads_each_folders_own_rows(tmp_path, monkeypatch):
    """``datasets.load_dataset(FOLDER, CONFIG)`` caches a local folder by its name, the config and the card's YAML;
    the card's per-config data fingerprint (fingerprint.seal_card) keeps two builds named alike, or one rebuilt in
    place, apart."""
    import datasets

    from omniaudit.cli import main

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")  # a fresh cache
    monkeypatch.chdir(tmp_path)

    def build(out: str, *extra: str) -> None:
        assert main(["build", "preference", *extra, "--out", out]) == 0

    def load(folder: str):
        return datasets.load_dataset(folder, "pairs", split="train")

    build("a/ds", "--pairs", "100")
    build("b/ds", "--pairs", "300")
    assert load("a/ds").num_rows == 100 and load("b/ds").num_rows == 300
    build("a/ds", "--pairs", "200")  # rebuilt in place with another size
    assert load("a/ds").num_rows == 200
    first = load("b/ds")["a1"]
    build("b/ds", "--pairs", "300", "--synthetic-seed", "7")  # same size, other rows
    assert load("b/ds")["a1"] != first and load("b/ds").num_rows == 300
    card = (tmp_path / "a" / "ds" / "README.md").read_text(encoding="utf-8")
    assert "description: 'omniaudit data sha256:" in card or "description: omniaudit data sha256:" in card


def test_seal_card_is_deterministic_and_follows_the_data(tmp_path):
    from omniaudit.data_builders.card import card_configs
    from omniaudit.data_builders.fingerprint import FINGERPRINT_PREFIX, seal_card

    one = _build(tmp_path / "one", 5, "x")
    two = _build(tmp_path / "two", 5, "x")
    other = _build(tmp_path / "other", 5, "y")
    cards = [(f / "README.md").read_text(encoding="utf-8") for f in (one, two, other)]
    assert cards[0] == cards[1] != cards[2] and FINGERPRINT_PREFIX in cards[0]
    assert seal_card(one) and (one / "README.md").read_text(encoding="utf-8") == cards[0]  # idempotent
    assert card_configs(one) == {"items": [("train", "items/train-*.parquet")]}
