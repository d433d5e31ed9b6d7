"""The reader's own pair of texts in SmolLM2, live: the same three measures as the export's,
computed in the page on two texts and two candidate next words the reader types.

The model is "Heads that copy"'s, whichever is open (toymodels/models/causal.py): SmolLM2
(toymodels/models/smollm2/live.py: the same two files, fetched when the reader asks and kept,
the same forward) or the reader's own GGUF file (toymodels/models/ownfile.py). A pair is two
Traces (attribution.py) computed a few layers per call, so the page draws progress and answers
other taps between the pieces;
then, for the token the reader taps, every head's direct logit attribution and its attention
to the word that differs, both read from the kept traces (no forward); and the patches the
reader asks for (patching.py), each one forward, also computed in pieces and timed.
"""

from ..models import ownfile
from ..models.causal import live as model_live
from ..page.recent import Recent
from .attribution import Trace, attribute, logit_diff
from .patching import Patch, positions

KEEP = 2  # the last pairs' traces kept (two traces of up to 64 tokens: about 18 MB each pair)
MAX_PATCHES = 40  # patches kept per pair (each holds its final residual stream, T x 576)
NO_CORRUPT = "Type the second text: the first with one word changed."
NO_CANDIDATES = "Type the two candidate next words, a and b."
SAME_CANDIDATES = (
    "The two candidates are the same token, so the difference between their logits is always "
    "0: type two different words."
)
SAME_TEXTS = "The two texts are the same: change one word in the second."
_pairs = Recent(KEEP)  # SmolLM2's: (the model's id, clean ids, corrupt ids) -> Pair


class Pair:
    """The clean and corrupted texts' traces, computed a piece at a time, and the patches
    asked for on them."""

    def __init__(self, llama, clean, corrupt):
        self.traces = (Trace(llama, clean, lazy=True), Trace(llama, corrupt, lazy=True))
        self.differ = [n for n, (i, j) in enumerate(zip(clean, corrupt, strict=True)) if i != j]
        self.patches = Recent(MAX_PATCHES)  # heads (tuple of (layer, head)) -> Patch

    @property
    def layers(self):
        """(layers computed, layers in all) over both texts."""
        return sum(t.done for t in self.traces), 2 * self.traces[0].model.n_layer

    @property
    def complete(self):
        return all(t.complete for t in self.traces)

    def advance(self, budget=None):
        """Compute the clean text's layers, then the corrupted one's, until BUDGET seconds
        (model_live.BUDGET_S) have gone; a new pair's first call computes one layer."""
        if budget is None:
            budget = model_live.BUDGET_S if self.layers[0] else 0.0
        for t in self.traces:
            if not t.complete:
                t.advance(budget)
                break
        return self

    def finish(self):
        while not self.complete:
            self.advance(float("inf"))
        return self

    def attribution(self, t, a, b):
        """Every part's direct share of logit[a] - logit[b] at token t of the clean text
        (attribution.attribute)."""
        return attribute(self.traces[0], t, a, b)

    def attention(self, t):
        """(layers, heads): each head's attention from token t of the clean text to the tokens
        that differ (those before or at t; 0 where none is)."""
        seen = [j for j in self.differ if j <= t]
        return self.traces[0].maps[:, :, t, seen].sum(-1)

    def logit_diffs(self, t, a, b):
        """logit[a] - logit[b] at token t in the clean and the corrupted text."""
        return tuple(logit_diff(tr.model, tr.x[-1, t], a, b) for tr in self.traces)

    def patch(self, heads, way="denoise", where="every", t=None):
        """The Patch of HEADS on this pair, WAY and WHERE as patching.Patch and
        patching.positions take them (T the token measured, default the last), kept (maybe
        not complete yet)."""
        t = len(self.traces[0].ids) - 1 if t is None else t
        chosen = tuple(sorted(set(heads)))
        at = positions(where, t, self.differ)
        key = (chosen, way, str(at))
        return self.patches.keep(key, lambda: Patch(*self.traces, chosen, way, at))


def candidate(word):
    """The token ids a typed candidate WORD reads as (one, for a word the model reads whole). A
    word is read with a space before it, as a word that follows another is; one already
    starting with a space or punctuation is read as typed."""
    word = word.strip()
    return model_live.encode(word if not word or not word[0].isalnum() else " " + word)[0]


def pair(clean, corrupt):
    """The Pair of two token-id lists of the same length (kept for the last KEEP pairs)."""
    model = model_live.model()[0]  # the live model open now (SmolLM2, or the reader's file)
    key = (id(model), tuple(clean), tuple(corrupt))  # a kept pair holds its model: ids differ
    return kept_pairs().keep(key, lambda: Pair(model, clean, corrupt))


def kept_pairs():
    """Where the pairs of the model open now are kept: SmolLM2's here; a reader's file's with
    the file (ownfile.kept), so that closing it, or opening another, lets its pairs go and with
    them its model, which each pair holds (hundreds of MB for a file of SmolLM2's size)."""
    if ownfile.is_open():
        return ownfile.kept("what_a_head_does.pairs", lambda: Recent(KEEP))
    return _pairs
