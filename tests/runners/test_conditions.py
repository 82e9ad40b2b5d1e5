"""``--conditions`` (``load_items``) selects on the column each config has (interventions: intervention /
dimension; composition: ablation / template_name / ...; protocols: condition or task), and a value the config lacks
is an error listing the valid values (it used to say "condition in None")."""

from __future__ import annotations

import collections
import re

import pytest

from omniaudit.cli import main
from omniaudit.data_builders.hub import load_config
from omniaudit.errors import InputError
from omniaudit.runners.items import load_items


@pytest.fixture(scope="module")
def composition(tmp_path_factory):
    out = tmp_path_factory.mktemp("c3po") / "ds"
    assert main(["build", "composition", "--synthetic", "12", "--out", str(out)]) == 0
    return out


def test_interventions_select_on_intervention_and_dimension(intervention_dataset):
    diag = load_config(intervention_dataset, "diagnostic", columns=["id", "intervention", "dimension"])
    shift = load_items(intervention_dataset, "diagnostic", ["shift"])
    assert sorted(i.id for i in shift) == sorted(diag.loc[diag["intervention"] == "shift", "id"])
    both = load_items(intervention_dataset, "diagnostic", ["mute", "swap"])  # one column: alternatives
    assert sorted(i.id for i in both) == sorted(diag.loc[diag["intervention"].isin(["mute", "swap"]), "id"])
    sync_shift = load_items(intervention_dataset, "diagnostic", ["shift", "sync"])  # two columns: both hold
    expected = diag[(diag["intervention"] == "shift") & (diag["dimension"] == "sync")]["id"]
    assert sorted(i.id for i in sync_shift) == sorted(expected) and len(expected) > 0
    assert [i.id for i in load_items(intervention_dataset, "diagnostic", ["dimension=existence"])] == list(
        diag.loc[diag["dimension"] == "existence", "id"])


def test_an_unknown_value_lists_the_valid_ones(intervention_dataset):
    with pytest.raises(InputError) as err:
        load_items(intervention_dataset, "diagnostic", ["shfit"])
    message = str(err.value)
    assert "'shfit' is not a value config 'diagnostic' can be selected on" in message
    assert re.search(r"intervention: mute, original, shift, swap; dimension: consistency, existence, sync", message)
    assert "None" not in message
    # values that exist but never together
    with pytest.raises(InputError, match=r"no items in config 'diagnostic' with intervention in \['mute'\]; "
                                         r"dimension in \['sync'\] \(each value exists"):
        load_items(intervention_dataset, "diagnostic", ["mute", "sync"])
    with pytest.raises(InputError, match="has no 'format' column"):
        load_items(intervention_dataset, "diagnostic", None, ["concat"])


def test_composition_selects_on_ablation_and_template(composition):
    ablations = load_config(composition, "ablations", columns=["id", "ablation", "template_name"])
    muted = load_items(composition, "ablations", ["mute_audio"])
    assert sorted(i.id for i in muted) == sorted(ablations.loc[ablations["ablation"] == "mute_audio", "id"])
    template = ablations["template_name"].iloc[0]
    one = load_items(composition, "ablations", ["text_only", template])
    expected = ablations[(ablations["ablation"] == "text_only") & (ablations["template_name"] == template)]["id"]
    assert sorted(i.id for i in one) == sorted(expected) and len(expected) > 0
    samples = load_config(composition, "samples", columns=["id", "category"])
    ic = load_items(composition, "samples", ["IC"])
    assert sorted(i.id for i in ic) == sorted(samples.loc[samples["category"] == "IC", "id"])
    with pytest.raises(InputError, match=r"valid values: ablation: drop_image, mute_audio, text_only; template_name: "
                                         r".*; category: CC, IC"):
        load_items(composition, "ablations", ["mute"])


def test_protocols_keep_condition_or_task(protocol_dataset):
    items = load_items(protocol_dataset, "pairwise", ["cleanness"], ["concat"])
    assert items and {i.condition for i in items} == {"cleanness"}
    ref = load_items(protocol_dataset, "reference", ["match"])
    assert ref and {i.condition for i in ref} == {"match"}
    # run-protocols passes every config the values of all: values this config lacks are a warning, not an error
    with pytest.warns(UserWarning, match=r"'cleanness' not in config 'reference', ignored"):
        assert len(load_items(protocol_dataset, "reference", ["match", "cleanness"])) == len(ref)
    with pytest.raises(InputError, match=r"--formats: config 'pairwise' has no format \['stereo'\]; valid values: "
                                         r"concat, native"):
        load_items(protocol_dataset, "pairwise", None, ["stereo"])
    counts = collections.Counter(i.condition for i in load_items(protocol_dataset, "pairwise", ["task=identical"]))
    assert set(counts) == {"identical"}


def test_judge_cli_runs_on_the_selected_interventions(intervention_dataset, tmp_path):
    out = tmp_path / "mute.jsonl"
    assert main(["judge", "--dataset", str(intervention_dataset), "--config", "diagnostic", "--judge",
                 "scripted:oracle", "--conditions", "mute", "--out", str(out)]) == 0
    import pandas as pd

    diag = load_config(intervention_dataset, "diagnostic", columns=["id", "intervention"])
    assert sorted(pd.read_json(out, lines=True)["id"]) == sorted(diag.loc[diag["intervention"] == "mute", "id"])
