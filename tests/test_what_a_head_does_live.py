"""The reader's own pair in SmolLM2, live, in CPython: Figure 3 ("what-own") computed
a piece per call as the page does; its direct attributions against the model's own logits; its
patches against the export's batched patching and against a forward from the first layer;
every message a reader can meet; its markup against the page's allow-list.

Marked `model`: they read the repacked files (sitebuild.models.smollm2.files()) and skip where
those cannot be made. One model is built for the module.
"""

import re

import numpy as np
import pytest
from test_heads_that_copy_live import Markup, allowed, finished

from toymodels.export.patching import patch_heads
from toymodels.models.smollm2 import live as smollm2
from toymodels.page.figure import check
from toymodels.what_a_head_does import live, own
from toymodels.what_a_head_does.attribution import Trace, logit_diff
from toymodels.what_a_head_does.patching import Patch, positions, recovered, share

pytestmark = pytest.mark.model
CLEAN, CORRUPT = own.DEFAULTS["clean"], own.DEFAULTS["corrupt"]


@pytest.fixture(autouse=True, scope="module")
def no_pair_kept():
    """The pairs' traces go with the module (the model with conftest's `llama`)."""
    yield
    live._pairs.clear()


def drawn(state):
    """Figure 3 for STATE, to the end, as the page draws it: -> (the last answer, calls)."""
    return finished(own.render, state)


def cells(html, key):
    """{'L24H4': the cell's spoken value} of one map of the figure's HTML."""
    found = re.findall(
        rf'data-value="(L\d+H\d+)" data-fk="{key}-\d+-\d+"[^>]*aria-label="[^:"]*: ([^"]*)"',
        html,
    )
    return dict(found)


def token(text):
    return smollm2.encode(text)[0]


def test_the_pair_is_run_in_pieces_and_its_attribution_adds_up_to_the_models_logits(llama):
    answer, calls = drawn({})
    assert calls > 2, "the two texts were not run a piece at a time"
    a, b = (live.candidate(w)[0] for w in ("Lucy", "Mark"))
    ids, bad = token(CLEAN), token(CORRUPT)
    p = live.pair(ids, bad)
    whole = Trace(llama, ids)
    assert np.array_equal(p.traces[0].x, whole.x) and np.array_equal(p.traces[0].y, whole.y)
    logits = llama.logits(whole.x[-1])  # (T, V), as the model reads them out
    for t in (3, len(ids) - 1):
        part = p.attribution(t, a, b)
        total = part["heads"].sum() + part["embed"] + part["mlp"].sum()
        assert total == pytest.approx(float(logits[t, a] - logits[t, b]), abs=1e-3)
    # the figure shows each head's attribution at the last token, as the map names it
    shown = cells(answer["html"], "dla")
    heads = p.attribution(len(ids) - 1, a, b)["heads"]
    assert len(shown) == heads.size
    assert shown["L24H4"] == f"attribution {own.logits(heads[23, 3])}"
    top = np.unravel_index(np.abs(heads).argmax(), heads.shape)
    assert answer["state"]["head"] == own.head_value(*top)
    # attention from the last token to the word that differs (" Mark" / " Lucy", one token)
    (k,) = p.differ
    att = cells(answer["html"], "att")
    assert att["L1H1"] == f"attention {own.percent(p.traces[0].maps[0, 0, -1, k])}"


def test_a_live_patch_equals_the_exports_batched_patch_and_a_forward_from_layer_1(llama):
    ids, bad = token(CLEAN), token(CORRUPT)
    a, b = (live.candidate(w)[0] for w in ("Lucy", "Mark"))
    tc, tk = Trace(llama, ids), Trace(llama, bad)
    chosen = [(0, 2), (15, 4), (23, 3), (29, 8)]
    batched = patch_heads(llama, tc, tk, a, b, heads=chosen)
    lds = [logit_diff(llama, t.x[-1, -1], a, b) for t in (tc, tk)]
    for head in chosen:
        one = Patch(tc, tk, [head]).advance(float("inf"))
        got = recovered(one.logit_diff(-1, a, b), *lds)
        assert got == pytest.approx(batched[head], abs=1e-4)
    # the other places and the other way, as the export makes them
    differ = [n for n, (i, j) in enumerate(zip(ids, bad, strict=True)) if i != j]
    for way, where in (("noise", "every"), ("denoise", "token"), ("noise", "word")):
        batched = patch_heads(llama, tc, tk, a, b, heads=chosen, way=way, where=where)
        at = positions(where, len(ids) - 1, differ)
        for head in chosen:
            one = Patch(tc, tk, [head], way, at).advance(float("inf"))
            got = share(one.logit_diff(-1, a, b), *lds, way)
            assert got == pytest.approx(batched[head], abs=1e-4), (way, where, head)
    # a layer and a head together, from the kept residual, against the whole corrupted forward
    heads = [(19, h) for h in range(9)] + [(23, 3)]
    patch = Patch(tc, tk, heads)
    while not patch.complete:
        patch.advance(0.0)
    assert patch.seconds > 0

    def swap(i, y):
        for L, h in heads:
            if i == L:
                y[h] = tc.y[L, h]

    *_, (_, _, x) = llama.run(bad, tap=swap)
    assert patch.logit_diff(-1, a, b) == pytest.approx(logit_diff(llama, x[-1], a, b), abs=1e-4)


def test_the_reader_patches_a_head_a_layer_and_several_and_sees_each_forwards_time(llama):
    state = drawn({})[0]["state"]
    p = live.pair(token(CLEAN), token(CORRUPT))
    a, b = (live.candidate(w)[0] for w in ("Lucy", "Mark"))
    lds = p.logit_diffs(len(p.traces[0].ids) - 1, a, b)
    for asked, canonical, said in (
        ("L24H4", "L24H4", "L24\u00a0H4"),
        ("l20", "L20", "layer 20 (all 9 heads)"),
        (
            "L24H4, l20h3  L30",
            "L20H3 L24H4 L30",
            "L20\u00a0H3, L24\u00a0H4 and layer 30 (all 9 heads)",
        ),
    ):
        answer = drawn(dict(state, patch=asked))[0]
        state = answer["state"]
        assert state["patch"] == canonical
        chosen, _, _ = own.read_patch(canonical)
        done = p.patch(chosen)
        got = recovered(done.logit_diff(-1, a, b), *lds)
        row = (
            f'<th scope="row">{said}</th><td>clean into corrupted, at every position</td>'
            f"<td>{own.logits(done.logit_diff(-1, a, b))}</td>"
        )
        assert row + f"<td>recovers {own.percent(got)}</td>" in answer["html"]
        first = chosen[0][0] + 1
        assert f"<td>{1000 * done.seconds:.0f} ms, layers {first}–30</td>" in answer["html"]
    # the table lists every patch asked for, newest first, and the state holds them (a link)
    assert state["patched"] == "L20H3 L24H4 L30|L20|L24H4"
    html = answer["html"]
    order = [
        html.index(f'<th scope="row">{said}</th>')
        for said in (
            "L20\u00a0H3, L24\u00a0H4 and layer 30 (all 9 heads)",
            "layer 20 (all 9 heads)",
            "L24\u00a0H4",
        )
    ]
    assert order == sorted(order)
    # a patch the page worked out ahead but the reader never asked for is not listed
    live.pair(token(CLEAN), token(CORRUPT)).patch([(3, 3)]).advance(float("inf"))
    again = drawn(state)[0]["html"]
    table = again[again.index('class="mh-matrix wh-patches"') :]
    assert table.count('<th scope="row">') == 3 and "L4\u00a0H4" not in table
    # a fresh page (no patch kept in Python) computes the link's patches again, in pieces
    live._pairs.clear()
    answer, calls = drawn(state)
    untimed = [re.sub(r"<td>\d+ ms, ", "<td>", h) for h in (answer["html"], html)]
    assert untimed[0] == untimed[1] and calls > 2


def test_the_reader_chooses_where_and_which_way(llama):
    """Noising at the token measured, then a patch at the changed word: each row says where
    and which way, its share is the one its definition gives, and the link keeps both."""
    state = drawn({})[0]["state"]
    p = live.pair(token(CLEAN), token(CORRUPT))
    a, b = (live.candidate(w)[0] for w in ("Lucy", "Mark"))
    T = len(p.traces[0].ids)
    t = T - 2  # " salt": a token after the changed word, not the last
    ld_clean, ld_bad = p.logit_diffs(t, a, b)
    answer = drawn(dict(state, token=str(t), patch="L18H5", at="token", way="noise"))[0]
    done = p.patch([(17, 4)], "noise", "token", t)
    lost = (ld_clean - done.logit_diff(t, a, b)) / (ld_clean - ld_bad)
    assert (
        '<th scope="row">L18\u00a0H5</th><td>corrupted into clean, at the token measured only</td>'
        f"<td>{own.logits(done.logit_diff(t, a, b))}</td><td>loses {own.percent(lost)}</td>"
    ) in answer["html"]
    assert answer["state"]["patched"] == "L18H5~token~noise"
    answer = drawn(dict(answer["state"], at="word", way="denoise"))[0]
    done = p.patch([(17, 4)], "denoise", "word", t)
    back = (done.logit_diff(t, a, b) - ld_bad) / (ld_clean - ld_bad)
    assert (
        '<th scope="row">L18\u00a0H5</th><td>clean into corrupted, at “Mark” only</td>'
        f"<td>{own.logits(done.logit_diff(t, a, b))}</td><td>recovers {own.percent(back)}</td>"
    ) in answer["html"]
    assert answer["state"]["patched"] == "L18H5~word~denoise|L18H5~token~noise"
    # the two rows differ: where the head is put back matters
    assert own.percent(back) != own.percent(lost)
    for key, value in (("at", "word"), ("way", "denoise")):
        pressed = rf'data-key="{key}" data-value="{value}"[^>]*aria-pressed="true"'
        assert re.search(pressed, answer["html"]), key


def test_a_token_before_the_changed_word_has_nothing_to_recover(llama):
    state = drawn({})[0]["state"]
    answer = drawn(dict(state, token="2", patch="L24H4"))[0]
    assert "The two texts are the same up to the token measured" in answer["html"]
    assert "<td>—</td>" in answer["html"]


def test_a_new_pair_starts_afresh_and_a_backward_pair_is_told(llama):
    """The pair's form sets the token, head and patches back, so a new pair does not
    list the last pair's patches; candidates the clean text does not lean to as a get a note
    (its patches' shares read backwards, "Recovered 136%"), the pair it opens with none."""
    answer = drawn({"patch": "L24H4"})[0]
    form = answer["html"][: answer["html"].index("</form>")]
    for key in ("token", "head", "patch", "patched"):
        assert f'<input type="hidden" name="{key}" value="">' in form
    assert "reads backwards" not in answer["html"]
    swapped = drawn(dict(own.DEFAULTS, a="Mark", b="Lucy", patch="L24H4"))[0]["html"]
    assert "Here the clean text does not prefer “Mark” (a) more than the corrupted one" in swapped
    assert "so a patch’s share recovered reads backwards" in swapped


@pytest.mark.parametrize(
    "change, message",
    [
        ({"corrupt": "  "}, live.NO_CORRUPT),
        ({"b": ""}, live.NO_CANDIDATES),
        ({"clean": ""}, smollm2.EMPTY),
        ({"a": "Mark"}, live.SAME_CANDIDATES),
        ({"corrupt": CLEAN}, live.SAME_TEXTS),
        (
            {"a": "Lucinda"},
            "“Lucinda” is 2 tokens for this model (“ Luc”, “inda”): the logit difference "
            "compares two single tokens, so choose a word it reads whole.",
        ),
        (
            {"corrupt": CORRUPT.replace("Lucy passed", "Bartholomew passed")},
            "The two texts must have the same number of tokens, so that each head’s output can "
            "be put back token by token: the first has 12, the second 14. Change a word for one "
            "the model reads in as many tokens.",
        ),
        ({"patch": "L31"}, "“L31” is not a head of this model: its layers go from L1 to L30"),
        ({"patch": "L2H10"}, "“L2H10” is not a head of this model"),
        ({"patch": "head 4"}, "“head” is not a head. Name heads as L24H4"),
    ],
)
def test_what_the_reader_is_told(llama, change, message):
    answer = drawn(dict(own.DEFAULTS, **change))[0]
    assert message in answer["html"], answer["summary"]


def test_before_the_model_is_loaded_the_figure_offers_the_download(monkeypatch):
    monkeypatch.setattr(smollm2, "loaded", lambda: False)
    answer = check(own.render({}))
    assert f"Load SmolLM2 ({smollm2.size_mb()})</button>" in answer["html"]
    assert "wh-map" not in answer["html"] and "more" not in answer


def test_the_live_figure_uses_only_the_markup_the_page_keeps(llama):
    tags, attributes = allowed()
    state = drawn({"patch": "L24H4"})[0]["state"]
    for s in (state, dict(state, a="Lucinda"), dict(state, token="1"), {"patch": "x"}):
        parser = Markup()
        parser.feed(drawn(s)[0]["html"])
        assert parser.tags <= tags, parser.tags - tags
        assert parser.attrs <= attributes, parser.attrs - attributes
