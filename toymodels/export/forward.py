"""numpy forward passes that return every layer's and head's attention.

`Bert` reads a BERT-style encoder (Hugging Face safetensors names, e.g.
all-MiniLM-L6-v2) and runs the shipped forward, toymodels/models/minilm/bert.py, the
one the browser runs too. `GPT2` reads GPT-2's layout
(Conv1D weights stored in x out, pre-LayerNorm blocks, a causal mask, the tanh
GELU). Both compute in float64 from the stored float32 weights.
"""

import json
import math
from pathlib import Path

import numpy as np

from ..models.minilm import bert
from ..models.minilm.bert import layer_norm, softmax, split_heads


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


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


class Bert(bert.Bert):
    """A BERT-style encoder from a folder with config.json and model.safetensors, run by the
    shipped forward (toymodels/models/minilm/bert.py): one forward for the export and the
    browser."""

    def __init__(self, folder):
        super().__init__(load_safetensors(folder), load_config(folder))


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
                split_heads(part, self.n_head)
                for part in np.split(conv("attn.c_attn", h), 3, axis=-1)
            )
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
            a = softmax(np.where(future, -np.inf, scores))
            maps.append(a)
            x = x + conv("attn.c_proj", (a @ v).transpose(1, 0, 2).reshape(T, -1))
            h = layer_norm(x, self.p(pre + "ln_2.weight"), self.p(pre + "ln_2.bias"), self.eps)
            x = x + conv("mlp.c_proj", gelu_tanh(conv("mlp.c_fc", h)))
        return np.stack(maps)
