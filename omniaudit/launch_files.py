"""Where the installed package keeps what ``accelerate launch`` needs: the training scripts, their YAML recipes and
the accelerate configs (package data, so a ``pip install omniaudit`` user has them too, not only a git checkout), and
the launch lines that name them in the form that runs where the user stands.

One launch has two forms:

- **clone**, from the root of a clone (or of a folder :func:`copy_launch_files` wrote), the repository's paths::

      accelerate launch --config_file accelerate_configs/zero3.yaml training/dpo.py \\
          --config training/recipes/qwen3-omni-30b-a3b/dpo.yaml

- **installed**, from any folder where omniaudit is installed: the packaged config by its absolute path, the script
  as a module and the packaged recipe by name (``recipe:NAME``, which every training script resolves)::

      accelerate launch --config_file /.../site-packages/omniaudit/accelerate_configs/zero3.yaml \\
          -m omniaudit.training.dpo --config recipe:qwen3-omni-30b-a3b/dpo

  and, for documentation that cannot know that path, the **shell** spelling of it: ``--config_file "$(omniaudit
  recipes path accelerate:zero3)"``.

The commands omniaudit keeps (the remedies of :mod:`omniaudit.shortcuts`, the recipes' headers) are written in the
clone form; :func:`render_command` renders one for where it runs (the clone form only when every file it names is
there), :func:`launch_line` writes one.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from omniaudit.errors import InputError

RECIPE = "recipe:"  # --config recipe:NAME: a packaged recipe (training/recipes/NAME.yaml)
ACCELERATE = "accelerate:"  # omniaudit recipes path accelerate:NAME: a packaged accelerate config
FORMS = ("clone", "installed", "shell")
# the repository's paths in a clone-form launch line (what render_command rewrites)
_CONFIG_FILE = re.compile(r"--config_file accelerate_configs/(?P<name>[\w.-]+)\.yaml(?=\s|$)")
_SCRIPT = re.compile(r"(?<!\S)training/(?P<name>\w+)\.py(?=\s|$)")
_RECIPE = re.compile(r"--config training/recipes/(?P<name>[\w.-]+/[\w.-]+)\.yaml(?=\s|$)")


def launch_files() -> dict[str, Path]:
    """The installed folders: ``training`` (scripts, with ``recipes/``) and ``accelerate_configs``."""
    import omniaudit.accelerate_configs
    import omniaudit.training

    return {"training": Path(omniaudit.training.__file__).parent,
            "accelerate_configs": Path(omniaudit.accelerate_configs.__file__).parent}


def copy_launch_files(out: str | Path) -> list[Path]:
    """Copy the training scripts, recipes and accelerate configs into ``out`` (a new or empty folder), laid out as in
    the repository, so ``accelerate launch --config_file accelerate_configs/cpu.yaml training/dpo.py --config
    training/recipes/tiny/dpo.yaml`` runs from ``out``. Returns the files written."""
    from omniaudit.io import atomic_dir

    out = Path(out)
    written = []
    with atomic_dir(out) as tmp:
        for name, folder in launch_files().items():
            for src in sorted(folder.rglob("*")):
                if src.is_file() and src.suffix in (".py", ".yaml") and "__pycache__" not in src.parts:
                    dst = tmp / name / src.relative_to(folder)
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, dst)
                    written.append(out / name / src.relative_to(folder))
    if not written:
        raise InputError("no launch files found in the installed package (reinstall omniaudit)")
    return written


# ----------------------------------------------------------------------------------------- packaged files by name
def recipe_names() -> list[str]:
    """Every packaged recipe, as ``FOLDER/NAME`` (``qwen3-omni-30b-a3b/dpo``, ``tiny/sft``)."""
    folder = launch_files()["training"] / "recipes"
    return sorted(p.relative_to(folder).with_suffix("").as_posix() for p in folder.glob("*/*.yaml"))


def accelerate_config_names() -> list[str]:
    """Every packaged accelerate config, by name (``cpu``, ``zero3``, ...)."""
    return sorted(p.stem for p in launch_files()["accelerate_configs"].glob("*.yaml"))


def recipe_path(name: str) -> Path:
    """The packaged recipe ``name``: ``qwen3-omni-30b-a3b/dpo``, ``recipe:qwen3-omni-30b-a3b/dpo`` or either with
    ``.yaml`` (InputError naming ``omniaudit recipes list`` for one that does not exist)."""
    key = name.removeprefix(RECIPE).removesuffix(".yaml")
    if key not in recipe_names():
        raise InputError("no packaged recipe of this name (`omniaudit recipes list` lists them, as FOLDER/NAME)",
                         value=name)
    return launch_files()["training"] / "recipes" / f"{key}.yaml"


def accelerate_config_path(name: str) -> Path:
    """The packaged accelerate config ``name``: ``zero3``, ``accelerate:zero3`` or ``zero3.yaml``."""
    key = name.removeprefix(ACCELERATE).removesuffix(".yaml")
    if key not in accelerate_config_names():
        raise InputError("no packaged accelerate config of this name; they are "
                         f"{', '.join(accelerate_config_names())}", value=name)
    return launch_files()["accelerate_configs"] / f"{key}.yaml"


def packaged_path(name: str) -> Path:
    """A packaged file by name: ``accelerate:NAME`` an accelerate config, anything else a recipe."""
    return accelerate_config_path(name) if name.startswith(ACCELERATE) else recipe_path(name)


def header_launches(text: str) -> list[str]:
    """The ``accelerate launch`` commands of a recipe's header comment, each on one line (continuations joined)."""
    lines = [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]
    found = []
    for i, line in enumerate(lines):
        if line.startswith("accelerate launch "):
            command = [line]
            while command[-1].endswith("\\") and i + len(command) < len(lines):
                command[-1] = command[-1].removesuffix("\\").rstrip()
                command.append(lines[i + len(command)])
            found.append(" ".join(command))
    return found


def recipe_launch(name: str) -> str | None:
    """The packaged recipe's own launch line, in the clone form (the first of its header), if it has one."""
    clone = [c for c in header_launches(recipe_path(name).read_text(encoding="utf-8")) if _SCRIPT.search(c)]
    return clone[0] if clone else None


def recipe_script(name: str) -> str | None:
    """The training script a packaged recipe is for (``dpo``), as its header's launch line names it."""
    found = _SCRIPT.search(recipe_launch(name) or "")
    return found["name"] if found else None


def resolve_config_argument(argv: list[str]) -> list[str]:
    """A training script's arguments with ``--config recipe:NAME`` (or ``--config=recipe:NAME``) replaced by the
    packaged recipe's path; every other argument as it is."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--config" and i + 1 < len(out) and out[i + 1].startswith(RECIPE):
            out[i + 1] = str(recipe_path(out[i + 1]))
        elif arg.startswith("--config=" + RECIPE):
            out[i] = "--config=" + str(recipe_path(arg.removeprefix("--config=")))
    return out


def copy_recipe(name: str, folder: str | Path, overwrite: bool = False) -> Path:
    """Write an editable copy of the packaged recipe ``name`` into ``folder`` (``folder/NAME.yaml``, the folders
    made); an existing file is refused unless ``overwrite``. Returns the copy's path."""
    from omniaudit.io import atomic_file

    src = recipe_path(name)
    dst = Path(folder) / src.name
    if dst.is_dir() or (dst.exists() and not overwrite):
        raise InputError("the copy's path exists; nothing was written (--overwrite replaces a file)", file=dst)
    with atomic_file(dst) as tmp:
        tmp.write_bytes(src.read_bytes())
    return dst


# -------------------------------------------------------------------------------------------------- launch lines
def clone_files(command: str) -> list[str]:
    """The repository paths a clone-form launch line names (its accelerate config, script and recipe)."""
    return ([f"accelerate_configs/{m['name']}.yaml" for m in _CONFIG_FILE.finditer(command)]
            + [f"training/{m['name']}.py" for m in _SCRIPT.finditer(command)]
            + [f"training/recipes/{m['name']}.yaml" for m in _RECIPE.finditer(command)])


def form_here(command: str, cwd: str | Path | None = None) -> str:
    """``clone`` when every repository path ``command`` names is a file under ``cwd`` (default: the current folder,
    e.g. a clone's root), else ``installed``."""
    here = Path.cwd() if cwd is None else Path(cwd)
    files = clone_files(command)
    return "clone" if files and all((here / f).is_file() for f in files) else "installed"


def render_command(command: str, form: str | None = None, cwd: str | Path | None = None) -> str:
    """A command omniaudit keeps in the clone form (``accelerate launch --config_file accelerate_configs/X.yaml
    training/S.py --config training/recipes/R.yaml ...``), in ``form`` (:data:`FORMS`; default: :func:`form_here`).
    Anything else (an ``omniaudit`` command, a comment) is left as it is."""
    if not command.startswith("accelerate launch "):
        return command
    return rewrite_paths(command, form or form_here(command, cwd))


def rewrite_paths(text: str, form: str) -> str:
    """The repository paths of a launch line (or one line of it) rewritten for ``form``: the accelerate config,
    the script as a module and the recipe by name (``clone``: left as they are)."""
    if form not in FORMS:
        raise InputError(f"form must be one of {', '.join(FORMS)}", value=form)
    if form == "clone":
        return text

    def config_file(m: re.Match) -> str:
        if form == "shell":
            return f'--config_file "$(omniaudit recipes path {ACCELERATE}{m["name"]})"'
        return f"--config_file {shlex.quote(str(accelerate_config_path(m['name'])))}"

    text = _CONFIG_FILE.sub(config_file, text)
    text = _SCRIPT.sub(lambda m: f"-m omniaudit.training.{m['name']}", text)
    return _RECIPE.sub(lambda m: f"--config {RECIPE}{m['name']}", text)


def launch_line(script: str, recipe: str, config: str = "cpu", *args: str, form: str | None = None,
                cwd: str | Path | None = None) -> str:
    """``accelerate launch`` of training script ``script`` (``dpo``) on packaged recipe ``recipe``
    (``tiny/dpo``) with packaged accelerate config ``config`` (``cpu``) and more script ``args``, in ``form``
    (default: the form that runs in ``cwd``, see :func:`form_here`)."""
    recipe = recipe.removeprefix(RECIPE).removesuffix(".yaml")
    recipe_path(recipe)  # a recipe that does not exist fails here, not in the user's shell
    accelerate_config_path(config)
    clone = (f"accelerate launch --config_file accelerate_configs/{config.removeprefix(ACCELERATE)}.yaml "
             f"training/{script}.py --config training/recipes/{recipe}.yaml")
    return render_command(" ".join([clone, *args]), form, cwd)
