"""``omniaudit recipes list | path | copy``: the packaged training recipes and accelerate configs by name
(:mod:`omniaudit.launch_files`), so a pip install launches them without a clone."""

from __future__ import annotations

import argparse
import shlex

from omniaudit.cli import common


def cmd_recipes_list(args: argparse.Namespace) -> None:
    """list the packaged training recipes and accelerate configs

    One line per recipe: its name (what --config recipe:NAME takes) and the training script it is for; then the
    accelerate configs (what `omniaudit recipes path accelerate:NAME` takes).
    """
    from omniaudit.launch_files import accelerate_config_names, recipe_names, recipe_script

    names = recipe_names()
    width = max(map(len, names), default=0)
    print("recipes (--config recipe:NAME):")
    for name in names:
        script = recipe_script(name)
        print(f"  {name:<{width}}  {f'omniaudit.training.{script}' if script else ''}".rstrip())
    print("accelerate configs (--config_file \"$(omniaudit recipes path accelerate:NAME)\"):")
    print("  " + " ".join(accelerate_config_names()))


def cmd_recipes_path(args: argparse.Namespace) -> None:
    """print the path of a packaged recipe or accelerate config

    NAME is a recipe (qwen3-omni-30b-a3b/dpo, or recipe:qwen3-omni-30b-a3b/dpo) or an accelerate config
    (accelerate:zero3): prints the absolute path of the installed file, e.g. for `accelerate launch --config_file
    "$(omniaudit recipes path accelerate:zero3)" -m omniaudit.training.dpo --config recipe:qwen3-omni-30b-a3b/dpo`.
    """
    from omniaudit.launch_files import packaged_path

    print(packaged_path(args.name))


def cmd_recipes_copy(args: argparse.Namespace) -> None:
    """write an editable copy of a packaged recipe

    Copy recipe NAME (e.g. qwen3-omni-30b-a3b/dpo) into folder DIR as DIR/<its file name> (made if missing; an
    existing file is refused unless --overwrite) and print the recipe's own launch line with the copy as --config,
    in the form that runs here.
    """
    from omniaudit.launch_files import RECIPE, copy_recipe, recipe_launch, render_command

    written = copy_recipe(args.name, args.folder, args.overwrite)
    print(f"recipe written to {written}")
    launch = recipe_launch(args.name)
    if launch:
        packaged = f"training/recipes/{args.name.removeprefix(RECIPE).removesuffix('.yaml')}.yaml"
        print("train with it: " + render_command(launch.replace(packaged, shlex.quote(str(written)))))


def register(groups: common.Groups) -> None:
    p = groups.top.add_parser("recipes", help="the packaged training recipes and accelerate configs: list, path, "
                                              "copy", description="The training recipes and accelerate configs "
                                                                  "installed with omniaudit, by name.")
    actions = p.add_subparsers(dest="what", metavar="ACTION", required=True)
    common.command(actions, "list", cmd_recipes_list)
    p = common.command(actions, "path", cmd_recipes_path)
    p.add_argument("name", metavar="NAME", help="recipe FOLDER/NAME (recipe: optional) or accelerate:CONFIG")
    p = common.command(actions, "copy", cmd_recipes_copy)
    p.add_argument("name", metavar="NAME", help="recipe FOLDER/NAME, e.g. qwen3-omni-30b-a3b/dpo")
    p.add_argument("folder", metavar="DIR", help="folder the copy is written into")
    p.add_argument("--overwrite", action="store_true", help="replace an existing file of the same name")
