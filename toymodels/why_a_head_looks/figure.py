"""Figure "why a head looks there", on the character model: pick a head, tap a cell of its map
(a query and a key); the score between them split into (query component, key component) pairs;
take one component out of the keys or of the query and see the head's new attention row.

Every number comes from split.py, the same at build time and in the reader's browser.
"""

import numpy as np

from ..models.charmodel import model as cm
from ..page import kit
from ..page.html import head_name, num, pct, quoted, tenths
from ..page.recent import Recent
from . import split as sp

TEXT = "vbk qzx dwp vbk qzx dw"  # nonsense said twice: only copying can predict the second
RUNS = {  # the shipped runs of the character model, as the buttons name them
    "reference-repeats": "one induction head",
    "reference-induction": "two induction heads",
    "induction": "twice as wide",
}
SIDES = {"keys": "from the keys", "queries": "from the query"}
DEFAULTS = {
    "text": TEXT,
    "run": "reference-repeats",
    "head": "2.1",
    "query": "",
    "key": "",
    "remove": "",
    "side": "keys",
}
CHOICES = {"run": tuple(RUNS), "side": tuple(SIDES)}
WORD_FIELD = "query"
PROSE_VALUES = ("TEXT",)
TOP = 8  # pairs shown
SPOKEN = {" ": "space", ".": "full stop", ",": "comma", "'": "apostrophe"}

_models = Recent(3)  # run -> (params, cfg)
_splits = Recent(4)  # (run, text) -> Split


def shown(ch):
    """A character as the page shows it: a space as '␣'."""
    return "␣" if ch == " " else ch


def slug(name):
    """A component's name as a state value: 'L1 H2' -> 'L1H2'."""
    return name.replace("\u00a0", "")


def split_of(run, text):
    """The split of RUN's forward on TEXT, kept for the next taps."""
    params, cfg = _models.keep(run, lambda: cm.load(run)[:2])
    return _splits.keep((run, text), lambda: sp.Split(params, cfg, cm.encode(text)))


def _index(value, low, high, default):
    """VALUE as an int in [LOW, HIGH], else DEFAULT."""
    try:
        n = int(value)
    except ValueError:
        return default
    return n if low <= n <= high else default


def normalise(state):
    """-> kit.Normalised, with .split, .layer, .head, .i (query), .j (key), .gone (the
    component taken out, or None); an error only for a text the model cannot read. A head,
    query, key or component that does not fit is put back to its default: the model's head 2.1,
    the last character, the key it gives most attention to, nothing."""
    state = kit.merge(DEFAULTS, state, choices=CHOICES)
    text = state["text"].lower()
    bad = sorted({c for c in text if c not in cm.STOI})
    if bad:
        said = " ".join(SPOKEN.get(c, c) for c in bad[:5])
        error = f"The model knows only a–z, space, full stop, comma and apostrophe: {said}"
        return kit.Normalised(state, error)
    if not 2 <= len(text) <= cm.MAX_CHARS:
        error = f"Give the model 2 to {cm.MAX_CHARS} characters; this text has {len(text)}."
        return kit.Normalised(state, error)
    state["text"] = text
    s = split_of(state["run"], text)
    cfg = s.cfg
    try:
        layer, head = (int(x) - 1 for x in state["head"].split("."))
    except ValueError:
        layer, head = -1, -1
    if not (0 <= layer < cfg["n_layer"] and 0 <= head < cfg["n_head"]):
        state["head"] = DEFAULTS["head"]
        layer, head = 1, 0
    i = _index(state["query"], 0, len(text) - 1, len(text) - 1)
    row = s.attention(layer, head, i)
    j = _index(state["key"], 0, i, int(np.argmax(row)))
    state["query"], state["key"] = str(i), str(j)
    gone = next((n for n in s.names(layer) if slug(n) == state["remove"]), None)
    state["remove"] = slug(gone) if gone else ""
    return kit.Normalised(state, split=s, layer=layer, head=head, i=i, j=j, gone=gone)


def render(state=None, fid="why-look"):
    """State in; the figure's html, slots, state, error and summary out."""
    read = normalise(state)
    if read.error:
        return kit.failure(read.state, read.error)
    state, s, layer, head, i, j = read.state, read.split, read.layer, read.head, read.i, read.j
    text, cfg = state["text"], read.split.cfg
    who = head_name(layer + 1, head + 1)
    q, k = quoted(shown(text[i])), quoted(shown(text[j]))
    heads = [
        (f"{m + 1}.{h + 1}", head_name(m + 1, h + 1))
        for m in range(cfg["n_layer"])
        for h in range(cfg["n_head"])
    ]
    form = kit.controls(
        kit.sentence_form(fid, text, name="text", label="Text", maxlength=cm.MAX_CHARS),
        kit.choices("run", list(RUNS.items()), state["run"], label="Model"),
        kit.choices("head", heads, state["head"], label="Head"),
    )
    chars = [shown(c) for c in text]
    grid = kit.attention_grid(
        chars, shares=s.cache[f"h{layer}.att"][head], selected=i, key="query", name=who
    )
    keys = kit.token_buttons(
        chars[: i + 1],
        j,
        key="key",
        label="Choose the key",
        fk="k",
        names=lambda n: f"character {n + 1}, {SPOKEN.get(text[n], text[n])}",
    )
    names, terms = s.pairs(layer, head, i)  # (C+1, C+1, i+1)
    pair_table, total = pairs_table(names, terms, j, q, k)
    row = s.attention(layer, head, i)
    line = f"{who} from {q} (character {i + 1}) gives {pct(int(tenths(row)[j]))} of its"
    line += f" attention to {k} (character {j + 1}); {total}"
    real = s.names(layer)  # the norm's bias is no part of the stream: it cannot be taken out
    take = kit.choices(
        "remove",
        [("", "Nothing")] + [(slug(n), n) for n in real],
        state["remove"],
        label="Take out",
    ) + kit.choices("side", list(SIDES.items()), state["side"], label="Take it out")
    columns = [("Attention", row)]
    if read.gone:
        after = s.knockout(layer, head, i, read.gone, state["side"])
        columns.append((f"Without {read.gone}", after))
        line += f" Without {read.gone} {SIDES[state['side']]}, it gives"
        line += f" {pct(int(tenths(after)[j]))}."
    table = kit.shares_table(
        chars[: i + 1], columns, caption=f"What {who} gives each key from {q}", selected=j
    )
    html = form + grid + keys + pair_table + kit.controls(take) + table
    return kit.result(html + kit.summary_line(line), state, summary=line)


def pairs_table(names, terms, j, q, k):
    """The TOP pairs of the score s[i, j] as a table, and a sentence saying what they add up
    to."""
    top = sp.top_pairs(names, terms, j, TOP)
    score = float(terms[:, :, j].sum())
    table = kit.matrix(
        f"The score of {q} → {k}, its largest pairs (query part · key part)",
        [f"{a} · {b}" for a, b, _ in top],
        ["Term"],
        [[t] for _, _, t in top],
    )
    n = len(names) ** 2
    said = f"the score, {num(score)}, is the sum of {n} pairs, the largest {top[0][0]}"
    return table, said + f" · {top[0][1]} ({num(top[0][2])})."
