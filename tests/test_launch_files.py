"""Training scripts, recipes and accelerate configs ship with the package (package data), and can be copied out."""

import tomllib
from pathlib import Path

from omniaudit.launch_files import copy_launch_files, launch_files

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
