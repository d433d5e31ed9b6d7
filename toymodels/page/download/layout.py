"""The picture: what the figure shows, laid out as one SVG document in the page's order, its
tables drawn as grids shaded as on screen, its own pictures as drawn, the items of a list of
pictures side by side, every line wrapped to its width."""

import re
import textwrap
from html import escape

from . import styles
from .reader import BOLDED, MASKED, NUMBER, RAISED, Pic, Table, Tile, pictures, value
from .sheet import state_line

CELL_W, CELL_H, LABEL_W, HEAD_H, GAP, MIN_W, MAX_W = 64, 26, 120, 26, 20, 640, 980
CHAR_W = 0.6  # a character's width in a sans-serif font, at most, as a share of its size
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
# a map smaller than this beside others (a tile) is drawn this wide, as the page draws it larger
LEAST_TILE = 150


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
            pics = [_size(p.markup)[0] for p in pictures(item.items)]
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


def picture(flow_items, caption, state, source, css=""):
    """The whole figure as one SVG document: caption, then what the figure shows in the page's
    order (its text, tables as grids, its own pictures, styled by the rules of the page's style
    sheet CSS they use), then its state and source, all within its width."""
    body, width, height = flow(flow_items, MAX_W)
    width = max(MIN_W, width)
    head, top = _lines(0, 24, caption, 17, width)
    y = top + 24
    said, h = _lines(0, y + height, f"State: {state_line(state)}", 12, width, "muted")
    said2, h2 = _lines(0, y + height + h, f"Source: {source}", 12, width, "muted")
    inner = head + f'<g transform="translate(0,{y:.0f})">{body}</g>' + said + said2
    resolved = styles.resolver(css)
    inner = styles.colours(inner, resolved)
    total = y + height + h + h2 + 8
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="{styles.SVG_NS}" width="{width + 20:.0f}" '
        f'height="{total:.0f}" viewBox="-10 0 {width + 20:.0f} {total:.0f}" '
        'font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="14" '
        f'style="color:{resolved(INK)}">'
        f"<title>{_esc(caption)}</title><style>{styles.styles_for(inner, css)}</style>"
        f'<rect x="-10" y="0" width="{width + 20:.0f}" height="{total:.0f}" '
        'style="fill:#ffffff;stroke:none"/>' + inner + "</svg>\n"
    )
