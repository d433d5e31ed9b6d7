"""A figure to take away: its picture as SVG and the numbers behind it as CSV.

Both come from the figure's own `render(state, fid)`, the function that draws it on screen, so
the files hold exactly the numbers the reader sees: `files` calls it with the reader's state
and reads what it returned (the figure's HTML and its slots). Each table becomes CSV rows, one
per cell (its table, row, column, the number in it and the cell's text as shown), under a header
naming the figure, its state and its source; the SVG draws the same tables as grids, shaded as
on screen, and keeps the pictures the figure drew as SVG itself. A figure that draws numbers as
one picture rather than as tables (Real heads' "All 72 heads") offers them to the CSV with an
optional `download_tables(state, fid)` in its module, made from the same data it draws: a list
of tables, each {"caption", "columns", "rows": [(label, [cell text, …])], "words": [columns
that hold words, never a number]}, whose cells become rows as a table's do. Nothing here
computes a number of its own, and the browser only saves what this returns: nothing is sent
anywhere.

Every piece of text goes through escaping (a reader's own sentence may hold anything), SVG the
figure drew passes through `clean_svg`, and a CSV field that a spreadsheet would run as a
formula is neutralised.
"""

import csv
import importlib
import io
import re
import textwrap
import unicodedata
from html import escape
from html.parser import HTMLParser

from .figure import check

NUMBER = re.compile(r"[−-]?\d+(?:[.,]\d+)*(?:\.\d+)?%?")
FORMULA = ("=", "+", "-", "@", "\t", "\r")
CELL_W, CELL_H, LABEL_W, HEAD_H, GAP, WRAP = 64, 26, 120, 26, 28, 96
MASKED = -1  # a cell a word cannot see
WORDS = -2  # a cell of words (a label, a summary): its value column stays empty
# the light theme's colours of templates/styles/site.css and charmodel.css, for a picture that
# leaves the site: the shares' blues l0-l9, the signed values' oranges n1-n5 and blues p1-p5
INK, MUTED, LINE, PANEL, ACCENT, FOCUS = (
    "#1b1e23",
    "#5a6270",
    "#d5d9e0",
    "#f3f5f8",
    "#0b5cad",
    "#c2410c",
)
SHADES = ["#fdfdfc", "#f7fbff", "#deebf7", "#c6dbef", "#9ecae1"]
SHADES += ["#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"]
NEG = ["#fee6ce", "#fdae6b", "#fd8d3c", "#e6550d", "#a63603"]
POS = ["#deebf7", "#9ecae1", "#6baed6", "#3182bd", "#08519c"]
STYLE = "".join(
    [
        f"svg{{overflow:visible}}text{{fill:{INK};font-size:11px}}",
        "text.tick,text.val{text-anchor:middle}text.end{text-anchor:end}",
        "text.start{text-anchor:start}.mh-bars text.val{font-weight:700}",
        f".axis,.frame{{stroke:{MUTED};fill:none;stroke-width:1}}.z{{fill:{PANEL}}}",
        *(f".l{i}{{fill:{c}}}" for i, c in enumerate(SHADES)),
        *(f".n{i + 1}{{fill:{c}}}" for i, c in enumerate(NEG)),
        *(f".p{i + 1}{{fill:{c}}}" for i, c in enumerate(POS)),
        f".tickbar{{fill:{MUTED}}}.mh-bars .bar{{fill:{SHADES[4]}}}",
        f".mh-bars .bar.top{{fill:{SHADES[7]}}}.needle{{stroke-width:2}}",
        f".pos{{stroke:{SHADES[7]}}}.neg{{stroke:{NEG[3]}}}",
        f".rowmark{{fill:none;stroke:{FOCUS};stroke-width:1.5}}.line{{fill:none;stroke-width:2}}",
        f".bits{{stroke:{ACCENT};fill:{ACCENT}}}.copy{{stroke:{NEG[3]};fill:{NEG[3]}}}",
        "polyline.copy{stroke-dasharray:6 4;fill:none}polyline.bits{fill:none}",
        f".now{{stroke:{FOCUS};stroke-width:2}}.box{{fill:{PANEL};stroke:{LINE}}}",
        f".box.attn{{fill:{POS[0]}}}.box.mlp{{fill:{NEG[0]}}}",
        f".stream{{stroke:{SHADES[6]};stroke-width:3}}.join,.len{{fill:{SHADES[6]}}}",
        f".masked{{fill:{PANEL}}}.mh-bar-bg{{fill:{PANEL};stroke:{LINE}}}",
        f".mh-bar-fill{{fill:{SHADES[6]}}}",
        f".mh-diagram rect{{fill:{PANEL};stroke:{MUTED}}}",
        ".mh-diagram rect.head1{stroke:#d95f02;stroke-width:2}",
        ".mh-diagram rect.head2{stroke:#1b9e77;stroke-width:2}",
        f".mh-diagram text{{fill:{INK};font-size:15px}}",
        f".mh-diagram text.sub{{fill:{MUTED};font-size:11px}}",
        ".mh-diagram text.dots{font-size:26px}",
        f".arrow{{stroke:{MUTED};stroke-width:1.5}}.arrowhead{{fill:{MUTED}}}",
    ]
)


class Table:
    """One table of the figure as read: caption, column labels and rows of (label, cells);
    a cell is (text, shade) with shade 0-9, or None when the cell is not shaded."""

    def __init__(self):
        self.caption, self.columns, self.rows = "", [], []


def offered(tables):
    """A figure's download_tables(…) -> Tables (a cell of a column in "words" is WORDS)."""
    out = []
    for offer in tables:
        t = Table()
        t.caption, t.columns = str(offer["caption"]), [str(c) for c in offer["columns"]]
        kinds = [WORDS if c in offer.get("words", ()) else None for c in offer["columns"]]
        for label, cells in offer["rows"]:
            t.rows.append([str(label), [(str(c), k) for c, k in zip(cells, kinds, strict=True)]])
        if t.rows:
            out.append(t)
    return out


class _Reader(HTMLParser):
    """The tables of a figure's HTML, and the SVG pictures it drew, as written."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.svgs = [], []
        self.table = None
        self.part = None  # "caption", "head", "label" or "cell", with its text
        self.text, self.shade, self.in_head = [], None, False
        self.label = ""  # a cell's exact value when it is the cell's name (kit.attention_grid)
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
            self.label = (dict(attrs).get("aria-label") or "") if tag == "td" else ""
            shades = [int(c[1:]) for c in classes if re.fullmatch(r"l\d", c)]
            self.shade = MASKED if "masked" in classes else shades[0] if shades else None

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
        text = " ".join(("".join(self.text) + self.label).split())
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
    '88.5%'); '' when the cell shows no number or more than one. Words in curly quotes are the
    sentence's, not numbers ('“1” → “2”: 50.0%' -> '50.0%')."""
    found = NUMBER.findall(re.sub(r"“[^”]*”", "", text))
    if len(found) != 1 and not (found and text.rstrip().endswith(found[-1])):
        return ""
    return found[-1].replace("−", "-").replace(",", "")


def safe(field):
    """A CSV field a spreadsheet shows as text: one that would start a formula gets a quote,
    also after leading spaces or line breaks, and in full width (＝, which a spreadsheet in an
    East Asian locale reads as =)."""
    text = str(field)
    first = unicodedata.normalize("NFKC", text.lstrip()[:1])
    return f"'{text}" if text.startswith(FORMULA) or first.startswith(FORMULA) else text


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
            for i, (text, shade) in enumerate(cells):
                column = columns[i] if i < len(columns) else str(i + 1)
                number = "" if shade in (MASKED, WORDS) else value(text)
                w.writerow([safe(t.caption), safe(label), safe(column), number, safe(text)])
    return out.getvalue()


def _text(x, y, text, tone=None, anchor="start", size=14):
    """One line of text of the picture's own (a style attribute: the figures' style sheet,
    written for their own classes, must not move or restyle it)."""
    fill = f";fill:{MUTED}" if tone == "muted" else ""
    style = f"font-size:{size}px;text-anchor:{anchor}{fill}"
    return f'<text x="{x}" y="{y}" style="{style}">{escape(text)}</text>'


def _lines(x, y, text, size, tone=None, step=None):
    """TEXT wrapped at WRAP characters, one <text> a line from Y down: (markup, its height)."""
    lines = textwrap.wrap(text, WRAP) or [""]
    step = step or round(size * 1.35)
    markup = "".join(_text(x, y + i * step, line, tone, size=size) for i, line in enumerate(lines))
    return markup, step * len(lines)


def _shown(text, shade):
    """What a grid cell shows: its number, a short text, or nothing for a masked cell."""
    if shade == MASKED:
        return ""
    return value(text) or (text if len(text) <= 10 else "")


def table_svg(t, top):
    """A table drawn as a grid from height TOP: (markup, its height, its width). A column is
    as wide as its label needs, so labels are whole."""
    columns = t.columns[1:] if len(t.columns) > len(t.rows[0][1]) else t.columns
    n = max(len(cells) for _, cells in t.rows)
    widths = [max(CELL_W, 8 * len(columns[i]) + 12 if i < len(columns) else 0) for i in range(n)]
    label_w = max([LABEL_W] + [8 * len(label) + 16 for label, _ in t.rows])
    parts, y = _lines(0, top + 16, t.caption, 15)
    parts, y = [parts], top + y + 6
    x = label_w
    for i, w in enumerate(widths):
        label = columns[i] if i < len(columns) else ""
        parts.append(_text(x + w / 2, y + 16, label, "muted", "middle", size=12))
        x += w
    y += HEAD_H
    for label, cells in t.rows:
        parts.append(_text(label_w - 8, y + 17, label, "muted", "end", size=12))
        x = label_w
        for (text, shade), w in zip(cells, widths, strict=False):
            fill = PANEL if shade == MASKED else SHADES[shade] if shade is not None else "#ffffff"
            parts.append(
                f'<rect x="{x}" y="{y}" width="{w}" height="{CELL_H}" fill="{fill}" '
                f'stroke="{LINE}"/>'
            )
            ink = "#ffffff" if shade is not None and shade >= 6 else INK
            parts.append(
                f'<text x="{x + w / 2}" y="{y + 17}" '
                f'style="font-size:12px;text-anchor:middle;fill:{ink}">'
                f"{escape(_shown(text, shade))}</text>"
            )
            x += w
        y += CELL_H
    return "".join(parts), y - top, label_w + sum(widths)


def _size(svg):
    """(width, height) of a figure's own SVG, from its attributes or else its viewBox."""
    tag = svg[: svg.index(">")]
    box = re.search(r'viewBox="\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)[\s,]+([\d.]+)\s*"', tag)
    w = re.search(r'\swidth="([\d.]+)"', tag)
    h = re.search(r'\sheight="([\d.]+)"', tag)
    width = float(w.group(1)) if w else float(box.group(1)) if box else 600
    height = float(h.group(1)) if h else float(box.group(2)) if box else 300
    return width, height


def _placed(svg, y):
    """A figure's own SVG placed at height Y, at its own size: (markup, width, height)."""
    width, height = _size(svg)
    tag = svg[: svg.index(">")]
    tag = re.sub(r'\s(x|y|width|height)="[^"]*"', "", tag)
    tag += f' x="0" y="{y:.0f}" width="{width:.0f}" height="{height:.0f}"'
    return tag + svg[svg.index(">") :], width, height


def picture(tables, svgs, caption, state, source):
    """The whole figure as one SVG document: caption, each table as a grid, each of its own
    pictures, then its state and source, in fonts large enough to read on a slide."""
    head, y = _lines(0, 24, caption, 17)
    parts, y, width = [head], y + 24, 640
    for t in tables:
        markup, height, w = table_svg(t, y)
        parts.append(markup)
        y, width = y + height + GAP, max(width, w)
    for svg in svgs:
        markup, w, h = _placed(svg, y)
        parts.append(markup)
        y, width = y + h + GAP, max(width, w)
    said, h = _lines(0, y, f"State: {_state_line(state)}", 12, "muted")
    parts.append(said)
    said, h2 = _lines(0, y + h, f"Source: {source}", 12, "muted")
    parts.append(said)
    height = y + h + h2 + 8
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 20:.0f}" '
        f'height="{height:.0f}" viewBox="-10 0 {width + 20:.0f} {height:.0f}" '
        'font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="14">'
        f"<title>{escape(caption)}</title><style>{STYLE}</style>"
        f'<rect x="-10" y="0" width="{width + 20:.0f}" height="{height:.0f}" fill="#ffffff" '
        'stroke="none"/>' + "".join(parts) + "</svg>\n"
    )


def files(model, state, fid, caption, source):
    """{"svg", "csv", "name"} of the figure drawn by MODEL ('toymodels.MODULE:render') in
    STATE, or {"error"} when the state cannot be drawn. CAPTION and SOURCE (the page's address)
    are plain text for the files' headers."""
    name, _, func = str(model).partition(":")
    if not name.startswith("toymodels.") or func != "render":
        return {"error": f"{model} is not a figure"}
    module = importlib.import_module(name)
    answer = check(getattr(module, func)(state, fid))
    if answer["error"]:
        return {"error": answer["error"]}
    html = answer["html"] + "".join(answer["slots"].values())
    tables, svgs = read(html)
    drawn = answer["state"]
    more = getattr(module, "download_tables", None)
    numbers = tables + (offered(more(drawn, fid)) if more else [])
    return {
        "svg": picture(tables, svgs, str(caption), drawn, str(source)),
        "csv": table_csv(numbers, str(caption), drawn, str(source)),
        "name": f"many-heads-{fid}",
    }
