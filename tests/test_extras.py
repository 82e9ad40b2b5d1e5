"""The optional extras: [infer] (hf: models, tiny-models, the data-parallel judge) without the training stack,
[train] = [infer] + TRL, PEFT, DeepSpeed, wandb, and a missing package naming the smallest extra that has it."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from omniaudit.cli import common

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def names(deps: list[str]) -> set[str]:
    """Distribution names of requirement strings (extras, versions and markers dropped)."""
    return {re.split(r"[\[<>=!~;\s]", dep, maxsplit=1)[0].lower() for dep in deps}


def closure(extra: str) -> set[str]:
    """What installing omniaudit[extra] pulls in, following self-references such as omniaudit[infer]."""
    found = set()
    for dep in EXTRAS[extra]:
        inner = re.fullmatch(r"omniaudit\[([\w,\s-]+)\]", dep.replace(" ", ""))
        if inner:
            for sub in inner.group(1).split(","):
                found |= closure(sub)
        else:
            found |= names([dep])
    return found


def message(module: str, **kwargs) -> str | None:
    return common.missing_extra(ModuleNotFoundError(f"No module named '{module}'", name=module), **kwargs)


def test_infer_has_the_model_stack_and_no_training_stack():
    infer = closure("infer")
    assert {"torch", "torchvision", "torchcodec", "transformers", "accelerate"} <= infer
    assert not infer & {"deepspeed", "trl", "peft", "wandb"}, infer


def test_train_is_infer_plus_the_training_stack():
    assert "omniaudit[infer]" in EXTRAS["train"]
    assert closure("train") == closure("infer") | {"trl", "peft", "deepspeed", "wandb"}
    assert closure("decode") <= closure("infer") and closure("track") <= closure("train")


@pytest.mark.parametrize(("module", "extra"), [
    ("torch", "infer"), ("transformers", "infer"), ("torchvision", "infer"), ("accelerate", "infer"),
    ("bitsandbytes", "infer"), ("trl", "train"), ("peft", "train"), ("deepspeed", "train"), ("av", "media"),
    ("soundfile", "media"), ("torchcodec", "decode"), ("wandb", "track")])
def test_the_message_names_the_smallest_extra_with_the_package(module, extra):
    assert message(module) == (f"No module named '{module}': this needs omniaudit's [{extra}] extra: pip install "
                               f"'omniaudit[{extra}]' -c requirements/constraints.txt")
    assert module in closure(extra)
    smaller = [e for e in EXTRAS if module in closure(e) and closure(e) < closure(extra)]
    assert not smaller or (extra == "infer" and smaller == ["decode"]), smaller  # a model needs more than [decode]


@pytest.mark.parametrize(("module", "extra"), [("torch", "train"), ("transformers", "train"), ("trl", "train"),
                                               ("torchcodec", "train"), ("wandb", "train"), ("av", "media")])
def test_a_training_script_is_told_to_install_train(module, extra):
    assert f"pip install 'omniaudit[{extra}]'" in message(module, training=True)


def third_party_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_what_the_hf_runners_and_tiny_models_import_is_in_infer_or_media():
    """Every optional package the hf: runner modules, tiny-models and the data-parallel shards import is in [infer]
    (or [media], which decodes the clips), so `pip install 'omniaudit[media,infer]'` runs them without [train]."""
    files = sorted((ROOT / "omniaudit/runners").glob("hf*.py")) + [ROOT / "omniaudit/tiny_models.py",
                                                                    ROOT / "omniaudit/runners/data_parallel.py"]
    optional = {m for f in files for m in third_party_imports(f)} & set(common.EXTRAS)
    assert {"torch", "transformers", "accelerate"} <= optional
    for module in optional:
        assert common.EXTRAS[module] in ("infer", "media", "decode"), module
        assert module in closure("infer") | closure("media"), module


def test_the_scripts_install_extras_that_exist():
    """scripts/*.sh pass setup_env.sh extras (media,train,serve,inspect,dev in test.sh, as the README says): each
    exists."""
    calls = [m.group(1) for f in sorted((ROOT / "scripts").glob("*.sh"))
             for m in re.finditer(r"setup_env\.sh\s+([\w,]+)", f.read_text())]
    assert "media,train,serve,inspect,dev" in calls
    for call in calls:
        assert set(call.split(",")) <= set(EXTRAS), call
