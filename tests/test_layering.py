"""The packages' import layering, read from the source (AST): which package may import which, and how.

The target (docs/contributing.md): ``omniaudit/`` core imports data_builders, evaluation and training only inside
functions; data_builders imports nothing of evaluation; evaluation imports data_builders' public readers only; no
package imports another's private names; training and the CLI are imported by nobody else; no module imports itself
back through others (an import circle, lazy imports inside functions included). The imports that still break a rule
are listed below, each with the reason it is still there: the lists may only shrink (a listed import that is gone
fails the test too, so the list stays true).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"omniaudit": "omniaudit", "data_builders": "omniaudit.data_builders", "evaluation": "omniaudit.evaluation",
           "training": "omniaudit.training", "hub_cards": "omniaudit.hub_cards"}
# evaluation -> data_builders: the public readers (package roots, the Hub layout, fingerprints, answer vocabularies and
# the interventions' answers read and scored, which the SP-pairs builder shares with the audit)
PUBLIC_READERS = ("omniaudit.data_builders", "omniaudit.data_builders.hub", "omniaudit.data_builders.fingerprint",
                  "omniaudit.data_builders.interventions.answers", "omniaudit.data_builders.preference",
                  "omniaudit.data_builders.interventions", "omniaudit.data_builders.protocols",
                  "omniaudit.data_builders.composition", "omniaudit.data_builders.interventions.diagnostic_answers")
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


def test_builders_import_nothing_of_evaluation():
    found = {(i["file"], i["module"]) for i in imports() if i["from"] == "data_builders" and i["to"] == "evaluation"}
    assert found == set(), "move what both need below both (the core, or a public reader of data_builders)"


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


# Import circles still there, each as its modules (sorted) with why: the list may only shrink.
KNOWN_CIRCLES = {
    # evaluation/report.py keeps the preference report's old names as deprecated aliases (a module __getattr__ that
    # imports omniaudit.evaluation.preference.report when one is used), and that report builds on the shared one
    ("omniaudit.evaluation.preference.odin_report", "omniaudit.evaluation.preference.report",
     "omniaudit.evaluation.report"),
}


def _module_names() -> dict[str, Path]:
    """Every module of the package by its installed name (a package by its ``__init__.py``)."""
    out = {}
    for folder, name in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            out[".".join([name, *(parts[:-1] if parts[-1] == "__init__" else parts)])] = path
    return out


def _typing_only(tree: ast.Module) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:`` (never run: no import circle)."""
    return {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for stmt in node.body for n in ast.walk(stmt)}


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports (at module level or inside functions; ``from P import M`` of a
    submodule M counts as importing M)."""
    modules = _module_names()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _typing_only(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    graph[module] |= {target} if target in modules else {node.module} & set(modules)
            elif isinstance(node, ast.Import):
                graph[module] |= {a.name for a in node.names} & set(modules)
    return graph


def circles(graph: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan), each as its sorted module names."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.add(tuple(sorted(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_circles_are_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {("a", "b", "c")}
    assert circles({"a": {"b"}, "b": set()}) == set()


def test_no_module_imports_itself_back_through_others():
    found = circles(import_graph())
    assert found - KNOWN_CIRCLES == set(), "a new import circle: move what both modules need below both"
    assert KNOWN_CIRCLES - found == set(), "gone: remove it from the list"
