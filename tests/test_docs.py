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


@pytest.mark.slow  # the docs build runs the demo card for its picture (20-60 s on 2 CPU cores)
def test_the_docs_build_draws_the_card_picture_from_the_demo_card(tmp_path):
    """The picture of a card in the README and the docs is drawn from the demo card by the docs build (the mkdocs
    hook), not pasted: the built site's picture shows the verdicts the demo card has now, and the committed one (the
    README's) shows the same verdicts and stays small."""
    missing = [m for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python") if not installed(m)]
    if missing:
        pytest.skip(f"MkDocs is not installed ({', '.join(missing)}): the dev extra")
    from omniaudit.evaluation.scorecard.picture import shown_statuses
    from omniaudit.shortcuts import BY_NAME, SHORTCUTS

    committed = DOCS / "images" / "card.png"
    assert committed.stat().st_size < 200_000
    assert "images/card.png" in (DOCS / "scorecard.md").read_text(encoding="utf-8")
    assert "docs/images/card.png" in README.read_text(encoding="utf-8")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "MPLBACKEND": "Agg", "HF_HUB_OFFLINE": "1"}
    env.pop("OMNIAUDIT_DOCS_CARD", None)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "card picture: drawn from the demo card" in done.stderr
    drawn = shown_statuses(tmp_path / "site" / "images" / "card.png")
    assert drawn is not None, "the site's picture was not drawn by scripts/card_picture.py"
    planted = {BY_NAME[s].card_name: s for s in SHORTCUTS}
    assert {m: [s for s, v in row.items() if v == "flagged"] for m, row in drawn.items()} == \
        {m: [planted[m]] if m in planted else [] for m in drawn}
    assert shown_statuses(committed) == drawn, ("docs/images/card.png shows other verdicts than the demo card has "
                                                "now: run python scripts/card_picture.py")


def test_every_docs_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = [p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")]
    assert pages and not [p for p in pages if p not in nav]


def test_mkdocs_build_strict(tmp_path):
    missing = [m for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python") if not installed(m)]
    if missing:
        pytest.skip(f"MkDocs is not installed ({', '.join(missing)}): pip install mkdocs mkdocs-material "
                    "'mkdocstrings[python]' (the dev extra)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "OMNIAUDIT_DOCS_CARD": "skip"}  # the picture: a slow test below
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    for module in ("omniaudit.api", "omniaudit.audits", "omniaudit.evaluation.stats",
                   "omniaudit.evaluation.scorecard.inference",
                   "omniaudit.runners.reading", "omniaudit.verify", "omniaudit.shortcuts"):
        assert module in api, f"the API page does not document {module}"
