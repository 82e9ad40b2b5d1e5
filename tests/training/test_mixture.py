"""Dataset mixtures (alignment-handbook's ``dataset_mixture``) for the training recipes: row counts and pair kinds by
hand count on the intervention dataset, user-brought sets, errors, and a mixture recipe through the DPO script."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest
from thud_helpers import launch, tiny_thud_root

from omniaudit.errors import InputError
from omniaudit.training.mixture import load_mixture, parse_mixture

REPO = Path(__file__).resolve().parents[2]
PAIR = ["prompt", "chosen", "rejected", "video"]


@pytest.fixture(scope="module")
def kinds(intervention_dataset):
    """The dpo pairs of the 6-clip intervention dataset per kind, by hand: per clip 2 Shift pairs (offsets -2 and +2,
    wrong direction), 1 Mute, 1 Swap, 4 CTP (original vs each shift, both assignments) and 1 OP."""
    from omniaudit.data_builders.hub import load_config

    counts = load_config(intervention_dataset, "dpo", columns=["kind"])["kind"].value_counts().to_dict()
    assert counts == {"ctp": 24, "shift": 12, "mute": 6, "swap": 6, "op": 6}
    return counts


def source(ds, **extra) -> dict:
    return {"id": str(ds), "config": "dpo", **extra}


def test_weights_and_kinds_give_the_hand_counted_rows(intervention_dataset, kinds):
    mixture = {"datasets": [source(intervention_dataset, kinds=["ctp"], weight=0.25),
                            source(intervention_dataset, kinds=["mute", "shift"], weight=0.5),
                            source(intervention_dataset, kinds="op")], "seed": 3}
    result = load_mixture(mixture, ("prompt", "chosen", "rejected"))
    ds = result.dataset
    # floor(0.25 * 24) = 6 CTP, floor(0.5 * (6 + 12)) = 9 Mute or Shift, all 6 OP
    assert len(ds) == 6 + 9 + 6
    got = collections.Counter(ds["kind"])
    assert got["ctp"] == 6 and got["mute"] + got["shift"] == 9 and got["op"] == 6 and set(got) <= {"ctp", "mute",
                                                                                                  "shift", "op"}
    assert [r["kept"] for r in result.sources] == [6, 9, 6] and [r["rows"] for r in result.sources] == [24, 18, 6]
    assert len(set(ds["id"])) == len(ds)  # a seeded sample without replacement
    assert ds.features["video"].decode is False and ds[0]["video"]["bytes"]  # media stay encoded
    again = load_mixture(mixture).dataset
    assert again["id"] == ds["id"]  # same seed: the same rows in the same order
    other = load_mixture({**mixture, "seed": 4}).dataset
    assert sorted(other["id"]) != sorted(ds["id"]) and len(other) == len(ds)


def test_a_user_brought_set_mixes_with_the_omniaudit_pairs(intervention_dataset, kinds, tmp_path):
    """A FineVideo-style set (a local Parquet file with only prompt / chosen / rejected / video) and the dpo config
    (which also has id, kind, offsets, ...): the columns both have are kept."""
    from omniaudit.data_builders.hub import load_hub_dataset

    fv = load_hub_dataset(intervention_dataset, "dpo").select(range(10)).select_columns(PAIR)
    fv.to_parquet(str(tmp_path / "fv_d.parquet"))
    result = load_mixture({"datasets": [source(intervention_dataset, kinds=["ctp"]),
                                        {"id": str(tmp_path / "fv_d.parquet"), "weight": 0.5}]})
    assert len(result.dataset) == 24 + 5
    assert sorted(result.dataset.column_names) == sorted(PAIR)
    # the same file named with its columns, and a source whose kind column is another one
    fv.add_column("task", ["description"] * 4 + ["localization"] * 6).to_parquet(str(tmp_path / "fv_tasks.parquet"))
    picked = load_mixture({"datasets": [{"id": str(tmp_path / "fv_tasks.parquet"), "kinds": ["description"],
                                         "kind_column": "task", "columns": PAIR}]}).dataset
    assert len(picked) == 4 and picked.column_names == PAIR


def test_bad_mixtures_name_the_source_and_key(intervention_dataset, kinds, tmp_path):
    good = source(intervention_dataset)
    cases = [({"datasets": [good], "ratio": 1}, r"unknown key\(s\) \['ratio'\]"),
             ({"datasets": []}, "non-empty list of datasets"),
             ({"datasets": [{**good, "weight": 0}]}, r"datasets\[0\]\.weight"),
             ({"datasets": [good, {**good, "weight": 1.5}]}, r"datasets\[1\]\.weight"),
             ({"datasets": [{**good, "fraction": 0.5}]}, r"unknown key\(s\) \['fraction'\]"),
             ({"datasets": [{"config": "dpo"}]}, r"datasets\[0\]\.id"),
             ({"datasets": [good], "test_split_size": 1.0}, "test_split_size")]
    for mixture, message in cases:
        with pytest.raises(InputError, match=message):
            parse_mixture(mixture)
    with pytest.raises(InputError, match=r"datasets\[0\].*kind\(s\) \['sp'\].*'ctp'"):
        load_mixture({"datasets": [{**good, "kinds": ["sp"]}]})
    with pytest.raises(InputError, match=r"datasets\[0\].*weight 0.01 of 6 row\(s\) keeps none"):
        load_mixture({"datasets": [{**good, "kinds": ["op"], "weight": 0.01}]})
    with pytest.raises(InputError, match=r"datasets\[0\].*lacks column\(s\) \['messages'\]"):
        load_mixture({"datasets": [good]}, ("messages",))
    (tmp_path / "text.jsonl").write_text(json.dumps({"prompt": "q", "chosen": "a", "rejected": "b"}) + "\n")
    with pytest.raises(InputError, match=r"source\(s\) \[0\] have a 'video' column and source\(s\) \[1\] do not"):
        load_mixture({"datasets": [good, {"id": str(tmp_path / "text.jsonl")}]})
    with pytest.raises(InputError, match=r"'kinds' selects on column 'kind', which this dataset lacks"):
        load_mixture({"datasets": [{"id": str(tmp_path / "text.jsonl"), "kinds": ["ctp"]}]})
    with pytest.raises(InputError, match=r"datasets\[0\].*no config 'nope'"):
        load_mixture({"datasets": [{**good, "config": "nope"}]})


def parse_recipe(path: Path, tmp_path: Path, *extra: str):
    from trl import DPOConfig, ModelConfig

    from omniaudit.training.common import DataArguments, parse
    from omniaudit.training.sft import MediaArguments

    return parse((DataArguments, DPOConfig, ModelConfig, MediaArguments),
                 ["--config", str(path), "--output_dir", str(tmp_path), "--use_cpu", "true", "--bf16", "false",
                  *extra])


def test_the_papers_recipe_is_ctp_plus_fv_d_plus_fv_a_l(tmp_path, monkeypatch):
    import os

    monkeypatch.setattr(os, "environ", dict(os.environ))  # the recipe's env: block
    data, training, model, _ = parse_recipe(REPO / "training/recipes/qwen3-omni-30b-a3b/dpo_ours.yaml", tmp_path)
    sources = data.dataset_mixture.datasets
    assert [s.id for s in sources] == ["data/thud", "data/finevideo-fv-d", "data/finevideo-fv-a-l"]
    assert sources[0].kinds == ("ctp",) and sources[0].config == "dpo"
    assert all(s.columns == tuple(PAIR) for s in sources) and data.max_train_samples == 10000  # the paper's 10K
    # appendix C Table 4, DPO column
    assert (training.beta, training.learning_rate, training.num_train_epochs, training.gradient_accumulation_steps,
            model.lora_r, model.lora_alpha, model.lora_dropout) == (0.1, 1e-6, 1, 8, 32, 64, 0.05)
    with pytest.raises(InputError, match="either dataset_name or dataset_mixture"):
        parse_recipe(REPO / "training/recipes/tiny/dpo_mixture.yaml", tmp_path, "--dataset_name", "data/thud")


@pytest.mark.slow
def test_the_tiny_mixture_recipe_trains_with_dpo_on_cpu(tmp_path_factory):
    """All 16 CTP pairs + floor(0.5 * 8) Mute / Swap pairs = 20 rows: two steps of batch 2 are 4 / 20 = 0.2 epoch."""
    root = tiny_thud_root(tmp_path_factory.mktemp("mix"))
    out = root / "dpo_mixture"
    result = launch(root, "dpo.py", REPO / "training/recipes/tiny/dpo_mixture.yaml", out)
    assert (out / "adapter_model.safetensors").is_file()
    epochs = re.findall(r"'epoch': '?([\d.]+)'?", result.stdout + result.stderr)
    assert epochs and float(epochs[-1]) == pytest.approx(0.2)
