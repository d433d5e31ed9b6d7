"""Figure "Your own text": the reader's text run through the live causal model in the page
(toymodels/models/causal.py: SmolLM2, the opt-in model of "Heads that copy" and "What a head
does", loaded once for all three, or the reader's own GGUF file), and one head's score from a
query token to a key token split into what each earlier component wrote (smollm2.py; a GPT-2
file's by gpt2.py), with one component taken out of the keys or the query.

The forward is computed in pieces of a frame each (PIECE_S in smollm2.py), parts of a layer,
one piece a call (`more`), so the page draws progress and answers other taps between the pieces;
then each tap splits one score row (no forward; a tap on another key reuses the row's totals) and
a knockout recomputes one head's row.

State: text; head ("L19H7"; "" for the export's strongest induction head, or on the reader's
file the head `looking` picks); query, key (token positions, 0-based; "" for the last token and
the key it gives most); remove (a component, "L17H1", "MLP1", "token"; "" for none); side
("keys" or "queries").
"""

import re

import numpy as np

from ..models import causal, ownfile
from ..models.causal import live
from ..models.smollm2 import live as smollm2
from ..page import kit
from ..page.html import esc, head_name, pct, quoted, tenths, whole
from ..page.recent import Recent
from . import exported as ex
from . import gpt2
from . import smollm2 as s2
from . import split as sp

DEFAULTS = {
    "text": "Puff found a shiny key and kept it. Puff found a shiny key and",
    "head": "",
    "query": "",
    "key": "",
    "remove": "",
    "side": "keys",
}
SIDES = {"keys": "from the keys", "queries": "from the query"}
CHOICES = {"side": tuple(SIDES)}
FRESH = ("query", "key", "remove")  # what a new text sets back to its default
TOP = 6  # components listed per side
HEAD = re.compile(r"[Ll]([0-9]{1,2})\s*[Hh]([0-9]{1,2})")
_splits = Recent(2)  # SmolLM2's: token ids -> s2.Split, computed in pieces


def kept():
    """The splits kept for the model open now (token ids -> split): the reader's file's are
    kept with it (ownfile.kept), so they and the model they hold go when it is closed."""
    return ownfile.kept("why-splits", lambda: Recent(2)) if ownfile.is_open() else _splits


def split(model, ids):
    """The split of MODEL's forward on IDS, computed in pieces: GPT-2's (gpt2.py) for a
    reader's GPT-2 file, else SmolLM2's (smollm2.py), which reads llama and qwen2 files too."""
    kind = gpt2.Split if getattr(model, "arch", None) == "gpt2" else s2.Split
    return kind(model, ids, lazy=True)


def looking(s, i):
    """The reader's model's default head (layer, head) for query I: of the heads past the first
    layer (whose stream holds only the embeddings), the one that gives the most attention to one
    key other than the first token (where most heads rest)."""
    first = 1 if s.model.n_layer > 1 else 0
    rows = s.maps[first:, :, i, 1 : i + 1] if i else s.maps[first:, :, i, :1]
    most = rows.max(-1)  # (layers, heads)
    L, H = np.unravel_index(int(np.argmax(most)), most.shape)
    return first + int(L), int(H)


def slug(name):
    """A component's name as a state value: 'L17 H1' -> 'L17H1'."""
    return name.replace("\u00a0", "")


def read_head(text, layers, heads):
    """'L19H7' -> (18, 6), or None for text that names no head of the model."""
    m = HEAD.fullmatch(text.strip())
    if not m:
        return None
    L, H = int(m.group(1)) - 1, int(m.group(2)) - 1
    return (L, H) if 0 <= L < layers and 0 <= H < heads else None


def named(text, row):
    """ROW (a group of buttons, named for screen readers by its aria-label) under TEXT, the
    same name shown: the query's and the key's rows hold the same tokens."""
    return f'<p class="hc-what why-row" aria-hidden="true">{esc(text)}</p>{row}'


def form(state, said, fid):
    """The text box and the button, in the form that loads the model when asked."""
    box = kit.own_model_attrs("hc-own", smollm2.files(), smollm2.WARM, smollm2.MEMORY_MB)
    return (
        f"<form{box}>"
        f'<label class="hc-what" for="{esc(fid)}-text">Your text</label> '
        + kit.text_box(fid, "text", state["text"])
        + "".join(f'<input type="hidden" name="{k}" value="">' for k in FRESH)
        + f'<button type="submit" data-fk="own-show">Split its scores</button>{said}</form>'
        + causal.chooser()
        + '<noscript><p class="hc-own-msg">Your own text: with JavaScript on, this figure runs '
        f"SmolLM2 on a text you type ({smollm2.size_mb()}, loaded only when you ask).</p>"
        "</noscript>"
        '<p class="wh-lms-note">A course package leaves the live model out: this figure works '
        "on the site itself.</p>"
    )


def render(state=None, fid="why-own"):
    """State in; the figure's html, slots, state, error and summary out."""
    state = kit.merge(DEFAULTS, state, choices=CHOICES)
    state["text"] = state["text"][: live.MAX_CHARS + 1]
    if not live.loaded():
        said = smollm2.load_box(
            "Nothing is split yet: this figure runs SmolLM2 in your browser on the text above, "
            f"or one you type. The same download as in “Heads that copy”: {smollm2.size_mb()}, "
            "kept for your next visits."
        )
        summary = f"Your own text: load SmolLM2 ({smollm2.size_mb()}) to split its scores."
        html = form(state, said, fid) + kit.summary_line(summary)
        return kit.result(html, state, summary=summary)
    text, notes = live.tidy(state["text"])
    note = live.problem(text)
    lines = "".join(f'<p class="hc-own-msg">{esc(n)}</p>' for n in notes)
    if note:
        said = lines + f'<p class="hc-own-msg" role="alert">{esc(note)}</p>'
        return kit.result(form(state, said, fid), state, summary=f"Your own text: {note}")
    ids = ()
    try:
        ids, cut = live.encode(text)
        if cut:
            lines += f'<p class="hc-own-msg">{esc(live.cut_note(ids))}</p>'
        m = live.model()[0]
        s = kept().keep(tuple(ids), lambda: split(m, ids))
        if not s.complete:
            s.advance(s2.PIECE_S if s.ran else 0.0)
    except MemoryError:
        kept().pop(tuple(ids), None)  # its forward is spent: a later try starts it again
        said = f'<p class="hc-own-msg" role="alert">{esc(live.MEMORY)}</p>'
        return kit.result(form(state, said, fid), state, summary=live.MEMORY)
    if not s.complete:
        n = s.model.n_layer
        line = f"Running your text: {s.done} of {n} layers."
        bar = (
            f'<p class="hc-progress"><progress max="{n}" value="{s.done}" '
            f'aria-label="Layers computed"></progress> {esc(line)}</p>'
        )
        return kit.result(form(state, lines, fid) + bar, state, summary=line, more=True)
    try:
        return measured(state, s, ids, lines, fid)
    except MemoryError:  # a late layer's reads of a large model: (components, T, d) float64
        said = lines + f'<p class="hc-own-msg" role="alert">{esc(live.MEMORY)}</p>'
        return kit.result(form(state, said, fid), state, summary=live.MEMORY)


def measured(state, s, ids, lines, fid):
    """The figure once the text has run: the head, the query and key tokens, each side's
    largest lifts, and the knockout asked for."""
    m = s.model
    T = len(ids)
    i = whole(state["query"], 4)
    i = T - 1 if i is None or i >= T else i
    if ownfile.is_open():
        default = looking(s, i)
    else:
        default = (ex.heads()[0]["layer"], ex.heads()[0]["head"])
    asked = read_head(state["head"], m.n_layer, m.n_head)
    layer, head = asked or default
    typed, state["head"] = state["head"].strip(), f"L{layer + 1}H{head + 1}"
    which = "Your model" if ownfile.is_open() else "SmolLM2"
    no_head = (
        f'<p class="hc-own-msg" role="alert">There is no head “{esc(typed[:20])}” here: '
        f"{which} has {m.n_layer} layers of {m.n_head} heads, L1H1 to L{m.n_layer}H{m.n_head}; "
        f"{esc(head_name(layer + 1, head + 1))} is shown.</p>"
        if typed and not asked
        else ""
    )
    row = s.attention(layer, head, i).astype(np.float64)
    j = whole(state["key"], 4)
    j = int(np.argmax(row)) if j is None or j > i else j
    state["query"], state["key"] = str(i), str(j)
    pieces = [live.piece(t) for t in ids]
    who = head_name(layer + 1, head + 1)
    q, k = quoted(pieces[i]), quoted(pieces[j])
    names, query_side, key_side = s.totals(layer, head, i)
    key_lift = key_side[:, j] - key_side.mean(-1)  # what the take-out buttons offer
    query_lift = query_side[:, j] - query_side.mean(-1)
    tables, said = kit.score_split(s, layer, head, i, j, words=pieces, top=TOP)
    takeable = [c for c, n in enumerate(names) if n != sp.NORM_BIAS]  # not in the stream
    gone = next((names[c] for c in takeable if slug(names[c]) == state["remove"]), None)
    state["remove"] = slug(gone) if gone else ""
    line = (
        f"{who} from {q} (token {i + 1}) gives {pct(int(tenths(row)[j]))} of its attention to "
        f"{k} (token {j + 1}). {said}"
    )
    columns = [("Attention", row)]
    if gone:
        after = s.knockout(layer, head, i, gone, state["side"])
        columns.append((f"Without {gone}", after))
        line += f" Without {gone} {SIDES[state['side']]}, it gives {pct(int(tenths(after)[j]))}."
    head_box = (
        '<form class="wh-patch" data-state-form>'
        f'<label class="hc-what" for="{esc(fid)}-head">Head</label> '
        + kit.text_box(fid, "head", state["head"], maxlength="7")
        + f'<button type="submit" data-fk="head-go">Open</button>{no_head}</form>'
    )
    shown_side = key_lift if state["side"] == "keys" else query_lift
    order = sorted(takeable, key=lambda c: (-shown_side[c], c))[:TOP]
    if gone and gone not in [names[c] for c in order]:  # the one taken out stays offered, pressed
        order.append(names.index(gone))
    take = kit.choices(
        "remove",
        [("", "Nothing")] + [(slug(names[c]), names[c]) for c in order],
        state["remove"],
        label="Take out",
    ) + kit.choices("side", list(SIDES.items()), state["side"], label="Take it out")
    html = (
        form(state, lines, fid)
        + head_box
        + named(
            "The query token",
            kit.token_buttons(pieces, i, key="query", label="The query token", fk="q", pieces=True),
        )
        + named(
            "The key token",
            kit.token_buttons(
                pieces[: i + 1], j, key="key", label="The key token", fk="k", pieces=True
            ),
        )
        + tables
        + kit.controls(named("Take out", take))
        + kit.shares_table(
            pieces[: i + 1], columns, caption=f"What {who} gives each key from {q}", selected=j
        )
    )
    return kit.result(html + kit.summary_line(line), state, summary=line)
