"""Activation patching of a chosen set of heads, as the page runs it on the reader's own pair
and the export on the curated ones: one text run again with those heads' outputs (y before
the output projection) taken from the other text's run, at the positions chosen, and every
layer after them computed as usual.

Two ways (WAYS), as Heimersheim and Nanda name them:

    denoise  the corrupted run gets the clean output: what it recovers, the share of the
             difference that comes back, (LD_patched - LD_corrupted) / (LD_clean - LD_corrupted)
             (a head enough to carry part of the answer)
    noise    the clean run gets the corrupted output: what it loses,
             (LD_clean - LD_patched) / (LD_clean - LD_corrupted) (a head the answer needs)

where LD is logit[a] - logit[b] at one position; and three places (WHERE): every position, the
token measured only (where the attention the page shows is read), or the changed word's
tokens only. Only the layers from the first patched one up are run: the patched run's
residual stream entering that layer is kept in its Trace. A patch is one forward, computed a
few layers per call (`advance`) so that the page stays answerable; `seconds` is the time its
layers took. The export patches every head of a pair in batches instead
(toymodels/export/patching.py); a test checks the two agree.
"""

import time

from .attribution import logit_diff

WAYS = ("denoise", "noise")
WHERE = ("every", "token", "word")


def recovered(ld, ld_clean, ld_bad):
    """The share of the difference a patch of the corrupted run brings back; None where the
    two runs' differences are equal (nothing to recover)."""
    gap = ld_clean - ld_bad
    return None if gap == 0 else (ld - ld_bad) / gap


def share(ld, ld_clean, ld_bad, way):
    """A patched run's logit difference LD as the share its WAY reports: recovered (denoise)
    or lost (noise); None where the two runs' differences are equal."""
    gap = ld_clean - ld_bad
    if gap == 0:
        return None
    return (ld - ld_bad) / gap if way == "denoise" else (ld_clean - ld) / gap


def positions(where, t, differ):
    """The positions a patch replaces: every one (a slice), the token measured t alone, or the
    changed word's tokens DIFFER (those up to t: later ones cannot reach t)."""
    if where == "every":
        return slice(None)
    if where == "token":
        return [t]
    if where == "word":
        return [j for j in differ if j <= t]
    raise ValueError(f"where is one of {WHERE}, not {where!r}")


class Patch:
    """One run with HEADS ((layer, head), 0-based) patched from the other: by default the
    corrupted run with the clean outputs at every position. `clean`, `corrupt`: complete
    attribution.Trace of two texts of the same length; WAY one of WAYS; AT the positions
    replaced (`positions`)."""

    def __init__(self, clean, corrupt, heads, way="denoise", at=slice(None)):
        m = clean.model
        self.model, self.heads = m, sorted({(int(L), int(h)) for L, h in heads})
        base, source = (corrupt, clean) if way == "denoise" else (clean, corrupt)
        by_layer = {}
        for L, h in self.heads:
            by_layer.setdefault(L, []).append(h)

        def swap(i, y):
            # y (H, T, hs): the chosen heads of layer i take the other run's output at AT
            for h in by_layer.get(i, ()):
                y[h, at] = source.y[i, h, at]

        first = self.heads[0][0]
        self.x, self.seconds, self.done = None, 0.0, first
        self._steps = m.run(base.ids, tap=swap, start=first, x=base.x[first])

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
