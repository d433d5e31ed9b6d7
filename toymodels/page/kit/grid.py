"""Attention as a picture: the grid of a head's shares or scores, its SVG twin, and the legend.

Row i is a word looking, column j a word it looks at. A share is a colour class from
`level` (l0 … l9); a later word that a causal head cannot see is the hatched class "masked";
each cell also carries its exact value as its name (aria-label: read by screen readers, and
shown on hover and focus by the site's CSS), since colour alone says too little. A name and not
a hidden element: 200 positioned spans in a map doubled the page's layout after every tap.
The SVG twin draws the same classes for a thumbnail, for print and for the download
(toymodels/page/download/ keeps a figure's SVG as drawn and colours the classes l0 … l9 as
the screen does).
"""

import numpy as np

from ..html import attrs, esc, levels, num, pct, quoted, tenths, tenths_rows

LABELS = {"softmax": "share of attention", "scores": "score before the mask"}
LABELS["mask"] = "score after the mask"
ROWS = "a row is a word looking back, a column a word it can see"


def attention_grid(
    words,
    *,
    name="Attention grid",
    caption=None,
    shares=None,
    scores=None,
    view="softmax",
    causal=True,
    selected=None,
    key="word",
    value=str,
    fk="g",
    cls=None,
    head=None,
    rounded=None,
):
    """A T×T table of one head over WORDS, captioned for screen readers "NAME, what the cells
    hold: how to read it" (or CAPTION).

    VIEW "softmax" colours SHARES (each share named in tenths of a point rounded to the
    nearest, as `share` and shares_table write it, or ROUNDED[i][j] in tenths when the figure
    rounds its own); "scores" writes SCORES in every
    cell, later words marked "future"; "mask" writes the scores a word can see and hatches the
    rest. With KEY, a tap or Enter on row i sets state[KEY] = VALUE(i); row SELECTED is marked
    and its first cell is the grid's Tab stop. Cell focus keys are FK-i-j; HEAD is data-head.
    """
    T = len(words)
    said = [esc(quoted(w)) for w in words]  # escaped once: each shows T times
    cols = "".join(f'<th scope="col"><span>{esc(w)}</span></th>' for w in words)
    # numbers as Python lists, each cell's class and key as plain strings: a grid has T×T cells,
    # and numpy's scalars and attrs() per cell cost more than the rest of a tap under Pyodide
    if view == "softmax":
        with np.errstate(invalid="ignore"):  # a NaN share shows as l0
            shade = levels(np.asarray(shares)).tolist()
        if rounded is None and causal:
            rounded = tenths_rows(shares)
    fk_ = esc(fk)
    rows = []
    for i in range(T):
        seen = i + 1 if causal else T
        if view == "softmax":
            share = rounded[i] if rounded is not None else tenths(shares[i][:seen])
            share = [int(t) for t in share]
        cells = []
        for j in range(T):
            hidden = j >= seen
            if view == "scores" or (view == "mask" and not hidden):
                later = " (later word)" if hidden else ""
                tip = f"{said[i]} → {said[j]}: score {num(scores[i][j])}{later}"
                c, text = "c num" + (" future" if hidden else ""), num(scores[i][j], 1)
            elif hidden:
                tip, c, text = f"{said[i]} cannot see {said[j]}: masked", "c masked", ""
            else:
                tip = f"{said[i]} → {said[j]}: {pct(share[j])}"
                c, text = f"c l{shade[i][j]}", ""
            if key is None:
                cells.append(f'<td class="{c}" aria-label="{tip}">{text}</td>')  # tip: escaped
            else:
                tab = "0" if (i, j) == (selected, 0) else "-1"
                cells.append(
                    f'<td class="{c}" tabindex="{tab}" data-fk="{fk_}-{i}-{j}" '
                    f'aria-label="{tip}">{text}</td>'
                )
        row = attrs(
            class_="sel" if i == selected else None,
            data_key=key,
            data_value=None if key is None else value(i),
        )
        rows.append(f'<tr{row}><th scope="row">{esc(words[i])}</th>{"".join(cells)}</tr>')
    table = attrs(
        class_="mh-grid" + (f" {cls}" if cls else ""),
        data_head=head,
        data_roving=None if key is None else "grid",
    )
    caption = caption or f"{name}, {LABELS[view]}: {ROWS}"
    return (
        f'<table{table}><caption class="sr">{esc(caption)}</caption>'
        f"<thead><tr><td></td>{cols}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def level_paths(lv, drawn, cell, skip=1):
    """(n, m) colour class numbers and (n, m) booleans (cells to draw) -> one <path> per class
    l0 … l9, lightest first: a row's run of same-class neighbours is one rectangle, and the same
    run in the rows below it makes that rectangle taller, "M x y h w v h h -w z" (CELL units a
    cell); class SKIP (the layer beneath) is left out."""
    code = np.where(drawn, lv, -1)  # (n, m); -1: not drawn
    n, m = code.shape
    start = np.ones((n, m), dtype=bool)
    start[:, 1:] = code[:, 1:] != code[:, :-1]
    at = np.flatnonzero(start)  # runs in reading order; every row starts one
    w = np.diff(np.append(at, n * m))  # (runs,) cells, never past the row's end
    y, x = np.divmod(at, m)
    c = code.ravel()[at]
    keep = (c >= 0) & (c != skip)
    c, x, y, w = c[keep], x[keep], y[keep], w[keep]
    order = np.lexsort((y, w, x, c))  # by class, column, width, then row
    c, x, y, w = c[order], x[order], y[order], w[order]
    top = np.ones(len(c), dtype=bool)  # a run that does not continue the one above it
    top[1:] = (c[1:] != c[:-1]) | (x[1:] != x[:-1]) | (w[1:] != w[:-1]) | (y[1:] != y[:-1] + 1)
    first = np.flatnonzero(top)
    h = np.diff(np.append(first, len(c)))  # (rectangles,) rows
    c, x, y, w = c[first], x[first] * cell, y[first] * cell, w[first] * cell
    d = {}
    for k, x0, y0, w0, h0 in zip(
        c.tolist(), x.tolist(), y.tolist(), w.tolist(), (h * cell).tolist(), strict=True
    ):
        d.setdefault(k, []).append(f"M{x0} {y0}h{w0}v{h0}h-{w0}z")
    return "".join(f'<path class="l{k}" d="{"".join(d[k])}"/>' for k in sorted(d))


def _stairs(n, cell, below):
    """The outline, as a path, of the cells on and below the diagonal (BELOW) or above it."""
    if below:
        return f"M0 0h{cell}" + f"v{cell}h{cell}" * (n - 1) + f"v{cell}H0z"
    return f"M{cell} 0H{n * cell}V{(n - 1) * cell}" + f"h{-cell}v{-cell}" * (n - 1) + "z"


FRAME = '<path class="frame"'


def mark_row(svg, row, n, cell=7):
    """A heatmap_svg drawn with no row marked -> the same with ROW (counted in the map, None:
    none) marked, exactly as heatmap_svg(…, selected=ROW) draws it: for a figure that keeps its
    maps and, on a tap, moves only the mark."""
    if row is None or not 0 <= row < n:
        return svg
    mark = f'<rect class="rowmark" x="0" y="{row * cell}" width="{n * cell}" height="{cell}"/>'
    return svg.replace(FRAME, mark + FRAME, 1)


def heatmap_svg(shares, *, label=None, causal=True, selected=None, first=0, cell=7, cls="mh-mini"):
    """A head's shares as a small SVG picture: its cells in their colour classes (a path per
    class, runs of one class as rectangles, level_paths), a causal head's hidden cells in the class
    "masked" (filled like the download's masked cells), row SELECTED (counted from FIRST)
    outlined.

    With LABEL it is an image named LABEL; without, it is decoration (aria-hidden), for a
    picture inside a control that is named in words.

    The picture without its name and mark is kept for the last KEEP maps drawn, by their
    numbers: a tap that only moves the mark (another word, another character) draws no map
    again."""
    shares = np.asarray(shares)
    key = (shares.shape, shares.dtype.str, shares.tobytes(), causal, cell, cls, not label)
    svg = _drawn.get(key)
    if svg is None:
        svg = _draw_map(shares, "\0" if label else None, causal, cell, cls)
        if len(_drawn) >= KEEP:
            _drawn.pop(next(iter(_drawn)))
        _drawn[key] = svg
    if label:
        svg = svg.replace('aria-label="\0"', f'aria-label="{esc(label)}"', 1)
    return mark_row(svg, None if selected is None else selected - first, len(shares), cell)


_drawn = {}  # (shape, dtype, bytes, causal, cell, cls, unnamed) -> svg named "\0", no row marked
KEEP = 256  # "Real heads" shows 72 maps at once, "One character" 8 and their neighbours


def _draw_map(shares, label, causal, cell, cls):
    n = len(shares)
    lv = levels(shares)  # (n, n) colour class numbers
    seen = np.tri(n, dtype=bool) if causal else np.ones((n, n), dtype=bool)  # (n, n)
    size = n * cell
    under = _stairs(n, cell, True) if causal else f"M0 0H{size}V{size}H0z"
    body = [f'<path class="l1" d="{under}"/>']  # the lightest level is all of it beneath
    if causal and n > 1:
        body.append(f'<path class="masked" d="{_stairs(n, cell, False)}"/>')
    body.append(level_paths(lv, seen, cell))
    body.append(f'{FRAME} d="M0 0 H{size} V{size} H0 Z"/>')
    named = dict(role="img", aria_label=label) if label else dict(aria_hidden="true")
    markup = attrs(class_=f"mh-svg {cls}", viewBox=f"0 0 {size} {size}", **named)
    return f'<svg{markup} width="{size}" height="{size}">{"".join(body)}</svg>'


def _box(x, y, w, h):
    return f"M{x} {y}h{w}v{h}h-{w}z"


def _stair(x, y, n, cell, below):
    """`_stairs` at (X, Y), in relative steps: one map's part of a sheet's path."""
    c = cell
    if below:
        return f"M{x} {y}h{c}" + f"v{c}h{c}" * (n - 1) + f"v{c}h{-n * c}z"
    return f"M{x + c} {y}h{(n - 1) * c}v{(n - 1) * c}" + f"h{-c}v{-c}" * (n - 1) + "z"


def sheet_boxes(shape, n, cell=7, gap=1, band=0):
    """Where a sheet of maps (SHAPE = rows, columns) puts each one, row by row: [(x, y)] of its
    top left corner, each map N cells square in a box GAP cells wider and BAND cells taller."""
    rows, cols = shape
    return [(c * (n + gap) * cell, r * (n + band) * cell) for r in range(rows) for c in range(cols)]


def sheet_mark(shape, n, row, cell=7, gap=1, band=0):
    """Row ROW of every map of a sheet outlined, as one path (heatmap_svg's row mark)."""
    boxes = sheet_boxes(shape, n, cell, gap, band)
    d = "".join(_box(x, y + row * cell, n * cell, cell) for x, y in boxes)
    return f'<path class="rowmark" d="{d}"/>'


def heatmap_sheet(maps, *, causal=True, selected=None, cell=7, gap=1, band=0, cls="mh-mini"):
    """Many heads' shares, MAPS (rows, columns, n, n), as ONE SVG picture drawn like
    heatmap_svg: a path per colour class for all of them (level_paths), one for the frames and
    one for the marked row SELECTED of each. Each map sits in a box GAP cells wider and BAND
    cells taller than itself (sheet_boxes), so that controls laid over the picture in equal
    rows and columns cover one map each. Decoration (aria-hidden): each map is named in words
    by the control over it."""
    maps = np.asarray(maps)
    rows, cols, n, _ = maps.shape
    code = np.where(np.tri(n, dtype=bool) if causal else True, levels(maps), -1)  # (r, c, n, n)
    padded = np.full((rows, cols, n + band, n + gap), -1)
    padded[:, :, :n, :n] = code
    sheet = padded.transpose(0, 2, 1, 3).reshape(rows * (n + band), cols * (n + gap))
    boxes = sheet_boxes((rows, cols), n, cell, gap, band)
    size = n * cell
    if causal:
        under = "".join(_stair(x, y, n, cell, True) for x, y in boxes)
        over = "".join(_stair(x, y, n, cell, False) for x, y in boxes) if n > 1 else ""
    else:
        under, over = "".join(_box(x, y, size, size) for x, y in boxes), ""
    body = [f'<path class="l1" d="{under}"/>']  # the lightest level is all of each map beneath
    if over:
        body.append(f'<path class="masked" d="{over}"/>')
    body.append(level_paths(sheet, sheet >= 0, cell))
    if selected is not None and 0 <= selected < n:
        body.append(sheet_mark((rows, cols), n, selected, cell, gap, band))
    frames = "".join(_box(x, y, size, size) for x, y in boxes)
    body.append(f'{FRAME} d="{frames}"/>')
    w, h = cols * (n + gap) * cell, rows * (n + band) * cell
    markup = attrs(class_=f"mh-svg {cls}", viewBox=f"0 0 {w} {h}", aria_hidden="true")
    return f'<svg{markup} width="{w}" height="{h}">{"".join(body)}</svg>'


def legend(masked="masked (a later word)"):
    """The colour scale from 0% to 100%, and the hatch of a masked cell (MASKED None: no
    mask). Decoration for the eye: every cell says its own value in words."""
    swatches = "".join(f'<span class="sw l{k}"></span>' for k in range(1, 10))
    hatch = f'<span class="sw masked"></span><span>{esc(masked)}</span>' if masked else ""
    return (
        '<p class="mh-legend" aria-hidden="true">'
        f"<span>0%</span>{swatches}<span>100%</span>{hatch}</p>"
    )


def share(shares, j):
    """Entry J of a distribution as the kit's tables show it: '16.7%', its share of the whole
    rounded to the nearest tenth of a point."""
    return pct(tenths(shares)[j])
