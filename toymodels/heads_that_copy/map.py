"""Figure "Every head at once": SmolLM2's 270 heads as a table of 30 layers by 9 heads, each
cell coloured by the chosen score; a tap opens that head.

State: score ("induction", "previous" or "sink"), head ("L19H7", 1-based, the head opened; ""
opens the strongest head for the score). The scores are the export's measures
(toymodels/heads_that_copy/heads.py), over every text; the opened head is drawn on the first
run of repeated random tokens, where induction shows.
"""

import re

from ..page import kit
from ..page.html import attrs, esc, head_name, level
from . import heads as hc

DEFAULTS = {"score": "induction", "head": ""}
SCORES = (
    ("induction", "Induction"),
    ("previous", "Previous token"),
    ("sink", "First token"),
)
CHOICES = {"score": tuple(k for k, _ in SCORES)}
SAID = {
    "induction": "induction score",
    "previous": "share on the token before",
    "sink": "share on the first token",
    "self": "share on itself",
}
HEAD = re.compile(r"[Ll]([0-9]{1,2})\s*[Hh]([0-9]{1,2})")


def head_value(layer, head):
    """What a cell sets, 0-based in: (18, 6) -> 'L19H7'."""
    return f"L{layer + 1}H{head + 1}"


def read_head(text):
    """'L19H7' (or 'L19 H7') -> (18, 6), 0-based; None for anything else or out of range."""
    m = HEAD.fullmatch(text.strip())
    model = hc.index()["model"]
    if not m:
        return None
    layer, head = int(m.group(1)) - 1, int(m.group(2)) - 1
    if 0 <= layer < model["layers"] and 0 <= head < model["heads"]:
        return layer, head
    return None


def normalise(state):
    state = kit.merge(DEFAULTS, state)
    if state["score"] not in CHOICES["score"]:
        state["score"] = DEFAULTS["score"]
    at = read_head(state["head"])
    if at is None:
        at = hc.strongest(state["score"], 1)[0]
    state["head"] = head_value(*at)
    return state, at


def _pct(p):
    return f"{100 * float(p):.0f}%"


_cells = {}  # score -> (its values, the table's cells with every head closed)


def _cell(L, H, values, top, opened):
    """Head (L, H)'s cell, 0-based: its colour, a star for the strongest, OPENED marked; its
    name (aria-label, not a hidden span: 270 positioned spans slowed every tap's layout) says
    the head and its score."""
    name = head_name(L + 1, H + 1)
    star = ", the strongest" if top == (L, H) else ""
    cls = level(values[L, H]) + (" top" if top == (L, H) else "") + (" open" if opened else "")
    cell = attrs(
        class_=cls,
        data_key="head",
        data_value=head_value(L, H),
        data_fk=f"m-{L + 1}-{H + 1}",
        tabindex="0" if opened else "-1",
        aria_label=f"{name}: {_pct(values[L, H])}{star}",
    )
    return f"<td{cell}></td>"


def render(state=None, fid="copy-map"):
    state, (layer, head) = normalise(state)
    scores = hc.scores()
    values = scores[state["score"]]
    model = hc.index()["model"]
    top = hc.strongest(state["score"], 1)[0]
    said = SAID[state["score"]]
    kept = _cells.get(state["score"])
    if kept is None or kept[0] is not values:  # every cell closed, drawn once: a tap opens one
        kept = _cells[state["score"]] = (
            values,
            [
                [_cell(L, H, values, top, False) for H in range(model["heads"])]
                for L in range(model["layers"])
            ],
        )
    rows = []
    for L in range(model["layers"]):
        cells = kept[1][L]
        if layer == L:
            cells = [*cells[:head], _cell(L, head, values, top, True), *cells[head + 1 :]]
        rows.append(
            f'<tr><th scope="row"><span class="sr">Layer </span>L{L + 1}</th>{"".join(cells)}</tr>'
        )
    cols = "".join(f'<th scope="col">H{H + 1}</th>' for H in range(model["heads"]))
    total = model["layers"] * model["heads"]
    table = (
        f'<div class="hc-scroll"><table class="hc-all" data-roving="grid">'
        f"<caption class=\"sr\">All {total} heads, a row per layer; a cell's colour is the head's "
        f"{esc(said)}; choose a head to open it</caption>"
        f"<thead><tr><td></td>{cols}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
    best = head_name(top[0] + 1, top[1] + 1)
    lead = (
        f"Strongest: {best}, {said} {_pct(values[top])} (marked ★). "
        f"Over all {total} heads the mean is {_pct(values.mean())}."
    )
    html = (
        kit.controls(kit.choices("score", SCORES, state["score"], label="Colour the heads by"))
        + f'<p class="hc-note">{esc(lead)}</p>'
        + f'<div class="hc-cols">{table}{_opened(layer, head)}</div>'
        + kit.legend(None)
    )
    name = head_name(layer + 1, head + 1)
    summary = (
        f"All {total} heads coloured by {said}; the strongest is {best} "
        f"({_pct(values[top])}). Opened: {name}, {said} {_pct(values[layer, head])}."
    )
    return kit.result(html, state, summary=summary)


def _opened(layer, head):
    """The opened head: its four scores, the heads it shares keys and values with, its map."""
    scores = hc.scores()
    run = hc.runs()[0]
    name = head_name(layer + 1, head + 1)
    P = run["period"]
    facts = "".join(
        f"<li>{esc(SAID[m].capitalize())}: {_pct(scores[m][layer, head])}</li>"
        for m in ("induction", "previous", "sink", "self")
    )
    others = [head_name(layer + 1, h + 1) for h in hc.siblings(head) if h != head]
    shares = (
        f"Shares its keys and values with {others[0]} and {others[1]} "
        f"(key/value head {hc.kv_head(head) + 1} of layer {layer + 1})."
    )
    picture = kit.heatmap_svg(
        hc.text(run["id"])["att"][layer, head],
        label=(
            f"{name} on {2 * P} random tokens said twice: an induction head lights a stripe "
            f"{P - 1} tokens below the diagonal"
        ),
        cell=4,
        cls="mh-mini hc-big",
    )
    return (
        f'<section class="hc-opened" aria-label="{esc(name)}, opened">'
        f"<h3>{esc(name)}</h3><ul>{facts}</ul><p>{esc(shares)}</p>"
        f"<p>On {hc.spoken(run['pieces'][0])} and {2 * P} random tokens said twice "
        f"(seed {run['seed']}):</p>{picture}</section>"
    )
