"""Tables of numbers: a labelled matrix with its shape, and the shares of attention.

Both are real tables (caption, scoped headers), so screen readers announce each number with
its row and column, and the download (toymodels/page/download.py) turns them into CSV and a
drawn grid as they are.
"""

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
    each column's percentages are rounded in tenths by largest remainder, so every column
    adds up to exactly 100.0%. Row SELECTED (the looking word) is marked."""
    seen = len(words) if seen is None else seen
    shown = [tenths(shares[:seen]) for _, shares in columns]
    names = "".join(f'<th scope="col">{esc(name)}</th>' for name, _ in columns)
    masked = '<td class="masked">–<span class="sr"> masked</span></td>'
    rows = []
    for j, word in enumerate(words):
        cells = "".join(f"<td>{pct(col[j])}</td>" if j < seen else masked for col in shown)
        row = attrs(class_="sel" if j == selected else None)
        rows.append(f'<tr{row}><th scope="row">{esc(word)}</th>{cells}</tr>')
    totals = "".join(f"<td>{pct(int(col.sum()))}</td>" for col in shown)
    return (
        f'<table class="mh-shares"><caption>{esc(caption)}</caption>'
        f'<thead><tr><th scope="col">Word</th>{names}</tr></thead><tbody>{"".join(rows)}</tbody>'
        f'<tfoot><tr><th scope="row">Total</th>{totals}</tr></tfoot></table>'
    )
