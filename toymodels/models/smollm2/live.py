"""The reader's own text in SmolLM2-135M-Instruct, run where the figures run.

The build repacks the model's GGUF into two files (the recipe sitebuild/models/smollm2.py); the
manifest toymodels/data/smollm2/live.json names them, with their sizes and sha256. In the
browser the page fetches them only when the reader asks (templates/static/ownmodel.js) and
writes them into Pyodide's file system at HOME/FILE, then calls `warm`; the figures ask
`loaded()` and then `text(...)`. Under CPython (tests, the benchmark) `use(folder)` names the
folder instead.

A long forward takes seconds under Pyodide, and one worker answers every figure, so a text is
computed a few layers at a time (`Run.advance`, a time budget per call): the figure draws what
is ready and says "call me again" (the kit's `more`), and the other figures' taps are answered
between the pieces.

Memory (the worker's budget is 700 MB, Pyodide included): every layer's matrices are
dequantised once and kept in float32 (425 MB), with the tied embedding (113 MB), so that a
written token costs a forward of one token and no dequantising. The weight file is read
tensor by tensor, never whole into Python, and deleted from the file system once the model
is built, so its 96.6 MB are not held twice. Measured with tracemalloc in CPython after
`warm()` (model, tokenizer, one short text): 568 MB held, 573 MB at the peak. In Pyodide
0.27.7 under Node (numpy imported: 36 MB), the WebAssembly memory is 685 MB once the model
is in, of which about 590 MB in use (tracemalloc: 553 MB; the memory grows in steps of up to
96 MB). Keeping the layers in Q4_1 instead (66 MB) would dequantise
30 layers for every written token (0.3-0.7 s in Pyodide, against the 150 ms a token may
take). A browser that cannot give the memory gets a message (MEMORY), never a crash.
"""

import functools
import json
import time
import unicodedata
from pathlib import Path

import numpy as np

from ...page import data
from ...page.html import esc
from ...page.linalg import IN_BROWSER
from ...page.recent import Recent
from . import certificate, quants
from .bpe import split
from .llama import Cache, Llama, softmax
from .weights import tokenizer

MAX_TOKENS = 64
# MB (2**20 bytes) the worker must be able to grow to before the files are fetched
# (toymodels/page/memory.py): 656 measured with the model in (bench/run.py smollm2)
MEMORY_MB = 660
WARM = f"{__name__}:warm"  # what the page calls once the files are in the worker
MAX_CHARS = 10_000  # a text is cut here before it is tokenised (never megabytes)
HOME = Path("/home/pyodide/models")
SID = "own"
BUDGET_S = 0.2  # Python's time for one piece of a long forward, then the page draws it
END = ("<|endoftext|>", "<|im_end|>")  # tokens after which the model has finished
KEEP = 4  # the last few texts' runs kept
ROWS_AT_ONCE = 8  # rows of logits computed together (best_after)
EMPTY = "Type some text in the box first: it is empty."
SPACES = "The box holds only spaces: type a few words."
ONE = (
    "One token: each head has only it to look at, so every map is one full square. Type a few "
    "more words to see the heads differ."
)
FULL = f"The text has {MAX_TOKENS} tokens, the most the model here reads: writing stopped."
FINISHED = "The model wrote its end-of-text token: it has finished, so writing stopped."
CONTROL = (
    "The model wrote a control character, which is not text this page reads (it would be "
    "removed, and the model would write it again): writing stopped."
)
MEMORY = (
    "This browser did not give the model the memory it needs (about 700 MB): close other "
    "tabs and try again, or use a computer rather than a phone."
)
_state = {"folder": None, "model": None, "bpe": None}
_runs = Recent(KEEP)  # ids (tuple) -> Run
_written = {}  # text written on by the model -> its ids (the model's own tokens, kept)


@functools.cache
def manifest():
    """smollm2/live.json, read once."""
    return json.loads(data.read_text("smollm2/live.json"))


def files():
    """The manifest's entries for the two files the page fetches: weights, then tokenizer."""
    m = manifest()
    return [m["weights"], m["tokenizer"]]


def size_mb():
    """'97.7 MB': both files' size, as the page says it."""
    return f"{sum(f['bytes'] for f in files()) / 1e6:.1f} MB"


def use(folder):
    """Run the model from the files in FOLDER (CPython: tests, the benchmark)."""
    _state.update(folder=Path(folder), model=None, bpe=None)
    _runs.clear()
    _written.clear()


def folder():
    return _state["folder"] or HOME


def loaded():
    """Whether the model is here: in the browser, once the reader has loaded it."""
    return _state["model"] is not None or all((folder() / f["file"]).is_file() for f in files())


def _tensors(path):
    """name -> float32 tensor, read from the weight file one tensor at a time."""
    info = {t["name"]: t for t in manifest()["tensors"]}
    handle = open(path, "rb")  # noqa: SIM115 (closed by model() once every tensor is read)

    def tensor(name):
        t = info[name]
        handle.seek(t["offset"])
        return quants.dequantize(handle.read(t["bytes"]), t["kind"], tuple(t["shape"]))

    return tensor, handle


def model():
    """-> (Llama, BPE), built once from the files. Raises MemoryError(MEMORY) where the
    browser cannot give the memory."""
    if _state["model"] is None:
        weights, tok = (folder() / f["file"] for f in files())
        try:
            bpe = tokenizer(tok.read_text("utf-8"))
            tensor, handle = _tensors(weights)
            with handle:
                llama = Llama(manifest()["config"], tensor, keep=True)
            llama.tensors = None  # every layer is kept: nothing reads the file again
        except MemoryError:
            raise MemoryError(MEMORY) from None
        if IN_BROWSER:  # the numbers are in Python now: the files' copies would only take room
            weights.unlink()
            tok.unlink()
        _state.update(model=llama, bpe=bpe)
    return _state["model"], _state["bpe"]


# the reader's text


def tidy(text):
    """The reader's TEXT as the model may read it -> (text, notes): cut to MAX_CHARS, control
    characters (other than line breaks and tabs) removed; each note says what was done."""
    notes = []
    if len(text) > MAX_CHARS:
        notes.append(
            f"Your text is longer than {MAX_CHARS:,} characters: only its first {MAX_CHARS:,} "
            "are read."
        )
        text = text[:MAX_CHARS]
    kept = "".join(c for c in text if c in "\n\t" or unicodedata.category(c) != "Cc")
    if len(kept) != len(text):
        n = len(text) - len(kept)
        notes.append(
            f"{n} control character{'s were' if n != 1 else ' was'} removed: they are not "
            "text the model reads."
        )
    return kept, notes


def problem(text):
    """What keeps TEXT from the model, in a sentence for the reader; None when nothing does."""
    text, _ = tidy(text)
    if not text:
        return EMPTY
    if not text.strip():
        return SPACES
    return None


def encode(text):
    """TEXT's first MAX_TOKENS token ids -> (ids, whether the text was cut). Tokenises piece by
    piece and stops once it has them: a long paste costs no more than its first tokens."""
    if text in _written:
        return _written[text], False
    bpe = model()[1]
    ids = []
    for piece in split(text, bpe.classes):
        if len(ids) > MAX_TOKENS:
            break
        spelled = "".join(bpe.spell[b] for b in piece.encode("utf-8"))
        ids += [bpe.ids[s] for s in bpe.merge(spelled)]
    return ids[:MAX_TOKENS], len(ids) > MAX_TOKENS


def cut_note(ids):
    """What the reader is told when the text was cut to its first MAX_TOKENS tokens IDS."""
    end = text_of(ids[-4:]).strip()
    return (
        f"Your text is longer than {MAX_TOKENS} tokens: the model here reads its first "
        f"{MAX_TOKENS}, up to “{end}”."
    )


def piece(i):
    """Token id I as text; a byte of a character the token holds only part of shows as <0xE4>
    (bpe.readable)."""
    return model()[1].shown(i)


def next_piece(ids, i):
    """Token id I as a guess for the token after IDS: a character the text leaves unfinished
    and I finishes is shown whole (bpe.BPE.next_shown)."""
    return model()[1].next_shown(ids, i)


class Run:
    """One text's forward, computed a few layers at a time: maps (layers, heads, T, T) float32,
    of which the first `done` layers are filled; then the final residual `x` (T, d). Holds the
    KV cache the text's writing on continues from."""

    def __init__(self, llama, ids):
        self.llama, self.ids = llama, list(ids)
        T = len(self.ids)
        self.maps = np.zeros((llama.n_layer, llama.n_head, T, T), np.float32)
        self.done = 0
        self.cache = Cache(llama.n_layer)
        self.steps = llama.run(self.ids, cache=self.cache)
        self.x = None
        self.guesses = {}
        self.best = {}  # row -> the likeliest next token (best_after)
        self.last_logits = (None, None)

    @property
    def complete(self):
        return self.x is not None

    def advance(self, budget=None):
        """Compute layers until BUDGET seconds (BUDGET_S) have gone (at least one layer) or
        all are done. A new run's first call computes one layer: the page draws it at once."""
        budget = (BUDGET_S if self.done else 0.0) if budget is None else budget
        start = time.perf_counter()
        while not self.complete:
            try:
                i, a, x = next(self.steps)
            except MemoryError:  # the forward is spent: a later try starts a new run
                self.forget()
                raise
            self.maps[i] = a
            self.done = i + 1
            if self.done == self.llama.n_layer:
                self.x = x
                self.steps = None
            if time.perf_counter() - start >= budget:
                break
        return self

    def forget(self):
        """Drop this run from the runs kept (its forward failed)."""
        _runs.pop(tuple(self.ids), None)

    def finish(self):
        while not self.complete:
            self.advance(budget=float("inf"))
        return self

    def logits(self, i):
        """The next-token logits after token I: (V,) float32, kept for the last row asked (the
        guesses shown for a written token are the logits the next one is chosen from)."""
        if self.last_logits[0] != i:
            self.last_logits = (i, self.llama.logits(self.x[i : i + 1])[0])
        return self.last_logits[1]

    def best_after(self, rows, budget=None):
        """The likeliest next token after each of ROWS, ROWS_AT_ONCE rows at a time until
        BUDGET seconds (BUDGET_S) have gone (the logits of a row cost a product with the whole
        embedding); -> {row: token id} of the rows done so far."""
        budget = BUDGET_S if budget is None else budget
        start = time.perf_counter()
        left = [i for i in rows if i not in self.best]
        for n in range(0, len(left), ROWS_AT_ONCE):
            some = left[n : n + ROWS_AT_ONCE]
            for i, j in zip(some, np.argmax(self.llama.logits(self.x[some]), -1), strict=True):
                self.best[i] = int(j)
            if time.perf_counter() - start >= budget:
                break
        return self.best

    def top(self, i, k=5):
        """The model's K likeliest next tokens after token I: [(id, probability)], likeliest
        first (ties: the lower id)."""
        if i not in self.guesses:
            self.guesses[i] = _top(self.logits(i), k)
        return self.guesses[i]

    def guessed(self):
        return len(self.guesses) == len(self.ids)

    def guess_all(self, budget=None):
        """Every token's top 5, ROWS_AT_ONCE rows at a time until BUDGET seconds (BUDGET_S)
        have gone, so that a tap on a token is answered without a product with the whole
        embedding (27 ms a row in Pyodide)."""
        budget = BUDGET_S if budget is None else budget
        start = time.perf_counter()
        left = [i for i in range(len(self.ids)) if i not in self.guesses]
        for n in range(0, len(left), ROWS_AT_ONCE):
            some = left[n : n + ROWS_AT_ONCE]
            for i, row in zip(some, self.llama.logits(self.x[some]), strict=True):
                self.guesses[i] = _top(row)
            if time.perf_counter() - start >= budget:
                break
        return self

    def extended(self, nxt):
        """This complete run with token NXT after it, read through a copy of its KV cache: a
        new Run, complete (what `extend` keeps; any live model's runs go on this way)."""
        llama, T = self.llama, len(self.ids) + 1
        ids = self.ids + [int(nxt)]
        cache = self.cache.copy()
        new = type(self).__new__(type(self))
        # the rows before the new token are as they were (no token sees the tokens after it)
        new.llama, new.ids, new.steps = llama, ids, None
        new.guesses, new.best = dict(self.guesses), dict(self.best)
        new.last_logits = (None, None)
        new.maps = np.zeros((llama.n_layer, llama.n_head, T, T), np.float32)
        new.maps[:, :, : T - 1, : T - 1] = self.maps
        x = None
        for i, a, out in llama.run([nxt], cache=cache):
            new.maps[i, :, T - 1 :, :] = a  # the new token's row: (heads, 1, T)
            x = out
        new.x = np.concatenate([self.x, x])
        new.cache, new.done = cache, llama.n_layer
        return new


def _top(logits, k=5):
    """(V,) logits -> the K likeliest tokens [(id, probability)], likeliest first (ties: the
    lower id)."""
    p = softmax(logits.astype(np.float64))
    some = np.argpartition(-p, k)[:k]  # the K largest, in no order
    order = sorted(some.tolist(), key=lambda j: (-p[j], j))
    return [(j, float(p[j])) for j in order]


def run(ids):
    """The Run of these token ids (kept for the last KEEP texts), maybe not complete yet."""
    return _runs.keep(tuple(ids), lambda: Run(model()[0], ids))


def choose(r, how="greedy", temperature=1.0, seed=0):
    """The token to write after the complete run R: the likeliest ("greedy"), or one drawn
    from the softmax of logits / TEMPERATURE by a generator seeded with (SEED, the position),
    so that a link writes the same text again."""
    logits = r.logits(len(r.ids) - 1)
    if how == "greedy" or temperature <= 0:
        return int(np.argmax(logits))
    p = softmax(logits.astype(np.float64) / temperature)
    rng = np.random.default_rng([int(seed), len(r.ids)])
    return int(rng.choice(len(p), p=p / p.sum()))


def extend(r, nxt):
    """The complete run R with token NXT written after it, read through R's KV cache (the new
    token's row is the only one computed): -> the new text's Run, complete, with a copy of R's
    cache gone on by one token (R keeps its own: Stop shows its line, and R can write on
    again)."""
    new = r.extended(nxt)
    _runs.put(tuple(new.ids), new)
    _written[text_of(new.ids)] = new.ids
    while len(_written) > 4 * MAX_TOKENS:  # the texts of a few writings
        _written.pop(next(iter(_written)))
    return new


def ends(i):
    """Whether token id I is one after which the model has finished writing."""
    return piece(i) in END


def text_of(ids):
    return model()[1].decode(ids)


def warm():
    """Read the files, build the model and run a short text, so the reader's first text is
    quick; -> the number of tokens the model knows."""
    llama, bpe = model()
    run(encode("Hello there.")[0]).finish().top(2)
    return len(bpe.tokens)


def load_box(intro):
    """What says the model is not in the browser yet: INTRO, how close the model comes to
    transformers' (its certificate), the load button naming the download's size, and its
    progress bar and status line (templates/static/ownmodel.js)."""
    size = size_mb()
    return (
        f'<div class="hc-own-load"><p>{esc(intro)}</p>'
        f'<p class="hc-own-cert">{esc(certificate.sentence())}</p>'
        f'<button type="button" data-own-load data-fk="own-load">Load SmolLM2 ({size})'
        "</button> "
        f'<progress data-own-progress max="{sum(f["bytes"] for f in files())}" value="0" '
        "hidden></progress> "
        '<span class="hc-own-status" data-own-status role="status"></span></div>'
    )
