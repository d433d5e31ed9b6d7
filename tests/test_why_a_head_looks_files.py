"""Why a head looks there (toymodels/why_a_head_looks/own.py) on a reader's own GGUF file:
tiny random models of each architecture written by tests/support/tinygguf.py, their weights
held as float32 or as the file's blocks (llama and qwen2 split by smollm2.py, gpt2 by
gpt2.py). The pair terms add up to the pre-softmax score the file's own forward computed (read
where the forward hands it to its softmax); the knockout is the head's attention written out
here from the forward's own stream with the component taken out at the keys; Figure 3 draws
the reader's model once the file is open."""

import gc
import weakref

import numpy as np
import pytest
from support import tinygguf
from test_ownfile import finished, opened

from toymodels.models import card, ownfile
from toymodels.models.card import Plan
from toymodels.models.gguffile import gpt2
from toymodels.models.gguffile import model as gf
from toymodels.models.smollm2 import llama as lm
from toymodels.why_a_head_looks import own
from toymodels.why_a_head_looks import smollm2 as s2
from toymodels.why_a_head_looks import split as sp

pytest.importorskip("gguf", reason="the files are written with the gguf package")
IDS = [5, 40, 71, 3, 88, 19, 40, 71, 3, 88, 19, 260, 7, 40, 71, 3, 88, 19, 120, 64]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """arch -> the tiny file's path (F16, so a blocks-kept model dequantises real blocks)."""
    where = tmp_path_factory.mktemp("why-files")
    return {a: tinygguf.write(where / f"{a}.gguf", a, "F16") for a in ("llama", "qwen2", "gpt2")}


def forward(model, ids, monkeypatch):
    """The model's own forward on IDS -> (each layer's pre-softmax scores (H, T, T) as the
    forward handed them to its softmax, the stream entering each layer (layers+1, T, d), each
    head's output before the output projection (layers, H, T, hs)), float64."""
    scores, ys = [], []
    real = lm.softmax

    def kept(s):
        scores.append(np.array(s, np.float64))
        return real(s)

    for module in (lm, gpt2):
        monkeypatch.setattr(module, "softmax", kept)
    first = model.embed[ids] + (model.pos[: len(ids)] if model.arch == "gpt2" else 0)
    xs = [np.asarray(first, np.float64)]
    for _, _, x in model.run(ids, tap=lambda i, y: ys.append(y.astype(np.float64))):
        xs.append(x.astype(np.float64))
    for module in (lm, gpt2):
        monkeypatch.setattr(module, "softmax", real)
    return scores, np.stack(xs), np.stack(ys)


def written_out(model, x, layer, head, i, xk, key_bias=True):
    """Head HEAD's attention row from query I: the query from the stream X (T, d), the keys
    from XK (i+1, d), written out here from the layer's weights as the forward lays them out
    (RMSNorm, the head's and its group's columns, the bias where the file has one, RoPE in
    float64; GPT-2: LayerNorm, no turn); without KEY_BIAS, the keys without their bias."""
    L = model.layers[layer] if model.layers is not None else model.layer(layer)
    hs, g = model.hs, head // (model.n_head // model.n_kv)
    cols = {"q": head * hs, "k": (model.n_head + g) * hs}
    w = {n: L["qkv"][:, c : c + hs].astype(np.float64) for n, c in cols.items()}
    b = {
        n: L["qkv_b"][c : c + hs].astype(np.float64) if "qkv_b" in L else 0.0
        for n, c in cols.items()
    }
    if model.arch == "gpt2":
        w_n, b_n = (a.astype(np.float64) for a in L["attn_norm"])

        def normed(v):
            c = v - v.mean(-1, keepdims=True)
            return c / np.sqrt((c**2).mean(-1, keepdims=True) + model.eps) * w_n + b_n

        def turned(v, pos):
            return v

    else:
        norm = L["attn_norm"].astype(np.float64)

        def normed(v):
            return v / np.sqrt((v**2).mean(-1, keepdims=True) + model.eps) * norm

        def turned(v, pos):
            return rope(v, pos, model.base)

    q = turned(normed(x[i]) @ w["q"] + b["q"], i)
    k = turned(normed(xk) @ w["k"] + (b["k"] if key_bias else 0.0), np.arange(i + 1))
    s = k @ q / np.sqrt(hs)
    e = np.exp(s - s.max())
    return e / e.sum()


def rope(v, pos, base):
    """RoPE written out on V (..., hs) at positions POS: coordinates (c, c + hs/2) turned by
    pos * base^(-2c/hs), in float64."""
    hs = v.shape[-1]
    half = hs // 2
    ang = np.asarray(pos, np.float64)[..., None] * base ** (-np.arange(half) * 2.0 / hs)
    a, c = v[..., :half], v[..., half:]
    return np.concatenate(
        [a * np.cos(ang) - c * np.sin(ang), c * np.cos(ang) + a * np.sin(ang)], -1
    )


@pytest.mark.parametrize("keeps", ["float32", "blocks", Plan(1, False)])
@pytest.mark.parametrize("arch", ["llama", "qwen2", "gpt2"])
def test_pair_terms_add_up_to_the_files_own_scores(files, arch, keeps, monkeypatch):
    """200 random (layer, head, query, key) triples: the pair terms add up to the score the
    file's own forward computed within 1e-4; the components (the token, each earlier head and
    feed-forward block, the query and key bias of qwen2 and gpt2, and gpt2's position, output
    projection's bias and LayerNorm's bias) add up to the stream the forward carried. With 4
    query heads sharing 2 key heads (llama, qwen2), every head of a group reads its keys. The
    one layer a mixed plan keeps as blocks is made once for the split, not at every read."""
    model = gf.load(files[arch].read_bytes(), keeps=keeps)
    assert (model.layers is None) == (keeps == "blocks")
    scores, xs, _ = forward(model, IDS, monkeypatch)
    made = []
    make = model.layer
    model.layer = lambda i: made.append(i) or make(i)
    if keeps != "float32" and model.layers is not None:
        model.layers.make = model.layer
    s = own.split(model, IDS).advance(float("inf"))  # as Figure 3 makes it, for any file
    rng = np.random.default_rng(62)
    worst = 0.0
    for _ in range(200):
        layer, head = int(rng.integers(model.n_layer)), int(rng.integers(model.n_head))
        i = int(rng.integers(len(IDS)))
        j = int(rng.integers(i + 1))
        names, terms = s.pairs(layer, head, i)
        worst = max(worst, abs(terms[:, :, j].sum() - scores[layer][head, i, j]))
    assert worst <= 1e-4
    # float32: none made; the mixed plan's second layer, its only one as blocks, made by the
    # split's forward, then once more and held for all the split's reads (blocks: one layer
    # held at a time, made again as the reads alternate between the two)
    if keeps != "blocks":
        assert made == ([] if keeps == "float32" else [1, 1])
    names, parts = s.parts(1)
    assert np.abs(parts.sum(0) - xs[1]).max() < 1e-9
    heads = [f"L1\u00a0H{h}" for h in range(1, 5)]
    want = {
        "llama": ["token", *heads, "MLP\u00a01"],
        "qwen2": ["token", *heads, "MLP\u00a01", sp.QK_BIAS],
        "gpt2": ["token", "position", *heads, "out\u00a0bias\u00a01", "MLP\u00a01"]
        + [sp.NORM_BIAS, sp.QK_BIAS],
    }
    assert s.pairs(1, 0, 3)[0] == want[arch]


@pytest.mark.parametrize("arch", ["llama", "qwen2", "gpt2"])
def test_knockout_is_the_forward_without_the_component_at_the_keys(files, arch, monkeypatch):
    """Layer 1's head 0 from the last token, with layer 0's head 2 (its write through its slice
    of the output projection, from the forward's own head output) taken out of the stream at
    every key: the attention written out from the edited stream; taking out the bias (qwen2,
    gpt2) drops it from the keys alone: qwen2's moves the attention, gpt2's cannot.
    Blocks-kept, as a large file is."""
    model = gf.load(files[arch].read_bytes(), keeps="blocks")
    _, xs, ys = forward(model, IDS, monkeypatch)
    s = own.split(model, IDS).advance(float("inf"))
    i, hs = len(IDS) - 1, model.hs
    write = ys[0, 2] @ model.layer(0)["o"][2 * hs : 3 * hs].astype(np.float64)  # (T, d)
    x = xs[1]
    want = written_out(model, x, 1, 0, i, x[: i + 1] - write[: i + 1])
    got = s.knockout(1, 0, i, "L1\u00a0H3", "keys")
    assert np.abs(got - want).max() < 1e-6
    assert np.abs(got - s.attention(1, 0, i)).max() > 1e-3  # it moved the attention
    before = written_out(model, x, 1, 0, i, x[: i + 1])
    assert np.abs(before - s.attention(1, 0, i)).max() < 1e-5
    if arch != "llama":
        got = s.knockout(1, 0, i, sp.QK_BIAS, "keys")
        unbiased = written_out(model, x, 1, 0, i, x[: i + 1], key_bias=False)
        assert np.abs(got - unbiased).max() < 1e-6
        # qwen2's key bias is turned by each key's position; gpt2's adds one number to every
        # score of the row, which the softmax does not see
        moved = np.abs(got - s.attention(1, 0, i)).max()
        assert moved > 1e-3 if arch == "qwen2" else moved < 1e-6


@pytest.mark.parametrize("arch, least", [("qwen2", True), ("gpt2", False)])
def test_figure_3_splits_the_open_files_heads_in_pieces(files, arch, least, tmp_path):
    """Figure 3 with the reader's file open (qwen2's blocks kept, in a file of 4 layers, where
    blocks take less than float32 and the layer a step makes): the forward comes in pieces,
    then the summary gives the head that looks hardest at one token (not the first), its
    attention from the last token as the file's forward computes it, and with a component
    taken out of the keys the attention the knockout leaves; the card and the way back to
    SmolLM2 are beside it. Closed, the file's model is let go with its splits."""
    path = files[arch]
    if least:
        path = tinygguf.write(tmp_path / "four.gguf", arch, "F16", shape=(4, 4, 32, 48))
    ref = gf.load(path.read_bytes())
    try:
        # the least budget the card would take the file under: its blocks kept
        budget = card.read(path.read_bytes()).quantised_bytes / 2**20 if least else None
        opened(path, budget_mb=budget)
        assert ownfile.keeps() == ("blocks" if least else "float32")
        text = "The cat sat on the mat. The cat sat on"
        answer = finished(own.render, {"text": text})
        state = answer["state"]
        ids = ownfile.encode(text)[0]
        maps = ref.forward(ids)[0].astype(np.float64)  # (layers, heads, T, T)
        i = len(ids) - 1
        most = maps[1:, :, i, 1 : i + 1].max(-1)
        L, H = np.unravel_index(int(np.argmax(most)), most.shape)
        L += 1
        row = maps[L, H, i, : i + 1]
        j = int(np.argmax(row))
        assert state["head"] == f"L{L + 1}H{H + 1}" and state["key"] == str(j)
        share = f"{np.floor(row[j] / row.sum() * 1000 + 0.5) / 10:.1f}%"
        assert answer["summary"].startswith(
            f"L{L + 1}\u00a0H{H + 1} from “{ownfile.piece(ids[i])}” (token {i + 1}) gives "
            f"{share} of its attention to “{ownfile.piece(ids[j])}” (token {j + 1})."
        )
        assert f"Running your model file: Tiny test {arch}." in answer["html"]
        assert "data-ownfile-close" in answer["html"]
        gone = finished(own.render, dict(state, remove="token", side="keys"))
        s = own.split(ownfile.model()[0], ids).advance(float("inf"))
        after = s.knockout(L, H, i, "token", "keys")
        assert gone["summary"].endswith(
            f" Without token from the keys, it gives {np.floor(after[j] * 1000 + 0.5) / 10:.1f}%."
        )
        held = weakref.ref(ownfile.model()[0])
    finally:
        ownfile.close()
    del s
    gc.collect()
    assert held() is None


def test_a_split_that_runs_out_of_memory_is_told_so(files, monkeypatch):
    """A late layer's reads of a large model are the split's largest arrays: a browser that
    cannot give them gets the live model's memory message, not an error."""

    def short(*_):
        raise MemoryError

    try:
        opened(files["llama"])
        monkeypatch.setattr(s2.Split, "reads", short)
        answer = finished(own.render, {"text": "The cat sat on the mat."})
    finally:
        ownfile.close()
    assert answer["summary"] == ownfile.MEMORY
    assert f'<p class="hc-own-msg" role="alert">{ownfile.MEMORY}</p>' in answer["html"]
