"""Training scripts, recipes and accelerate configs ship with the package (package data), can be copied out and are
named by name (``recipe:NAME``, ``omniaudit recipes``); launch lines come in the form that runs where they are asked
for (a clone's paths in a clone, the installed package's elsewhere)."""

import shlex
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from omniaudit.cli import main as omniaudit
from omniaudit.errors import InputError
from omniaudit.launch_files import (
    accelerate_config_names,
    accelerate_config_path,
    copy_launch_files,
    form_here,
    header_launches,
    launch_files,
    launch_line,
    packaged_path,
    recipe_launch,
    recipe_names,
    recipe_path,
    render_command,
    resolve_config_argument,
)

ROOT = Path(__file__).resolve().parents[1]


def test_package_data_covers_every_recipe_and_config():
    """What pyproject ships (its package-data globs) is every recipe and config of the tree, so a pip install
    (a wheel, not a checkout) has them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs, data = config["package-dir"], config["package-data"]
    folder = lambda pkg: ROOT / dirs.get(pkg, "/".join(pkg.split(".")[1:]))  # noqa: E731 - sub-packages by path
    shipped = {p for pkg, globs in data.items() for g in globs for p in folder(pkg).glob(g)}
    assert set((ROOT / "training" / "recipes").rglob("*.yaml")) <= shipped
    assert set((ROOT / "accelerate_configs").glob("*.yaml")) <= shipped
    assert "omniaudit.accelerate_configs" in config["packages"]


def test_copy_launch_files_lays_them_out_as_the_repository(tmp_path):
    written = copy_launch_files(tmp_path / "launch")
    rel = {p.relative_to(tmp_path / "launch").as_posix() for p in written}
    assert {"training/dpo.py", "training/recipes/tiny/dpo.yaml", "accelerate_configs/zero3_cpu.yaml"} <= rel
    assert (tmp_path / "launch" / "training" / "recipes" / "tiny" / "dpo.yaml").read_bytes() == \
        (launch_files()["training"] / "recipes" / "tiny" / "dpo.yaml").read_bytes()


# --- packaged recipes and accelerate configs by name -----------------------------------------------------------------
RECIPES = sorted(p.relative_to(ROOT / "training" / "recipes").with_suffix("").as_posix()
                 for p in (ROOT / "training" / "recipes").glob("*/*.yaml"))
CLONE = ("accelerate launch --config_file accelerate_configs/zero3.yaml training/dpo.py --config "
         "training/recipes/qwen3-omni-30b-a3b/dpo.yaml --output_dir runs/dpo  # the paper's")


def test_every_recipe_and_config_has_a_name():
    assert recipe_names() == RECIPES and "tiny/dpo" in RECIPES
    assert accelerate_config_names() == sorted(p.stem for p in (ROOT / "accelerate_configs").glob("*.yaml"))
    for spelling in ("tiny/dpo", "recipe:tiny/dpo", "tiny/dpo.yaml", "recipe:tiny/dpo.yaml"):
        assert recipe_path(spelling) == launch_files()["training"] / "recipes" / "tiny" / "dpo.yaml"
    assert packaged_path("accelerate:zero3") == accelerate_config_path("zero3.yaml")
    assert packaged_path("accelerate:zero3").read_bytes() == (ROOT / "accelerate_configs/zero3.yaml").read_bytes()


@pytest.mark.parametrize("name", ["tiny/nope", "nope", "../tiny/dpo", "recipe:"])
def test_an_unknown_recipe_names_the_list_command(name):
    with pytest.raises(InputError, match="omniaudit recipes list"):
        recipe_path(name)


def test_recipe_colon_names_are_resolved_for_the_training_scripts():
    argv = ["--config", "recipe:tiny/dpo", "--output_dir", "recipe:x", "--config=recipe:tiny/sft"]
    assert resolve_config_argument(argv) == ["--config", str(recipe_path("tiny/dpo")), "--output_dir", "recipe:x",
                                             f"--config={recipe_path('tiny/sft')}"]
    assert resolve_config_argument(["--config", "mine.yaml"]) == ["--config", "mine.yaml"]
    with pytest.raises(InputError):
        resolve_config_argument(["--config", "recipe:tiny/nope"])


def test_a_launch_line_keeps_the_clone_form_in_a_clone_and_turns_installed_elsewhere(tmp_path):
    assert form_here(CLONE, ROOT) == "clone" and render_command(CLONE, cwd=ROOT) == CLONE
    installed = render_command(CLONE, cwd=tmp_path)
    assert form_here(CLONE, tmp_path) == "installed"
    words = shlex.split(installed, comments=True)
    assert words[:3] == ["accelerate", "launch", "--config_file"] and Path(words[3]).is_absolute()
    assert Path(words[3]).read_bytes() == (ROOT / "accelerate_configs/zero3.yaml").read_bytes()
    assert words[4:] == ["-m", "omniaudit.training.dpo", "--config", "recipe:qwen3-omni-30b-a3b/dpo", "--output_dir",
                         "runs/dpo"]
    assert installed.endswith("  # the paper's")
    assert render_command(CLONE, "shell") == (
        'accelerate launch --config_file "$(omniaudit recipes path accelerate:zero3)" -m omniaudit.training.dpo '
        "--config recipe:qwen3-omni-30b-a3b/dpo --output_dir runs/dpo  # the paper's")
    assert render_command("omniaudit build preference --out data/pairs", "installed") == \
        "omniaudit build preference --out data/pairs"


def test_the_clone_form_needs_every_file_it_names_here(tmp_path):
    """A folder with the script and the config but not the recipe is no clone: the installed form runs there."""
    (tmp_path / "training").mkdir()
    (tmp_path / "accelerate_configs").mkdir()
    (tmp_path / "training" / "dpo.py").write_text("")
    (tmp_path / "accelerate_configs" / "zero3.yaml").write_text("")
    assert form_here(CLONE, tmp_path) == "installed"
    copy_launch_files(tmp_path / "copy")  # what copy_launch_files writes is a clone's layout
    assert form_here(CLONE, tmp_path / "copy") == "clone"


def test_launch_line_writes_the_form_that_runs_here(tmp_path, monkeypatch):
    clone = launch_line("dpo", "tiny/dpo", "cpu", "--output_dir", "out", cwd=ROOT)
    assert clone == ("accelerate launch --config_file accelerate_configs/cpu.yaml training/dpo.py --config "
                     "training/recipes/tiny/dpo.yaml --output_dir out")
    monkeypatch.chdir(tmp_path)
    assert launch_line("dpo", "recipe:tiny/dpo") == render_command(clone.removesuffix(" --output_dir out"))
    assert " -m omniaudit.training.dpo --config recipe:tiny/dpo" in launch_line("dpo", "tiny/dpo")
    with pytest.raises(InputError):
        launch_line("dpo", "tiny/nope")


@pytest.mark.parametrize("name", RECIPES)
def test_every_recipe_header_shows_its_launch_from_a_clone_and_from_a_pip_install(name):
    """The header's clone-form launch names the recipe itself and the script's module exists; the same launch in
    the installed (shell) form follows it."""
    text = recipe_path(name).read_text(encoding="utf-8")
    yaml.safe_load(text)
    clone = recipe_launch(name)
    assert clone is not None and f"--config training/recipes/{name}.yaml" in clone, clone
    assert all((ROOT / f).is_file() for f in shlex.split(clone) if f.startswith(("training/", "accelerate_configs/")))
    assert render_command(clone, "shell") in header_launches(text), "add the pip-install form after it"


def test_recipes_list_path_and_copy(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert omniaudit(["recipes", "list"]) == 0
    out = capsys.readouterr().out
    assert "tiny/dpo" in out and "omniaudit.training.dpo" in out and "zero3" in out
    assert omniaudit(["recipes", "path", "accelerate:cpu"]) == 0
    assert capsys.readouterr().out.strip() == str(accelerate_config_path("cpu"))
    assert omniaudit(["recipes", "path", "recipe:tiny/dpo"]) == 0
    assert capsys.readouterr().out.strip() == str(recipe_path("tiny/dpo"))
    assert omniaudit(["recipes", "copy", "qwen3-omni-30b-a3b/dpo", "mine"]) == 0
    lines = capsys.readouterr().out.splitlines()
    copy = tmp_path / "mine" / "dpo.yaml"
    assert copy.read_bytes() == recipe_path("qwen3-omni-30b-a3b/dpo").read_bytes()
    assert lines[0] == "recipe written to mine/dpo.yaml"
    assert "-m omniaudit.training.dpo --config mine/dpo.yaml" in lines[1]  # the copy, not the packaged recipe
    copy.write_text("# edited\n")
    assert omniaudit(["recipes", "copy", "qwen3-omni-30b-a3b/dpo", "mine"]) == 2  # an edited copy is kept
    assert "exists" in capsys.readouterr().err and copy.read_text() == "# edited\n"
    assert omniaudit(["recipes", "copy", "qwen3-omni-30b-a3b/dpo", "mine", "--overwrite"]) == 0
    assert omniaudit(["recipes", "path", "tiny/nope"]) == 2


def python_m(module: str, *args: str) -> int | str | None:
    """``python -m MODULE ARGS`` run as ``python -m`` runs it (runpy, as ``__main__``) but in this process: a process
    each imported TRL (~10 s) for a parse; returns what it exits with (None: 0, a string: printed, 1)."""
    import runpy

    argv = sys.argv
    sys.argv = [module, *args]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return exc.code
    finally:
        sys.argv = argv
    return None


@pytest.mark.slow  # imports TRL (~10 s)
def test_a_training_script_takes_a_packaged_recipe_by_name(tmp_path, monkeypatch, capsys):
    """`python -m omniaudit.training.sft --config recipe:NAME --help` outside a clone: the recipe is read (a recipe
    that does not exist is one error line)."""
    monkeypatch.chdir(tmp_path)
    assert python_m("omniaudit.training.sft", "--config", "recipe:tiny/sft", "--help") in (0, None)
    assert "--dataset_name" in capsys.readouterr().out
    code = python_m("omniaudit.training.sft", "--config", "recipe:tiny/nope")
    err = capsys.readouterr().err + (code if isinstance(code, str) else "")  # a string exit is printed
    assert isinstance(code, str) or code == 1, code  # exits 1
    assert err.strip().splitlines()[-1].startswith("error: "), err[-2000:]


def test_tiny_models_help_and_its_last_line_say_how_to_train_here(tmp_path, capsys, monkeypatch):
    from omniaudit.tiny_models import train_command

    for where, form in ((ROOT, "clone"), (tmp_path, "installed")):
        monkeypatch.chdir(where)
        with pytest.raises(SystemExit):
            omniaudit(["tiny-models", "--help"])
        line = launch_line("dpo", "tiny/dpo", "cpu", "--output_dir", "runs/tiny/dpo", form=form)
        assert "".join(line.split()) in "".join(capsys.readouterr().out.split())  # however --help wraps it
        assert train_command() == line
    elsewhere = shlex.split(train_command("my tiny", form="installed"))
    assert elsewhere[elsewhere.index("--model_name_or_path") + 1] == "my tiny/causal_lm"
    assert elsewhere[elsewhere.index("--dataset_name") + 1] == "my tiny/data/chat"
    assert elsewhere[elsewhere.index("--output_dir") + 1] == "my tiny/dpo"
