"""Activation patching of a chosen set of heads, as the page runs it on the reader's own pair:
the corrupted text run again with those heads' outputs (y before the output projection, at
every position) taken from the clean run, and every layer after them computed as usual.

    recovered = (LD_patched - LD_corrupted) / (LD_clean - LD_corrupted)

where LD is logit[a] - logit[b] at one position. Only the layers from the first patched one
up are run: the corrupted run's residual stream entering that layer is kept in its Trace. A
patch is one forward, computed a few layers per call (`advance`) so that the page stays
answerable; `seconds` is the time its layers took. The export patches every head of a pair in
batches instead (toymodels/export/patching.py); a test checks the two agree.
"""

import time

from .attribution import logit_diff


def recovered(ld, ld_clean, ld_bad):
    """The share of the difference a patch brings back; None where the two runs' differences
    are equal (nothing to recover)."""
    gap = ld_clean - ld_bad
    return None if gap == 0 else (ld - ld_bad) / gap


class Patch:
    """The corrupted run with HEADS ((layer, head), 0-based) patched from the clean run.
    `clean`, `corrupt`: complete attribution.Trace of two texts of the same length."""

    def __init__(self, clean, corrupt, heads):
        m = clean.model
        self.model, self.heads = m, sorted({(int(L), int(h)) for L, h in heads})
        by_layer = {}
        for L, h in self.heads:
            by_layer.setdefault(L, []).append(h)

        def swap(i, y):
            # y (H, T, hs): the chosen heads of layer i take their clean output
            for h in by_layer.get(i, ()):
                y[h] = clean.y[i, h]

        first = self.heads[0][0]
        self.x, self.seconds, self.done = None, 0.0, first
        self._steps = m.run(corrupt.ids, tap=swap, start=first, x=corrupt.x[first])

    @property
    def complete(self):
        return self.x is not None

    def advance(self, budget=0.0):
        """Compute layers until BUDGET seconds have gone (at least one layer) or all are
        done; -> self. Once complete, `x` (T, d) is the patched run's final residual stream."""
        start = time.perf_counter()
        for i, _, x in self._steps:
            self.done = i + 1
            if self.done == self.model.n_layer:
                self.x = x
            if time.perf_counter() - start >= budget:
                break
        self.seconds += time.perf_counter() - start
        return self

    def logit_diff(self, t, a, b):
        """logit[a] - logit[b] at position t of the patched run."""
        return logit_diff(self.model, self.x[t], a, b)
