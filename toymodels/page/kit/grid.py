"""Attention as a picture: the grid of a head's shares or scores, its SVG twin, and the legend.

Row i is a word looking, column j a word it looks at. A share is a colour class from
`level` (l0 … l9); a later word that a causal head cannot see is the hatched class "masked";
each cell also carries its exact value as text (class "tip": shown on hover and focus, read
by screen readers), since colour alone says too little. The SVG twin draws the same classes
for a thumbnail, for print and for the download (toymodels/page/download.py keeps a figure's
SVG as drawn and colours the classes l0 … l9 as the screen does).
"""

import numpy as np

from ..html import attrs, esc, level, levels, num, pct, quoted, tenths

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

    VIEW "softmax" colours SHARES (each row's percentages rounded to add up to 100.0%, or
    ROUNDED[i][j] in tenths when the figure rounds its own); "scores" writes SCORES in every
    cell, later words marked "future"; "mask" writes the scores a word can see and hatches the
    rest. With KEY, a tap or Enter on row i sets state[KEY] = VALUE(i); row SELECTED is marked
    and its first cell is the grid's Tab stop. Cell focus keys are FK-i-j; HEAD is data-head.
    """
    T = len(words)
    said = [esc(quoted(w)) for w in words]  # escaped once: each shows T times
    cols = "".join(f'<th scope="col"><span>{esc(w)}</span></th>' for w in words)
    rows = []
    for i in range(T):
        seen = i + 1 if causal else T
        if view == "softmax":
            share = rounded[i] if rounded is not None else tenths(shares[i][:seen])
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
                c, text = f"c {level(shares[i][j])}", ""
            cell = attrs(
                class_=c,
                tabindex=None if key is None else "0" if (i, j) == (selected, 0) else "-1",
                data_fk=None if key is None else f"{fk}-{i}-{j}",
            )
            cells.append(f'<td{cell}>{text}<span class="tip">{tip}</span></td>')
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


def cells_by_class(cells):
    """[(class, x, y, w, h)] -> one <path> per class: far less markup than a <rect> per cell."""
    paths = {}
    for c, x, y, w, h in cells:
        paths.setdefault(c, []).append(f"M{x:g} {y:g}h{w:g}v{h:g}h{-w:g}z")
    return "".join(f'<path class="{c}" d="{"".join(d)}"/>' for c, d in paths.items())


def _stairs(n, cell, below):
    """The outline, as a path, of the cells on and below the diagonal (BELOW) or above it."""
    if below:
        return f"M0 0h{cell}" + f"v{cell}h{cell}" * (n - 1) + f"v{cell}H0z"
    return f"M{cell} 0H{n * cell}V{(n - 1) * cell}" + f"h{-cell}v{-cell}" * (n - 1) + "z"


def heatmap_svg(shares, *, label=None, causal=True, selected=None, first=0, cell=7, cls="mh-mini"):
    """A head's shares as a small SVG picture: one square per cell in its colour class, a
    causal head's hidden cells in the class "masked" (filled like the download's masked cells),
    row SELECTED (counted from FIRST) outlined.

    With LABEL it is an image named LABEL; without, it is decoration (aria-hidden), for a
    picture inside a control that is named in words."""
    n = len(shares)
    lv = levels(shares)  # (n, n) colour class numbers
    seen = np.tril_indices(n) if causal else np.indices((n, n)).reshape(2, -1)
    cells = [
        (f"l{lv[i, j]}", j * cell, i * cell, cell, cell)
        for i, j in zip(*seen, strict=True)
        if lv[i, j] != 1
    ]
    size = n * cell
    under = _stairs(n, cell, True) if causal else f"M0 0H{size}V{size}H0z"
    body = [f'<path class="l1" d="{under}"/>']  # the lightest level is all of it beneath
    if causal and n > 1:
        body.append(f'<path class="masked" d="{_stairs(n, cell, False)}"/>')
    body.append(cells_by_class(cells))
    if selected is not None and first <= selected < first + n:
        row = f'x="0" y="{(selected - first) * cell}" width="{size}" height="{cell}"'
        body.append(f'<rect class="rowmark" {row}/>')
    body.append(f'<path class="frame" d="M0 0 H{size} V{size} H0 Z"/>')
    named = dict(role="img", aria_label=label) if label else dict(aria_hidden="true")
    markup = attrs(class_=f"mh-svg {cls}", viewBox=f"0 0 {size} {size}", **named)
    return f'<svg{markup} width="{size}" height="{size}">{"".join(body)}</svg>'


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
    """Entry J of a distribution as the kit's tables show it: '12.5%', each share rounded in
    tenths so that all of them add up to exactly 100.0%."""
    return pct(tenths(shares)[j])
