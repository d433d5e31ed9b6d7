"""Tiny synthetic models written as GGUF files with the `gguf` package (numpy only, no torch):
what a reader's own model file is to the page (toymodels/models/ownfile.py), in a few hundred
kilobytes. Random weights, 2 layers of 4 heads, 32 wide (llama and qwen2: 2 key/value groups;
qwen2 with its query, key and value biases; gpt2 with LayerNorms, learned positions and one
fused query-key-value matrix); a byte-level BPE vocabulary (GPT-2's 256 byte characters, a few
merges, <|endoftext|> a control token), so any text is read. The names and layouts are
llama.cpp's (tests/test_gguffile.py holds the forward to transformers on files written so)."""

import numpy as np

from toymodels.models.smollm2 import bpe

LAYERS, HEADS, KV, D, FF = 2, 4, 2, 32, 48
MERGES = ["Ġ t", "h e", "Ġt he", "Ġ c", "a t", "Ġc at", "Ġ s", "Ġs at"]
EOT = "<|endoftext|>"


def vocabulary():
    """(tokens, merges, token types): the byte characters, the merges' results, the end token."""
    tokens = list(bpe.byte_alphabet().values())
    tokens += ["".join(m.split()) for m in MERGES if "".join(m.split()) not in tokens]
    tokens.append(EOT)
    types = [3 if t == EOT else 1 for t in tokens]
    return tokens, MERGES, types


def write_llama(path, kind="F32", seed=5):
    """The tiny llama as a GGUF file at PATH, its matrices in KIND ("F32" or "F16")."""
    return write(path, "llama", kind, seed)


def write_gpt2_small(path, seed=5):
    """A random gpt2 of GPT-2 small's shape (12 layers of 12 heads, 768 wide: gpt2check's
    SHAPE) at PATH, in F16, with the tiny vocabulary and " i", " it" merged too, so the source's
    sentence reads "it" and "cat" as one token each. A feed-forward 8 wide keeps the file near
    57 MB; the matrices are scaled by 1/sqrt(width) as the tiny model's are, so its maps are as
    far from uniform."""
    return write(path, "gpt2", "F16", seed, shape=(12, 12, 768, 8), extra=("Ġ i", "Ġi t"))


def write(path, arch="llama", kind="F32", seed=5, shape=None, extra=()):
    """The tiny model of ARCH ("llama", "qwen2" or "gpt2") as a GGUF file at PATH, its
    matrices in KIND ("F32" or "F16"); SHAPE (layers, heads, width, feed-forward width) another
    size than the tiny one, EXTRA more merges."""
    import gguf

    tokens, merges, types = vocabulary()
    for m in extra:
        tokens.insert(-1, "".join(m.split()))
        types.insert(-1, 1)
    merges = merges + list(extra)
    layers, heads, d, ff = shape or (LAYERS, HEADS, D, FF)
    wide = {"dtype": np.float32} if shape else {}  # the tiny model's numbers as they were
    rng = np.random.default_rng(seed)
    hs = d // heads
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(f"Tiny test {arch}")
    w.add_block_count(layers)
    w.add_embedding_length(d)
    w.add_head_count(heads)
    w.add_context_length(64)
    w.add_feed_forward_length(ff)
    if arch == "gpt2":
        w.add_layer_norm_eps(1e-5)
    else:
        w.add_head_count_kv(KV)
        w.add_layer_norm_rms_eps(1e-5)
        w.add_rope_freq_base(10000.0)
        w.add_rope_dimension_count(hs)
    w.add_file_type(0 if kind == "F32" else 1)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_eos_token_id(tokens.index(EOT))

    def matrix(rows, cols, scale=0.3):
        scale *= (D / d) ** 0.5
        a = (rng.standard_normal((rows, cols), **wide) * scale).astype(np.float32)
        return a.astype(np.float16) if kind == "F16" else a

    def vector(n, around=1.0):
        return (around + 0.1 * rng.standard_normal(n)).astype(np.float32)

    w.add_tensor("token_embd.weight", matrix(len(tokens), d, 1.0))
    if arch == "gpt2":
        w.add_tensor("position_embd.weight", matrix(64, d, 0.3))
    for i in range(layers):
        p = f"blk.{i}."
        if arch == "gpt2":
            for name, rows, cols in (
                ("attn_qkv", 3 * d, d),
                ("attn_output", d, d),
                ("ffn_up", ff, d),
                ("ffn_down", d, ff),
            ):
                w.add_tensor(p + name + ".weight", matrix(rows, cols))
                w.add_tensor(p + name + ".bias", vector(rows, 0.0))
            for name in ("attn_norm", "ffn_norm"):
                w.add_tensor(p + name + ".weight", vector(d))
                w.add_tensor(p + name + ".bias", vector(d, 0.0))
            continue
        w.add_tensor(p + "attn_norm.weight", vector(d))
        w.add_tensor(p + "attn_q.weight", matrix(heads * hs, d))
        w.add_tensor(p + "attn_k.weight", matrix(KV * hs, d))
        w.add_tensor(p + "attn_v.weight", matrix(KV * hs, d))
        if arch == "qwen2":
            w.add_tensor(p + "attn_q.bias", vector(heads * hs, 0.0))
            w.add_tensor(p + "attn_k.bias", vector(KV * hs, 0.0))
            w.add_tensor(p + "attn_v.bias", vector(KV * hs, 0.0))
        w.add_tensor(p + "attn_output.weight", matrix(d, heads * hs))
        w.add_tensor(p + "ffn_norm.weight", vector(d))
        w.add_tensor(p + "ffn_gate.weight", matrix(ff, d))
        w.add_tensor(p + "ffn_up.weight", matrix(ff, d))
        w.add_tensor(p + "ffn_down.weight", matrix(d, ff))
    w.add_tensor("output_norm.weight", vector(d))
    if arch == "gpt2":
        w.add_tensor("output_norm.bias", vector(d, 0.0))
    w.add_tensor("output.weight", matrix(len(tokens), d))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
