"""SmolLM2 live in the page, in Chromium with the real weights: the opt-in download of
its two files (the size said before any byte, nothing fetched unasked, progress over both), the
maps drawn for the reader's text equal to CPython's, the files kept beside MiniLM's (which stay),
a second visit restored from the cache with no request for models/ (the server refusing them),
a damaged kept file dropped, said and fetched again, text the model cannot take answered with a
message, and a device without the memory refused before any download. Every server listens on
127.0.0.1; the page loads are few, each doing several things, as the model takes seconds to
start."""

import functools
import re
import threading
from urllib.parse import parse_qsl, quote, urlsplit

import pytest
from conftest import (
    CHROMIUM_ARGS,
    HEADLESS_SHELL,
    QuietServer,
    hold_python,
    open_ready,
    url_with,
)
from test_quality import axe_violations, describe

from sitebuild.fetched import assets
from sitebuild.models import smollm2 as smollm2_recipe
from sitebuild.serving.serve import Handler
from toymodels.heads_that_copy import figure as hc_figure
from toymodels.models.minilm import live as minilm
from toymodels.models.smollm2 import live

pytestmark = pytest.mark.browser

# its few tests each load SmolLM2 in the page, worth several browser tests in the order
# workers take modules (conftest.py), which starts it early rather than last
SCHEDULE_WEIGHT = 40
CHAPTER = "heads-that-copy.html"
FID = "copy-layer"
TEXT = "The quick brown fox jumps over the lazy dog, and the dog sleeps on."


class Server:
    """The built site on 127.0.0.1, whose models/ folder can be refused (`refuse = True`):
    a visit that asks for a model file then gets a 503."""

    def __init__(self, site):
        outer = self

        class Refusing(Handler):
            def do_GET(self):
                if outer.refuse and "/models/" in self.path:
                    self.send_error(503, "the test refuses models/")
                    return
                super().do_GET()

        self.refuse = False
        self.http = QuietServer(("127.0.0.1", 0), functools.partial(Refusing, directory=str(site)))
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.http.server_port}/"

    def close(self):
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture(scope="module")
def server(site):
    s = Server(site)
    yield s
    s.close()


@pytest.fixture(scope="module")
def cpython():
    """The model's files in the download cache, run by CPython (live.use)."""
    folder, _ = smollm2_recipe.files()
    live.use(folder)
    yield folder
    live.use(live.HOME)


def own_url(base, text, **more):
    extra = "".join(f"&{FID}.{k}={quote(v)}" for k, v in more.items())
    return f"{base}{CHAPTER}?{FID}.text=own&{FID}.own={quote(text)}{extra}"


def model_requests(urls):
    return [u for u in urls if "/models/smollm2" in u]


# what the load box's status line and progress bar say, each change recorded (a download on the
# loopback is over before a poll would see it)
RECORD_STATUS = """() => {
  window.__said = [];
  const box = document.querySelector("#copy-layer [data-own-status]");
  const bar = document.querySelector("#copy-layer [data-own-progress]");
  const watch = new MutationObserver(() => {
    window.__said.push([box.textContent, bar.hidden ? null : [bar.value, bar.max]]);
  });
  watch.observe(box, { childList: true, characterData: true, subtree: true });
  watch.observe(bar, { attributes: true });
}"""
# what the reader sees of the figure's load box from the page's start, frame by frame (each change
# recorded): [its status line, whether its load button shows], or null while there is no box
RECORD_FRAMES = """
window.__frames = [];
const look = () => {
  const box = document.querySelector("#copy-layer [data-own-status]");
  const button = document.querySelector("#copy-layer [data-own-load]");
  const now = box ? [box.textContent, Boolean(button?.checkVisibility())] : null;
  if (JSON.stringify(window.__frames.at(-1)) !== JSON.stringify(now)) window.__frames.push(now);
  requestAnimationFrame(look);
};
requestAnimationFrame(look);
"""
RESTORING = "Starting the model from the copy kept in your browser…"
CACHE = """async (course) => {
  const cache = await caches.open("mh-model " + course);
  const out = {};
  for (const request of await cache.keys()) {
    const bytes = await (await cache.match(request)).arrayBuffer();
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    out[request.url.split("/").pop()] =
      [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  }
  return out;
}"""
PUT = """async ([course, url, how]) => {
  const cache = await caches.open("mh-model " + course);
  let bytes = how === "old" ? new TextEncoder().encode("an older version")
    : new Uint8Array(await (await fetch(url)).arrayBuffer());
  if (how === "damaged") { bytes = bytes.slice(); bytes[bytes.length >> 1] ^= 1; }
  await cache.put(url, new Response(bytes));
}"""


def shows_own(page, timeout=240_000):
    """Wait until the figure shows the reader's text run by the model in the page."""
    page.locator(f"#{FID} .hc-own-msg", has_text="as the model reads it").wait_for(timeout=timeout)


def state_of(page):
    """The figure's state, as the page's address holds it."""
    query = dict(parse_qsl(urlsplit(page.url).query))
    return {k.split(".", 1)[1]: v for k, v in query.items() if k.startswith(FID + ".")}


# what the reader sees of the maps: each head's picture (its colour classes' paths, the marked
# row) and line, and the guesses; of the figure in the page, or of HTML (CPython's), parsed inert
DRAWN = """([fid, html]) => {
  const root = html === null ? document.getElementById(fid)
    : new DOMParser().parseFromString(html, "text/html").body;
  return {
    maps: [...root.querySelectorAll("svg.hc-map")].map((svg) =>
      [...svg.querySelectorAll("*")].map((p) =>
        `${p.tagName} ${p.getAttribute("class")} ${p.getAttribute("d")}`)),
    rows: [...root.querySelectorAll(".hc-row")].map((e) => e.textContent),
    guesses: root.querySelector(".hc-guesses")?.textContent ?? null,
  };
}"""


def drawn(page, html=None):
    return page.evaluate(DRAWN, [FID, html])


def cpython_html(state):
    """The figure's own function run by CPython on STATE to the end (every layer)."""
    for _ in range(500):
        r = hc_figure.render(state)
        if not r.get("more"):
            return r["html"]
        state = r["state"]
    raise AssertionError("CPython never finished the text")


# text the model cannot take as it is, and what the reader is told (models/smollm2/live.py)
EDGES = [
    ("", live.EMPTY),
    ("   \t  ", live.SPACES),
    ("word " * 80, "Your text is longer than 64 tokens: the model here reads its first 64"),
    ("a" * 10_050, "Your text is longer than 10,000 characters: only its first 10,000 are read."),
    ("a bell\x07 and an escape\x1b here", "2 control characters were removed"),
]


def test_load_keep_compare_then_a_second_visit_offline(new_page, server, cpython):
    """One reader: the load button says the size and nothing is fetched before the press; the
    download shows its progress over both files; the maps equal CPython's; the files are kept,
    MiniLM's kept file stays and an older SmolLM2 file goes; text the model cannot take gets a
    message, and the page answers the next text. Then a second visit, the server refusing
    models/: the model is restored from the cache without a request, and computes a new text;
    from the page's start its load box says it is starting the kept copy, shows no load button,
    and keeps saying so when the reader presses "Show its heads" meanwhile. "What a head does"
    Figure 3, on that visit, measures its pair once the kept model is in."""
    base = server.base
    page = new_page(viewport={"width": 1200, "height": 900})
    requests = []
    page.context.on("request", lambda r: requests.append(r.url))
    page.goto(base)  # the home page: the origin's caches, no Python started
    minilm_url = base + "models/" + minilm.manifest()["file"]
    page.evaluate(PUT, [base, minilm_url, "real"])
    page.evaluate(PUT, [base, base + "models/smollm2-0123456789abcdef.bin", "old"])
    requests.clear()

    open_ready(page, own_url(base, TEXT, layer="1", token="2"))
    load = page.locator(f"#{FID} [data-own-load]")
    load.wait_for()
    assert live.size_mb() == "97.7 MB" and f"Load SmolLM2 ({live.size_mb()})" in load.inner_text()
    assert not model_requests(requests), "the model was fetched before the reader asked"
    page.evaluate(RECORD_STATUS)
    load.click()
    shows_own(page)
    total = sum(f["bytes"] for f in live.files())
    said = page.evaluate("window.__said")
    downloading = [(text, bar) for text, bar in said if text.startswith("Downloading the model")]
    assert downloading[0][0] == "Downloading the model: 0 MB of 98 MB"
    assert downloading[-1][0] == "Downloading the model: 98 MB of 98 MB"
    assert all(bar[1] == total for _, bar in downloading)
    values = [bar[0] for _, bar in downloading]
    assert values == sorted(values) and values[-1] == total
    assert said[-1][0] == "Starting the model…"
    files = sorted(base + "models/" + f["file"] for f in live.files())
    assert sorted(model_requests(requests)) == files

    # once every layer is in: layer 1's maps, the rows' words and the guesses equal CPython's
    page.locator(f"#{FID} .hc-guesses").wait_for(timeout=240_000)
    state = state_of(page)
    assert state["text"] == "own" and state["own"] == TEXT and state["layer"] == "1"
    assert state["token"] == "2"
    seen, want = drawn(page), drawn(page, cpython_html(state))
    assert len(seen["maps"]) == 9 and seen["maps"] == want["maps"]
    assert seen["rows"] == want["rows"] and seen["rows"][0].startswith("“brown” → ")
    assert seen["guesses"] == want["guesses"] and "five likeliest next tokens" in seen["guesses"]

    # kept: both files, MiniLM's too; the older SmolLM2 file dropped
    kept = page.evaluate(CACHE, base)
    want = {f["file"]: f["sha256"] for f in live.files()}
    want[minilm.manifest()["file"]] = minilm.manifest()["sha256"]
    assert kept == want

    # text the model cannot take: a message, then the next text is answered
    box = page.locator(f"#{FID} input[name=own]")
    for text, message in EDGES:
        box.fill(text)
        box.press("Enter")
        page.locator(f"#{FID} .hc-own-msg", has_text=message).wait_for(timeout=60_000)
    box.fill("After all that, a plain sentence.")
    box.press("Enter")
    page.locator(f"#{FID} .hc-own-msg", has_text="as the model reads it: 8 tokens").wait_for()

    # a second visit, models/ refused: restored, no request for the model
    server.refuse = True
    try:
        requests.clear()
        again = page.context.new_page()
        again.add_init_script(RECORD_FRAMES)
        other = "Offline, the model still reads this."
        again.goto(own_url(base, other))
        # while the kept copy starts, the reader presses "Show its heads": the box still says it
        again.wait_for_function(
            "() => document.querySelector('#copy-layer [data-own-status]')?.textContent"
        )
        again.locator(f"#{FID} [data-fk=own-show]").click()
        shows_own(again)
        frames = [f for f in again.evaluate("window.__frames") if f is not None]
        assert frames and all(f == [RESTORING, False] for f in frames), frames
        assert again.locator(f"#{FID} [data-own-load]").count() == 0
        n = len(live.encode(other)[0])
        assert f"as the model reads it: {n} tokens" in again.locator(f"#{FID} .hc-own").inner_text()
        assert not [u for u in requests if "/models/" in u]

        # "What a head does", Figure 3, on the same return visit: the kept model starts and the
        # figure measures the pair it opens with, its load box gone (it said it was starting)
        what = page.context.new_page()
        open_ready(what, base + WHAT + "#own")
        what.locator("#what-own table.wh-map").first.wait_for(timeout=120_000)
        assert what.locator("#what-own [data-own-status]").count() == 0
        assert not [u for u in requests if "/models/" in u]
    finally:
        server.refuse = False


def test_a_damaged_kept_file_is_dropped_said_and_fetched_again(new_page, server):
    """The weight file kept with one byte changed: the visit does not use it, the load button
    says the kept copy was damaged while it fetches that file again (not the tokenizer, whose
    kept copy is whole), and the cache then holds the right bytes."""
    base = server.base
    page = new_page(viewport={"width": 1200, "height": 900})
    warnings, requests = [], []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    page.context.on("request", lambda r: requests.append(r.url))
    weights, tok = live.files()
    page.goto(base)  # the home page: the origin's caches, no Python started
    page.evaluate(PUT, [base, base + "models/" + weights["file"], "damaged"])
    page.evaluate(PUT, [base, base + "models/" + tok["file"], "real"])
    requests.clear()
    open_ready(page, own_url(base, TEXT))
    load = page.locator(f"#{FID} [data-own-load]")
    load.wait_for()
    dropped = f"the kept copy of {weights['file']} is not the file this site was built with"
    if not [w for w in warnings if dropped in w]:  # the kept copies are read as the box appears
        page.wait_for_event("console", lambda m: dropped in m.text, timeout=60_000)
    page.evaluate(RECORD_STATUS)
    load.click()
    shows_own(page)
    said = [text for text, _ in page.evaluate("window.__said")]
    again = "The kept copy of the model was damaged; downloading it again"
    assert f"{again}: 0 MB of 97 MB" in said and f"{again}: 97 MB of 97 MB" in said
    assert model_requests(requests) == [base + "models/" + weights["file"]]
    assert page.evaluate(CACHE, base) == {f["file"]: f["sha256"] for f in live.files()}


MINILM = "real-heads.html?real-heads.sentence=own&real-heads.own=My%20own%20words."
SMOLLM2 = "heads-that-copy.html?copy-layer.text=own&copy-layer.own=My%20own%20words."


@pytest.mark.parametrize(
    "fid,how",
    [("copy-layer", "wasm-limit"), ("copy-layer", "device-memory"), ("real-heads", "wasm-limit")],
)
def test_a_browser_without_the_memory_is_told_before_any_download(browser, watch, server, fid, how):
    """Where the worker's memory cannot grow to what the model needs (Chromium's WebAssembly
    memory held under it: V8's --wasm-max-mem-pages), or the device says it has too little
    (navigator.deviceMemory), the load button says so and nothing is fetched. SmolLM2's form
    asks for 660 MB (toymodels/models/smollm2/live.py MEMORY_MB), MiniLM's for 300
    (toymodels/models/minilm/live.py)."""
    assert (live.MEMORY_MB, minilm.MEMORY_MB) == (660, 300)
    mb, url = (660, SMOLLM2) if fid == "copy-layer" else (300, MINILM)
    args = CHROMIUM_ARGS + (["--js-flags=--wasm-max-mem-pages=4000"] if how == "wasm-limit" else [])
    small = browser.browser_type.launch(executable_path=HEADLESS_SHELL, args=args)
    try:
        context = small.new_context()
        watch.attach(context)
        if how == "device-memory":
            context.add_init_script(
                "Object.defineProperty(Navigator.prototype, 'deviceMemory', { get: () => 0.25 })"
            )
        page = context.new_page()
        requests = []
        context.on("request", lambda r: requests.append(r.url))
        open_ready(page, server.base + url)
        load = page.locator(f"#{fid} [data-own-load]")
        load.click()
        status = page.locator(f"#{fid} [data-own-status]")
        needs = f"This model needs about {mb} MB of memory for its computations"
        then = "nothing was downloaded; the curated texts still work."
        if how == "wasm-limit":
            said = f"{needs}, more than this browser gives a page here (phones often give less): "
        else:
            said = f"{needs}, and this device has about 256 MB in all: "
        page.wait_for_function(
            "fid => document.querySelector(`#${fid} [data-own-status]`).textContent", arg=fid
        )
        assert status.inner_text() == said + then
        assert load.is_disabled()
        assert not [u for u in requests if "/models/" in u]
    finally:
        small.close()


WHAT = "what-a-head-does.html"


def own_pair_cells(page, key):
    """{'L24H4': what the cell says} of one map of Figure 3 ("what-own") in the page."""
    return page.evaluate(
        """key => Object.fromEntries([...document.querySelectorAll(
             `#what-own td[data-fk^="${key}-"]`)].map((td) =>
             [td.dataset.value, td.getAttribute("aria-label").split(": ")[1]]))""",
        key,
    )


def same_shown(said, want):
    """Whether two cells say the same number to its last shown digit, give or take one step of
    it: the page's numpy (no BLAS) rounds its float32 sums otherwise than CPython's, so a value
    on a rounding boundary may show a step apart ('attention 3.0%' and 'attention 2.9%')."""
    words = [w.rsplit(" ", 1) for w in (said, want)]
    if words[0][0] != words[1][0]:
        return False
    texts = [w[1].replace("−", "-").rstrip("%") for w in words]
    step = 10.0 ** -len(texts[1].partition(".")[2])
    return abs(float(texts[0]) - float(texts[1])) <= step * 1.001


def test_the_readers_own_pair_measured_tapped_and_patched(new_page, server, cpython):
    """ "What a head does", Figure 3: the pair it opens with, the model loaded from its own
    button; both maps equal CPython's; a tap on a token measures there, a tap on a head opens
    it, its Patch button patches it, and a typed handful of heads is patched together from the
    keyboard, each row with its share and the time its forward took, as CPython computes them
    (the time aside); axe-core finds nothing serious in the figure, light or dark."""
    from toymodels.what_a_head_does import own

    page = new_page(viewport={"width": 1200, "height": 900})
    release = hold_python(page)  # the reader presses Load before Python is ready
    page.goto(server.base + WHAT + "#own")
    page.wait_for_selector("html.js")
    fig = page.locator("#what-own")
    fig.locator("[data-own-load]").click()
    status = fig.locator("[data-own-status]")
    assert status.inner_text() == (
        "Python is still starting: the download begins as soon as it is ready…"
    )
    release()
    fig.locator("table.wh-map").first.wait_for(timeout=240_000)

    def same_as_cpython():
        state = {k.split(".", 1)[1]: v for k, v in parse_qsl(urlsplit(page.url).query)}
        want = own.render(state)
        while want.get("more"):
            want = own.render(want["state"])
        for key in ("att", "dla"):
            seen = own_pair_cells(page, key)
            parsed = page.evaluate(
                """([html, key]) => Object.fromEntries([...new DOMParser()
                     .parseFromString(html, "text/html").querySelectorAll(
                     `td[data-fk^="${key}-"]`)].map((td) =>
                     [td.dataset.value, td.getAttribute("aria-label").split(": ")[1]]))""",
                [want["html"], key],
            )
            assert len(seen) == 270 and seen.keys() == parsed.keys()
            for head, said in seen.items():
                assert same_shown(said, parsed[head]), (head, said, parsed[head])
        return want

    same_as_cpython()
    assert "Your pair, as the model reads it: 12 tokens each." in fig.inner_text()

    fig.locator('[data-key="token"][data-value="8"]').click()  # " passed", after the change
    url_with(page, "what-own.token=8")
    same_as_cpython()
    fig.locator('td[data-fk="dla-24-4"]').click()
    url_with(page, "what-own.head=L24H4")
    fig.locator("section.hc-opened h3", has_text="L24\u00a0H4").wait_for()
    fig.locator('[data-key="patch"][data-value="L24H4"]').click()
    rows = fig.locator("table.wh-patches tbody tr")
    rows.first.wait_for(timeout=60_000)
    url_with(page, "what-own.patch=L24H4")
    want = same_as_cpython()
    first = rows.first.locator("th, td").all_inner_texts()
    assert first[0] == "L24\u00a0H4" and re.fullmatch(r"\d+ ms, layers 24–30", first[4]), first
    assert first[1] == "clean into corrupted, at every position"
    assert f"<td>{first[2]}</td><td>{first[3]}</td>" in want["html"]
    # the other way: the same head's corrupted output put into the clean run
    fig.locator('[data-key="way"][data-value="noise"]').click()
    page.wait_for_function(
        "() => document.querySelectorAll('#what-own .wh-patches tbody tr').length == 2"
    )
    url_with(page, "what-own.way=noise")
    noised = rows.first.locator("th, td").all_inner_texts()
    assert noised[:2] == ["L24\u00a0H4", "corrupted into clean, at every position"], noised
    want = same_as_cpython()
    assert noised[3].startswith("loses ")
    assert f"<td>{noised[2]}</td><td>{noised[3]}</td>" in want["html"]
    fig.locator('[data-key="way"][data-value="denoise"]').click()
    url_with(page, "what-own.patch=L24H4", without=("what-own.way=",))  # the default again

    box = fig.locator("input[name=patch][type=text]")
    box.fill("l24h4 L20")
    box.press("Enter")
    page.wait_for_function(
        "() => document.querySelectorAll('#what-own .wh-patches tbody tr').length == 3"
    )
    url_with(page, "what-own.patch=L20")
    latest = rows.first.locator("th, td").all_inner_texts()
    assert latest[0] == "layer 20 (all 9 heads) and L24\u00a0H4", latest
    assert re.fullmatch(r"\d+ ms, layers 20–30", latest[4]), latest
    want = same_as_cpython()
    assert f"<td>{latest[2]}</td><td>{latest[3]}</td>" in want["html"]
    assert box.input_value() == "L20 L24H4"
    # axe-core finds nothing serious in the measured figure (maps, opened head, patches)
    page.evaluate(assets.axe_script())
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        found = axe_violations(page)
        assert not found, describe(found)
