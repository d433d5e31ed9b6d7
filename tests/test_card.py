"""The model card of a reader's own GGUF file (toymodels/models/card.py), read from the header
alone: files written by the gguf package's GGUFWriter (tiny tensors, any metadata) for each
family and each refusal, and hostile headers written byte by byte, refused without reading or
allocating what they claim."""

import io
import json
import struct
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from toymodels.models import card, quants

ROOT = Path(__file__).resolve().parent.parent
gguf = pytest.importorskip("gguf", reason="the files are written with the gguf package")
T = gguf.GGMLQuantizationType


def blocks(kind, shape, rng):
    """Random weights of `shape` in block type `kind`, as the file holds them: gguf's own
    quantiser where it has one, else random bytes with finite scales."""
    x = rng.standard_normal(shape).astype(np.float32)
    try:
        return gguf.quants.quantize(x, T[kind])
    except NotImplementedError:
        per, size = gguf.GGML_QUANT_SIZES[T[kind]]
        raw = rng.integers(0, 256, (*shape[:-1], shape[-1] // per * size), dtype=np.uint8)
        return raw & np.uint8(0x3F)  # every float16 in it finite (its exponent under 16)


def write(
    path,
    arch="llama",
    *,
    name="Tiny test model",
    layers=2,
    heads=4,
    kv=2,
    width=256,
    context=512,
    vocab=40,
    kinds=("Q8_0", "Q4_K", "Q6_K", "F16"),
    extra=(),
):
    """A tiny GGUF file: a token embedding (vocab, width), per layer a Q, K and V matrix, a
    norm, and an output matrix, in `kinds` in turn; returns (path, the byte its tensor infos
    end at, the tensors' shapes and kinds)."""
    rng = np.random.default_rng(0)
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    w.add_block_count(layers)
    w.add_head_count(heads)
    if kv is not None:
        w.add_head_count_kv(kv)
    w.add_embedding_length(width)
    if context is not None:
        w.add_context_length(context)
    w.add_token_list([f"t{i}" for i in range(vocab)])
    for key, value, vtype in extra:
        w.add_key_value(key, value, vtype)
    kinds = list(kinds)
    shapes = {"token_embd.weight": (vocab, width)}
    for i in range(layers):
        shapes[f"blk.{i}.attn_q.weight"] = (width, width)
        shapes[f"blk.{i}.attn_k.weight"] = (width // heads * kv if kv else width, width)
        shapes[f"blk.{i}.attn_norm.weight"] = (width,)
    shapes["output.weight"] = (vocab, width)
    made = {}
    for k, (tname, shape) in enumerate(shapes.items()):
        kind = "F32" if len(shape) == 1 else kinds[k % len(kinds)]
        w.add_tensor(tname, blocks(kind, shape, rng), raw_dtype=T[kind])
        made[tname] = (kind, shape)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    last = gguf.GGUFReader(path).tensors[-1].field  # gguf's reader says where its info ends
    return path, last.offset + sum(part.nbytes for part in last.parts), made


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return write(tmp_path_factory.mktemp("card") / "tiny.gguf")


def test_the_card_of_a_llama_file(llama):
    path, _, made = llama
    c = card.read(path.read_bytes())
    ref = gguf.GGUFReader(path)
    assert (c.architecture, c.name) == ("llama", "Tiny test model")
    assert (c.layers, c.heads, c.kv_heads, c.width, c.vocabulary, c.context) == (
        2, 4, 2, 256, 40, 512,
    )  # fmt: skip
    assert (
        c.parameters
        == sum(int(np.prod(s)) for _, s in made.values())
        == 40 * 256 * 2 + 2 * (256 * 256 + 128 * 256 + 256)
    )
    assert c.quants == Counter(T(t.tensor_type).name for t in ref.tensors)
    assert c.quants == {"Q8_0": 2, "Q4_K": 2, "F32": 2, "Q6_K": 1, "F16": 1}
    assert set(c.tensors) == set(made)
    data = path.read_bytes()
    for t in ref.tensors:
        mine = c.tensors[t.name]
        assert (mine.kind, mine.shape) == made[t.name]
        assert mine.nbytes == t.n_bytes
        assert data[mine.start : mine.start + mine.nbytes] == t.data.tobytes()
        w = quants.dequantize(data[mine.start : mine.start + mine.nbytes], mine.kind, mine.shape)
        ref_w = gguf.quants.dequantize(t.data, t.tensor_type).reshape(mine.shape)
        assert np.array_equal(w.view(np.uint32), ref_w.astype(np.float32).view(np.uint32))
    assert c.data_start == ref.data_offset
    assert c.float32_bytes == 4 * c.parameters
    assert c.blocks_bytes == sum(t.n_bytes for t in ref.tensors)
    assert c.layer_bytes == 4 * (256 * 256 + 128 * 256 + 256)
    # the worker's base, 64 tokens' logits and a copy, the header as Python objects (14 bytes a
    # byte), and a layer being made: once as the model is built, twice at every step for a
    # layer kept as blocks; then the weights
    own = 128 * 2**20 + 2 * 4 * 64 * 40 + 14 * ref.data_offset
    assert (c.base_bytes, c.work_bytes) == (128 * 2**20, own - 128 * 2**20 + c.layer_bytes)
    assert c.float32_memory_bytes == own + c.layer_bytes + c.float32_bytes
    embedding_blocks = sum(t.n_bytes for t in ref.tensors if t.name in card.EMBEDDING)
    layer_blocks = c.blocks_bytes - embedding_blocks
    # the least plan: every block, and the embedding's or output's 40 rows in float32 at once
    assert c.quantised_bytes == (
        own + 2 * c.layer_bytes + layer_blocks + embedding_blocks + 4 * 40 * 256
    )
    assert (c.keeps, c.plan, c.memory_bytes, c.budget_bytes) == (
        "float32", (2, False), c.float32_memory_bytes, (1536 - 96) * 2**20,
    )  # fmt: skip
    assert c.lines() == [
        "Tiny test model: llama architecture.",
        "0.2 million parameters.",
        "2 layers × 4 heads, 2 key/value groups (2 heads share each).",
        "256 wide; a vocabulary of 40 tokens; a context of 512 tokens.",
        "Weights stored as Q8_0 (2), Q4_K (2), F32 (2), Q6_K (1), F16 (1) (tensors of each type).",
        "Memory: 129 MB, the page's own 128 MB included: the weights in float32 (the file's "
        "blocks with a layer at a time would take 129 MB).",
    ]


@pytest.mark.model
def test_the_card_of_smollm2_s_own_file():
    """The shipped model's file, read as a reader's own, from the disk: its header alone gives
    what the site's manifest (written with gguf's reader) says of every tensor."""
    import smollm2_reference

    path = smollm2_reference.gguf_path()
    manifest = json.loads((ROOT / "toymodels/data/smollm2/live.json").read_text())
    with open(path, "rb") as f:
        c = card.read(f, file_size=path.stat().st_size)
        assert f.tell() < c.data_start + card.gguf.PIECE
    config = manifest["config"]
    assert (c.architecture, c.layers, c.heads, c.kv_heads, c.width) == (
        "llama", config["n_layer"], config["n_head"], config["n_kv"], config["d"],
    )  # fmt: skip
    assert (c.vocabulary, c.context) == (49152, 8192)
    tensors = manifest["tensors"]
    assert {t["name"]: (t["kind"], tuple(t["shape"]), t["bytes"]) for t in tensors} == {
        name: (t.kind, t.shape, t.nbytes) for name, t in c.tensors.items()
    }
    assert c.parameters == sum(int(np.prod(t["shape"])) for t in tensors)
    assert c.quants == {"Q4_1": 210, "F32": 61, "Q8_0": 1}
    assert c.keeps == "float32"


def test_a_file_cut_right_after_its_tensor_infos_still_gives_the_card(llama):
    path, end, _ = llama
    whole = card.read(path.read_bytes())
    head = path.read_bytes()[:end]
    for source in (head, io.BytesIO(head), np.frombuffer(head, np.uint8)):
        c = card.read(source)
        assert (c.tensors, c.fields, c.parameters) == (
            whole.tensors,
            whole.fields,
            whole.parameters,
        )
    with pytest.raises(card.Truncated, match=r"cut short or damaged: the header runs past"):
        card.read(head[:-1])
    with pytest.raises(card.Truncated, match=rf"tensors need {len(path.read_bytes()):,} bytes"):
        card.read(io.BytesIO(head), file_size=len(path.read_bytes()) - 1)


def test_a_file_object_is_read_no_further_than_the_header_needs(llama, monkeypatch):
    """Pieces of a few bytes: every byte read is one the header holds."""
    path, end, _ = llama
    monkeypatch.setattr(card.gguf, "PIECE", 8)
    f = io.BytesIO(path.read_bytes())
    card.read(f)
    assert f.tell() <= end + 8


@pytest.mark.parametrize("arch", ["qwen2", "gpt2"])
def test_qwen2_and_gpt2_files(tmp_path, arch):
    kv = 2 if arch == "qwen2" else None  # GPT-2 has a key and value per head
    path, _, _ = write(tmp_path / "m.gguf", arch, kv=kv, layers=1, kinds=("BF16", "Q5_K"))
    c = card.read(path.read_bytes())
    assert (c.architecture, c.heads, c.kv_heads) == (arch, 4, kv or 4)
    assert c.quants == {"BF16": 3, "Q5_K": 1, "F32": 1}


def plans(path, chunk, n_layer=4):
    """Every plan of the tiny llama at PATH (N_LAYER layers) with the worker's memory it
    takes, worked out from gguf's reader, the embedding as rows made CHUNK rows at a time:
    [(layers in float32, embedding as rows, bytes)]."""
    vocab, width = 40, 256
    f32, blk, emb = [0] * n_layer, [0] * n_layer, [0, 0]  # emb: float32, blocks
    ref = gguf.GGUFReader(path)
    for t in ref.tensors:
        if t.name.startswith("blk."):
            f32[int(t.name.split(".")[1])] += 4 * int(t.n_elements)
            blk[int(t.name.split(".")[1])] += int(t.n_bytes)
        else:  # the embedding and the output matrix: this file has no other tensor
            emb[0] += 4 * int(t.n_elements)
            emb[1] += int(t.n_bytes)
    own = 128 * 2**20 + 2 * 4 * 64 * vocab + 14 * ref.data_offset
    rows_bytes = emb[1] + 4 * min(chunk, vocab) * width
    return [
        (
            n,
            rows,
            own
            + max(f32) * (1 if n == n_layer else 2)  # a layer made: at build, or at every step
            + sum(f32[:n])
            + sum(blk[n:])
            + (rows_bytes if rows else emb[0]),
        )
        for rows in (False, True)
        for n in range(n_layer + 1)
    ]


@pytest.mark.parametrize("chunk", [4, 4096])
def test_the_plan_keeps_the_most_layers_in_float32_the_budget_holds(tmp_path, monkeypatch, chunk):
    """A llama of 4 layers in Q4_K: at every budget around each plan's cost, the card keeps
    every weight in float32 if that fits, else as many layers (the first) in float32 as the
    budget holds, a layer made at every step counted, the embedding and output as rows only
    when no plan holds them in float32 (4 rows at a time, or all 40 of each: still half their
    float32, the two matrices made one at a time); under the least plan the file is refused
    with both ends stated."""
    monkeypatch.setattr(card, "CHUNK", chunk)
    path, _, _ = write(tmp_path / "four.gguf", layers=4, kinds=("Q4_K",))
    data = path.read_bytes()
    every = plans(path, chunk)
    for budget in sorted({b + d for *_, b in every for d in (-1, 0, 1)}):
        plain = [p for p in every if not p[1] and p[2] <= budget]
        rows = [p for p in every if p[1] and p[2] <= budget and p[2] < every[0][2]]
        if not plain and not rows:
            with pytest.raises(card.TooLarge):
                card.read(data, budget_mb=budget / 2**20)
            continue
        n, as_rows, cost = max(plain or rows)
        c = card.read(data, budget_mb=budget / 2**20)
        assert (c.plan, c.memory_bytes) == ((n, as_rows), cost)
        assert c.keeps == ("float32" if c.plan == (4, False) else "mixed" if n else "blocks")
    mixed = card.read(data, budget_mb=every[1][2] / 2**20)  # layer 0 in float32, 1 to 3 not
    assert (mixed.keeps, mixed.plan) == ("mixed", (1, False))
    assert mixed.lines()[-1] == (
        "Memory: 129 MB of the 129 MB this page can use, the page's own 129 MB included: 1 of "
        "the 4 layers kept in float32, the other 3 as the file's blocks, each dequantised "
        "again at every step (all in float32 would take 130 MB)."
    )
    least = card.read(data, budget_mb=min(b for *_, b in every) / 2**20)
    assert least.keeps == "blocks" and least.plan == (0, True)
    assert least.lines()[-1] == (
        "Memory: 129 MB, the page's own 129 MB included: the file's blocks kept with one layer "
        "at a time in float32, the embedding read a few rows at a time (all in float32 would "
        "take 130 MB, over the 129 MB this page can use); each layer is dequantised again at "
        "every step."
    )
    with pytest.raises(card.TooLarge) as e:
        card.read(data, budget_mb=100)
    assert str(e.value) == (
        "This model is too large for the memory this page can use here (100 MB): it needs 129 "
        "MB with its weights kept as the file's blocks, one layer at a time in float32, and "
        "130 MB with them in float32. A smaller model (up to about 500 million parameters) or "
        "a smaller quantisation, such as Q4_K_M, works; so may a browser on a computer with "
        "more memory."
    )
    assert e.value.reason == "memory"


def test_an_unknown_architecture_is_named_and_refused_before_the_rest_is_read(tmp_path):
    path, end, _ = write(tmp_path / "m.gguf", "mamba")
    cut = path.read_bytes()[:200]  # past general.architecture, inside the vocabulary
    for data in (path.read_bytes(), cut):
        with pytest.raises(card.UnknownArchitecture) as e:
            card.read(data)
        assert str(e.value) == (
            "This model's architecture is 'mamba', which this page cannot run. It runs Llama "
            "(llama: SmolLM2, Llama 3.2, TinyLlama), Qwen2 (qwen2) or GPT-2 (gpt2) models: a "
            "GGUF file of one of those works."
        )


def test_a_quantisation_it_does_not_read_is_named(tmp_path):
    path, _, _ = write(tmp_path / "m.gguf", kinds=("Q2_K", "Q4_K", "Q3_K", "Q2_K"))
    with pytest.raises(card.UnsupportedQuant) as e:
        card.read(path.read_bytes())
    assert str(e.value) == (
        "This file stores weights as Q2_K (3 tensors), Q3_K (1 tensor), which this page "
        "cannot read. It reads F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K: "
        "a Q4_K_M, Q5_K_M, Q6_K or Q8_0 file of the same model works."
    )


def test_not_gguf_and_other_versions(llama):
    data = path_bytes = llama[0].read_bytes()
    with pytest.raises(card.NotGGUF, match="^This is not a GGUF model file: it does not"):
        card.read(b"<!doctype html><title>Sign in</title>" + data)
    with pytest.raises(card.NotGGUF):
        card.read(b"")
    for version, said in ((1, "GGUF version 1;"), (3 << 24, "(a big-endian file)")):
        bad = data[:4] + struct.pack("<I", version) + path_bytes[8:]
        with pytest.raises(card.UnsupportedVersion, match=r"this reader knows versions 2 and 3"):
            card.read(bad)
        with pytest.raises(card.UnsupportedVersion, match=r"GGUF version 3\) work"):
            card.read(bad)
        assert said in str(pytest.raises(card.Refused, card.read, bad).value)


def test_metadata_a_small_model_cannot_have(tmp_path):
    u64, i32 = gguf.GGUFValueType.UINT64, gguf.GGUFValueType.INT32
    cases = [
        ({"context": None}, "lacks llama.context_length, which every llama model file has"),
        ({"extra": [("llama.block_count", -1, i32)]}, "llama.block_count is -1, not a number"),
        ({"extra": [("llama.block_count", 2**64 - 1, u64)]}, "is 18446744073709551615, not"),
        ({"kv": 3}, "4 heads cannot share 3 key/value groups evenly"),
    ]
    for i, (kw, said) in enumerate(cases):
        path, _, _ = write(tmp_path / f"m{i}.gguf", **kw)
        with pytest.raises(card.Corrupt, match=said):
            card.read(path.read_bytes())


# hostile headers, byte by byte


def s(text):
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def header(n_tensors=0, fields=(), tail=b""):
    body = b"".join(fields)
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, len(fields)) + body + tail


ARCH = s("general.architecture") + struct.pack("<I", 8) + s("llama")

HOSTILE = {
    "a key of 2**60 bytes": header(fields=[struct.pack("<Q", 2**60) + b"x" * 64]),
    "2**60 fields": b"GGUF" + struct.pack("<IQQ", 3, 0, 2**60) + ARCH,
    "2**60 tensors": b"GGUF" + struct.pack("<IQQ", 3, 2**60, 1) + ARCH,
    "2**64-1 tensors": b"GGUF" + struct.pack("<IQQ", 3, 2**64 - 1, 1) + ARCH,
    "an array of 2**60 strings": header(
        fields=[ARCH, s("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2**60) + s("a")]
    ),
    "an array of 2**60 floats": header(fields=[ARCH, s("x") + struct.pack("<IIQ", 9, 6, 2**60)]),
    "a value of a type GGUF lacks": header(fields=[ARCH, s("x") + struct.pack("<I", 13)]),
    "arrays nested past reason": header(
        fields=[ARCH, s("x") + struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * 5]
    ),
    "a tensor of 9 dimensions": header(1, [ARCH], s("t") + struct.pack("<I", 9) + b"\1" * 80),
    "a tensor of 2**62 weights": header(
        1, [ARCH], s("t") + struct.pack("<IQQIQ", 2, 2**31, 2**31, 0, 0)
    ),
    "a tensor past its alignment": header(1, [ARCH], s("t") + struct.pack("<IQIQ", 1, 32, 0, 3)),
    "a text that is not UTF-8": header(fields=[struct.pack("<Q", 2) + b"\xff\xfe"]),
}


def test_an_array_longer_than_any_vocabulary_is_refused_before_it_becomes_a_list():
    """2**23 one-byte items, all in the file: as a list they would take 64 MB."""
    n = 2**23
    data = header(fields=[ARCH, s("x") + struct.pack("<IIQ", 9, 0, n)]) + bytes(n)
    tracemalloc.start()
    try:
        with pytest.raises(card.Corrupt, match=f"has {n} items, more than any model's"):
            card.read(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**21


@pytest.mark.parametrize("what", list(HOSTILE))
def test_hostile_headers_are_refused_without_allocating_what_they_claim(what):
    data = HOSTILE[what] + bytes(64)
    tracemalloc.start()
    try:
        with pytest.raises(card.Corrupt) as e:
            card.read(data)
        with pytest.raises(card.Corrupt):
            card.read(io.BytesIO(data), file_size=len(data))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**21, f"{what}: {peak} bytes allocated"
    assert str(e.value).startswith(("This file's header is damaged: ", "This file is cut short"))
    assert str(e.value).endswith(
        ("Download it again, or choose another.", "a complete file works.")
    )
