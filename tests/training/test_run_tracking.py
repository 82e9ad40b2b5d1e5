"""A training run names its data in the tracker (wandb offline: dataset, config, omniaudit fingerprint, model), and
``dataset_filter`` trains on the rows it names (Thud's SFT w/ OP from the interventions sft config)."""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest
from test_training import RECIPES
from wandb_records import parsed_records

from omniaudit.errors import InputError


@pytest.fixture(scope="module")
def chat_dataset(intervention_dataset, tmp_path_factory):
    """The tiny recipes' text chat records (intervention, dimension and messages of the interventions sft config)."""
    from omniaudit.data_builders.hub import configs_metadata, write_hub_dataset
    from omniaudit.hub_cards import dataset_card
    from omniaudit.tiny_models import _text_chat_tables

    tables = _text_chat_tables(intervention_dataset)
    out = tmp_path_factory.mktemp("chat") / "chat"
    card = dataset_card("tiny_chat.md.j2", {"configs": configs_metadata({c: ["train"] for c in tables})})
    write_hub_dataset(out, tables, card)
    return out, tables["sft"]["train"]


def test_dataset_filter_keeps_the_named_rows_and_names_what_is_wrong(chat_dataset):
    import datasets

    from omniaudit.training.common import filter_rows

    _, table = chat_dataset
    ds = datasets.Dataset.from_pandas(table[["id", "intervention", "dimension"]])
    op = filter_rows(ds, {"intervention": "original", "dimension": "sync"})
    expect = table[(table["intervention"] == "original") & (table["dimension"] == "sync")]["id"].tolist()
    assert op["id"] == expect and 0 < len(expect) < len(table)
    two = filter_rows(ds, {"intervention": ["mute", "swap"]})
    assert two["id"] == table[table["intervention"].isin(["mute", "swap"])]["id"].tolist()
    with pytest.raises(InputError, match="no column 'task'"):
        filter_rows(ds, {"task": "op"})
    with pytest.raises(InputError, match=r"no row has intervention \['opp'\]"):
        filter_rows(ds, {"intervention": "opp"})
    with pytest.raises(InputError, match="leaves no row"):
        filter_rows(ds, {"intervention": "mute", "dimension": "sync"})



def test_dataset_filter_refuses_a_list_or_an_empty_value_list_and_matches_null_cells_only_by_null():
    import datasets

    from omniaudit.training.common import DataArguments, filter_rows

    ds = datasets.Dataset.from_list([{"id": "a", "x": None}, {"id": "b", "x": "None"}, {"id": "c", "x": "y"}])
    assert filter_rows(ds, {"x": None})["id"] == ["a"]  # null: the null cell, not the text "None"
    assert filter_rows(ds, {"x": "None"})["id"] == ["b"]
    assert filter_rows(ds, {"x": [None, "y"]})["id"] == ["a", "c"]
    with pytest.raises(InputError, match=r"no row has x \['z'\]; its values: \[None, 'None', 'y'\]"):
        filter_rows(ds, {"x": "z"})
    for bad, message in (([["x"]], "column 'dataset_filter': expected a mapping"),
                         ([{"x": []}], "the value list of 'x' is empty")):
        with pytest.raises(InputError, match=message):
            filter_rows(ds, *bad)
        with pytest.raises(InputError, match=message):  # a recipe's value, refused before any model is loaded
            DataArguments(dataset_name="d", dataset_filter=bad[0])


@pytest.mark.slow
def test_wandb_run_config_names_dataset_fingerprint_and_model(chat_dataset, tiny_models, tmp_path, monkeypatch):
    from trl import ModelConfig, SFTConfig

    from omniaudit.data_builders.fingerprint import fingerprint_of
    from omniaudit.training.common import DataArguments, parse
    from omniaudit.training.sft import MediaArguments, main

    data, table = chat_dataset
    for key, value in {"WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path), "WANDB_CACHE_DIR": str(tmp_path / "c"),
                       "WANDB_CONFIG_DIR": str(tmp_path / "cfg"), "WANDB_DATA_DIR": str(tmp_path / "d"),
                       "WANDB_PROJECT": "omniaudit-tests", "WANDB_SILENT": "true"}.items():
        monkeypatch.setenv(key, value)
    args = parse((DataArguments, SFTConfig, ModelConfig, MediaArguments),
                 ["--config", str(RECIPES / "sft.yaml"), "--output_dir", str(tmp_path / "out"), "--dataset_name",
                  str(data), "--model_name_or_path", str(tiny_models["text"]), "--report_to", "wandb",
                  "--max_steps", "1", "--eval_strategy", "no", "--save_strategy", "no", "--eval_fraction", "0",
                  "--disable_tqdm", "true"])
    args[0].dataset_filter = {"intervention": "original", "dimension": "sync"}  # as a recipe's mapping sets it
    trainer = main(*args)
    assert len(trainer.train_dataset) == int(((table["intervention"] == "original")
                                              & (table["dimension"] == "sync")).sum())
    import wandb

    wandb.finish()
    config: dict = {}
    for _ in range(40):  # read again for up to 10 s: once, in a full suite, the log lacked the config (cause unknown)
        for run in (tmp_path / "wandb").glob("offline-run-*"):
            for record in parsed_records(next(run.glob("*.wandb"))):
                kind = record.WhichOneof("record_type")  # the config travels in the run record or after it
                updates = (record.config.update if kind == "config" else record.run.config.update if kind == "run"
                           else [])
                config.update({item.key: json.loads(item.value_json) for item in updates})
        if "dataset_name" in config:
            break
        time.sleep(0.25)
    assert config["dataset_name"] == str(data) and config["dataset_config"] == "sft"
    assert config["dataset_fingerprint"] == fingerprint_of(data, "sft") and config["dataset_fingerprint"]
    assert config["model_name_or_path"] == str(tiny_models["text"])
    assert config["dataset_filter"] == {"intervention": "original", "dimension": "sync"}
    assert config["max_steps"] == 1  # the TrainingArguments are still there
    assert pd.isna(config.get("heldout_fold"))


def test_dataset_card_names_the_recipes_that_train_on_it(intervention_dataset):
    import yaml

    from omniaudit.hub_cards.training import recipes_folder

    card = (intervention_dataset / "README.md").read_text()
    section = card[card.index("## Train on it"):]
    rows = [line.split("|")[1:4] for line in section.splitlines() if line.startswith("| `")]
    listed = {(c.strip(" `"), r.strip(" `")) for c, r, _ in rows}
    assert ("sft", "training/recipes/qwen3-omni-30b-a3b/sft.yaml") in listed
    assert ("dpo", "training/recipes/qwen3-omni-30b-a3b/dpo.yaml") in listed
    for config, recipe in listed:  # each row is what the recipe itself says
        spec = yaml.safe_load((recipes_folder().parent.parent / recipe).read_text())
        sources = [spec.get("dataset_config")] + [s.get("config") for s in
                                                  (spec.get("dataset_mixture") or {}).get("datasets", [])]
        assert config in sources and not recipe.startswith("training/recipes/tiny/")
    assert "qwen2.5-omni-7b" not in section  # preference recipes are not on an interventions card
