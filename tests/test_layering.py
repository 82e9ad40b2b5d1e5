"""The packages' import layering, read from the source (AST): which package may import which, and how.

The target (docs/contributing.md): ``omniaudit/`` core imports data_builders, evaluation and training only inside
functions; data_builders imports nothing of evaluation; evaluation imports data_builders' public readers only; no
package imports another's private names; training and the CLI are imported by nobody else. The imports that still
break a rule are listed below, each with the reason it is still there: the lists may only shrink (a listed import
that is gone fails the test too, so the list stays true).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"omniaudit": "omniaudit", "data_builders": "omniaudit.data_builders", "evaluation": "omniaudit.evaluation",
           "training": "omniaudit.training", "hub_cards": "omniaudit.hub_cards"}
# data_builders -> evaluation: builders that share a reader of the audits (the runners are a layer of the core,
# omniaudit/runners/, that builders and audits both use)
BUILDERS_USING_EVALUATION = {
    ("data_builders/composition/swap.py", "omniaudit.evaluation.composition.grading"),
    ("data_builders/interventions/ood_sync.py", "omniaudit.evaluation.interventions.pairing"),
    ("data_builders/interventions/sp_pairs.py", "omniaudit.evaluation.interventions.audit"),
}
# evaluation -> data_builders: the public readers (package roots, the Hub layout, fingerprints, answer vocabularies)
PUBLIC_READERS = ("omniaudit.data_builders", "omniaudit.data_builders.hub", "omniaudit.data_builders.fingerprint",
                  "omniaudit.data_builders.interventions.answers", "omniaudit.data_builders.preference",
                  "omniaudit.data_builders.interventions", "omniaudit.data_builders.protocols",
                  "omniaudit.data_builders.composition")
# the preference audit rebuilds a dataset from raw pairs (`audit preference --data`): the builder's internals
AUDIT_USING_BUILDER_INTERNALS = {
    ("evaluation/preference/audit.py", "omniaudit.data_builders.preference.build"),
    ("evaluation/preference/audit.py", "omniaudit.data_builders.preference.judge"),
    ("evaluation/preference/audit.py", "omniaudit.data_builders.preference.slices"),
    ("evaluation/preference/audit.py", "omniaudit.data_builders.preference.synthetic"),
}


def _package(module: str) -> str | None:
    """The top-level package (folder) of an omniaudit module name; ``cli`` for the command line."""
    if module.startswith("omniaudit.cli"):
        return "cli"
    for folder, name in FOLDERS.items():
        if folder != "omniaudit" and (module == name or module.startswith(name + ".")):
            return folder
    return "omniaudit" if module == "omniaudit" or module.startswith("omniaudit.") else None


def imports() -> list[dict]:
    """Every ``from omniaudit... import`` of the source: file, its package, the module, names, at module level."""
    out = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            here = "cli" if rel.startswith("omniaudit/cli/") else folder
            tree = ast.parse(path.read_text(encoding="utf-8"))
            top = {id(n) for n in tree.body}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and _package(node.module):
                    out.append({"file": rel, "from": here, "module": node.module, "to": _package(node.module),
                                "names": [a.name for a in node.names], "top": id(node) in top})
    return out


def test_no_package_imports_another_s_private_names():
    crossing = [f"{i['file']}: {i['module']}.{n}" for i in imports() if i["from"] != i["to"]
                for n in i["names"] if n.startswith("_") and not n.startswith("__")]
    assert crossing == []


def test_builders_import_nothing_of_evaluation_beyond_the_listed_runner_uses():
    found = {(i["file"], i["module"]) for i in imports() if i["from"] == "data_builders" and i["to"] == "evaluation"}
    assert found - BUILDERS_USING_EVALUATION == set(), "a new data_builders -> evaluation import"
    assert BUILDERS_USING_EVALUATION - found == set(), "gone: remove it from the list"


def test_evaluation_reads_builds_through_public_readers_only():
    found = {(i["file"], i["module"]) for i in imports() if i["from"] == "evaluation" and i["to"] == "data_builders"
             and i["module"] not in PUBLIC_READERS}
    assert found == AUDIT_USING_BUILDER_INTERNALS


def test_the_core_imports_the_packages_above_it_only_inside_functions():
    eager = [f"{i['file']}: {i['module']}" for i in imports() if i["from"] == "omniaudit" and i["top"]
             and i["to"] in ("data_builders", "evaluation", "training", "cli")
             and i["file"] != "omniaudit/__main__.py"]  # `python -m omniaudit` is the command line
    assert eager == []


def test_nothing_imports_training_or_the_command_line():
    users = [f"{i['file']}: {i['module']}" for i in imports() if i["to"] in ("training", "cli")
             and i["from"] != i["to"] and i["file"] != "omniaudit/__main__.py"]
    assert users == []
