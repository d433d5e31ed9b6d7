"""The worked example of "One head, from scratch": every matrix of the head, as tables.

A static figure (it takes no state). Its HTML is X, the words as vectors; its slots are the
later steps, each shown in the chapter where the prose reaches it: the weights, the queries
and keys, the scores, the mask, the shares, the values and the outputs. Every number comes
from toymodels.one_head.model.
"""

import numpy as np

from ..page.figure import merge, result
from ..page.html import attrs, esc, num, symbols
from . import model as m

DEFAULTS = {}


def short(x):
    """A number as short as it is exact to two places: 2.0 -> '2', -0.5 -> '−0.5'."""
    text = num(x, 2)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def percent(p):
    """A share as a percentage to one place, rounded on its own: 1/3 -> '33.3%'. (A row's
    total is its exact sum, so three thirds show 33.3% each and a total of 100.0%.)"""
    text = f"{100 * float(p):.1f}%"
    return "0.0%" if text == "-0.0%" else text


def table(caption, rows, cols, cells, *, corner="", cls="mh-matrix oh-worked"):
    """A small table: a caption, column heads, and one row head per row of CELLS, given as
    (text, class or None) pairs or plain text."""
    head = "".join(f'<th scope="col">{esc(c)}</th>' for c in cols)
    body = []
    for label, row in zip(rows, cells, strict=True):
        tds = []
        for cell in row:
            text, cls_ = cell if isinstance(cell, tuple) else (cell, None)
            tds.append(f"<td{attrs(class_=cls_)}>{esc(text)}</td>")
        body.append(f'<tr><th scope="row">{esc(label)}</th>{"".join(tds)}</tr>')
    return (
        f"<table{attrs(class_=cls)}><caption>{symbols(caption)}</caption>"
        f"<thead><tr><td>{esc(corner)}</td>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def side_by_side(*tables):
    return f'<div class="oh-steps">{"".join(tables)}</div>'


def _grid(values, fmt=short):
    return [[fmt(x) for x in row] for row in values]


def _pair(name, n=m.D_HEAD):
    return [f"{name}{'₁₂₃₄'[i]}" for i in range(n)]


def words_table():
    return table(
        "X: one row per word",
        m.WORDS,
        m.FEATURES,
        _grid(m.X),
    )


def weights():
    return side_by_side(
        table("W_Q: what each feature asks for", m.FEATURES, _pair("q"), _grid(m.W_Q)),
        table("W_K: what each feature offers", m.FEATURES, _pair("k"), _grid(m.W_K)),
    )


def queries_and_keys():
    h = m.HEAD
    return side_by_side(
        table("Q = X W_Q: a query per word", m.WORDS, _pair("q"), _grid(h["Q"])),
        table("K = X W_K: a key per word", m.WORDS, _pair("k"), _grid(h["K"])),
    )


def scores():
    h = m.HEAD
    root = num(np.sqrt(m.D_HEAD))
    return side_by_side(
        table(
            "Q Kᵀ: row’s query · column’s key",
            m.WORDS,
            m.WORDS,
            _grid(h["dots"]),
            corner="query ↓ key →",
        ),
        table(
            f"Scores: Q Kᵀ ÷ √{m.D_HEAD} (÷ {root})",
            m.WORDS,
            m.WORDS,
            _grid(h["scores"], lambda x: num(x, 2)),
        ),
    )


def masked():
    h = m.HEAD
    cells = [
        [("−∞", "oh-masked") if np.isneginf(x) else num(x, 2) for x in row] for row in h["masked"]
    ]
    return table(
        "Scores after the causal mask: later words get −∞",
        m.WORDS,
        m.WORDS,
        cells,
        corner="query ↓ key →",
    )


def shares():
    """Each masked row through the softmax, in percent, with the row's total."""
    h = m.HEAD
    rows = []
    for i, row in enumerate(h["shares"]):
        cells = [percent(row[j]) if j <= i else (percent(0), "oh-masked") for j in range(len(row))]
        cells.append((percent(row.sum()), "oh-total"))
        rows.append(cells)
    return table(
        "Shares: the softmax of each masked row",
        m.WORDS,
        [*m.WORDS, "total"],
        rows,
        corner="query ↓ key →",
    )


def key_row():
    """The softmax of the last word's row, spelt out: score, e to the score, share."""
    h = m.HEAD
    i = m.QUERY_WORD
    s = h["masked"][i]
    e = np.exp(s)
    w = h["shares"][i]
    rows = [[num(s[j], 2), num(e[j], 2), percent(w[j])] for j in range(len(m.WORDS))]
    rows.append(["", num(e.sum(), 2), percent(w.sum())])
    return table(
        f"The softmax of the row of “{m.WORDS[i]}”",
        [*m.WORDS, "sum"],
        ["score s", "eˢ", "share = eˢ ÷ sum"],
        rows,
    )


def values():
    h = m.HEAD
    return side_by_side(
        table("W_V: what each feature hands over", m.FEATURES, _pair("v"), _grid(m.W_V)),
        table("V = X W_V: a value per word", m.WORDS, _pair("v"), _grid(h["V"])),
    )


def outputs():
    h = m.HEAD
    return table(
        "Outputs: each row of shares × V",
        m.WORDS,
        ["out₁", "out₂"],
        _grid(h["out"], lambda x: num(x, 2)),
    )


SLOTS = {
    "weights": weights,
    "qk": queries_and_keys,
    "scores": scores,
    "masked": masked,
    "shares": shares,
    "softmax": key_row,
    "values": values,
    "outputs": outputs,
}


def render(state=None, fid="words"):
    """The words as vectors; every later table as a slot."""
    state = merge(DEFAULTS, state)
    slots = {name: make() for name, make in SLOTS.items()}
    text = (
        f"{len(m.WORDS)} words, {m.D_MODEL} features each: "
        + "; ".join(
            f"“{w}” = [{', '.join(short(x) for x in row)}]"
            for w, row in zip(m.WORDS, m.X, strict=True)
        )
        + "."
    )
    return result(words_table(), state, slots=slots, summary=text)
