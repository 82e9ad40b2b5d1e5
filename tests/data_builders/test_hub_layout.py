"""The Hub layout: datasets.load_dataset reads every config offline; the card carries counts and win rates."""

import re
from types import SimpleNamespace

import datasets
import pytest

from omniaudit.data_builders.hub import HubUnavailable, check_dataset_folder, push_to_hub
from omniaudit.data_builders.preference import PreferenceBuildOptions, SyntheticSpec, build_preference_dataset
from omniaudit.errors import InputError


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


# ----------------------------------------------------------------------------------------------------------- push
class NoHub:
    """Stands in for huggingface_hub.HfApi: any use fails the test (the folder check must come first)."""

    def __init__(self, *args, **kwargs):
        raise AssertionError("the Hub was contacted")


@pytest.fixture
def online(monkeypatch):
    """As if the Hub were reachable: HF_HUB_OFFLINE off, and HfApi replaced so a call would be caught."""
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub, "HfApi", NoHub)


def _not_a_dataset(tmp_path, built, case):
    import shutil

    folder = tmp_path / case
    if case == "missing":
        return folder, "folder not found"
    if case == "a_file":
        folder.write_text("x")
        return folder, "not a folder"
    if case == "any_folder":
        folder.mkdir()
        (folder / "data.csv").write_text("a,b\n")
        return folder, "no README.md dataset card"
    shutil.copytree(built, folder)
    if case == "audit_report":
        report = tmp_path / "report"
        report.mkdir()
        folder.rename(report / "dataset")
        return report, f"the dataset of a preference audit is in {report / 'dataset'}"
    if case == "card_without_configs":
        (folder / "README.md").write_text("# my dataset\n")
        return folder, "no YAML 'configs' list"
    if case == "missing_parquet":
        shutil.rmtree(folder / "dual_order")
        return folder, "config 'dual_order': no Parquet file matches"
    (folder / ".omniaudit.json").unlink()  # not_omniaudit: someone else's card with the same layout
    card = (folder / "README.md").read_text()
    (folder / "README.md").write_text(card.split("\n---", 1)[0].replace("omniaudit", "acme") + "\n---\n# acme\n")
    return folder, "not written by omniaudit"


@pytest.mark.parametrize("case", ["missing", "a_file", "any_folder", "audit_report", "card_without_configs",
                                  "missing_parquet", "not_omniaudit"])
def test_push_checks_the_folder_before_any_hub_call(capsys, tmp_path, built, online, case):
    from omniaudit.cli import main

    folder, message = _not_a_dataset(tmp_path, built, case)
    with pytest.raises(InputError, match=re.escape(message)):
        push_to_hub(folder, "me/ds")
    assert main(["push", str(folder), "me/ds"]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert "error: " in err and str(folder) in err and "the Hub was contacted" not in err


def test_push_uploads_a_built_dataset_without_the_local_marker(tmp_path, built, monkeypatch):
    import huggingface_hub

    calls = {}

    class FakeHub:
        def __init__(self, token=None):
            pass

        def create_repo(self, repo_id, **kwargs):
            calls["repo"] = repo_id, kwargs["private"]

        def repo_info(self, repo_id, **kwargs):
            return SimpleNamespace(private=True)

        def upload_folder(self, **kwargs):
            calls["upload"] = kwargs
            return "https://huggingface.co/datasets/me/ds/commit/1"

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHub)
    assert check_dataset_folder(built) == ["pairs", "source_balanced", "length_controlled", "dual_order", "judge"]
    assert push_to_hub(built, "me/ds").endswith("/commit/1")
    assert calls["repo"] == ("me/ds", True) and calls["upload"]["folder_path"] == str(built)
    configs = ["dual_order", "judge", "length_controlled", "pairs", "source_balanced"]
    assert calls["upload"]["allow_patterns"] == ["README.md"] + [f"{c}/train-00000-of-00001.parquet" for c in configs]
