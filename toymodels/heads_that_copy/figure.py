"""Figure "One layer of SmolLM2": the 9 heads of a layer as maps, grouped by the keys and values
they share, on one of the exported texts.

State: text (an id of the export), layer (1-based; "" opens the layer where "it" looks most at
"cat"), token (index of the token whose row is marked in every head), sink ("show", or "hide":
leave out the first token and share each row's rest out again). The build pre-renders the
defaults; the browser calls this function under Pyodide, which fetches a text's maps on first use.
"""

import numpy as np

from ..page import kit
from ..page.html import attrs, esc, head_name, pct, quoted, whole
from . import heads as hc

DEFAULTS = {"text": "cat", "layer": "", "token": "", "sink": "show"}
SINK = (("show", "Show the first token"), ("hide", "Hide it and share the rest out again"))
CHOICES = {
    "text": tuple(t["id"] for t in hc.texts()),
    "layer": tuple(str(n) for n in range(1, hc.index()["model"]["layers"] + 1)),
    "sink": tuple(k for k, _ in SINK),
}
WORD_FIELD = "token"
LABELS = {
    "repeat": "Random tokens, said twice",
    "passage": "A passage that repeats a name",
}


def text_label(entry):
    """What the text choice says for an export text."""
    if entry["kind"] == "repeat":
        return f"{LABELS['repeat']} (seed {entry['seed']})"
    if entry["kind"] == "passage":
        return LABELS["passage"]
    return entry["text"]


def default_layer():
    """The layer of the head that sends most of "it" to "cat" in the first sentence (1-based)."""
    return link("cat", " it", " cat")[0] + 1


def link(tid, word_from, word_to):
    """(layer, head, share), 0-based: the head giving the last WORD_FROM the most weight on the
    first WORD_TO in the text TID."""
    d = hc.text(tid)
    i = len(d["pieces"]) - 1 - d["pieces"][::-1].index(word_from)
    j = d["pieces"].index(word_to)
    w = d["att"][:, :, i, j]
    layer, head = np.unravel_index(int(np.argmax(w)), w.shape)
    return int(layer), int(head), float(w[layer, head])


def default_token(entry):
    """The last " it" of a sentence; else the last token."""
    pieces = entry["pieces"]
    if " it" in pieces:
        return len(pieces) - 1 - pieces[::-1].index(" it")
    return len(pieces) - 1


def normalise(state):
    state = kit.merge(DEFAULTS, state)
    for key in ("text", "sink"):
        if state[key] not in CHOICES[key]:
            state[key] = DEFAULTS[key]
    if state["layer"] not in CHOICES["layer"]:
        state["layer"] = str(default_layer())
    entry = hc.text(state["text"])
    i = whole(state["token"], 4)
    if i is None or i >= len(entry["pieces"]) or str(i) != state["token"]:
        state["token"] = str(default_token(entry))
    return state, entry


def maps(entry, layer, hide):
    """The layer's maps as shown: (heads, T, T), or (heads, T-1, T-1) with the first token
    hidden and each row shared out again."""
    att = entry["att"][layer]
    return hc.hide_first(att) if hide else att


def row_line(pieces, row, selected, first):
    """Where the selected row's attention goes, in words: '“it” → “cat” 80.1%, “The” 10.0%'."""
    if not len(row) or row.sum() <= 0:
        return None
    order = np.argsort(-row, kind="stable")[:2]
    shares = kit.share  # rounded in tenths so a row adds up to 100.0%
    parts = [f"{quoted(hc.shown(pieces[first + j]))} {shares(row, j)}" for j in order if row[j] > 0]
    return ", ".join(parts)


def render(state=None, fid="copy-layer"):
    state, entry = normalise(state)
    layer, selected = int(state["layer"]) - 1, int(state["token"])
    hide = state["sink"] == "hide"
    model = hc.index()["model"]
    pieces = entry["pieces"]
    first = 1 if hide else 0
    shown = maps(entry, layer, hide)
    said = quoted(hc.shown(pieces[selected]))
    title = quoted(entry["text"]) if entry["kind"] != "repeat" else text_label(entry).lower()
    groups = []
    per_group = model["heads"] // model["kv_heads"]
    lines = []
    for g in range(model["kv_heads"]):
        items = []
        for h in range(g * per_group, (g + 1) * per_group):
            name = head_name(layer + 1, h + 1)
            visible = selected >= first
            row = shown[h][selected - first] if visible else np.zeros(0)
            line = row_line(pieces, row, selected, first) if visible else None
            if line is None:
                text = (
                    f"{said} is the first token, hidden."
                    if hide and selected == 0
                    else f"{said} gave all its attention to the first token."
                )
            else:
                text = f"{said} → {line}"
            lines.append((name, text))
            picture = _picture(
                shown[h],
                f"{name}, {len(shown[h])} tokens; the row of {said} is marked",
                selected - first if visible else None,
            )
            items.append(
                f'<li class="hc-head"{attrs(data_head=str(h + 1))}>'
                f'<span class="hc-name">{esc(name)}</span>{picture}'
                f'<span class="hc-row">{esc(text)}</span></li>'
            )
        groups.append(
            f'<section class="hc-group" aria-label="Query heads {g * per_group + 1} to '
            f'{(g + 1) * per_group}, sharing key/value head {g + 1}">'
            f'<h3 class="hc-kv">Key/value head {g + 1} · shared by H{g * per_group + 1}–'
            f"H{(g + 1) * per_group}</h3>"
            f'<ol class="hc-heads">{"".join(items)}</ol></section>'
        )
    texts = [(t["id"], text_label(t)) for t in hc.texts()]
    controls = kit.controls(
        kit.choices("text", texts, state["text"], label="Text", cls="mh-pick hc-texts"),
        _layer_control(fid, state, model["layers"]),
        kit.choices("sink", SINK, state["sink"], label="The first token"),
    )
    tokens = kit.token_buttons(
        [hc.shown(p) for p in pieces],
        selected,
        key="token",
        label="Tokens: choose one to mark its row in every head",
        fk="t",
        group="hc-tokens",
    )
    if hide:
        note = (
            "The first token is hidden: each row's remaining shares are divided by their sum, "
            "so they add up to 100% again and show where the rest of the attention goes."
        )
    else:
        sink = float(entry["att"][layer][:, hc.FIRST_ROW :, 0].mean()) if len(pieces) > 2 else 0
        note = (
            f"Every head as the model computed it: in layer {layer + 1}, rows from the third "
            f"token on give the first token {pct(round(sink * 1000))} of their attention on "
            "average."
        )
    summary = (
        f"Layer {layer + 1} of {model['layers']} on {title}: the row of {said} "
        f"is marked in all {model['heads']} heads; "
        + ("first token hidden, rows shared out again. " if hide else "first token shown. ")
        + f"{lines[0][0]}: {lines[0][1]}"
    )
    html = (
        controls
        + tokens
        + f'<p class="hc-note">{esc(note)}</p>'
        + f'<div class="hc-groups">{"".join(groups)}</div>'
        + kit.legend("masked (a later token)")
        + kit.summary_line(summary)
    )
    return kit.result(html, state, summary=summary)


def _picture(shares, label, row):
    """A head's map as the kit draws it, with ROW (counted in the map) marked. The kit keeps the
    maps it drew, so a tap on a token only moves the mark."""
    cell = max(3, min(7, 150 // max(1, len(shares))))
    return kit.heatmap_svg(shares, label=label, selected=row, cell=cell, cls="mh-mini hc-map")


def _layer_control(fid, state, layers):
    """The layer: ◀ and ▶ buttons around a slider, as in "Real heads"."""
    layer = int(state["layer"])

    def nudge(to, arrow, said, fk):
        markup = attrs(
            class_="rh-nudge",
            data_key="layer",
            data_value=str(to),
            data_fk=fk,
            disabled=to == layer,
        )
        return (
            f'<button type="button"{markup}><span aria-hidden="true">{arrow}</span>'
            f'<span class="sr">{said}</span></button>'
        )

    slider = kit.slider(
        fid,
        "layer",
        str(layer),
        label="Layer",
        low=1,
        high=layers,
        step=1,
        said=f"layer {layer} of {layers}",
        shown=f"{layer} of {layers}",
        cls="mh-slider hc-slider",
    )
    return (
        '<div class="hc-layer">'
        + nudge(max(1, layer - 1), "◀", "Previous layer", "layer-down")
        + slider
        + nudge(min(layers, layer + 1), "▶", "Next layer", "layer-up")
        + "</div>"
    )
