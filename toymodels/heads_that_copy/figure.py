"""Figure "One layer of SmolLM2": the 9 heads of a layer as maps, grouped by the keys and values
they share, on one of the exported texts or on the reader's own text.

State: text (an id of the export, or "own": the reader's text, own, run live by the model once
the reader has loaded it, live.py), layer (1-based; "" opens the layer where "it" looks most at
"cat"), token (index of the token whose row is marked in every head), sink ("show", or "hide":
leave out the first token and share each row's rest out again); for the reader's text, write
("on" while the model writes on, one token per call), how ("greedy" or "sample"), temp (the
sampling temperature) and seed. The build pre-renders the defaults; the browser calls this
function under Pyodide, which fetches a text's maps on first use.

The reader's text runs on the live causal model open (toymodels/models/causal.py): SmolLM2,
or the reader's own GGUF file, whose layers and heads the figure then shows; a file of GPT-2
small's shape gets the source's sentence and claims checked on it (source.py). It is computed a
few layers per call (live.Run): until every layer is done the answer says `more`, the page
draws it and calls again, and the figure shows the last layer ready. The marked token's
next-token guesses and the writing on are drawn here, beside the maps they come from: a
written token's row appears in every head of the layer shown.
"""

import numpy as np

from ..models import causal
from ..models.causal import live
from ..models.smollm2 import live as smollm2
from ..page import kit
from ..page.html import attrs, esc, head_name, pct, quoted, whole
from . import heads as hc
from . import source

DEFAULTS = {
    "text": "cat",
    "layer": "",
    "token": "",
    "sink": "show",
    "own": "",
    "write": "",
    "how": "greedy",
    "temp": "0.8",
    "seed": "1",
}
SINK = (("show", "Show the first token"), ("hide", "Hide it and share the rest out again"))
HOW = (("greedy", "the likeliest token"), ("sample", "a token drawn at random"))
TEMPS = ("0.5", "0.8", "1", "1.5")
CHOICES = {
    "text": tuple(t["id"] for t in hc.texts()) + (live.SID,),
    "layer": tuple(str(n) for n in range(1, hc.index()["model"]["layers"] + 1)),
    "sink": tuple(k for k, _ in SINK),
}
WORD_FIELD = "token"
# shown inside an LMS only (copyheads.css), where "Your own text" is not offered: the prose
# asks the reader to choose it
LMS_NOTE = (
    '<p class="hc-lms-note">A course package leaves the live model out: “Your own text” '
    "works on the site itself.</p>"
)
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
    """The last " it" of a curated sentence; else (the reader's own text too) the last token,
    whose guesses are the model's next word."""
    pieces = entry["pieces"]
    if " it" in pieces and entry.get("kind") != "own":
        return len(pieces) - 1 - pieces[::-1].index(" it")
    return len(pieces) - 1


def normalise(state):
    """-> kit.Normalised, with .entry: the text's pieces, att (layers, heads, T, T), text and
    kind, and .own: what the reader's text needs said and done (see own_text)."""
    choices = CHOICES | {"how": tuple(dict(HOW)), "temp": TEMPS}
    reader = causal.shape() if kit.merge(DEFAULTS, state)["text"] == live.SID else None
    if reader:  # the reader's own model file: its layers
        choices["layer"] = tuple(str(n) for n in range(1, reader[0] + 1))
    state = kit.merge(DEFAULTS, state, choices=choices)
    state["layer"] = state["layer"] or str(min(default_layer(), reader[0] if reader else 99))
    seed = whole(state["seed"], 4)
    state["seed"] = DEFAULTS["seed"] if seed is None else str(seed)
    own = own_text(state)
    curated = DEFAULTS["text"] if state["text"] == live.SID else state["text"]
    entry = own["entry"] or hc.text(curated)
    i = whole(state["token"], 4)
    if state["text"] == live.SID and not own["entry"]:
        # the reader's text is not read yet (no model): the token a link asked for waits for it,
        # and the curated text shown meanwhile marks its own
        state["token"] = "" if i is None or str(i) != state["token"] else state["token"]
    elif i is None or i >= len(entry["pieces"]) or str(i) != state["token"]:
        state["token"] = str(default_token(entry))
    return kit.Normalised(state, entry=entry, own=own)


def own_text(state):
    """The reader's own text (state["text"] == "own"), run a piece further: -> {note: "load"
    while the model is not in the browser, or a message that keeps the text from it; notes:
    what was done to the text (cut, cleaned, written on); run: its live.Run; entry: its pieces
    and maps as an export text's; more: whether the page should call again}. Writing on adds
    one token to state["own"] per call."""
    out = {"note": None, "notes": [], "run": None, "entry": None, "more": False}
    state["own"] = state["own"][: live.MAX_CHARS + 1]
    if state["text"] != live.SID:
        state["write"] = ""
        return out
    text, out["notes"] = live.tidy(state["own"])
    said = "load" if not live.loaded() else live.problem(text)
    if said:
        out["note"], state["write"] = said, ""
        return out
    try:
        ids, cut = live.encode(text)
        if cut:
            out["notes"].append(live.cut_note(ids))
        r = live.run(ids)
        if not r.complete:
            r.advance()
        elif state["write"] == "on":
            r = _write(state, r, out["notes"])
        elif not r.guessed():
            r.guess_all()
    except MemoryError:
        out["note"], state["write"] = live.MEMORY, ""
        return out
    if len(r.ids) == 1:
        out["notes"].append(live.ONE)
    out["run"] = r
    out["more"] = not r.complete or state["write"] == "on" or not r.guessed()
    out["entry"] = {
        "kind": "own",
        "text": live.text_of(r.ids),
        "pieces": [live.piece(i) for i in r.ids],
        "att": r.maps,
    }
    return out


def _write(state, r, notes):
    """One more token after the complete run R, as the state asks: -> the new text's run;
    writing stops (state["write"] = "") at the token limit, the model's end token or a token
    that writes a control character (which tidy would take out of the text)."""
    if len(r.ids) >= live.MAX_TOKENS:
        notes.append(live.FULL)
        state["write"] = ""
        return r
    nxt = live.choose(r, state["how"], float(state["temp"]), int(state["seed"]))
    if live.ends(nxt):
        notes.append(live.FINISHED)
        state["write"] = ""
        return r
    text = live.text_of(r.ids + [nxt])
    if live.tidy(text)[0] != text:  # tidied away, the token would be chosen again and again
        notes.append(live.CONTROL)
        state["write"] = ""
        return r
    r = live.extend(r, nxt)
    r.top(len(r.ids) - 1)  # the new token's guesses: the logits the next token comes from
    state["own"] = live.text_of(r.ids)
    state["token"] = str(len(r.ids) - 1)
    if len(r.ids) >= live.MAX_TOKENS:
        state["write"] = ""
        notes.append(live.FULL)
    return r


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


def _groups(heads, kv_heads):
    """The layer's heads in the boxes drawn: [(head indices, title, label)], a box per
    key/value head that several query heads share (SmolLM2's 3 of 3), or, in a model where
    every head has keys and values of its own (GPT-2), every head in one box."""
    if kv_heads == heads:
        title = f"{heads} heads, each with its own keys and values"
        return [(range(heads), title, title)]
    per = heads // kv_heads
    return [
        (
            range(g * per, (g + 1) * per),
            f"Key/value head {g + 1} · shared by H{g * per + 1}–H{(g + 1) * per}",
            f"Query heads {g * per + 1} to {(g + 1) * per}, sharing key/value head {g + 1}",
        )
        for g in range(kv_heads)
    ]


def render(state=None, fid="copy-layer"):
    read = normalise(state)
    state, entry, own = read.state, read.entry, read.own
    selected = int(state["token"] or default_token(entry))
    if selected >= len(entry["pieces"]):  # a token of the reader's text, not yet read
        selected = default_token(entry)
    r = own["run"]
    layer = int(state["layer"]) - 1
    if r is not None and not r.complete:
        layer = min(layer, r.done - 1)  # the last layer ready
    hide = state["sink"] == "hide"
    model = shape_of(entry)
    pieces = entry["pieces"]
    first = 1 if hide else 0
    shown = maps(entry, layer, hide)
    said = quoted(hc.shown(pieces[selected]))
    if entry["kind"] == "own":
        title = "your text"
    else:
        title = quoted(entry["text"]) if entry["kind"] != "repeat" else text_label(entry).lower()
    groups = []
    lines = []
    for heads, box, box_label in _groups(model["heads"], model["kv_heads"]):
        items = []
        for h in heads:
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
            f'<section class="hc-group" aria-label="{esc(box_label)}">'
            f'<h3 class="hc-kv">{esc(box)}</h3><ol class="hc-heads">{"".join(items)}</ol>'
            "</section>"
        )
    controls = kit.controls(
        text_choices(state["text"]),
        LMS_NOTE,
        own_form(state, own, fid) if state["text"] == live.SID else "",
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
        pieces=True,
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
    live_parts = ""
    if r is not None:
        progress, summary = _progress(r, state, layer, summary)
        live_parts = progress + (_guesses(r, selected) + _writer(state, r) if r.complete else "")
    html = (
        controls
        + tokens
        + live_parts
        + f'<p class="hc-note">{esc(note)}</p>'
        + f'<div class="hc-groups">{"".join(groups)}</div>'
        + kit.legend("masked (a later token)")
        + (source.section() if state["text"] == live.SID else "")
        + kit.summary_line(summary)
    )
    return kit.result(html, state, summary=summary, more=own["more"])


def shape_of(entry):
    """{layers, heads, kv_heads} of the model ENTRY's maps come from: the reader's own model
    file for the reader's text while one is open, else SmolLM2."""
    reader = causal.shape() if entry["kind"] == "own" else None
    if reader is None:
        return hc.index()["model"]
    return dict(zip(("layers", "heads", "kv_heads"), reader, strict=True))


def text_choices(current):
    """The text control: "Your own text", a button per sentence, one for the passage and one
    for the ten runs of random tokens (the run shown, else the first); with a run shown, a row
    of its ten seeds under it. A button per run made the row 4,737 px wide on a phone, with
    "Your own text" the seventeenth, at its end."""
    runs = [t for t in hc.texts() if t["kind"] == "repeat"]
    ids = {t["id"] for t in runs}
    run = current if current in ids else runs[0]["id"]
    options = [(live.SID, "Your own text")]
    options += [(t["id"], text_label(t)) for t in hc.texts() if t["id"] not in ids]
    options += [(run, LABELS["repeat"])]
    row = kit.choices(
        "text",
        options,
        run if current in ids else current,
        label="Text",
        cls="mh-pick hc-texts",
        fk=lambda v: "text-repeat" if v in ids else f"text-{v}",
        resets=("token",),
    )
    if current not in ids:
        return row
    seeds = [(t["id"], str(t["seed"])) for t in runs]
    return row + (
        '<div class="hc-seeds"><span aria-hidden="true">Seed:</span>'
        + kit.choices(
            "text",
            seeds,
            current,
            label="Seed of the random tokens",
            cls="mh-pick hc-seed",
            fk=lambda v: f"seed-{v}",
            resets=("token",),
        )
        + "</div>"
    )


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


def own_form(state, own, fid):
    """The box for the reader's own text, and what it says: the load button and its progress
    bar (the model's two files, fetched by templates/static/ownmodel.js), a message, or what
    was done to the text. Without JavaScript, a note."""
    files = smollm2.files()
    size = smollm2.size_mb()
    note = own["note"]
    if note == "load":
        said = smollm2.load_box(
            "Your text is not shown yet: the maps below are the first curated text’s until "
            f"the model is in your browser. This loads SmolLM2 into your browser: {size}, kept "
            "for your next visits."
        )
    elif note:
        alert = "" if note == live.EMPTY else ' role="alert"'
        said = "".join(f'<p class="hc-own-msg">{esc(line)}</p>' for line in own["notes"])
        said += f'<p class="hc-own-msg"{alert}>{esc(note)}</p>'
    else:
        r = own["run"]
        lines = [*own["notes"], f"Your text, as the model reads it: {len(r.ids)} tokens."]
        said = "".join(f'<p class="hc-own-msg">{esc(line)}</p>' for line in lines)
    box = kit.own_model_attrs("hc-own", files, smollm2.WARM, smollm2.MEMORY_MB)
    field = kit.text_box(fid, "own", state["own"], placeholder=f"up to {live.MAX_TOKENS} tokens")
    return (
        f"<form{box}>"
        f'<label class="hc-what" for="{esc(fid)}-own">Your own text</label> '
        f'{field}<input type="hidden" name="text" value="{live.SID}">'
        '<input type="hidden" name="write" value=""> '
        f'<button type="submit" data-fk="own-show">Show its heads</button>{said}</form>'
        + causal.chooser()
        + source.offer(state)
        + '<noscript><p class="hc-own-msg">Your own text: with JavaScript on, this figure runs '
        f"SmolLM2 on a text you type ({size}, loaded only when you ask).</p></noscript>"
    )


def _progress(r, state, layer, summary):
    """-> (the line on the computation, or the KV cache once done; the summary, saying how
    far the computation is)."""
    n = r.llama.n_layer
    if not r.complete:
        wanted = int(state["layer"])
        line = f"Computing your text: {r.done} of {n} layers ready" + (
            f"; layer {wanted} is shown when it is." if wanted - 1 > layer else "."
        )
        html = (
            f'<p class="hc-progress"><progress max="{n}" value="{r.done}" '
            f'aria-label="Layers computed">'
            f"</progress> {esc(line)}</p>"
        )
        return html, f"{line} {summary}"
    if not r.guessed():
        line = f"The model’s guesses: {len(r.guesses)} of {len(r.ids)} tokens worked out."
        html = (
            f'<p class="hc-progress"><progress max="{len(r.ids)}" value="{len(r.guesses)}" '
            f'aria-label="Guesses worked out"></progress> {esc(line)}</p>'
        )
        return html, summary
    per_layer = r.cache.nbytes // n
    per_token = r.cache.nbytes // max(1, len(r.cache))
    kv, hs = r.llama.n_kv, r.llama.hs
    line = (
        f"KV cache: {len(r.cache)} tokens, {r.cache.nbytes:,} bytes ({per_layer:,} in each of "
        f"the {n} layers): {per_token:,} bytes a token, for in each layer it keeps the "
        f"token's keys and values, {kv} key/value heads × {hs} numbers × 2, 4 bytes each."
    )
    return f'<p class="hc-cache">{esc(line)}</p>', summary


def _guesses(r, selected):
    """The model's five likeliest next tokens after the marked one, with probabilities."""
    top = r.top(selected)
    after = hc.spoken(live.piece(r.ids[selected]))
    before = r.ids[: selected + 1]
    items = "".join(
        f'<li><span class="hc-guess">{esc(hc.spoken(live.next_piece(before, i)))}</span> '
        f'<meter min="0" max="1" value="{p:.4f}" aria-hidden="true"></meter> '
        f"{pct(round(p * 1000))}</li>"
        for i, p in top
    )
    label = f"After {after} (token {selected + 1}), the model’s five likeliest next tokens"
    return (
        f'<section class="hc-guesses" aria-label="{esc(label)}"><h3 class="hc-kv">'
        f"{esc(label)}</h3><ol>{items}</ol></section>"
    )


def _writer(state, r):
    """Write on: how each new token is chosen, and the button (Stop while writing)."""
    writing = state["write"] == "on"
    how = "".join(
        f'<option value="{k}"{" selected" if k == state["how"] else ""}>{esc(t)}</option>'
        for k, t in HOW
    )
    temps = "".join(
        f'<option value="{t}"{" selected" if t == state["temp"] else ""}>{t}</option>'
        for t in TEMPS
    )
    if writing:
        stop = attrs(type="button", data_key="write", data_value="", data_fk="write")
        button = f"<button{stop}>Stop writing</button>"
    else:
        button = '<button type="submit" data-fk="write">Write on</button>'
    full = len(r.ids) >= live.MAX_TOKENS
    return (
        '<form class="hc-write" data-state-form>'
        f'<label>Each new token: <select name="how" data-fk="how">{how}</select></label> '
        f'<label>Temperature <select name="temp" data-fk="temp">{temps}</select></label> '
        f'<label>Seed <input type="number" name="seed" min="0" max="9999" '
        f'value="{esc(state["seed"])}" data-fk="seed"></label>'
        f'<input type="hidden" name="text" value="{live.SID}">'
        '<input type="hidden" name="write" value="on"> '
        + ("" if full and not writing else button)
        + "</form>"
    )


def download_tables(state, fid="copy-layer"):
    """The numbers the layer's maps draw as pictures, for the download's CSV
    (toymodels.page.download): the marked token's row in each of the layer's heads, in tenths of
    a percent as the line under each map gives them, the first token left out and each row
    shared out again when the figure hides it. The reader's text is read as drawn, never
    written on (`write` off)."""
    read = normalise({**state, "write": ""})
    state, entry, own = read.state, read.entry, read.own
    r = own["run"]
    layer = int(state["layer"]) - 1
    if r is not None and not r.complete:
        layer = min(layer, r.done - 1)
    hide = state["sink"] == "hide"
    first = 1 if hide else 0
    selected = int(state["token"] or default_token(entry))
    if selected >= len(entry["pieces"]):  # a token of the reader's text, not yet read
        selected = default_token(entry)
    if selected < first:
        return []
    said = [quoted(hc.shown(p)) for p in entry["pieces"][first:]]
    me = said[selected - first]

    def cell(row, j):
        if j > selected - first:
            return f"{me} cannot see {said[j]}: masked"
        return f"{me} → {said[j]}: {kit.share(row[: selected - first + 1], j)}"

    shown = maps(entry, layer, hide)
    return [
        {
            "caption": f"Where {me} (token {selected}) looks in each head of layer {layer + 1}: "
            "a row is a head, a column a token looked at, a cell its share of the attention",
            "columns": said,
            "rows": [
                (
                    head_name(layer + 1, h + 1),
                    [cell(shown[h][selected - first], j) for j in range(len(said))],
                )
                for h in range(len(shown))
            ],
        }
    ]
