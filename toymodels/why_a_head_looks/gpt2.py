"""Why a head of a reader's GPT-2 file looks where it does: SmolLM2's split (smollm2.py) on
GPT-2's forward (toymodels/models/gguffile/gpt2.py).

The residual stream entering layer l at position t is a sum of components:

    x[t] = embed[id_t] + pos[t] + sum over layers m < l
           (sum over heads y_h[t] @ Wo[h] + bo_m + mlp_m[t])

(the token's embedding, its learned position, each earlier head's output through its slice
Wo[h] of the output projection, that projection's bias, each earlier feed-forward block's
output, its biases included). Layer l reads x through a LayerNorm, ln(x) = (x - mean(x)) * w / r
+ b with r = sqrt(var(x) + eps): the mean is linear in x, so with r frozen at its value for
that position ln(x) is the sum of each component's own centred value times w / r, plus the
norm's bias b, one more component, the same at every position (as the character model's,
split.py). A head's query is ln(x_i) @ Wq[h] + bq[h] and its keys ln(x_j) @ Wk[h] + bk[h]: no
rotary turn, and the projection's bias is the component split.QK_BIAS. So the score is exactly
a sum over (query component, key component) pairs, and the knockout recomputes the norm.
"""

import numpy as np

from ..models.gguffile.gpt2 import layernorm
from ..page.html import head_name
from ..page.linalg import matmul
from . import smollm2 as s2
from . import split as sp


def out_bias_name(layer):
    """A layer's output projection's bias, from its 1-based layer: 'out bias 1'."""
    return f"out\u00a0bias\u00a0{layer}"


class Split(s2.Split):
    """One forward of MODEL (a toymodels.models.gguffile.gpt2.GPT2) on IDS, kept whole, to split
    any head's scores; LAZY as smollm2.Split's."""

    def embedded(self):
        T = len(self.ids)
        return self.model.embed[self.ids] + self.model.pos[:T]  # as the forward adds them

    def angles(self, T):
        return None, None  # no rotary turn: positions are a component of the stream

    def writes(self, m):
        """Layer M's heads' writes (H, T, d), its output projection's bias (T, d) and its
        feed-forward block's write (T, d), float64: the last is the layer's whole step less
        the others, so the three add up to what the forward added to the stream."""
        if self._writes[m] is None:
            H, hs = self.model.n_head, self.model.hs
            L = self._layer(m)
            wo = L["o"].astype(np.float64).reshape(H, hs, -1)  # (H, hs, d)
            heads = self.y[m].astype(np.float64) @ wo  # (H, T, d)
            bias = np.broadcast_to(L["o_b"].astype(np.float64), heads.shape[1:])  # (T, d)
            step = self.x[m + 1].astype(np.float64) - self.x[m].astype(np.float64)
            self._writes[m] = (heads, bias, step - heads.sum(0) - bias)
        return self._writes[m]

    def names(self, layer):
        names = [s2.TOKEN, sp.POSITION]
        for m in range(layer):
            names += [head_name(m + 1, h + 1) for h in range(self.model.n_head)]
            names += [out_bias_name(m + 1), sp.mlp_name(m + 1)]
        return names

    def _part(self, layer, n):
        """The N-th component (T, d), made alone: the token, the position, then per layer its
        heads, its output projection's bias and its feed-forward block."""
        if n < 2:
            return self._first()[n]
        m, h = divmod(n - 2, self.model.n_head + 2)
        heads, bias, mlp = self.writes(m)
        return heads[h] if h < self.model.n_head else (bias, mlp)[h - self.model.n_head]

    def _first(self):
        """(the tokens' embeddings, their positions), each (T, d) float64."""
        m, T = self.model, len(self.ids)
        return np.asarray(m.embed[self.ids], np.float64), m.pos[:T].astype(np.float64)

    def parts(self, layer):
        parts = list(self._first())
        for m in range(layer):
            heads, bias, mlp = self.writes(m)
            parts += [*heads, bias, mlp]
        return self.names(layer), np.stack(parts)  # (C, T, d)

    def reads(self, layer):
        """(names, reads (C+1, T, d)): through the LayerNorm with the scale frozen, each
        component centred, the norm's bias last (the same at every position)."""
        if self._reads[0] != layer:
            names, parts = self.parts(layer)
            w, b = (a.astype(np.float64) for a in self._layer(layer)["attn_norm"])
            x = self.stream(layer)
            c = x - x.mean(-1, keepdims=True)
            r = np.sqrt((c * c).mean(-1, keepdims=True) + self.model.eps)  # (T, 1) frozen
            parts -= parts.mean(-1, keepdims=True)  # in place: the mean is linear
            parts *= w / r
            bias = np.broadcast_to(b, parts.shape[1:])[None]  # (1, T, d)
            self._reads = (layer, (names + [sp.NORM_BIAS], np.concatenate([parts, bias])))
        return self._reads[1]

    def norm(self, layer, x):
        w, b = (a.astype(np.float64) for a in self._layer(layer)["attn_norm"])
        return layernorm(np.asarray(x, np.float64), w, b, self.model.eps)

    def weights(self, layer, head):
        """(Wq, Wk) of HEAD of LAYER, each (d, hs) float64: columns of the fused matrix."""
        d, hs = self.model.d, self.model.hs
        qkv = self._layer(layer)["qkv"]  # (d, 3d): the queries, the keys, the values
        wq = qkv[:, head * hs : (head + 1) * hs]
        wk = qkv[:, d + head * hs : d + (head + 1) * hs]
        return wq.astype(np.float64), wk.astype(np.float64)

    def bias(self, layer, head, i):
        d, hs = self.model.d, self.model.hs
        b = self._layer(layer)["qkv_b"].astype(np.float64)
        bk = b[d + head * hs : d + (head + 1) * hs]
        return b[head * hs : (head + 1) * hs], np.broadcast_to(bk, (i + 1, hs))

    def query(self, layer, head, read, i):
        return read @ self.weights(layer, head)[0]

    def key(self, layer, head, read):
        return matmul(read, self.weights(layer, head)[1])
