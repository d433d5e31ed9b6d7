"""GPT-2's forward in numpy, float32, over a GGUF file's tensors (llama.cpp's names and layout:
every matrix (out, in), the converter having transposed GPT-2's Conv1D weights).

    x = embed[ids] + pos[P : P+T]                      # (T, d): learned positions
    for each layer:
        h = layernorm(x)
        q, k, v = split(h @ Wqkv.T + bqkv)             # (H, T, hs) each
        k, v = cache + k, cache + v                    # (H, P+T, hs)
        att = softmax(causal(q @ k.T / sqrt(hs)))      # (H, T, P+T)
        x = x + concat(att @ v) @ Wo.T + bo
        x = x + gelu(layernorm(x) @ Wup.T + bup) @ Wdown.T + bdown
    logits = layernorm(x) @ out.T                      # out: "output.weight", else the embedding

GELU is the tanh approximation, GPT-2's own ("gelu_new" in transformers) and llama.cpp's. The
class keeps the llama forward's interface (toymodels/models/smollm2/llama.py: `forward`, `run`
with `ablate` and `tap`, `logits`, its `Cache`), so whatever reads one model's heads reads the
other's.
"""

import numpy as np

from ..smollm2.llama import Llama, dot, row_edges, sliced, softmax

GELU_C = np.float32(np.sqrt(2.0 / np.pi))


def layernorm(x, w, b, eps):
    # x (T, d), w and b (d,)
    mu = x.mean(-1, keepdims=True)
    c = x - mu
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + eps) * w + b


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + np.float32(0.044715) * x * x * x)))


class GPT2(Llama):
    """A GPT-2 decoder from `config` (n_layer, n_head, d, eps, n_ctx, tied) and `tensors(name)`
    -> float32 (out, in) matrix or vector; `keep` as for Llama."""

    def __init__(self, config, tensors, keep=True):
        self.n_layer = int(config["n_layer"])
        self.n_head = self.n_kv = int(config["n_head"])
        self.d = int(config["d"])
        self.hs = self.d // self.n_head
        self.eps = float(config["eps"])
        self.n_ctx = int(config["n_ctx"])
        self.tensors = tensors
        self.embed = tensors("token_embd.weight")  # (V, d)
        self.pos = tensors("position_embd.weight")  # (n_ctx, d)
        self.norm = (tensors("output_norm.weight"), tensors("output_norm.bias"))
        self.out = self.embed if config.get("tied", True) else tensors("output.weight")
        self.vocab = int(self.embed.shape[0])
        self.layers = [self.layer(i) for i in range(self.n_layer)] if keep else None

    def layer(self, i):
        """Layer i's weights, transposed to (in, out) for the forward."""
        w, p = self.tensors, f"blk.{i}."
        return {
            "attn_norm": (w(p + "attn_norm.weight"), w(p + "attn_norm.bias")),
            "qkv": w(p + "attn_qkv.weight").T.copy(),  # (d, 3d)
            "qkv_b": w(p + "attn_qkv.bias"),
            "o": w(p + "attn_output.weight").T.copy(),  # (d, d)
            "o_b": w(p + "attn_output.bias"),
            "ffn_norm": (w(p + "ffn_norm.weight"), w(p + "ffn_norm.bias")),
            "up": w(p + "ffn_up.weight").T.copy(),  # (d, ff)
            "up_b": w(p + "ffn_up.bias"),
            "down": w(p + "ffn_down.weight").T.copy(),  # (ff, d)
            "down_b": w(p + "ffn_down.bias"),
        }

    def inputs(self, ids, start=0):
        """The residual stream entering the first layer for token IDS at positions START on
        (T, d): their embedding rows plus the learned positions'."""
        ids = np.asarray(ids, dtype=np.int64)
        return self.embed[ids] + self.pos[start : start + len(ids)]

    def logits(self, x):
        """The residual stream after the last layer (T, d) -> next-token logits (T, V)."""
        return dot(layernorm(x, *self.norm, self.eps), self.out.T).astype(np.float32)

    def run(self, ids, ablate=(), cache=None, tap=None, start=0, x=None, rows=None):
        """The forward one layer at a time, as Llama.run: yields (i, maps_i (heads, T, P+T),
        x (T, d)), and with ROWS None after each slice of a product's rows and after the
        attention, as Llama.run does. Raises ValueError past the file's context length (its
        learned positions end there)."""
        ids = np.asarray(ids, dtype=np.int64)
        T, H, hs = len(ids), self.n_head, self.hs
        P = len(cache) if cache is not None else 0
        if start and (cache is not None or x is None):
            raise ValueError("starting at a later layer takes its input x and no cache")
        if self.n_ctx < P + T:
            raise ValueError(f"{P + T} tokens: this GPT-2 reads at most {self.n_ctx}")
        off = set(map(tuple, ablate))
        future = np.arange(P + T)[None, :] > np.arange(P, P + T)[:, None]  # (T, P+T)
        x = self.inputs(ids, P) if x is None else x
        lead = x.shape[:-2]

        def mm(t, w):
            return dot(t.reshape(-1, t.shape[-1]), w).reshape(*t.shape[:-1], w.shape[1])

        if rows and x.ndim > 2:
            raise ValueError("a forward in slices of rows takes one text, not variants of it")
        edges = row_edges(T, rows)

        def product(t, w):
            return (yield from sliced(mm, t, w, edges))

        for i in range(start, self.n_layer):
            L = self.layers[i] if self.layers is not None else self.layer(i)
            h = layernorm(x, *L["attn_norm"], self.eps)
            qkv = (yield from product(h, L["qkv"])) + L["qkv_b"]  # (T, 3d)
            q, k, v = (
                t.reshape(*lead, T, H, hs).swapaxes(-2, -3) for t in np.split(qkv, 3, -1)
            )  # (H, T, hs) each
            if cache is not None:
                k, v = cache.add(i, k, v)  # (H, P+T, hs)
            s = q @ k.swapaxes(-1, -2) / np.float32(np.sqrt(hs))  # (H, T, P+T)
            a = softmax(np.where(future, -np.inf, s)).astype(np.float32)
            y = a @ v  # (H, T, hs)
            for layer, head in off:
                if layer == i:
                    y[..., head, :, :] = 0.0
            if tap is not None:
                z = tap(i, y)
                y = y if z is None else z
            if rows:
                yield
            y = y.swapaxes(-2, -3).reshape(*lead, T, H * hs)
            x = x + (yield from product(y, L["o"])) + L["o_b"]
            h = layernorm(x, *L["ffn_norm"], self.eps)
            up = (yield from product(h, L["up"])) + L["up_b"]
            x = x + (yield from product(gelu(up), L["down"])) + L["down_b"]
            yield i, a, x
