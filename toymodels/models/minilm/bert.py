"""The numpy forward pass of a BERT-style encoder (e.g. all-MiniLM-L6-v2) that returns every
layer's and head's attention: the one forward of the chapter "Real heads".

The build-time exporter (toymodels/export/) runs it on the float32 checkpoint to write the
curated sentences' maps; the browser runs it under Pyodide on the compact weights the build
ships (toymodels/models/minilm/compact.py) for the reader's own sentence. Word + position +
token-type embeddings, LayerNorm, then blocks of bidirectional multi-head self-attention with
biases, a residual LayerNorm and an exact-GELU MLP; it stops after the last layer's attention,
which is all the maps need. It computes in float64 from whatever the weights are stored in.
Matrix products go through the kernel's one helper (toymodels/page/linalg.py).
"""

import math

import numpy as np

from ...page.linalg import matmul

_erf = np.frompyfunc(math.erf, 1, 1)


def gelu_exact(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def softmax(scores):
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def split_heads(x, n_head):
    """(T, d) -> (n_head, T, d / n_head)."""
    T, d = x.shape
    return x.reshape(T, n_head, d // n_head).transpose(1, 0, 2)


class Bert:
    """WEIGHTS maps Hugging Face names without the 'bert.' prefix ('encoder.layer.0.…') to
    arrays (torch's Linear layout, out x in); it may offer rows(name, ids) to read only some
    rows of the word embeddings. CONFIG is the checkpoint's config.json as a dict."""

    def __init__(self, weights, config):
        if config.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"only the exact GELU is implemented, not {config['hidden_act']!r}")
        self.w, self.config = weights, config
        self.n_layer = config["num_hidden_layers"]
        self.n_head = config["num_attention_heads"]
        self.eps = config.get("layer_norm_eps", 1e-12)
        self._p = {}

    def p(self, name):
        if name not in self._p:
            self._p[name] = np.asarray(self.w[name], dtype=np.float64)
        return self._p[name]

    def rows(self, name, ids):
        if hasattr(self.w, "rows"):
            return np.asarray(self.w.rows(name, ids), dtype=np.float64)
        return np.asarray(self.w[name][ids], dtype=np.float64)

    def lin(self, name, v):
        """torch's Linear: v @ weight.T + bias."""
        return matmul(v, self.p(name + ".weight"), transposed=True) + self.p(name + ".bias")

    def attentions(self, ids, token_types=None):
        """Token ids -> attention weights, shape (layers, heads, T, T); each row sums to 1."""
        ids = np.asarray(ids)
        T = len(ids)
        types = np.zeros(T, dtype=int) if token_types is None else np.asarray(token_types)
        x = (
            self.rows("embeddings.word_embeddings.weight", ids)
            + self.p("embeddings.position_embeddings.weight")[:T]
            + self.rows("embeddings.token_type_embeddings.weight", types)
        )
        x = layer_norm(
            x, self.p("embeddings.LayerNorm.weight"), self.p("embeddings.LayerNorm.bias"), self.eps
        )
        maps = []
        for layer in range(self.n_layer):
            pre = f"encoder.layer.{layer}."
            q, k = (
                split_heads(self.lin(f"{pre}attention.self.{n}", x), self.n_head)
                for n in ("query", "key")
            )
            a = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1]))
            maps.append(a)
            if layer == self.n_layer - 1:
                break  # the last map is made: what follows it shapes no attention
            v = split_heads(self.lin(f"{pre}attention.self.value", x), self.n_head)
            ctx = (a @ v).transpose(1, 0, 2).reshape(T, -1)
            x = layer_norm(
                x + self.lin(pre + "attention.output.dense", ctx),
                self.p(pre + "attention.output.LayerNorm.weight"),
                self.p(pre + "attention.output.LayerNorm.bias"),
                self.eps,
            )
            h = gelu_exact(self.lin(pre + "intermediate.dense", x))
            x = layer_norm(
                x + self.lin(pre + "output.dense", h),
                self.p(pre + "output.LayerNorm.weight"),
                self.p(pre + "output.LayerNorm.bias"),
                self.eps,
            )
        return np.stack(maps)


def needed(name, n_layer):
    """Whether the weight NAME shapes any attention map of a model with N_LAYER layers: the
    embeddings, every layer but the last, and the last layer's queries and keys."""
    if name.startswith("embeddings."):
        return not name.startswith("embeddings.position_ids")
    prefix = f"encoder.layer.{n_layer - 1}."
    if name.startswith(prefix):
        return name[len(prefix) :].startswith(("attention.self.query", "attention.self.key"))
    return name.startswith("encoder.layer.")
