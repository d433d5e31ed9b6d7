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


def write(path, arch="llama", kind="F32", seed=5):
    """The tiny model of ARCH ("llama", "qwen2" or "gpt2") as a GGUF file at PATH, its
    matrices in KIND ("F32" or "F16")."""
    import gguf

    tokens, merges, types = vocabulary()
    rng = np.random.default_rng(seed)
    hs = D // HEADS
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(f"Tiny test {arch}")
    w.add_block_count(LAYERS)
    w.add_embedding_length(D)
    w.add_head_count(HEADS)
    w.add_context_length(64)
    w.add_feed_forward_length(FF)
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
        a = (rng.standard_normal((rows, cols)) * scale).astype(np.float32)
        return a.astype(np.float16) if kind == "F16" else a

    def vector(n, around=1.0):
        return (around + 0.1 * rng.standard_normal(n)).astype(np.float32)

    w.add_tensor("token_embd.weight", matrix(len(tokens), D, 1.0))
    if arch == "gpt2":
        w.add_tensor("position_embd.weight", matrix(64, D, 0.3))
    for i in range(LAYERS):
        p = f"blk.{i}."
        if arch == "gpt2":
            for name, rows, cols in (
                ("attn_qkv", 3 * D, D),
                ("attn_output", D, D),
                ("ffn_up", FF, D),
                ("ffn_down", D, FF),
            ):
                w.add_tensor(p + name + ".weight", matrix(rows, cols))
                w.add_tensor(p + name + ".bias", vector(rows, 0.0))
            for name in ("attn_norm", "ffn_norm"):
                w.add_tensor(p + name + ".weight", vector(D))
                w.add_tensor(p + name + ".bias", vector(D, 0.0))
            continue
        w.add_tensor(p + "attn_norm.weight", vector(D))
        w.add_tensor(p + "attn_q.weight", matrix(HEADS * hs, D))
        w.add_tensor(p + "attn_k.weight", matrix(KV * hs, D))
        w.add_tensor(p + "attn_v.weight", matrix(KV * hs, D))
        if arch == "qwen2":
            w.add_tensor(p + "attn_q.bias", vector(HEADS * hs, 0.0))
            w.add_tensor(p + "attn_k.bias", vector(KV * hs, 0.0))
            w.add_tensor(p + "attn_v.bias", vector(KV * hs, 0.0))
        w.add_tensor(p + "attn_output.weight", matrix(D, HEADS * hs))
        w.add_tensor(p + "ffn_norm.weight", vector(D))
        w.add_tensor(p + "ffn_gate.weight", matrix(FF, D))
        w.add_tensor(p + "ffn_up.weight", matrix(FF, D))
        w.add_tensor(p + "ffn_down.weight", matrix(D, FF))
    w.add_tensor("output_norm.weight", vector(D))
    if arch == "gpt2":
        w.add_tensor("output_norm.bias", vector(D, 0.0))
    w.add_tensor("output.weight", matrix(len(tokens), D))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
