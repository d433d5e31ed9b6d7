"""A reader's own GGUF file (toymodels/models/gguffile/) against transformers loading the same
file: tiny random models of each architecture the page runs (llama and qwen2 with grouped-query
attention, gpt2), made with transformers, written as GGUF F32 and F16 with the `gguf` package
under the names and in the layouts llama.cpp's converter writes (llama's query and key rows
interleaved, GPT-2's Conv1D matrices transposed, GPT-2's output matrix a copy of the
embedding), then read by transformers' own GGUF loader and by ours.

Bounds reached here, on 13 tokens (F32 and F16 alike: both sides read the same F16 values as
float32): every attention weight within 6e-7 of transformers' and every logit within 1e-5
(logits spanning 7 to 44); the KV cache read in pieces within 5e-7 and 6e-6 of the full
forward. The tests hold 1e-5 and 1e-4, ten times the error, still ten times tighter than the
1e-4 and 1e-3 asked: GPT-2's exact GELU in place of its tanh form, for one, is 1.6e-4 and
5e-3 off.

The tokenizer read from a file's metadata gives transformers' token ids (its tokenizer built
from the same file) on tricky strings, for each pre-tokenizer a file may name.
"""

import numpy as np
import pytest

from toymodels.models import gguf as reader
from toymodels.models.card import Plan
from toymodels.models.gguffile import model as gf

gguf = pytest.importorskip("gguf", reason="the files are written with the gguf package")
torch = transformers = None  # the reference, imported when a test of this file first runs


@pytest.fixture(scope="module", autouse=True)
def reference_libraries():
    """torch and transformers, imported when this file's tests run, not when every worker
    collects them (seconds of each worker's processor time)."""
    global torch, transformers
    torch = pytest.importorskip("torch", reason="the reference needs torch (export tier)")
    transformers = pytest.importorskip("transformers", reason="the reference needs transformers")


VOCAB, D, HEADS, KV, LAYERS, FF = 80, 32, 4, 2, 2, 48
KINDS = ("F32", "F16")
ATTENTION, LOGITS = 1e-5, 1e-4  # the largest differences allowed
IDS = [int(i) for i in np.random.default_rng(7).integers(0, VOCAB, 13)]


def tiny(arch):
    """A random transformers model of ARCH, its weights scaled up so every head's attention is
    far from uniform (transformers' own init, std 0.02, leaves the maps nearly flat)."""
    torch.manual_seed({"llama": 1, "qwen2": 2, "gpt2": 3}[arch])
    if arch == "gpt2":
        cfg = transformers.GPT2Config(
            vocab_size=VOCAB, n_embd=D, n_head=HEADS, n_layer=LAYERS, n_positions=1024
        )
    else:
        Config = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config}[arch]
        cfg = Config(
            vocab_size=VOCAB,
            hidden_size=D,
            intermediate_size=FF,
            num_hidden_layers=LAYERS,
            num_attention_heads=HEADS,
            num_key_value_heads=KV,
            max_position_embeddings=64,
            rope_theta=10000.0,
            rms_norm_eps=1e-5,
            tie_word_embeddings=arch == "llama",  # one of each: tied, and an output matrix
        )
    net = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager")
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name.endswith("bias") or "norm" in name or ".ln_" in name:
                p.copy_(torch.randn_like(p) * 0.1 + (1.0 if "weight" in name else 0.0))
            else:
                p.copy_(torch.randn_like(p) * (1.0 if "wte" in name or "embed" in name else 0.2))
    return net.eval()


def permute(w, n_head):
    """llama.cpp's converter's interleave of each head's query or key rows."""
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


def write(net, arch, path, kind, skip=(), extra=None):
    """NET as llama.cpp's converter writes it: GGUF, matrices in KIND, vectors in F32 (without
    the tensors named in SKIP: a broken file; with the tensors EXTRA {name: array})."""
    names = gguf.get_tensor_name_map({v: k for k, v in gguf.MODEL_ARCH_NAMES.items()}[arch], LAYERS)
    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(LAYERS)
    w.add_embedding_length(D)
    w.add_head_count(HEADS)
    w.add_file_type(0 if kind == "F32" else 1)
    if arch == "gpt2":
        w.add_context_length(1024)  # transformers sizes the positions by GPT-2's default
        w.add_feed_forward_length(4 * D)
        w.add_layer_norm_eps(net.config.layer_norm_epsilon)
    else:
        w.add_context_length(64)
        w.add_feed_forward_length(FF)
        w.add_head_count_kv(KV)
        w.add_layer_norm_rms_eps(1e-5)
        w.add_rope_freq_base(10000.0)
        if arch == "llama":
            w.add_rope_dimension_count(D // HEADS)
            w.add_vocab_size(VOCAB)
    w.add_tokenizer_model("gpt2")
    w.add_token_list([f"t{i}" for i in range(VOCAB)])
    for name, t in net.state_dict().items():
        if name == "lm_head.weight" and net.config.tie_word_embeddings and arch != "gpt2":
            continue
        if name.endswith("rotary_emb.inv_freq") or name.endswith(".attn.bias"):
            continue
        a = t.detach().numpy().astype(np.float32)
        base, suffix = name.rsplit(".", 1)
        new = names.get_name(base)
        assert new is not None, name
        if arch == "llama" and new.endswith(("attn_q", "attn_k")):
            a = permute(a, HEADS if new.endswith("attn_q") else KV)
        if (
            arch == "gpt2"
            and suffix == "weight"
            and new.endswith(("attn_qkv", "attn_output", "ffn_up", "ffn_down"))
        ):
            a = a.T  # Conv1D's (in, out) as (out, in)
        if arch == "gpt2" and new == "output":
            continue  # written below, as the converter does: a copy of the embedding
        if f"{new}.{suffix}" in skip:
            continue
        a = np.ascontiguousarray(a)
        w.add_tensor(
            f"{new}.{suffix}", a.astype(np.float16) if kind == "F16" and a.ndim == 2 else a
        )
        if arch == "gpt2" and new == "token_embd":
            w.add_tensor("output.weight", a.astype(np.float16) if kind == "F16" else a)
    for name, a in (extra or {}).items():
        w.add_tensor(name, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """{(arch, kind): (ours, transformers' model of the same file)}, each arch's original
    model under (arch, None), and each file's path under ("path", arch, kind)."""
    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("gguffile")
    out = {}
    for arch in gf.ARCHITECTURES:
        net = tiny(arch)
        out[arch, None] = net
        for kind in KINDS:
            path = folder / f"{arch}-{kind}.gguf"
            write(net, arch, path, kind)
            hf = transformers.AutoModelForCausalLM.from_pretrained(
                str(folder), gguf_file=path.name, dtype=torch.float32, attn_implementation="eager"
            )
            out[arch, kind] = (gf.load(path.read_bytes()), hf.eval())
            out["path", arch, kind] = path
    return out


def reference(net, ids):
    """transformers' attention (layers, heads, T, T) and logits (T, V) as numpy."""
    with torch.no_grad():
        o = net(torch.tensor([ids]), output_attentions=True)
    return np.stack([a[0].numpy() for a in o.attentions]), o.logits[0].numpy()


@pytest.mark.parametrize("arch", gf.ARCHITECTURES)
def test_the_written_file_is_the_model(made, arch):
    """transformers reads the written F32 file back as the model it was made from: the writer
    lays the tensors out as the converter does (else every parity below would prove nothing)."""
    maps, logits = reference(made[arch, None], IDS)
    back_maps, back_logits = reference(made[arch, "F32"][1], IDS)
    assert np.abs(back_maps - maps).max() <= 1e-6
    assert np.abs(back_logits - logits).max() <= 1e-5


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("arch", gf.ARCHITECTURES)
def test_forward_equals_transformers(made, arch, kind):
    ours, hf = made[arch, kind]
    assert ours.arch == arch
    maps, logits = ours.forward(IDS)
    ref_maps, ref_logits = reference(hf, IDS)
    assert maps.shape == ref_maps.shape == (LAYERS, HEADS, len(IDS), len(IDS))
    assert logits.shape == ref_logits.shape == (len(IDS), VOCAB)
    assert ref_maps.max() > 0.9  # heads that pick a token out, not flat maps
    assert np.abs(maps - ref_maps).max() <= ATTENTION
    assert np.abs(logits - ref_logits).max() <= LOGITS


@pytest.mark.parametrize("arch", gf.ARCHITECTURES)
def test_kv_cache_equals_the_full_forward(made, arch):
    """The text read in pieces (6 tokens, then 4, then one at a time) through one cache gives the
    whole text's rows."""
    ours = made[arch, "F32"][0]
    maps, logits = ours.forward(IDS)
    cache = ours.new_cache()
    at = 0
    for n in (6, 4, 1, 1, 1):
        part_maps, part_logits = ours.step(IDS[at : at + n], cache)
        assert len(cache) == at + n
        rows = slice(at, at + n)
        assert np.abs(part_maps - maps[:, :, rows, : at + n]).max() <= ATTENTION
        assert np.abs(part_logits - logits[rows]).max() <= LOGITS
        at += n
    assert at == len(IDS)


@pytest.mark.parametrize("keeps", ["blocks", Plan(1, False), Plan(1, True)])
@pytest.mark.parametrize("arch", gf.ARCHITECTURES)
def test_blocks_kept_give_the_float32_models_numbers(made, arch, keeps, monkeypatch):
    """keeps="blocks" holds no layer and no embedding or output matrix in float32 (qwen2's and
    gpt2's files have an output matrix, llama's is tied); a mixed plan holds its first layer
    in float32 once and makes the second from its blocks at each step, the embedding and
    output in float32 or as rows. Each gives the float32 model's maps and logits, whole and
    through the KV cache (the logits from rows made 7 vocabulary rows at a time)."""
    monkeypatch.setattr(gf, "CHUNK", 7)
    ours = made[arch, "F16"][0]
    kept = gf.load(made["path", arch, "F16"].read_bytes(), keeps=keeps)
    rows = keeps == "blocks" or keeps.rows
    if keeps == "blocks":
        assert kept.keeps == "blocks" and kept.plan == (0, True) and kept.layers is None
    else:
        assert kept.keeps == "mixed" and kept.plan == keeps and len(kept.layers) == LAYERS
        assert kept.layers[0] is kept.layers[0]  # made once and kept
        assert kept.layers[1] is not kept.layers[1]  # made from the blocks each time
        for name, w in kept.layers[1].items():
            assert np.array_equal(np.asarray(w), np.asarray(ours.layers[1][name])), name
    assert isinstance(kept.embed, gf.Rows) == rows and isinstance(kept.out, gf.Rows) == rows
    assert (kept.out is kept.embed) == (arch == "llama")
    maps, logits = ours.forward(IDS)
    kept_maps, kept_logits = kept.forward(IDS)
    assert np.array_equal(kept_maps, maps)
    if rows:
        assert np.allclose(kept_logits, logits, rtol=1e-6, atol=1e-5)  # products in pieces
    else:
        assert np.array_equal(kept_logits, logits)
    cache = kept.new_cache()
    kept.step(IDS[:6], cache)
    part_maps, part_logits = kept.step(IDS[6:], cache)
    assert np.abs(part_maps - maps[:, :, 6:]).max() <= ATTENTION
    assert np.abs(part_logits - logits[6:]).max() <= LOGITS
    assert np.array_equal(kept.out[[2, 5]], ours.out[[2, 5]])
    assert np.array_equal(kept.embed[3], ours.embed[3])
    with pytest.raises(ValueError, match="keeps is one of"):
        gf.load(made["path", arch, "F16"].read_bytes(), keeps="float16")
    with pytest.raises(ValueError, match="a plan keeps 0 to 2 layers in float32, not 3"):
        gf.load(made["path", arch, "F16"].read_bytes(), keeps=Plan(3, False))


def test_files_it_cannot_run_are_refused(made, tmp_path):
    """Each refusal says what is wrong and what would work."""
    w = gguf.GGUFWriter(str(tmp_path / "phi3.gguf"), "phi3")
    w.add_block_count(1)
    for write_part in (w.write_header_to_file, w.write_kv_data_to_file, w.write_tensors_to_file):
        write_part()
    w.close()
    with pytest.raises(gf.FileError) as e:
        gf.load((tmp_path / "phi3.gguf").read_bytes())
    assert str(e.value) == (
        "the file holds a 'phi3' model; this page runs llama, qwen2, gpt2 (SmolLM2, Llama 3.2, "
        "TinyLlama, Qwen2 and Qwen2.5, GPT-2)"
    )
    write(made["qwen2", None], "qwen2", tmp_path / "cut.gguf", "F32", skip=("blk.1.attn_k.bias",))
    with pytest.raises(gf.FileError) as e:
        gf.load((tmp_path / "cut.gguf").read_bytes())
    assert str(e.value) == (
        "the file lacks 1 tensor a qwen2 model needs, such as blk.1.attn_k.bias: it is cut "
        "short or not a whole model"
    )
    bias = {"blk.0.attn_output.bias": np.zeros(D, np.float32)}
    write(made["llama", None], "llama", tmp_path / "more.gguf", "F32", extra=bias)
    with pytest.raises(gf.FileError) as e:
        gf.load((tmp_path / "more.gguf").read_bytes())
    assert str(e.value) == (
        "the file has tensors a llama model of this forward has not, such as "
        "blk.0.attn_output.bias: it is a variant this page does not run"
    )
    with pytest.raises(reader.GGUFError, match="^not a GGUF file: it does not start with 'GGUF'$"):
        gf.load(b"PK\x03\x04" + bytes(60))


def test_llama3_rope_scaling_from_the_files_rope_freqs(tmp_path):
    """Llama 3.2's rotary scaling, as llama.cpp's converter writes it (a rope_freqs tensor, one
    divisor per frequency) and the forward reads it, against transformers' llama3 rope on the
    original model (transformers' GGUF loader ignores rope_freqs). The head size and bases are
    chosen so that the four frequencies fall one each side of the scaled band and two in it."""
    torch.manual_seed(4)
    scaling = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
    old = 1024  # the context the scaling keeps: wavelengths 2π/freq from 256 to 1024 are blended
    cfg = transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=D,
        intermediate_size=FF,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV,
        max_position_embeddings=4 * old,
        rms_norm_eps=1e-5,
        rope_parameters={
            "rope_type": "llama3",
            "rope_theta": 10000.0,
            "original_max_position_embeddings": old,
            **scaling,
        },
        tie_word_embeddings=True,
    )
    net = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager")
    with torch.no_grad():
        for name, p in net.named_parameters():
            scale = 1.0 if "embed" in name else 0.1 if "norm" in name else 0.5
            p.copy_(torch.randn_like(p) * scale + (1.0 if "norm" in name else 0.0))
    net.eval()
    hs = D // HEADS
    freqs = 1.0 / 10000.0 ** (np.arange(0, hs, 2) / hs)
    wavelen = 2 * np.pi / freqs
    smooth = (old / wavelen - scaling["low_freq_factor"]) / (
        scaling["high_freq_factor"] - scaling["low_freq_factor"]
    )
    factors = np.where(
        wavelen < old / scaling["high_freq_factor"],
        1.0,
        np.where(
            wavelen > old / scaling["low_freq_factor"],
            scaling["factor"],
            1 / ((1 - smooth) / scaling["factor"] + smooth),
        ),
    )
    assert sorted(set(np.round(factors, 3))) == [1.0, 3.24, 8.0]
    path = tmp_path / "llama3.gguf"
    write(net, "llama", path, "F32", extra={"rope_freqs.weight": factors.astype(np.float32)})
    ours = gf.load(path.read_bytes())
    ids = [int(i) for i in np.random.default_rng(8).integers(0, VOCAB, 40)]
    maps, logits = ours.forward(ids)
    ref_maps, ref_logits = reference(net, ids)
    assert np.abs(maps - ref_maps).max() <= ATTENTION
    assert np.abs(logits - ref_logits).max() <= LOGITS


TRICKY = (
    "In 2024, 3.14159 and 1,000,000 were x42y's numbers; 1234567 too",
    "  two  spaces\tand a tab\n\nnew lines   ",
    " a leading space, and a trailing one ",
    "naïve café, Zürich, Ελληνικά, Привет, 日本語のテキスト, 한국어",
    "Wait... what?! (yes) [no] {maybe} \"quoted\" IT'S we'll I'D -- 50% @home #tag",
    "emoji 👋🏽 🤖 🇫🇷 ❤️ done",
    "see https://example.org/a/b?q=1&r=%20x#top or mail me@example.org",
    "one<|endoftext|>two <|endoftext|> three",
)


@pytest.fixture(scope="module")
def vocabulary():
    """(tokens, merges, token types): a byte-level BPE of 600 tokens trained with the tokenizers
    library on the tricky strings and some prose, so that numbers, accents, emoji and CJK have
    merges of their own; <|endoftext|> a control token."""
    tokenizers = pytest.importorskip("tokenizers")
    import json

    bpe_model = tokenizers.Tokenizer(tokenizers.models.BPE())
    bpe_model.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    prose = "The cat sat on the mat because it was tired. It's 12:30 and 2025 is near. "
    bpe_model.train_from_iterator([prose * 3, *TRICKY * 3], trainer)
    vocab = bpe_model.get_vocab()
    tokens = sorted(vocab, key=vocab.get)
    merges = [
        " ".join(m) if isinstance(m, list) else m
        for m in json.loads(bpe_model.to_str())["model"]["merges"]
    ]
    types = [3 if t == "<|endoftext|>" else 1 for t in tokens]
    return tokens, merges, types


@pytest.mark.parametrize("pre", ["gpt-2", "llama-bpe", "qwen2"])
def test_tokenizer_equals_transformers(vocabulary, tmp_path, pre):
    """The file's tokenizer against transformers' built from the same file, on tricky strings."""
    from toymodels.models.gguffile import tokenizer as tk

    tokens, merges, types = vocabulary
    path = tmp_path / f"{pre}.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    if pre == "llama-bpe":  # as Llama 3's files: <|endoftext|> read first
        w.add_add_bos_token(True)
        w.add_bos_token_id(tokens.index("<|endoftext|>"))
    for write_part in (w.write_header_to_file, w.write_kv_data_to_file, w.write_tensors_to_file):
        write_part()
    w.close()
    ref = transformers.AutoTokenizer.from_pretrained(str(tmp_path), gguf_file=path.name)
    ours = tk.tokenizer(reader.Reader(path.read_bytes(), None).fields)
    for text in TRICKY:
        assert ours.encode(text) == ref.encode(text, add_special_tokens=False), text
        assert ours.decode(ours.encode(text)) == text
        assert tk.for_model(ours, text) == ref.encode(text), text
    assert (ours.bos is not None) == (pre == "llama-bpe")


def test_sentencepiece_tokenizer_equals_transformers(tmp_path):
    """A llama-type (SentencePiece) vocabulary as Llama 2 and TinyLlama files hold it: tokens
    with scores, no merges, the 256 byte tokens, <s> and </s> control tokens. Trained with the
    tokenizers library on part of the tricky strings only, so the emoji, the CJK and the Greek
    fall back to bytes."""
    tokenizers = pytest.importorskip("tokenizers")
    from toymodels.models.gguffile import tokenizer as tk

    special = ["<unk>", "<s>", "</s>", *(f"<0x{b:02X}>" for b in range(256))]
    spm = tokenizers.Tokenizer(tokenizers.models.BPE(byte_fallback=True, unk_token="<unk>"))
    spm.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace(prepend_scheme="first")
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=700, special_tokens=special, show_progress=False
    )
    prose = "The cat sat on the mat because it was tired. It's 12:30 and 2025 is near. "
    spm.train_from_iterator([prose * 3, *TRICKY[:3] * 3, *TRICKY[4:5] * 3], trainer)
    vocab = spm.get_vocab()
    tokens = sorted(vocab, key=vocab.get)
    scores = [0.0 if t in special else -float(i) for i, t in enumerate(tokens)]
    types = [
        2 if t == "<unk>" else 3 if t in special[1:3] else 6 if t in special else 1 for t in tokens
    ]
    path = tmp_path / "spm.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)  # no add_bos_token: a SentencePiece vocabulary's BOS is read first
    for write_part in (w.write_header_to_file, w.write_kv_data_to_file, w.write_tensors_to_file):
        write_part()
    w.close()
    ref = transformers.AutoTokenizer.from_pretrained(str(tmp_path), gguf_file=path.name)
    ours = tk.tokenizer(reader.Reader(path.read_bytes(), None).fields)
    fell_back = 0
    for text in (*TRICKY, "<s>one</s> two"):
        ids = ours.encode(text)
        assert ids == ref.encode(text, add_special_tokens=False), text
        assert tk.for_model(ours, text) == [1, *ids] == ref.encode(text)
        assert ours.decode(ids) == ref.decode(ids)
        # a text that starts with a space gets no "▁" of its own: " two" reads as "two" does
        assert ours.decode(ids) == (text[1:] if text.startswith(" ") else text)
        fell_back += sum(tokens[i].startswith("<0x") for i in ids)
    assert fell_back > 20


@pytest.mark.model
def test_smollm2s_own_file_is_the_shipped_model(monkeypatch):
    """SmolLM2's GGUF opened as a reader's file gives exactly the shipped model's maps and
    logits, and the shipped tokenizer's ids: the strict checks of a file's tensors pass a real
    converter's file."""
    import smollm2_reference

    from toymodels.export import llama
    from toymodels.models import quants
    from toymodels.models.gguffile import tokenizer as tk
    from toymodels.models.smollm2 import quants as smollm2_quants

    path = smollm2_reference.gguf_path()
    try:
        quants.nbytes("Q4_1", (32,))
    except ValueError:  # a quants.py of F32 and F16 alone: SmolLM2's own blocks read its Q4_1
        monkeypatch.setattr(quants, "nbytes", smollm2_quants.nbytes)
        monkeypatch.setattr(quants, "dequantize", smollm2_quants.dequantize)
    data = path.read_bytes()
    ours, shipped = gf.load(data, keep=False), llama.Llama(path)  # one model's layers held
    bpe = llama.tokenizer(shipped.reader)
    tok = tk.tokenizer(reader.Reader(data, quants.nbytes).fields)
    for text in TRICKY[:-1]:
        assert tok.encode(text) == bpe.encode(text), text
    # a control token in the text is one token here, as in transformers (the shipped tokenizer
    # spells it out)
    assert tok.encode("one<|endoftext|>two") == bpe.encode("one") + [0] + bpe.encode("two")
    assert tok.tokens[0] == "<|endoftext|>"
    ids = bpe.encode("The cat sat on the mat because it was tired. In 2024, it slept.")
    maps, logits = ours.forward(ids)
    ref_maps, ref_logits = shipped.forward(ids)
    assert np.array_equal(maps, ref_maps) and np.array_equal(logits, ref_logits)
    # its blocks kept (Q4_1 layers, a Q8_0 embedding): the same maps, the same logits
    del ours
    kept = gf.load(data, keeps="blocks")
    kept_maps, kept_logits = kept.forward(ids)
    assert np.array_equal(kept_maps, ref_maps)
    assert np.allclose(kept_logits, ref_logits, rtol=1e-6, atol=1e-5)


# GPT-2 small's shape: the source's sentence at its layer 4


def gpt2_small_file(path):
    """A random GPT-2 of GPT-2 small's shape (12 layers of 12 heads, 768 wide) written as a GGUF
    file in the converter's names and layout (matrices (out, in) in F16, the rest F32, the
    output matrix a copy of the embedding), with a byte-level BPE vocabulary trained on the
    source's sentence (a few hundred tokens), 16 positions and a feed-forward width of 64, so
    the file stays near 60 MB: GPT-2 small's check looks at the attention's shape alone. The
    weights are drawn in numpy, large enough that the heads' maps are far from uniform.
    -> transformers' model of the written file (its config given: its GGUF loader sizes the
    feed-forward and the positions by GPT-2's defaults)."""
    import json

    import tokenizers

    from toymodels.models.gguffile import gpt2check

    bpe_model = tokenizers.Tokenizer(tokenizers.models.BPE())
    bpe_model.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=400,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe_model.train_from_iterator([gpt2check.SENTENCE] * 3, trainer)
    vocab = bpe_model.get_vocab()
    tokens = sorted(vocab, key=vocab.get)
    merges = [
        " ".join(m) if isinstance(m, list) else m
        for m in json.loads(bpe_model.to_str())["model"]["merges"]
    ]
    V, D, FF, N = len(tokens), 768, 64, 16
    rng = np.random.default_rng(4)

    def normal(*shape, std=0.06):
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(std)

    def norm():
        return 1 + normal(D, std=0.1), normal(D, std=0.1)

    embed = normal(V, D, std=1.0).astype(np.float16)
    tensors = {"token_embd.weight": embed, "position_embd.weight": normal(N, D, std=1.0)}
    for i in range(12):
        p = f"blk.{i}."
        (aw, ab), (fw, fb) = norm(), norm()
        tensors |= {
            p + "attn_norm.weight": aw,
            p + "attn_norm.bias": ab,
            p + "attn_qkv.weight": normal(3 * D, D).astype(np.float16),  # (out, in)
            p + "attn_qkv.bias": normal(3 * D, std=0.1),
            p + "attn_output.weight": normal(D, D).astype(np.float16),
            p + "attn_output.bias": normal(D, std=0.1),
            p + "ffn_norm.weight": fw,
            p + "ffn_norm.bias": fb,
            p + "ffn_up.weight": normal(FF, D).astype(np.float16),
            p + "ffn_up.bias": normal(FF, std=0.1),
            p + "ffn_down.weight": normal(D, FF).astype(np.float16),
            p + "ffn_down.bias": normal(D, std=0.1),
        }
    ow, ob = norm()
    tensors |= {"output_norm.weight": ow, "output_norm.bias": ob, "output.weight": embed}
    w = gguf.GGUFWriter(str(path), "gpt2")
    w.add_block_count(12)
    w.add_embedding_length(D)
    w.add_head_count(12)
    w.add_file_type(1)
    w.add_context_length(N)
    w.add_feed_forward_length(FF)
    w.add_layer_norm_eps(1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types([1] * V)
    w.add_token_merges(merges)
    for name, a in tensors.items():
        w.add_tensor(name, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    cfg = transformers.GPT2Config(
        vocab_size=V, n_embd=D, n_head=12, n_layer=12, n_positions=N, n_inner=FF
    )
    hf = transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent),
        gguf_file=path.name,
        config=cfg,
        dtype=torch.float32,
        attn_implementation="eager",
    )
    return hf.eval()


def test_gpt2_small_shares_at_the_sources_layer_equal_transformers(tmp_path):
    """On a file of GPT-2 small's shape, every head's previous-token, "it"->"cat" and
    first-token shares at layer 4 (from 0, as the source counts) are those of transformers'
    model of the same file, computed here from its attentions."""
    from toymodels.models.gguffile import gpt2check
    from toymodels.models.gguffile import tokenizer as tk

    torch.set_num_threads(1)
    path = tmp_path / "gpt2-small-shape.gguf"
    hf = gpt2_small_file(path)
    data = path.read_bytes()
    ours = gf.load(data)
    assert gpt2check.is_gpt2_small(ours)
    tok = tk.tokenizer(reader.Header(data).fields)
    s = gpt2check.shares(ours, tok)
    ref_tok = transformers.AutoTokenizer.from_pretrained(str(tmp_path), gguf_file=path.name)
    ids = ref_tok.encode(gpt2check.SENTENCE)
    assert ids == tok.encode(gpt2check.SENTENCE)
    words = [ref_tok.decode([i]).strip() for i in ids]
    assert s["tokens"] == [ref_tok.decode([i]) for i in ids]
    it, cat = words.index("it"), words.index("cat")
    assert (s["it"], s["cat"]) == (it, cat) and s["layer"] == 4
    with torch.no_grad():
        att = hf(torch.tensor([ids]), output_attentions=True).attentions
    a = att[4][0].numpy().astype(np.float64)  # the fifth of the 12 layers: (heads, T, T)
    assert a.shape == (12, len(ids), len(ids))
    for h in range(12):
        rows = range(2, len(ids))
        assert s["previous"][h] == pytest.approx(
            sum(a[h, t, t - 1] for t in rows) / len(rows), abs=ATTENTION
        )
        assert s["strict"][h] == pytest.approx(min(a[h, t, t - 1] for t in rows), abs=ATTENTION)
        assert s["first"][h] == pytest.approx(
            sum(a[h, t, 0] for t in rows) / len(rows), abs=ATTENTION
        )
        assert s["it_cat"][h] == pytest.approx(a[h, it, cat], abs=ATTENTION)
        assert s["it_top"][h] == a[h, it].argmax()
    assert max(s["it_cat"]) > 0.05 and max(s["previous"]) > 0.2  # maps far from uniform
    assert len(gpt2check.claims(s)) == 3
    # a model of another shape is not GPT-2 small
    ours.n_layer = 11
    assert not gpt2check.is_gpt2_small(ours)


def test_the_sources_claims_on_hand_made_shares():
    """Each claim holds exactly when its test does: a previous-token head over 99% on every
    row, a head whose "it" looks at "cat" most, most of the other heads on the first token."""
    from toymodels.models.gguffile import gpt2check

    def made(strict, top, first):
        return {
            "layer": 4,
            "cat": 1,
            "previous": [min(1.0, x + 0.005) for x in strict],
            "strict": strict,
            "it_cat": [0.6 if t == 1 else 0.3 for t in top],
            "it_top": top,
            "first": first,
        }

    strict = [0.1] * 11 + [0.995]
    top = [0] * 3 + [1] + [0] * 8
    first = [0.8] * 3 + [0.0, 0.9, 0.9, 0.9, 0.2, 0.2, 0.2, 0.2, 0.0]
    # 6 of the 10 other heads on the first token
    assert [c[1] for c in gpt2check.claims(made(strict, top, first))] == [True, True, True]
    told = [c[2] for c in gpt2check.claims(made(strict, top, first))]
    assert told[0].startswith("Head 11 gives the previous word at least 99.5%")
    assert told[1].startswith("Head 3 gives “cat” 60.0%")
    assert told[2] == (
        "6 of the other 10 heads give the first word more than half of their attention on average."
    )
    weak = strict[:11] + [0.985]  # 98.5% on some row: not "over 99% of every word's"
    one_fewer = first[:4] + [0.5] + first[5:]  # 5 of 10: not most
    assert [c[1] for c in gpt2check.claims(made(weak, top, first))][0] is False
    assert [c[1] for c in gpt2check.claims(made(strict, [0] * 12, first))][1] is False
    assert [c[1] for c in gpt2check.claims(made(strict, top, one_fewer))][2] is False
