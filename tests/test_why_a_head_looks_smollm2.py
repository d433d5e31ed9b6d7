"""The split of a SmolLM2 head's score into component pairs (toymodels/why_a_head_looks/
smollm2.py), each against a calculation of its own: the score written out here from the
forward's stream (RMSNorm, the head's slices of the weights, RoPE), transformers' own scores
read with hooks from the same GGUF, and the knockout written out on the edited stream.

Marked `model`: the shipped model from the repacked files (conftest's `llama`), and for one
test transformers' (smollm2_reference); a few short texts keep it to seconds.
"""

import re

import numpy as np
import pytest
import smollm2_reference

from toymodels.heads_that_copy import heads as hc
from toymodels.page import download
from toymodels.why_a_head_looks import measure
from toymodels.why_a_head_looks import smollm2 as s2

pytestmark = pytest.mark.model
REPEAT = hc.text("repeat1")["ids"]
P = 8  # the period of the short repeat: 8 random tokens said twice after the first token
TEXTS = (
    "The cat sat on the mat because it was warm.",
    "Elinor wrote to Marianne, and Marianne wrote back",
    REPEAT[: 1 + P] + REPEAT[1 : 1 + P],
)


@pytest.fixture(scope="module")
def texts(llama):
    from toymodels.models.smollm2 import live

    _, bpe = live.model()
    return [bpe.encode(t) if isinstance(t, str) else list(t) for t in TEXTS]


@pytest.fixture(scope="module")
def runs(llama, texts):
    """Per text: (the Split, the stream entering each layer and each head's output before the
    output projection, as the model's own run yields them, float64)."""
    out = []
    for ids in texts:
        ys, xs = [], [llama.embed[ids].astype(np.float64)]
        for _, _, x in llama.run(ids, tap=lambda i, y, ys=ys: ys.append(y.astype(np.float64))):
            xs.append(x.astype(np.float64))
        out.append((s2.Split(llama, ids), np.stack(xs), np.stack(ys)))
    return out


def rmsnorm(x, w, eps):
    """RMSNorm written out, not the model's."""
    return x / np.sqrt((x**2).sum(-1, keepdims=True) / x.shape[-1] + eps) * w


def turned(v, pos, base):
    """RoPE written out on v (..., hs) at positions POS (...,): coordinates (c, c + hs/2) turned
    by pos * base^(-2c/hs), in float64 (the model turns by float32 angles)."""
    half = v.shape[-1] // 2
    freq = base ** (-np.arange(half) * 2.0 / v.shape[-1])  # (hs/2,)
    ang = np.asarray(pos, np.float64)[..., None] * freq  # (..., hs/2)
    a, b = v[..., :half], v[..., half:]
    return np.concatenate(
        [a * np.cos(ang) - b * np.sin(ang), b * np.cos(ang) + a * np.sin(ang)], -1
    )


def head_weights(model, layer, head):
    """(Wq (d, hs) of query head HEAD, Wk (d, hs) of its key head, the norm's weight), float64:
    the fused matrix's columns are the H query heads, then the KV key heads, then the values."""
    L = model.layers[layer]
    hs, group = model.hs, head // (model.n_head // model.n_kv)
    wq = L["qkv"][:, head * hs : (head + 1) * hs]
    wk = L["qkv"][:, (model.n_head + group) * hs : (model.n_head + group + 1) * hs]
    return wq.astype(np.float64), wk.astype(np.float64), L["attn_norm"].astype(np.float64)


def scores(model, x, layer, head, i, xk=None):
    """Head HEAD's score row s[i, :i+1] from the stream X (T, d) entering LAYER (keys from XK
    instead where given), written out."""
    wq, wk, w = head_weights(model, layer, head)
    xk = x[: i + 1] if xk is None else xk
    q = turned(rmsnorm(x[i], w, model.eps) @ wq, i, model.base)  # (hs,)
    k = turned(rmsnorm(xk, w, model.eps) @ wk, np.arange(i + 1), model.base)  # (i+1, hs)
    return k @ q / np.sqrt(model.hs)


def softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


def test_pair_terms_add_up_to_the_heads_score(llama, runs):
    """1,000 random (layer, head, query, key) triples over 3 texts: the pair terms add up to the
    head's score written out from the model's own stream within 1e-4; the components add up to
    that stream; there is one per token embedding, earlier head and earlier feed-forward block."""
    rng = np.random.default_rng(61)
    triples = []
    for _ in range(1000):
        n = int(rng.integers(len(runs)))
        T = len(runs[n][0].ids)
        i = int(rng.integers(T))
        layer, head = int(rng.integers(llama.n_layer)), int(rng.integers(llama.n_head))
        triples.append((n, layer, head, i, int(rng.integers(i + 1))))
    worst = 0.0
    for n, layer, head, i, j in sorted(triples):  # a layer's reads are made once
        s, xs, _ = runs[n]
        names, terms = s.pairs(layer, head, i)
        assert (
            terms.shape == (1 + 10 * layer, 1 + 10 * layer, i + 1) == (len(names),) * 2 + (i + 1,)
        )
        worst = max(worst, abs(terms[:, :, j].sum() - scores(llama, xs[layer], layer, head, i)[j]))
    assert worst <= 1e-4
    s, xs, _ = runs[2]
    names, parts = s.parts(19)
    assert names[:3] == ["token", "L1\u00a0H1", "L1\u00a0H2"] and names[-1] == "MLP\u00a019"
    assert np.abs(parts.sum(0) - xs[19]).max() < 1e-9
    for n in (0, 1, 9, 10, 11, 187, 190):  # one at a time, as the knockout takes them
        assert np.array_equal(s.part(19, names[n]), parts[n]), names[n]


def transformers_scores(ids):
    """Every head's pre-softmax scores (layers, heads, T, T) in transformers' model of the same
    GGUF: its query and key projections read with forward hooks, turned by its own RoPE (the
    cos and sin its attention modules are handed) and shared by its own repeat_kv."""
    torch, net, _ = smollm2_reference.transformers_smollm2()
    from transformers.models.llama import modeling_llama as ml

    seen, hooks = {}, []
    for n, layer in enumerate(net.model.layers):
        att = layer.self_attn

        def keep(name, n=n):
            return lambda module, args, out: seen.__setitem__((n, name), out)

        def rope(module, args, kwargs, n=n):
            seen[n, "rope"] = kwargs["position_embeddings"]

        hooks += [att.q_proj.register_forward_hook(keep("q"))]
        hooks += [att.k_proj.register_forward_hook(keep("k"))]
        hooks += [att.register_forward_pre_hook(rope, with_kwargs=True)]
    try:
        with torch.no_grad():
            net(torch.tensor([ids]))
    finally:
        for h in hooks:
            h.remove()
    cfg, out = net.config, []
    hs = cfg.hidden_size // cfg.num_attention_heads
    for n in range(len(net.model.layers)):
        q = seen[n, "q"].view(1, len(ids), -1, hs).transpose(1, 2)
        k = seen[n, "k"].view(1, len(ids), -1, hs).transpose(1, 2)
        q, k = ml.apply_rotary_pos_emb(q, k, *seen[n, "rope"])
        k = ml.repeat_kv(k, cfg.num_attention_heads // cfg.num_key_value_heads)
        out.append((q @ k.transpose(2, 3) * net.model.layers[n].self_attn.scaling)[0].numpy())
    return np.stack(out)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_score_is_transformers_score_on_the_same_gguf(llama, runs):
    """Every head's score rows from three queries on two texts (and the pair terms' sum on
    a few) equal transformers' within 1e-3."""
    smollm2_reference.gguf_path()  # a skip where the file is not installed
    worst = 0.0
    for s, _, _ in runs[1:]:
        ref = transformers_scores(s.ids.tolist())  # (30, 9, T, T)
        assert ref.shape == (30, 9, len(s.ids), len(s.ids))
        for layer in range(llama.n_layer):
            for head in range(llama.n_head):
                for i in (1, len(s.ids) // 2, len(s.ids) - 1):
                    got = s.score(layer, head, i)
                    worst = max(worst, float(np.abs(got - ref[layer, head, i, : i + 1]).max()))
        for layer, head in ((18, 6), (29, 8), (3, 1)):
            terms = s.pairs(layer, head, len(s.ids) - 1)[1]
            assert np.abs(terms.sum((0, 1)) - ref[layer, head, -1]).max() <= 1e-3
    assert worst <= 1e-3


@pytest.mark.parametrize("side", ["keys", "queries"])
def test_knockout_is_the_head_on_the_edited_stream(llama, runs, side):
    """Taking the previous-token head L17 H1's write out of the induction head L19 H7's keys
    (or its query) gives the attention the head computes from the edited stream, its norm
    recomputed, the other side as the forward had it; it takes most of the attention to the
    token after the earlier copy away, as the induction circuit says."""
    s, xs, ys = runs[2]
    layer, head, i = 18, 6, 2 * P
    j = i - P + 1  # the token after the earlier copy of token i
    write = ys[16, 0] @ llama.layers[16]["o"][: llama.hs].astype(np.float64)  # (T, d) L17 H1's
    x = xs[layer]
    if side == "keys":
        want = softmax(scores(llama, x, layer, head, i, xk=x[: i + 1] - write[: i + 1]))
    else:
        edited = x.copy()
        edited[i] -= write[i]
        want = softmax(scores(llama, edited, layer, head, i, xk=x[: i + 1]))
    got = s.knockout(layer, head, i, "L17\u00a0H1", side)
    assert np.abs(got - want).max() < 1e-6  # the model turns by float32 angles, this by float64
    before = s.attention(layer, head, i)
    assert np.abs(softmax(scores(llama, x, layer, head, i)) - before).max() < 1e-5
    if side == "keys":
        assert before[j] > 0.5 and got[j] < before[j] / 2
    with pytest.raises(ValueError, match="no component 'L19 H1' enters layer 19; these do: token,"):
        s.knockout(layer, head, i, "L19\u00a0H1")


def test_the_induction_head_reads_the_previous_token_head(llama):
    """On 8 random tokens said twice, the top key-side component of the induction head L19 H7
    is the previous-token head L17 H1 in most cases, and taking it out of the keys takes most
    of the attention to the target away, where ten random earlier heads or a random direction
    as long as it take little: the numbers the chapter will quote, on a short run."""
    run = {"id": "short", "ids": TEXTS[2], "period": P, "start": 1}
    cases = measure.smollm2_cases(llama, 18, 6, [run])
    assert [(c["i"], c["j"]) for c in cases] == [(i, i - P + 1) for i in range(1 + P, 1 + 2 * P)]
    assert all(len(c["control"]) == measure.N_CONTROL for c in cases)
    got = measure.smollm2_summary(llama, 18, 6, [run])
    assert got["cases"] == P and got["top_counts"]["L17\u00a0H1"] >= P - 1
    assert got["before_median"] > 0.5 and got["moved_share"] >= 0.75
    assert got["control_drop_median"] < 0.1 and got["random_drop_median"] < 0.1
    assert next(iter(got["mean_lift"])) == "L17\u00a0H1"


def test_k_composition_is_the_papers_ratio_of_the_dense_matrices(llama):
    """smollm2.k_composition, computed in the heads' own dimensions, equals the paper's ratio
    |W_QK W_OV| / (|W_QK| |W_OV|) of the d x d matrices built here (RMSNorm's weight folded in,
    the key and value heads of each query head's group), for three pairs of heads."""
    names, got = s2.k_composition(llama, 18, 6)
    assert len(names) == 18 * 9 and names[:2] == ["L1\u00a0H1", "L1\u00a0H2"]
    wq, wk, w = head_weights(llama, 18, 6)
    qk = (w[:, None] * wq) @ (w[:, None] * wk).T  # (d, d): x_i^T W_QK x_j
    for layer, head in ((16, 0), (17, 8), (2, 4)):
        L = llama.layers[layer]
        g = head // (llama.n_head // llama.n_kv)
        hs = llama.hs
        wv = L["qkv"][:, (llama.n_head + llama.n_kv + g) * hs :][:, :hs].astype(np.float64)
        wo = L["o"][head * hs : (head + 1) * hs].astype(np.float64)
        w_a = L["attn_norm"].astype(np.float64)
        ov = ((w_a[:, None] * wv) @ wo).T  # (d, d): the write is W_OV x
        want = np.linalg.norm(qk @ ov) / (np.linalg.norm(qk) * np.linalg.norm(ov))
        assert abs(got[names.index(f"L{layer + 1}\u00a0H{head + 1}")] - want) < 1e-9


def test_the_export_is_reproduced(llama):
    """The committed export's first head (the strongest induction head) is what
    toymodels/export/why_look.py computes again now, number for number, with the page's
    model: the export is made by `make export`, not edited by hand."""
    import json

    from toymodels.export import why_look

    data = json.loads(why_look.OUT.read_text(encoding="utf-8"))
    first = data["heads"][0]
    kind, layer, head = why_look.heads()[0]
    assert (first["kind"], first["layer"], first["head"]) == (kind, layer, head)
    assert why_look.entry(llama, kind, layer, head) == first
    assert why_look.OUT.stat().st_size <= 300_000


def test_figure_3_splits_the_readers_text_in_pieces(llama):
    """Figure 3 on its default text: the forward comes in pieces (`more`), then the summary
    gives the attention of the export's strongest induction head from the last token, its
    score and each side's top lift, and with L17 H1 taken out of the keys the attention left,
    each as the split of the same ids computes it here. A tap on another key makes no
    product but the knockout's: the totals are made once per query, for the figure and the
    kit alike."""
    from toymodels.models.smollm2 import live
    from toymodels.why_a_head_looks import own

    own._splits.clear()
    state, pieces = {}, 0
    while True:
        got = own.render(dict(state, remove="L17H1"), "why-own")
        state, pieces = got["state"], pieces + 1
        if not got.get("more"):
            break
        assert got["summary"].startswith("Running your text: ")
    assert pieces > 1 and state["head"] == "L19H7"
    for name in ("The query token", "The key token", "Take out"):  # shown over their rows
        assert f'<p class="hc-what why-row" aria-hidden="true">{name}</p><div' in got["html"]
    shown = download.files(own.__name__ + ":render", state, "why-own", "Figure 3", "")["svg"]
    assert "The key token" in shown and "Take out" not in shown  # no buttons in a picture
    ids, _ = live.encode(own.DEFAULTS["text"])
    s = s2.Split(llama, ids)
    i = len(ids) - 1
    row = s.attention(18, 6, i).astype(np.float64)
    j = int(np.argmax(row))
    names, query_side, key_side = s.totals(18, 6, i)
    lift_k, lift_q = (side[:, j] - side.mean(-1) for side in (key_side, query_side))
    top_k, top_q = names[int(np.argmax(lift_k))], names[int(np.argmax(lift_q))]

    def two(x):
        return f"{x:.2f}".replace("-", "−")

    after = s.knockout(18, 6, i, "L17\u00a0H1", "keys")
    assert (state["query"], state["key"]) == (str(i), str(j))

    def shown(p):
        return f"{np.floor(p / row.sum() * 1000 + 0.5) / 10:.1f}%"

    q, k = live.piece(ids[i]), live.piece(ids[j])
    assert got["summary"] == (
        f"L19\u00a0H7 from “{q}” (token {i + 1}) gives {shown(row[j])} of its attention to "
        f"“{k}” (token {j + 1}). The score of “{q}” → “{k}”, {two(s.score(18, 6, i)[j])}, is "
        f"lifted most on the key side by {top_k} ({two(lift_k.max())}), on the query side by "
        f"{top_q} ({two(lift_q.max())}). Without L17\u00a0H1 from the keys, it gives "
        f"{np.floor(after[j] * 1000 + 0.5) / 10:.1f}%."
    )
    assert top_k == "L17\u00a0H1" and after[j] < row[j] / 2

    # a tap on another key: the split's totals are those already made (the figure's and
    # score_split's, once), so the one product of keys made is the knockout's
    kept = own._splits[tuple(ids)]
    made = []
    kept.key = lambda *args: made.append(args[:2]) or s2.Split.key(kept, *args)
    other = next(n for n in range(i) if n != j)
    got = own.render(dict(state, key=str(other)), "why-own")
    assert made == [(18, 6)] and got["state"]["key"] == str(other)
    assert f"“{live.piece(ids[other])}”, {two(s.score(18, 6, i)[other])}, is" in got["summary"]

    # a head the model has not: the reader is told, and the default head is shown
    got = own.render(dict(state, head="L99H1"), "why-own")
    assert got["state"]["head"] == "L19H7" and (
        "There is no head “L99H1” here: SmolLM2 has 30 layers of 9 heads, L1H1 to L30H9; "
        "L19\u00a0H7 is shown." in got["html"]
    )
    # the component taken out stays among the buttons, pressed, though it lifts the least
    low = names[int(np.argmin(lift_q))]
    got = own.render(dict(state, remove=own.slug(low), side="queries"), "why-own")
    pressed = re.findall(r'data-key="remove"[^>]*aria-pressed="true"[^>]*>([^<]*)<', got["html"])
    assert pressed == [low] and got["summary"].endswith(
        f"Without {low} from the query, it gives "
        f"{np.floor(s.knockout(18, 6, i, low, 'queries')[j] * 1000 + 0.5) / 10:.1f}%."
    )


def test_figure_3s_forward_comes_in_parts_of_a_layer_within_a_frame(llama, runs, monkeypatch):
    """The lazy forward (Figure 3's) stops within a layer: its first piece is one part, a slice
    of one product's rows; a layer is T // ROWS slices of each of its four products, the
    attention and the last step; a piece ends before the next part would take it past
    PIECE_S, by the longest part so far (a clock where each part takes 5 ms: three parts);
    and the maps, streams and heads' outputs are the whole forward's, row for row."""
    import types

    s, xs, ys = runs[0]  # the eager split: whole products, as the export's
    ids, T = s.ids.tolist(), len(s.ids)
    assert T // s2.ROWS == 1  # one slice per product, under 2 ROWS tokens
    lazy = s2.Split(llama, ids, lazy=True)
    lazy.advance(0.0)
    assert (lazy.ran, lazy.done) == (1, 0)  # a part, not a layer
    while lazy.done == 0:
        lazy.advance(0.0)
    assert lazy.ran == 6  # query-key-value, attention, output, gate-up, down slices; the sum

    clock = types.SimpleNamespace(now=0.0)
    monkeypatch.setattr(s2, "time", types.SimpleNamespace(perf_counter=lambda: clock.now))
    steps = lazy._steps

    def slow():
        for step in steps:
            clock.now += 0.005
            yield step

    lazy._steps = slow()
    lazy.advance(s2.PIECE_S)
    assert lazy.ran == 6 + 3 and clock.now <= s2.PIECE_S
    lazy._steps = steps  # a clock too coarse to see a part (the browser's): still one a call
    lazy.advance(0.0)
    assert lazy.ran == 6 + 3 + 1
    monkeypatch.undo()
    lazy.advance(float("inf"))
    assert lazy.complete and lazy.ran == 6 * llama.n_layer
    for got, want in ((lazy.maps, s.maps), (lazy.x, s.x), (lazy.y, s.y)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    long = REPEAT[:40]  # 40 tokens: 5 slices of 8 rows for each product
    lazy = s2.Split(llama, long, lazy=True).advance(float("inf"))
    assert lazy.ran == (4 * 5 + 2) * llama.n_layer
    np.testing.assert_allclose(lazy.maps, s2.Split(llama, long).maps, rtol=0, atol=1e-5)


def test_figure_3_after_running_out_of_memory_runs_the_text_again(llama):
    """A forward that runs out of the browser's memory part-way says so, and the next try
    starts the text's forward again rather than failing on the spent one."""
    from toymodels.models.smollm2 import live
    from toymodels.why_a_head_looks import own

    own._splits.clear()
    state = own.render({}, "why-own")["state"]
    ids, _ = live.encode(own.DEFAULTS["text"])

    def short():
        raise MemoryError
        yield

    own._splits[tuple(ids)]._steps = short()
    got = own.render(state, "why-own")
    assert got["summary"] == live.MEMORY and "more" not in got
    got = own.render(state, "why-own")
    assert got["more"] and got["summary"] == "Running your text: 0 of 30 layers."
    own._splits.clear()


def test_the_guides_score_split_runs_on_smollm2(llama):
    """The guide's SmolLM2 lines take the same call: the induction head L19 H7, from the second
    " a" to the " key" after the first, is lifted most on the key side by the previous-token
    head, as the pair terms summed over the query side say."""
    from test_why_a_head_looks import guide_example

    code, later = guide_example()
    env = {}
    exec(code + "\n" + later, env)
    s, ids = env["s"], env["ids"]
    names, terms = s.pairs(18, 6, len(ids) - 1)
    lift = terms.sum(0)[:, 4] - terms.sum(0).mean(-1)
    assert names[int(np.argmax(lift))] == "L17\u00a0H1"
    assert "on the key side by L17\u00a0H1" in env["said"]
