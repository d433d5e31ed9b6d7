"""Figure "Every head at once": SmolLM2's 270 heads as a table of 30 layers by 9 heads, each
cell coloured by the chosen score; a tap opens that head.

State: score ("induction", "previous" or "sink"; "self" too on the reader's text), head
("L19H7", 1-based, the head opened; "" opens the strongest head for the score), text ("" for
the export's texts, "own" for the reader's text, own, run live once the model is loaded, as
in Figure 1), repeat ("on": the reader's text said twice, for induction). The scores are the
export's measures (toymodels/heads_that_copy/heads.py), over every text, or the same measures
on the reader's text (by the live causal model open: SmolLM2 or the reader's own file, whose
every head the map then shows); the opened head is drawn on the first run of repeated random tokens,
where induction shows, or on the reader's text.
"""

import re

import numpy as np

from ..models.causal import live
from ..page import kit
from ..page.html import attrs, esc, head_name, level, state_button
from . import heads as hc

DEFAULTS = {"score": "induction", "head": "", "text": "", "own": "", "repeat": ""}
SCORES = (
    ("induction", "Induction"),
    ("previous", "Previous token"),
    ("sink", "First token"),
)
OWN_SCORES = (("sink", "First token"), ("previous", "Previous token"), ("self", "Itself"))
CHOICES = {"score": tuple(k for k, _ in SCORES), "text": ("", "own")}
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


def read_head(text, shape=None):
    """'L19H7' (or 'L19 H7') -> (18, 6), 0-based; None for anything else or out of range (of
    SHAPE, (layers, heads), else SmolLM2's)."""
    m = HEAD.fullmatch(text.strip())
    model = hc.index()["model"]
    layers, heads = shape or (model["layers"], model["heads"])
    if not m:
        return None
    layer, head = int(m.group(1)) - 1, int(m.group(2)) - 1
    if 0 <= layer < layers and 0 <= head < heads:
        return layer, head
    return None


def normalise(state):
    """-> kit.Normalised, with .at: the opened head (layer, head), .own: the reader's text (see
    own_scores), and .score: the score shown. The state keeps a score of SCORES while it is
    not offered (induction, on the reader's text not said twice), and the map shows the first
    one offered: so "Repeat it" brings induction back however soon it is pressed after the
    text."""
    state = kit.merge(DEFAULTS, state)
    if state["text"] != live.SID:
        state["text"] = state["repeat"] = ""
    state["repeat"] = "on" if state["repeat"] == "on" else ""
    own = own_scores(state)
    offered = dict(scores_offered(state, own))
    if state["score"] not in offered and state["score"] not in CHOICES["score"]:
        state["score"] = next(iter(offered))
    score = state["score"] if state["score"] in offered else next(iter(offered))
    at = read_head(state["head"], own["scores"][score].shape if own["scores"] else None)
    if at is None:
        at = hc.ranked(own["scores"][score], 1)[0] if own["scores"] else None
        at = at or hc.strongest(score, 1)[0]
    state["head"] = head_value(*at)
    return kit.Normalised(state, at=at, own=own, score=score)


def scores_offered(state, own):
    """The scores the reader may colour the map by: induction only on a text said twice."""
    if own["scores"] is None:
        return SCORES
    return (SCORES[:1] if state["repeat"] else ()) + OWN_SCORES


def own_ids(text, repeat):
    """The reader's text as token ids, said twice with REPEAT (its first half of the token
    limit, twice): -> (ids, the period P or None, notes)."""
    ids, cut = live.encode(text)
    notes = [live.cut_note(ids)] if cut and not repeat else []
    if not repeat:
        return ids, None, notes
    half = live.MAX_TOKENS // 2
    if len(ids) > half:
        ids = ids[:half]
        notes.append(
            f"Said twice, a text may have up to {half} tokens: its first {half} are said twice."
        )
    return ids + ids, len(ids), notes


def own_scores(state):
    """The reader's text in the map: {note, notes, run, period, scores ({measure: (L, H)} once
    every layer is computed, else None), more}."""
    out = {"note": None, "notes": [], "run": None, "period": None, "scores": None, "more": False}
    if state["text"] != live.SID:
        return out
    state["own"] = state["own"][: live.MAX_CHARS + 1]
    text, out["notes"] = live.tidy(state["own"])
    said = "load" if not live.loaded() else live.problem(text)
    if said:
        out["note"] = said
        return out
    try:
        ids, out["period"], notes = own_ids(text, state["repeat"])
        out["notes"] += notes
        r = live.run(ids)
        r.advance()
    except MemoryError:
        out["note"] = live.MEMORY
        return out
    out["run"], out["more"] = r, not r.complete
    if len(ids) <= hc.FIRST_ROW:
        out["note"] = (
            f"The scores read the rows from the third token on: your text has {len(ids)} "
            "token" + ("s" if len(ids) > 1 else "") + ". Type a few more words."
        )
        return out
    if r.complete:
        P = out["period"]
        out["scores"] = _measured(r, P)
        if P:
            best = r.best_after(range(2 * P - 1))
            out["more"] = len(best) < 2 * P - 1
            out["copied"] = [
                sum(best.get(i) == ids[i + 1] for i in range(first, first + P - 1))
                for first in (0, P)
            ]
    return out


def _measured(r, period):
    """The measures of every head on the complete run R, kept with it (a tap redraws the map
    from the same arrays, so the kit's drawn cells are reused)."""
    kept = r.__dict__.setdefault("measured", {})
    if period not in kept:
        maps = r.maps.astype(np.float64)
        kept[period] = hc.link_shares(maps)
        if period:
            kept[period]["induction"] = hc.induction(maps, period)
    return kept[period]


def copying_line(own):
    """How often the model's likeliest next token is the right one, on each copy."""
    P, r = own["period"], own["run"]
    if not own.get("copied") or own["more"]:
        done = len(r.best) if r else 0
        return f"Copying: the model’s guesses on your text said twice, {done} of {2 * P - 1} read."
    first, second = own["copied"]
    return (
        f"Copying: the model’s likeliest next token is the right one at {second} of the "
        f"{P - 1} places of the second copy, against {first} of {P - 1} on the first, where "
        "it can only guess."
    )


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
    read = normalise(state)
    state, (layer, head), own, score = read.state, read.at, read.own, read.score
    scores = own["scores"] or hc.scores()
    values = scores[score]
    model = dict(zip(("layers", "heads"), values.shape, strict=True))
    top = hc.ranked(values, 1)[0]
    said = SAID[score]
    kept = _cells.get(score)
    if kept is None or kept[0] is not values:  # every cell closed, drawn once: a tap opens one
        kept = _cells[score] = (
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
    offered = scores_offered(state, own)
    controls = kit.controls(
        _texts(state),
        _own_box(state, own, fid) if state["text"] == live.SID else "",
        kit.choices("score", offered, score, label="Colour the heads by"),
    )
    on = "your text" if own["scores"] else "the curated texts"
    name = head_name(layer + 1, head + 1)
    summary = (
        f"All {total} heads coloured by {said} on {on}; the strongest is {best} "
        f"({_pct(values[top])}). Opened: {name}, {said} {_pct(values[layer, head])}."
    )
    if state["text"] == live.SID and not own["scores"]:
        r = own["run"]
        if r is not None and not r.complete:
            line = f"Computing your text: {r.done} of {r.llama.n_layer} layers ready."
            lead = f"{line} Until then the map shows the curated texts’ scores. {lead}"
            summary = f"{line} {summary}"
    if own["scores"] and own["period"]:
        lead = f"{lead} {copying_line(own)}"
    opened = _opened_own(layer, head, own) if own["scores"] else _opened(layer, head)
    html = (
        controls
        + f'<p class="hc-note">{esc(lead)}</p>'
        + f'<div class="hc-cols">{table}{opened}</div>'
        + kit.legend(None)
    )
    return kit.result(html, state, summary=summary, more=own["more"])


def _texts(state):
    options = (("", "The curated texts"), (live.SID, "Your own text"))
    return kit.choices("text", options, state["text"], label="Scores measured on")


def _own_box(state, own, fid):
    """The reader's text box (Figure 1's, with its load button), and Repeat it."""
    from .figure import own_form  # Figure 1 imports nothing from here

    repeat = state_button(
        "repeat",
        "" if state["repeat"] else "on",
        "Repeat it",
        bool(state["repeat"]),
        fk="repeat",
    )
    shown = dict(own, run=own["run"])
    return own_form(state, shown, fid) + f'<div class="hc-repeat">{repeat}</div>'


def _opened_own(layer, head, own):
    """The opened head on the reader's text: its scores there and its map."""
    r = own["run"]
    name = head_name(layer + 1, head + 1)
    facts = "".join(
        f"<li>{esc(SAID[m].capitalize())}: {_pct(v[layer, head])}</li>"
        for m, v in own["scores"].items()
    )
    T = len(r.ids)
    said = "your text said twice" if own["period"] else "your text"
    picture = kit.heatmap_svg(
        r.maps[layer, head].astype(np.float64),
        label=f"{name} on {said}, {T} tokens",
        cell=max(3, min(6, 240 // T)),
        cls="mh-mini hc-big",
    )
    return (
        f'<section class="hc-opened" aria-label="{esc(name)}, opened">'
        f"<h3>{esc(name)}</h3><ul>{facts}</ul><p>On {esc(said)} ({T} tokens):</p>"
        f"{picture}</section>"
    )


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
            f"{name} on {P} random tokens said twice: an induction head lights a stripe "
            f"{P - 1} tokens below the diagonal"
        ),
        cell=4,
        cls="mh-mini hc-big",
    )
    return (
        f'<section class="hc-opened" aria-label="{esc(name)}, opened">'
        f"<h3>{esc(name)}</h3><ul>{facts}</ul><p>{esc(shares)}</p>"
        f"<p>On {hc.spoken(run['pieces'][0])} and {P} random tokens said twice "
        f"(seed {run['seed']}):</p>{picture}</section>"
    )
