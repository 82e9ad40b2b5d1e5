"""The card's blocks (:func:`omniaudit.evaluation.scorecard.card.blocks`) as ``scorecard.md`` and as a
self-contained ``scorecard.html`` (figures inline as base64 PNG; no script, style sheet or font loaded from
anywhere). Both end with the glossary of the terms the card uses (:mod:`.glossary`); the first use of each term in
a paragraph, a list, a table's header or its first column links to its entry on the same page. The HTML links each
audit's report as the ``report.html`` written beside its ``report.md`` (:mod:`.html_reports`).

Blocks: ("h", level, text), ("p", text), ("table", headers, rows), ("img", file, alt), ("ul", items),
("links", [(name, href), ...]), ("glossary", terms).
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from omniaudit.evaluation.report import markdown_table
from omniaudit.evaluation.scorecard import glossary, html_reports

STYLE = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}table{border-collapse:collapse;"
         "margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}"
         "img{max-width:100%}.flag{color:#b00;font-weight:bold;background:#fdecea}.clear{background:#eaf6ea}"
         ".inconclusive{background:#fdf5e0}code{background:#f4f4f4;padding:0 2px}")
CELL_CLASSES = (("FLAGGED", "flag"), ("**", "flag"), ("clear", "clear"), ("inconclusive", "inconclusive"))


def _entries(items: list[tuple]) -> list[glossary.Term]:
    return next((list(b[1]) for b in items if b[0] == "glossary"), [])


def _md_table(block: tuple, link: glossary.Linker) -> str:
    """Headers and the first column linked; the other cells scanned only (a verdict or summary stays as written)."""
    rows = [[link(str(row[0])), *(link.scan(str(c)) for c in row[1:])] if row else row for row in block[2]]
    return markdown_table([link(h) for h in block[1]], rows)


def render_markdown(items: list[tuple]) -> str:
    link = glossary.Linker(_entries(items), as_html=False)
    parts = []
    for block in items:
        kind = block[0]
        if kind == "h":
            parts.append("#" * block[1] + " " + block[2])
        elif kind == "p":
            parts.append(link(block[1]))
        elif kind == "table":
            parts.append(_md_table(block, link))
        elif kind == "img":
            parts.append(f"![{block[2]}]({block[1]})")
        elif kind == "ul":
            parts.append("\n".join(f"- {link(x)}" for x in block[1]))
        elif kind == "links":
            parts.append("Full audit folders: " + ", ".join(f"[{m}]({href})" for m, href in block[1]))
        elif kind == "glossary":
            parts.append(glossary.markdown(link.used()).rstrip("\n"))
    return "\n\n".join(parts) + "\n"


def slug(text: str) -> str:
    """A heading's ``id``, as GitHub names a Markdown heading's anchor (so both files share their anchors)."""
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text.lower()).strip())


def _html_table(block: tuple, link: glossary.Linker) -> str:
    head = "".join(f"<th>{link(html.escape(h))}</th>" for h in block[1])
    body = "".join("<tr>" + "".join(_td(str(c), link, first=j == 0) for j, c in enumerate(row)) + "</tr>"
                   for row in block[2])
    return f"<table><tr>{head}</tr>{body}</table>"


def render_html(items: list[tuple], folder: Path) -> str:
    """Self-contained HTML: the same blocks, images inline, links relative to the card's folder."""
    title = next((b[2] for b in items if b[0] == "h" and b[1] == 1), "Shortcut scorecard")
    parts = [f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>",
             f"<style>{STYLE}{glossary.STYLE}</style></head><body>"]
    esc = html.escape
    link = glossary.Linker(_entries(items), as_html=True)
    for block in items:
        kind = block[0]
        if kind == "h":
            parts.append(f"<h{block[1]} id=\"{slug(block[2])}\">{esc(block[2])}</h{block[1]}>")
        elif kind == "p":
            parts.append(f"<p>{link(html_reports.inline(block[1]))}</p>")
        elif kind == "table":
            parts.append(_html_table(block, link))
        elif kind == "img":
            data = base64.b64encode((folder / block[1]).read_bytes()).decode()
            parts.append(f"<p><img alt=\"{esc(block[2])}\" src=\"data:image/png;base64,{data}\"></p>")
        elif kind == "ul":
            parts.append("<ul>" + "".join(f"<li>{link(html_reports.inline(x))}</li>" for x in block[1]) + "</ul>")
        elif kind == "links":
            parts.append("<p>Full audit reports: " + ", ".join(
                f"<a href=\"{esc(html_reports.html_href(folder, h))}\">{esc(m)}</a>" for m, h in block[1]) + "</p>")
        elif kind == "glossary":
            parts.append(glossary.html_section(link.used()))
    return "".join(parts) + "</body></html>\n"


def _td(text: str, link: glossary.Linker, first: bool = False) -> str:
    """A cell, coloured by the verdict it starts with (a bold evidence cell is a flag)."""
    kind = next((k for start, k in CELL_CLASSES if text.startswith(start)), "")
    shown = html.escape(text.replace("**", ""))
    shown = link(shown) if first else link.scan(shown)
    return f"<td class=\"{kind}\">{shown}</td>" if kind else f"<td>{shown}</td>"
