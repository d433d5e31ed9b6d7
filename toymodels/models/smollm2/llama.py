"""SmolLM2-135M-Instruct's forward in numpy, float32: one forward for the build's export of
"Heads that copy" and for the reader's own text in the browser.

    x = embed[ids]                                   # (T, d)
    for each layer:
        h = rmsnorm(x) @ Wq.T, @ Wk.T, @ Wv.T        # q (H, T, hs), k, v (KV, T, hs)
        q, k = rope(q), rope(k)                      # rotate pairs (i, i + hs/2) by pos * freq_i
        k, v = cache + k, cache + v                  # (KV, P+T, hs): P tokens written before
        att = softmax(causal(q @ k_g.T / sqrt(hs)))  # (H, T, P+T); head h reads group h // (H/KV)
        y = att @ v_g                                # (H, T, hs); an ablated head's y is zeroed
        x = x + concat(y) @ Wo.T
        x = x + (silu(rmsnorm(x) @ Wg.T) * (rmsnorm(x) @ Wu.T)) @ Wd.T
    logits = rmsnorm(x) @ embed.T                    # (T, V): the embedding is tied

The weights come from `tensors(name)`, float32 in the GGUF's (out, in) layout and names
("blk.3.attn_q.weight"): the build reads them from the GGUF file (toymodels/export/llama.py),
the page from the site's repacked blocks (weights.py). llama.cpp's converter interleaves the
rows of each head of Wq and Wk for its own rotary layout; they are put back here (`unpermute`)
so that the usual rotate-half rotary embedding applies, as in transformers' Llama.

The same forward runs a reader's own GGUF file of the llama or qwen2 architecture
(toymodels/models/gguffile/): its config may add "hs" (the head size, when it is not d / n_head),
"qkv_bias" (qwen2's biases on the queries, keys and values), "unpermute" (False for qwen2, whose
converter leaves the rows as they are), "tied" (False: the logits read "output.weight") and
"freq_factors" (the file's rope_freqs, dividing each rotary frequency, as Llama 3's scaling
does). Without them the model is SmolLM2's, computed exactly as before.
"""

import itertools
import sys

import numpy as np

if sys.platform == "emscripten":  # Pyodide

    def dot(x, w):
        """x (T, n) @ w (n, m). Pyodide's numpy has no BLAS: there `@` runs a plain loop,
        3-12 times slower than einsum's on the forward's matrices (bench/smollm2_live.py:
        20 tokens' MLP 271 ms against 27, one token's logits 334 ms against 27)."""
        return np.einsum("ij,jk->ik", x, w)

else:  # `@` calls BLAS: faster, and the build's export was computed with it
    dot = np.matmul


def unpermute(w, n_heads):
    """Undo llama.cpp's interleave of each head's rows: (n_heads*hs, d) -> same shape, in
    transformers' order (first half of each head's rows, then the second half)."""
    rows, d = w.shape
    return w.reshape(n_heads, rows // n_heads // 2, 2, d).swapaxes(1, 2).reshape(rows, d)


def stacked_t(*ws):
    """Matrices WS (rows_i, n) stacked and transposed, contiguous: (n, sum of rows_i), as
    np.concatenate(ws).T.copy() gives it, with no stacked copy made on the way (a model's
    load makes every layer's so; half the time, and less memory at once)."""
    out = np.empty((ws[0].shape[1], sum(len(w) for w in ws)), np.result_type(*ws))
    at = 0
    for w in ws:
        out[:, at : at + len(w)] = w.T
        at += len(w)
    return out


def rmsnorm(x, w, eps):
    # x (T, d), w (d,)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def rotate(t, cos, sin):
    # t (heads, T, hs): pairs (j, j + hs/2) turn by position * freq_j (transformers' rotate_half)
    half = t.shape[-1] // 2
    return t * cos + np.concatenate([-t[..., half:], t[..., :half]], -1) * sin


def silu(x):
    return x / (1.0 + np.exp(-x))


class Cache:
    """The keys and values of the tokens read so far, per layer (after the rotary turn): what
    lets the model write on one token at a time without reading the text again."""

    def __init__(self, n_layer):
        self.k = [None] * n_layer  # each (KV, P, hs)
        self.v = [None] * n_layer

    def __len__(self):
        """P, the tokens held."""
        return 0 if self.k[0] is None else self.k[0].shape[1]

    @property
    def nbytes(self):
        return sum(a.nbytes for a in self.k + self.v if a is not None)

    def copy(self):
        """A cache holding the same tokens that goes on apart: add() puts new arrays in, never
        changes one, so the two share what they both hold."""
        other = Cache(len(self.k))
        other.k, other.v = list(self.k), list(self.v)
        return other

    def add(self, i, k, v):
        """Layer i's keys and values with the new tokens' appended: (KV, P+T, hs) each."""
        if self.k[i] is not None:
            k = np.concatenate([self.k[i], k], 1)
            v = np.concatenate([self.v[i], v], 1)
        self.k[i], self.v[i] = k, v
        return k, v


def row_edges(T, rows):
    """The bounds of T rows cut into slices of ROWS to 2 ROWS - 1 (all of them when fewer); ()
    for ROWS None: no slices."""
    if not rows:
        return ()
    n = max(1, T // rows)
    return [T * k // n for k in range(n + 1)]


def sliced(mm, t, w, edges):
    """MM(T, W), a forward's product, a slice of EDGES (row_edges) at a time, with None yielded
    after each (at once for no EDGES): `yield from` gives the product. Each row is the
    product's own row."""
    if not edges:
        return mm(t, w)
    out = np.empty((t.shape[0], w.shape[1]), np.float32)
    for a, b in itertools.pairwise(edges):
        out[a:b] = mm(t[a:b], w)
        yield
    return out


class Llama:
    """A Llama-architecture decoder from `config` (n_layer, n_head, n_kv, d, eps, base) and
    `tensors(name)` -> float32 (out, in) matrix or vector. With keep, every layer's matrices
    are made once and kept (537 MB for SmolLM2 in float32); without, each layer's are made from
    `tensors` as it runs and let go after."""

    def __init__(self, config, tensors, keep=True):
        self.n_layer = int(config["n_layer"])  # 30
        self.n_head = int(config["n_head"])  # 9
        self.n_kv = int(config["n_kv"])  # 3
        self.d = int(config["d"])  # 576
        self.hs = int(config.get("hs") or self.d // self.n_head)  # 64
        self.eps = float(config["eps"])  # 1e-5
        self.base = float(config["base"])  # 100000
        self.qkv_bias = bool(config.get("qkv_bias", False))
        self.permuted = bool(config.get("unpermute", True))
        factors = config.get("freq_factors")
        self.freq_factors = None if factors is None else np.asarray(factors, np.float32)
        self.tensors = tensors
        self.embed = tensors("token_embd.weight")  # (V, d)
        # the output matrix (V, d): the embedding itself where tied
        self.out = self.embed if config.get("tied", True) else tensors("output.weight")
        self.norm = tensors("output_norm.weight")  # (d,)
        self.vocab = int(self.embed.shape[0])
        self.layers = [self.layer(i) for i in range(self.n_layer)] if keep else None

    def layer(self, i):
        """Layer i's weights, laid out for the forward (fused, transposed to (in, out))."""
        w, p = self.tensors, f"blk.{i}."
        q, k = w(p + "attn_q.weight"), w(p + "attn_k.weight")
        if self.permuted:
            q, k = unpermute(q, self.n_head), unpermute(k, self.n_kv)  # (H*hs, d), (KV*hs, d)
        v = w(p + "attn_v.weight")  # (KV*hs, d)
        extra = {}
        if self.qkv_bias:  # ((H+2KV)*hs,), added after the product
            extra["qkv_b"] = np.concatenate([w(p + f"attn_{n}.bias") for n in "qkv"])
        return extra | {
            "attn_norm": w(p + "attn_norm.weight"),  # (d,)
            "qkv": stacked_t(q, k, v),  # (d, (H+2KV)*hs)
            "o": w(p + "attn_output.weight").T.copy(),  # (H*hs, d)
            "ffn_norm": w(p + "ffn_norm.weight"),  # (d,)
            "gate_up": stacked_t(w(p + "ffn_gate.weight"), w(p + "ffn_up.weight")),  # (d, 2*ff)
            "down": w(p + "ffn_down.weight").T.copy(),  # (ff, d)
        }

    def rope(self, start, T):
        """cos, sin for rotate-half rotary embedding at positions start..start+T-1: (T, hs)."""
        inv = 1.0 / self.base ** (np.arange(0, self.hs, 2, dtype=np.float32) / self.hs)
        if self.freq_factors is not None:
            inv = inv / self.freq_factors
        ang = np.arange(start, start + T, dtype=np.float32)[:, None] * inv[None, :]  # (T, hs/2)
        ang = np.concatenate([ang, ang], -1)  # (T, hs)
        return np.cos(ang), np.sin(ang)

    def forward(self, ids, ablate=(), cache=None, logits="all", each_layer=None, tap=None):
        """Token ids -> (attention (layers, heads, T, P+T), logits), float32.

        `ablate`: (layer, head) pairs whose output is zeroed before the output projection.
        `cache`: a Cache holding P tokens read before these (appended to); None reads `ids`
        alone. `logits`: "all" (T, V), "last" (1, V) or None. `each_layer(i, maps_i)` is
        called as each layer's maps (heads, T, P+T) are ready. `tap`: as for `run`.
        """
        T = len(ids)
        P = len(cache) if cache is not None else 0
        maps = np.empty((self.n_layer, self.n_head, T, P + T), np.float32)
        x = None
        for i, a, out in self.run(ids, ablate, cache, tap):
            maps[i], x = a, out
            if each_layer is not None:
                each_layer(i, a)
        if logits is None:
            return maps, None
        return maps, self.logits(x[-1:] if logits == "last" else x)

    def inputs(self, ids, start=0):
        """The residual stream entering the first layer for token IDS read from position START
        on (T, d): their embedding rows (rotary positions act inside each layer)."""
        return self.embed[np.asarray(ids, dtype=np.int64)]

    def logits(self, x):
        """The residual stream after the last layer (T, d) -> next-token logits (T, V)."""
        return dot(rmsnorm(x, self.norm, self.eps), self.out.T).astype(np.float32)

    def run(self, ids, ablate=(), cache=None, tap=None, start=0, x=None, rows=None):
        """The forward one layer at a time: yields (i, maps_i (heads, T, P+T), x (T, d), the
        residual stream after layer i), so a caller can stop between layers and go on later
        (the page computes a long text in pieces). Arguments as for `forward`, and:

        `tap(i, y)`: called with layer i's heads' outputs y (H, T, hs), before the output
        projection and after any ablation; what it returns (same shape) goes on instead, None
        keeps y. What "What a head does" reads each head's output with, and patches one.
        `start`, `x`: begin at layer `start` with `x` (T, d), the residual stream a run
        yielded for layer start - 1 (no cache: the layers below would not have written it).
        `x` may be (B, T, d), B variants of the text run at once (each shape above then has
        B in front; not under Pyodide): one read of each layer's weights serves them all.
        `rows`: each of a layer's four products (queries, keys and values; the output
        projection; the feed-forward's two) is computed a slice of ROWS to 2 ROWS - 1 tokens'
        rows at a time (all of them when fewer), and None is yielded after each slice and
        after the attention, so that a caller can stop within a layer too (the page's pieces
        of a long forward: a frame each). Each row is the product's own row: Pyodide's einsum
        gives the same numbers; BLAS may round a slice in float32's last bit.
        """
        ids = np.asarray(ids, dtype=np.int64)
        T, H, KV, hs = len(ids), self.n_head, self.n_kv, self.hs
        P = len(cache) if cache is not None else 0
        if start and (cache is not None or x is None):
            raise ValueError("starting at a later layer takes its input x and no cache")
        if rows and x is not None and x.ndim > 2:
            raise ValueError("a forward in slices of rows takes one text, not variants of it")
        off = set(map(tuple, ablate))
        cos, sin = self.rope(P, T)
        future = np.arange(P + T)[None, :] > np.arange(P, P + T)[:, None]  # (T, P+T)
        x = self.inputs(ids, P) if x is None else x  # (T, d), or (B, T, d) from `x`
        lead = x.shape[:-2]  # (): one text; (B,): B variants of it (the export's patching)

        def mm(t, w):
            # (..., T, n) @ (n, m) as one product of (B*T, n)
            return dot(t.reshape(-1, t.shape[-1]), w).reshape(*t.shape[:-1], w.shape[1])

        edges = row_edges(T, rows)

        def product(t, w):
            return (yield from sliced(mm, t, w, edges))

        for i in range(start, self.n_layer):
            L = self.layers[i] if self.layers is not None else self.layer(i)
            h = rmsnorm(x, L["attn_norm"], self.eps)
            qkv = yield from product(h, L["qkv"])  # (T, (H+2KV)*hs)
            if "qkv_b" in L:
                qkv = qkv + L["qkv_b"]
            q = qkv[..., : H * hs].reshape(*lead, T, H, hs).swapaxes(-2, -3)  # (H, T, hs)
            k = qkv[..., H * hs : (H + KV) * hs].reshape(*lead, T, KV, hs).swapaxes(-2, -3)
            v = qkv[..., (H + KV) * hs :].reshape(*lead, T, KV, hs).swapaxes(-2, -3)  # (KV, T, hs)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            if cache is not None:
                k, v = cache.add(i, k, v)  # (KV, P+T, hs)
            k, v = np.repeat(k, H // KV, -3), np.repeat(v, H // KV, -3)  # (H, P+T, hs)
            s = q @ k.swapaxes(-1, -2) / np.float32(np.sqrt(hs))  # (H, T, P+T)
            a = softmax(np.where(future, -np.inf, s)).astype(np.float32)  # (H, T, P+T)
            y = a @ v  # (H, T, hs)
            for layer, head in off:
                if layer == i:
                    y[..., head, :, :] = 0.0
            if tap is not None:
                z = tap(i, y)
                y = y if z is None else z
            if rows:
                yield
            x = x + (yield from product(y.swapaxes(-2, -3).reshape(*lead, T, H * hs), L["o"]))
            h = rmsnorm(x, L["ffn_norm"], self.eps)
            g, u = np.split((yield from product(h, L["gate_up"])), 2, -1)  # (T, ff) each
            x = x + (yield from product(silu(g) * u, L["down"]))  # (T, d)
            yield i, a, x
