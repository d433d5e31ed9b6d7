"""Figure "Split, attend, concatenate, mix": a five-step stepper over real matrices, and
a slot where the reader edits both heads' W^Q and W^K (or picks a preset)."""

import re

import numpy as np

from ..page import kit
from ..page.figure import failure, merge, result
from ..page.html import esc, num, pct, quoted, spoken, symbols, tenths
from . import model as sa

STEPS = (
    ("project", "Project"),
    ("split", "Split"),
    ("attend", "Attend"),
    ("concat", "Concatenate"),
    ("mix", "Mix"),
)
PRESET_NAMES = {
    "designed": "As designed",
    "swapped": "Heads swapped",
    "zeros": "All zeros",
    "custom": "Your numbers",
}
# weights: the reader's numbers for preset "custom", comma-separated in FIELDS' order;
# output_cell: "ROW,COLUMN" of the output cell whose sum the mix step spells out
DEFAULTS = {"step": "attend", "preset": "designed", "weights": "", "output_cell": ""}
ALIASES = {"w": "weights", "cell": "output_cell"}  # the names of links shared before
CHOICES = {"step": tuple(k for k, _ in STEPS), "preset": tuple(PRESET_NAMES)}
# every number the editor shows: (head, "q" or "k", row, column)
FIELDS = [
    (head, which, row, col)
    for head in range(sa.N_HEAD)
    for which in "qk"
    for row in range(sa.D_MODEL)
    for col in range(sa.D_HEAD)
]
LIMIT = 20.0


def _field(head, which, row, col):
    """The editor's input for one number: 'q1_00' is head 1's W_Q, row 0, column 0."""
    return f"{which}{head + 1}_{row}{col}"


EDITS = {_field(*f): None for f in FIELDS}  # the editor's inputs, folded into "weights"


def _unflat(values):
    heads = [
        [np.zeros((sa.D_MODEL, sa.D_HEAD)), np.zeros((sa.D_MODEL, sa.D_HEAD))]
        for _ in range(sa.N_HEAD)
    ]
    for (head, which, row, col), value in zip(FIELDS, values, strict=True):
        heads[head][0 if which == "q" else 1][row, col] = value
    return heads


def _allowed(values):
    return all(np.isfinite(value) and abs(value) <= LIMIT for value in values)


def _custom(text):
    """The numbers of a 'weights' field, or None if it does not hold one allowed number each."""
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        return None
    return values if len(values) == len(FIELDS) and _allowed(values) else None


def normalise(state):
    """-> kit.Normalised, with .heads: the heads' weights (None with an error). Edited fields
    (q1_00 …) fold into one compact 'weights' field."""
    state = merge({**DEFAULTS, **EDITS}, state, ALIASES, choices=CHOICES)
    edits = [state.pop(name) for name in EDITS]
    if any(edit is not None for edit in edits):
        try:
            values = [float(edit or 0) for edit in edits]
        except ValueError:
            error = "Each weight must be a number, such as 1.5 or −2."
            return kit.Normalised(state, error, heads=None)
        if not _allowed(values):
            error = f"Keep each weight between −{LIMIT:g} and {LIMIT:g}."
            return kit.Normalised(state, error, heads=None)
        state["weights"], state["preset"] = ",".join(f"{v:g}" for v in values), "custom"
    values = _custom(state["weights"]) if state["preset"] == "custom" else None
    if values is None:
        state["preset"] = "designed" if state["preset"] == "custom" else state["preset"]
        state["weights"] = ""
        return kit.Normalised(state, heads=sa.PRESETS[state["preset"]])
    return kit.Normalised(state, heads=_unflat(values))


def _output_cell(state, T):
    """The chosen output cell as (row, column), or None; the state keeps only a real one."""
    text = state["output_cell"]
    cell = None
    if re.fullmatch(r"[0-9]{1,2},[0-9]{1,2}", text):
        row, col = (int(x) for x in text.split(","))
        cell = (row, col) if row < T and col < sa.D_MODEL else None
    state["output_cell"] = f"{cell[0]},{cell[1]}" if cell else ""
    return cell


def render(state=None, fid="split-attend"):
    read = normalise(state)
    if read.error:
        return failure(read.state, read.error)
    state, heads = read.state, read.heads
    words = sa.SENTENCE.split()
    run = sa.forward(words, heads)
    T = len(words)
    cell = _output_cell(state, T)
    body = {
        "project": _project,
        "split": _split,
        "attend": _attend,
        "concat": _concat,
        "mix": _mix,
    }[state["step"]](run, words, cell)
    html = kit.step_list(STEPS, state["step"]) + f'<div class="mh-stage">{body}</div>'
    slots = {"edit": _editor(state, heads)}
    return result(html, state, slots=slots, summary=_summary(run, words))


def _summary(run, words):
    T = len(words)
    last_the = T - 1 - [word.lower() for word in words][::-1].index("the")
    row = run["weights"][0, last_the]
    top = int(np.argmax(row))
    to_the = pct(tenths(run["weights"][1, -1])[0])
    return (
        f"Head 1 sends the last “the” {pct(tenths(row[: last_the + 1])[top])} to "
        f"{quoted(words[top])}; head 2 sends “mat” {to_the} to “The”."
    )


def _table(caption, rows, cols, M, *, row_sel=None, col_sel=None, **rest):
    """A numeric matrix with its shape in the caption (the kit's matrix); ROW_SEL and COL_SEL
    highlight a row, a column or one cell."""
    return kit.matrix(caption, rows, cols, M, shape=True, lit=(row_sel, col_sel), **rest)


def _by_head(j):
    return f"head{j // sa.D_HEAD + 1}"


def _of_head(head):
    return lambda j: f"head{head + 1}"


DIMS = [f"d{j + 1}" for j in range(sa.D_MODEL)]


def _project(run, words, cell):
    return (
        '<p class="mh-out">Each word’s four numbers are multiplied by three 4 × 4 matrices. '
        "The result is still four numbers per word; nothing is split yet.</p>"
        '<div class="mh-mix">'
        + _table("Q = X · W_Q", words, DIMS, run["Q"], col_class=_by_head)
        + _table("K = X · W_K", words, DIMS, run["K"], col_class=_by_head)
        + _table("V = X · W_V", words, DIMS, run["V"], col_class=_by_head)
        + "</div>"
    )


def _split(run, words, cell):
    T, H, K = len(words), sa.N_HEAD, sa.D_HEAD
    parts = "".join(
        _table(
            f"q for head {head + 1}", words, ("1", "2"), run["q"][head], col_class=_of_head(head)
        )
        for head in range(H)
    )
    query = _table("Q", words, DIMS, run["Q"], col_class=_by_head)
    return (
        f'<p class="mh-out">Q ({T} × {sa.D_MODEL}) is reshaped to ({T} × {H} × {K}) '
        f"and transposed to ({H} × {T} × {K}): the same numbers, regrouped so that each head "
        f"gets its own {K} columns. No arithmetic happens. K and V are split the same way.</p>"
        f'<div class="mh-mix">{query}{parts}</div>'
    )


def _attend(run, words, cell):
    K = sa.D_HEAD
    grids = []
    for head in range(sa.N_HEAD):
        output = _table(
            f"Head {head + 1} output = weights · v",
            words,
            ("1", "2"),
            run["out"][head],
            col_class=_of_head(head),
        )
        grid = kit.attention_grid(
            words,
            caption=f"Head {head + 1}: softmax(q·kᵀ / √{K}) with the causal mask",
            shares=run["weights"][head],
            key=None,
            head=str(head + 1),
        )
        grids.append(
            f'<section class="mh-head"><h3 class="mh-head-title">Head {head + 1}</h3>'
            f"{grid}{output}</section>"
        )
    return (
        f'<p class="mh-out">In each head separately: scores q·kᵀ / √{K}, the causal mask, '
        "a softmax per row, then a weighted sum of the values.</p>"
        f'<div class="mh-heads">{"".join(grids)}</div>'
    )


def _concat(run, words, cell):
    return (
        '<p class="mh-out">The two heads’ outputs are set side by side again: '
        f"a transpose and a reshape back to {len(words)} × {sa.D_MODEL}, the inverse of the split."
        "</p>" + _table("Concatenated heads C", words, DIMS, run["C"], col_class=_by_head)
    )


def _mix(run, words, cell):
    row, col = cell if cell else (None, None)  # the output's row (a word) and column
    if cell:
        C, WO = run["C"], run["WO"]
        terms = " + ".join(f"{num(C[row, j])}×{num(WO[j, col])}" for j in range(sa.D_MODEL))
        word = esc(quoted(words[row]))
        note = (
            f'<p class="mh-out" role="status">Output ({word}, d{col + 1}) = row {word} of C · '
            f"column d{col + 1} of W<sup>O</sup>: {terms} = {num(run['Y'][row, col])}. "
            "Its first two terms come from head 1, the last two from head 2.</p>"
        )
    else:
        note = (
            '<p class="mh-out">Choose a cell of the output to see which numbers of which head '
            "fed it.</p>"
        )
    output = _table(
        "Output Y = C · W_O",
        words,
        DIMS,
        run["Y"],
        row_sel=row,
        col_sel=col,
        key="output_cell",
        fk="y",
    )
    return (
        f'{note}<div class="mh-mix">{output}'
        + _table("C", words, DIMS, run["C"], col_class=_by_head, row_sel=row)
        + _table("W_O", DIMS, DIMS, run["WO"], col_sel=col)
        + "</div>"
    )


def _weight_input(head, which, label, row, col, value):
    name = _field(head, which, row, col)
    described = f"Head {head + 1} {spoken(label)} row {sa.FEATURES[row]} column {col + 1}"
    return (
        f'<td><input type="number" step="0.5" min="-{LIMIT:g}" max="{LIMIT:g}" name="{name}" '
        f'data-fk="{name}" value="{float(value):g}" aria-label="{described}"></td>'
    )


def _editor(state, heads):
    presets = [(key, name) for key, name in PRESET_NAMES.items() if key != "custom"]
    panels = []
    for head in range(sa.N_HEAD):
        tables = []
        for which, label in (("q", "W_Q"), ("k", "W_K")):
            M = heads[head][0 if which == "q" else 1]
            rows = "".join(
                f'<tr><th scope="row">{sa.FEATURES[row]}</th>'
                + "".join(
                    _weight_input(head, which, label, row, col, M[row][col])
                    for col in range(sa.D_HEAD)
                )
                + "</tr>"
                for row in range(sa.D_MODEL)
            )
            tables.append(
                '<table class="mh-matrix mh-weights">'
                f"<caption>Head {head + 1}: {symbols(label)} (4 × 2)</caption>"
                '<thead><tr><td></td><th scope="col">1</th><th scope="col">2</th></tr>'
                f"</thead><tbody>{rows}</tbody></table>"
            )
        panels.append(
            f'<fieldset class="mh-head head{head + 1}"><legend>Head {head + 1}</legend>'
            f"{''.join(tables)}</fieldset>"
        )
    return (
        kit.choices("preset", presets, state["preset"], label="Presets")
        + '<form class="mh-editor" data-state-form="live">'
        f'<div class="mh-heads">{"".join(panels)}</div>'
        '<p class="mh-help">Change a number and press Tab or Enter: both grids and the output '
        f"recompute. Now showing: {esc(PRESET_NAMES[state['preset']])}.</p>"
        '<button type="submit" data-fk="apply">Apply</button></form>'
    )
