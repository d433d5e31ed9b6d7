"""First taps before Python (sitebuild/pipeline/prerender.py, static/prerendered.js): the answers
the build ships for the states one tap from each figure's default view are exactly what Python
returns for them (in CPython for every one, in the browser's Pyodide for a sample), and in
Chromium, with Pyodide's files held back, a tap paints the shipped answer; once Python is
ready, until Python's first answer for the figure is in, too; then Python takes over."""

import gzip
import importlib
import json
import re
from html import unescape

import pytest
from conftest import url_with, with_own_python

from sitebuild.pipeline import prerender

CHAPTER = "many-heads.html"
RUN_IN_PYODIDE = with_own_python("""async ([calls]) => {
  const out = [];
  for (const [fn, state, fid] of calls) out.push(JSON.stringify(await py.call(fn, [state, fid])));
  return out;
}""")
# the figure's drawn body, and the same markup parsed as the page parses Python's answers
BODY_IS = """([fid, html]) => {
  const t = document.createElement("template");
  t.innerHTML = html;
  return document.getElementById(fid).querySelector("[data-body]").innerHTML === t.innerHTML;
}"""


def shipped(site, name):
    """{fid: {key: answer}} of a built page, and {fid: its figure's model}."""
    html = (site / name).read_text(encoding="utf-8")
    answers = {}
    for fid, path in answer_files(html).items():
        held = json.loads((site / path).read_text(encoding="utf-8"))
        assert list(held) == [fid], path  # a file for each figure
        answers.update(held)
    models = dict(re.findall(r'<figure class="mh-figure" id="([^"]+)" data-figure="([^"]+)"', html))
    return answers, models


def answer_files(html):
    """{figure id: its answers' file} as a built page's <meta name="mh-prerendered"> says."""
    meta = re.search(r"<meta name=\"mh-prerendered\" content='([^']+)'>", html)
    return json.loads(unescape(meta[1])) if meta else {}


def render_in_cpython(model, state, fid):
    name, fn = model.split(":")
    return getattr(importlib.import_module(name), fn)(state, fid)


def chapters(site):
    return sorted(p.name for p in site.glob("*.html") if "data-figure=" in p.read_text())


def test_every_live_figure_ships_its_neighbours_within_budget(site):
    for name in chapters(site):
        answers, models = shipped(site, name)
        assert set(answers) <= set(models), name
        for fid, states in answers.items():
            text = b"".join(json.dumps(a, separators=(",", ":")).encode() for a in states.values())
            assert len(text) <= prerender.RAW_BUDGET, (name, fid, len(text))
            # compressed as one stream, as the build measures it (a little more for the keys)
            assert len(gzip.compress(text)) <= prerender.BUDGET * 1.05, (name, fid)
    answers, models = shipped(site, CHAPTER)
    assert len(answers[next(iter(models))]) > 2  # the default and the words one tap away


def test_shipped_answers_equal_cpython_render_byte_for_byte(site):
    n = 0
    for name in chapters(site):
        answers, models = shipped(site, name)
        for fid, states in answers.items():
            for key, answer in states.items():
                state = dict(json.loads(key))
                got = json.loads(json.dumps(render_in_cpython(models[fid], state, fid)))
                assert got == answer, (name, fid, key)
                assert got["html"] == answer["html"]
                n += 1
    assert n > 20


# The character model's numbers differ between CPython's numpy and Pyodide's in their last
# digits (a probability of 0.0065043302 against 0.0065043059): its shipped answers carry the
# same markup with numbers equal to 1e-4, and Python's own answers take over once Python has
# answered for the figure.
NUMERIC_ONLY = {"char-model"}
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def same_but_digits(a, b):
    """A and B differ at most in the digits of their numbers, each within 1e-4 relative."""
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    pairs = zip(NUMBER.findall(a), NUMBER.findall(b), strict=True)
    return all(abs(float(x) - float(y)) <= 1e-4 * max(abs(float(x)), 1e-12) for x, y in pairs)


def test_shipped_answers_equal_pyodide_render_for_a_sample(site, base_url, page):
    calls, expected = [], []
    for name in chapters(site):
        answers, models = shipped(site, name)
        for fid, states in answers.items():
            for key in list(states)[:3]:  # the default and two neighbours of each figure
                calls.append([models[fid], dict(json.loads(key)), fid])
                expected.append(states[key])
    page.goto(base_url)  # the home page starts no Python of its own
    got = page.evaluate(RUN_IN_PYODIDE, [calls])
    exact = 0
    for call, g, e in zip(calls, got, expected, strict=True):
        g = json.loads(g)
        if g == e:
            exact += 1
            continue
        assert call[2] in NUMERIC_ONLY, call
        assert same_but_digits(json.dumps(g, sort_keys=True), json.dumps(e, sort_keys=True)), call
    assert exact >= len(calls) - 3


def first_tap(site):
    """The chapter's first live figure, its first control and the answer shipped for it."""
    answers, models = shipped(site, CHAPTER)
    fid = next(iter(models))
    html = (site / CHAPTER).read_text(encoding="utf-8")
    state = json.loads(
        re.search(rf'id="{fid}" data-figure="[^"]+" data-state="([^"]+)"', html)[1].replace(
            "&#34;", '"'
        )
    )
    (k, v), *_ = [
        (k, v)
        for k, v in prerender.controls(answers[fid][prerender.key(state)]["html"])
        if {**state, k: v} != state
    ]
    return fid, k, v, answers[fid][prerender.key({**state, k: v})]


@pytest.mark.parametrize("release", [False, True])
def test_a_tap_before_python_paints_the_shipped_answer(site, base_url, page, release):
    fid, k, v, answer = first_tap(site)
    held, holding = [], [True]
    # Pyodide's files are held back, so Python cannot start until the test lets them go
    page.route(
        re.compile(r".*/pyodide/.*"),
        lambda route: held.append(route) if holding[0] else route.continue_(),
    )
    page.goto(base_url + CHAPTER)
    button = page.locator(f'#{fid} [data-body] [data-key="{k}"][data-value="{v}"]').first
    button.click()  # visible and usable from the first paint
    page.wait_for_function(BODY_IS, arg=[fid, answer["html"]])
    assert not page.evaluate("document.documentElement.classList.contains('py-ready')")
    if answer["state"][k] != "":
        url_with(page, f"{fid}.{k}=")
    if not release:
        page.unroute_all(behavior="ignoreErrors")  # the held requests die with the page
        return
    holding[0] = False
    for route in held:
        route.continue_()
    page.wait_for_selector("html.py-ready", timeout=90_000)
    # Python redrew the state the reader moved to: the same answer
    page.wait_for_function(BODY_IS, arg=[fid, answer["html"]])
    # and answers the next tap itself, as before
    other = page.locator(f"#{fid} [data-body] [data-key]:not([data-value='{v}'])").first
    page.evaluate(
        """(fid) => document.getElementById(fid)
            .addEventListener("mh:drawn", () => { window.__drawn = true; }, { once: true })""",
        fid,
    )
    other.click()
    page.wait_for_function("() => window.__drawn === true")
    assert not page.evaluate(BODY_IS, [fid, answer["html"]])


# Python's answers to the page's calls are held back while window.holding is true, until
# window.letGo() hands them on; window.sentStates lists the states the page sent, window.held the
# answers waiting
HOLD = """
window.holding = true;
window.sentStates = [];
window.held = [];
const calls = new Set();
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function (message, ...rest) {
  if (message && message.type === "call") {
    calls.add(message.id);
    window.sentStates.push(message.args[0]);
  }
  return post.call(this, message, ...rest);
};
const handler = Object.getOwnPropertyDescriptor(Worker.prototype, "onmessage");
Object.defineProperty(Worker.prototype, "onmessage", {
  get() { return handler.get.call(this); },
  set(on) {
    window.letGo = () => window.held.splice(0).forEach((e) => on.call(this, e));
    handler.set.call(this, (event) => {
      if (window.holding && calls.has(event.data?.id)) window.held.push(event);
      else on.call(this, event);
    });
  },
});
"""


@pytest.mark.browser
def test_until_python_has_answered_for_a_figure_a_tap_paints_the_shipped_answer(
    site, base_url, page
):
    fid, k, v, answer = first_tap(site)
    answers, _ = shipped(site, CHAPTER)
    files = answer_files((site / CHAPTER).read_text(encoding="utf-8"))
    page.add_init_script(HOLD)
    with page.expect_response(f"**/{files[fid]}"):
        page.goto(base_url + CHAPTER)
    page.wait_for_selector(f"html.py-ready #{fid}.is-live", timeout=90_000)
    # Python has been asked for the state shown (the figure is in view); its answer is held back
    page.wait_for_function("() => window.held.length === 1")
    page.locator(f'#{fid} [data-body] [data-key="{k}"][data-value="{v}"]').first.click()
    page.wait_for_function(BODY_IS, arg=[fid, answer["html"]])
    url_with(page, f"{fid}.{k}={v}")
    # Python's first answer for the figure let go (the next ones are held back again): from then
    # on a tap on another shipped state waits for Python
    page.evaluate("""async () => {
        window.letGo();
        window.holding = true;
        await new Promise((r) => setTimeout(r)); // its answer taken in
    }""")
    sent = page.evaluate("window.sentStates")
    default = next(iter(answers[fid].values()))["state"]
    other = next(
        a
        for a in answers[fid].values()
        if a["state"] == {**answer["state"], k: a["state"][k]}
        and a["state"][k] not in (v, default[k])
        and a["state"] not in sent
    )
    w = other["state"][k]
    page.locator(f'#{fid} [data-body] [data-key="{k}"][data-value="{w}"]').first.click()
    page.wait_for_function(
        "([k, w]) => window.sentStates.some((s) => s[k] === w)", arg=[k, w]
    )  # asked at the tap
    assert not page.evaluate(BODY_IS, [fid, other["html"]])
    page.evaluate("window.holding = false; window.letGo()")
    page.wait_for_function(BODY_IS, arg=[fid, other["html"]])
