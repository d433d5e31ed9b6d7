"""GGUF's tensor blocks as float32, in numpy alone (this runs under Pyodide too).

A stand-in holding the two plain kinds a reader's own file is read in here, F32 and F16 (the
block types of gguf.py's BLOCK_TYPES): the full set of quantised blocks comes with the same two
functions.
"""

import numpy as np

BYTES = {"F32": 4, "F16": 2}  # per weight
DTYPES = {"F32": "<f4", "F16": "<f2"}


def nbytes(kind, shape):
    """Bytes of a tensor of that kind and shape (rows, cols) or (n,)."""
    if kind not in BYTES:
        raise ValueError(f"block type {kind!r} is not one of {sorted(BYTES)}")
    return int(np.prod(shape)) * BYTES[kind]


def dequantize(raw, kind, shape):
    """Raw bytes (a buffer or uint8 array) of one tensor -> float32 array of `shape`."""
    raw = np.frombuffer(raw, np.uint8) if not isinstance(raw, np.ndarray) else raw.reshape(-1)
    if raw.size != nbytes(kind, shape):
        raise ValueError(f"{kind} {shape} needs {nbytes(kind, shape)} bytes, got {raw.size}")
    return raw.view(DTYPES[kind]).astype(np.float32).reshape(shape)
