"""Pick one cell of a matrix, then change that weight: a matrix whose cells are controls, the
picked one lit, and a slider for its weight.

The state holds the whole matrix as text (FIELD: "0.0,0.0;4.0,0.0", rows split by ";"), the
picked cell (CELL: "1,0"), and what the slider last sent: a weight (VALUE) and the cell it was
for (AT), which the slider's form sends along with it. `read_weights` writes that weight into
its cell before anything else, so a tap on another cell, which sends the old weight and cell
along, changes nothing, and a move of the slider changes the cell it was drawn for. DEFAULTS
hold FIELD and CELL; AT and VALUE start empty ("").
"""

import numpy as np

from ..html import whole
from .controls import slider
from .state import NUMBER, decimals, number_text, read_number
from .tables import matrix


def read_weights(
    state, defaults, *, low, high, step, field="weights", cell="cell", value="weight", at="at"
):
    """The weights the reader edited, one cell at a time -> (the matrix, the picked (row,
    column)), with STATE (merged over DEFAULTS) put right: every weight on the slider's scale
    from LOW to HIGH in steps of STEP, a cell outside the matrix its default, and VALUE and AT
    the picked cell's, for the slider drawn next."""
    default = _matrix(defaults[field], None, low, high, step)
    weights = _matrix(state[field], default, low, high, step)
    picked = _cell(state[cell], weights.shape) or _cell(defaults[cell], weights.shape) or (0, 0)
    edited = _cell(state[at], weights.shape)
    if edited and NUMBER.fullmatch(str(state[value]).strip()):
        weights[edited] = read_number(
            state[value], low=low, high=high, step=step, default=weights[edited]
        )[0]
    state[field] = ";".join(",".join(number_text(x, step) for x in row) for row in weights)
    state[cell] = state[at] = f"{picked[0]},{picked[1]}"
    state[value] = number_text(weights[picked], step)
    return weights, picked


def weight_editor(
    fid,
    weights,
    picked,
    rows,
    cols,
    *,
    caption,
    label,
    low,
    high,
    step,
    cell="cell",
    value="weight",
    at="at",
):
    """The matrix WEIGHTS (labelled ROWS × COLS), each cell a control that picks it (sets
    CELL), the PICKED one lit, and a slider from LOW to HIGH in steps of STEP for its weight,
    named "LABEL (row, column)", which sends AT along: the pieces `read_weights` reads."""
    i, j = picked
    table = matrix(
        caption,
        rows,
        cols,
        weights,
        fk=f"{fid}-{cell}",
        places=decimals(step),
        lit=picked,
        key=cell,
    )
    knob = slider(
        fid,
        value,
        number_text(weights[picked], step),
        label=f"{label} ({rows[i]}, {cols[j]})",
        low=low,
        high=high,
        step=step,
        sends={at: f"{i},{j}"},
    )
    return table + knob


def _cell(text, shape):
    """'i,j' -> (i, j) inside SHAPE, else None."""
    parts = str(text).split(",")
    if len(parts) != 2:
        return None
    i, j = (whole(p.strip(), 3) for p in parts)
    return (i, j) if i is not None and j is not None and i < shape[0] and j < shape[1] else None


def _matrix(text, default, low, high, step):
    """'a,b;c,d' -> a float matrix on the slider's scale; with DEFAULT, of its shape (else
    DEFAULT itself), each entry that is no number on the scale DEFAULT's."""
    rows = [row.split(",") for row in str(text).split(";")]
    if default is None:  # the module's own DEFAULTS: a mistake there is the author's
        out = np.array([[float(x) for x in row] for row in rows])
        if out.ndim != 2:
            raise ValueError(f"weights {text!r} are not rows of equal length, e.g. '0,1;1,0'")
        return out
    if [len(row) for row in rows] != [default.shape[1]] * default.shape[0]:
        return default.copy()
    out = default.copy()
    for i, row in enumerate(rows):
        for j, x in enumerate(row):
            out[i, j] = read_number(x, low=low, high=high, step=step, default=default[i, j])[0]
    return out
