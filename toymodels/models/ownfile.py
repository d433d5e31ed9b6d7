"""The reader's own GGUF file as the live causal model (toymodels/models/causal.py): the same
interface as SmolLM2's (smollm2/live.py), over a model read from a file on the reader's disk.

In the page, the File the reader chose is handed to the Python worker (a postMessage of the
File itself: it is never fetched nor sent anywhere) and held there as `manyheadsFile`; Python
reads slices of it with FileReaderSync, the worker's synchronous reader (`BlobSource`). Under
CPython (tests) `PathSource` reads a file on disk the same way.

    open_card(size)      the header alone (card.read, pulling 1 MB slices until the tensor
                         infos end; open_source(source) for any source): {"ok": True, "lines":
                         [...]} or {"ok": False, "reason", "message"}, the reason and what would
                         work, for the reader; a browser that cannot give the memory the card
                         states is told so here, before any weight is read
    load_step(budget)    reads tensors, one slice each, until BUDGET seconds have gone:
                         {"done", "of", "ready"}; the first makes the tokenizer, before any
                         weight is held; the last builds the model and runs the checks
                         (`checks`)
    close()              drops the file's model: the figures run SmolLM2 again

Memory: the card plans it (card.Card.plan), the worker's base and the forward's working memory
counted: a model whose float32 weights fit the budget has every tensor dequantised once (each
slice read, dequantised and let go, so the file is never held whole); a larger one keeps as
many layers in float32 as fit and the others as the file's blocks, dequantised whenever the
forward reaches them, and, when nothing else fits, its embedding as blocks read by rows.
"""

import time

import numpy as np

from ..page import memory
from ..page.recent import Recent
from . import card as cards
from . import gguf, quants
from .gguffile import model as gmodel
from .gguffile import tokenizer as gtok
from .smollm2 import live as shipped

# what the figures read of any live model, as SmolLM2's
SID, MAX_TOKENS, MAX_CHARS = shipped.SID, shipped.MAX_TOKENS, shipped.MAX_CHARS
EMPTY, SPACES, ONE = shipped.EMPTY, shipped.SPACES, shipped.ONE
FULL, FINISHED, CONTROL = shipped.FULL, shipped.FINISHED, shipped.CONTROL
tidy, problem, choose = shipped.tidy, shipped.problem, shipped.choose
BUDGET_S = shipped.BUDGET_S
KEEP = shipped.KEEP
MEMORY = (
    "This browser did not give your model the memory it needs: close other tabs and try "
    "again, choose a smaller model file, or go back to SmolLM2."
)
CHECK_TEXT = "The cat sat on the mat because it was tired. The cat"
ROUND_TRIP = "Hello, world! 123 naïve café 👋 https://example.org"
BASE_MB = cards.BASE_MB  # the worker's memory before any model, in the card's plan
# the check's text read through the KV cache in these pieces (single tokens after a longer prefix
# among them): each piece is one forward, which a model kept as blocks pays with every layer
# dequantised again, and each token checked is run twice (by the cache and in the whole text),
# so the check stays short; bench/run.py ownfile times it
PIECES = (4, 2, 1, 1)
# the most the KV cache's logits may differ from the full forward's: float32 rounding of other
# shapes of products (SmolLM2's own file: 5.1e-5 on the check's text; tiny models: 1e-6)
KV_BOUND = 1e-3
_state = {}
_runs = Recent(KEEP)
_written = {}


class PathSource:
    """A file on disk read by slices (CPython: tests)."""

    def __init__(self, path):
        self.path = path
        self.size = path.stat().st_size
        self.read_bytes = 0  # how many bytes were read in all

    def slice(self, start, n):
        with open(self.path, "rb") as f:
            f.seek(start)
            out = f.read(n)
        self.read_bytes += len(out)
        return out


class BlobSource:
    """The File the worker holds (`manyheadsFile`), read by slices with FileReaderSync."""

    def __init__(self, size):
        import js  # only in the browser: the worker's global scope

        self.file, self.reader, self.size = js.manyheadsFile, js.FileReaderSync.new(), size
        self.read_bytes = 0

    def slice(self, start, n):
        end = min(start + n, self.size)
        out = self.reader.readAsArrayBuffer(self.file.slice(start, end)).to_bytes()
        self.read_bytes += len(out)
        return out


class Sequential:
    """A source read from its start with .read(n), as card.read pulls the header."""

    def __init__(self, source):
        self.source, self.at = source, 0

    def read(self, n):
        out = self.source.slice(self.at, n)
        self.at += len(out)
        return out


def is_open():
    """Whether the reader's model is built and the figures run it."""
    return _state.get("model") is not None


def loaded():
    return is_open()


def open_source(source, budget_mb=cards.PLAN_MB):
    """The card of SOURCE's header, read before anything else (see the module)."""
    close()
    try:
        c = cards.read(Sequential(source), file_size=source.size, budget_mb=budget_mb)
        cfg = gmodel.config(c.fields, set(c.tensors))[1]
        gtok.check(c.fields)  # a vocabulary this page cannot read is refused now
    except cards.Refused as e:
        return {"ok": False, "reason": e.reason, "message": str(e)}
    except gguf.GGUFError as e:
        message = (
            f"This file cannot run here: {e}. A GGUF file of SmolLM2, Llama, Qwen2 or GPT-2 works."
        )
        return {"ok": False, "reason": "model", "message": message}
    need = -(-c.memory_bytes // cards.MB)  # the card's plan: base and working memory in it
    if not memory.room(need):
        message = (
            f"This model needs about {need:,} MB of memory here, more than this browser gives "
            "the page (phones often give less): nothing past its header was read. A smaller "
            "model file, or a browser on a computer, works."
        )
        return {"ok": False, "reason": "memory", "message": message}
    order = sorted(c.tensors, key=lambda n: c.tensors[n].start)
    _state.update(source=source, card=c, config=cfg, order=order, store={}, read=0, model=None)
    return {"ok": True, "lines": c.lines(), "of": len(order)}


def open_card(size):
    """The card of the File the worker holds (SIZE bytes): see open_source."""
    return open_source(BlobSource(int(size)))


def load_step(budget=None):
    """Read tensors until BUDGET seconds (BUDGET_S) have gone, at least one; the last step
    builds the model: -> {"done", "of", "ready"}. A browser that runs out of memory on the way
    gets MemoryError(MEMORY), and what was read is let go."""
    budget = BUDGET_S if budget is None else budget
    try:
        if "tok" not in _state:  # first, while the worker holds no weights: its making
            _state["tok"] = gtok.tokenizer(_state["card"].fields)  # takes several times its size
        _read(budget)
        ready = _state["read"] == len(_state["order"])
        if ready and not is_open():
            _build()
    except MemoryError:
        close()
        raise MemoryError(MEMORY) from None
    return {"done": _state["read"], "of": len(_state["order"]), "ready": ready}


def _read(budget):
    """The next tensors, each one slice of the file, until BUDGET seconds have gone."""
    c, order, store = _state["card"], _state["order"], _state["store"]
    start = time.perf_counter()
    while _state["read"] < len(order):
        name = order[_state["read"]]
        t = c.tensors[name]
        # the float32 array first, the bytes after it: let go, they leave no hole under the
        # weights (Pyodide's heap never gives memory back)
        out = None if _as_blocks(c, name) else np.empty(t.shape, np.float32)
        raw = np.frombuffer(_state["source"].slice(t.start, t.nbytes), np.uint8)
        if len(raw) != t.nbytes:
            raise cards.Truncated(f"The file ended inside tensor {name}: download it again.")
        store[name] = raw if out is None else quants.dequantize(raw, t.kind, t.shape, out=out)
        _state["read"] += 1
        if time.perf_counter() - start >= budget:
            break


def _as_blocks(c, name):
    """Whether the card's plan keeps tensor NAME as the file's blocks: a layer past those it
    keeps in float32, or the embedding and output matrix under a plan with rows."""
    if name in cards.EMBEDDING:
        return c.plan.rows
    parts = name.split(".")
    return parts[0] == "blk" and int(parts[1]) >= c.plan.layers


def _build():
    c, cfg, store = _state["card"], dict(_state["config"]), _state["store"]

    def tensor(name):
        t = c.tensors[name]
        if _as_blocks(c, name):  # kept: read again whenever the forward needs it
            if name in cards.EMBEDDING:
                return gmodel.Rows(t.kind, t.shape, store[name])
            return quants.dequantize(store[name], t.kind, t.shape)
        return store.pop(name)  # float32 already, held by the model from now on

    if "rope_freqs.weight" in store:
        cfg["freq_factors"] = tensor("rope_freqs.weight")
    model = gmodel.build(c.architecture, cfg, tensor, c.plan)
    if c.keeps == "float32":
        model.tensors = None
        store.clear()
    _state["model"] = model
    _runs.clear()
    _written.clear()
    _state["checks"] = checks()


def close():
    """Forget the reader's model: the figures run SmolLM2 again."""
    _state.clear()
    _runs.clear()
    _written.clear()
    return True


def model():
    """-> (the model, its tokenizer), as smollm2.live.model() gives SmolLM2's."""
    return _state["model"], _state["tok"]


def kept(key, make):
    """MAKE() worked out once for the file open now and kept with it under KEY: let go with
    the model when it is closed or another file is opened."""
    store = _state.setdefault("kept", {})
    if key not in store:
        store[key] = make()
    return store[key]


def checked():
    """The card's checks: [(what, passed, said)] (see checks)."""
    return _state["checks"] if is_open() else []


def architecture():
    return _state["card"].architecture


def keeps():
    """ "float32", "mixed" or "blocks": how the open file's weights are held (card.Card.keeps)."""
    return _state["card"].keeps


def name():
    c = _state.get("card")
    return (c.name or "your model") if c else ""


def card_lines():
    return _state["card"].lines() if is_open() else []


# the checks that need no reference


def checks():
    """What the page can check of the reader's model without any other model: the KV cache,
    read in PIECES, against the full forward of a short text (the largest |Δ logit|), and the
    tokenizer's round trip (text -> ids -> text). -> [(what, passed, said)]."""
    model, tok = _state["model"], _state["tok"]
    n = sum(PIECES)
    try:
        ids = encode(CHECK_TEXT)[0][:n]
        said = tok.encode(ROUND_TRIP)
        back = tok.decode(said)
    except (KeyError, ValueError):  # a vocabulary without some of the text's bytes
        ids, said, back = list(range(min(n, model.vocab))), None, None
    _, full = model.forward(ids)
    cache, rows, at = model.new_cache(), [], 0
    for piece in PIECES:
        if at < len(ids):
            rows.append(model.step(ids[at : at + piece], cache)[1])
        at += piece
    delta = float(np.abs(np.concatenate(rows) - full).max())
    same = back == ROUND_TRIP
    if said is None:
        trip = "Tokenizer round trip: the vocabulary cannot spell the test text (fail)."
    else:
        trip = f"Tokenizer round trip, text → {len(said)} ids → text: " + (
            "the same text (pass)." if same else f"gave back {back[:80]!r} (fail)."
        )
    pieces = ", ".join(map(str, PIECES[:-1])) + f" and {PIECES[-1]}"
    return [
        (
            "kv",
            delta <= KV_BOUND,
            f"KV cache, read {pieces} tokens at a time, against the full forward on "
            f"{len(ids)} tokens: max |Δ logit| = {delta:.1e} "
            f"({'pass' if delta <= KV_BOUND else 'fail'}, at most {KV_BOUND:.0e}).",
        ),
        ("tokens", same, trip),
    ]


# the live model's interface (as smollm2/live.py's)


def encode(text):
    """TEXT's first MAX_TOKENS token ids as the model reads them (its BOS first where the file
    asks for one) -> (ids, whether the text was cut)."""
    if text in _written:
        return _written[text], False
    ids = gtok.for_model(_state["tok"], text)
    return ids[:MAX_TOKENS], len(ids) > MAX_TOKENS


def text_of(ids):
    tok = _state["tok"]
    return tok.decode([i for i in ids if i != tok.bos])


def piece(i):
    return _state["tok"].shown(i)


def next_piece(ids, i):
    return _state["tok"].next_shown(ids, i)


def cut_note(ids):
    end = text_of(ids[-4:]).strip()
    return (
        f"Your text is longer than {MAX_TOKENS} tokens: the model here reads its first "
        f"{MAX_TOKENS}, up to “{end}”."
    )


def ends(i):
    """Whether token id I is the file's end-of-text token."""
    return i == _state["card"].fields.get("tokenizer.ggml.eos_token_id")


class Run(shipped.Run):
    """A text's forward on the reader's model, as SmolLM2's (kept here, not with its runs)."""

    def forget(self):
        _runs.pop(tuple(self.ids), None)


def run(ids):
    return _runs.keep(tuple(ids), lambda: Run(_state["model"], ids))


def extend(r, nxt):
    new = r.extended(nxt)
    _runs.put(tuple(new.ids), new)
    _written[text_of(new.ids)] = new.ids
    while len(_written) > 4 * MAX_TOKENS:
        _written.pop(next(iter(_written)))
    return new
