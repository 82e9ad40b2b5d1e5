"""``media_column`` checks the rows a dataset holds (not the whole Arrow table under a ``select`` /
``filter`` / shuffle), and path-only cells (a ``.jsonl`` source can only give paths) are read from their files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import datasets
import pytest

from omniaudit.errors import InputError
from omniaudit.training.common import media_column
from omniaudit.training.mixture import load_mixture

FEATURES = datasets.Features({"id": datasets.Value("string"), "video": datasets.Video(decode=False)})


def table(cells):
    return datasets.Dataset.from_dict({"id": [f"r{i}" for i in range(len(cells))], "video": cells},
                                      features=FEATURES)


def embedded(data: bytes) -> dict:
    return {"bytes": data, "path": None}


def test_a_filtered_dataset_is_checked_on_its_own_rows():
    ds = table([embedded(b"a"), embedded(b"b"), {"bytes": None, "path": "/nowhere/gone.mp4"}, embedded(b"d")])
    # the path-only row is filtered away: nothing to complain about (the old code read the whole table and failed on
    # table row 2, then looked it up in the 2-row selection: IndexError)
    for kept in (ds.select([0, 1]), ds.filter(lambda r: r["id"] != "r2"), ds.select([3, 0])):
        out, column = media_column(kept)
        assert column == "video" and [c["bytes"] for c in out["video"]] == [c["bytes"] for c in kept["video"]]
    # in the selection, the row is named by its place in the selection and its id
    with pytest.raises(InputError, match=re.escape("row 1 (id 'r2') has no embedded video bytes and its path "
                                                   "'/nowhere/gone.mp4' is not a file here")):
        media_column(ds.select([3, 2]))


def test_path_only_cells_from_a_jsonl_source_are_read_from_their_files(tmp_path):
    clips = []
    for i in range(3):
        clip = tmp_path / f"clip{i}.mp4"
        clip.write_bytes(f"video {i}".encode())
        clips.append(clip)
    src = tmp_path / "pairs.jsonl"
    src.write_text("".join(json.dumps({"id": f"p{i}", "prompt": "q", "chosen": "a", "rejected": "b",
                                       "video": str(c)}) + "\n" for i, c in enumerate(clips)))
    ds = datasets.load_dataset("json", data_files=str(src), split="train")
    assert ds.features["video"] == datasets.Value("string")  # paths as plain strings
    out, column = media_column(ds.shuffle(seed=1))
    assert column == "video" and out.features["video"].decode is False
    got = {r["id"]: r["video"]["bytes"] for r in out}
    assert got == {f"p{i}": c.read_bytes() for i, c in enumerate(clips)}
    Path(clips[1]).unlink()
    with pytest.raises(InputError, match=r"id 'p1'.*clip1\.mp4' is not a file here"):
        media_column(datasets.load_dataset("json", data_files=str(src), split="train"))


def test_a_jsonl_set_of_video_paths_mixes_with_the_embedded_pairs(intervention_dataset, tmp_path):
    """The DPO input that crashed: a FineVideo-style JSONL (paths) in a dataset_mixture with omniaudit's dpo config
    (embedded bytes); the mixture is cast to the first source's Video feature and shuffled."""
    from omniaudit.data_builders.hub import load_hub_dataset

    dpo = load_hub_dataset(intervention_dataset, "dpo").cast_column("video", datasets.Video(decode=False))
    rows = []
    for i, r in enumerate(dpo.select(range(4))):
        clip = tmp_path / f"fv{i}.mp4"
        clip.write_bytes(r["video"]["bytes"])
        rows.append({"prompt": r["prompt"], "chosen": r["chosen"], "rejected": r["rejected"], "video": str(clip)})
    (tmp_path / "fv.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    mixed = load_mixture({"datasets": [{"id": str(intervention_dataset), "config": "dpo", "kinds": ["mute"]},
                                       {"id": str(tmp_path / "fv.jsonl")}], "seed": 0},
                         ("prompt", "chosen", "rejected")).dataset
    assert len(mixed) == 6 + 4
    out, column = media_column(mixed)
    assert column == "video" and all(r["video"]["bytes"] for r in out)
    from_files = sorted(r["video"]["bytes"] for r in out if str(r["video"]["path"]).startswith(str(tmp_path)))
    assert from_files == sorted(Path(r["video"]).read_bytes() for r in rows)
