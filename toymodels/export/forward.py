"""numpy forward passes that return every layer's and head's attention.

`bert_attentions` reads a BERT-style encoder (Hugging Face safetensors names,
e.g. all-MiniLM-L6-v2): word + position + token-type embeddings, LayerNorm,
then blocks of bidirectional multi-head self-attention with biases, a residual
LayerNorm, and an exact-GELU MLP. `gpt2_attentions` reads GPT-2's layout
(Conv1D weights stored in x out, pre-LayerNorm blocks, a causal mask, the tanh
GELU). Both compute in float64 from the stored float32 weights.
"""

import json
import math
from pathlib import Path

import numpy as np

_erf = np.frompyfunc(math.erf, 1, 1)


def gelu_exact(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def softmax(scores):
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def load_safetensors(folder):
    """folder/model.safetensors -> {name: float64 array}, with any 'bert.' / 'transformer.'
    prefix removed."""
    from safetensors.numpy import load_file

    path = Path(folder) / "model.safetensors"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: a checkpoint folder needs model.safetensors and config.json"
        )
    out = {}
    for name, arr in load_file(str(path)).items():
        for prefix in ("bert.", "transformer."):
            if name.startswith(prefix):
                name = name[len(prefix) :]
        out[name] = arr
    return out


def load_config(folder):
    path = Path(folder) / "config.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing")
    return json.loads(path.read_text(encoding="utf-8"))


def _heads(x, n_head):
    """(T, d) -> (n_head, T, d / n_head)."""
    T, d = x.shape
    return x.reshape(T, n_head, d // n_head).transpose(1, 0, 2)


class Checkpoint:
    """A folder with config.json and model.safetensors; subclasses name their config's keys."""

    KEYS = ("n_layer", "n_head", "layer_norm_epsilon", 1e-5)

    def __init__(self, folder):
        self.config = load_config(folder)
        self.w = load_safetensors(folder)
        layers, heads, eps, default_eps = self.KEYS
        self.n_layer, self.n_head = self.config[layers], self.config[heads]
        self.eps = self.config.get(eps, default_eps)

    def p(self, name):
        return self.w[name].astype(np.float64)


class Bert(Checkpoint):
    """A BERT-style encoder from a folder with config.json and model.safetensors."""

    KEYS = ("num_hidden_layers", "num_attention_heads", "layer_norm_eps", 1e-12)

    def __init__(self, folder):
        super().__init__(folder)
        if self.config.get("hidden_act", "gelu") != "gelu":
            raise ValueError(
                f"only the exact GELU is implemented, not {self.config['hidden_act']!r}"
            )

    def linear(self, pre):
        """The torch Linear layers whose names start with PRE, as lin(name, v): v @ weight.T + bias
        (torch stores the weight out x in)."""
        return lambda name, v: v @ self.p(pre + name + ".weight").T + self.p(pre + name + ".bias")

    def attentions(self, ids, token_types=None):
        """Token ids -> attention weights, shape (layers, heads, T, T); each row sums to 1."""
        ids = np.asarray(ids)
        T = len(ids)
        types = np.zeros(T, dtype=int) if token_types is None else np.asarray(token_types)
        x = (
            self.w["embeddings.word_embeddings.weight"][ids].astype(np.float64)
            + self.p("embeddings.position_embeddings.weight")[:T]
            + self.p("embeddings.token_type_embeddings.weight")[types]
        )
        x = layer_norm(
            x, self.p("embeddings.LayerNorm.weight"), self.p("embeddings.LayerNorm.bias"), self.eps
        )
        maps = []
        for layer in range(self.n_layer):
            pre = f"encoder.layer.{layer}."
            lin = self.linear(pre)
            q, k, v = (
                _heads(lin(f"attention.self.{n}", x), self.n_head)
                for n in ("query", "key", "value")
            )
            a = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1]))
            maps.append(a)
            ctx = (a @ v).transpose(1, 0, 2).reshape(T, -1)
            x = layer_norm(
                x + lin("attention.output.dense", ctx),
                self.p(pre + "attention.output.LayerNorm.weight"),
                self.p(pre + "attention.output.LayerNorm.bias"),
                self.eps,
            )
            h = gelu_exact(lin("intermediate.dense", x))
            x = layer_norm(
                x + lin("output.dense", h),
                self.p(pre + "output.LayerNorm.weight"),
                self.p(pre + "output.LayerNorm.bias"),
                self.eps,
            )
        return np.stack(maps)


class GPT2(Checkpoint):
    """A GPT-2 checkpoint in the Hugging Face safetensors layout (local folder)."""

    def conv1d(self, pre):
        """The Conv1D layers whose names start with PRE, as conv(name, v): v @ weight + bias
        (GPT-2 stores the weight in x out)."""
        return lambda name, v: v @ self.p(pre + name + ".weight") + self.p(pre + name + ".bias")

    def attentions(self, ids):
        ids = np.asarray(ids)
        T = len(ids)
        if self.config.get("n_positions", 1024) < T:
            raise ValueError(
                f"{T} tokens is more than this model's {self.config['n_positions']} positions"
            )
        x = self.w["wte.weight"][ids].astype(np.float64) + self.p("wpe.weight")[:T]
        future = np.triu(np.ones((T, T), dtype=bool), 1)
        maps = []
        for layer in range(self.n_layer):
            pre = f"h.{layer}."
            conv = self.conv1d(pre)
            h = layer_norm(x, self.p(pre + "ln_1.weight"), self.p(pre + "ln_1.bias"), self.eps)
            q, k, v = (
                _heads(part, self.n_head) for part in np.split(conv("attn.c_attn", h), 3, axis=-1)
            )
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
            a = softmax(np.where(future, -np.inf, scores))
            maps.append(a)
            x = x + conv("attn.c_proj", (a @ v).transpose(1, 0, 2).reshape(T, -1))
            h = layer_norm(x, self.p(pre + "ln_2.weight"), self.p(pre + "ln_2.bias"), self.eps)
            x = x + conv("mlp.c_proj", gelu_tanh(conv("mlp.c_fc", h)))
        return np.stack(maps)
