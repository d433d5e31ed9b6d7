"""The figure kit: the pieces every figure is made of, as Python functions returning markup.

An author thinks in "a grid of these weights over these words"; each function here writes that
piece once, already following the site's conventions, so that no figure writes them by hand:
every text given is escaped, controls carry the data-key / data-value / data-fk attributes that
templates/static/figures.js reads, groups of buttons are one Tab stop (data-roving), tables
have captions and scoped headers, grid cells carry the exact value as their name for screen
readers and hover (aria-label), shares are the colour classes l0 … l9 of `level` and hidden
cells the hatched class "masked". One change here changes every figure of the site.

    controls      sentence_form, choices, token_buttons, step_list, slider, controls
    grid          attention_grid, heatmap_svg, heatmap_sheet (many maps, one picture),
                  sheet_mark, legend, share
    tables        matrix, shares_table
    bars          bars, bar, bars_svg, scatter_svg (points on two axes)
    weights       weight_editor, read_weights (pick a cell of a matrix, change its weight)
    split         score_split (why a head looks there: one score split, any model's split)
    state         read_sentence, read_number, number_text, summary_line
    contract      merge (fills in DEFAULTS, clamps CHOICES), Normalised (what a figure's
                  normalise returns), result, failure (toymodels/page/figure.py)
"""

from ..figure import Normalised, failure, merge, result
from ..html import esc, whole
from .bars import bar, bars, bars_svg, scatter_svg
from .controls import (
    choices,
    controls,
    own_model_attrs,
    sentence_form,
    slider,
    step_list,
    text_box,
    token_buttons,
)
from .grid import attention_grid, heatmap_sheet, heatmap_svg, legend, share, sheet_mark
from .split import score_split
from .state import number_text, read_number, read_sentence, summary_line
from .tables import matrix, shares_table
from .weights import read_weights, weight_editor

__all__ = [
    "attention_grid",
    "bar",
    "bars",
    "bars_svg",
    "choices",
    "controls",
    "esc",
    "failure",
    "heatmap_sheet",
    "heatmap_svg",
    "sheet_mark",
    "legend",
    "matrix",
    "merge",
    "Normalised",
    "number_text",
    "own_model_attrs",
    "read_number",
    "read_sentence",
    "read_weights",
    "result",
    "scatter_svg",
    "score_split",
    "sentence_form",
    "share",
    "shares_table",
    "slider",
    "step_list",
    "summary_line",
    "text_box",
    "token_buttons",
    "weight_editor",
    "whole",
]
