"""Each audit's ``report.md`` as ``report.html`` beside it, so ``scorecard.html`` links a page a browser shows: the
report's figures are the PNG files of its folder, referenced by the same relative paths, and a link leads back to
the card. Rendered with the ``markdown`` package where it is installed (the ``dev`` extra brings it with MkDocs),
else with :func:`convert`, a small converter for what the reports use (headings, paragraphs, pipe tables, lists,
fenced code, images, links, bold, italics and code spans).
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

REPORT, PAGE = "report.md", "report.html"
STYLE = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}table{border-collapse:collapse;"
         "margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px}img{max-width:100%}"
         "code{background:#f4f4f4;padding:0 2px}pre{background:#f4f4f4;padding:.5em;overflow:auto}")

_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_LIST = re.compile(r"^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$")
_ALIGN = {(True, False): "left", (False, True): "right", (True, True): "center"}


def inline(text: str) -> str:
    """One line of Markdown as HTML: code spans, images, links, bold and italics; the rest escaped."""
    parts = re.split(r"(`[^`\n]*`)", text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
            continue
        part = html.escape(part)
        part = re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", r'<img alt="\1" src="\2">', part)
        part = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', part)
        part = re.sub(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", r"<strong>\1</strong>", part)
        part = re.sub(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])", r"<em>\1</em>", part)
        out.append(part)
    return "".join(out)


def _cells(line: str) -> list[str]:
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(line)]


def _is_separator(line: str) -> bool:
    cells = _cells(line)
    return bool(cells) and all(re.fullmatch(r":?-{3,}:?", c) for c in cells)


def _table(lines: list[str]) -> str:
    head, marks, rows = _cells(lines[0]), _cells(lines[1]), [_cells(x) for x in lines[2:]]
    aligns = [_ALIGN.get((m.startswith(":"), m.endswith(":"))) for m in marks]

    styles = [f' style="text-align:{a}"' if a else "" for a in aligns]

    def row(cells: list[str], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}{styles[j] if j < len(styles) else ''}>{inline(c)}</{tag}>"
                                for j, c in enumerate(cells)) + "</tr>"

    return ("<table><thead>" + row(head, "th") + "</thead><tbody>" + "".join(row(r, "td") for r in rows)
            + "</tbody></table>")


def _list(lines: list[str]) -> str:
    ordered = bool(_LIST.match(lines[0]).group(2))  # type: ignore[union-attr]
    items: list[str] = []
    for line in lines:
        found = _LIST.match(line)
        if found:
            items.append(found.group(3))
        else:  # a continuation line of the item above
            items[-1] += " " + line.strip()
    tag = "ol" if ordered else "ul"
    return f"<{tag}>" + "".join(f"<li>{inline(x)}</li>" for x in items) + f"</{tag}>"


def _starts_block(lines: list[str], i: int) -> bool:
    line = lines[i]
    return (line.startswith(("#", "```", "~~~")) or bool(_LIST.match(line))
            or (line.lstrip().startswith("|") and i + 1 < len(lines) and _is_separator(lines[i + 1])))


def convert(text: str) -> str:
    """Markdown (the subset the audit reports use) to an HTML fragment."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.startswith(("```", "~~~")):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(line[:3])), len(lines))
            out.append("<pre><code>" + html.escape("\n".join(lines[i + 1:end])) + "</code></pre>")
            i = end + 1
        elif heading := re.match(r"^(#{1,6})\s+(.*?)\s*#*$", line):
            level = len(heading.group(1))
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
            i += 1
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and _is_separator(lines[i + 1]):
            end = next((j for j in range(i, len(lines)) if not lines[j].lstrip().startswith("|")), len(lines))
            out.append(_table(lines[i:end]))
            i = end
        elif _LIST.match(line):
            end = i + 1
            while end < len(lines) and (_LIST.match(lines[end]) or lines[end].startswith((" ", "\t"))):
                end += 1
            out.append(_list(lines[i:end]))
            i = end
        else:
            end = i + 1
            while end < len(lines) and lines[end].strip() and not _starts_block(lines, end):
                end += 1
            out.append("<p>" + inline(" ".join(x.strip() for x in lines[i:end])) + "</p>")
            i = end
    return "\n".join(out)


def to_html(text: str) -> str:
    """A report's Markdown as an HTML fragment: the ``markdown`` package's (tables, fenced code) where installed."""
    try:
        import markdown
    except ImportError:
        return convert(text)
    return markdown.markdown(text, extensions=["tables", "fenced_code"], output_format="html")


def page(text: str, title: str, back: str | None = None) -> str:
    """A whole HTML page around a report: its title, the style, a link back to the card."""
    nav = f"<p><a href=\"{html.escape(back)}\">&larr; the scorecard</a></p>" if back else ""
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>{nav}{to_html(text)}</body></html>\n")


def write_reports(out: Path, data: dict) -> list[str]:
    """``report.html`` beside every audit folder's ``report.md`` that a card (``scorecard.json``) names, each
    written atomically; returns the pages written, relative to the card's folder."""
    from omniaudit.io import atomic_file

    written = []
    folders = sorted({a["folder"] for m in data["models"].values() for a in m["audits"].values() if a.get("folder")})
    for folder in folders:
        source = out / folder / REPORT
        if not source.is_file():
            continue
        text = source.read_text(encoding="utf-8")
        title = next((x[2:].strip() for x in text.splitlines() if x.startswith("# ")), folder)
        back = os.path.relpath(out / "scorecard.html", out / folder)
        with atomic_file(out / folder / PAGE) as tmp:
            tmp.write_text(page(text, f"{title} ({folder})", Path(back).as_posix()), encoding="utf-8")
        _listed(out / folder)
        written.append(f"{folder}/{PAGE}")
    return written


def _listed(folder: Path) -> None:
    """The page in the audit folder's omniaudit marker, so the folder stays one omniaudit wrote (an audit redone
    there replaces it, never refuses it as a user's file)."""
    from omniaudit.outputs import read_marker, write_marker

    marker = read_marker(folder)
    if marker is not None and PAGE not in (marker.get("files") or []):
        write_marker(folder, marker.get("command"), files=[*marker.get("files", []), PAGE])


def html_href(folder: Path, href: str) -> str:
    """A link of the card to an audit's ``report.md``, as ``scorecard.html`` gives it: its ``report.html`` where
    that was written."""
    if href.endswith(REPORT) and (folder / href[: -len(REPORT)] / PAGE).is_file():
        return href[: -len(REPORT)] + PAGE
    return href
