"""Figure "Real heads": every layer and head of a pretrained model, read from the exported maps.

State: model, sentence (ids from the index, or "own": the reader's own sentence, own, run
live by all-MiniLM-L6-v2 once the reader has loaded it, live.py), layer (1-based), token
("SENTENCE:INDEX" of the highlighted row), head ("" or the enlarged head of this layer, 1-based),
view ("layer" or "model") and enlarge ("L3H10", a one-shot request from the model
view: show layer 3 and enlarge head 10; links shared before it was renamed call it pick, and
links shared before the site named heads "L3 H10" write it "3.10", which still works).
The build pre-renders the defaults; the browser calls this same function under Pyodide,
which fetches a sentence's JSON on first use (toymodels.page.data).
"""

import re

import numpy as np

from ..models.minilm import live
from ..page import kit
from ..page.figure import merge, result
from ..page.html import attrs, esc, pct, quoted, state_button, whole
from ..page.kit.grid import FRAME, mark_row
from ..page.recent import Recent
from . import maps as rh

DEFAULTS = {
    "model": "",
    "sentence": "",
    "layer": "1",
    "token": "",
    "head": "",
    "view": "layer",
    "enlarge": "",
    "own": "",
}
ALIASES = {"pick": "enlarge"}  # the name of links shared before
# a head to enlarge: "L3H10" (what the page writes, also "L3 H10"), or "3.10" (older links)
ENLARGE = re.compile(r"(?:[Ll]([0-9]{1,4})\s*[Hh]([0-9]{1,4})|([0-9]{1,4})\.([0-9]{1,4}))")
VIEWS = (("layer", "One layer"), ("model", "All heads"))
CHOICES = {"view": tuple(key for key, _ in VIEWS)}
WORD_FIELD = "token"
SHORT = {
    "previous": "prev",
    "next": "next",
    "self": "self",
    "sink": "sink",
    "broad": "broad",
    "other": "other",
}


# where a kept drawing's maps mark the chosen token's row (no escaped text holds a "<")
MARK = "<!--row-->"
KEEP = 8  # the drawings of the last few sentences, layers and views kept
_kept = Recent(KEEP)  # (model, sentence, text, what) -> (the sentence's data, what was drawn)


def kept(data, what, draw):
    """DRAW() for a sentence, drawn once and kept while the sentence's data is the same object
    (a live sentence computed again is drawn again): the maps, labels and summaries of a
    sentence do not change when the reader taps a token, only the marked row does (MARK)."""
    key = (data["model"], data["id"], data["text"], what)
    if key in _kept and _kept[key][0] is not data:  # drawn from data since computed again
        del _kept[key]
    return _kept.keep(key, lambda: (data, draw()))[1]


def _tenths(p):
    return int(round(float(p) * 1000))


def normalise(state):
    """Fill in defaults and clamp every field to what the data has; -> kit.Normalised, with
    .model: the model's entry, .data: the sentence's data, .note: what the reader's own
    sentence needs said (own_sentence)."""
    state = merge(DEFAULTS, state, ALIASES, choices=CHOICES)
    models = rh.index()["models"]
    model = next((m for m in models if m["id"] == state["model"]), models[0])
    state["model"] = model["id"]
    ids = [s["id"] for s in model["sentences"]]
    state["own"] = state["own"][: live.KEEP_CHARS]
    data, note = own_sentence(state, model)
    if data is None and state["sentence"] not in ids + [live.SID]:
        state["sentence"] = ids[0]
    if data is None:
        shown = ids[0] if state["sentence"] == live.SID else state["sentence"]
        data = rh.sentence(model["id"], shown)
    L, H = model["layers"], model["heads"]
    if state["enlarge"]:
        layer, head = enlarge_request(state["enlarge"])
        if 1 <= layer <= L and 1 <= head <= H:
            state["layer"], state["head"], state["view"] = str(layer), str(head), "layer"
        state["enlarge"] = ""
    if not 1 <= (whole(state["layer"], 4) or 0) <= L:
        state["layer"] = DEFAULTS["layer"]
    if not 1 <= (whole(state["head"], 4) or 0) <= H:
        state["head"] = ""
    tokens = data["tokens"]
    sid, _, i = state["token"].rpartition(":")
    if not (sid == state["sentence"] and whole(i, 4) is not None and whole(i, 4) < len(tokens)):
        it = len(tokens) - 1 - tokens[::-1].index("it") if "it" in tokens else None
        i = str(min(1, len(tokens) - 1) if it is None else it)
    state["token"] = f"{state['sentence']}:{i}"
    return kit.Normalised(state, model=model, data=data, note=note)


def own_sentence(state, model):
    """-> (the reader's own sentence's data or None, a note for the reader or None): "load"
    when the model is not in the browser yet, else a message saying what is wrong."""
    if state["sentence"] != live.SID:
        return None, None
    if model["id"] != live.manifest()["model"]:
        state["sentence"] = ""
        return None, None
    said = live.problem(state["own"])
    if said:
        return None, said
    if not live.loaded():
        return None, "load"
    try:
        return live.sentence(state["own"]), None
    except ValueError as e:
        return None, str(e)


def enlarge_request(text):
    """'L3H10', 'L3 H10' or an old link's '3.10' -> (3, 10); anything else -> (0, 0)."""
    m = ENLARGE.fullmatch(text.strip())
    if not m:
        return 0, 0
    layer, head = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return int(layer), int(head)


def enlarge_value(layer, head):
    """What the page writes for a head to enlarge, 1-based: (3, 10) -> 'L3H10'."""
    return f"L{layer}H{head}"


def token_index(state):
    return int(state["token"].rpartition(":")[2])


def render(state=None, fid="real-heads"):
    """-> the figure's html, its slot "counts", state, error (always None) and summary."""
    read = normalise(state)
    state, model, data, note = read.state, read.model, read.data, read.note
    labels, per = kept(data, "labels", lambda: rh.head_labels(data))
    counts = rh.counts(labels)
    layer, selected = int(state["layer"]) - 1, token_index(state)
    head = int(state["head"]) - 1 if state["head"] else None
    parts = [_controls(state, model, fid)]
    if model["id"] == live.manifest()["model"]:
        parts.append(_own(state, data, note, fid))
    parts.append(_tokens(data, state["sentence"], selected))
    shown = f"{model['name']} on {quoted(data['text'])}"
    if state["view"] == "model":
        drawn = kept(data, "model", lambda: _model_view(data, model, labels, per))
        parts.append(drawn.replace(MARK, _sheet_mark(data, selected)))
        lines = " ".join(_count_line(n, count) for n, count in enumerate(counts))
        summary = f"{shown}, all {model['layers'] * model['heads']} heads. {lines}"
    else:
        line = _count_line(layer, counts[layer])
        parts.append(f'<p class="rh-layer-counts">{esc(line)}</p>')
        drawn = kept(
            data,
            ("layer", layer, head, fid),
            lambda: _layer_view(data, model, labels, per, layer, head, fid),
        )
        parts.append(drawn.replace(MARK, _mark(data, selected)))
        if head is not None:
            parts.append(_enlarged(data, state["sentence"], labels, per, layer, head, selected))
        summary = f"{shown}, layer {layer + 1} of {model['layers']}. {line}"
    parts.append(_legend(data["causal"]))
    slots = {"counts": counts_table(model, labels)}
    return result("".join(parts), state, slots=slots, summary=summary)


def download_tables(state, fid="real-heads"):
    """The numbers the maps draw as pictures, for the download's CSV (toymodels.page.download):
    the chosen token's row of every head shown (all of them in the model view, the layer's
    in the layer view) in tenths of a percent as the enlarged grid shows them, and each head's
    label and summary."""
    read = normalise(state)
    state, model, data = read.state, read.model, read.data
    labels, per = kept(data, "labels", lambda: rh.head_labels(data))
    selected, tokens = token_index(state), data["tokens"]
    if state["view"] == "model":
        heads = [(layer, h) for layer in range(model["layers"]) for h in range(model["heads"])]
    else:
        heads = [(int(state["layer"]) - 1, h) for h in range(model["heads"])]
    said = [quoted(token) for token in tokens]

    def cell(p, j):  # as the enlarged grid's cell says it
        if data["causal"] and j > selected:
            return f"{said[selected]} cannot see {said[j]}: masked"
        return f"{said[selected]} → {said[j]}: {pct(_tenths(p))}"

    looks = {
        "caption": f"Where {said[selected]} (token {selected}) looks in each head: a row is a "
        "head, a column a token looked at, a cell its share of the attention",
        "columns": tokens,
        "rows": [
            (
                rh.head_name(layer, h),
                [cell(p, j) for j, p in enumerate(data["att"][layer, h, selected])],
            )
            for layer, h in heads
        ],
    }
    labelled = {
        "caption": f"Each head's label and summary, {model['name']} on {quoted(data['text'])}",
        "columns": ["label", "summary"],
        "words": ["label", "summary"],
        "rows": [
            (
                rh.head_name(layer, h),
                [
                    rh.NAMES[labels[layer][h]],
                    rh.summary(data, layer, h, labels[layer][h], per[layer][h]),
                ],
            )
            for layer, h in heads
        ],
    }
    return [looks, labelled]


def _row(what, key, options, current, **group):
    """One row of the controls: a label for the eye, and a group of buttons (kit.choices) that
    sets state[KEY], named WHAT for the ear."""
    return (
        f'<div class="rh-row"><span class="rh-what" aria-hidden="true">{what}</span>'
        f"{kit.choices(key, options, current, label=what, **group)}</div>"
    )


def _nudge(state, model, down):
    """◀ or ▶: the layer before or after the one shown."""
    layer, last = int(state["layer"]), model["layers"]
    markup = attrs(
        class_="rh-nudge",
        data_key="layer",
        data_value=str(max(1, layer - 1) if down else min(last, layer + 1)),
        data_fk="layer-down" if down else "layer-up",
        disabled=layer == (1 if down else last),
    )
    arrow, said = ("◀", "Previous layer") if down else ("▶", "Next layer")
    return (
        f'<button type="button"{markup}><span aria-hidden="true">{arrow}</span>'
        f'<span class="sr">{said}</span></button>'
    )


def _controls(state, model, fid):
    models = rh.index()["models"]
    out = ['<div class="mh-controls rh-controls">']
    if len(models) > 1:
        options = [(m["id"], m["name"]) for m in models]
        out.append(_row("Model", "model", options, state["model"]))
    sentences = [(s["id"], s["text"]) for s in model["sentences"]]
    out.append(
        _row(
            "Sentence",
            "sentence",
            sentences,
            state["sentence"],
            cls="rh-sentences",
            fk="s-{}".format,
        )
    )
    steps = "".join(
        state_button(
            "layer",
            str(n),
            str(n),
            str(n) == state["layer"],
            cls="rh-step",
            aria_label=f"Layer {n}",
        )
        for n in range(1, model["layers"] + 1)
    )
    fid = esc(fid)
    out.append(
        f'<div class="rh-row rh-slider"><span class="rh-what" id="{fid}-layer">Layer</span>'
        f"{_nudge(state, model, down=True)}"
        f'<div class="rh-track" role="group" aria-labelledby="{fid}-layer" data-roving>'
        f"{steps}</div>"
        f"{_nudge(state, model, down=False)}"
        f'<span class="rh-of">of {model["layers"]}</span></div>'
    )
    every = f"All {model['layers'] * model['heads']} heads"
    views = [(view, text if view == "layer" else every) for view, text in VIEWS]
    out.append(_row("View", "view", views, state["view"]))
    out.append("</div>")
    return "".join(out)


def _own(state, data, note, fid):
    """The box for the reader's own sentence (a note without JavaScript), and what it says:
    the load button and its progress bar, a message, or how the model cut the sentence."""
    m = live.manifest()
    size = live.size_mb()
    if note == "load":
        said = (
            f'<div class="rh-own-load"><p>Your sentence is not shown yet: the maps below are a '
            f"curated sentence’s until the model is in your browser. This loads the model into "
            f"your browser: {size}.</p>"
            f'<button type="button" data-own-load>Load the model ({size})</button> '
            f'<progress data-own-progress max="{m["bytes"]}" value="0" hidden></progress> '
            f'<span class="rh-own-status" data-own-status role="status"></span></div>'
        )
    elif note:
        said = f'<p class="rh-own-msg" role="alert">{esc(note)}</p>'
    elif data["id"] == live.SID:
        said = (
            f'<p class="rh-own-msg">Your sentence, as the model sees it: '
            f"{len(data['tokens'])} pieces (“##” continues a word, [UNK] is a piece it "
            "does not know).</p>"
        )
    else:
        said = ""
    box = kit.own_model_attrs("rh-own", live.files(), live.WARM, live.MEMORY_MB)
    field = kit.text_box(fid, "own", state["own"], placeholder=f"up to {live.MAX_WORDS} words")
    return (
        f"<form{box}>"
        f'<label class="rh-what" for="{esc(fid)}-own">Your own sentence</label> '
        f'{field}<input type="hidden" name="sentence" value="{live.SID}"> '
        f'<button type="submit" data-fk="own-show">Show its heads</button>{said}</form>'
        f'<noscript><p class="rh-own-msg">Your own sentence: with JavaScript on, this figure '
        f"runs the model on a sentence you type ({size}, loaded only when you ask).</p>"
        "</noscript>"
    )


def _tokens(data, sid, selected):
    def cls(i):
        return "rh-token" + (" rh-special" if i in data["sinks"] and not data["causal"] else "")

    return kit.token_buttons(
        data["tokens"],
        selected,
        key="token",
        label="Tokens: choose one to highlight its row in every head",
        value=lambda i: f"{sid}:{i}",
        fk="t",
        cls=cls,
        group="rh-tokens",
    )


def _count_line(layer, count):
    parts = [f"{n} {rh.NAMES[label]}" for label, n in count.items() if n]
    return f"Layer {layer + 1}: " + ", ".join(parts) + "."


def _thumb(A, causal):
    """A head's map as a small SVG picture (the kit's heatmap): decoration inside a button
    named in words, and the map itself in the figure's download; its marked row is MARK."""
    svg = kit.heatmap_svg(A, causal=causal, cls="rh-thumb")
    return svg.replace(FRAME, MARK + FRAME, 1)


def _mark(data, selected):
    """What stands for MARK in a kept drawing: the chosen token's row, outlined, as the kit's
    heatmap_svg(…, selected=SELECTED) outlines it."""
    n = len(data["tokens"])
    return mark_row(FRAME, selected, n).removesuffix(FRAME)


def _layer_view(data, model, labels, per, layer, head, fid):
    items = []
    for h in range(model["heads"]):
        label = labels[layer][h]
        sid = f"{fid}-sum-{h + 1}"
        text = rh.summary(data, layer, h, label, per[layer][h])
        item = attrs(
            class_="rh-head" + (" is-open" if h == head else ""),
            data_head=str(h + 1),
            data_label=label,
        )
        button = attrs(
            class_="rh-pickhead",
            data_key="head",
            data_value="" if h == head else str(h + 1),
            data_fk=f"head-{h + 1}",
            aria_pressed=str(h == head).lower(),
            aria_describedby=sid,
        )
        items.append(
            f'<li{item}><button type="button"{button}>'
            f'<span class="rh-name">{esc(rh.head_name(layer, h))}</span> '
            f'<span class="rh-tag rh-{label}">{esc(rh.NAMES[label])}</span>'
            f"{_thumb(data['att'][layer, h], data['causal'])}</button>"
            f'<p class="rh-sum" id="{esc(sid)}">{esc(text)}</p></li>'
        )
    return (
        f'<ol class="rh-heads" aria-label="The {model["heads"]} heads of layer {layer + 1}; '
        f'choose one to enlarge it">{"".join(items)}</ol>'
    )


def _enlarged(data, sid, labels, per, layer, head, selected):
    A, tokens = data["att"][layer, head], data["tokens"]
    label = labels[layer][head]
    name = rh.head_name(layer, head)
    said = [quoted(token) for token in tokens]
    grid = kit.attention_grid(
        tokens,
        caption=f"{name}: a row is a token looking, a column a token looked at; "
        "darker cells get more of the row’s attention",
        shares=A,
        causal=data["causal"],
        selected=selected,
        key="token",
        value=lambda i: f"{sid}:{i}",
        fk="big",
        cls="rh-grid",
        rounded=[[_tenths(x) for x in row] for row in A],
    )
    weights = A[selected]
    top = [j for j in np.argsort(-weights, kind="stable")[:3] if weights[j] > 0]
    looks = ", ".join(f"{said[j]} {pct(_tenths(weights[j]))}" for j in top)
    close = attrs(data_key="head", data_value="", data_fk="close")
    return (
        f'<section class="rh-big" aria-label="{esc(name)}, enlarged">'
        f'<div class="rh-big-head"><h4 class="mh-head-title">{esc(name)} · '
        f"{esc(rh.NAMES[label])}</h4>"
        f'<button type="button"{close}>Close</button></div>'
        f'<p class="rh-sum">{esc(rh.summary(data, layer, head, label, per[layer][head]))}</p>'
        f'<p class="rh-looks">{esc(said[selected])} looks most at {esc(looks)}.</p>'
        f'<div class="rh-scroll">{grid}</div>'
        "</section>"
    )


def _sheet(n):
    """The geometry of the model view's one picture for N tokens: a map's box is one cell wider
    than the map and BAND cells taller, the room for its label beneath."""
    return {"cell": 7, "gap": 1, "band": max(2, round(0.35 * n))}


def _model_view(data, model, labels, per):
    """Every head's map in ONE picture (kit.heatmap_sheet: a path per shade for all 72, not an
    element per cell or per map), under a button per head laid over its map: its label on
    screen, its summary for screen readers. The chosen token's rows are MARK."""
    L, H, n = model["layers"], model["heads"], len(data["tokens"])
    picture = kit.heatmap_sheet(
        data["att"][:L, :H], causal=data["causal"], cls="rh-thumb rh-sheet", **_sheet(n)
    )
    picture = picture.replace(FRAME, MARK + FRAME, 1)
    rows = []
    for layer in range(L):
        cells = []  # a button per head over its map: its label, its summary for screen readers
        for h in range(H):
            label = labels[layer][h]
            text = rh.summary(data, layer, h, label, per[layer][h])
            button = attrs(
                class_="rh-mini",
                data_key="enlarge",
                data_value=enlarge_value(layer + 1, h + 1),
                data_fk=f"pick-{layer + 1}-{h + 1}",
                data_label=label,
                tabindex="0" if (layer, h) == (0, 0) else "-1",
            )
            cells.append(
                f'<button type="button"{button}>'
                f'<span class="rh-tag rh-{label}" aria-hidden="true">{esc(SHORT[label])}</span>'
                f'<span class="sr">{esc(text)} Show it enlarged.</span></button>'
            )
        rows.append(f'<div class="rh-sheet-row">{"".join(cells)}</div>')
    heads = "".join(f"<span>{h + 1}</span>" for h in range(H))
    names = "".join(f"<span>Layer {layer + 1}</span>" for layer in range(L))
    lines = "".join(
        f"<li>{esc(_count_line(layer, count))}</li>"
        for layer, count in enumerate(rh.counts(labels))
    )
    return (
        f'<div class="rh-scroll rh-modelwrap"><div class="rh-model">'
        f'<span class="rh-model-heads" aria-hidden="true">{heads}</span>'
        f'<span class="rh-model-layers" aria-hidden="true">{names}</span>'
        f'<div class="rh-model-maps">{picture}<div class="rh-sheet-over" role="group" '
        f'aria-label="All {L * H} heads, layer by layer; choose a head to enlarge it" '
        f"data-roving>{''.join(rows)}</div></div></div></div>"
        f'<ul class="rh-layer-lines">{lines}</ul>'
    )


def _sheet_mark(data, selected):
    """What stands for MARK in the model view's picture: the chosen token's row of every map."""
    n = len(data["tokens"])
    shape = data["att"].shape[:2]
    return kit.sheet_mark(shape, n, selected, **_sheet(n))


def _legend(causal):
    return kit.legend("masked (a later token)" if causal else None)


def counts_table(model, labels):
    """Head labels per layer for the sentence shown, one column per label."""
    counts = rh.counts(labels)
    cols = "".join(f'<th scope="col">{esc(rh.NAMES[label])}</th>' for label in rh.LABELS)
    rows = "".join(
        f'<tr><th scope="row">Layer {layer + 1}</th>'
        + "".join(f"<td>{count[label]}</td>" for label in rh.LABELS)
        + "</tr>"
        for layer, count in enumerate(counts)
    )
    total = "".join(f"<td>{sum(count[label] for count in counts)}</td>" for label in rh.LABELS)
    return (
        '<table class="mh-shares rh-counts"><caption>Head labels per layer, '
        f"{esc(model['name'])}, this sentence</caption>"
        f'<thead><tr><th scope="col">Layer</th>{cols}</tr></thead><tbody>{rows}</tbody>'
        f'<tfoot><tr><th scope="row">All</th>{total}</tr></tfoot></table>'
    )
