"""The live causal model: whichever real causal model is open in the page, SmolLM2 (shipped,
smollm2/live.py) or the reader's own GGUF file (ownfile.py). The figures that run one on the
reader's text (Heads that copy 1 and 2, What a head does 3) read it through `live` alone, so
they run on either without knowing which:

    loaded(), tidy(text), problem(text), encode(text) -> (ids, cut), cut_note(ids),
    run(ids) -> a Run (advance() in pieces, complete, maps (layers, heads, T, T), top(i),
    guess_all(), best_after(rows), cache, llama: n_layer, n_head, n_kv, hs), choose(run, how,
    temperature, seed), extend(run, token) (the KV cache goes on), ends(token), text_of(ids),
    piece(i), next_piece(ids, i); SID, MAX_TOKENS, MAX_CHARS, MEMORY and the messages EMPTY,
    ONE, FULL, FINISHED, CONTROL.

`chooser()` is the choice beside "Load SmolLM2": open a model file, or, with one open, its card
and the way back (templates/static/ownfile.js reads the file into the worker).
"""

from ..page.html import esc
from . import ownfile
from .smollm2 import live as smollm2


def model():
    """The module of the model open now: the reader's file once it is built, else SmolLM2."""
    return ownfile if ownfile.is_open() else smollm2


class _Live:
    """`live.X` is X of the model open now (looked up at each use)."""

    def __getattr__(self, name):
        return getattr(model(), name)


live = _Live()


def shape():
    """(layers, heads, key/value heads) of the reader's model, or None while SmolLM2 runs."""
    if not ownfile.is_open():
        return None
    m = ownfile.model()[0]
    return m.n_layer, m.n_head, m.n_kv


def layers_heads():
    """(layers, heads) of the model open now."""
    if ownfile.is_open():
        return shape()[:2]
    config = smollm2.manifest()["config"]
    return config["n_layer"], config["n_head"]


def chooser():
    """The reader's own model file: a file input (with no file open), or the open file's card,
    its checks and the button back to SmolLM2. The status line and progress bar are the
    page's (ownfile.js) while a file is read."""
    if not ownfile.is_open():
        return (
            '<div class="mh-ownfile" data-ownfile>'
            '<label class="mh-ownfile-pick">Open a model file (.gguf) '
            '<input type="file" data-ownfile-input data-fk="ownfile"></label> '
            '<progress data-ownfile-progress max="1" value="0" hidden></progress> '
            '<span class="mh-ownfile-status" data-ownfile-status role="status"></span>'
            "</div>"
        )
    lines = "".join(f"<li>{esc(line)}</li>" for line in ownfile.card_lines())
    checks = "".join(
        f'<li data-check="{what}" class="{"pass" if ok else "fail"}">{esc(said)}</li>'
        for what, ok, said in ownfile.checked()
    )
    return (
        '<div class="mh-ownfile mh-ownfile-open" data-ownfile>'
        f"<p><strong>Running your model file: {esc(ownfile.name())}.</strong> What this "
        "figure computes on your text is your model’s; the curated texts and the numbers in "
        "the chapter’s prose are SmolLM2’s.</p>"
        f'<ul class="mh-ownfile-card">{lines}</ul>'
        f'<ul class="mh-ownfile-checks" aria-label="Checks on your model">{checks}</ul>'
        '<button type="button" data-ownfile-close data-fk="ownfile-close">Back to SmolLM2'
        "</button></div>"
    )
