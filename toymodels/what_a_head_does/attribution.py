"""Direct logit attribution: how much each head's output, carried straight to the logits,
pushes the model towards token a rather than token b at one position.

The residual stream leaving the last layer at position t is a sum of what wrote into it:

    x[t] = embed[id_t] + sum over layers (sum over heads y_h[t] @ Wo[h] + mlp[t])

where y_h (T, hs) is head h's output before the output projection and Wo[h] (hs, d) its slice
of that projection. The logits are rmsnorm(x) @ out.T (the output matrix: the embedding
itself in a tied model such as SmolLM2), so with the norm's scale frozen at
r = sqrt(mean(x[t]^2) + eps), the logit difference is linear in x[t]:

    logit[a] - logit[b] = x[t] . u,    u = norm_weight * (out[a] - out[b]) / r   (d,)

and each term of the sum gets its share, x_part . u: the heads' shares (layers, heads), the
embedding's and each layer's MLP's (the rest), which add up to the model's own difference.
Freezing r is what makes it "direct": a head also changes r, and everything after it; those
indirect paths are what patching (the export's) measures instead.
"""

import time

import numpy as np


class Trace:
    """One forward of `model` (a toymodels.models.smollm2.llama.Llama) on `ids`, kept whole:
    y (layers, H, T, hs) every head's output before the output projection, x (layers+1, T, d)
    the residual stream entering each layer and (last) leaving the model, maps
    (layers, H, T, T) the attention. float32, as the forward computed them. With `lazy`, the
    layers are computed by `advance` a few at a time (the page's long forwards), `done` of them
    so far."""

    def __init__(self, model, ids, lazy=False):
        n, T = model.n_layer, len(ids)
        self.model, self.ids = model, list(ids)
        self.y = np.empty((n, model.n_head, T, model.hs), np.float32)
        self.x = np.empty((n + 1, T, model.d), np.float32)
        self.maps = np.empty((n, model.n_head, T, T), np.float32)
        self.x[0] = model.embed[np.asarray(ids, dtype=np.int64)]
        self.done = 0

        def keep(i, y):
            self.y[i] = y

        self._steps = model.run(ids, tap=keep)
        if not lazy:
            self.advance(float("inf"))

    @property
    def complete(self):
        return self.done == self.model.n_layer

    def advance(self, budget=0.0):
        """Compute layers until BUDGET seconds have gone (at least one layer) or all are
        done; -> self."""
        start = time.perf_counter()
        for i, a, x in self._steps:
            self.maps[i], self.x[i + 1], self.done = a, x, i + 1
            if time.perf_counter() - start >= budget:
                break
        return self


def out_proj(model, i):
    """Layer i's output projection (H*hs, d), laid out (in, out)."""
    return (model.layers[i] if model.layers is not None else model.layer(i))["o"]


def direction(model, x, a, b):
    """u (d,) float64: x (d,) . u is logit[a] - logit[b] for the residual stream x at one
    position, and part . u the share of any part of x, with the norm's scale frozen at x's."""
    x = np.asarray(x, np.float64)
    r = np.sqrt((x * x).mean() + model.eps)
    diff = model.out[a].astype(np.float64) - model.out[b].astype(np.float64)
    return model.norm.astype(np.float64) * diff / r


def logit_diff(model, x, a, b):
    """logit[a] - logit[b] for the residual stream x (d,) leaving the last layer (float64,
    without the other V - 2 logits)."""
    return float(np.asarray(x, np.float64) @ direction(model, x, a, b))


def attribute(trace, t, a, b):
    """Each part's direct share of logit[a] - logit[b] at position t: {"heads": (layers, H),
    "embed": float, "mlp": (layers,), "total": the model's difference}, float64. The heads,
    the embedding and the MLPs add up to the total (to float rounding); a layer's MLP share is
    what its whole step wrote minus its heads' (so the rounding of the forward's own sums
    lands there, ~1e-6)."""
    m, x = trace.model, trace.x.astype(np.float64)  # x (layers+1, T, d)
    u = direction(m, x[-1, t], a, b)  # (d,)
    n, H, hs = m.n_layer, m.n_head, m.hs
    heads = np.empty((n, H))
    for i in range(n):
        w = out_proj(m, i).astype(np.float64) @ u  # (H*hs,): u seen from each head's output
        heads[i] = (trace.y[i, :, t].astype(np.float64) * w.reshape(H, hs)).sum(-1)
    step = (x[1:, t] - x[:-1, t]) @ u  # (layers,): what each layer wrote, heads and MLP
    return {
        "heads": heads,
        "embed": float(x[0, t] @ u),
        "mlp": step - heads.sum(-1),
        "total": float(x[-1, t] @ u),
    }


def ranks(v):
    """Ranks 1..n of v (n,), ties sharing their mean rank (as Spearman's correlation takes
    them)."""
    v = np.asarray(v, np.float64)
    order = np.argsort(v, kind="stable")
    r = np.empty(len(v))
    r[order] = np.arange(1, len(v) + 1)
    _, inv, counts = np.unique(v, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, weights=r)
    return sums[inv] / counts[inv]


def spearman(a, b):
    """Spearman's rank correlation of two equal-length sequences (the Pearson correlation of
    their ranks); nan where either is constant."""
    ra, rb = ranks(np.ravel(a)), ranks(np.ravel(b))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / den) if den > 0 else float("nan")
