"""Direct logit attribution: how much each head's output, carried straight to the logits,
pushes the model towards token a rather than token b at one position.

The residual stream leaving the last layer at position t is a sum of what wrote into it:

    x[t] = embed[id_t] + sum over layers (sum over heads y_h[t] @ Wo[h] + rest[t])

where y_h (T, hs) is head h's output before the output projection, Wo[h] (hs, d) its slice
of that projection and rest the layer's other writes (its MLP, and in GPT-2 the biases of the
attention's output and the MLP). The logits are norm(x) @ out.T, where out (V, d) is the
model's output matrix (the embedding itself in a tied model such as SmolLM2, a matrix of its
own where the file has output.weight). With the final norm's scale frozen at the value it
takes at x[t], the logit difference is linear in x[t], plus a constant:

    logit[a] - logit[b] = x[t] . u + c

    RMSNorm (Llama, Qwen2):  u = w * (out[a] - out[b]) / r,  r = sqrt(mean(x[t]^2) + eps),  c = 0
    LayerNorm (GPT-2):       u = centre(w * (out[a] - out[b])) / s,
                             s = sqrt(mean(centre(x[t])^2) + eps),  c = bias . (out[a] - out[b])

(centre(v) = v - mean(v): subtracting the mean is linear, and centre(x) . v = x . centre(v)).
Each term of the sum gets its share, x_part . u: the heads' shares (layers, heads), the
embedding's (in GPT-2 with its learned position) and each layer's rest ("mlp"), and the final
norm's bias gets c ("bias", 0 without one); together they add up to the model's own difference.
Freezing the scale is what makes it "direct": a head also changes r (or s), and everything
after it; those indirect paths are what patching measures instead.
"""

import time

import numpy as np

from ..models.gguffile.gpt2 import GPT2


class Trace:
    """One forward of `model` (a toymodels.models.smollm2.llama.Llama, or a llama, qwen2 or
    gpt2 file's model from toymodels.models.gguffile) on `ids`, kept whole:
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
        self.x[0] = model.inputs(ids)
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
    """u (d,) float64: x (d,) . u + offset(model, a, b) is logit[a] - logit[b] for the residual
    stream x at one position, and part . u the share of any part of x, with the final norm's
    scale frozen at x's (see the module). The rows are the model's output matrix's
    (`model.out`: the embedding where tied)."""
    x = np.asarray(x, np.float64)
    diff = model.out[a].astype(np.float64) - model.out[b].astype(np.float64)
    if isinstance(model, GPT2):  # LayerNorm: centres x, then scales and adds its bias
        c = x - x.mean()
        v = model.norm[0].astype(np.float64) * diff
        return (v - v.mean()) / np.sqrt((c * c).mean() + model.eps)
    r = np.sqrt((x * x).mean() + model.eps)
    return model.norm.astype(np.float64) * diff / r


def offset(model, a, b):
    """What the final norm's bias adds to logit[a] - logit[b], the same at every position
    (GPT-2's LayerNorm; 0.0 for an RMSNorm, which has none)."""
    if not isinstance(model, GPT2):
        return 0.0
    diff = model.out[a].astype(np.float64) - model.out[b].astype(np.float64)
    return float(model.norm[1].astype(np.float64) @ diff)


def logit_diff(model, x, a, b):
    """logit[a] - logit[b] for the residual stream x (d,) leaving the last layer (float64,
    without the other V - 2 logits)."""
    return float(np.asarray(x, np.float64) @ direction(model, x, a, b)) + offset(model, a, b)


def attribute(trace, t, a, b):
    """Each part's direct share of logit[a] - logit[b] at position t: {"heads": (layers, H),
    "embed": float, "mlp": (layers,), "bias": float, "total": the model's difference},
    float64. The heads, the embedding (with GPT-2's learned position), the MLPs and the final
    norm's bias add up to the total (to float rounding); a layer's "mlp" share is what its
    whole step wrote minus its heads' (its MLP's, and in GPT-2 its biases'; the rounding of the
    forward's own sums lands there too, ~1e-6)."""
    m, x = trace.model, trace.x.astype(np.float64)  # x (layers+1, T, d)
    u = direction(m, x[-1, t], a, b)  # (d,)
    bias = offset(m, a, b)
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
        "bias": bias,
        "total": float(x[-1, t] @ u) + bias,
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
