"""A card people can read: every term it uses is defined in its own glossary (and in docs/glossary.md), the first use
of each links to its entry on the same page, the audit reports are HTML pages beside their Markdown, and a picture of
the verdict table says which verdicts it shows."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from omniaudit.evaluation.scorecard import glossary, html_reports, picture
from omniaudit.evaluation.scorecard.render import render_html, render_markdown, slug

ROOT = Path(__file__).resolve().parents[3]
NAMED = ["WAF", "Avg Gap", "concat", "native", "cue_conflict", "blueprint", "lock", "MDE", "clear", "FLAGGED",
         "inconclusive", "null", "not measured", "not answering", "reference model", "oracle", "planted", "CI",
         "minimum effect of interest", "one-sided 95% bound", "RF", "Shift / Mute / Swap", "stability floor",
         "position", "label_following", "visual_inference", "modality_dominance", "style", "preference",
         "interventions", "protocols", "composition"]


def test_the_glossary_defines_every_named_term_and_the_docs_page_is_its_own():
    names = [t.name for t in glossary.terms()]
    assert not [n for n in NAMED if n not in names]
    assert len(names) == len(set(names)) and len({t.anchor for t in glossary.terms()}) == len(names)
    page = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert page == glossary.docs_page(), ("docs/glossary.md is not what glossary.py writes: run "
                                          "`python -m omniaudit.evaluation.scorecard.glossary --docs`")
    assert "glossary.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_the_first_use_of_a_term_links_to_its_entry_never_inside_code_or_a_link():
    link = glossary.Linker(glossary.terms(), as_html=False)
    text = link("A `null` in code, [null](#x), then the null and the null again; MDE (nulls)")
    assert text == ("A `null` in code, [null](#x), then the [null](#glossary-null) and the null again; "
                    "[MDE](#glossary-mde) (nulls)")  # "nulls": the same term, linked once
    assert link("FLAGGED (slot A) and clear, small") == ("[FLAGGED](#glossary-flagged) ([slot A](#glossary-slot-a)) "
                                                       "and [clear, small](#glossary-clear-small)")
    assert link.scan("inconclusive") == "inconclusive"  # noted, not linked: it is in the glossary, unlinked
    used = {t.name for t in link.used()}
    assert {"null", "MDE", "FLAGGED", "slot A", "clear, small", "inconclusive"} <= used and "clear" not in used
    page = glossary.Linker(glossary.terms(), as_html=True)
    out = page('a <code>null</code> then <a href="#x">null</a> then null &amp; the lock')
    assert out.count('href="#glossary-null"') == 1 and "<code>null</code>" in out
    assert 'href="#glossary-lock" title="protocols pairwise' in out


def _blocks() -> list[tuple]:
    return [("h", 1, "Shortcut scorecard"), ("h", 2, "Verdicts"),
            ("table", ["model", "position", "summary"],
             [["oracle (reference)", "clear 0.00, 95% bound 0.19 < 0.65 (null 0.50 + minimum effect 0.15)",
               "no flag"], ["pos (reference)", "FLAGGED (slot A) 1.00 [0.84, 1.00] (null 0.50, MDE 0.15)",
                            "flags position (concat)"]]),
            ("p", "How to read a cell: FLAGGED ... every term: [glossary](#glossary); run `omniaudit remedy style`."),
            ("h", 2, "Audit: protocols"), ("links", [("pos", "models/pos/protocols/report.md")]),
            ("glossary", glossary.terms({"protocols": {"title": "Audio judges", "paper": "a paper"}}))]


def test_a_card_links_its_terms_to_its_own_glossary_and_keeps_verdicts_as_written(tmp_path):
    md = render_markdown(_blocks())
    assert "| pos (reference) | FLAGGED (slot A) 1.00 [0.84, 1.00] (null 0.50, MDE 0.15) | flags position (concat) |" \
        in md  # a verdict cell and a summary stay as written
    assert md.index("## Verdicts") < md.index("How to read a cell") < md.index("## Glossary")
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', md))
    linked = set(re.findall(r"\]\(#(glossary-[^)]+)\)", md))
    assert linked and linked <= anchors, linked - anchors
    assert {"glossary-concat", "glossary-mde", "glossary-slot-a"} <= anchors  # used in cells: defined, not linked
    assert "glossary-wa" not in " ".join(anchors) and "glossary-stability-floor" not in anchors  # unused: left out

    folder = tmp_path / "card"
    (folder / "models/pos/protocols").mkdir(parents=True)
    (folder / "models/pos/protocols/report.html").write_text("<html></html>")
    page = render_html(_blocks(), folder)
    ids = set(re.findall(r' id="([^"]+)"', page))
    targets = set(re.findall(r' href="#([^"]+)"', page))
    assert targets <= ids, targets - ids
    assert 'href="models/pos/protocols/report.html"' in page and "<code>omniaudit remedy style</code>" in page
    assert '<td class="flag">FLAGGED (slot A)' in page and '<td class="clear">clear 0.00' in page
    assert slug("Audit: protocols") == "audit-protocols" and 'id="audit-protocols"' in page


REPORT = """# Judge-protocol audit

Dataset `protocols`; judges: **pos**. A *short* note with a [link](audit.json).

## Table

| Judge | audio | wrong |
| :--- | ---: | :---: |
| pos | 1.00 [1.00–1.00] | 0.50 \\| 0.25 |

![Failure modes](failure_modes.png)

- first item
- second item,
  continued
1. one

```text
a <code> block
```
"""


@pytest.mark.parametrize("with_markdown", [True, False], ids=["markdown package", "own converter"])
def test_a_report_becomes_an_html_page_beside_it(tmp_path, monkeypatch, with_markdown):
    if with_markdown:
        pytest.importorskip("markdown")
    else:
        monkeypatch.setitem(sys.modules, "markdown", None)  # import markdown raises ImportError
    folder = tmp_path / "card" / "models" / "pos" / "protocols"
    folder.mkdir(parents=True)
    (folder / "report.md").write_text(REPORT, encoding="utf-8")
    from omniaudit.outputs import foreign_entries, read_marker, write_marker

    write_marker(folder, "omniaudit scorecard")
    data = {"models": {"pos": {"audits": {"protocols": {"folder": "models/pos/protocols"}, "composition": {}}}}}
    assert html_reports.write_reports(tmp_path / "card", data) == ["models/pos/protocols/report.html"]
    # listed in the audit folder's marker: an audit redone there replaces the folder, never refuses the page
    assert "report.html" in read_marker(folder)["files"] and not foreign_entries(folder)
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert '<a href="../../../scorecard.html">' in page  # back to the card
    assert "<title>Judge-protocol audit (models/pos/protocols)" in page
    assert re.search(r"<h1[^>]*>Judge-protocol audit</h1>", page) and "<strong>pos</strong>" in page
    assert "<em>short</em>" in page and '<a href="audit.json">link</a>' in page
    assert re.search(r'<img alt="Failure modes" src="failure_modes.png"\s*/?>', page)
    assert re.search(r"<th[^>]*>audio</th>", page) and "0.50 | 0.25" in page and "right" in page
    assert re.search(r"<li>second item,?\s+continued</li>", page) and "&lt;code&gt; block" in page
    assert html_reports.html_href(tmp_path / "card", "models/pos/protocols/report.md") == \
        "models/pos/protocols/report.html"
    assert html_reports.html_href(tmp_path / "card", "models/oracle/protocols/report.md") == \
        "models/oracle/protocols/report.md"  # no page written: the Markdown


def test_a_picture_of_the_verdict_table_says_which_verdicts_it_shows(tmp_path):
    def verdict(status, **more):
        return {"status": status, "value": 0.5, "ci": [0.4, 0.6], **more}

    card = {"omniaudit": "0", "shortcuts": ["position", "style"], "models": {
        "oracle": {"reference": True, "summary": "no flag", "shortcuts": {
            "position": verdict("clear", equivalence_bound=[None, 0.19]),
            "style": verdict("clear", equivalence_bound=[0.41, 0.59])}},
        "mine": {"reference": False, "summary": "flags position (concat)", "shortcuts": {
            "position": verdict("flagged", direction="slot A", stratum="concat"),
            "style": verdict("not answering")}}}}
    assert picture.cell_text(card["models"]["mine"]["shortcuts"]["position"]) == \
        "FLAGGED (slot A) in concat\n0.50 [0.40, 0.60]"
    assert picture.cell_text(card["models"]["oracle"]["shortcuts"]["style"]) == "clear\n0.50, bounds [0.41, 0.59]"
    path = tmp_path / "card.png"
    picture.plot_card(card, path, "a caption")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size < 200_000
    assert picture.shown_statuses(path) == {"oracle": {"position": "clear", "style": "clear"},
                                            "mine": {"position": "flagged", "style": "not answering"}}
