"""The compact weights file the build ships for the reader's own sentence, and its reader.

Layout: b"MHW1", the header's length (4 bytes, little-endian), a JSON header, then the
arrays' raw bytes, each at an offset that is a multiple of 8 from the data's start. The
header holds the checkpoint's config, the vocabulary's place (vocab.txt as UTF-8 bytes) and,
for each weight, its dtype, shape and offset; an "int8" matrix also has the offset of its
float32 per-row scales (row = int8 row x scale). Vectors (biases, LayerNorm) stay float32.
Written by the build (sitebuild/minilm.py) with `pack`; read in the browser and in the tests
with `Compact`, numpy and the stdlib only.
"""

import json
import struct

import numpy as np

MAGIC = b"MHW1"


def quantize_rows(w):
    """float matrix -> (int8 matrix, float32 per-row scales) with row ≈ q * scale."""
    w = np.asarray(w, dtype=np.float32)
    top = np.abs(w).max(axis=1)
    scale = np.where(top > 0, top / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


def pack(weights, config, vocab_text, matrices="int8"):
    """{name: array} (float32), config dict, vocab.txt's text -> the file's bytes. MATRICES is
    how 2-D weights are stored: "int8" (per-row scales), "float16" or "float32", or a function
    of the weight's name that answers one of those."""
    chunks, tensors, size = [], {}, 0

    def put(data):
        nonlocal size
        raw = np.ascontiguousarray(data).tobytes()
        offset = size
        pad = (-len(raw)) % 8
        chunks.append(raw + b"\0" * pad)
        size += len(raw) + pad
        return offset

    vocab = vocab_text.encode("utf-8")
    vocab_at = put(np.frombuffer(vocab, dtype=np.uint8))
    for name in sorted(weights):
        w = np.asarray(weights[name], dtype=np.float32)
        entry = {"shape": list(w.shape)}
        mode = matrices(name) if callable(matrices) else matrices
        if w.ndim == 2 and mode == "int8":
            q, scale = quantize_rows(w)
            entry.update(dtype="int8", offset=put(q), scales=put(scale))
        elif w.ndim == 2 and mode == "float16":
            entry.update(dtype="float16", offset=put(w.astype(np.float16)))
        else:
            entry.update(dtype="float32", offset=put(w))
        tensors[name] = entry
    header = json.dumps(
        {"config": config, "vocab": [vocab_at, len(vocab)], "tensors": tensors},
        separators=(",", ":"),
        sort_keys=True,
    ).encode("utf-8")
    header += b" " * ((-len(header)) % 8)
    return MAGIC + struct.pack("<I", len(header)) + header + b"".join(chunks)


class Compact:
    """The weights of a compact file (bytes or a path) as a mapping name -> float array, with
    rows(name, ids) that decodes only the rows asked for (the word embeddings' few tokens)."""

    def __init__(self, source):
        data = source if isinstance(source, (bytes, bytearray, memoryview)) else _read(source)
        data = memoryview(data)
        if bytes(data[:4]) != MAGIC:
            raise ValueError("not a compact weights file (its first bytes are not MHW1)")
        (n,) = struct.unpack("<I", data[4:8])
        head = json.loads(bytes(data[8 : 8 + n]).decode("utf-8"))
        self.data = np.frombuffer(data, dtype=np.uint8, offset=8 + n)
        self.config, self.tensors = head["config"], head["tensors"]
        at, length = head["vocab"]
        self.vocab_text = self.data[at : at + length].tobytes().decode("utf-8")

    def __contains__(self, name):
        return name in self.tensors

    def __iter__(self):
        return iter(self.tensors)

    def _array(self, dtype, offset, shape):
        count = int(np.prod(shape))
        return np.frombuffer(self.data, dtype=dtype, count=count, offset=offset).reshape(shape)

    def _scales(self, t):
        return self._array(np.float32, t["scales"], (t["shape"][0],))

    def __getitem__(self, name):
        """The weight as float32, decoded on each call (the forward keeps what it uses)."""
        t = self.tensors[name]
        a = self._array(np.dtype(t["dtype"]), t["offset"], t["shape"])
        if t["dtype"] == "int8":
            a = a * self._scales(t)[:, None]
        return np.asarray(a, dtype=np.float32)

    def rows(self, name, ids):
        t = self.tensors[name]
        if t["dtype"] == "float32":
            return self[name][ids]
        a = self._array(np.dtype(t["dtype"]), t["offset"], t["shape"])[ids].astype(np.float32)
        return a * self._scales(t)[ids][:, None] if t["dtype"] == "int8" else a


def _read(path):
    with open(path, "rb") as f:
        return f.read()
