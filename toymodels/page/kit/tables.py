"""Tables of numbers: a labelled matrix with its shape, and the shares of attention.

Both are real tables (caption, scoped headers), so screen readers announce each number with
its row and column, and the download (toymodels/page/download/) turns them into CSV and a
drawn grid as they are.
"""

import numpy as np

from ..html import attrs, esc, num, pct, symbols, tenths


def matrix(
    caption,
    rows,
    cols,
    values,
    *,
    fk=None,
    selected=None,
    places=2,
    shape=False,
    col_class=None,
    lit=(None, None),
    key=None,
    cls="mh-matrix",
):
    """A numeric table: a row per label of ROWS, a column per label of COLS, numbers with PLACES
    decimals and a real minus sign; a matrix name in CAPTION such as W_Q is drawn W<sup>Q</sup>
    (html.symbols). SHAPE adds "(rows × columns)" to the caption; row SELECTED
    is marked "sel"; LIT = (row, column) highlights a row, a column or one cell ("hl");
    COL_CLASS(j) colours column j (e.g. by head). With KEY every cell is a control that sets
    state[KEY] = "ROW,COLUMN", and the table is one Tab stop (focus keys FK-i-j)."""
    lit_row, lit_col = lit
    head = "".join(
        f'<th scope="col"{attrs(class_=col_class(j) if col_class else None)}>{esc(name)}</th>'
        for j, name in enumerate(cols)
    )
    body = []
    for i, (label, row) in enumerate(zip(rows, values, strict=True)):
        cells = []
        for j, x in enumerate(row):
            on = (lit_row == i and lit_col in (None, j)) or (lit_row is None and lit_col == j)
            classes = " ".join(filter(None, [col_class(j) if col_class else None, on and "hl"]))
            cell = attrs(
                class_=classes or None,
                tabindex=None if key is None else "0" if (i, j) == (0, 0) else "-1",
                data_fk=None if key is None else f"{fk}-{i}-{j}",
                data_key=key,
                data_value=None if key is None else f"{i},{j}",
            )
            cells.append(f"<td{cell}>{num(x, places)}</td>")
        body.append(
            f"<tr{attrs(class_='sel' if i == selected else None)}>"
            f'<th scope="row">{esc(label)}</th>{"".join(cells)}</tr>'
        )
    cap = symbols(caption)
    if shape:
        cap += f' <span class="shape">({len(body)} × {len(cols)})</span>'
    table = attrs(class_=cls, data_fk=None if key else fk, data_roving="grid" if key else None)
    return (
        f"<table{table}><caption>{cap}</caption>"
        f"<thead><tr><td></td>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def shares_table(words, columns, *, caption, seen=None, selected=None):
    """One word's shares of attention: a row per word of WORDS, a column per (name, shares) of
    COLUMNS. Only the first SEEN words (all by default) are visible to it, the rest masked;
    each percentage is the share rounded to the nearest tenth of a point (`tenths`), so equal
    shares show alike. The total row states the sum of the exact shares (100.0%); where the
    rounded ones add up to another number, a line under the table says why. Row SELECTED (the
    looking word) is marked."""
    seen = len(words) if seen is None else seen
    shown = [tenths(shares[:seen]) for _, shares in columns]
    names = "".join(f'<th scope="col">{esc(name)}</th>' for name, _ in columns)
    masked = '<td class="masked">–<span class="sr"> masked</span></td>'
    rows = []
    for j, word in enumerate(words):
        cells = "".join(f"<td>{pct(col[j])}</td>" if j < seen else masked for col in shown)
        row = attrs(class_="sel" if j == selected else None)
        rows.append(f'<tr{row}><th scope="row">{esc(word)}</th>{cells}</tr>')
    totals = "".join(f"<td>{pct(exact_total(shares[:seen]))}</td>" for _, shares in columns)
    return (
        f'<table class="mh-shares"><caption>{esc(caption)}</caption>'
        f'<thead><tr><th scope="col">Word</th>{names}</tr></thead><tbody>{"".join(rows)}</tbody>'
        f'<tfoot><tr><th scope="row">Total</th>{totals}</tr></tfoot></table>' + rounding_note(shown)
    )


def exact_total(shares):
    """The sum of a distribution's exact shares, in tenths of a point: 1000 for one that adds
    up to 1 (the shares shown are each rounded, so their sum may differ by a tenth or two)."""
    raw = np.asarray(shares, dtype=float)
    total = raw.sum()
    return 1000 if np.isfinite(total) and total > 0 else 0


def rounding_note(columns):
    """A line saying why the rounded shares of COLUMNS (tenths, each an array) add up to
    another total than 100.0%, if any does; else nothing."""
    sums = sorted({int(col.sum()) for col in columns} - {1000})
    if not sums:
        return ""
    said = " or ".join(pct(s) for s in sums)
    return (
        f'<p class="mh-rounding">Each share is rounded to a tenth on its own, so the shares '
        f"shown add up to {said}; the exact ones add up to 100%.</p>"
    )
