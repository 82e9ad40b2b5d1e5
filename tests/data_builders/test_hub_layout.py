"""The Hub layout: datasets.load_dataset reads every config offline; the card carries counts and win rates."""

import datasets
import pytest

from omniaudit.data_builders.hub import HubUnavailable, push_to_hub
from omniaudit.data_builders.preference import PreferenceBuildOptions, SyntheticSpec, build_preference_dataset


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("hub") / "ds"
    options = PreferenceBuildOptions(source_balanced=True, length_control=0.15, dual_order=True)
    return build_preference_dataset(out, options=options, spec=SyntheticSpec(n_pairs=400, seed=2))


def test_load_dataset_reads_every_config(built):
    pairs = datasets.load_dataset(str(built), "pairs", split="train")
    assert pairs.num_rows == 400
    assert {"fold", "len1", "len2", "prior1", "prior2", "counter_stereotypical", "length_matched"} <= set(
        pairs.column_names)
    for config in ("source_balanced", "length_controlled", "dual_order"):
        assert datasets.load_dataset(str(built), config, split="train").num_rows > 0
    assert datasets.load_dataset(str(built), split="train").num_rows == 400  # "pairs" is the default config


def test_card_documents_counts_and_generative_model(built):
    card = (built / "README.md").read_text()
    assert card.startswith("---\n") and "config_name: dual_order" in card
    assert "counter-stereotypical" in card and "Generator win rates" in card
    assert "Generative model of the embedded synthetic default" in card and "aurora-7b" in card


def test_push_fails_fast_offline(built):
    with pytest.raises(HubUnavailable, match="HF_HUB_OFFLINE"):
        push_to_hub(built, "someone/some-dataset")
