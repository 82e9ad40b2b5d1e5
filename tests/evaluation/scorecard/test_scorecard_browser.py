"""scorecard.html as a person sees it: opened in a real headless browser (Debian's chromium; scripts/system_deps.sh
--test installs it, and without one the browser tests skip saying so), it renders with the verdict table on the first
screen, and no link is broken: every relative href and src of the card and of the audit reports it links names a file,
every in-page anchor an element of that page."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from omniaudit.evaluation.scorecard import run_scorecard

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAG_BACKGROUND = (0xFD, 0xEC, 0xEA)  # .flag's background in scorecard.html (render.STYLE)


class Page(HTMLParser):
    """The links, ids and tables of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.tables: list[list[list[str]]] = []  # table -> rows -> cell texts
        self.after: dict[int, str] = {}  # table index -> id of the heading just before it
        self._heading: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key):
                self.links.append(attrs[key])
        if tag in ("h1", "h2", "h3"):
            self._heading = attrs.get("id")
        elif tag == "table":
            self.tables.append([])
            self.after[len(self.tables) - 1] = self._heading or ""
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    return page


def browser() -> str | None:
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def headless(*args: str) -> subprocess.CompletedProcess:
    found = browser()
    if found is None:
        pytest.skip(f"no headless browser ({' / '.join(BROWSERS)}): bash scripts/system_deps.sh --test installs "
                    "Debian's chromium")
    return subprocess.run([found, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--no-first-run", "--allow-file-access-from-files", *args],
                          capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def card(tmp_path_factory, small_defaults) -> Path:
    """A card of the oracle and the position-locked reference through the four audits (--size small)."""
    out = tmp_path_factory.mktemp("browser") / "card"
    from omniaudit.api import scorecard_options

    run_scorecard(out, ["pos=scripted:position-locked"], scorecard_options(size="small"))
    return out


def pages(card: Path) -> list[Path]:
    """scorecard.html and every page it links (the audit reports)."""
    linked = [card / unquote(urlsplit(h).path) for h in parse((card / "scorecard.html").read_text()).links
              if h.endswith(".html") and not urlsplit(h).scheme]
    return [card / "scorecard.html", *linked]


@pytest.mark.slow  # a card of two models through four audits (~30 s on 2 CPU cores), then the browser
def test_the_card_renders_in_a_browser_with_the_verdicts_first(card, tmp_path):
    done = headless("--dump-dom", (card / "scorecard.html").as_uri())
    assert done.returncode == 0, done.stderr[-3000:]
    dom = parse(done.stdout)
    verdicts = [t for i, t in enumerate(dom.tables) if dom.after[i] == "verdicts"]
    assert verdicts, "no table under the Verdicts heading"
    head, *rows = verdicts[0]
    assert head[0] == "model" and "position" in head and head[-1] == "summary"
    pos = next(r for r in rows if r[0].startswith("pos"))
    assert pos[head.index("position")].startswith("FLAGGED")
    assert dom.tables.index(verdicts[0]) == 0, "the verdict table is not the card's first table"
    assert {"glossary", "glossary-flagged", "glossary-null", "glossary-mde"} <= dom.ids

    shot = tmp_path / "card.png"
    done = headless(f"--screenshot={shot}", "--window-size=1280,900", "--hide-scrollbars",
                    (card / "scorecard.html").as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr[-3000:]
    import numpy as np
    from PIL import Image

    with Image.open(shot) as image:
        pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    assert len(np.unique(pixels, axis=0)) > 20, "the page rendered blank"
    # the flagged cell of the verdict table is on the first screen: the table comes before the method
    assert (pixels == FLAG_BACKGROUND).all(axis=1).sum() > 200, "no flagged verdict cell on the first screen"

    for report in pages(card)[1:3]:  # an audit report renders too, its figures with it
        done = headless("--dump-dom", report.as_uri())
        assert done.returncode == 0 and "<table" in done.stdout and "the scorecard" in done.stdout, report


@pytest.mark.slow  # the same card
def test_no_link_of_the_card_or_its_reports_is_broken(card):
    found = pages(card)
    assert len(found) >= 1 + 4 * 2, [p.relative_to(card) for p in found]  # two models' reports of four audits
    broken = []
    for path in found:
        page = parse(path.read_text(encoding="utf-8"))
        for href in page.links:
            parts = urlsplit(href)
            if parts.scheme in ("data",):
                continue
            assert not parts.scheme and not parts.netloc, f"{path.name} loads {href} from elsewhere"
            if parts.path and not (path.parent / unquote(parts.path)).is_file():
                broken.append(f"{path.relative_to(card)}: {href}")
            elif not parts.path and parts.fragment and parts.fragment not in page.ids:
                broken.append(f"{path.relative_to(card)}: #{parts.fragment}")
    assert not broken, broken
    images = [h for p in found[1:] for h in parse(p.read_text()).links if h.endswith(".png")]
    assert images, "the audit reports show no figure"
