"""``omniaudit remedy SHORTCUT`` prints each shortcut's remedy from omniaudit/shortcuts.py, and every command a
Remedy names is real: omniaudit commands parse with the CLI's own parser, training scripts, accelerate configs and
recipes exist, and each training command trains on a dataset its remedy's build command writes. Printed (and on the
card) in the form that runs where they are printed: a clone's paths in a clone, the installed package's elsewhere
(tests/test_packaging.py runs them from a wheel)."""

from __future__ import annotations

import shlex
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from omniaudit.cli import build_parser
from omniaudit.cli import main as omniaudit
from omniaudit.shortcuts import BY_NAME, SHORTCUTS, TABLE

REPO = Path(__file__).resolve().parents[1]
# upper-case placeholder words of the commands (yours to fill), and what stands in for them here
PLACEHOLDERS = {"PAIRS.csv": "pairs.csv", "RECIPE.yaml": "training/recipes/tiny/sft_omni.yaml"}
COMMANDS = [(s.name, c) for s in TABLE if s.remedy is not None for c in s.remedy.commands]


def words(command: str) -> list[str]:
    """The command's words, placeholders filled, a trailing ``# comment`` left out."""
    return [PLACEHOLDERS.get(w, w) for w in shlex.split(command, comments=True)]


def options(argv: list[str]) -> dict[str, str]:
    return {a.removeprefix("--"): b for a, b in zip(argv, argv[1:], strict=False) if a.startswith("--")}


def trained_on(argv: list[str]) -> set[str]:
    """The datasets a training command reads: its --dataset_name, else its recipe's (or the recipe's mixture)."""
    given = options(argv)
    if "dataset_name" in given:
        return {given["dataset_name"]}
    recipe = yaml.safe_load((REPO / given["config"]).read_text())
    mixture = (recipe.get("dataset_mixture") or {}).get("datasets") or []
    return {recipe["dataset_name"]} if recipe.get("dataset_name") else {d["id"] for d in mixture}


def test_every_shortcut_has_a_remedy_entry():
    assert COMMANDS and all(BY_NAME[s].remedy is not None for s in SHORTCUTS)


@pytest.mark.parametrize("name", [s for s in SHORTCUTS if BY_NAME[s].remedy.supported])
def test_prints_the_remedy_its_source_and_each_command_on_a_line(capsys, monkeypatch, name):
    monkeypatch.chdir(REPO)  # a clone's root: the commands as the table keeps them
    assert omniaudit(["remedy", name]) == 0
    lines = capsys.readouterr().out.splitlines()
    remedy = BY_NAME[name].remedy
    assert lines[0] == f"{name}: {BY_NAME[name].what}"
    assert f"remedy: {remedy.what}" in lines and f"source: {remedy.source}" in lines
    assert lines[-len(remedy.commands):] == list(remedy.commands)  # exactly, one per line, copyable


@pytest.mark.parametrize("name", [s for s in SHORTCUTS if BY_NAME[s].remedy.commands])
def test_outside_a_clone_the_commands_name_the_installed_package(capsys, tmp_path, monkeypatch, name):
    """In a folder that is not a clone: the packaged config by its absolute path, the script as a module of the
    package, the recipe by name, everything else as the table has it."""
    from omniaudit.launch_files import recipe_path

    monkeypatch.chdir(tmp_path)
    assert omniaudit(["remedy", name]) == 0
    remedy = BY_NAME[name].remedy
    printed = capsys.readouterr().out.splitlines()[-len(remedy.commands):]
    for kept, line in zip(remedy.commands, printed, strict=True):
        if kept.startswith("omniaudit "):
            assert line == kept
            continue
        argv = words(line)
        assert argv[:2] == ["accelerate", "launch"] and "training/" not in line, line
        assert Path(options(argv)["config_file"]).is_absolute() and Path(options(argv)["config_file"]).is_file()
        module = argv[argv.index("-m") + 1]
        assert (REPO / "training" / f"{module.removeprefix('omniaudit.training.')}.py").is_file(), module
        assert recipe_path(options(argv)["config"]).is_file()
        assert words(kept)[words(kept).index("--config") + 2:] == argv[argv.index("--config") + 2:]  # the rest


def test_the_card_prescribes_the_commands_in_the_form_that_runs_where_it_is_written(tmp_path, monkeypatch):
    from omniaudit.evaluation.scorecard.card import remedies

    verdicts = {"m": {s: {"status": "flagged" if s == "position" else "clear"} for s in SHORTCUTS}}
    monkeypatch.chdir(REPO)
    assert remedies(verdicts)["position"]["commands"] == list(BY_NAME["position"].remedy.commands)
    monkeypatch.chdir(tmp_path)
    installed = remedies(verdicts)["position"]["commands"]
    assert installed[0] == BY_NAME["position"].remedy.commands[0]  # the build command
    assert all(" -m omniaudit.training.pairwise_judge --config recipe:qwen2.5-7b/" in c for c in installed[1:])


def test_a_shortcut_no_paper_supports_a_remedy_for_says_so(capsys):
    unsupported = [s for s in SHORTCUTS if not BY_NAME[s].remedy.supported]
    assert unsupported == ["modality_dominance"]
    assert omniaudit(["remedy", "modality_dominance"]) == 0
    out = capsys.readouterr().out
    assert "no paper supports a remedy for modality_dominance" in out and "accelerate" not in out


def test_an_unknown_shortcut_is_one_line_and_exit_2(capsys):
    assert omniaudit(["remedy", "nonsense"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "unknown shortcut 'nonsense'" in err[0] and "label_following" in err[0]


@pytest.mark.parametrize(("argv", "message"), [
    (["remedy", "position", "--dataset", "d", "--out", "o"], "for label_following only"),
    (["remedy", "label_following", "--dataset", "d"], "--dataset needs --out"),
    (["remedy", "label_following", "--out", "o"], "--out needs --dataset"),
])
def test_misused_build_flags_exit_2(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert omniaudit(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("shortcut", "command"), [c for c in COMMANDS if c[1].startswith("omniaudit ")])
def test_every_omniaudit_command_parses(shortcut, command):
    args = build_parser().parse_args(words(command)[1:])  # argparse exits (SystemExit) on anything it does not know
    assert callable(args.func)
    assert getattr(args, "out", None)  # each builds a training set somewhere


@pytest.mark.parametrize(("shortcut", "command"), [c for c in COMMANDS if not c[1].startswith("omniaudit ")])
def test_every_training_command_names_real_files_and_options(shortcut, command):
    from omniaudit.training.common import DataArguments

    argv = words(command)
    assert argv[:2] == ["accelerate", "launch"], command
    given = options(argv)
    assert (REPO / given["config_file"]).is_file(), given["config_file"]
    script = next(w for w in argv if w.startswith("training/") and w.endswith(".py"))
    assert (REPO / script).is_file(), script
    assert (REPO / given["config"]).is_file(), given["config"]
    after = argv[argv.index(script) + 1:]
    known = {f.name for f in fields(DataArguments)} | {"config", "output_dir"}
    assert {a.removeprefix("--") for a in after if a.startswith("--")} <= known, command
    # the recipe is for this script (its header's launch line names it)
    if given["config"] not in PLACEHOLDERS.values():
        assert script in (REPO / given["config"]).read_text(), (script, given["config"])
    # it trains on what the remedy's own build command writes
    built = {options(words(c)).get("out") for c in BY_NAME[shortcut].remedy.commands if c.startswith("omniaudit ")}
    assert trained_on(argv) & built, (command, built)


def test_label_following_commands_run_end_to_end(capsys, tmp_path, protocol_dataset, monkeypatch):
    """The build command, with its dataset filled in, writes the config the training command names, and says how to
    train on it in the form that runs here (no clone: the installed package's)."""
    from omniaudit.data_builders.hub import check_dataset_folder

    monkeypatch.chdir(tmp_path)
    build, train = BY_NAME["label_following"].remedy.commands
    argv = [str(protocol_dataset) if w == "data/protocols" else str(tmp_path / w) if w == "data/deranged" else w
            for w in words(build)]
    assert omniaudit(argv[1:]) == 0
    said = capsys.readouterr().out
    assert options(words(train))["dataset_config"] in check_dataset_folder(tmp_path / "data/deranged")
    assert (f"-m omniaudit.training.sft --config recipe:qwen2.5-omni-7b/sft_deranged_labels --dataset_name "
            f"{tmp_path / 'data/deranged'} --dataset_config sft") in said
    from omniaudit.launch_files import render_command  # the set's card: both forms, for wherever it is read

    card = (tmp_path / "data/deranged/README.md").read_text(encoding="utf-8")
    assert all(c.replace("data/deranged", "PATH_OR_REPO") in card for c in (train, render_command(train, "shell")))


def test_the_style_commands_train_on_a_config_their_build_command_writes():
    build, *train = BY_NAME["style"].remedy.commands
    writes = {"--source-balanced": "source_balanced", "--length-control": "length_controlled"}
    written = {config for flag, config in writes.items() if flag in words(build)}
    assert train and all(options(words(c))["dataset_config"] in written for c in train)
