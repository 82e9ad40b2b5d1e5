"""`omniaudit push` and `--push-to-hub` upload exactly the files the build wrote, to a private repo unless --public.

The Hub is stubbed at the lowest level a push reaches (``HfApi.create_repo``, ``repo_info``, the README YAML check
and ``create_commit``), so ``upload_folder`` really runs and every path its commit carries is seen.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from omniaudit.cli import main
from omniaudit.io import MARKER


class Hub:
    """What reached the (stubbed) Hub: repos created and their private flag, commits and their paths."""

    def __init__(self, monkeypatch, public_repos: tuple[str, ...] = ()):
        import huggingface_hub

        self.repos: dict[str, bool] = {}
        self.commits: list[list[str]] = []
        hub = self

        def create_repo(api, repo_id, *, repo_type=None, private=None, exist_ok=False, **kwargs):
            hub.repos[repo_id] = private
            return f"https://huggingface.co/datasets/{repo_id}"

        def repo_info(api, repo_id, *, repo_type=None, **kwargs):
            return SimpleNamespace(private=repo_id not in public_repos and hub.repos.get(repo_id) is not False)

        def create_commit(api, repo_id, operations, *, commit_message, repo_type=None, **kwargs):
            hub.commits.append(sorted(op.path_in_repo for op in operations))
            return SimpleNamespace(commit_url=f"https://huggingface.co/datasets/{repo_id}/commit/1")

        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        # with hf_xet installed, upload_folder streams through its own pipeline; without it, one create_commit
        monkeypatch.setattr(huggingface_hub.hf_api, "is_xet_available", lambda: False)
        monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", create_repo)
        monkeypatch.setattr(huggingface_hub.HfApi, "repo_info", repo_info)
        monkeypatch.setattr(huggingface_hub.HfApi, "_validate_yaml", lambda api, content, **kw: None)
        monkeypatch.setattr(huggingface_hub.HfApi, "create_commit", create_commit)


def build(folder: Path, *extra: str) -> Path:
    assert main(["build", "preference", "--pairs", "60", "--out", str(folder), *extra]) == 0
    return folder


BUILD_FILES = ["README.md", "judge/train-00000-of-00001.parquet", "pairs/train-00000-of-00001.parquet"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("push") / "ds")


def clutter(folder: Path) -> None:
    """What a user keeps next to a dataset: secrets, notes, a scratch folder, a stray file in a config folder."""
    (folder / ".env").write_text("HF_TOKEN=hf_secret\n", encoding="utf-8")
    (folder / "notes.md").write_text("private notes\n", encoding="utf-8")
    (folder / "scratch").mkdir()
    (folder / "scratch" / "draft.parquet").write_bytes(b"PAR1")
    (folder / "pairs" / "old-copy.parquet").write_bytes(b"PAR1")


def test_push_sends_only_the_builds_files_to_a_private_repo(capsys, tmp_path, built, monkeypatch):
    folder = tmp_path / "ds"
    shutil.copytree(built, folder)
    clutter(folder)
    hub = Hub(monkeypatch)
    assert main(["push", str(folder), "me/ds"]) == 0
    assert hub.commits == [BUILD_FILES]  # no .env, notes, scratch/, stray shard, nor the local marker
    assert hub.repos == {"me/ds": True}  # private by default
    assert "pushed 3 file(s) written by the build to private dataset repo me/ds" in capsys.readouterr().out
    assert json.loads((folder / MARKER).read_text())["files"] == BUILD_FILES


def test_public_only_when_asked_and_private_is_an_alias_of_the_default(tmp_path, built, monkeypatch):
    hub = Hub(monkeypatch)
    assert main(["push", str(built), "me/open", "--public"]) == 0
    assert main(["push", str(built), "me/closed", "--private"]) == 0
    assert hub.repos == {"me/open": False, "me/closed": True}
    assert hub.commits == [BUILD_FILES, BUILD_FILES]


def test_an_existing_public_repo_needs_public(capsys, built, monkeypatch):
    hub = Hub(monkeypatch, public_repos=("them/ds",))
    assert main(["push", str(built), "them/ds"]) == 2
    err = capsys.readouterr().err
    assert "exists and is public" in err and "--public" in err and hub.commits == []
    assert main(["push", str(built), "them/ds", "--public"]) == 0 and hub.commits == [BUILD_FILES]


def test_push_to_hub_of_a_builder_is_private_unless_public(tmp_path, monkeypatch):
    hub = Hub(monkeypatch)
    build(tmp_path / "a", "--push-to-hub", "me/a")
    build(tmp_path / "b", "--push-to-hub", "me/b", "--public")
    assert hub.repos == {"me/a": True, "me/b": False}
    assert hub.commits == [BUILD_FILES, BUILD_FILES]


def test_a_folder_without_marker_is_not_pushed(capsys, tmp_path, built, monkeypatch):
    """E.g. a dataset downloaded from the Hub: readable as input, but omniaudit does not know which files are its."""
    from omniaudit.data_builders.hub import check_dataset_folder

    folder = tmp_path / "downloaded"
    shutil.copytree(built, folder)
    (folder / MARKER).unlink()
    assert check_dataset_folder(folder) == ["pairs", "judge"]  # still fine to read
    hub = Hub(monkeypatch)
    assert main(["push", str(folder), "me/ds"]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert f"error: {folder}: no {MARKER} marker: only a folder written by `omniaudit build`" in err
    assert hub.repos == {} and hub.commits == []


def test_a_listed_file_that_went_missing_is_refused(capsys, tmp_path, built, monkeypatch):
    folder = tmp_path / "ds"
    shutil.copytree(built, folder)
    (folder / "judge" / "train-00000-of-00001.parquet").unlink()
    (folder / "judge" / "train-00000-of-00001.parquet").symlink_to(Path.home())
    hub = Hub(monkeypatch)
    assert main(["push", str(folder), "me/ds"]) == 2
    assert "not as it left them" in capsys.readouterr().err and hub.commits == []


def test_cards_and_manifests_carry_no_absolute_path(tmp_path, emoprefer_csv):
    """The source CSV is named by its file name only (the card is published with the dataset)."""
    out = tmp_path / "built"
    assert main(["build", "preference", "--data", str(emoprefer_csv), "--out", str(out)]) == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "from **emoprefer.csv**" in card
    for f in out.rglob("*"):
        if f.is_file() and f.suffix in (".md", ".json"):
            assert str(tmp_path) not in f.read_text(encoding="utf-8"), f


def test_redact_paths():
    from omniaudit.io import local_name, redact_paths

    assert redact_paths({"/home/me/corpus (x)": ["hf:/models/mine", "ravdess (/data/RAVDESS)", "a / b", 3,
                                                    "https://huggingface.co/datasets/me/ds", "rel/path.csv"]}) == {
        "corpus (x)": ["hf:mine", "ravdess (RAVDESS)", "a / b", 3, "https://huggingface.co/datasets/me/ds",
                       "rel/path.csv"]}
    assert local_name("/nowhere/data.csv") == "data.csv" and local_name("me/hub-dataset") == "me/hub-dataset"
