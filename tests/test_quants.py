"""The shipped dequantisation (toymodels/models/quants.py) against the gguf package's
`gguf.quants.dequantize`, bit for bit, for every block type the page reads: random blocks
(whose halves include NaN, infinities and subnormals), scales set to the extremes of float16,
negative zero and subnormal halves, and blocks gguf's own quantiser writes where it has one."""

import numpy as np
import pytest

from toymodels.models import gguf as site_gguf
from toymodels.models import quants

gguf = pytest.importorskip("gguf", reason="the reference is the gguf package")
T = gguf.GGMLQuantizationType

# where each type keeps its float16 scales and mins, in bytes from the block's start
HALVES = {
    "Q4_0": [0],
    "Q4_1": [0, 2],
    "Q5_0": [0],
    "Q5_1": [0, 2],
    "Q8_0": [0],
    "Q4_K": [0, 2],
    "Q5_K": [0, 2],
    "Q6_K": [208],
}
# float16 bit patterns: largest, -largest, smallest subnormal, largest subnormal, -0, +0,
# smallest normal, 1, inf, -inf, NaN, a NaN with a payload and its sign set
SPECIAL = np.array(
    [
        0x7BFF,
        0xFBFF,
        0x0001,
        0x03FF,
        0x8000,
        0x0000,
        0x0400,
        0x3C00,
        0x7C00,
        0xFC00,
        0x7E00,
        0xFD23,
    ],
    np.uint16,
)


def same_bits(ours, ref):
    ref = np.asarray(ref, np.float32)
    assert ours.dtype == np.float32 and ours.shape == ref.shape
    diff = np.flatnonzero(ours.view(np.uint32).ravel() != ref.view(np.uint32).ravel())
    assert diff.size == 0, f"{diff.size} weights differ, first at {diff[0]}"


def reference(raw, kind, shape):
    """gguf-py's dequantisation of raw bytes laid out as the file holds them."""
    per_row = quants.nbytes(kind, shape[-1:])
    return gguf.quants.dequantize(raw.reshape(-1, per_row), T[kind]).reshape(shape)


def random_blocks(kind, rows, rng):
    """`rows` rows of two blocks of random bytes each; the first rows' scales (and mins) are
    every pair of SPECIAL values, so each extreme meets each other one."""
    per, size = quants.TYPES[kind]
    raw = rng.integers(0, 256, (rows, 2, size), dtype=np.uint8)
    pairs = np.array(np.meshgrid(SPECIAL, SPECIAL)).reshape(2, -1).T[:rows]  # (144, 2)
    for k, at in enumerate(HALVES.get(kind, [])):
        halves = raw[: len(pairs), 0, at : at + 2].copy().view("<u2")
        halves[:, 0] = pairs[:, k]
        raw[: len(pairs), 0, at : at + 2] = halves.view(np.uint8)
    return raw.reshape(-1), (rows, 2 * per)


@pytest.mark.parametrize("kind", list(quants.TYPES))
def test_random_and_extreme_blocks_equal_gguf_bit_for_bit(kind):
    """Also into an array made before the bytes (`out`, filled with NaN first): the same
    bits, in that array."""
    rng = np.random.default_rng(sum(map(ord, kind)))
    raw, shape = random_blocks(kind, 160, rng)
    with np.errstate(all="ignore"):
        same_bits(quants.dequantize(raw, kind, shape), reference(raw, kind, shape))
        out = np.full(shape, np.nan, np.float32)
        got = quants.dequantize(raw, kind, shape, out=out)
        assert got is out or got.base is out
        same_bits(out, reference(raw, kind, shape))


@pytest.mark.parametrize("kind", ["F32", "F16", "BF16"])
def test_float_types_keep_negative_zero_subnormals_and_nan_payloads(kind):
    width = 4 if kind == "F32" else 2
    patterns = [0x8000, 0x0001, 0x03FF, 0x7C00, 0xFC01, 0x7E55, 0x3C00, 0xFFFF, 0x0000]
    raw = np.array(patterns, f"<u{width}").view(np.uint8)
    if kind == "F32":
        raw = np.array([p << 16 for p in patterns] + [0x00000001, 0x807FFFFF], "<u4").view(np.uint8)
    n = raw.size // width
    same_bits(quants.dequantize(raw, kind, (n,)), reference(raw, kind, (n,)))


def quantisable(rng):
    """Weights gguf's quantisers meet in real files and at their edges: normal ones, rows of
    zeros, negative zeros, float32 subnormals, huge and tiny scales, a row of one value."""
    x = rng.standard_normal((12, 256)).astype(np.float32)
    x[1] = 0.0
    x[2] = -0.0
    x[3] = np.float32(1e-40) * rng.standard_normal(256).astype(np.float32)
    x[4] *= np.float32(6e4 / 4)
    x[5] *= np.float32(1e-7)
    x[6] = 0.5
    x[7, ::3] = -0.0
    return x


@pytest.mark.parametrize("kind", ["F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"])
def test_blocks_gguf_quantises_equal_gguf_bit_for_bit(kind):
    x = quantisable(np.random.default_rng(7))
    with np.errstate(all="ignore"):
        raw = np.ascontiguousarray(gguf.quants.quantize(x, T[kind])).view(np.uint8).reshape(-1)
        same_bits(quants.dequantize(raw, kind, x.shape), reference(raw, kind, x.shape))


def test_k_types_gguf_cannot_quantise_are_covered_by_random_blocks():
    """gguf-py has no quantiser for these; the random blocks above are their only test, so
    check that this is still so (if it gains one, add the type to the test above)."""
    with pytest.raises(NotImplementedError):
        gguf.quants.quantize(np.zeros((1, 256), np.float32), T.Q4_K)


def test_sizes_and_type_ids_are_gguf_s():
    for kind, (per, size) in quants.TYPES.items():
        assert gguf.GGML_QUANT_SIZES[T[kind]] == (per, size), kind
        assert quants.nbytes(kind, (3, 2 * per)) == 6 * size
    for kind in quants.TYPES:
        assert site_gguf.BLOCK_TYPES[int(T[kind])] == kind


def test_wrong_sizes_and_types_say_what_is_wrong():
    with pytest.raises(ValueError, match=r"Q4_K \(2, 256\) needs 288 bytes, got 20"):
        quants.dequantize(np.zeros(20, np.uint8), "Q4_K", (2, 256))
    with pytest.raises(ValueError, match="rows are not a whole number of 256-weight blocks"):
        quants.nbytes("Q6_K", (2, 128))
    with pytest.raises(ValueError, match="'Q2_K' is not one of F32, F16, BF16, Q4_0"):
        quants.nbytes("Q2_K", (256,))


def test_chunks_and_rows_give_the_whole_tensor_s_weights(monkeypatch):
    """A tensor longer than a chunk comes out as one done at once; rows() as the full
    tensor's rows."""
    rng = np.random.default_rng(3)
    for kind in ("Q6_K", "Q5_0"):
        raw, shape = random_blocks(kind, 9, rng)
        with np.errstate(all="ignore"):
            whole = quants.dequantize(raw, kind, shape)
            monkeypatch.setattr(quants, "CHUNK", 4)
            same_bits(quants.dequantize(raw, kind, shape), whole)
            monkeypatch.setattr(quants, "CHUNK", 4096)
            same_bits(quants.rows(raw, kind, shape, [8, 0, 8]), whole[[8, 0, 8]])
