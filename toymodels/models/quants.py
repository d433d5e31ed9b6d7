"""GGUF's tensor blocks as float32, in numpy alone (no `gguf` package: this runs under Pyodide
too), one tensor at a time, so a model too large to keep in float32 can keep its blocks and
dequantise a layer when the forward reaches it.

    dequantize(raw, kind, shape) -> float32 array of shape
    nbytes(kind, shape)          -> the bytes a tensor of that kind and shape takes
    rows(raw, kind, shape, ids)  -> only those rows of a (rows, cols) tensor

`kind` is the block type's name as GGUF's ggml type ids name it (gguf.py's BLOCK_TYPES);
`shape` is numpy's, rows first, so its last axis is GGUF's first dimension, the one the
blocks run along: it must be a whole number of blocks. Each block type (weights a block,
bytes a block: layout, little-endian; "d", "m" float16 unless said; q the stored integers):

    F32    1    4  the float32
    F16    1    2  the float16
    BF16   1    2  the upper half of a float32
    Q4_0  32   18  d, 16 bytes of 4-bit q (byte j: weight j low, weight j+16 high); d (q - 8)
    Q4_1  32   20  d, m, 16 bytes of 4-bit q as Q4_0;                             d q + m
    Q5_0  32   22  d, a u32 of fifth bits (bit j: weight j), 16 bytes as Q4_0;   d (q - 16)
    Q5_1  32   24  d, m, the u32 of fifth bits, 16 bytes as Q4_0;                 d q + m
    Q8_0  32   34  d, 32 int8 q;                                                   d q
    Q4_K 256  144  d, dmin, 12 bytes of eight 6-bit scales s and mins n, 128 bytes of 4-bit
                   q (32 bytes a pair of 32-weight sub-blocks: low nibbles the first, high
                   the second); sub-block i: (d s_i) q - (dmin n_i)
    Q5_K 256  176  d, dmin, the 12 bytes as Q4_K, 32 bytes of fifth bits (bit i of byte l:
                   weight l of sub-block i), 128 bytes as Q4_K;  (d s_i) q - (dmin n_i)
    Q6_K 256  210  128 bytes of low 4 bits, 64 of high 2 bits, 16 int8 scales s, d;
                   16-weight group i: (d s_i) (q - 32)

Q5_0 and Q5_1 are here because llama.cpp writes them into Q4_K_M files for the tensors whose
rows are not a multiple of 256 (Qwen2-0.5B's 896 wide, SmolLM2-360M's 960).
The products are float32 and done in the order llama.cpp's reference (and gguf-py's
`gguf.quants.dequantize`) does them, so the weights are the same to the last bit
(tests/test_quants.py holds every type to gguf-py). Under Pyodide every number is the same
too, but a NaN made by infinite scales (inf + -inf in Q4_1 and Q5_1) may have the other sign
bit: WebAssembly leaves a new NaN's sign to the engine; no real file has infinite scales.
Large tensors are done CHUNK blocks at a time into the output, so the integers unpacked on
the way never take more than a few MB.
"""

import numpy as np

# name: (weights a block, bytes a block)
TYPES = {
    "F32": (1, 4),
    "F16": (1, 2),
    "BF16": (1, 2),
    "Q4_0": (32, 18),
    "Q4_1": (32, 20),
    "Q5_0": (32, 22),
    "Q5_1": (32, 24),
    "Q8_0": (32, 34),
    "Q4_K": (256, 144),
    "Q5_K": (256, 176),
    "Q6_K": (256, 210),
}
CHUNK = 4096  # blocks unpacked at once (Q6_K: 4096 x 256 int8 = 1 MB of q)


def _bytes(raw):
    return np.frombuffer(raw, np.uint8) if not isinstance(raw, np.ndarray) else raw.reshape(-1)


def nbytes(kind, shape):
    """Bytes of a tensor of that kind and shape (rows first; the last axis a whole number of
    the kind's blocks)."""
    if kind not in TYPES:
        raise ValueError(f"block type {kind!r} is not one of {', '.join(TYPES)}")
    per, size = TYPES[kind]
    shape = tuple(int(n) for n in shape)
    if not shape or min(shape) < 0 or shape[-1] % per:
        raise ValueError(f"{kind} {shape}: rows are not a whole number of {per}-weight blocks")
    return int(np.prod(shape, dtype=np.int64)) // per * size


def dequantize(raw, kind, shape, out=None):
    """Raw bytes (a buffer or uint8 array) of one tensor -> float32 array of `shape`; `out`, a
    contiguous float32 array of `shape` made before the bytes were read, receives it (so the
    bytes, let go after, leave no hole under it in an allocator that cannot give memory back,
    as Pyodide's WebAssembly heap cannot)."""
    raw, need = _bytes(raw), nbytes(kind, shape)
    if raw.size != need:
        raise ValueError(f"{kind} {tuple(shape)} needs {need} bytes, got {raw.size}")
    if out is None:
        out = np.empty(shape, np.float32)
    elif out.dtype != np.float32 or not out.flags.c_contiguous or out.shape != tuple(shape):
        raise ValueError(f"out is a contiguous float32 array of {tuple(shape)}")
    flat = out.reshape(-1)  # a view, `out` being contiguous
    if kind == "F32":
        flat[...] = raw.view("<f4")
    elif kind == "F16":
        flat[...] = raw.view("<f2")
    elif kind == "BF16":
        flat.view(np.uint32)[...] = raw.view("<u2").astype(np.uint32) << 16
    else:
        per, size = TYPES[kind]
        blocks = raw.reshape(-1, size)
        rows = flat.reshape(len(blocks), per)
        unpack = _UNPACK[kind]
        for at in range(0, len(blocks), CHUNK):
            unpack(blocks[at : at + CHUNK], rows[at : at + CHUNK])
    return out.reshape(shape)


def rows(raw, kind, shape, ids):
    """Only rows `ids` of a (rows, cols) tensor, dequantised: (len(ids), cols) float32 (an
    embedding lookup without dequantising the whole matrix)."""
    n, cols = shape
    per_row = nbytes(kind, (cols,))
    picked = _bytes(raw).reshape(n, per_row)[np.asarray(ids, dtype=np.int64)]
    return dequantize(picked, kind, (len(picked), cols))


def _half(blocks, at):
    """The float16 at byte `at` of each block, as float32 (n, 1)."""
    return np.ascontiguousarray(blocks[:, at : at + 2]).view("<f2").astype(np.float32)


def _nibbles(qs, out):
    """16 bytes a row -> 32 4-bit values: the low nibbles, then the high ones, into `out`."""
    n = len(qs)
    q = out.reshape(n, 2, -1)
    np.bitwise_and(qs, 0x0F, out=q[:, 0])
    np.right_shift(qs, 4, out=q[:, 1])


def _fifth_bits(qh):
    """4 bytes a row (a little-endian u32) -> 32 bits, bit j of the u32 at j, as uint8 << 4."""
    return np.unpackbits(qh, axis=1, bitorder="little") << np.uint8(4)


def _q4_0(blocks, out):
    q = np.empty((len(blocks), 32), np.uint8)
    _nibbles(blocks[:, 2:], q)
    out[:] = q
    out -= 8  # exact: small integers
    out *= _half(blocks, 0)


def _q4_1(blocks, out):
    q = np.empty((len(blocks), 32), np.uint8)
    _nibbles(blocks[:, 4:], q)
    out[:] = q
    out *= _half(blocks, 0)  # d q, then + m: the reference's order, in place
    out += _half(blocks, 2)


def _q5_0(blocks, out):
    q = np.empty((len(blocks), 32), np.uint8)
    _nibbles(blocks[:, 6:], q)
    q |= _fifth_bits(blocks[:, 2:6])
    out[:] = q
    out -= 16
    out *= _half(blocks, 0)


def _q5_1(blocks, out):
    q = np.empty((len(blocks), 32), np.uint8)
    _nibbles(blocks[:, 8:], q)
    q |= _fifth_bits(blocks[:, 4:8])
    out[:] = q
    out *= _half(blocks, 0)
    out += _half(blocks, 2)


def _q8_0(blocks, out):
    out[:] = blocks[:, 2:].view(np.int8)
    out *= _half(blocks, 0)


def _scales_mins(packed):
    """Q4_K's and Q5_K's 12 bytes -> eight 6-bit scales and eight 6-bit mins (n, 8) each:
    bytes 0-3 hold scales 0-3 in their low 6 bits and the top 2 bits of scales 4-7; bytes
    4-7 the same for the mins; bytes 8-11 the low 4 bits of scales 4-7 (low nibble) and of
    mins 4-7 (high nibble)."""
    d, m, md = packed[:, 0:4], packed[:, 4:8], packed[:, 8:12]
    sc = np.concatenate([d & 0x3F, (md & 0x0F) | ((d >> 2) & 0x30)], axis=1)
    mn = np.concatenate([m & 0x3F, (md >> 4) | ((m >> 2) & 0x30)], axis=1)
    return sc, mn


def _k_affine(blocks, q, out):
    """out = (d s_i) q - (dmin n_i) for q (n, 8, 32) of 32-weight sub-blocks."""
    n = len(blocks)
    sc, mn = _scales_mins(blocks[:, 4:16])
    dl = (_half(blocks, 0) * sc.astype(np.float32)).reshape(n, 8, 1)
    ml = (_half(blocks, 2) * mn.astype(np.float32)).reshape(n, 8, 1)
    w = out.reshape(n, 8, 32)
    w[:] = q
    w *= dl
    w -= ml


def _q4_k(blocks, out):
    n = len(blocks)
    q = np.empty((n, 4, 2, 32), np.uint8)
    qs = blocks[:, 16:].reshape(n, 4, 32)
    np.bitwise_and(qs, 0x0F, out=q[:, :, 0])
    np.right_shift(qs, 4, out=q[:, :, 1])
    _k_affine(blocks, q.reshape(n, 8, 32), out)


def _q5_k(blocks, out):
    n = len(blocks)
    q = np.empty((n, 4, 2, 32), np.uint8)
    qs = blocks[:, 48:].reshape(n, 4, 32)
    np.bitwise_and(qs, 0x0F, out=q[:, :, 0])
    np.right_shift(qs, 4, out=q[:, :, 1])
    q = q.reshape(n, 8, 32)
    bits = np.unpackbits(blocks[:, 16:48].reshape(n, 32, 1), axis=2, bitorder="little")
    q |= bits.transpose(0, 2, 1) << np.uint8(4)  # bit i of byte l: sub-block i, weight l
    _k_affine(blocks, q, out)


def _q6_k(blocks, out):
    n = len(blocks)
    ql = blocks[:, :128].reshape(n, 2, 2, 32)  # half h, 32-byte run r
    qh = blocks[:, 128:192].reshape(n, 2, 1, 32)
    q = np.empty((n, 2, 4, 32), np.uint8)  # half h, group g: low nibbles of runs 0, 1, then high
    np.bitwise_and(ql, 0x0F, out=q[:, :, 0:2])
    np.right_shift(ql, 4, out=q[:, :, 2:4])
    q |= ((qh >> np.array([0, 2, 4, 6], np.uint8).reshape(1, 1, 4, 1)) & 3) << np.uint8(4)
    scale = _half(blocks, 208) * blocks[:, 192:208].view(np.int8).astype(np.float32)
    w = out.reshape(n, 16, 16)
    w[:] = q.reshape(n, 16, 16)
    w -= 32
    w *= scale.reshape(n, 16, 1)


_UNPACK = {
    "Q4_0": _q4_0,
    "Q4_1": _q4_1,
    "Q5_0": _q5_0,
    "Q5_1": _q5_1,
    "Q8_0": _q8_0,
    "Q4_K": _q4_k,
    "Q5_K": _q5_k,
    "Q6_K": _q6_k,
}
