"""Chapter "One character at a time": char_lab's numbers against independent sums, the figure's state,
and the page in Chromium against CPython (probabilities, attention, ablation, the drum, the models)."""
import math
import re
from html import unescape
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from conftest import open_ready
from toymodels import char_figure as fig
from toymodels import char_lab as lab
from toymodels import char_values, charmodel as cm
from toymodels.training import evaluate, train

TEXT = "the queen. the qu"


def cpython_probs(run, step, text, ablate=()):
    params, cfg, _ = cm.load(run, step)
    logits, _ = cm.forward(params, cfg, cm.encode(text), ablate=ablate)
    return cm.softmax(logits[-1].astype(np.float64))


def drawn_probs(html_or_page):
    """{character: p} from the bars, in a render's html or on a page."""
    if isinstance(html_or_page, str):
        return {unescape(ch): float(p) for ch, p in re.findall(r'data-ch="([^"]*)" data-p="([^"]+)"', html_or_page)}
    pairs = html_or_page.eval_on_selector_all("#char-model rect.bar", "els => els.map(e => [e.dataset.ch, e.dataset.p])")
    return {ch: float(p) for ch, p in pairs}


def as_vector(probs):
    return np.array([probs[c] for c in cm.VOCAB])


# ---------------------------------------------------------------- the numbers

def test_scores_weights_and_head_output_by_hand():
    run, step = lab.DEFAULT_RUN, lab.steps(lab.DEFAULT_RUN)[-1]
    params, cfg = lab.checkpoint(run, step)
    t, head, K, D = 12, 1, cfg["d_head"], cfg["d_model"]
    r = lab.look(params, cfg, TEXT, t, 0, head)
    # an independent layer 1: sinusoids written out, LayerNorm by hand, this head's columns only
    idx = [cm.VOCAB.index(c) for c in TEXT[:t + 1]]
    pe = np.array([[math.sin(p / 10000 ** (i / D)) if i % 2 == 0 else math.cos(p / 10000 ** ((i - 1) / D))
                    for i in range(D)] for p in range(t + 1)])
    x = params["wte"][idx].astype(np.float64) + pe
    h = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * params["h0.ln1.g"] + params["h0.ln1.b"]
    cols = slice(head * K, (head + 1) * K)
    q, k, v = h[t] @ params["h0.wq"][:, cols], h @ params["h0.wk"][:, cols], h @ params["h0.wv"][:, cols]
    scores = k @ q / math.sqrt(K)
    w = np.exp(scores - scores.max())
    w /= w.sum()
    assert np.allclose(r["pos"], pe[t], atol=1e-6) and np.allclose(r["x0"], x[t], atol=1e-5)
    assert np.allclose(r["scores"], scores, atol=1e-3)
    assert np.allclose(r["weights"], w, atol=1e-5) and abs(r["weights"].sum() - 1) < 1e-6
    assert np.allclose(r["head_out"], (w @ v) @ params["h0.wo"][cols], atol=1e-4)
    # the stream is the sum of its parts, and the read-out of that sum is the prediction
    assert np.allclose(sum(p for _, p in lab.look(params, cfg, TEXT, len(TEXT) - 1, 1, 0)["parts"]),
                       cm.forward(params, cfg, cm.encode(TEXT), keep=True)[1]["resid_final"][-1], atol=1e-4)


def test_ablation_and_checkpoints_in_the_figure_match_the_model():
    html = fig.render({"text": TEXT, "off": "2.3,1.1"})["html"]
    assert np.allclose(as_vector(drawn_probs(html)), cpython_probs(lab.DEFAULT_RUN, None, TEXT, [(1, 2), (0, 0)]), atol=1e-7)
    r = fig.render({"text": TEXT, "at": "9"})                     # the drum's tenth checkpoint
    step = lab.steps(lab.DEFAULT_RUN)[9]
    assert r["state"]["step"] == str(step) and r["state"]["at"] == ""
    assert np.allclose(as_vector(drawn_probs(r["html"])), cpython_probs(lab.DEFAULT_RUN, step, TEXT), atol=1e-7)
    assert f"Training step <strong>{step:,}</strong>" in r["slots"]["drum"]


def test_copying_demo_and_nonsense_pairs():
    params, cfg = lab.checkpoint(lab.DEFAULT_RUN, lab.steps(lab.DEFAULT_RUN)[-1])
    d = lab.copying_demo(params, cfg, 0)
    assert (d["text"], d["want"], d["text"][d["source"]]) == ("qzxv kplw qzxv kp", "l", "l")
    assert math.isclose(d["p_want"], cpython_probs(lab.DEFAULT_RUN, None, d["text"])[cm.STOI["l"]], rel_tol=1e-6)
    att = cm.forward(params, cfg, cm.encode(d["text"]), keep=True)[1]["h1.att"]
    assert np.allclose(d["to_source"], att[:, -1, 7])             # from the second "p" to the "l" after the first
    for seed in range(1, 40):
        text, want = lab.nonsense_pair(seed)
        pair = text[:text.index(" ", text.index(" ") + 1) + 1]
        letters = pair.replace(" ", "")
        assert len(set(letters)) == len(letters) and text.startswith(pair) and pair.startswith(text[len(pair):])
        assert pair[len(text) - len(pair)] == want and want.isalpha()


def test_head_labels_follow_the_evaluation():
    rec = {"previous": 0.45, "two_back": 0.2, "itself": 0.3, "spaces": 0.5}
    assert lab.head_label(rec, 0.1)[0] == "looks at spaces"
    assert lab.head_label(dict(rec, spaces=0.2), 0.1)[0] == "previous character"
    assert lab.head_label(dict(rec, spaces=0.2), 0.6)[0] == "copies what came next"
    assert lab.head_label({"previous": 0.1, "two_back": 0.1, "itself": 0.1, "spaces": 0.1}, 0)[0] == "spread wide"
    names = {(l, h): n for l, h, n, _ in lab.labels(lab.DEFAULT_RUN, 9000)}
    ind = lab.measured(lab.DEFAULT_RUN, 9000)["induction"]
    assert {k for k, n in names.items() if n == "copies what came next"} == \
        {(l + 1, h + 1) for l in range(2) for h in range(4) if ind[l][h] >= lab.INDUCTION_AT}


def test_state_is_kept_as_typed_and_clamped():
    r = fig.render({"text": "The Queen!", "sel": "99", "lh": "7.7", "off": "2.3,9.9,x", "run": "nope", "step": "1234"})
    s = r["state"]
    assert s["text"] == "The Queen!" and s["run"] == lab.DEFAULT_RUN and s["off"] == "2.3" and s["lh"] == "" and s["sel"] == ""
    assert s["step"] == str(lab.nearest_step(lab.DEFAULT_RUN, 1234)) and r["error"] is None
    assert "“T”, “Q”, “!”" in r["html"] and 'value="The Queen!"' in r["html"]
    assert np.allclose(as_vector(drawn_probs(r["html"])),
                       cpython_probs(lab.DEFAULT_RUN, int(s["step"]), "he ueen", [(1, 2)]), atol=1e-7)
    assert "at least one character" in fig.render({"text": "ÉÉ"})["error"]
    assert fig.render({"text": "<b>x</b>"})["html"].count("<b>") == 0   # reader text is escaped
    wrote = fig.render({"text": TEXT, "write": "1"})["state"]
    assert wrote["text"].startswith(TEXT) and len(wrote["text"]) == len(TEXT) + fig.WRITE_ON and wrote["write"] == ""
    assert wrote == fig.render({"text": TEXT, "write": "1"})["state"]   # the same text writes on the same way


def test_run_stories_and_prose_numbers_come_from_the_evaluation():
    ev = lab.evaluation()["runs"]
    assert "never learned to copy" in fig.run_story("reference")
    assert f"{100 * ev['reference']['checkpoints'][-1]['copying']:.1f}%" in fig.run_story("reference")
    assert "repeated nonsense" in fig.run_story(lab.DEFAULT_RUN) and "learned to copy suddenly" in fig.run_story(lab.DEFAULT_RUN)
    assert lab.MAX_CHARS == train.parser().parse_args([]).ctx
    x, periods = evaluate.copy_set()
    space = sum(int((x[i, p + 1:] == cm.STOI[" "]).sum()) for i, p in enumerate(periods)) / sum(63 - int(p) for p in periods)
    assert char_values.spaces_only() == f"{100 * space:.1f}%"
    a, b = lab.when_copying_appears(lab.DEFAULT_RUN)
    assert a["copying"] < 0.25 <= 0.75 <= b["copying"] and a["step"] < b["step"]
    assert lab.when_copying_appears("reference") is None


def test_page_is_complete_without_javascript(site):
    html = (site / "one-character.html").read_text(encoding="utf-8")
    assert np.allclose(as_vector(drawn_probs(html)), cpython_probs(lab.DEFAULT_RUN, None, TEXT), atol=1e-7)
    for slot in ("numbers", "scores", "weights", "residual", "anatomy", "heads", "copying", "drum", "ablate"):
        assert f'data-slot="{slot}"><' in html and f'data-slot="{slot}"></div>' not in html
    assert html.count('class="mh-svg mh-mini"') == 8 and "2 layers × 4 heads · 32 numbers per character · 27,166 parameters" in html


# ---------------------------------------------------------------- in the browser

def url_state(page):
    return {k.split(".", 1)[1]: v[0] for k, v in parse_qs(urlparse(page.url).query).items() if k.startswith("char-model.")}


def wait_state(page, **want):
    page.wait_for_url(lambda u: all(parse_qs(urlparse(u).query).get(f"char-model.{k}") == [v] for k, v in want.items()),
                      timeout=20_000)


@pytest.fixture
def chapter(page, base_url):
    open_ready(page, base_url + "one-character.html")
    yield page
    page.watch.clean()


def test_typing_matches_cpython_and_loses_nothing(chapter):
    page = chapter
    page.click("#char-model-text")
    page.keyboard.press("End")
    page.keyboard.type("een. the Queen!", delay=15)
    text = TEXT + "een. the Queen!"
    wait_state(page, text=text)
    assert page.input_value("#char-model-text") == text             # every keystroke kept, caret at the end
    assert "“Q”, “!”" in page.inner_text("#char-model .cm-rejected")
    assert page.inner_text("#char-model [data-fig-status]") == ""
    known = text.replace("Q", "").replace("!", "")
    assert np.allclose(as_vector(drawn_probs(page)), cpython_probs(lab.DEFAULT_RUN, None, known), atol=1e-5)
    # one attention row: the weights of the chosen head for the selected character
    page.click("[data-slot=scores] [data-fk='scores-h1.2']")
    wait_state(page, lh="1.2")
    row = page.eval_on_selector_all("[data-slot=weights] td[data-w]", "els => els.map(e => +e.dataset.w)")
    params, cfg, _ = cm.load(lab.DEFAULT_RUN)
    att = cm.forward(params, cfg, cm.encode(known), keep=True)[1]["h0.att"][1, -1]
    assert np.allclose(row, att, atol=1e-5) and len(row) == len(known)


def test_ablation_in_the_page_matches_python(chapter):
    page = chapter
    page.click("[data-fk='off-2.3']")
    wait_state(page, off="2.3")
    assert np.allclose(as_vector(drawn_probs(page)), cpython_probs(lab.DEFAULT_RUN, None, TEXT, [(1, 2)]), atol=1e-5)
    assert page.get_attribute("[data-fk='off-2.3']", "aria-pressed") == "false"
    demo = lab.copying_demo(*lab.checkpoint(lab.DEFAULT_RUN, 9000), 0, [(1, 2)])
    assert f"{100 * demo['p_want']:.1f}%" in page.text_content("[data-slot=copying] .mh-out")
    page.keyboard.press("ArrowRight")                                 # focus stays on the toggles after the redraw
    page.keyboard.press("Enter")
    wait_state(page, off="2.3,2.4")
    assert np.allclose(as_vector(drawn_probs(page)), cpython_probs(lab.DEFAULT_RUN, None, TEXT, [(1, 2), (1, 3)]), atol=1e-5)


def test_drum_loads_another_checkpoint(chapter):
    page = chapter
    steps = lab.steps(lab.DEFAULT_RUN)
    page.focus("#drum-at")
    for _ in range(len(steps) - 1 - steps.index(1000)):
        page.keyboard.press("ArrowLeft")
    wait_state(page, step="1000")
    assert np.allclose(as_vector(drawn_probs(page)), cpython_probs(lab.DEFAULT_RUN, 1000, TEXT), atol=1e-5)
    assert "step 1,000" in page.text_content("[data-slot=drum] .mh-out")
    assert page.locator("[data-busy]").is_hidden()


def test_switching_models_says_how_they_differ(chapter):
    page = chapter
    page.click("[data-fk='run-reference']")
    wait_state(page, run="reference")
    assert "never learned to copy" in page.inner_text("#char-model .cm-story")
    assert "Austen's novels only" in page.inner_text("#char-model .cm-story")
    assert np.allclose(as_vector(drawn_probs(page)), cpython_probs("reference", None, TEXT), atol=1e-5)
    end = lab.evaluation()["runs"]["reference"]["checkpoints"][-1]["copying"]
    assert f"{100 * end:.1f}%" in page.text_content("[data-slot=copying]")
    page.click("[data-fk='run-induction']")
    wait_state(page, run="induction")
    assert "103,454 parameters" in page.inner_text("#char-model .cm-size")
    assert np.allclose(as_vector(drawn_probs(page)), cpython_probs("induction", None, TEXT), atol=1e-5)
    page.reload()                                                      # the state comes back from the URL
    page.wait_for_selector("html.py-ready", timeout=90_000)
    page.wait_for_selector("#char-model .cm-size:has-text('103,454 parameters')")


def test_kv_cache_gpt3_preset(chapter):
    page = chapter
    page.click("#kv-cache [data-fk='preset-gpt3']")
    page.wait_for_selector("#kv-cache .mh-out:has-text('2,359,296')")
    assert "9.7 GB" in page.inner_text("#kv-cache")
