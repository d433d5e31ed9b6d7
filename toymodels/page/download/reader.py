"""The figure's HTML read as the page shows it: its tables (every cell's text, shade and
picture), and its flow for the picture (text, tables, its own SVG pictures and tiles, in the
page's order), leaving out what a picture of it leaves out (controls, text for screen readers,
what a narrow screen shows in place of the whole)."""

import re
from html import escape
from html.parser import HTMLParser

NUMBER = re.compile(r"[−-]?\d+(?:[.,]\d+)*(?:\.\d+)?%?")
MASKED = -1  # a cell a word cannot see
WORDS = -2  # a cell of words (a label, a summary): its value column stays empty
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
# a raised letter (W<sup>Q</sup>) travels through the reader between these two marks, and is
# drawn raised in the picture and written W^Q in the CSV
RAISE, LOWER = "\ue000", "\ue001"
RAISED = re.compile(f"{RAISE}([^{LOWER}]*){LOWER}")
# so does a word in bold in a table's cell (the word that differs in a pair of texts), drawn bold
BOLD, PLAIN = "\ue002", "\ue003"
BOLDED = re.compile(f"{BOLD}([^{PLAIN}]*){PLAIN}")


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
                shown = tile.items if not any(pictures(tile.items)) else [tile]
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


def pictures(items):
    """Every Pic among ITEMS, those in tiles too."""
    for item in items:
        if isinstance(item, Pic):
            yield item
        elif isinstance(item, Tile):
            yield from pictures(item.items)


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
