"""SmolLM2-135M-Instruct's exported heads, and the measures every head gets.

The export (toymodels/data/smollm2/, written at build time by `python -m toymodels.export
smollm2`) holds, for each curated text, its token ids and pieces, the model's top-1 next-token
guess at every position, and every head's attention map (30 layers × 9 heads) in thousandths:
ID.npz with one array "att", each map's lower triangle row by row (a causal model's upper
triangle is zero) as uint16 thousandths of shape (layers, heads, T(T+1)/2), stored as its two
byte planes, uint8 of shape (2, layers, heads, T(T+1)/2) (`planes`): most shares are a few
thousandths, so the high plane is nearly all zeros and the file compresses to a sixth less than
the uint16 array, with the same numbers. index.json lists the texts, the model's shape, every
head's measures over all the texts (`scores_of` on the stored maps, at export time: a figure
then fetches only the maps it draws), and the copying runs: the top-1 guesses on the repeated
random tokens with chosen heads pulled out (each head's output zeroed before the output
projection), computed by the forward at export time.

Measures of one head, from the maps (rows from the third token on: row 0 sees only itself and
row 1's previous token is the first token, so from row 2 the three links below are three
different tokens; texts weigh alike):

- previous token: the mean weight a row puts on the token just before it;
- sink: the mean weight on the first token;
- self: the mean weight on the row's own token;
- induction: on a run of P random tokens repeated twice (after one fixed first token, so the
  random tokens start at position `start`), the mean weight a row of the second copy puts on
  the token just after the same token in the first copy (position i - P + 1), the token an
  induction head copies forward.

Copying accuracy: on the second copy, how often the model's top-1 guess is the next token (it
can only know it by copying from the first copy); on the first copy, the same for comparison.
"""

import io
import json

import numpy as np

from ..page import data

DIR = "smollm2"
MEASURES = ("induction", "previous", "sink", "self")
FIRST_ROW = 2  # the rows the previous / sink / self measures read
_cache = {}


def _read(rel):
    return data.read_exported(
        f"{DIR}/{rel}", "run `python -m toymodels.export smollm2` to write it"
    )


def pack(att, scale):
    """(…, T, T) maps with rows summing to 1 -> (…, T(T+1)/2) uint16 lower triangles, rounded
    to 1/scale."""
    att = np.asarray(att)
    r, c = np.tril_indices(att.shape[-1])
    return np.rint(att[..., r, c] * scale).astype(np.uint16)


def unpack(tri, scale):
    """The inverse of `pack`: (…, T(T+1)/2) -> (…, T, T) float64 maps (upper triangle zero)."""
    tri = np.asarray(tri)
    n = tri.shape[-1]
    T = int(round((np.sqrt(8 * n + 1) - 1) / 2))
    if n != T * (T + 1) // 2:
        raise ValueError(f"{n} values are not a lower triangle")
    out = np.zeros(tri.shape[:-1] + (T, T))
    r, c = np.tril_indices(T)
    out[..., r, c] = tri / scale
    return out


def planes(tri):
    """uint16 thousandths (…) -> their byte planes, uint8 (2, …): low bytes, then high bytes."""
    tri = np.asarray(tri, dtype=np.uint16)
    return np.stack([tri & 0xFF, tri >> 8]).astype(np.uint8)


def unplanes(stored):
    """The inverse of `planes`: uint8 (2, …) -> uint16 (…)."""
    stored = np.asarray(stored, dtype=np.uint16)
    return stored[0] | (stored[1] << 8)


def index():
    """index.json of the export: the model, the texts, the copying runs."""
    if "index" not in _cache:
        _cache["index"] = json.loads(_read("index.json").decode("utf-8"))
    return _cache["index"]


def texts():
    return index()["texts"]


def entry(tid):
    """One text's entry in index.json (ids, pieces, guesses), without its maps."""
    found = next((t for t in texts() if t["id"] == tid), None)
    if found is None:
        raise KeyError(f"the export has no text '{tid}'")
    return found


def text(tid):
    """One text's entry with 'att': float maps (layers, heads, T, T), read from its file."""
    if tid not in _cache:
        found = entry(tid)
        with np.load(io.BytesIO(_read(found["file"])), allow_pickle=False) as z:
            att = unpack(unplanes(z["att"]), index()["scale"])
        if att.shape[-1] != len(found["ids"]):
            n = len(found["ids"])
            raise ValueError(f"{found['file']}: {att.shape[-1]} rows for {n} ids")
        _cache[tid] = dict(found, att=att)
    return _cache[tid]


def link_shares(att):
    """(L, H, T, T) maps -> {'previous', 'sink', 'self'}: each (L, H), means over rows 2…T-1."""
    T = att.shape[-1]
    i = np.arange(FIRST_ROW, T)
    if not len(i):
        raise ValueError(f"a text needs more than {FIRST_ROW} tokens")
    return {
        "previous": att[..., i, i - 1].mean(-1),
        "sink": att[..., i, 0].mean(-1),
        "self": att[..., i, i].mean(-1),
    }


def induction(att, period, start=0):
    """(L, H, T, T) maps of P = period tokens repeated from position `start` -> (L, H): each
    second-copy row's weight on the token after its earlier copy, averaged."""
    i = np.arange(start + period, min(start + 2 * period, att.shape[-1]))
    return att[..., i, i - period + 1].mean(-1)


def scores_of(entries):
    """Entries with 'att' (and 'period' for repeated runs) -> {measure: (L, H) array}: link
    shares averaged over all texts, induction over the repeated runs."""
    links = [link_shares(e["att"]) for e in entries]
    out = {k: np.mean([x[k] for x in links], axis=0) for k in ("previous", "sink", "self")}
    out["induction"] = np.mean(run_inductions(entries), axis=0)
    return out


def run_inductions(entries):
    """Each repeated run's induction scores, (runs, L, H), in the entries' order."""
    return [induction(e["att"], e["period"], e["start"]) for e in entries if "period" in e]


def scores():
    """Every head's four measures over the whole export: {measure: (layers, heads)}, as the
    export computed them with `scores_of` from the stored maps of every text (index.json), so
    that no figure fetches every text's maps for them."""
    if "scores" not in _cache:
        _cache["scores"] = {m: np.array(v) for m, v in index()["scores"].items()}
    return _cache["scores"]


def ranked(values, k=None):
    """(L, H) scores -> the (layer, head) pairs from the highest down (ties: lower layer, head)."""
    flat = np.asarray(values).ravel()
    order = sorted(range(len(flat)), key=lambda n: (-flat[n], n))[:k]
    H = np.shape(values)[-1]
    return [(n // H, n % H) for n in order]


def strongest(measure, k=5):
    return ranked(scores()[measure], k)


def sink_by_layer():
    """(layers,): each layer's sink share averaged over its heads."""
    return scores()["sink"].mean(-1)


# copying, from the runs stored at export time


def runs():
    """The repeated random-token texts, in the export's order."""
    return [t for t in texts() if "period" in t]


def conditions():
    """The stored copying runs: each with 'id', 'heads' ([layer, head] pairs pulled out),
    'top1' ({text id: top-1 guess per position})."""
    return index()["copying"]["conditions"]


def condition(heads=()):
    """The stored run with exactly these (layer, head) pairs pulled out."""
    want = sorted(tuple(h) for h in heads)
    for c in conditions():
        if sorted(tuple(h) for h in c["heads"]) == want:
            return c
    raise KeyError(f"no copying run with heads {want} pulled out")


def guessed(entry, copy=2):
    """The positions of the copy (1 or 2) whose next token is in the same copy: the guesses
    the copying runs count, P - 1 of them."""
    P = entry["period"]
    first = entry["start"] + (P if copy == 2 else 0)
    return range(first, first + P - 1)


def hits(entry, top1, copy=2):
    """Booleans: whether each guess in the copy (1 or 2) is the token that follows."""
    ids = entry["ids"]
    return [top1[i] == ids[i + 1] for i in guessed(entry, copy)]


def accuracy(heads=(), copy=2):
    """(right, total) top-1 next-token guesses on the copy, over every repeated run, with
    `heads` pulled out."""
    per = run_accuracy(heads, copy)
    return sum(r for r, _ in per), sum(n for _, n in per)


def run_accuracy(heads=(), copy=2):
    """[(right, total)] per repeated run, in the export's order."""
    c = condition(heads)
    out = []
    for e in runs():
        h = hits(e, c["top1"][e["id"]], copy)
        out.append((sum(h), len(h)))
    return out


def plain_loss():
    """The plain-text control: {condition id: {text id: mean loss in nats}} on the curated
    texts, with the heads of that stored run pulled out."""
    plain = index()["copying"]["plain"]
    return {c: {t: v / index()["scale"] for t, v in d.items()} for c, d in plain["loss"].items()}


# what the figures show


def kv_head(head, heads=None, kv=None):
    """The key/value head a query head reads (0-based) under grouped-query attention: heads
    per layer / kv heads query heads in a row share one, so with 9 and 3, head h uses h // 3."""
    m = index()["model"]
    heads, kv = heads or m["heads"], kv or m["kv_heads"]
    return head // (heads // kv)


def siblings(head):
    """The query heads of a layer (0-based) that share HEAD's keys and values, HEAD included."""
    m = index()["model"]
    group = m["heads"] // m["kv_heads"]
    first = kv_head(head) * group
    return list(range(first, first + group))


def hide_first(att):
    """(…, T, T) maps -> (…, T-1, T-1): the rows and columns from the second token on, each row
    renormalised to add up to 1, as if the first token were not there. A row that gave the
    first token everything has nothing left to share and stays 0."""
    rest = np.asarray(att, dtype=float)[..., 1:, 1:]
    total = rest.sum(-1, keepdims=True)
    return np.divide(rest, total, out=np.zeros_like(rest), where=total > 0)


def word(token_id):
    """The text of a token id the export names (its pieces and every stored guess)."""
    return index()["words"][str(token_id)]


def shown(piece):
    """A piece as a button shows it: without its leading space ('␣' if that is all it is)."""
    return piece.strip() or "␣"


def spoken(piece):
    """A piece as prose quotes it: '“cat”' for ' cat'; a piece of white space named in words."""
    if piece.strip():
        return f"“{piece.strip()}”"
    return "a line break" if "\n" in piece else "a space"
