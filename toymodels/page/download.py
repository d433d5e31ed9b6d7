"""A figure to take away: its picture as SVG and the numbers behind it as CSV.

Both come from the figure's own `render(state, fid)`, the function that draws it on screen, so
the files hold exactly the numbers the reader sees: `files` calls it with the reader's state and
reads what it returned (the figure's HTML and its slots). Each table becomes CSV rows, one per
cell (its table, row, column, the number in it and the cell's text as shown), under a header
naming the figure, its state and its source. The SVG stands alone: it shows what the page shows
of the figure, in the page's order (its text, its tables as grids shaded as on screen with the
bars in their rows, the pictures the figure drew as SVG, the items of a list of pictures side by
side with their labels), leaves out its controls (their state is written under the picture) and
what a narrow screen shows in place of a whole picture (`mh-narrow-only`), wraps every line to
its width, and carries the rules of the page's style sheet that its pictures use (the light
theme's colours; only what an SVG draws with; no @import, no url(), no script). The files are
named by chapter, figure and state (`one-head-figure-2-angle-0-length-2`), never by the site's
name, which is also a chapter's ("Many heads"). A figure that draws numbers as one picture
rather than as tables (Real heads' "All 72 heads") offers them to the CSV with an optional
`download_tables(state, fid)` in its module, made from the same data it draws: a list of tables,
each {"caption", "columns", "rows": [(label, [cell text, …])], "words": [columns that hold
words, never a number]}, whose cells become rows as a table's do. Nothing here computes a number
of its own, and the browser only saves what this returns: nothing is sent anywhere.

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
import xml.etree.ElementTree as ET
from html import escape
from html.parser import HTMLParser
from urllib.parse import urlsplit

from .figure import check

NUMBER = re.compile(r"[−-]?\d+(?:[.,]\d+)*(?:\.\d+)?%?")
SVG_NS = "http://www.w3.org/2000/svg"
FORMULA = ("=", "+", "-", "@", "\t", "\r")
CELL_W, CELL_H, LABEL_W, HEAD_H, GAP, MIN_W, MAX_W = 64, 26, 120, 26, 20, 640, 980
CHAR_W = 0.6  # a character's width in a sans-serif font, at most, as a share of its size
MASKED = -1  # a cell a word cannot see
WORDS = -2  # a cell of words (a label, a summary): its value column stays empty
# what this file draws itself (captions, grids, text) is coloured with the page's variables,
# written out as the page's style sheet gives them (a picture that leaves the site cannot count
# on a viewer that knows CSS variables); these, the light theme's, only where none is given
INK, MUTED, LINE, PANEL, ACCENT = (
    "var(--fg)",
    "var(--muted)",
    "var(--line)",
    "var(--panel)",
    "var(--accent)",
)
# the shades l0 … l9 (0-9), then neg1 … neg4 (10-13), the other side of a two-way scale
SHADES = ["var(--bg)"] + [f"var(--l{i})" for i in range(1, 10)]
SHADES += [f"var(--neg{i})" for i in range(1, 5)]
DARK_SHADES = {6, 7, 8, 9, 12, 13}  # white text reads on these
LIGHT = {"--fg": "#1b1e23", "--muted": "#5a6270", "--line": "#d5d9e0", "--panel": "#f3f5f8"}
LIGHT |= {"--accent": "#0b5cad", "--bg": "#fdfdfc", "--l1": "#f7fbff", "--l2": "#deebf7"}
LIGHT |= {"--l3": "#c6dbef", "--l4": "#9ecae1", "--l5": "#6baed6", "--l6": "#4292c6"}
LIGHT |= {"--l7": "#2171b5", "--l8": "#08519c", "--l9": "#08306b"}
LIGHT |= {"--neg1": "#fdd0a2", "--neg2": "#fdae6b", "--neg3": "#e6550d", "--neg4": "#a63603"}
# what a figure shows but a picture of it leaves out: its controls (their state is written
# under the picture), text for screen readers only, anything hidden, and the part of a picture
# a narrow screen shows instead of the whole (the picture holds the whole)
SKIP_TAGS = {"form", "noscript", "script", "style", "template", "input", "select", "textarea"}
SKIP_CLASSES = {"sr", "mh-controls", "mh-pick", "mh-download-panel", "mh-fig-buttons"}
SKIP_CLASSES |= {"mh-narrow-only"}
BLOCKS = {"p", "div", "li", "ol", "ul", "dl", "dt", "dd", "section", "h2", "h3", "h4", "figure"}
VOID = {"br", "img", "wbr", "hr", "meta", "link", "col", "source", "input"}
# a row of buttons holding a tokenizer's pieces (kit.token_buttons(pieces=True)), not words: drawn
# with a mark between them, so that "P" "uff" does not read as two words "P uff"
PIECES, PIECE_GAP = "mh-pieces", (" · ", False)
# a map smaller than this beside others (a tile) is drawn this wide, as the page draws it larger
LEAST_TILE = 150
# a raised letter (W<sup>Q</sup>) travels through the reader between these two marks, and is
# drawn raised in the picture and written W^Q in the CSV
RAISE, LOWER = "\ue000", "\ue001"
RAISED = re.compile(f"{RAISE}([^{LOWER}]*){LOWER}")
# so does a word in bold in a table's cell (the word that differs in a pair of texts), drawn bold
BOLD, PLAIN = "\ue002", "\ue003"
BOLDED = re.compile(f"{BOLD}([^{PLAIN}]*){PLAIN}")
# the properties of the page's style sheet that an SVG document draws with
SVG_PROPERTIES = {
    "fill",
    "fill-opacity",
    "stroke",
    "stroke-width",
    "stroke-dasharray",
    "stroke-linecap",
    "stroke-linejoin",
    "stroke-opacity",
    "opacity",
    "color",
    "font-size",
    "font-weight",
    "font-style",
    "font-family",
    "font-variant-numeric",
    "text-anchor",
    "dominant-baseline",
    "paint-order",
    "letter-spacing",
    "text-decoration",
    "visibility",
    "overflow",
}


class Table:
    """One table of the figure as read: caption, column labels and rows of (label, cells);
    a cell is (text, shade) with shade 0-9, or None when the cell is not shaded; a cell that
    holds a picture (a bar) has it in pictures[(row, column)], and one whose text is only its
    name (an attention grid's "“a” → “b”: 50.0%") has "" in visible[(row, column)]."""

    def __init__(self):
        self.caption, self.columns, self.rows, self.pictures = "", [], [], {}
        self.visible = {}


class Pic:
    """An SVG picture the figure drew, with the classes of the HTML around it (outermost
    first), so the page's rules for it (".mh-bars .bar") hold in the file too."""

    def __init__(self, markup, around):
        self.markup, self.around = markup, around


class Tile:
    """An item of a list that holds a picture (a head of Real heads): drawn beside its
    neighbours, as the page lays them out, its words above or below its picture."""

    def __init__(self):
        self.items = []


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
    """A figure's HTML as the page shows it: its tables (all of them, for the CSV), and its
    flow for the picture: text, tables, its own SVG pictures and tiles, in the page's order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.items = [], []
        self.containers = [self.items]  # where the next item goes: the flow, or a Tile's
        self.stack = []  # the open HTML elements: (tag, classes, skipped, bold, tile)
        self.runs = []  # the text read since the last block: [(text, bold)]
        self.table = None
        self.part = None  # "caption", "head", "label" or "cell", with its text
        self.text, self.shade, self.in_head = [], None, False
        self.label = ""  # a cell's exact value when it is the cell's name (kit.attention_grid)
        self.svg_depth, self.svg, self.open = 0, [], []
        self.svg_skipped = False  # the picture being read is one a download leaves out

    def skipped(self):
        return any(e[2] for e in self.stack)

    def flush(self):
        """The text read since the last block, as one item of the flow."""
        runs, self.runs = self.runs, []
        while runs and runs[-1] == PIECE_GAP:
            runs.pop()
        if "".join(t for t, _ in runs).strip() and not self.skipped():
            self.containers[-1].append(runs)

    def handle_starttag(self, tag, attrs):
        if tag == "svg" or self.svg_depth:
            if tag == "svg" and not self.svg_depth:
                self.flush()
                self.svg_skipped = bool(
                    SKIP_CLASSES & set((dict(attrs).get("class") or "").split())
                )
            self.svg_depth += tag == "svg"
            written = self.get_starttag_text()
            self.open.append(re.match(r"<([^\s/>]+)", written).group(1))  # its case, for XML
            self.svg.append(written)
            return
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "sup":
            self.handle_data(RAISE)
        if tag in ("strong", "b") and self.part in ("td", "th"):
            self.handle_data(BOLD)
        if tag not in VOID:
            if tag in BLOCKS or tag == "table":
                self.flush()
            skip = tag in SKIP_TAGS or "hidden" in a or bool(SKIP_CLASSES & set(classes))
            bold = "pressed" if a.get("aria-pressed") == "true" else tag in ("strong", "b", "th")
            tile = Tile() if tag == "li" else None
            self._swatch(classes)
            self.stack.append((tag, classes, skip, bold, tile))
            if tile:
                self.containers.append(tile.items)
        if tag == "table":
            self.table = Table()
            self.tables.append(self.table)
            if not self.skipped():
                self.containers[-1].append(self.table)
        elif self.table is None:
            return
        elif tag == "thead":
            self.in_head = True
        elif tag == "tr" and not self.in_head:
            self.table.rows.append(["", []])
        elif tag in ("caption", "th", "td"):
            self.part = "caption" if tag == "caption" else "head" if self.in_head else tag
            self.text = []
            self.label = (a.get("aria-label") or "") if tag == "td" else ""
            shades = _shades(classes)
            self.shade = MASKED if "masked" in classes else shades[0] if shades else None

    def handle_startendtag(self, tag, attrs):
        if self.svg_depth:
            self.svg.append(self.get_starttag_text())
        elif tag not in VOID:
            self.handle_starttag(tag, attrs)
            self.handle_endtag(tag)
        else:
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if self.svg_depth:
            self.svg.append(f"</{self.open.pop() if self.open else tag}>")
            if tag == "svg":
                self.svg_depth -= 1
                if not self.svg_depth:
                    if not self.svg_skipped:
                        self._picture(clean_svg("".join(self.svg)))
                    self.svg = []
            return
        if tag == "sup":
            self.handle_data(LOWER)
        if tag in ("strong", "b") and self.part in ("td", "th"):
            self.handle_data(PLAIN)
        if tag in BLOCKS or tag == "table":
            self.flush()
        self._close_element(tag)
        in_strip = tag == "span" and self.stack and self.stack[-1][0] == "span"
        if self.runs and (tag == "button" or in_strip):
            # a row of words drawn as buttons or as labels; of a tokenizer's pieces, marked apart
            pieces = any(PIECES in e[1] for e in self.stack)
            self.runs.append(PIECE_GAP if pieces and tag == "button" else (" ", False))
        if self.table is None:
            return
        if tag == "thead":
            self.in_head = False
        elif tag == "table":
            self.table = None
        elif tag in ("caption", "th", "td") and self.part:
            self._close()

    def _close_element(self, tag):
        if not any(e[0] == tag for e in self.stack):
            return
        while self.stack:
            name, _, _, _, tile = self.stack.pop()
            if tile:
                self.containers.pop()
                shown = tile.items if not any(_pictures(tile.items)) else [tile]
                if not self.skipped():
                    self.containers[-1].extend(shown)
            if name == tag:
                return

    def _picture(self, markup):
        around = [" ".join(e[1]) for e in self.stack if e[1]]
        pic = Pic(markup, around)
        t = self.table
        if t is not None and self.part in ("td", "th") and t.rows:
            t.pictures[(len(t.rows) - 1, len(t.rows[-1][1]))] = pic
        elif not self.skipped():
            self.containers[-1].append(pic)

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
            if self.label:
                t.visible[(len(t.rows) - 1, len(t.rows[-1][1]))] = " ".join(
                    "".join(self.text).split()
                )
            t.rows[-1][1].append((text, self.shade))

    def handle_data(self, data):
        if self.svg_depth:
            self.svg.append(escape(data, quote=False))
        elif self.part:
            self.text.append(data)
        elif self.table is None and not self.skipped():
            marks = {e[3] for e in self.stack}
            self.runs.append((data, "pressed" if "pressed" in marks else True in marks))

    def _swatch(self, classes):
        """A colour of a legend (<span class="sw l3">): a square of that colour; the hatch of a
        masked cell (<span class="sw masked">), a hatched square between spaces."""
        shades = _shades(classes)
        if "sw" in classes and shades and not self.skipped():
            self.runs.append(("■", shades[0]))
        elif "sw" in classes and "masked" in classes and not self.skipped():
            self.runs.append((" ▨ ", False))


def _shades(classes):
    """The shades among an element's classes: l0 … l9 as 0-9, neg1 … neg4 as 10-13."""
    out = []
    for c in classes:
        if re.fullmatch(r"l\d", c):
            out.append(int(c[1:]))
        elif re.fullmatch(r"neg[1-4]", c):
            out.append(9 + int(c[3:]))
    return out


def _pictures(items):
    """Every Pic among ITEMS, those in tiles too."""
    for item in items:
        if isinstance(item, Pic):
            yield item
        elif isinstance(item, Tile):
            yield from _pictures(item.items)


def read(html):
    """(tables, flow) of a figure's HTML: every table, and what the page shows in order."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    reader.flush()
    tables = [t for t in reader.tables if t.rows]
    flow = [i for i in reader.items if not isinstance(i, Table) or i.rows]
    return tables, flow


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
    text = BOLDED.sub(r"\1", RAISED.sub(r"^\1", str(field)))
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


def _esc(text):
    """Text -> SVG text; quotes too, so no text can pose as an attribute (see _colours)."""
    raised = r'<tspan style="baseline-shift:super;font-size:75%">\1</tspan>'
    bold = r'<tspan style="font-weight:700">\1</tspan>'
    return BOLDED.sub(bold, RAISED.sub(raised, escape(text)))


def _text(x, y, text, tone=None, anchor="start", size=14):
    """One line of text of the picture's own (a style attribute: the page's style sheet,
    written for the figures' classes, must not move or restyle it)."""
    fill = MUTED if tone == "muted" else INK
    style = f"font-size:{size}px;text-anchor:{anchor};fill:{fill}"
    return f'<text x="{x}" y="{y}" style="{style}">{_esc(text)}</text>'


def fits(width, size):
    """How many characters of SIZE px fit in WIDTH px, at the widest."""
    return max(8, int(width / (size * CHAR_W)))


def _lines(x, y, text, size, width, tone=None):
    """TEXT wrapped to WIDTH px, one <text> a line from Y down: (markup, its height)."""
    lines = textwrap.wrap(text, fits(width, size), break_on_hyphens=False) or [""]
    step = round(size * 1.35)
    markup = "".join(_text(x, y + i * step, line, tone, size=size) for i, line in enumerate(lines))
    return markup, step * len(lines)


def _runs(runs, width, size):
    """Text read from the page, its bold runs bold (a chosen word, a number in <strong>),
    wrapped to WIDTH px: (markup, its height)."""
    words = []  # (word, bold, "pressed" (a chosen word) or a swatch's shade, space before)
    space = False
    for text, bold in runs:
        for piece in re.split(r"(\s+)", text):
            if not piece:
                continue
            if piece.isspace():
                space = True
            elif bold not in (True, False, "pressed"):
                words.append((piece, bold, space and bool(words)))
                space = True  # swatches stand apart
            else:
                words.append((piece, bold, space and bool(words)))
                space = False
    lines, line, used, most = [], [], 0, fits(width, size)
    for word, bold, gap in words:
        if line and used + gap + len(word) > most:
            lines.append(line)
            line, used, gap = [], 0, False
        line.append((word, bold, gap))
        used += gap + len(word)
    lines += [line] if line else []
    step = round(size * 1.4)
    out = []
    for i, line in enumerate(lines):
        spans = "".join(
            (" " if gap else "")
            + (
                _esc(w)
                if bold is False
                else f'<tspan style="font-weight:700">{_esc(w)}</tspan>'
                if bold is True
                else f'<tspan style="font-weight:700;fill:{ACCENT}">{_esc(w)}</tspan>'
                if bold == "pressed"
                else f'<tspan style="fill:{SHADES[bold]};stroke:{LINE}">{_esc(w)}</tspan>'
            )
            for w, bold, gap in line
        )
        out.append(
            f'<text x="0" y="{(i + 1) * step - round(size * 0.35)}" xml:space="preserve" '
            f'style="font-size:{size}px;text-anchor:start;fill:{INK}">{spans}</text>'
        )
    return "".join(out), step * len(lines) + 4


def _shown(text, shade, visible=None):
    """What a grid cell shows: its text as on the page; a cell shown as a shade alone (its
    text is its name, VISIBLE is "") its number as the page writes it, a masked one nothing."""
    if visible is None or visible:
        return visible or text
    if shade == MASKED or not value(text):
        return ""
    return NUMBER.findall(re.sub(r"“[^”]*”", "", text))[-1]


def _text_w(text, size):
    return len(BOLDED.sub(r"\1", RAISED.sub(r"\1", text))) * size * CHAR_W


def table_svg(t, top):
    """A table drawn as a grid from height TOP: (markup, its height, its width). A column is
    as wide as its label and its cells need, so all of them are whole; a cell that holds a
    picture (a bar) holds it here too."""
    columns = t.columns[1:] if len(t.columns) > len(t.rows[0][1]) else t.columns
    n = max(len(cells) for _, cells in t.rows)
    widths = []
    for i in range(n):
        texts = [
            _shown(*cells[i], t.visible.get((r, i)))
            for r, (_, cells) in enumerate(t.rows)
            if i < len(cells)
        ]
        texts += [columns[i]] if i < len(columns) else []
        pics = [_size(p.markup)[0] for (_, c), p in t.pictures.items() if c == i]
        need = max([_text_w(x, 12) + 12 for x in texts] + [p + 8 for p in pics] + [CELL_W])
        widths.append(round(need))
    labels = [label for label, _ in t.rows] + t.columns[: len(t.columns) - len(columns)]
    label_w = round(max([LABEL_W] + [_text_w(label, 12) + 16 for label in labels]))
    parts, y = _lines(0, top + 16, t.caption, 15, max(MIN_W, label_w + sum(widths)))
    parts, y = [parts], top + y + 6
    if len(t.columns) > len(columns):  # the head of the rows' labels
        parts.append(_text(label_w - 8, y + 16, t.columns[0], "muted", "end", size=12))
    x = label_w
    for i, w in enumerate(widths):
        label = columns[i] if i < len(columns) else ""
        parts.append(_text(x + w / 2, y + 16, label, "muted", "middle", size=12))
        x += w
    y += HEAD_H
    for r, (label, cells) in enumerate(t.rows):
        parts.append(_text(label_w - 8, y + 17, label, "muted", "end", size=12))
        x = label_w
        for c, ((text, shade), w) in enumerate(zip(cells, widths, strict=False)):
            fill = PANEL if shade == MASKED else SHADES[shade] if shade is not None else "#ffffff"
            parts.append(
                f'<rect x="{x}" y="{y}" width="{w}" height="{CELL_H}" '
                f'style="fill:{fill};stroke:{LINE}"/>'
            )
            pic = t.pictures.get((r, c))
            if pic:
                pw, ph = _size(pic.markup)
                parts.append(_placed(pic, x + 4, y + (CELL_H - ph) / 2)[0])
            else:
                ink = "#ffffff" if shade in DARK_SHADES else INK
                parts.append(
                    f'<text x="{x + w / 2}" y="{y + 17}" '
                    f'style="font-size:12px;text-anchor:middle;fill:{ink}">'
                    f"{_esc(_shown(text, shade, t.visible.get((r, c))))}</text>"
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


def _placed(pic, x, y, least=0):
    """A figure's own SVG placed at (X, Y), at its own size (at least LEAST wide, where its
    viewBox lets it scale), inside groups carrying the classes of the HTML around it on the
    page: (markup, width, height)."""
    svg = pic.markup
    width, height = _size(svg)
    tag = svg[: svg.index(">")]
    if 0 < width < least and "viewBox=" in tag:
        width, height = least, height * least / width
    tag = re.sub(r'\s(x|y|width|height)="[^"]*"', "", tag)
    tag += f' x="{x:.0f}" y="{y:.0f}" width="{width:.0f}" height="{height:.0f}"'
    opened = "".join(f'<g class="{escape(c)}">' for c in pic.around)
    markup = opened + tag + svg[svg.index(">") :] + "</g>" * len(pic.around)
    return markup, width, height


def flow(items, width, least=0):
    """ITEMS drawn one under another, tiles side by side in rows, at most WIDTH px wide
    (wider only where a picture or table is), each picture at least LEAST px wide: (markup,
    its width, its height)."""
    parts, y, used, row = [], 0, 0, []

    def end_row():
        nonlocal y, used
        if row:
            x, tall = 0, 0
            for markup, w, h in row:
                parts.append(f'<g transform="translate({x:.0f},{y:.0f})">{markup}</g>')
                x, tall = x + w + 16, max(tall, h)
            used = max(used, x - 16)
            y += tall + GAP
            row.clear()

    for item in items:
        if isinstance(item, Tile):
            pics = [_size(p.markup)[0] for p in _pictures(item.items)]
            tile = flow(item.items, max([LEAST_TILE] + pics), LEAST_TILE)
            if row and sum(w + 16 for _, w, _ in row) + tile[1] > width:
                end_row()
            row.append(tile)
            continue
        end_row()
        if isinstance(item, Table):
            markup, h, w = table_svg(item, 0)
        elif isinstance(item, Pic):
            markup, w, h = _placed(item, 0, 0, least)
        else:
            size = 12 if width < 300 else 14
            markup, h = _runs(item, width, size)
            w = min(width, max(_text_w(t, size) for t, _ in item) if item else 0)
        parts.append(f'<g transform="translate(0,{y:.0f})">{markup}</g>')
        y, used = y + h + GAP / 2, max(used, w)
    end_row()
    return "".join(parts), max(used, 0), y


RULE = re.compile(r"([^{}@;]+)\{([^{}]*)\}")
COMPOUND = re.compile(r"([a-zA-Z][\w-]*|\*)?((?:\.[\w-]+)*)")
VAR = re.compile(r"var\(\s*(--[\w-]+)\s*(?:,\s*([^()]*))?\)")


def _top_rules(css):
    """(selectors, declarations) of each rule outside at-rules (@media: the dark theme, narrow
    screens and print are not the picture's; it is the light page on a wide screen)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out, i, depth, start = [], 0, 0, 0
    for i, ch in enumerate(css):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                block = css[start : i + 1].strip()
                if not block.startswith("@") and (m := RULE.fullmatch(block)):
                    out.append((m.group(1).strip(), m.group(2)))
                start = i + 1
        elif ch == ";" and depth == 0:
            start = i + 1  # an @import or @charset: nothing of the picture's
    return out


def _declarations(body):
    for decl in body.split(";"):
        name, _, val = decl.partition(":")
        if val.strip():
            yield name.strip().lower(), val.strip()


def _matches(chain, compounds):
    """Does the element at the end of CHAIN [(tag, classes)…] match the selector's
    COMPOUNDS [(tag, classes)…] (descendant combinators only)?"""
    *ancestors, last = compounds
    if not _compound(chain[-1], last):
        return False
    i = len(chain) - 2
    for c in reversed(ancestors):
        while i >= 0 and not _compound(chain[i], c):
            i -= 1
        if i < 0:
            return False
        i -= 1
    return True


def _compound(element, compound):
    tag, classes = element
    want_tag, want = compound
    return (want_tag in (None, "*", tag)) and want <= classes


def _parsed(selector):
    """A selector's compounds [(tag or None, {classes})], or None for one this file cannot
    match (pseudo-classes, attributes, ids, sibling combinators: states of the page)."""
    if re.search(r"[:\[#+~]", selector):
        return None
    out = []
    for part in selector.replace(">", " ").split():
        m = COMPOUND.fullmatch(part)
        if not m or not part:
            return None
        out.append((m.group(1).lower() if m.group(1) else None, set(m.group(2).split(".")) - {""}))
    return out or None


def _resolver(rules):
    """A function that writes out the variables in a CSS value as the light page has them."""
    names = dict(LIGHT)
    for _, decls in rules:
        names.update((k, v) for k, v in _declarations(decls) if k.startswith("--"))

    def resolved(text):
        for _ in range(8):
            text, n = VAR.subn(lambda m: names.get(m.group(1), m.group(2) or ""), text)
            if not n:
                break
        return text

    return resolved


def _colours(markup, resolved):
    """MARKUP with the variables in its style attributes written out by RESOLVED (see INK)."""
    return re.sub(r'style="[^"]*"', lambda m: resolved(m.group(0)), markup)


def styles_for(body, css):
    """The rules of the page's style sheet CSS that style an element of BODY (SVG markup), with
    only the properties an SVG draws with, its variables replaced by the light theme's values:
    the picture looks as on the page, and carries nothing else of the page's."""
    rules = _top_rules(css)
    resolved = _resolver(rules)

    root = ET.fromstring(f'<svg xmlns="{SVG_NS}">{body}</svg>')
    ends = {}  # a tag or class -> the chains of the elements that have it

    def walk(el, chain):
        here = chain + ((el.tag.split("}")[-1], frozenset((el.get("class") or "").split())),)
        for key in (here[-1][0], *(f".{c}" for c in here[-1][1])):
            ends.setdefault(key, set()).add(here)
        for child in el:
            walk(child, here)

    walk(root, ())
    everything = set().union(*ends.values())
    out = []
    for selectors, decls in rules:
        props = [f"{k}:{resolved(v)}" for k, v in _declarations(decls) if k in SVG_PROPERTIES]
        keep = []
        for selector in selectors.split(",") if props else ():
            compounds = _parsed(selector.strip())
            if not compounds:
                continue
            tag, classes = compounds[-1]
            key = f".{min(classes)}" if classes else tag
            candidates = everything if key in (None, "*") else ends.get(key, ())
            if any(_matches(chain, compounds) for chain in candidates):
                keep.append(selector.strip())
        if keep:
            out.append(f"{','.join(keep)}{{{';'.join(props)}}}")
    return "".join(out)


def picture(flow_items, caption, state, source, css=""):
    """The whole figure as one SVG document: caption, then what the figure shows in the page's
    order (its text, tables as grids, its own pictures, styled by the rules of the page's style
    sheet CSS they use), then its state and source, all within its width."""
    body, width, height = flow(flow_items, MAX_W)
    width = max(MIN_W, width)
    head, top = _lines(0, 24, caption, 17, width)
    y = top + 24
    said, h = _lines(0, y + height, f"State: {_state_line(state)}", 12, width, "muted")
    said2, h2 = _lines(0, y + height + h, f"Source: {source}", 12, width, "muted")
    inner = head + f'<g transform="translate(0,{y:.0f})">{body}</g>' + said + said2
    resolved = _resolver(_top_rules(css))
    inner = _colours(inner, resolved)
    total = y + height + h + h2 + 8
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="{SVG_NS}" width="{width + 20:.0f}" '
        f'height="{total:.0f}" viewBox="-10 0 {width + 20:.0f} {total:.0f}" '
        'font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="14" '
        f'style="color:{resolved(INK)}">'
        f"<title>{_esc(caption)}</title><style>{styles_for(inner, css)}</style>"
        f'<rect x="-10" y="0" width="{width + 20:.0f}" height="{total:.0f}" '
        'style="fill:#ffffff;stroke:none"/>' + inner + "</svg>\n"
    )


def _slug(text, most=40):
    """TEXT in lower-case letters, digits and single hyphens, at most MOST characters (cut
    between words where it can be)."""
    plain = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")
    if len(slug) > most:
        slug = slug[: most + 1].rsplit("-", 1)[0] if "-" in slug[:most] else slug[:most]
    return slug.strip("-")


def file_name(source, caption, fid, state):
    """The files' name without extension: the chapter (from the page's address SOURCE, an
    embedded figure's too), the figure's number (from its CAPTION, else its id FID) and its
    state, e.g. 'one-head-figure-2-angle-30-length-2'; letters, digits and hyphens only."""
    parts = [p for p in urlsplit(str(source)).path.split("/") if p]
    if "embed" in parts[:-1]:
        chapter = parts[parts.index("embed") + 1]
    else:
        chapter = parts[-1].rsplit(".", 1)[0] if parts else ""
    number = re.match(r"\s*Figure\s+(\d+)", str(caption))
    pieces = [_slug(chapter) or "figure", f"figure-{number.group(1)}" if number else _slug(fid)]
    pieces += [_slug(f"{k}-{v}", 30) for k, v in state.items() if str(v) != ""]
    return _slug("-".join(p for p in pieces if p), 120)


def files(model, state, fid, caption, source, css=""):
    """{"svg", "csv", "name"} of the figure drawn by MODEL ('toymodels.MODULE:render') in
    STATE, or {"error"} when the state cannot be drawn. CAPTION and SOURCE (the page's address)
    are plain text for the files' headers; CSS is the page's style sheet, whose rules for the
    figure's own pictures the SVG carries."""
    name, _, func = str(model).partition(":")
    if not name.startswith("toymodels.") or func != "render":
        return {"error": f"{model} is not a figure"}
    module = importlib.import_module(name)
    answer = check(getattr(module, func)(state, fid))
    if answer["error"]:
        return {"error": answer["error"]}
    html = answer["html"] + "".join(answer["slots"].values())
    tables, shown = read(html)
    drawn = answer["state"]
    more = getattr(module, "download_tables", None)
    numbers = tables + (offered(more(drawn, fid)) if more else [])
    return {
        "svg": picture(shown, str(caption), drawn, str(source), str(css)),
        "csv": table_csv(numbers, str(caption), drawn, str(source)),
        "name": file_name(source, caption, fid, drawn),
    }
