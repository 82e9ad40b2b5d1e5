"""A dataset folder rebuilt in place, or another folder with the same name, is read afresh (no stale cache)."""

import pandas as pd

from omniaudit.data_builders.hub import configs_metadata, load_config, write_hub_dataset
from omniaudit.evaluation.judges.items import load_items


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
