"""Real heads: exported attention maps of a pretrained model, automatic head labels, readable
summaries.

The maps come from `python -m toymodels.export` (build time, toymodels/export/)
as JSON under toymodels/data/realheads/: an index.json naming each model and its
sentences, and one file per sentence with every layer's and head's attention in
thousandths. This module only reads them (numpy + stdlib, so the browser runs it
unchanged under Pyodide); the figure and the chapter's quoted numbers both come
from the functions here.

Head labels, for one head and one sentence, read the rows of the sentence's own
tokens (not [CLS] and [SEP], whose rows a reader does not tap; for a causal model,
every row but the first, which can see only itself):

- previous token / next token / self / sink: that kind of link gets over half of
  a row's weight on average (sink: the [CLS] and [SEP] positions together, or the
  first token in a causal model); if two qualify, the larger wins;
- broad: none of those, and the rows' entropy is at least BROAD of the largest
  possible (the weight is spread over many tokens);
- other: anything else, summarised by its strongest link.
"""

import json

import numpy as np

from ..page import data, html
from ..page.html import quoted

DIR = "realheads"
THRESHOLD = 0.5
BROAD = 0.7
LABELS = ("previous", "next", "self", "sink", "broad", "other")
NAMES = {
    "previous": "previous token",
    "next": "next token",
    "self": "self",
    "sink": "sink",
    "broad": "broad",
    "other": "other",
}
_cache = {}


def _read_json(rel):
    text = data.read_exported(f"{DIR}/{rel}", "run `make export` to write the real-heads data")
    return json.loads(text.decode("utf-8"))


def index():
    """The exported models and their sentences (toymodels/data/realheads/index.json)."""
    if "index" not in _cache:
        _cache["index"] = _read_json("index.json")
    return _cache["index"]


def model(mid=None):
    models = index()["models"]
    for m in models:
        if mid is None or m["id"] == mid:
            return m
    raise KeyError(f"no exported model '{mid}'; models: {', '.join(m['id'] for m in models)}")


def sentence(mid, sid):
    """One sentence of one model: its JSON with 'att' as a float array (layers, heads, T, T)."""
    key = (mid, sid)
    if key not in _cache:
        entry = next((s for s in model(mid)["sentences"] if s["id"] == sid), None)
        if entry is None:
            raise KeyError(f"model '{mid}' has no sentence '{sid}'")
        d = _read_json(entry["file"])
        d["att"] = np.asarray(d["att"], dtype=np.float64) / d["scale"]
        _cache[key] = d
    return _cache[key]


def content_rows(T, sinks, causal):
    """Rows whose measures count: the sentence's own tokens."""
    skip = {0} if causal else set(sinks)
    return [i for i in range(T) if i not in skip]


def measures(att, sinks, causal):
    """(…, T, T) maps -> dict of (…) arrays: mean share on previous / next / self / sink,
    normalised entropy."""
    att = np.asarray(att, dtype=np.float64)
    T = att.shape[-1]
    rows = content_rows(T, sinks, causal)
    if not rows:
        raise ValueError("a sentence needs at least one token besides the special ones")
    r = np.array(rows)
    A = att[..., r, :]
    i = r
    prev = np.where(i >= 1, A[..., np.arange(len(r)), np.maximum(i - 1, 0)], 0.0)
    nxt = np.where(i + 1 < T, A[..., np.arange(len(r)), np.minimum(i + 1, T - 1)], 0.0)
    own = A[..., np.arange(len(r)), i]
    sink = A[..., list(sinks)].sum(-1)
    visible = (i + 1) if causal else np.full(len(r), T)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(A > 0, A * np.log(np.where(A > 0, A, 1)), 0).sum(-1)
        ent = np.where(visible > 1, ent / np.log(np.maximum(visible, 2)), 0.0)
    return {
        "previous": prev.mean(-1),
        "next": nxt.mean(-1),
        "self": own.mean(-1),
        "sink": sink.mean(-1),
        "entropy": ent.mean(-1),
    }


def label_of(m):
    """One head's measures (floats) -> its label."""
    best = max(("previous", "next", "self", "sink"), key=lambda k: m[k])
    if m[best] > THRESHOLD:
        return best
    return "broad" if m["entropy"] >= BROAD else "other"


def pick(ms, idx):
    return {k: float(v[idx]) for k, v in ms.items()}


def head_labels(d):
    """A sentence -> labels[layer][head] and measures[layer][head] (dicts of floats)."""
    ms = measures(d["att"], d["sinks"], d["causal"])
    L, H = d["att"].shape[:2]
    per = [[pick(ms, (layer, head)) for head in range(H)] for layer in range(L)]
    return [[label_of(m) for m in row] for row in per], per


def strongest_link(d, layer, head):
    """(from, to, share) of the largest weight between two of the sentence's own tokens."""
    A = d["att"][layer, head]
    T = A.shape[0]
    own = [i for i in range(T) if i not in d["sinks"]]
    if not own:
        return None
    sub = A[np.ix_(own, own)]
    i, j = np.unravel_index(int(np.argmax(sub)), sub.shape)
    return own[i], own[j], float(sub[i, j])


def pct0(x):
    return f"{round(100 * x)}%"


def head_name(layer, head):
    """0-based layer and head -> 'L4 H11', the site's one notation for a head."""
    return html.head_name(layer + 1, head + 1)


def sink_names(d):
    """'[CLS] and [SEP]' for an encoder; '“The”, the first token' for a causal model."""
    if d["causal"]:
        return f"{quoted(d['tokens'][0])}, the first token"
    names = list(dict.fromkeys(d["tokens"][i] for i in d["sinks"]))
    return names[0] if len(names) == 1 else " and ".join(names)


HABITS = {  # what a head with that label does with a token's attention, on average
    "previous": "goes to the token before it",
    "next": "goes to the token after it",
    "self": "stays on the token itself",
    "sink": "rests on {sinks}",
}


def summary(d, layer, head, label, m):
    """'L4 H11 · previous token: on average 97% of a token's attention goes to the token
    before it.'"""
    start = f"{head_name(layer, head)} · {NAMES[label]}: "
    if label in HABITS:
        habit = HABITS[label].format(sinks=sink_names(d) if label == "sink" else "")
        return start + f"on average {pct0(m[label])} of a token’s attention {habit}."
    link = strongest_link(d, layer, head)
    tail = ""
    if link:
        said = [quoted(d["tokens"][i]) for i in link[:2]]
        tail = f" Its strongest link: {said[0]} → {said[1]}, {pct0(link[2])}."
    if label == "broad":
        return (
            start + f"attention spread widely (entropy {pct0(m['entropy'])} of the most possible), "
            f"{pct0(m['sink'])} on {sink_names(d)}." + tail
        )
    return start + f"no single habit; {pct0(m['sink'])} on {sink_names(d)}." + tail


def counts(labels):
    """labels[layer][head] -> per layer, {label: count} in LABELS order."""
    return [{k: row.count(k) for k in LABELS} for row in labels]
