"""GGUF's blocks as float32, in numpy alone (no `gguf` package: this runs under Pyodide too).

SmolLM2's file holds three kinds of tensor, each a row-major matrix (rows, cols) whose rows are
cut into blocks of 32 weights (cols is a multiple of 32):

    F32   4 bytes a weight, little-endian
    Q8_0  34 bytes a block: a float16 scale d, then 32 int8 q;      w = q * d
    Q4_1  20 bytes a block: float16 scale d, float16 min m, then 16 bytes holding 32 4-bit q:
          byte j's low nibble is weight j, its high nibble weight j + 16 (llama.cpp's order);
          w = d * q + m

The products are done in float32 in the order llama.cpp's reference (and gguf-py's
`gguf.quants.dequantize`) does them, so the weights are the same to the last bit.
"""

import numpy as np

BLOCK = 32
BYTES = {"F32": 4 * BLOCK, "Q8_0": 2 + BLOCK, "Q4_1": 4 + BLOCK // 2}  # per 32 weights


def nbytes(kind, shape):
    """Bytes of a tensor of that kind and shape (rows, cols) or (n,)."""
    n = int(np.prod(shape))
    if n % BLOCK:
        raise ValueError(f"{shape}: not a whole number of {BLOCK}-weight blocks")
    if kind not in BYTES:
        raise ValueError(f"block type {kind!r} is not one of {sorted(BYTES)}")
    return n // BLOCK * BYTES[kind]


def dequantize(raw, kind, shape):
    """Raw bytes (a buffer or uint8 array) of one tensor -> float32 array of `shape`."""
    raw = np.frombuffer(raw, np.uint8) if not isinstance(raw, np.ndarray) else raw.reshape(-1)
    if raw.size != nbytes(kind, shape):
        raise ValueError(f"{kind} {shape} needs {nbytes(kind, shape)} bytes, got {raw.size}")
    if kind == "F32":
        return raw.view("<f4").astype(np.float32).reshape(shape)
    blocks = raw.reshape(-1, BYTES[kind])  # (n_blocks, bytes per block)
    if kind == "Q8_0":
        d = np.ascontiguousarray(blocks[:, 0:2]).view("<f2").astype(np.float32)  # (n_blocks, 1)
        q = np.ascontiguousarray(blocks[:, 2:]).view(np.int8).astype(np.float32)  # (n_blocks, 32)
        return (q * d).reshape(shape)
    dm = np.ascontiguousarray(blocks[:, 0:4]).view("<f2").astype(np.float32)  # (n_blocks, 2)
    qs = blocks[:, 4:]  # (n_blocks, 16)
    q = np.empty((len(blocks), 2, 16), np.uint8)  # the nibbles, low then high, in place
    np.bitwise_and(qs, 0x0F, out=q[:, 0])
    np.right_shift(qs, 4, out=q[:, 1])
    w = q.reshape(-1, 32).astype(np.float32)  # (n_blocks, 32)
    w *= dm[:, :1]  # d * q, then + m: the reference's order, in place (1.7 times faster
    w += dm[:, 1:]  # under Pyodide than with concatenate and new arrays)
    return w.reshape(shape)


def rows(raw, kind, shape, ids):
    """Only rows `ids` of a (rows, cols) tensor, dequantised: (len(ids), cols) float32 (an
    embedding lookup without dequantising the whole matrix)."""
    n, cols = shape
    raw = np.frombuffer(raw, np.uint8) if not isinstance(raw, np.ndarray) else raw.reshape(-1)
    per_row = nbytes(kind, (cols,))
    picked = raw.reshape(n, per_row)[np.asarray(ids, dtype=np.int64)]
    return dequantize(picked, kind, (len(picked), cols))
