"""A synthetic GGUF file of SmolLM2-360M's shapes, quantised as llama.cpp's Q4_K_M quantises
that model, for the bench's part `ownfile` (no 360M weights are fetched, shipped or committed:
the file is written into a temporary folder and deleted after the run).

The shapes are SmolLM2-360M's config: 32 layers, 960 wide, 15 heads of 64 sharing 5 key/value
groups, a feed-forward 2560 wide, a vocabulary of 49,152 tokens tied to the output. The
tokenizer (metadata only) is SmolLM2-135M's, which has the same vocabulary, taken from the
file given. The weights are random but valid blocks: random bytes with every float16 scale
set to a small finite number, so the forward runs on numbers of a real file's size.

The block types follow llama.cpp's Q4_K_M (llama_tensor_get_type in its llama-quant.cpp):
Q4_K for the matrices, Q6_K for the tied embedding (the output) and, in the layers its
use_more_bits picks, for attn_v and ffn_down; F32 for the norms. A k-quant's block runs along
256 weights of a row, and a row of 960 is not a whole number of them, so llama.cpp falls back
for every tensor 960 wide along its rows (all but ffn_down): Q4_K to Q5_0, Q6_K to Q8_0. That
is what a real SmolLM2-360M Q4_K_M file holds, so the bench's file does too.
"""

import numpy as np

from toymodels.models import gguf as site_gguf
from toymodels.models import quants

CONFIG = {"layers": 32, "width": 960, "heads": 15, "kv": 5, "ffn": 2560, "vocab": 49152}
# where each type keeps its float16 scales (and mins), in bytes from the block's start
SCALES = {"Q5_0": [0], "Q8_0": [0], "Q4_K": [0, 2], "Q6_K": [208]}
FALLBACK = {"Q4_K": "Q5_0", "Q6_K": "Q8_0"}  # llama.cpp's, for rows not a multiple of 256


def more_bits(i, n):
    """llama.cpp's use_more_bits: the layers Q4_K_M gives Q6_K's attn_v and ffn_down."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def kind_for(name, cols, layer, n):
    """The block type Q4_K_M gives tensor NAME with rows of COLS weights, in LAYER of N."""
    if name.endswith("norm.weight"):
        return "F32"
    kind = "Q4_K"
    if name == "token_embd.weight" or (
        name.split(".")[-2] in ("attn_v", "ffn_down") and more_bits(layer, n)
    ):
        kind = "Q6_K"
    return kind if cols % 256 == 0 else FALLBACK[kind]


def blocks(kind, rows, cols, rng):
    """Random valid blocks of a (rows, cols) tensor: random bytes, every float16 scale a small
    finite number (so a weight is about 0.01-0.1, as a trained model's are) -> uint8 array."""
    per, size = quants.TYPES[kind]
    n = rows * cols // per
    raw = rng.integers(0, 256, (n, size), dtype=np.uint8)
    small = {"Q5_0": 4e-3, "Q8_0": 4e-4, "Q4_K": 1e-4, "Q6_K": 2e-4}[kind]
    for at in SCALES[kind]:
        halves = (small * (0.5 + rng.random(n))).astype(np.float16)
        raw[:, at : at + 2] = halves.view(np.uint8).reshape(n, 2)
    return raw.reshape(rows, -1)


def tensors(c):
    """(name, numpy shape) of a model of config C, in the order llama.cpp writes them."""
    d, hs = c["width"], c["width"] // c["heads"]
    yield "token_embd.weight", (c["vocab"], d)
    for i in range(c["layers"]):
        p = f"blk.{i}."
        yield p + "attn_norm.weight", (d,)
        yield p + "attn_q.weight", (c["heads"] * hs, d)
        yield p + "attn_k.weight", (c["kv"] * hs, d)
        yield p + "attn_v.weight", (c["kv"] * hs, d)
        yield p + "attn_output.weight", (d, c["heads"] * hs)
        yield p + "ffn_norm.weight", (d,)
        yield p + "ffn_gate.weight", (c["ffn"], d)
        yield p + "ffn_up.weight", (c["ffn"], d)
        yield p + "ffn_down.weight", (d, c["ffn"])
    yield "output_norm.weight", (d,)


def write(path, donor, seed=360, config=None):
    """The file at PATH; DONOR: the bytes of a GGUF file whose tokenizer it takes (SmolLM2's,
    for the vocabulary of CONFIG, by default SmolLM2-360M's). Needs the gguf package (the test
    tier) to write. -> {block type: tensor count}."""
    import gguf

    c, rng = config or CONFIG, np.random.default_rng(seed)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("Synthetic SmolLM2-360M shapes (Q4_K_M-like, random weights)")
    w.add_block_count(c["layers"])
    w.add_context_length(8192)
    w.add_embedding_length(c["width"])
    w.add_feed_forward_length(c["ffn"])
    w.add_head_count(c["heads"])
    w.add_head_count_kv(c["kv"])
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(100000.0)
    w.add_rope_dimension_count(c["width"] // c["heads"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    for key, value in site_gguf.Header(donor).fields.items():
        if not key.startswith("tokenizer."):
            continue
        if isinstance(value, list):
            w.add_array(key, value)
        elif isinstance(value, bool):
            w.add_bool(key, value)
        elif isinstance(value, int):
            w.add_uint32(key, value)
        else:
            w.add_string(key, value)
    counts = {}
    for name, shape in tensors(c):
        layer = int(name.split(".")[1]) if name.startswith("blk.") else None
        kind = kind_for(name, shape[-1], layer, c["layers"])
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "F32":
            w.add_tensor(name, (1 + 0.1 * rng.standard_normal(shape)).astype(np.float32))
            continue
        raw = blocks(kind, *shape, rng)
        w.add_tensor(name, raw, raw_shape=raw.shape, raw_dtype=gguf.GGMLQuantizationType[kind])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return counts
