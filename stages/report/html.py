"""The report page: one static HTML file, CSS inline, images beside it, nothing fetched.

Every string that comes from an input (agent, task and axis names, failure messages) is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from stages.report.figures import Plot
from stages.report.tables import Table

CSS = """
body { font: 15px/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color: #222; margin: 0 auto;
       max-width: 1180px; padding: 0 24px 48px; }
header { border-bottom: 2px solid #3b75af; margin-bottom: 12px; }
h1 { margin: 24px 0 4px; } h2 { margin-top: 36px; border-bottom: 1px solid #ddd; }
.meta { color: #555; margin: 4px 0 12px; } .warning { color: #b00020; font-weight: bold; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 6px 18px; }
figure { margin: 16px 0; } figure img { max-width: 100%; height: auto; display: block; }
figcaption, .note { color: #444; font-size: 14px; max-width: 860px; }
.scroll { overflow-x: auto; margin: 12px 0 4px; }
table { border-collapse: collapse; font-size: 13px; }
caption { text-align: left; font-weight: bold; padding: 4px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; white-space: nowrap; }
th { background: #f3f5f8; } th:first-child, td:first-child, th.text, td.text { text-align: left; }
td.text { white-space: normal; min-width: 240px; }
td.pass { color: #0a6e31; font-weight: bold; } td.fail { color: #b00020; font-weight: bold; }
footer { margin-top: 40px; color: #666; font-size: 13px; }
"""
TEXT_COLUMNS = {"failed gates", "most rejected", "solver success by round"}  # prose, left-aligned and wrapped
TEXT_CLASS = ' class="text"'


@dataclass(frozen=True)
class Section:
    """One part of the page: a heading, its plots and tables in the order shown, an optional note."""

    key: str
    title: str
    items: list[Plot | Table] = field(default_factory=list)
    note: str = ""


def shade_style(score: float | None) -> str:
    """A cell background from white (0) to blue (100) and a text colour that stays legible."""
    if score is None:
        return ""
    lightness = 97 - 0.45 * max(0.0, min(100.0, score))
    text = "#fff" if lightness < 62 else "#222"
    return f' style="background:hsl(210,60%,{lightness:.0f}%);color:{text}"'


def render_plot(plot: Plot) -> str:
    """A figure: the PNG, its caption and a link to the SVG."""
    width, height = plot.size
    return (f'<figure id="plot-{escape(plot.name)}"><img src="{escape(plot.png)}" alt="{escape(plot.title)}" '
            f'width="{width}" height="{height}">'
            f'<figcaption>{escape(plot.caption)} <a href="{escape(plot.svg)}">SVG</a></figcaption></figure>')


def _cell(text: str, column: str, shade: float | None, href: str | None = None) -> str:
    content = escape(text) if href is None else f'<a href="{escape(href)}">{escape(text)}</a>'
    if column == "gates":
        return f'<td class="{"fail" if text == "FAIL" else "pass"}">{content}</td>'
    css = TEXT_CLASS if column in TEXT_COLUMNS else ""
    return f"<td{css}{shade_style(shade)}>{content}</td>"


def render_table(table: Table) -> str:
    """An HTML table with its title as caption and its reading note below; a row's first cell links to its `links`."""
    head = "".join(f"<th{TEXT_CLASS if column in TEXT_COLUMNS else ''}>{escape(column)}</th>"
                   for column in table.columns)
    body = []
    for i, row in enumerate(table.rows):
        shades = table.shades[i] if table.shades else (None,) * len(row)
        hrefs = (table.links[i] if table.links else None,) + (None,) * (len(row) - 1)
        body.append("<tr>" + "".join(_cell(*cell) for cell
                                     in zip(row, table.columns, shades, hrefs, strict=True)) + "</tr>")
    rows = "\n".join(body) or f'<tr><td colspan="{len(table.columns)}">no rows</td></tr>'
    return (f'<div class="scroll"><table id="table-{escape(table.key)}"><caption>{escape(table.title)}</caption>\n'
            f"<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody></table></div>\n"
            f'<p class="note">{escape(table.caption)}</p>')


def render_section(section: Section) -> str:
    """A section: heading, plots and tables, note."""
    parts = [f'<section id="{escape(section.key)}"><h2>{escape(section.title)}</h2>']
    parts += [render_plot(item) if isinstance(item, Plot) else render_table(item) for item in section.items]
    if section.note:
        parts.append(f'<p class="note">{escape(section.note)}</p>')
    return "\n".join(parts) + "\n</section>"


def render_page(title: str, meta: list[str], warnings: list[str], sections: list[Section],
                footer: list[str]) -> str:
    """The whole page."""
    nav = "".join(f'<li><a href="#{escape(s.key)}">{escape(s.title)}</a></li>' for s in sections)
    return render_document(title, [
        f"<header><h1>{escape(title)}</h1>",
        *(f'<p class="meta">{escape(line)}</p>' for line in meta),
        *(f'<p class="warning">{escape(line)}</p>' for line in warnings),
        f"</header><nav><ul>{nav}</ul></nav>",
        *(render_section(section) for section in sections),
        "<footer>" + "<br>".join(escape(line) for line in footer) + "</footer>",
    ])


def render_document(title: str, body: list[str], css: str = "") -> str:
    """A whole HTML document: the report's CSS (and `css` after it) inline, `body` (HTML, escaped by the caller)."""
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        f"<style>{CSS}{css}</style></head><body>",
        *body,
        "</body></html>",
        "",
    ])
