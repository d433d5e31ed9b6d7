"""A figure to take away: its picture as SVG and the numbers behind it as CSV.

Both come from the figure's own `render(state, fid)`, the function that draws it on screen, so
the files hold exactly the numbers the reader sees: `files` calls it with the reader's state
and reads what it returned (the figure's HTML and its slots). Each table becomes CSV rows, one
per cell (its table, row, column, the number in it and the cell's text as shown), under a header
naming the figure, its state and its source; the SVG draws the same tables as grids, shaded as
on screen, and keeps the pictures the figure drew as SVG itself. Nothing here computes a number
of its own, and the browser only saves what this returns: nothing is sent anywhere.

Every piece of text goes through escaping (a reader's own sentence may hold anything), SVG the
figure drew passes through `clean_svg`, and a CSV field that a spreadsheet would run as a
formula is neutralised.
"""

import csv
import importlib
import io
import re
from html import escape
from html.parser import HTMLParser

from .figure import check

NUMBER = re.compile(r"[−-]?\d+(?:[.,]\d+)*(?:\.\d+)?%?")
FORMULA = ("=", "+", "-", "@", "\t", "\r")
CELL_W, CELL_H, LABEL_W, HEAD_H, GAP = 64, 26, 120, 26, 28
SHADES = [
    "#ffffff",
    "#eef3fb",
    "#dbe6f6",
    "#c3d5ef",
    "#a6c1e6",
    "#86a9db",
    "#6690cf",
    "#4a76bd",
    "#345da3",
    "#224584",
]
STYLE = (
    "text{fill:#1a1a1a}.sub,.tick,.shape{fill:#555}rect{fill:#f4f4f4;stroke:#666}"
    "line,path,.axis,.arrow{stroke:#666;fill:none}.arrowhead{fill:#666}"
    ".head1{stroke:#d95f02}.head2{stroke:#1b9e77}.bar{fill:#86a9db}.bar.top{fill:#345da3}"
    + "".join(f".l{i}{{fill:{c}}}" for i, c in enumerate(SHADES))
)


class Table:
    """One table of the figure as read: caption, column labels and rows of (label, cells);
    a cell is (text, shade) with shade 0-9, or None when the cell is not shaded."""

    def __init__(self):
        self.caption, self.columns, self.rows = "", [], []


class _Reader(HTMLParser):
    """The tables of a figure's HTML, and the SVG pictures it drew, as written."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.svgs = [], []
        self.table = None
        self.part = None  # "caption", "head", "label" or "cell", with its text
        self.text, self.shade, self.in_head = [], None, False
        self.svg_depth, self.svg, self.open = 0, [], []

    def handle_starttag(self, tag, attrs):
        if tag == "svg" or self.svg_depth:
            self.svg_depth += tag == "svg"
            written = self.get_starttag_text()
            self.open.append(re.match(r"<([^\s/>]+)", written).group(1))  # its case, for XML
            self.svg.append(written)
            return
        classes = (dict(attrs).get("class") or "").split()
        if tag == "table":
            self.table = Table()
            self.tables.append(self.table)
        elif self.table is None:
            return
        elif tag == "thead":
            self.in_head = True
        elif tag == "tr" and not self.in_head:
            self.table.rows.append(["", []])
        elif tag in ("caption", "th", "td"):
            self.part = "caption" if tag == "caption" else "head" if self.in_head else tag
            self.text = []
            shades = [int(c[1:]) for c in classes if re.fullmatch(r"l\d", c)]
            self.shade = shades[0] if shades else None

    def handle_startendtag(self, tag, attrs):
        if self.svg_depth:
            self.svg.append(self.get_starttag_text())
        else:
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if self.svg_depth:
            self.svg.append(f"</{self.open.pop() if self.open else tag}>")
            if tag == "svg":
                self.svg_depth -= 1
                if not self.svg_depth:
                    self.svgs.append("".join(self.svg))
                    self.svg = []
            return
        if self.table is None:
            return
        if tag == "thead":
            self.in_head = False
        elif tag == "table":
            self.table = None
        elif tag in ("caption", "th", "td") and self.part:
            self._close()

    def _close(self):
        text = " ".join("".join(self.text).split())
        t, part = self.table, self.part
        self.part = None
        if part == "caption":
            t.caption = text
        elif part == "head":
            t.columns.append(text)
        elif not t.rows:
            return
        elif part == "th" and not t.rows[-1][1]:
            t.rows[-1][0] = text
        else:
            t.rows[-1][1].append((text, self.shade))

    def handle_data(self, data):
        if self.svg_depth:
            self.svg.append(escape(data, quote=False))
        elif self.part:
            self.text.append(data)


def read(html):
    """(tables, svgs) of a figure's HTML."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return [t for t in reader.tables if t.rows], [clean_svg(s) for s in reader.svgs]


def value(text):
    """The number a cell shows, as a spreadsheet reads it ('−0.25' -> '-0.25', '88.5%' ->
    '88.5%'); '' when the cell shows no number or more than one."""
    found = NUMBER.findall(text)
    if len(found) != 1 and not (found and text.rstrip().endswith(found[-1])):
        return ""
    return found[-1].replace("−", "-").replace(",", "")


def safe(field):
    """A CSV field a spreadsheet shows as text: one that would start a formula gets a quote."""
    text = str(field)
    return f"'{text}" if text.startswith(FORMULA) else text


def clean_svg(markup):
    """SVG a figure drew, without anything that could run: no script, no event handlers, no
    foreign content or links (the figures draw none of these; this holds whatever comes)."""
    markup = re.sub(r"(?is)<(script|foreignObject)\b.*?</\1\s*>", "", markup)
    markup = re.sub(r"(?is)<(script|foreignObject)\b[^>]*/?>", "", markup)
    markup = re.sub(
        r"""(?i)\s(on\w+|(?:xlink:)?href)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)""", "", markup
    )
    if "xmlns=" not in markup[:200]:
        markup = markup.replace("<svg", '<svg xmlns="http://www.w3.org/2000/svg"', 1)
    return markup


def _state_line(state):
    return "; ".join(f"{k}={v}" for k, v in state.items())


def table_csv(tables, caption, state, source):
    """One row per cell, quoted, under three header rows: the figure, its state, its source."""
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    w.writerow([f"# {caption}"])
    w.writerow([f"# state: {_state_line(state)}"])
    w.writerow([f"# source: {source}"])
    w.writerow(["table", "row", "column", "value", "text"])
    for t in tables:
        columns = t.columns[1:] if len(t.columns) > len(t.rows[0][1]) else t.columns
        for label, cells in t.rows:
            for i, (text, _) in enumerate(cells):
                column = columns[i] if i < len(columns) else str(i + 1)
                w.writerow([safe(t.caption), safe(label), safe(column), value(text), safe(text)])
    return out.getvalue()


def _text(x, y, text, cls=None, anchor="start", size=None):
    extra = f' class="{cls}"' if cls else ""
    extra += f' font-size="{size}"' if size else ""
    return f'<text x="{x}" y="{y}" text-anchor="{anchor}"{extra}>{escape(text)}</text>'


def _short(text, n):
    return text if len(text) <= n else text[: n - 1] + "…"


def table_svg(t, top):
    """A table drawn as a grid at height TOP: (markup, its height)."""
    columns = t.columns[1:] if len(t.columns) > len(t.rows[0][1]) else t.columns
    parts = [_text(0, top + 16, _short(t.caption, 110), size=15)]
    y = top + HEAD_H
    for i, c in enumerate(columns):
        parts.append(_text(LABEL_W + (i + 0.5) * CELL_W, y + 16, _short(c, 9), "tick", "middle"))
    y += HEAD_H
    for label, cells in t.rows:
        parts.append(_text(LABEL_W - 8, y + 17, _short(label, 16), "tick", "end"))
        for i, (text, shade) in enumerate(cells):
            x = LABEL_W + i * CELL_W
            fill = SHADES[shade] if shade is not None else "#ffffff"
            parts.append(
                f'<rect x="{x}" y="{y}" width="{CELL_W}" height="{CELL_H}" fill="{fill}" '
                'stroke="#bbbbbb"/>'
            )
            shown = value(text) or _short(text, 8)
            ink = "#ffffff" if shade is not None and shade >= 6 else "#1a1a1a"
            parts.append(
                f'<text x="{x + CELL_W / 2}" y="{y + 17}" text-anchor="middle" '
                f'fill="{ink}">{escape(shown)}</text>'
            )
        y += CELL_H
    width = LABEL_W + CELL_W * max((len(cells) for _, cells in t.rows), default=1)
    return "".join(parts), y - top, width


def _size(svg):
    """(width, height) of a figure's own SVG, from its attributes or its viewBox."""
    box = re.search(r'viewBox="[\d.\s-]*?([\d.]+)\s+([\d.]+)"', svg)
    w = re.search(r'\swidth="([\d.]+)"', svg)
    h = re.search(r'\sheight="([\d.]+)"', svg)
    width = float(w.group(1)) if w else float(box.group(1)) if box else 600
    height = float(h.group(1)) if h else float(box.group(2)) if box else 300
    return width, height


def picture(tables, svgs, caption, state, source):
    """The whole figure as one SVG document: caption, each table as a grid, each of its own
    pictures, then its state and source, in fonts large enough to read on a slide."""
    parts, y, width = [], 40, 640
    for t in tables:
        markup, height, w = table_svg(t, y)
        parts.append(markup)
        y, width = y + height + GAP, max(width, w)
    for svg in svgs:
        w, h = _size(svg)
        parts.append(f'<g transform="translate(0 {y})">{svg}</g>')
        y, width = y + h + GAP, max(width, w)
    parts.append(_text(0, y, _short(f"State: {_state_line(state)}", 140), "sub", size=12))
    parts.append(_text(0, y + 18, _short(f"Source: {source}", 140), "sub", size=12))
    height = y + 30
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 20:.0f}" '
        f'height="{height:.0f}" viewBox="-10 0 {width + 20:.0f} {height:.0f}" '
        'font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="14">'
        f"<title>{escape(caption)}</title><style>{STYLE}</style>"
        f'<rect x="-10" y="0" width="{width + 20:.0f}" height="{height:.0f}" fill="#ffffff" '
        'stroke="none"/>'
        + _text(0, 24, _short(caption, 110), size=17)
        + "".join(parts)
        + "</svg>\n"
    )


def files(model, state, fid, caption, source):
    """{"svg", "csv", "name"} of the figure drawn by MODEL ('toymodels.MODULE:render') in
    STATE, or {"error"} when the state cannot be drawn. CAPTION and SOURCE (the page's address)
    are plain text for the files' headers."""
    name, _, func = str(model).partition(":")
    if not name.startswith("toymodels.") or func != "render":
        return {"error": f"{model} is not a figure"}
    answer = check(getattr(importlib.import_module(name), func)(state, fid))
    if answer["error"]:
        return {"error": answer["error"]}
    html = answer["html"] + "".join(answer["slots"].values())
    tables, svgs = read(html)
    drawn = answer["state"]
    return {
        "svg": picture(tables, svgs, str(caption), drawn, str(source)),
        "csv": table_csv(tables, str(caption), drawn, str(source)),
        "name": f"many-heads-{fid}",
    }
