"""The reader's own sentence in all-MiniLM-L6-v2, run where the figure runs.

The build ships the model's compact weights (compact.py) as one file (the recipe
sitebuild/models/minilm.py makes it); realheads/live.json names it, its size and sha256. In
the browser the page fetches that file only when the reader asks (templates/static/ownmodel.js:
a progress bar, then a cache of its own for later visits) and writes it into Pyodide's file
system at HOME/FILE; the figure asks `loaded()` and then `sentence(text)`, which returns the
same dict as maps.sentence does for a curated sentence, so labels and summaries come from the
same code. Under CPython (tests, the benchmark) `use` names the file instead.
"""

import functools
import json
from pathlib import Path

from ...page import data
from ...page.linalg import IN_BROWSER
from ...page.recent import Recent
from .bert import Bert
from .compact import Compact
from .wordpiece import WordPiece

MAX_WORDS = 32
MAX_CHARS = 400  # 32 long words; every piece of them fits in the model's 512 positions
KEEP_CHARS = 1000  # the most of a reader's text the state keeps (a link can hold anything)
HOME = Path("/home/pyodide/models")
SID = "own"
# the most memory the worker needs with the model in it (MB; bench/RESULTS.md measures it, 165):
# a browser that cannot give it is told so before the download (static/ownmodel.js)
MEMORY_MB = 300
WARM = f"{__name__}:warm"  # what the page calls once the file is in the worker
_state = {"path": None, "model": None, "wp": None}
_done = Recent(4)  # the last few sentences' maps, by text


@functools.cache
def manifest():
    """realheads/live.json, read once (every drawing of the figure asks it; don't change it)."""
    return json.loads(data.read_text("realheads/live.json"))


def files():
    """The manifest's entry for the one file the page fetches, in a list."""
    m = manifest()
    return [{k: m[k] for k in ("file", "bytes", "sha256")}]


def size_mb():
    """'42.5 MB': the file's real size, as the page says it."""
    return f"{manifest()['bytes'] / 1e6:.1f} MB"


def use(path):
    """Run the model from the compact file at PATH (CPython: tests, the benchmark)."""
    _state.update(path=Path(path), model=None, wp=None)
    _done.clear()


def path():
    return _state["path"] or HOME / manifest()["file"]


def loaded():
    """Whether the model's file is here: in the browser, once the reader has loaded it."""
    return _state["model"] is not None or path().is_file()


def model():
    """-> (Bert, WordPiece) from the compact file, read once."""
    if _state["model"] is None:
        c = Compact(path())
        if IN_BROWSER:  # the bytes are in Python now: the file's copy would only take room
            path().unlink()
        lines = c.vocab_text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        _state["wp"] = WordPiece({piece: i for i, piece in enumerate(lines)})
        _state["model"] = Bert(c, c.config)
    return _state["model"], _state["wp"]


def problem(text):
    """What keeps TEXT from the model, in a sentence for the reader; None when nothing does."""
    words = text.split()
    if not words:
        return "Type a sentence in the box first: it is empty."
    if len(words) > MAX_WORDS:
        return (
            f"That is {len(words)} words; the model here takes up to {MAX_WORDS}. "
            "Shorten it and show it again."
        )
    if len(text) > MAX_CHARS:
        return (
            f"That is {len(text)} characters; the model here takes up to {MAX_CHARS}. "
            "Shorten it and show it again."
        )
    return None


def tokens(text):
    """The WordPiece pieces the model sees, [CLS] … [SEP]."""
    return model()[1].tokenize(text)


def sentence(text):
    """The reader's TEXT as maps.sentence gives a curated one: tokens, sinks, att
    (layers, heads, T, T) in float64. Raises ValueError with the reader's message."""
    return _done.keep(text, lambda: _run(text))


def _run(text):
    """TEXT's maps, worked out (sentence() keeps the last few)."""
    said = problem(text)
    if said:
        raise ValueError(said)
    bert, wp = model()
    pieces, ids = wp.encode(text)
    if len(pieces) <= 2:
        raise ValueError("The model finds no word in that text: try letters or digits.")
    return {
        "v": 1,
        "model": manifest()["model"],
        "id": SID,
        "text": text,
        "tokens": pieces,
        "sinks": [0, len(pieces) - 1],
        "causal": False,
        "att": bert.attentions(ids),
    }


def attentions(text):
    """TEXT's maps as nested lists of floats (for the tests: the browser's against CPython's)."""
    d = sentence(text)
    return {"tokens": d["tokens"], "att": d["att"].tolist()}


def warm():
    """Read the file and run a two-word sentence, so the reader's first one is quick;
    -> the number of tokens the model knows."""
    sentence("Hello there.")
    return len(model()[1].vocab)
