"""The reader's own GGUF file as the live causal model (toymodels/models/ownfile.py, through
toymodels/models/causal.py), in CPython, on a tiny synthetic llama written with the `gguf`
package (tests/support/tinygguf.py): the header read alone and refused files told why with
nothing past their header read; the tensors read a slice at a time into the same model the
whole-file loader gives (gguffile.model.load, held to transformers by tests/test_gguffile.py);
Heads that copy 1 and 2 drawn on it (maps, guesses, writing on with the KV cache, every head's
scores) and What a head does 3 (direct attribution through its own output matrix) with the
numbers of that loader's forward; the checks on its card; and the way back to SmolLM2."""

import gc
import re
import weakref

import numpy as np
import pytest
from support import tinygguf

from toymodels.heads_that_copy import figure as layer_fig
from toymodels.heads_that_copy import heads as hc
from toymodels.heads_that_copy import map as map_fig
from toymodels.models import card as cards
from toymodels.models import causal, gguf, ownfile
from toymodels.models.gguffile import gpt2check
from toymodels.models.gguffile import model as gf
from toymodels.models.gguffile import tokenizer as gtok
from toymodels.models.smollm2 import live as smollm2
from toymodels.models.smollm2.llama import softmax
from toymodels.page.figure import check
from toymodels.page.html import esc
from toymodels.what_a_head_does import own as whad_own

gguf_package = pytest.importorskip("gguf", reason="the file is written with the gguf package")
TEXT = "The cat sat on the mat. The cat"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(the file's path, the whole-file loader's model of it, its tokenizer)."""
    path = tinygguf.write_llama(tmp_path_factory.mktemp("ownfile") / "tiny.gguf", "F16")
    data = path.read_bytes()
    ref = gf.load(data)
    return path, ref, gtok.tokenizer(gguf.Header(data).fields)


def opened(path, budget_mb=None):
    """PATH opened and read as the page does, one tensor a call: -> (the card's answer, the
    steps' answers)."""
    extra = {} if budget_mb is None else {"budget_mb": budget_mb}
    card = ownfile.open_source(ownfile.PathSource(path), **extra)
    steps = []
    while card["ok"]:
        steps.append(ownfile.load_step(budget=0.0))
        if steps[-1]["ready"]:
            break
    return card, steps


@pytest.fixture
def reader_model(tiny):
    card, _ = opened(tiny[0])
    yield card
    ownfile.close()


def finished(render, state):
    for _ in range(200):
        answer = check(render(state))
        state = answer["state"]
        if not answer.get("more"):
            return answer
    raise AssertionError("the figure kept asking for more")


def test_the_card_is_read_from_the_header_and_the_tensors_one_slice_a_call(tiny):
    path, ref, _ = tiny
    try:
        card, steps = opened(path)
        assert card["ok"] and card["of"] == 21
        assert card["lines"][0] == "Tiny test llama: llama architecture."
        # a model this small is counted one by one (the gguf package's count), not "0.0 million"
        n = sum(int(t.n_elements) for t in gguf_package.GGUFReader(str(path)).tensors)
        assert n < 100_000 and card["lines"][1] == f"{n:,} parameters."
        assert "2 layers × 4 heads, 2 key/value groups (2 heads share each)." in card["lines"]
        assert [s["done"] for s in steps] == list(range(1, 22))
        assert [s["ready"] for s in steps] == [False] * 20 + [True]
        assert causal.model() is ownfile and ownfile.loaded()
        ids = gtok.for_model(tiny[2], TEXT)
        want_maps, want_logits = ref.forward(ids)
        maps, logits = ownfile.model()[0].forward(ids)
        assert np.array_equal(maps, want_maps) and np.array_equal(logits, want_logits)
    finally:
        ownfile.close()
    assert causal.model() is smollm2 and not ownfile.loaded()


@pytest.fixture(scope="module")
def four(tmp_path_factory):
    """A tiny llama of 4 layers in F16: (its path, the whole-file loader's model, tokenizer).
    Its layers' blocks take half their float32, so keeping three of them as blocks saves more
    than the layer a step makes, and a plan between float32 and blocks can be the cheaper."""
    where = tmp_path_factory.mktemp("ownfile-four") / "four.gguf"
    path = tinygguf.write(where, "llama", "F16", shape=(4, 4, 32, 48))
    data = path.read_bytes()
    return path, gf.load(data), gtok.tokenizer(gguf.Header(data).fields)


def budget(path, layers=0):
    """The budget (MB) that holds the llama at PATH with its first LAYERS layers in
    float32 and the rest as blocks, the embedding in float32: the least plan's cost, as the
    card states it, and each such layer's float32 bytes less its blocks, from the tensors."""
    c = cards.read(path.read_bytes())
    more = 0
    for name, t in c.tensors.items():
        if name.startswith("blk.") and int(name.split(".")[1]) < layers:
            more += 4 * int(np.prod(t.shape)) - t.nbytes
    return (c.quantised_bytes + more) / 2**20


def test_the_tokenizer_is_made_before_any_weight_is_held(tiny, monkeypatch):
    """Making a vocabulary's tokenizer takes several times what it keeps (SmolLM2's: some
    100 MB for a moment), so the first step makes it while the worker holds no weight, and the
    moment adds nothing to the peak the card plans."""
    held = []
    real = gtok.tokenizer
    monkeypatch.setattr(
        gtok, "tokenizer", lambda fields: held.append(ownfile._state["read"]) or real(fields)
    )
    try:
        opened(tiny[0])
        assert held == [0] and ownfile.loaded()
    finally:
        ownfile.close()


def test_a_model_too_large_for_float32_keeps_its_blocks_and_gives_the_same_numbers(four):
    path, ref, tok = four
    try:
        card, _ = opened(path, budget_mb=budget(path))
        assert ownfile.keeps() == "blocks"
        assert any("the file's blocks kept with one layer" in line for line in card["lines"])
        assert ownfile.model()[0].layers is None  # each layer made again at every step
        ids = gtok.for_model(tok, TEXT)
        assert np.array_equal(ownfile.model()[0].forward(ids)[1], ref.forward(ids)[1])
    finally:
        ownfile.close()


@pytest.mark.parametrize("chunk, plan", [(4096, (1, False)), (4, (0, True))])
def test_a_mixed_plan_reads_the_file_as_planned_and_gives_the_same_numbers(
    four, monkeypatch, chunk, plan
):
    """Under a budget that holds one of its four layers in float32, the page's reading keeps
    that layer made once and the others' blocks, made at each step; with the vocabulary made
    4 rows at a time (so that rows take less than the float32 embedding) and the least
    budget, the embedding is kept as rows. The same maps to the bit and logits (to float32
    rounding where they come from rows), the memory asked the card's plan, and the card says
    so."""
    monkeypatch.setattr(cards, "CHUNK", chunk)
    monkeypatch.setattr(gf, "CHUNK", chunk)
    asked = []
    monkeypatch.setattr(ownfile.memory, "room", lambda mb: asked.append(mb) or True)
    path, ref, tok = four
    least = cards.read(path.read_bytes(), budget_mb=1536).quantised_bytes / 2**20
    try:
        card, _ = opened(path, budget_mb=budget(path, 1) if plan[0] else least)
        c = ownfile._state["card"]
        assert c.plan == plan and asked == [-(-c.memory_bytes // 2**20)]
        m = ownfile.model()[0]
        assert isinstance(m.embed, gf.Rows) == plan[1]
        if plan[0]:
            assert ownfile.keeps() == "mixed" and len(m.layers.kept) == 1
            assert m.layers[0] is m.layers[0] and m.layers[1] is not m.layers[1]
            assert (
                "1 of the 4 layers kept in float32, the other 3 as the file's blocks, each "
                "dequantised again at every step (all in float32 would take"
            ) in card["lines"][-1]
            # what is held: the blocks of layers 1 to 3, nothing of layer 0 or the rest
            assert sorted(ownfile._state["store"]) == sorted(
                n for n in c.tensors if n.startswith("blk.") and n.split(".")[1] != "0"
            )
        else:
            assert ownfile.keeps() == "blocks" and m.layers is None
            assert "the embedding read a few rows at a time" in card["lines"][-1]
        ids = gtok.for_model(tok, TEXT)
        maps, logits = m.forward(ids)
        want_maps, want_logits = ref.forward(ids)
        assert np.array_equal(maps, want_maps)
        if plan[1]:
            assert np.allclose(logits, want_logits, rtol=1e-6, atol=1e-5)
        else:
            assert np.array_equal(logits, want_logits)
        assert all(passed for _, passed, _ in ownfile.checked())
    finally:
        ownfile.close()


@pytest.mark.parametrize(
    "content, reason, said",
    [
        (b"just some text, renamed\n" * 3, "not-gguf", "This is not a GGUF model file"),
        (b"GGUF\x03\x00\x00\x00" + b"\x00" * 4, "truncated", "This file is cut short"),
    ],
)
def test_a_refused_file_is_told_why_and_nothing_past_its_header_is_read(
    tmp_path, content, reason, said
):
    path = tmp_path / "mine.gguf"
    path.write_bytes(content)
    source = ownfile.PathSource(path)
    answer = ownfile.open_source(source)
    assert answer["ok"] is False and answer["reason"] == reason
    assert answer["message"].startswith(said)
    assert source.read_bytes <= len(content)
    assert causal.model() is smollm2


def test_a_vocabulary_split_in_an_unknown_way_is_refused_from_the_header(tiny, tmp_path):
    path = tmp_path / "other.gguf"
    path.write_bytes(tiny[0].read_bytes().replace(b"gpt-2", b"gpt-9", 1))  # tokenizer.ggml.pre
    answer = ownfile.open_source(ownfile.PathSource(path))
    assert answer["ok"] is False and answer["reason"] == "model"
    assert "the pre-tokenizer 'gpt-9'; this page knows dbrx" in answer["message"]


def test_a_browser_without_the_memory_is_told_before_any_weight_is_read(tiny, monkeypatch):
    asked = []
    monkeypatch.setattr(ownfile.memory, "room", lambda mb: asked.append(mb) or False)
    source = ownfile.PathSource(tiny[0])
    answer = ownfile.open_source(source)
    # the worker's 128 MB with the weights' 0.1 MB and the forward's working memory, rounded up
    assert answer["reason"] == "memory" and asked == [ownfile.BASE_MB + 1]
    assert answer["message"].startswith(f"This model needs about {ownfile.BASE_MB + 1} MB")
    assert not ownfile.is_open()


def test_a_browser_that_runs_out_of_memory_while_reading_is_told_and_let_go(tiny, monkeypatch):
    def no_room(raw, kind, shape, out=None):
        raise MemoryError

    ownfile.open_source(ownfile.PathSource(tiny[0]))
    monkeypatch.setattr(ownfile.quants, "dequantize", no_room)
    with pytest.raises(MemoryError, match="did not give your model the memory"):
        ownfile.load_step(budget=0.0)
    assert not ownfile.is_open() and ownfile.name() == ""  # nothing read is kept


def test_an_unknown_architecture_is_refused_before_its_tensors_are_read(tiny, tmp_path):
    # general.architecture's value changed, and 3 MB of weights more: the header comes in 1 MB
    # pieces (gguf.PIECE), so a refusal reads one piece
    data = tiny[0].read_bytes().replace(b"llama", b"mamba", 1) + bytes(3 * gguf.PIECE)
    path = tmp_path / "mamba.gguf"
    path.write_bytes(data)
    source = ownfile.PathSource(path)
    answer = ownfile.open_source(source)
    assert answer["reason"] == "architecture"
    assert "'mamba', which this page cannot run" in answer["message"]
    assert source.read_bytes == gguf.PIECE


def test_the_card_shows_the_checks_that_need_no_reference(reader_model, tiny):
    _, ref, tok = tiny
    checks = {what: (ok, said) for what, ok, said in ownfile.checked()}
    ids = gtok.for_model(tok, ownfile.CHECK_TEXT)[:8]
    cache = ref.new_cache()
    pieces = [ids[:4], ids[4:6], ids[6:7], ids[7:8]]  # single tokens after a longer prefix
    rows = np.concatenate([ref.step(piece, cache)[1] for piece in pieces])
    delta = float(np.abs(rows - ref.forward(ids)[1]).max())
    ok, said = checks["kv"]
    assert ok and said == (
        "KV cache, read 4, 2, 1 and 1 tokens at a time, against the full forward on 8 "
        f"tokens: max |Δ logit| = {delta:.1e} (pass, at most 1e-03)."
    )
    ok, said = checks["tokens"]
    n = len(tok.encode(ownfile.ROUND_TRIP))
    assert ok and said == f"Tokenizer round trip, text → {n} ids → text: the same text (pass)."
    html = causal.chooser()
    assert "Running your model file: Tiny test llama." in html
    assert "Back to SmolLM2</button>" in html and 'type="file"' not in html


def test_heads_that_copy_figure_1_runs_on_the_readers_model(reader_model, tiny):
    _, ref, tok = tiny
    ids = gtok.for_model(tok, TEXT)
    want_maps, want_logits = ref.forward(ids)
    answer = finished(layer_fig.render, {"text": "own", "own": TEXT, "layer": "9"})
    state = answer["state"]
    assert state["layer"] == "2"  # the reader's model has 2 layers: the last one
    assert answer["summary"].startswith("Layer 2 of 2 on your text:")
    r = ownfile.run(ids)
    assert np.array_equal(r.maps, want_maps)
    # the last token's five guesses: the reference's softmax, likeliest first
    p = softmax(want_logits[-1].astype(np.float64))
    best = np.argsort(-p, kind="stable")[:5]
    shown = re.findall(r"</meter> ([0-9.]+)%</li>", answer["html"])
    assert shown == [f"{round(p[j] * 1000) / 10:.1f}" for j in best]
    assert "Running your model file: Tiny test llama." in answer["html"]
    # writing on, a token a call through the KV cache, is the reference's greedy text
    state = dict(state, write="on")
    for _ in range(3):
        state = check(layer_fig.render(state))["state"]
    written = ownfile.encode(state["own"])[0]
    loop = list(ids)
    while len(loop) < len(written):
        loop.append(int(np.argmax(ref.forward(loop)[1][-1])))
    assert written == loop and len(written) == len(ids) + 3


def test_heads_that_copy_figure_2_scores_every_head_of_the_readers_model(reader_model, tiny):
    _, ref, tok = tiny
    answer = finished(map_fig.render, {"text": "own", "own": TEXT, "score": "previous"})
    ids = gtok.for_model(tok, TEXT)
    previous = hc.link_shares(ref.forward(ids)[0].astype(np.float64))["previous"]
    L, H = np.unravel_index(int(np.argmax(previous)), previous.shape)
    assert previous.shape == (2, 4)
    assert answer["summary"].startswith("All 8 heads coloured by share on the token before")
    said = f"the strongest is L{L + 1}\u00a0H{H + 1} ({100 * previous[L, H]:.0f}%)"
    assert said in answer["summary"]


def test_back_to_smollm2_draws_the_shipped_model_again(tiny):
    opened(tiny[0])
    assert causal.model() is ownfile
    ownfile.close()
    html = check(layer_fig.render({"text": "own", "own": TEXT}))["html"]
    assert causal.model() is smollm2
    assert "Open a model file (.gguf)" in html and 'type="file"' in html


def test_what_a_head_does_figure_3_attributes_with_the_readers_output_matrix(reader_model, tiny):
    """The tiny llama has an output matrix of its own (not tied to the embedding): the parts'
    direct shares add up to the logit difference the whole-file loader's forward gives."""
    _, ref, tok = tiny
    state = {"clean": "The cat sat on the mat", "corrupt": "The cat sat on the hat"}
    state |= {"a": "cat", "b": "sat"}
    answer = finished(whad_own.render, dict(state))
    assert answer["summary"].startswith("Your pair at ")
    # the tokens as buttons: the tiny vocabulary reads " on" as a space, "o", "n"; the
    # space alone is shown as "␣" and named for a screen reader
    buttons = re.findall(r'<button[^>]*data-fk="t\d+"([^>]*)>([^<]*)</button>', answer["html"])
    shown = [text for _, text in buttons]
    assert shown[:7] == ["T", "he", " cat", " sat", "␣", "o", "n"]
    assert 'aria-label="a space"' in buttons[4][0] and "aria-label" not in buttons[5][0]
    own = whad_own.read(dict(answer["state"]))
    ids, t, a, b = own["ids"], own["token"], own["a"], own["b"]
    assert ids == gtok.for_model(tok, state["clean"]) and t == len(ids) - 1
    logits = ref.forward(ids)[1][t].astype(np.float64)
    parts = own["pair"].attribution(t, a, b)
    total = parts["heads"].sum() + parts["embed"] + parts["mlp"].sum()
    assert parts["heads"].shape == (2, 4)
    assert abs(parts["total"] - (logits[a] - logits[b])) < 1e-3
    assert abs(total - parts["total"]) < 1e-6


def test_what_a_head_does_figure_3_measures_and_patches_a_gpt2_file(tmp_path):
    """A gpt2 file (final LayerNorm with a bias, its own output matrix) opened: Figure 3 draws
    every head's attribution of the pair, adding up with the norm's bias to the logit
    difference of the whole-file loader's forward, and lists a patch asked for with the
    patched run's difference as that loader's forward with the head swapped gives it."""
    path = tinygguf.write(tmp_path / "gpt2.gguf", "gpt2")
    ref = gf.load(path.read_bytes())
    state = {"clean": "The cat sat on the mat", "corrupt": "The cat sat on the hat"}
    state |= {"a": "cat", "b": "sat", "patch": "L2H3"}
    try:
        opened(path)
        answer = finished(whad_own.render, dict(state))
        assert answer["summary"].startswith("Your pair at ")
        own = whad_own.read(dict(answer["state"]))
        ids, bad, t, a, b = own["ids"], own["pair"].traces[1].ids, own["token"], own["a"], own["b"]
        logits = ref.forward(ids)[1][t].astype(np.float64)
        parts = own["pair"].attribution(t, a, b)
        total = parts["heads"].sum() + parts["embed"] + parts["mlp"].sum() + parts["bias"]
        assert parts["heads"].shape == (2, 4) and parts["bias"] != 0
        assert abs(parts["total"] - (logits[a] - logits[b])) < 1e-3
        assert abs(total - parts["total"]) < 1e-6
        seen = {}
        ref.forward(ids, tap=lambda i, y: seen.__setitem__(i, y.copy()) if i == 1 else None)

        def swap(i, y):
            if i == 1:
                y[2] = seen[1][2]

        patched = ref.forward(bad, tap=swap)[1][t].astype(np.float64)
        row = (
            '<th scope="row">L2\u00a0H3</th><td>clean into corrupted, at every position</td>'
            f"<td>{whad_own.logits(patched[a] - patched[b])}</td>"
        )
        assert row in answer["html"]
    finally:
        ownfile.close()


@pytest.mark.parametrize("arch", ["qwen2", "gpt2"])
def test_qwen2_and_gpt2_files_run_in_pieces_and_write_on_through_the_cache(arch, tmp_path):
    """The other two families: the runs the figures read are the whole-file loader's forward,
    and a token written through the KV cache gives the forward of the longer text."""
    path = tinygguf.write(tmp_path / f"{arch}.gguf", arch)
    data = path.read_bytes()
    ref, tok = gf.load(data), gtok.tokenizer(gguf.Header(data).fields)
    try:
        opened(path)
        kv = tinygguf.HEADS if arch == "gpt2" else tinygguf.KV
        assert causal.shape() == (tinygguf.LAYERS, tinygguf.HEADS, kv)
        assert [ok for _, ok, _ in ownfile.checked()] == [True, True]
        ids = ownfile.encode(TEXT)[0]
        assert ids == gtok.for_model(tok, TEXT)
        r = ownfile.run(ids).finish()
        assert np.array_equal(r.maps, ref.forward(ids)[0])
        nxt = ownfile.choose(r)
        assert nxt == int(np.argmax(ref.forward(ids)[1][-1]))
        longer = ownfile.extend(r, nxt)
        maps, logits = ref.forward(ids + [nxt])
        assert np.abs(longer.maps - maps).max() < 1e-5
        assert np.abs(longer.logits(len(ids)) - logits[-1]).max() < 1e-4
        # not GPT-2 small's shape: Figure 1 offers no check of the source's claim
        drawn = finished(layer_fig.render, {"text": "own", "own": TEXT})
        assert "hc-source" not in drawn["html"] and "data-ownfile-close" in drawn["html"]
        # the layer's heads boxed by the keys and values they share; GPT-2's share none
        boxes = re.findall(
            r'<section class="hc-group".*?<h3 class="hc-kv">([^<]*)</h3>(.*?)</section>',
            drawn["html"],
            re.S,
        )
        titles = [title for title, _ in boxes]
        heads = [re.findall(r'data-head="(\d+)"', inside) for _, inside in boxes]
        if arch == "gpt2":
            assert titles == ["4 heads, each with its own keys and values"]
            assert heads == [["1", "2", "3", "4"]]
        else:
            assert titles == [
                "Key/value head 1 · shared by H1–H2",
                "Key/value head 2 · shared by H3–H4",
            ]
            assert heads == [["1", "2"], ["3", "4"]]
    finally:
        ownfile.close()


def test_a_gpt2_small_file_gets_the_sources_sentence_and_every_heads_shares(tmp_path, monkeypatch):
    """A random file of GPT-2 small's shape (tests/support/tinygguf.py) opened: Figure 1 offers
    the source's sentence at its layer, and its table holds every head's previous-token,
    "it"->"cat" and first-token shares as gpt2check computes them on the whole-file loader's
    model, with each claim's verdict on the reader's file; the offer taken, the maps show
    that layer with "it" marked."""
    path = tinygguf.write_gpt2_small(tmp_path / "gpt2-small-shape.gguf")
    data = path.read_bytes()
    ref, tok = gf.load(data), gtok.tokenizer(gguf.Header(data).fields)
    want = gpt2check.shares(ref, tok)
    verdicts = [holds for _, holds, _ in gpt2check.claims(want)]
    try:
        opened(path)
        drawn = finished(layer_fig.render, {"text": "own", "own": TEXT})
        html = drawn["html"]
        offer = re.search(r'<form class="hc-source-offer" data-state-form>(.*?)</form>', html)
        fields = dict(re.findall(r'name="([a-z]+)" value="([^"]*)"', offer[1]))
        assert fields["own"] == gpt2check.SENTENCE and fields["layer"] == "5"
        table = re.search(r'<table class="mh-matrix hc-source-table">.*?</table>', html)[0]
        rows = re.findall(
            r'<th scope="row">Head\u00a0(\d+)</th>((?:<td>[^<]*</td>){3})</tr>', table
        )
        assert [int(h) for h, _ in rows] == list(range(12))
        got = np.array([[float(x) for x in re.findall(r"<td>([^<]*)</td>", r)] for _, r in rows])
        columns = np.array([want["previous"], want["it_cat"], want["first"]]).T
        assert np.abs(got - columns).max() <= 0.0005
        claims = re.findall(
            r'<li class="(pass|fail)">([^<]*)</li>', html.split("hc-source-claims")[1]
        )
        assert [c == "pass" for c, _ in claims] == verdicts
        assert all("On your file, Tiny test gpt2, this " in said for _, said in claims)
        taken = finished(layer_fig.render, {**drawn["state"], **fields})
        assert taken["summary"].startswith("Layer 5 of 12 on your text: the row of “it” is marked")
        assert 'data-fk="source-sentence" disabled' in taken["html"]
        assert "In the maps below: layer 5 here" in taken["html"]
        assert "hc-source-on" not in html and 'data-fk="source-sentence">' in html
        held = weakref.ref(ownfile.model()[0])
    finally:
        ownfile.close()
    gc.collect()
    assert held() is None  # the shares kept for the file are let go with its model
    # a sentence the file's tokenizer cannot read "it" and "cat" of as one token each: told so
    monkeypatch.setattr(gpt2check, "SENTENCE", "The dog sat on the mat because it was tired")
    try:
        opened(path)
        html = finished(layer_fig.render, {"text": "own", "own": TEXT})["html"]
    finally:
        ownfile.close()
    assert "hc-source" not in html
    assert "Your file has GPT-2 small’s shape, but the file&#x27;s tokenizer does not read" in html


def test_writing_on_stops_at_a_control_character_the_text_would_lose(reader_model, monkeypatch):
    """A token that writes a control character (a random model's likeliest, here the bell) is
    taken out of the text by tidy, so the same token would be chosen at every call and the
    text would never grow: writing stops, saying why, with the text as it was."""
    from toymodels.models.smollm2 import bpe

    bell = tinygguf.vocabulary()[0].index(bpe.byte_alphabet()[7])
    monkeypatch.setattr(ownfile, "choose", lambda *args: bell)
    state = finished(layer_fig.render, {"text": "own", "own": TEXT})["state"]
    answer = check(layer_fig.render(dict(state, write="on")))
    assert answer["state"]["write"] == "" and not answer.get("more")
    assert answer["state"]["own"] == TEXT
    assert esc(ownfile.CONTROL) in answer["html"]


def test_the_patch_box_gives_examples_of_heads_the_readers_model_has(reader_model):
    """The patch box's placeholder and help name heads of the model open: typed as shown they
    are patched, on the tiny llama (2 layers of 4 heads) as on SmolLM2 (30 of 9)."""
    state = {"clean": "The cat sat on the mat", "corrupt": "The cat sat on the hat"}
    html = finished(whad_own.render, state | {"a": "cat", "b": "sat"})["html"]
    placeholder = re.search(r'name="patch"[^>]*placeholder="([^"]*)"', html)[1]
    example = re.search(r"Name heads as (L\d+H\d+) \(layer", html)[1]
    assert placeholder == "L2H4 L1H3, or L2" and example == "L2H4"
    for typed in (*placeholder.replace(",", "").split(" or "), example):
        chosen, _, error = whad_own.read_patch(typed)
        assert error is None and chosen
    ownfile.close()
    assert whad_own.patch_examples()[0] == "L24H4 L20H3, or L24"  # SmolLM2's 30 layers of 9


def test_closing_the_readers_file_lets_its_model_go_with_the_pairs_measured(tiny):
    """What a head does 3 keeps the last pairs' traces, each holding the model it ran: those of
    a reader's file are let go with it, so Back to SmolLM2 or a second file does not keep the
    first one's weights in the browser's memory."""
    opened(tiny[0])
    try:
        state = {"clean": "The cat sat on the mat", "corrupt": "The cat sat on the hat"}
        finished(whad_own.render, state | {"a": "cat", "b": "sat", "patched": "L1H2"})
        held = weakref.ref(ownfile.model()[0])
    finally:
        ownfile.close()
    gc.collect()
    assert held() is None


def test_each_patch_says_the_layers_its_forward_ran(reader_model):
    """A patch reruns the model from its first patched layer up: on the tiny llama's 2 layers,
    a head of layer 1 reruns layers 1–2, the last layer alone "layer 2"."""
    state = {"clean": "The cat sat on the mat", "corrupt": "The cat sat on the hat"}
    html = finished(whad_own.render, state | {"a": "cat", "b": "sat", "patched": "L1H2|L2"})["html"]
    ran = re.findall(r"<td>\d+ ms, ([^<]*)</td></tr>", html)
    assert sorted(ran) == ["layer 2", "layers 1–2"]
