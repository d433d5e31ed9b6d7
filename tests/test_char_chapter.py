"""Chapter "One character at a time": char_lab's numbers against independent sums, the
figure's state, and the page in Chromium against CPython (probabilities, attention, ablation,
the drum, the models)."""

import json
import math
import re
from html import unescape
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from conftest import click_settled, open_ready, url_with
from playwright.sync_api import expect

from toymodels.models.charmodel import model as cm
from toymodels.one_character import figure as fig
from toymodels.one_character import lab
from toymodels.one_character import values as char_values
from toymodels.training import evaluate, train

TEXT = "the queen. the qu"


def cpython_probs(run, step, text, ablate=()):
    params, cfg, _ = cm.load(run, step)
    logits, _ = cm.forward(params, cfg, cm.encode(text), ablate=ablate)
    return cm.softmax(logits[-1].astype(np.float64))


def drawn_probs(html_or_page):
    """The bars' probabilities in vocabulary order, from a render's html or from a page."""
    if isinstance(html_or_page, str):
        probs = {
            unescape(ch): float(p)
            for ch, p in re.findall(r'data-ch="([^"]*)" data-p="([^"]+)"', html_or_page)
        }
    else:
        pairs = html_or_page.eval_on_selector_all(
            "#char-model rect.bar", "els => els.map(e => [e.dataset.ch, e.dataset.p])"
        )
        probs = {ch: float(p) for ch, p in pairs}
    return np.array([probs[c] for c in cm.VOCAB])


# ---------------------------------------------------------------- the numbers


def test_scores_weights_and_head_output_by_hand():
    run, step = lab.DEFAULT_RUN, lab.steps(lab.DEFAULT_RUN)[-1]
    params, cfg = lab.checkpoint(run, step)
    t, head, K, D = 12, 1, cfg["d_head"], cfg["d_model"]
    r = lab.look(params, cfg, TEXT, t, 0, head)
    # an independent layer 1: sinusoids written out, LayerNorm by hand, this head's columns only
    idx = [cm.VOCAB.index(c) for c in TEXT[: t + 1]]
    pe = np.array(
        [
            [
                math.sin(p / 10000 ** (i / D))
                if i % 2 == 0
                else math.cos(p / 10000 ** ((i - 1) / D))
                for i in range(D)
            ]
            for p in range(t + 1)
        ]
    )
    x = params["wte"][idx].astype(np.float64) + pe
    h = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * params[
        "h0.ln1.g"
    ] + params["h0.ln1.b"]
    cols = slice(head * K, (head + 1) * K)
    q, k, v = (
        h[t] @ params["h0.wq"][:, cols],
        h @ params["h0.wk"][:, cols],
        h @ params["h0.wv"][:, cols],
    )
    scores = k @ q / math.sqrt(K)
    w = np.exp(scores - scores.max())
    w /= w.sum()
    assert np.allclose(r["pos"], pe[t], atol=1e-6) and np.allclose(r["x0"], x[t], atol=1e-5)
    assert np.allclose(r["scores"], scores, atol=1e-3)
    assert np.allclose(r["weights"], w, atol=1e-5) and abs(r["weights"].sum() - 1) < 1e-6
    assert np.allclose(r["head_out"], (w @ v) @ params["h0.wo"][cols], atol=1e-4)
    # the stream is the sum of its parts, and the read-out of that sum is the prediction
    assert np.allclose(
        sum(p for _, p in lab.look(params, cfg, TEXT, len(TEXT) - 1, 1, 0)["parts"]),
        cm.forward(params, cfg, cm.encode(TEXT), keep=True)[1]["resid_final"][-1],
        atol=1e-4,
    )


def test_ablation_and_checkpoints_in_the_figure_match_the_model():
    html = fig.render({"text": TEXT, "pulled_out": "2.3,1.1"})["html"]
    assert np.allclose(
        drawn_probs(html), cpython_probs(lab.DEFAULT_RUN, None, TEXT, [(1, 2), (0, 0)]), atol=1e-7
    )
    r = fig.render({"text": TEXT, "drum": "9", "drum_model": lab.DEFAULT_RUN})  # tenth checkpoint
    step = lab.steps(lab.DEFAULT_RUN)[9]
    assert r["state"]["step"] == str(step) and r["state"]["drum"] == ""
    assert np.allclose(
        drawn_probs(r["html"]), cpython_probs(lab.DEFAULT_RUN, step, TEXT), atol=1e-7
    )
    assert f"Training step <strong>{step:,}</strong>" in r["slots"]["drum"]


def test_forward_passes_are_kept_for_a_reader_going_back_and_forth():
    a = lab.checkpoint(lab.DEFAULT_RUN, lab.steps(lab.DEFAULT_RUN)[-1])
    b = lab.checkpoint(lab.DEFAULT_RUN, lab.steps(lab.DEFAULT_RUN)[0])
    first = lab.kept_forward("look", *a, TEXT)
    other = lab.kept_forward("look", *b, TEXT)
    assert lab.kept_forward("look", *a, TEXT) is first  # back to the first model: no new pass
    assert lab.kept_forward("look", *a, TEXT, [(1, 2)]) is not first  # a head pulled out
    assert lab.kept_forward("demo", *a, TEXT) is not first
    assert np.allclose(first[0], cm.forward(a[0], a[1], cm.encode(TEXT))[0], atol=1e-12)
    assert not np.allclose(other[0], first[0])
    for i in range(lab._KEEP):  # the oldest passes make way
        lab.kept_forward("look", *a, TEXT[: i + 1])
    assert lab.kept_forward("look", *a, TEXT) is not first


def test_copying_demo_and_nonsense_pairs():
    assert lab.copy_targets("qzxv kplw qzxv kpl") == (
        10,
        [(11, "z"), (12, "x"), (13, "v"), (14, " "), (15, "k"), (16, "p"), (17, "l")],
    )
    params, cfg = lab.checkpoint(lab.DEFAULT_RUN, lab.steps(lab.DEFAULT_RUN)[-1])
    d = lab.copying_demo(params, cfg, 0)
    assert (d["text"], d["want"], d["text"][d["source"]]) == ("qzxv kplw qzxv kp", "l", "l")
    d3 = lab.copying_demo(params, cfg, 3, [(1, 0)])
    text3, want3 = lab.nonsense_pair(3)
    assert (
        d3["text"] == text3
        and d3["text"][d3["source"]] == want3
        and d3["text"][d3["source"] - 1] == text3[-1]
    )
    logits = cm.forward(params, cfg, cm.encode(text3), ablate=[(1, 0)])[0]
    assert d3["n_right"] == sum(
        cm.VOCAB[int(logits[i - 1].argmax())] == ch for i, ch in lab.copy_targets(text3 + want3)[1]
    )
    assert math.isclose(
        d["p_want"], cpython_probs(lab.DEFAULT_RUN, None, d["text"])[cm.STOI["l"]], rel_tol=1e-6
    )
    att = cm.forward(params, cfg, cm.encode(d["text"]), keep=True)[1]["h1.att"]
    assert np.allclose(
        d["to_source"], att[:, -1, 7]
    )  # from the second "p" to the "l" after the first
    for seed in range(1, 40):
        text, want = lab.nonsense_pair(seed)
        pair = text[: text.index(" ", text.index(" ") + 1) + 1]
        letters = pair.replace(" ", "")
        assert (
            len(set(letters)) == len(letters)
            and text.startswith(pair)
            and pair.startswith(text[len(pair) :])
        )
        assert pair[len(text) - len(pair)] == want and want.isalpha()


def test_small_grids_use_the_site_colour_levels():
    from toymodels.one_character import draw as char_draw
    from toymodels.page import html as render

    att = np.tril(np.random.default_rng(1).dirichlet(np.full(9, 0.4), size=9)).astype(np.float32)
    att[3, 1], att[4, 0] = 0.0, 1 / 9  # exactly zero, and a level boundary
    svg = char_draw.grid(att, 0, 2, "test")
    drawn = {  # each path lists its rectangles of cells, 7 units a cell
        (int(x) // 7 + b, int(y) // 7 + a): cls
        for cls, d in re.findall(r'<path class="(l\d)" d="([^"]+)"', svg)
        for x, y, w, h in re.findall(r"M(\d+) (\d+)h(\d+)v(\d+)h-\3z", d)
        for a in range(int(h) // 7)
        for b in range(int(w) // 7)
    }
    for i in range(9):
        for j in range(i + 1):
            assert drawn.get((j, i), "l1") == render.level(float(att[i, j])), (i, j)


def test_head_labels_follow_the_evaluation():
    rec = {"previous": 0.45, "two_back": 0.2, "itself": 0.3, "spaces": 0.5}
    assert lab.head_label(rec, 0.1)[0] == "looks at spaces"
    assert lab.head_label(dict(rec, spaces=0.2), 0.1)[0] == "previous character"
    assert lab.head_label(dict(rec, spaces=0.2), 0.6)[0] == "copies what came next"
    assert (
        lab.head_label({"previous": 0.1, "two_back": 0.1, "itself": 0.1, "spaces": 0.1}, 0)[0]
        == "spread wide"
    )
    assert (
        lab.head_label({"previous": 0.30, "two_back": 0.23, "itself": 0.25, "spaces": 0.15}, 0)[0]
        == "last few characters"
    )
    names = {(layer, h): n for layer, h, n, _ in lab.labels(lab.DEFAULT_RUN, 9000)}
    ind = lab.measured(lab.DEFAULT_RUN, 9000)["induction"]
    assert {k for k, n in names.items() if n == "copies what came next"} == {
        (layer + 1, h + 1)
        for layer in range(2)
        for h in range(4)
        if ind[layer][h] >= lab.INDUCTION_AT
    }


def test_state_is_kept_as_typed_and_clamped():
    r = fig.render(
        {
            "text": "The Queen!",
            "character": "99",
            "head": "7.7",
            "pulled_out": "2.3,9.9,x",
            "model": "nope",
            "step": "1234",
        }
    )
    s = r["state"]
    assert (
        s["text"] == "The Queen!"
        and s["model"] == lab.DEFAULT_RUN
        and s["pulled_out"] == "2.3"
        and s["head"] == ""
        and s["character"] == ""
    )
    assert s["step"] == str(lab.nearest_step(lab.DEFAULT_RUN, 1234)) and r["error"] is None
    assert "“T”, “Q”, “!”" in r["html"] and 'value="The Queen!"' in r["html"]
    assert np.allclose(
        drawn_probs(r["html"]),
        cpython_probs(lab.DEFAULT_RUN, int(s["step"]), "he ueen", [(1, 2)]),
        atol=1e-7,
    )
    empty = fig.render({"text": "ÉÉ"})  # nothing to run on: said, not an error
    assert (
        empty["error"] is None
        and "at least one character" in empty["summary"]
        and "“É”" in empty["html"]
    )
    assert all("at least one character" in html for html in empty["slots"].values())
    evil = "<img src=x onerror=alert(1)>"
    for r in (
        fig.render({"text": evil}),
        fig.render({"text": "ab", "model": evil, "pulled_out": evil, "head": evil, "step": evil}),
    ):
        assert all("<img" not in html for html in [r["html"], *r["slots"].values()])
    for field in ("character", "nonsense", "step", "drum"):  # a URL may hold a number of any length
        assert fig.render({"text": TEXT, field: "9" * 5000})["error"] is None
    assert fig.render({"text": TEXT, "character": "007"})["state"]["character"] == "7"
    wrote = fig.render({"text": TEXT, "write": "1"})["state"]
    assert (
        wrote["text"].startswith(TEXT)
        and len(wrote["text"]) == len(TEXT) + fig.WRITE_ON
        and wrote["write"] == ""
    )
    assert (
        wrote == fig.render({"text": TEXT, "write": "1"})["state"]
    )  # the same text writes on the same way
    near = "a" * (lab.MAX_CHARS - 3)
    full = fig.render({"text": near, "write": "1"})
    assert (
        len(full["state"]["text"]) == lab.MAX_CHARS and 'data-fk="write" disabled' in full["html"]
    )
    long = fig.render({"text": "ab " * 30})
    assert f"reads the first {lab.MAX_CHARS} characters" in long["html"]
    assert np.allclose(
        drawn_probs(long["html"]),
        cpython_probs(lab.DEFAULT_RUN, None, ("ab " * 30)[: lab.MAX_CHARS]),
        atol=1e-7,
    )


def test_switching_models_keeps_a_step_they_share_or_the_nearest():
    s = fig.render({"model": "reference-repeats", "step": "4600"})["state"]
    assert s["step"] == "4600"
    moved = fig.render({**s, "model": lab.DEFAULT_RUN})["state"]
    assert (
        moved["step"]
        == str(min(lab.steps(lab.DEFAULT_RUN), key=lambda x: (abs(x - 4600), x)))
        == "4500"
    )
    # a drum position sent for one model is not read against another model's checkpoints
    assert (
        fig.render({"model": lab.DEFAULT_RUN, "drum": "3", "drum_model": "reference-repeats"})[
            "state"
        ]["step"]
        == ""
    )
    assert (
        fig.render({"model": lab.DEFAULT_RUN, "drum": "3", "drum_model": lab.DEFAULT_RUN})["state"][
            "step"
        ]
        == "300"
    )


def test_run_stories_and_prose_numbers_come_from_the_evaluation():
    ev = lab.evaluation()["runs"]
    assert "never learned to copy" in fig.run_story("reference")
    assert f"{100 * ev['reference']['checkpoints'][-1]['copying']:.1f}%" in fig.run_story(
        "reference"
    )
    assert "repeated nonsense" in fig.run_story(
        lab.DEFAULT_RUN
    ) and "learned to copy suddenly" in fig.run_story(lab.DEFAULT_RUN)
    assert train.parser().parse_args([]).ctx == lab.MAX_CHARS
    # the trainer's own notes give the always-a-space score the page quotes
    results = (evaluate.SHIP.parents[1] / "training" / "RESULTS.md").read_text(encoding="utf-8")
    assert f"always predicting a space scores {char_values.spaces_only()}" in " ".join(
        results.split()
    )
    ck = lab.evaluation()["runs"][lab.DEFAULT_RUN]["checkpoints"]
    first_high = [c["step"] for c in ck if c["copying"] >= 0.75][0]
    last_low = [c["step"] for c in ck if c["copying"] < 0.25 and c["step"] < first_high][-1]
    a, b = lab.when_copying_appears(lab.DEFAULT_RUN)
    assert (a["step"], b["step"]) == (last_low, first_high) and last_low < first_high
    assert lab.when_copying_appears("reference") is None
    slow = fig.run_story("reference-repeats")
    assert "suddenly" not in slow and "over 2,000 steps" in slow
    # the prose's claims about the models still hold for the shipped ones
    recipe = lab.manifest(lab.DEFAULT_RUN)["recipe"]
    assert (
        char_values.shown_not_plain() == "Half"
        and recipe["repeat_share"] + recipe["nonsense_share"] == 0.5
    )
    small = {
        run: ev[run]["checkpoints"][-1]["valid_bits"]
        for run in lab.RUNS
        if lab.manifest(run)["config"] == cm.REFERENCE
    }
    assert min(small, key=small.get) == "reference"  # "the best of the small ones on plain text"


def test_the_copying_comparison_leaves_out_a_head_that_breaks_the_model(site):
    """Pulling out a head that ruins plain text too says little about copying: the chapter
    compares two layer-1 heads that cost plain text alike, and names the one that breaks it."""
    path = evaluate.SHIP.parents[1] / "data" / "charmodel" / "evaluation.json"
    ab = json.loads(path.read_text(encoding="utf-8"))["runs"][lab.DEFAULT_RUN]["ablation"]
    whole, uniform = ab["none"]["valid_bits"], math.log2(len(cm.VOCAB))
    broken = [k for k in ("L1H1", "L1H2", "L1H3", "L1H4") if ab[k]["valid_bits"] > 4]
    assert broken == ["L1H4"] and (ab["L1H4"]["valid_bits"] - whole) / (uniform - whole) > 0.5
    assert (
        char_values.layer1_broken()
        == f"L1\u00a0H4 ({ab['L1H4']['valid_bits']:.2f} bits a character)"
    )
    one, two = ab["L1H1"], ab["L1H2"]  # cost plain text alike, copying not
    assert abs(one["valid_bits"] - two["valid_bits"]) < 0.1 < two["copying"] - one["copying"]
    assert char_values.layer1_feeder() == f"L1\u00a0H1 ({100 * one['copying']:.1f}%)"
    assert char_values.layer1_sharp() == f"L1\u00a0H2 ({100 * two['copying']:.1f}%)"
    bits = f"{one['valid_bits']:.2f} and {two['valid_bits']:.2f}"
    assert char_values.layer1_pair_bits() == bits
    text = " ".join(
        unescape(re.sub(r"<[^>]+>", "", (site / "one-character.html").read_text())).split()
    )
    # (split() splits at the no-break space of a head's name too)
    assert f"pulling out L1 H1 ({100 * one['copying']:.1f}%) costs copying" in text
    assert f"({bits} bits a character, against {whole:.2f} with every head)" in text
    assert "L1 H4 (61" not in text  # its copying cost is not quoted as a feeder's


def test_where_the_model_comes_from_waits_in_a_go_deeper_box(site):
    """The provenance (the published recipe, the search, the space bets) is a Go deeper box; the
    two scores the later sections use are defined outside it, before the first slot."""
    html = (site / "one-character.html").read_text(encoding="utf-8")
    section = html[html.index('id="reference"') : html.index('id="numbers"')]
    deeper = re.search(r'<details class="mh-deeper">.*?</details>', section, re.S).group(0)
    outside = section.replace(deeper, "")
    assert "Go deeper: Where this model comes from" in deeper
    for said in ("a published explainer", "training-results.html#the-search", "bets on a space"):
        assert said in deeper and said not in outside, said
    assert "<strong>copying test</strong>" in outside
    assert "<strong>bits per character</strong>" in outside


def test_page_is_complete_without_javascript(site):
    html = (site / "one-character.html").read_text(encoding="utf-8")
    assert np.allclose(drawn_probs(html), cpython_probs(lab.DEFAULT_RUN, None, TEXT), atol=1e-7)
    for slot in (
        "numbers",
        "scores",
        "weights",
        "residual",
        "anatomy",
        "heads",
        "copying",
        "drum",
        "ablate",
    ):
        assert f'data-slot="{slot}"><' in html and f'data-slot="{slot}"></div>' not in html
    assert (
        html.count('class="mh-svg mh-mini"') == 8
        and "2 layers × 4 heads · 32 numbers per character · 27,166 parameters" in html
    )


# ---------------------------------------------------------------- in the browser


def wait_state(page, **want):
    page.wait_for_url(
        lambda u: all(
            parse_qs(urlparse(u).query).get(f"char-model.{k}") == [v] for k, v in want.items()
        ),
        timeout=20_000,
    )


@pytest.fixture
def chapter(page, base_url):
    open_ready(page, base_url + "one-character.html")
    yield page


@pytest.mark.browser
def test_typing_matches_cpython_and_loses_nothing(chapter):
    page = chapter
    page.click("#char-model-text")
    page.keyboard.press("End")
    page.keyboard.type("een. the Queen!", delay=15)
    text = TEXT + "een. the Queen!"
    wait_state(page, text=text)
    assert page.input_value("#char-model-text") == text  # every keystroke kept, caret at the end
    page.keyboard.press("Home")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.keyboard.type("n", delay=15)  # in the middle: "then queen…"
    wait_state(page, text="the" + "n" + text[3:])
    assert page.evaluate("[document.activeElement.id, document.activeElement.selectionStart]") == [
        "char-model-text",
        4,
    ]
    page.keyboard.press("Backspace")
    wait_state(page, text=text)
    assert "“Q”, “!”" in page.inner_text("#char-model .cm-rejected")
    assert page.inner_text("#char-model [data-fig-status]") == ""
    known = text.replace("Q", "").replace("!", "")
    assert np.allclose(drawn_probs(page), cpython_probs(lab.DEFAULT_RUN, None, known), atol=1e-5)
    # one attention row: the weights of the chosen head for the selected character
    click_settled(page, "[data-slot=scores] [data-fk='scores-h1.2']")  # far above the box
    wait_state(page, head="1.2")
    row = page.eval_on_selector_all(
        "[data-slot=weights] td[data-w]", "els => els.map(e => +e.dataset.w)"
    )
    params, cfg, _ = cm.load(lab.DEFAULT_RUN)
    att = cm.forward(params, cfg, cm.encode(known), keep=True)[1]["h0.att"][1, -1]
    assert np.allclose(row, att, atol=1e-5) and len(row) == len(known)


@pytest.mark.browser
def test_ablation_in_the_page_matches_python(chapter):
    page = chapter
    page.click("[data-fk='off-2.3']")
    wait_state(page, pulled_out="2.3")
    assert np.allclose(
        drawn_probs(page), cpython_probs(lab.DEFAULT_RUN, None, TEXT, [(1, 2)]), atol=1e-5
    )
    assert page.get_attribute("[data-fk='off-2.3']", "aria-pressed") == "true"
    demo = lab.copying_demo(*lab.checkpoint(lab.DEFAULT_RUN, 9000), 0, [(1, 2)])
    assert f"{100 * demo['p_want']:.1f}%" in page.text_content("[data-slot=copying] .mh-out")
    page.keyboard.press("ArrowRight")  # focus stays on the toggles after the redraw
    page.keyboard.press("Enter")
    wait_state(page, pulled_out="2.3,2.4")
    assert np.allclose(
        drawn_probs(page), cpython_probs(lab.DEFAULT_RUN, None, TEXT, [(1, 2), (1, 3)]), atol=1e-5
    )


@pytest.mark.browser
def test_drum_loads_another_checkpoint_lazily_and_says_so(new_page, base_url):
    # a short screen, so that the figure (now near the chapter's top) starts more than a screen
    # below it; the route sees the worker's requests without a service worker
    page = new_page(service_workers="block", viewport={"width": 1280, "height": 500})
    steps = lab.steps(lab.DEFAULT_RUN)
    shown = f"/step_{steps[-1]:05d}."  # the checkpoint the figure shows at first
    fetched, held = [], []

    def hold(route):  # the network stands still for other checkpoints until the test lets it go
        fetched.append(route.request.url)
        if held is None or shown in route.request.url:
            route.continue_()
        else:
            held.append(route)

    page.context.route("**/charmodel/*/step_*.npz", hold)
    open_ready(page, base_url + "one-character.html")
    assert page.locator("#char-model").evaluate("(f) => f.getBoundingClientRect().top") > 2 * 500
    assert fetched == []  # nothing fetched while the figure is more than a screen away
    # once the reader comes near, the checkpoint the figure shows is fetched, first, so that the
    # reader's first tap does not wait for it
    with page.expect_request("**/charmodel/*/step_*.npz") as first:
        page.locator("#char-model").scroll_into_view_if_needed()
    assert shown in first.value.url
    page.focus("#drum-at")
    for _ in range(len(steps) - 1 - steps.index(1000)):
        page.keyboard.press("ArrowLeft")
    # while the checkpoint is on its way, the drum says so, busy for assistive technology too
    drum = page.locator("[data-slot=drum]")
    expect(drum.locator("[data-busy]")).to_be_visible()
    expect(drum).to_have_attribute("aria-busy", "true")
    waiting, held = held, None
    for route in waiting:
        route.continue_()
    wait_state(page, step="1000")
    assert [u for u in fetched if "step_01000" in u]
    expect(drum.locator("[data-busy]")).to_be_hidden()
    assert np.allclose(drawn_probs(page), cpython_probs(lab.DEFAULT_RUN, 1000, TEXT), atol=1e-5)
    assert "step 1,000" in page.text_content("[data-slot=drum] .mh-out")


@pytest.mark.browser
def test_switching_models_says_how_they_differ(chapter):
    page = chapter
    page.click("[data-fk='run-reference']")
    wait_state(page, model="reference")
    assert "never learned to copy" in page.inner_text("#char-model .cm-story")
    assert "Austen's novels only" in page.inner_text("#char-model .cm-story")
    assert np.allclose(drawn_probs(page), cpython_probs("reference", None, TEXT), atol=1e-5)
    end = lab.evaluation()["runs"]["reference"]["checkpoints"][-1]["copying"]
    assert f"{100 * end:.1f}%" in page.text_content("[data-slot=copying]")
    page.click("[data-fk='run-induction']")
    wait_state(page, model="induction")
    assert "103,454 parameters" in page.inner_text("#char-model .cm-size")
    assert np.allclose(drawn_probs(page), cpython_probs("induction", None, TEXT), atol=1e-5)
    open_ready(page, page.url)  # the state comes back from the URL
    page.wait_for_selector("#char-model .cm-size:has-text('103,454 parameters')")


# at the figure's next redraw: whether the browser was drawing the "ablate" section's slot,
# far below the figure, and its markup then
AT_DRAWN = """() => {
  const slot = document.querySelector("[data-slot=ablate]");
  document.getElementById("char-model").addEventListener("mh:drawn", () => {
    const drawing = slot.firstElementChild.checkVisibility({ contentVisibilityAuto: true });
    window.atDrawn = { drawing, html: slot.innerHTML };
  }, { once: true });
}"""
# whether the slot's markup is MARKUP, parsed as the page parses an answer, less the classes
# scrollers.js puts on boxes that scroll
SLOT_IS = """([name, markup]) => {
  const slot = document.querySelector(`[data-slot=${name}]`).cloneNode(true);
  for (const el of slot.querySelectorAll("*")) {
    el.classList.remove("mh-more-left", "mh-more-right", "mh-scrolls", "mh-wide-math");
    if (el.getAttribute("class") === "") el.removeAttribute("class");
  }
  const t = document.createElement("template");
  t.innerHTML = markup;
  return slot.innerHTML === t.innerHTML;
}"""


@pytest.mark.browser
def test_a_slot_far_from_the_view_is_redrawn_after_the_paint_as_python_draws_it(chapter):
    """A section the browser is not drawing (content-visibility, far below) is not redrawn in
    the tap; after the paint (by the time the URL is written) it is Python's markup."""
    page = chapter
    page.locator("#char-model").evaluate("(f) => f.scrollIntoView({ block: 'start' })")
    before = page.locator("[data-slot=ablate]").inner_html()
    page.evaluate(AT_DRAWN)
    page.click("[data-fk='run-induction']")
    wait_state(page, model="induction")
    at = page.evaluate("window.atDrawn")
    assert at == {"drawing": False, "html": before}
    state = page.evaluate("JSON.parse(document.getElementById('char-model').dataset.state)")
    want = fig.render({**state, "model": "induction"}, "char-model")["slots"]["ablate"]
    assert page.evaluate(SLOT_IS, ["ablate", want])
    assert not page.evaluate(SLOT_IS, ["ablate", before])
    # once it is scrolled to, it is the same
    page.locator("[data-slot=ablate]").scroll_into_view_if_needed()
    page.locator("[data-slot=ablate] .cm-toggle").first.wait_for()
    assert page.evaluate(SLOT_IS, ["ablate", want])


@pytest.mark.browser
def test_a_link_with_old_field_names_opens_the_same_view_and_is_rewritten(page, base_url):
    """Links shared before the fields were renamed (sel, off, run) still work; the URL then
    holds only the new names, and junk is dropped."""
    old = "char-model.sel=3&char-model.off=2.3&char-model.run=reference&char-model.junk=%3Cb%3E"
    open_ready(page, f"{base_url}one-character.html?kv-cache.layers=12&{old}")
    wait_state(page, character="3", pulled_out="2.3", model="reference")
    query = parse_qs(urlparse(url_with(page, without=["char-model.sel", "junk"])).query)
    assert sorted(k for k in query if k.startswith("char-model.")) == [
        "char-model.character",
        "char-model.model",
        "char-model.pulled_out",
    ]
    assert query["kv-cache.layers"] == ["12"]  # another figure's fields are its own
    assert page.get_attribute("[data-fk='off-2.3']", "aria-pressed") == "true"
    assert (
        page.get_attribute("[data-slot=numbers] [data-fk='numbers-c3']", "aria-pressed") == "true"
    )
    assert np.allclose(
        drawn_probs(page), cpython_probs("reference", None, TEXT, [(1, 2)]), atol=1e-5
    )


@pytest.mark.browser
def test_kv_cache_gpt3_preset(chapter):
    page = chapter
    page.click("#kv-cache [data-fk='preset-gpt3']")
    page.wait_for_selector("#kv-cache .mh-out:has-text('2,359,296')")
    assert "9.7 GB" in page.inner_text("#kv-cache")
