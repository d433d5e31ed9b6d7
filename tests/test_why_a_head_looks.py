"""The split of a head's score into component pairs, the knockout and the composition scores
(toymodels/why_a_head_looks/), each against a calculation of its own: the model's own forward,
LayerNorm and softmax written out here, the paper's formulas with its matrices built here."""

import math
import re

import numpy as np
import pytest

from toymodels.models.charmodel import copy_test
from toymodels.models.charmodel import model as cm
from toymodels.why_a_head_looks import measure
from toymodels.why_a_head_looks import split as sp

RUN = "reference-repeats"  # the run with one previous-character head and one induction head
TEXTS = (
    "it is a truth universally acknowledged, that a single man in possession of a good",
    cm.decode(copy_test.copy_set(n=1)[0][0]),  # repeated nonsense: the induction head at work
    "emma woodhouse, handsome, clever, and rich, with a comfortable home and happy",
)


@pytest.fixture(scope="module")
def model():
    params, cfg, _ = cm.load(RUN)
    return sp.widen(params), cfg


@pytest.fixture(scope="module")
def runs(model):
    """Per text: (the Split, the model's own forward cache in float64, run separately)."""
    params, cfg = model
    out = []
    for text in TEXTS:
        idx = cm.encode(text)
        out.append((sp.Split(params, cfg, idx), cm.forward(params, cfg, idx, keep=True)[1]))
    return out


def layernorm(x, g, b, eps=1e-5):
    """LayerNorm written out, not the model's."""
    mean = x.sum(-1, keepdims=True) / x.shape[-1]
    var = ((x - mean) ** 2).sum(-1, keepdims=True) / x.shape[-1]
    return (x - mean) / np.sqrt(var + eps) * g + b


def test_pair_terms_add_up_to_the_models_score(model, runs):
    """1,000 random (layer, head, query, key) triples over 3 texts: the pair terms add up to
    q_i . k_j / sqrt(d_head), with q and k from the model's own forward, within 1e-4."""
    _, cfg = model
    rng = np.random.default_rng(2021)
    K, worst = cfg["d_head"], 0.0
    for _ in range(1000):
        s, cache = runs[rng.integers(len(runs))]
        layer, head = int(rng.integers(cfg["n_layer"])), int(rng.integers(cfg["n_head"]))
        i = int(rng.integers(len(s.idx)))
        j = int(rng.integers(i + 1))
        names, terms = s.pairs(layer, head, i)
        score = cache[f"h{layer}.q"][head, i] @ cache[f"h{layer}.k"][head, j] / math.sqrt(K)
        worst = max(worst, abs(terms[:, :, j].sum() - score))
        assert terms.shape == (len(names), len(names), i + 1)
    assert worst <= 1e-4


def test_components_are_what_the_model_wrote(model, runs):
    """Layer 2's stream is the character, the position code, layer 1's four heads and its MLP,
    named so; they add up to the stream the forward carried; the norm's bias on the key side
    adds the same to every key."""
    _, cfg = model
    s, cache = runs[1]
    names, parts = s.parts(1)
    assert names == [
        "character",
        "position",
        "L1\u00a0H1",
        "L1\u00a0H2",
        "L1\u00a0H3",
        "L1\u00a0H4",
    ] + ["MLP\u00a01"]
    assert np.abs(parts.sum(0) - cache["h1.resid_pre"]).max() < 1e-12
    assert np.abs(parts[0] - s.params["wte"][s.idx]).max() == 0
    names, terms = s.pairs(1, 0, 40)
    bias_on_keys = terms[:, -1].sum(0)  # (41,) the norm's bias's key-side total per key
    assert names[-1] == sp.NORM_BIAS
    assert np.ptp(bias_on_keys) < 1e-12 and abs(bias_on_keys[0]) > 1e-3


def attention_row(q, k, K):
    s = k @ q / math.sqrt(K)
    return np.exp(s - s.max()) / np.exp(s - s.max()).sum()


@pytest.mark.parametrize("side", ["keys", "queries"])
def test_knockout_is_the_head_on_the_edited_stream(model, runs, side):
    """Taking a component out of the keys (or the query) gives the attention the head computes
    from the edited stream, its LayerNorm recomputed, the other side as the forward had it."""
    params, cfg = model
    K = cfg["d_head"]
    cols = slice(0, K)  # head 1
    s, cache = runs[1]
    i = 50
    x = cache["h1.resid_pre"][: i + 1]
    g, b = params["h1.ln1.g"], params["h1.ln1.b"]
    for h in range(cfg["n_head"]):
        gone = cache["h0.head_out"][h][: i + 1]
        if side == "keys":
            q = cache["h1.q"][0, i]
            k = layernorm(x - gone, g, b) @ params["h1.wk"][:, cols]
        else:
            q = layernorm(x[i] - gone[i], g, b) @ params["h1.wq"][:, cols]
            k = cache["h1.k"][0, : i + 1]
        want = attention_row(q, k, K)
        got = s.knockout(1, 0, i, f"L1\u00a0H{h + 1}", side)
        assert np.abs(got - want).max() < 1e-12
        assert np.abs(got - cache["h1.att"][0, i, : i + 1]).max() > 1e-6  # it changed something
    gone = cache["h0.head_out"][[0, 3]].sum(0)[: i + 1]  # two heads at once
    q, k = cache["h1.q"][0, i], cache["h1.k"][0, : i + 1]
    if side == "keys":
        k = layernorm(x - gone, g, b) @ params["h1.wk"][:, cols]
    else:
        q = layernorm(x[i] - gone[i], g, b) @ params["h1.wq"][:, cols]
    got = s.knockout(1, 0, i, ("L1\u00a0H1", "L1\u00a0H4"), side)
    assert np.abs(got - attention_row(q, k, K)).max() < 1e-12
    with pytest.raises(
        ValueError,
        match="no component 'L2 H1' enters layer 2; these do: character, position, L1 H1,",
    ):
        s.knockout(1, 0, i, "L2\u00a0H1")


def test_the_random_control_is_as_long_as_the_component(runs):
    """The control's random directions have, at every position, the length of the component
    they stand in for, and are other directions."""
    s, _ = runs[1]
    part = s.parts(1)[1][3, :30]  # L1 H2's write (30, D)
    noise = sp.random_like(part, np.random.default_rng(0))
    assert np.allclose(np.linalg.norm(noise, axis=-1), np.linalg.norm(part, axis=-1), rtol=1e-12)
    cos = (noise * part).sum(-1) / np.linalg.norm(part, axis=-1) ** 2
    assert np.abs(cos).max() < 0.9


def test_composition_scores_are_the_papers(model):
    """K-, Q- and V-composition of every layer-1 head into every layer-2 head, from the paper's
    matrices (column vectors: W_QK = W_Q^T W_K, W_OV = W_O W_V) built here; with the norm
    folded in, the same with W_Q, W_K, W_V reading (x - mean(x)) * g."""
    params, cfg = model
    D, K, H = cfg["d_model"], cfg["d_head"], cfg["n_head"]

    def mats(layer, h, fold):
        cols = slice(h * K, (h + 1) * K)
        read = (np.eye(D) - np.ones((D, D)) / D) * params[f"h{layer}.ln1.g"] if fold else np.eye(D)
        wq, wk, wv = (params[f"h{layer}.{n}"][:, cols].T @ read.T for n in ("wq", "wk", "wv"))
        wo = params[f"h{layer}.wo"][cols].T  # (D, K)
        return wq.T @ wk, wo @ wv  # W_QK, W_OV (D, D)

    def score(a, b):
        return np.linalg.norm(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b))

    for fold in (False, True):
        got = sp.composition(params, cfg, 1, fold_norm=fold)
        assert got["earlier"] == [f"L1\u00a0H{a}" for a in range(1, H + 1)]
        for hb in range(H):
            qk_b, ov_b = mats(1, hb, fold)
            for ha in range(H):
                ov_a = mats(0, ha, fold)[1]
                assert got["K"][hb, ha] == pytest.approx(score(qk_b, ov_a), rel=1e-9)
                assert got["Q"][hb, ha] == pytest.approx(score(qk_b.T, ov_a), rel=1e-9)
                assert got["V"][hb, ha] == pytest.approx(score(ov_b, ov_a), rel=1e-9)
    folded, bare = (sp.composition(params, cfg, 1, fold_norm=f)["K"] for f in (True, False))
    assert np.abs(folded - bare).max() > 1e-3  # the norm's gain changes what is read


def test_the_induction_head_reads_its_previous_character_head():
    """On repeated nonsense, taking the previous-character head L1 H2 out of the induction head
    L2 H1's keys takes most of its attention to the target away, in most cases; taking out
    another layer-1 head does much less. The numbers the chapter will quote."""
    assert measure.induction_heads(RUN) == [(1, 0)]
    got = measure.summary(RUN, 1, 0, n=5)
    assert got["before_median"] > 0.5
    assert got["drop_by_component"]["L1\u00a0H2"] > 0.9
    others = [got["drop_by_component"][f"L1\u00a0H{h}"] for h in (1, 3, 4)]
    assert max(others) < 0.3
    assert got["moved_share"] > 0.9 and got["control_drop_median"] < 0.3
    assert got["mean_lift"]["norm bias"] == pytest.approx(0, abs=1e-9)


# --- the chapter: Figure 1, the exercises -------------------------------------------------


def shown_pct(p):
    """A share as the page writes it, to a tenth of a point (written out, not the kit's)."""
    return f"{math.floor(p * 1000 + 0.5) / 10:.1f}%"


@pytest.mark.parametrize("side", ["keys", "queries"])
def test_figure_1_shows_the_split_and_the_knockout_of_split_py(model, side):
    """Figure 1 at its default cell (the last "w", the "p" after the earlier "w") with L1 H2
    taken out: its summary gives the attention, the score and the largest pair, and the
    attention left, each as split.py computes them here (and the knockout as the head computes
    it from the edited stream, written out)."""
    from toymodels.why_a_head_looks import figure

    params, cfg = model
    text = figure.TEXT
    s = sp.Split(params, cfg, cm.encode(text))
    i, j = len(text) - 1, 10
    row = s.attention(1, 0, i)
    assert int(np.argmax(row)) == j and text[i] == "w" and text[j] == "p"
    got = figure.render({"remove": "L1H2", "side": side}, "why-look")
    assert got["state"]["query"] == str(i) and got["state"]["key"] == str(j)
    names, terms = s.pairs(1, 0, i)
    t = terms[:, :, j]
    a, b = np.unravel_index(np.argmax(np.abs(t)), t.shape)
    x = s.stream(1)[: i + 1]
    gone = s.part(1, "L1\u00a0H2")[: i + 1]
    p = s.params
    xq, xk = (x, x - gone) if side == "keys" else (x - gone, x)
    q = layernorm(xq[i], p["h1.ln1.g"], p["h1.ln1.b"]) @ p["h1.wq"][:, :8]
    k = layernorm(xk, p["h1.ln1.g"], p["h1.ln1.b"]) @ p["h1.wk"][:, :8]
    e = np.exp(k @ q / math.sqrt(8) - (k @ q / math.sqrt(8)).max())
    after = e / e.sum()
    where = "from the keys" if side == "keys" else "from the query"
    assert got["summary"] == (
        f"L2\u00a0H1 from “w” (character {i + 1}) gives {shown_pct(row[j])} of its attention to “p”"
        f" (character {j + 1}); the score, {t.sum():.2f}, is the sum of {len(names) ** 2} pairs,"
        f" the largest {names[a]} · {names[b]} ({t[a, b]:.2f}). Without L1\u00a0H2 {where}, it"
        f" gives {shown_pct(after[j])}."
    )
    assert f"<td>{t[a, b]:.2f}</td>".replace("-", "−") in got["html"]


def test_the_exercises_pass_the_hints_answers_and_say_what_is_wrong():
    """Each exercise's check passes the answer its last hint gives, on its starting code's
    variables, and refuses the starting code with a message that says what to change."""
    from toymodels.why_a_head_looks import checks

    params, cfg, _ = cm.load(RUN)
    qk, _ = sp.circuits(params, cfg, 1, 0)
    _, ov = sp.circuits(params, cfg, 0, 1)
    k_score = np.linalg.norm(qk @ ov) / (np.linalg.norm(qk) * np.linalg.norm(ov))
    ok, said = checks.check_k_score({"k_score": k_score})
    assert ok and said.startswith(f"Right: {k_score:.3f}.")
    ok, said = checks.check_k_score({"k_score": 0.0})
    assert not ok and said.startswith("k_score is 0.0000;")
    s = sp.Split(params, cfg, cm.encode(checks.TEXT))
    names, reads = s.reads(1)
    wq, wk = s.params["h1.wq"][:, :8], s.params["h1.wk"][:, :8]
    i, j = checks.QUERY, checks.KEY
    terms = (reads[:, i] @ wq) @ (reads[:, j] @ wk).T / np.sqrt(8)
    ok, said = checks.check_split({"terms": terms})
    assert ok and said == f"Right: {terms.size} terms that add up to the score, {terms.sum():.2f}."
    ok, said = checks.check_split({"terms": terms.T})
    assert not ok and said.startswith("The terms add up to the score, but not pair by pair")
    ok, said = checks.check_split({"terms": np.zeros_like(terms)})
    assert not ok and said.startswith("Your terms add up to 0.0000, the score is")


def test_targets_are_each_kinds_key():
    """An induction head's cases are the second copy, each with the token after the earlier
    copy; a previous-token head's every query from the third token with the one before; a
    sink's the same queries with the first token."""
    run = {"ids": list(range(11)), "period": 5, "start": 1}
    assert measure.targets(run) == [(i, i - 4) for i in range(6, 11)]
    assert measure.targets(run, "previous") == [(i, i - 1) for i in range(2, 11)]
    assert measure.targets(run, "first") == [(i, 0) for i in range(2, 11)]
    with pytest.raises(ValueError, match="no target 'next': induction, previous or first"):
        measure.targets(run, "next")


def guide_example():
    """The author guide's example of kit.score_split: (its code, its commented SmolLM2 lines
    uncommented)."""
    import re
    from pathlib import Path

    guide = Path(__file__).resolve().parent.parent / "chapters" / "90-author-guide.md"
    text = guide.read_text(encoding="utf-8")
    (block,) = [
        b
        for b in re.findall(r"^~~~python\n(.*?)\n~~~$", text, flags=re.M | re.S)
        if "score_split" in b
    ]
    assert len(block.splitlines()) <= 20
    code, _, smollm2 = block.partition("\n# SmolLM2")
    later = "\n".join(line[2:] for line in smollm2.splitlines()[1:])
    return code, later


def test_the_guides_score_split_is_each_sides_sum_of_the_pair_terms(model):
    """The guide's call on the character model runs as shown, and its tables and sentence give
    each side's lifts as the pair terms summed over the other side compute them."""
    code, _ = guide_example()
    env = {}
    exec(code, env)
    s = env["s"]
    names, terms = s.pairs(1, 0, 21)
    key_side, query_side = terms.sum(0), terms.sum(1)  # (C+1, 22) each
    said = []
    for side, part in (("key", key_side), ("query", query_side)):
        lift = part[:, 10] - part.mean(-1)
        best = int(np.argmax(lift))
        said.append(f"on the {side} side by {names[best]} ({lift[best]:.2f})")
        assert f"<td>{lift[best]:.2f}</td>".replace("-", "−") in env["html"]
    assert env["said"] == (
        f"The score of “w” → “p”, {terms[:, :, 10].sum():.2f}, is lifted most "
        + ", ".join(said)
        + "."
    )


def test_figures_2_and_4_say_what_the_export_measured():
    """Figure 2 says one component explains a head exactly where its knockout moved at least
    90% of the cases (every induction head; not the previous-token head nor the sink), with
    the export's medians; Figure 4 ranks each later head's earlier heads by the export's
    K-composition scores and by their lifts, and gives their rank correlation (computed again
    here from the rounded numbers, to within their rounding)."""
    import json

    from toymodels.page.data import read_bytes
    from toymodels.why_a_head_looks import circuit, composition, exported

    data = json.loads(read_bytes("why_a_head_looks/smollm2.json"))
    kinds = [h["kind"] for h in data["heads"]]
    assert kinds == ["induction"] * 5 + ["previous", "sink"]
    for h in data["heads"]:
        value = h["name"].replace("\u00a0", "")
        said = circuit.render({"head": value})["summary"]
        explained = "One component explains it" in said
        assert explained == (h["moved_share"] >= 0.9) == (h["kind"] == "induction"), said
        assert f"{100 * h['before']:.1f}% of its attention" in said
        said = composition.render({"head": value})["summary"]
        names = exported.earlier(h)
        by_k = [names[n] for n in np.argsort(-np.array(h["k"]), kind="stable")[:3]]
        by_lift = [names[n] for n in np.argsort(-np.array(h["lift"]), kind="stable")[:3]]
        assert f"By the weights, first {', '.join(by_k)}; by the measure, first" in said
        assert f"by the measure, first {', '.join(by_lift)}." in said
        rho = measure.rank_correlation(h["k"], h["lift"])  # of the rounded numbers: near ties
        assert abs(rho - h["rank"]) < 0.01 and f"lift: {h['rank']:.2f}." in said
        # the table's heads by their score, ties by the earlier head: the same order in every
        # process, whatever its hash seed (the build's and the reader's Python once differed)
        html = composition.render({"head": value})["html"]
        rows = [names.index(n) for n in re.findall(r'<th scope="row">([^<]+)</th>', html)]
        assert len(rows) >= 5 and rows == sorted(rows, key=lambda i: (-h["k"][i], i)), value
