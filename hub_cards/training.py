"""The "Train on it" section of a dataset card: the training recipes (``training/recipes/*/*.yaml``) that train on
one of the dataset's configs, read from the recipes themselves.

A recipe trains on a kind of dataset when its header says how to build it (``omniaudit build KIND``) or, for the tiny
recipes, when its ``dataset_name`` is one of ``omniaudit tiny-models``' datasets, or when another recipe that says
how to build its ``dataset_name`` folder names that kind; on a config when its ``dataset_config`` (or a
``dataset_mixture`` source's ``config``) is it. The tiny recipes are listed only on the tiny chat dataset's card.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

TEMPLATE_KINDS = {"preference.md.j2": "preference", "interventions.md.j2": "interventions",
                  "protocols.md.j2": "protocols", "composition.md.j2": "composition", "tiny_chat.md.j2": "chat"}
TINY_DATASETS = {"runs/tiny/data/preference": "preference", "runs/tiny/data/preference_media": "preference",
                 "runs/tiny/data/interventions": "interventions", "runs/tiny/data/chat": "chat"}


def recipes_folder() -> Path:
    import omniaudit.training

    return Path(omniaudit.training.__file__).parent / "recipes"


@lru_cache(maxsize=1)
def _recipes() -> tuple[dict, ...]:
    """(path, script, kinds, configs) of every recipe, read once."""
    import yaml

    out = []
    for path in sorted(recipes_folder().glob("*/*.yaml")):
        text = path.read_text(encoding="utf-8")
        recipe = yaml.safe_load(text) or {}
        script = re.search(r"training/(\w+\.py)", text)
        kinds = set(re.findall(r"omniaudit build (\w+)", text))
        sources = [{"id": recipe.get("dataset_name"), "config": recipe.get("dataset_config")}]
        sources += (recipe.get("dataset_mixture") or {}).get("datasets") or []
        kinds |= {TINY_DATASETS[s["id"]] for s in sources if s.get("id") in TINY_DATASETS}
        out.append({"path": f"training/recipes/{path.parent.name}/{path.name}",
                    "script": f"training/{script.group(1)}" if script else None, "kinds": kinds,
                    "names": {s.get("id") for s in sources if s.get("id")},
                    "configs": {s.get("config") for s in sources if s.get("config")}})
    by_name: dict[str, set[str]] = {}  # a dataset folder one recipe says how to build is that kind in every recipe
    for r in out:
        for name in r["names"] if len(r["kinds"]) == 1 else ():
            by_name.setdefault(name, set()).update(r["kinds"])
    for r in out:
        r["kinds"] |= set().union(*(by_name.get(n, set()) for n in r["names"]))
    return tuple(out)


def training_recipes(template: str, configs: list[str]) -> list[tuple[str, str, str | None]]:
    """(config, recipe path, script) of the recipes that train on one of ``configs`` of a dataset whose card is
    ``template``, by config then recipe."""
    kind = TEMPLATE_KINDS.get(template)
    if kind is None:
        return []
    found = [(c, r["path"], r["script"]) for r in _recipes() if kind in r["kinds"] for c in sorted(r["configs"])
             if c in configs and (kind == "chat" or not r["path"].startswith("training/recipes/tiny/"))]
    return sorted(found)


def training_section(template: str, configs: list[str]) -> str:
    """The card's "Train on it" section (empty when no recipe trains on this dataset)."""
    found = training_recipes(template, configs)
    if not found:
        return ""
    rows = "\n".join(f"| `{c}` | `{path}` | `{script}` |" for c, path, script in found)
    return ("\n## Train on it\n\nThe recipes of omniaudit's `training/recipes/` that train on this dataset (their "
            "header has the full command; pass `--dataset_name PATH_OR_REPO` where the dataset lives elsewhere than "
            "the recipe's `dataset_name`):\n\n| config | recipe | script |\n|---|---|---|\n" + rows + "\n\n```bash\n"
            "# from a clone of omniaudit (SCRIPT and RECIPE as in the table)\n"
            "accelerate launch --config_file accelerate_configs/zero3.yaml SCRIPT --config RECIPE "
            "--dataset_name PATH_OR_REPO\n"
            "# from a pip install: SCRIPT training/S.py as -m omniaudit.training.S, RECIPE training/recipes/R.yaml "
            "as recipe:R\n"
            "accelerate launch --config_file \"$(omniaudit recipes path accelerate:zero3)\" "
            "-m omniaudit.training.S --config recipe:R --dataset_name PATH_OR_REPO\n```\n")
