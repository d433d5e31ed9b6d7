"""The compact weights file the build ships for the reader's own sentence, and its reader.

Layout: b"MHW1", the header's length (4 bytes, little-endian), a JSON header, then the
arrays' raw bytes, each at an offset that is a multiple of 8 from the data's start. The
header holds the checkpoint's config, the vocabulary's place (vocab.txt as UTF-8 bytes) and,
for each weight, its dtype, shape and offset. A matrix is stored in one of MODES (the
header's dtype of the integer ones is "int8"):

- "float16" or "float32": as is;
- "int8": int8 with float32 per-row scales ("scales"): w[i, j] ≈ q[i, j] * scales[i];
- "int8rc", "int10rc", "int12rc": an integer of 8, 10 or 12 bits with per-row and
  per-column scales ("scales", "columns"): w[i, j] ≈ q[i, j] * scales[i] * columns[j]. The
  columns are each column's largest |w|, the rows then scaled to use the integer's whole range.
  BERT's hidden states have a few outlier dimensions, whose columns hold larger values than
  the rest; per-column scales keep them from coarsening every row. q's top 8 bits are an int8
  matrix; the 2 or 4 bits below ("bits", "low") are packed 4 or 2 to a byte along each row
  (lowest first), so a row decodes alone.

Vectors (biases, LayerNorm) stay float32.
Written by the build (sitebuild/models/minilm.py) with `pack`; read in the browser and in the tests
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


def quantize_rows_columns(w, bits=8):
    """float matrix (n, m) -> (int16 q (n, m) within ±(2**(bits-1) - 1), float32 row scales
    (n,), column scales (m,)) with w ≈ q * rows[:, None] * columns[None, :]."""
    w = np.asarray(w, dtype=np.float32)
    top = np.abs(w).max(axis=0)
    columns = np.where(top > 0, top, 1.0).astype(np.float32)
    v = w / columns
    top, most = np.abs(v).max(axis=1), 2 ** (bits - 1) - 1
    rows = np.where(top > 0, top / most, 1.0).astype(np.float32)
    q = np.clip(np.rint(v / rows[:, None]), -most, most).astype(np.int16)
    return q, rows, columns


def split_low(q, bits):
    """int16 q of BITS bits -> (its top 8 bits as int8, the low bits packed along each row)."""
    k = bits - 8
    per = 8 // k
    low = (q & ((1 << k) - 1)).astype(np.uint8).reshape(q.shape[0], -1, per)
    packed = np.zeros(low.shape[:2], dtype=np.uint8)
    for i in range(per):
        packed |= low[:, :, i] << (k * i)
    return (q >> k).astype(np.int8), packed


def join_low(high, packed, bits):
    """split_low's (int8 (n, m), uint8 (n, m * k / 8)) -> int16 q (n, m)."""
    k = bits - 8
    shifts = np.arange(0, 8, k, dtype=np.uint8)  # (8 / k,)
    low = (packed[:, :, None] >> shifts) & ((1 << k) - 1)  # (n, m * k / 8, 8 / k)
    return (high.astype(np.int16) << k) | low.reshape(high.shape).astype(np.int16)


MODES = ("float32", "float16", "int8", "int8rc", "int10rc", "int12rc")


def pack(weights, config, vocab_text, matrices="int8"):
    """{name: array} (float32), config dict, vocab.txt's text -> the file's bytes. MATRICES is
    how 2-D weights are stored, one of MODES, or a function of the weight's name that answers
    one of them."""
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
        if mode not in MODES:
            raise ValueError(f"{name}: no storage mode {mode!r}; the modes are {MODES}")
        if w.ndim == 2 and mode == "int8":
            q, scale = quantize_rows(w)
            entry.update(dtype="int8", offset=put(q), scales=put(scale))
        elif w.ndim == 2 and mode.endswith("rc"):
            bits = int(mode[3:-2])
            q, rows, columns = quantize_rows_columns(w, bits)
            entry.update(dtype="int8", scales=put(rows), columns=put(columns))
            if bits == 8:
                entry.update(offset=put(q.astype(np.int8)))
            else:
                high, low = split_low(q, bits)
                entry.update(offset=put(high), bits=bits, low=put(low))
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

    def _scaled(self, t, q, rows=slice(None)):
        """int8 rows Q (those of ROWS) -> float32: with their low bits, times their scales
        and the columns'."""
        n, m = t["shape"]
        if "bits" in t:
            low = self._array(np.uint8, t["low"], (n, m * (t["bits"] - 8) // 8))
            q = join_low(q, low[rows], t["bits"])
        a = q * self._array(np.float32, t["scales"], (n,))[rows][:, None]
        if "columns" in t:
            a *= self._array(np.float32, t["columns"], (t["shape"][1],))
        return a

    def __getitem__(self, name):
        """The weight as float32, decoded on each call (the forward keeps what it uses)."""
        t = self.tensors[name]
        a = self._array(np.dtype(t["dtype"]), t["offset"], t["shape"])
        if t["dtype"] == "int8":
            a = self._scaled(t, a)
        return np.asarray(a, dtype=np.float32)

    def rows(self, name, ids):
        t = self.tensors[name]
        if t["dtype"] == "float32":
            return self[name][ids]
        a = self._array(np.dtype(t["dtype"]), t["offset"], t["shape"])[ids]
        return self._scaled(t, a, ids) if t["dtype"] == "int8" else a.astype(np.float32)


def _read(path):
    with open(path, "rb") as f:
        return f.read()
