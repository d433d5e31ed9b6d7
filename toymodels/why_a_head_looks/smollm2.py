"""Why a head of SmolLM2 looks where it does: the character model's split (split.py), on the
real model's forward (toymodels/models/smollm2/llama.py).

The residual stream entering layer l at position t is a sum of components:

    x[t] = embed[id_t] + sum over layers m < l (sum over heads y_h[t] @ Wo[h] + mlp_m[t])

(the token's embedding, each earlier head's output through its slice Wo[h] of the output
projection, each earlier feed-forward block's output). Layer l reads x through an RMSNorm,
rms(x) = x * w / r with r = sqrt(mean(x^2) + eps): with r frozen at its value for that
position it is linear in x, with no bias and no centring, so each component is read alone as
c * w / r. A query head h's query is q_i = rope_i(rms(x_i) @ Wq[h]); its keys are those of
the key head it shares with the other heads of its group (grouped-query attention: head h reads
key head h // (heads / key heads)), k_j = rope_j(rms(x_j) @ Wk[g]). RoPE turns each pair of
a vector's coordinates by an angle that depends on the position alone: a linear map at each
position, applied to each component's projection. So the score

    s[i, j] = q_i . k_j / sqrt(d_head)
            = sum over (a, b) of rope_i(read_a[i] @ Wq[h]) . rope_j(read_b[j] @ Wk[g])
                                 / sqrt(d_head)

is exactly a sum over (query component a, key component b) pairs. Freezing r is exact for the
split (r is what the forward used) and an approximation for what would happen without a
component: the knockout recomputes the norm.

The same split reads a reader's own llama or qwen2 file (toymodels/models/gguffile/), whose
forward is this one: qwen2 adds a bias to each query and key after the projection, before
RoPE, so the turned bias is one more component (split.QK_BIAS); a file too large for float32
keeps its blocks, and the split makes one layer's weights at a time (`_layer`).

The forward runs in float32 (the page's model); the split works in float64 on the forward's
own numbers. Each feed-forward component is what its layer's step wrote minus its heads'
writes, so the components add up to the float32 stream the forward carried (to float64's
rounding), and the split adds up to the score of that stream.
"""

import time

import numpy as np

from ..models.smollm2.llama import rotate
from ..page.html import head_name
from ..page.linalg import matmul
from . import split as sp

TOKEN = "token"
# the lazy forward's pieces: Python's time for one (a frame: one worker answers every figure, so
# a tap made meanwhile waits for at most this, and is drawn within two frames), made of parts of
# a layer, each a slice of ROWS to 2 ROWS - 1 tokens' rows of one product, or the attention
PIECE_S = 0.016
ROWS = 8


class Split(sp.Components):
    """One forward of MODEL (a toymodels.models.smollm2.llama.Llama) on IDS, kept whole, to
    split any head's scores (sp.Components says what it offers). LAZY: the forward is computed
    by `advance`, in pieces of a few parts of a layer, until `complete`."""

    def __init__(self, model, ids, lazy=False):
        m = self.model = model
        self.ids = np.asarray(ids, dtype=np.int64)  # (T,)
        T, n, H = len(self.ids), m.n_layer, m.n_head
        self.scale = 1 / np.sqrt(m.hs)
        self.y = np.empty((n, H, T, m.hs), np.float32)  # every head's output before Wo
        self.x = np.empty((n + 1, T, m.d), np.float32)  # the stream entering each layer
        self.maps = np.empty((n, H, T, T), np.float32)
        self.x[0] = self.embedded()
        self.done = 0  # layers computed
        self.ran = 0  # parts of the forward computed (a layer has several when LAZY)

        def keep(i, y):
            self.y[i] = y

        self._steps = m.run(self.ids, tap=keep, rows=ROWS if lazy else None)
        if not lazy:
            self.advance(float("inf"))
        self.cos, self.sin = self.angles(T)
        self._writes = [None] * n  # each layer's (head writes (H, T, d), MLP write (T, d))
        self._made = (None, None)  # (layer, its weights): the last layer dequantised
        self._reads = (None, None)  # the last layer read: (layer, (names, reads))

    def embedded(self):
        """The stream entering the first layer (T, d), float32, as the forward makes it."""
        return self.model.embed[self.ids]

    def angles(self, T):
        """RoPE's cos and sin at positions 0..T-1 (T, hs), float64: the forward's own."""
        cos, sin = self.model.rope(0, T)
        return cos.astype(np.float64), sin.astype(np.float64)

    @property
    def complete(self):
        return self.done == self.model.n_layer

    def advance(self, budget):
        """Compute the forward's parts while the next would still end within BUDGET seconds
        (judged by the longest part so far, as "Train it yourself" slices its steps) and at
        least one, so that the page draws, and answers other taps, between the pieces of a
        long forward (LAZY); -> self."""
        start = time.perf_counter()
        longest = 0.0
        while not self.complete:
            t = time.perf_counter()
            step = next(self._steps)
            self.ran += 1
            if step is not None:  # a layer is whole
                i, a, x = step
                self.maps[i], self.x[i + 1] = a, x
                self.done = i + 1
            now = time.perf_counter()
            longest = max(longest, now - t)
            if now - start + longest >= budget:  # a coarse clock may say a part took 0 s
                break
        return self

    def _layer(self, i):
        """Layer I's weights: the model's kept ones, or (a layer the model keeps as blocks,
        gguffile's Layers past its `kept` ones) made once for as long as the split reads it."""
        m = self.model
        kept = getattr(m.layers, "kept", m.layers)
        if kept is not None and i < len(kept):
            return kept[i]
        if self._made[0] != i:
            self._made = (None, None)  # let the last go before the next is made
            self._made = (i, m.layer(i))
        return self._made[1]

    def writes(self, m):
        """Layer M's heads' writes (H, T, d) and its feed-forward block's (T, d), float64:
        the feed-forward's is the layer's whole step less the heads', so the two add up to
        what the forward added to the stream."""
        if self._writes[m] is None:
            H, hs = self.model.n_head, self.model.hs
            wo = self._layer(m)["o"].astype(np.float64).reshape(H, hs, -1)  # (H, hs, d)
            heads = self.y[m].astype(np.float64) @ wo  # (H, T, d), batched over heads
            step = self.x[m + 1].astype(np.float64) - self.x[m].astype(np.float64)  # (T, d)
            self._writes[m] = (heads, step - heads.sum(0))
        return self._writes[m]

    def names(self, layer):
        names = [TOKEN]
        for m in range(layer):
            names += [head_name(m + 1, h + 1) for h in range(self.model.n_head)]
            names.append(sp.mlp_name(m + 1))
        return names

    def _part(self, layer, n):
        """The N-th component (T, d), made alone: the token, then per layer its heads and
        its feed-forward block."""
        if n == 0:
            return self.x[0].astype(np.float64)
        m, h = divmod(n - 1, self.model.n_head + 1)
        heads, mlp = self.writes(m)
        return heads[h] if h < self.model.n_head else mlp

    def parts(self, layer):
        parts = [self.x[0].astype(np.float64)]
        for m in range(layer):
            heads, mlp = self.writes(m)
            parts += [*heads, mlp]
        return self.names(layer), np.stack(parts)  # (C, T, d)

    def stream(self, layer):
        """The stream the forward carried into LAYER (T, d), in float64."""
        return self.x[layer].astype(np.float64)

    def _norm_weight(self, layer):
        return self._layer(layer)["attn_norm"].astype(np.float64)  # (d,)

    def reads(self, layer):
        """(names, reads (C, T, d)): through the RMSNorm with the scale frozen (no bias)."""
        if self._reads[0] != layer:  # one layer kept: at T = 50 a late layer's are 60 MB
            names, parts = self.parts(layer)
            x = self.stream(layer)  # (T, d)
            r = np.sqrt((x * x).mean(-1, keepdims=True) + self.model.eps)  # (T, 1) frozen
            parts *= self._norm_weight(layer) / r  # (C, T, d) in place: parts is a fresh stack
            self._reads = (layer, (names, parts))
        return self._reads[1]

    def norm(self, layer, x):
        x = np.asarray(x, np.float64)
        r = np.sqrt((x * x).mean(-1, keepdims=True) + self.model.eps)
        return x / r * self._norm_weight(layer)

    def weights(self, layer, head):
        """(Wq of query head HEAD, Wk of the key head it reads) of LAYER, each (d, hs)
        float64, as the forward applies them (rows (in, out), llama.cpp's interleave undone)."""
        m, hs = self.model, self.model.hs
        qkv = self._layer(layer)["qkv"]  # (d, (H + 2 KV) hs)
        g = head // (m.n_head // m.n_kv)
        wq = qkv[:, head * hs : (head + 1) * hs]
        wk = qkv[:, (m.n_head + g) * hs : (m.n_head + g + 1) * hs]
        return wq.astype(np.float64), wk.astype(np.float64)  # made afresh: 0.6 MB, not kept

    def bias(self, layer, head, i):
        """Qwen2's query and key biases (split.Components.bias), turned by RoPE as the forward
        turns them (after the bias is added); None for a model without them (llama)."""
        b = self._layer(layer).get("qkv_b")
        if b is None:
            return None
        m, hs = self.model, self.model.hs
        g = head // (m.n_head // m.n_kv)
        bq = b[head * hs : (head + 1) * hs].astype(np.float64)
        bk = b[(m.n_head + g) * hs : (m.n_head + g + 1) * hs].astype(np.float64)
        keys = np.broadcast_to(bk, (i + 1, hs))
        return rotate(bq, self.cos[i], self.sin[i]), rotate(
            keys, self.cos[: i + 1], self.sin[: i + 1]
        )

    def query(self, layer, head, read, i):
        wq = self.weights(layer, head)[0]
        return rotate(read @ wq, self.cos[i], self.sin[i])  # turned as at position i

    def key(self, layer, head, read):
        wk = self.weights(layer, head)[1]
        n = read.shape[-2]
        k = matmul(read, wk)  # (..., n, hs): the one large product (einsum in Pyodide)
        return rotate(k, self.cos[:n], self.sin[:n])  # each turned as at its position

    def score(self, layer, head, i):
        """The head's score row s[i, :i+1] from the stream the forward carried, its norm not
        frozen but recomputed: what the pairs add up to."""
        x = self.stream(layer)[: i + 1]
        q = self.query(layer, head, self.norm(layer, x[i]), i)  # (hs,)
        k = self.key(layer, head, self.norm(layer, x))  # (i+1, hs)
        b = self.bias(layer, head, i)
        if b is not None:
            q, k = q + b[0], k + b[1]
        return k @ q * self.scale  # (i+1,)

    def attention(self, layer, head, i):
        """The forward's own attention row of head HEAD from query i (i+1,)."""
        return self.maps[layer, head, i, : i + 1]


def _layer_of(model, i):
    return model.layers[i] if model.layers is not None else model.layer(i)


def _slices(model, layer, head):
    """Query head HEAD's (Wq, Wk, Wv) of LAYER, each (d, hs) float64, with the RMSNorm's
    weight folded in (rows scaled): the key and value heads are those its group shares."""
    m, hs = model, model.hs
    L = _layer_of(model, layer)
    w = L["attn_norm"].astype(np.float64)[:, None]  # (d, 1)
    qkv = L["qkv"]
    g = head // (m.n_head // m.n_kv)

    def cols(n):
        return w * qkv[:, n * hs : (n + 1) * hs].astype(np.float64)

    return cols(head), cols(m.n_head + g), cols(m.n_head + m.n_kv + g)


def k_composition(model, later, head):
    """(names, scores): for query head HEAD of layer LATER (0-based), every earlier head A's
    K-composition score of Elhage et al. (2021), |W_QK W_OV^A|_F / (|W_QK|_F |W_OV^A|_F), from
    the weights alone, in the order `Split.names` gives them.

    W_QK = (w * Wq) (w * Wk)^T is the head's score matrix (x_i^T W_QK x_j) and W_OV^A =
    ((w_A * Wv_A) Wo_A)^T what A writes of what it reads, with each layer's RMSNorm weight w
    folded in; the norm's scale, one number per position, cancels in the ratio. RoPE is left
    out: it turns the query against the key by an angle that depends on their distance, so the
    score matrix differs at every distance and the composition score is only its value at
    distance 0. Every product is taken in the heads' own hs dimensions (a d x d matrix has rank
    hs at most): |A X B^T|_F^2 = tr(X^T (A^T A) X (B^T B))."""
    m, hs = model, model.hs
    wq, wk, _ = _slices(model, later, head)
    gq = wq.T @ wq  # (hs, hs)
    qk = np.sqrt(np.trace(gq @ (wk.T @ wk)))  # |W_QK|_F
    names, out = [], []
    for layer in range(later):
        wo = _layer_of(model, layer)["o"].astype(np.float64)  # (H hs, d)
        for a in range(m.n_head):
            wv = _slices(model, layer, a)[2]  # (d, hs)
            gv = wv.T @ wv
            o = wo[a * hs : (a + 1) * hs]  # (hs, d)
            x = wk.T @ o.T  # (hs, hs): W_QK W_OV^A = wq x wv^T
            both = np.sqrt(max(np.trace(x.T @ gq @ x @ gv), 0.0))
            ov = np.sqrt(np.trace(gv @ (o @ o.T)))  # |W_OV^A|_F
            names.append(head_name(layer + 1, a + 1))
            out.append(float(both / (qk * ov)))
    return names, np.array(out)


def random_k_composition(model, n=200, seed=0):
    """The K-composition score of random Gaussian weights of MODEL's shapes (the mean over N
    draws): the level the paper subtracts, since any two low-rank matrices score some
    (split.random_composition, computed in the heads' own dimensions)."""
    rng = np.random.default_rng(seed)
    d, hs = model.d, model.hs
    out = []
    for _ in range(n):
        wq, wk, wv, wo = (rng.standard_normal((d, hs)) for _ in range(4))
        gq, gv = wq.T @ wq, wv.T @ wv
        x = wk.T @ wo  # (hs, hs)
        both = np.sqrt(np.trace(x.T @ gq @ x @ gv))
        qk = np.sqrt(np.trace(gq @ (wk.T @ wk)))
        ov = np.sqrt(np.trace(gv @ (wo.T @ wo)))
        out.append(both / (qk * ov))
    return float(np.mean(out))
