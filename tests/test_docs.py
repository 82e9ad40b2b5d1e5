"""The README and the MkDocs site in docs/: the site builds with --strict, the README stays short, links resolve."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_WORDS = 2000

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def installed(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def markdown_files():
    return [README, *sorted(DOCS.rglob("*.md"))]


def relative_links(path):
    """Every link target in a Markdown file outside code, less URLs and in-page anchors."""
    text = CODE.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue
        yield target


def test_readme_is_short():
    words = len(README.read_text(encoding="utf-8").split())  # what `wc -w` counts
    assert words <= MAX_README_WORDS, f"README.md has {words} words (at most {MAX_README_WORDS}): move detail to docs/"


def test_readme_names_no_shared_path():
    """shared/ (the papers, the design notes) is not in a clone: cite papers by title, authors and year."""
    for path in markdown_files():
        assert "shared/" not in path.read_text(encoding="utf-8"), f"{path.relative_to(ROOT)} names a shared/ path"


def test_readme_keeps_the_commands_ci_runs():
    text = README.read_text(encoding="utf-8")
    for command in ("bash scripts/test.sh", "bash scripts/demo.sh"):
        assert command in text


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path):
    missing = [t for t in relative_links(path) if not (path.parent / t.split("#", 1)[0]).exists()]
    assert not missing, f"{path.relative_to(ROOT)} links to missing files: {missing}"


def test_every_docs_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = [p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")]
    assert pages and not [p for p in pages if p not in nav]


def test_mkdocs_build_strict(tmp_path):
    missing = [m for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python") if not installed(m)]
    if missing:
        pytest.skip(f"MkDocs is not installed ({', '.join(missing)}): pip install mkdocs mkdocs-material "
                    "'mkdocstrings[python]' (the dev extra)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    for module in ("omniaudit.audits", "omniaudit.evaluation.stats", "omniaudit.evaluation.scorecard.inference",
                   "omniaudit.runners.reading", "omniaudit.verify", "omniaudit.shortcuts"):
        assert module in api, f"the API page does not document {module}"
