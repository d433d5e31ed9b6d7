"""`make bench`: what readers wait for, measured in Debian's Chromium on a freshly built site.

`python bench/run.py [PART ...] [--chapter PAGE ...] [--site SITE]` builds the site (or serves
SITE), serves it on 127.0.0.1 and measures each PART (all by default):

- chapters: each chapter's cold loads, taps and first taps (`--chapter many-heads.html` for
  some of them). Each start-up figure is the median of COLD_LOADS cold loads (a new browser
  profile each time) of the page opened at its first live figure; the same start-up is measured
  with Pyodide on the main thread (pages/main-thread-client.js served in place of
  static/pyclient.js) to show what the worker buys. Taps are timed from one script three ways:
  back to back, with Chromium's CPU slowed THROTTLE times (the DevTools protocol's
  Emulation.setCPUThrottlingRate, a mid-range phone), and at a reader's pace. The first tap
  before Python, answered from the build's pre-rendered states (sitebuild/pipeline/prerender.py), is
  timed from the first paint.
- pyodide: the character model inside Pyodide (in_pyodide/charmodel.py) and on its page.
- ratio: the same work (in_pyodide/ratio.py) in CPython, in Pyodide under Node and in Chromium.
- dense: the dense maps (bench/allheads.py).
- live: the reader's own sentence in all-MiniLM-L6-v2 ("Real heads").
- smollm2: the reader's own text in SmolLM2-135M-Instruct ("Heads that copy"): the download,
  the model ready from the page's cache, the forward in the worker, its memory.
- whathead: the reader's own pair in SmolLM2 ("What a head does"): the maps after the load,
  taps on tokens and patches, the figure's steps in the worker.
- ownfile: a reader's own GGUF file (SmolLM2's Q4_1 file) from the file to its first maps, and
  the card of a refused file, in CPython and in Pyodide; then that file and a synthetic one of
  SmolLM2-360M's shapes (Q4_K_M's block types) opened as the page opens a reader's file, with
  the worker's memory.
- why: "Why a head looks there"'s Figure 3 in SmolLM2: one head's split and a knockout, and the
  longest piece of the forward computed in pieces, in CPython and in Pyodide.
- train: Train it yourself, in Pyodide and CPython, and taps while it trains.
- serve: an author's edit under `build.py serve`, from the save to the open page showing it
  (bench/serve_edit.py; `--chapter PAGE`: that chapter's).

Each part's numbers go into its section of bench/RESULTS.md (bench/results.py), with the date,
commit, machine and the load average before and after it; all of them into bench/results.json
(git-ignored). BENCH_LOADS (cold loads, default 5) and BENCH_TAP_RUNS (page loads tapped each
way, default 3) make a run shorter.
"""

import argparse
import gzip
import html
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

# run as `python bench/run.py`: Python puts bench/ on the path, not the root with the project
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import allheads, first_visit, gguf360m, results, serve_edit
from bench.common import (
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    TEXT_64,
    answer,
    chromium,
    chromium_version,
    in_cpython,
    in_pyodide,
    page_function,
    page_script,
    percentile,
    run_in_pyodide,
    run_with_blob,
    run_with_files,
    served_site,
)
from sitebuild.authoring.drawtime import site_python
from toymodels.one_character.figure import WRITE_ON

COLD_LOADS = int(os.environ.get("BENCH_LOADS", 5))
TAPS = 40  # on each live figure
TAP_RUNS = int(os.environ.get("BENCH_TAP_RUNS", 3))  # page loads tapped back to back, each kind
THROTTLE = 4  # Chromium's CPU slowed 4x: a mid-range phone, as DevTools calls it
PACE_MS = 400  # a reader's pace: the next tap this long after the last one painted
QUIET_MS = 500  # a page's network is quiet once no request is open or ends for this long
FIRST_TAP_SETTLE_MS = 1500  # once Python is ready, a reader reads the figure this long first
# "Real heads", the reader's own sentence: 24 tokens
OWN_24 = (
    "The old lighthouse keeper watched the storm roll in while his daughter counted the "
    "fishing boats returning safely home at dusk."
)
TRAIN_STEPS = 40  # steps timed per width, after one warm-up step
KV_TAPS = 40  # taps on another figure, before and while the chapter trains


def live_minilm(browser, base):
    """The reader's own sentence in all-MiniLM-L6-v2, with the machine's load average."""
    from toymodels.models.minilm import live

    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(base)
    url = base + "models/" + live.manifest()["file"]
    code = in_pyodide("own_sentence.py", OWN_24)
    m = page.evaluate(page_function("live-model.js"), [url, code])
    context.close()
    m = {"ready": m["ready"], **answer(m["value"])}
    assert m["tokens"] == 24, m["tokens"]
    return {
        "own_24_median_ms": statistics.median(m["runs"]),
        "own_24_p95_ms": percentile(m["runs"], 95),
        "model_ready_warm_ms": m["ready"],
        "model_bytes": live.manifest()["bytes"],
        "worker_wasm_heap_mb": m["heap"] / 1e6,
        "matmul_ms": m["matmul"],
    }


def live_markdown(r):
    mm = "; ".join(
        f"{k}: @ {v['@']:.1f} ms, einsum {v['einsum']:.1f} ms" for k, v in r["matmul_ms"].items()
    )
    return (
        "In Pyodide in Chromium: "
        f"a 24-token sentence's 72 maps, labels and figure, median {r['own_24_median_ms']:.0f} ms, "
        f"95th percentile {r['own_24_p95_ms']:.0f} ms over 20 runs (target < 300 ms); "
        f"the model ({r['model_bytes'] / 1e6:.1f} MB) fetched from a warm HTTP cache, "
        f"handed to Python and ready in {r['model_ready_warm_ms']:.0f} ms (target < 5 s); "
        f"the worker's wasm memory {r['worker_wasm_heap_mb']:.0f} MB (target < 300 MB). "
        f"Matrix products in float64, median of 9: {mm}.\n"
    )


# "Heads that copy", the reader's own text: 20 and 64 tokens
OWN_SMOLLM2 = (
    "The old lighthouse keeper watched the storm roll in while his daughter counted the fishing "
    "boats at dusk again.",
    "The old lighthouse keeper watched the storm roll in while his daughter counted the fishing "
    "boats returning safely home at dusk. When the last boat was in, she climbed the narrow "
    "stairs, lit the great lamp, and wrote in the old logbook that every single sailor had come "
    "back safely home again tonight, tired but very glad.",
)
SMOLLM2_REPEAT = 5


def live_smollm2(browser, base):
    """The reader's own text in SmolLM2-135M-Instruct: in the chapter's page, the load button
    pressed (the files fetched from 127.0.0.1, checked, kept, handed to Python, warmed up) to
    the first layer drawn; a second visit, the model restored from the page's cache
    (ownmodel.js's mh-own-model-restored measure: the files read and checked, the memory asked
    for, handed to Python, warmed up) and its text's first layer and guesses drawn; then in a
    Python of its own, the forward's times and the worker's memory."""
    from toymodels.models.smollm2 import live

    chapter = base + "heads-that-copy.html?copy-layer.text=own&copy-layer.layer=1&copy-layer.own="
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(chapter + quote(OWN_SMOLLM2[0]))
    page.wait_for_selector("html.py-ready", timeout=120_000)
    own = "#copy-layer .hc-own-msg:has-text('as the model reads it')"
    t0 = time.perf_counter()
    page.click("#copy-layer [data-own-load]")
    page.wait_for_selector(own, timeout=300_000)
    first_load = (time.perf_counter() - t0) * 1000
    page.close()
    page = context.new_page()
    t0 = time.perf_counter()
    page.goto(chapter + quote(OWN_SMOLLM2[0]))
    page.wait_for_selector("html.py-ready", timeout=120_000)
    python_ready = (time.perf_counter() - t0) * 1000
    page.wait_for_selector(own, timeout=300_000)
    first_layer = (time.perf_counter() - t0) * 1000
    page.wait_for_selector("#copy-layer .hc-guesses", timeout=300_000)
    guesses = (time.perf_counter() - t0) * 1000
    restored = page.evaluate(
        "() => performance.getEntriesByName('mh-own-model-restored')[0]?.duration ?? null"
    )
    urls = [base + "models/" + f["file"] for f in live.files()]
    code = in_pyodide("smollm2_page.py", list(OWN_SMOLLM2), SMOLLM2_REPEAT)
    m = page.evaluate(page_function("smollm2-worker.js"), [urls, code])
    context.close()
    r = answer(m["value"])
    assert sorted(r["texts"]) == ["20", "64"], r["texts"]
    return {
        "download_bytes": sum(f["bytes"] for f in live.files()),
        "first_load_ms": first_load,
        "ready_from_cache_ms": restored,
        "second_visit_python_ready_ms": python_ready,
        "second_visit_first_layer_ms": first_layer,
        "second_visit_guesses_ms": guesses,
        "sha256_weights_ms": m["sha256"],
        "texts": r["texts"],
        "worker_wasm_heap_bytes": r["heap"],
        "repeat": SMOLLM2_REPEAT,
    }


def smollm2_markdown(r):
    t20, t64 = r["texts"]["20"], r["texts"]["64"]
    return (
        f"The download: two files, {r['download_bytes'] / 1e6:.1f} MB (target ≤ 100 MB). In the "
        f"chapter's page, from the load button to the reader's text's first layer drawn: "
        f"{r['first_load_ms'] / 1000:.1f} s (fetched from 127.0.0.1, checked, kept, handed to "
        f"Python, warmed up). A second visit: the model ready from the page's cache in "
        f"{r['ready_from_cache_ms'] / 1000:.1f} s (target ≤ 5 s; of it, Web Crypto's sha256 of "
        f"the weight file {r['sha256_weights_ms']:.0f} ms), after Python was ready at "
        f"{r['second_visit_python_ready_ms'] / 1000:.1f} s; the text's first layer drawn at "
        f"{r['second_visit_first_layer_ms'] / 1000:.1f} s and its guesses (every layer in) at "
        f"{r['second_visit_guesses_ms'] / 1000:.1f} s from the page's start. In the worker, "
        f"medians of {r['repeat']}: 20 tokens, the first layer {t20['first_layer_ms']:.0f} ms "
        f"(target ≤ 300 ms), all 270 maps {t20['all_maps_ms']:.0f} ms (target ≤ 1.5 s); 64 "
        f"tokens, the first layer {t64['first_layer_ms']:.0f} ms, all 270 maps "
        f"{t64['all_maps_ms']:.0f} ms (target ≤ 5 s); a token written on after 20 with the KV "
        f"cache {t20['written_token_ms']:.0f} ms, after 64 {t64['written_token_ms']:.0f} ms "
        f"(target ≤ 150 ms). The worker's WebAssembly memory with the model in: "
        f"{r['worker_wasm_heap_bytes'] / 2**20:.0f} MiB (target ≤ 700 MB).\n"
    )


def train_speed(p, browser, base):
    """Train it yourself: steps per second of each width in Pyodide (in the worker) and in
    CPython (this process, one thread), the memory the run holds, and how long a tap on another
    figure waits while the chapter's run trains."""
    from toymodels.one_character import train_live

    recipes = [{"width": w} for w in train_live.OPTIONS["width"]]
    page = browser.new_page()
    page.goto(base + "index.html")
    pyodide = page.evaluate(page_function("train-in-worker.js"), [recipes, TRAIN_STEPS])
    page.close()
    cpython = [train_live.speed(r, TRAIN_STEPS) for r in recipes]
    page = browser.new_page()
    page.goto(base + "one-character.html")
    page.wait_for_selector("html.py-ready", timeout=90_000)
    # the same taps before training, in the same page: what training adds (the first of them
    # also loads the figure's code, which a tap on a fresh figure pays with or without training)
    taps_on_kv_cache = page_function("taps-on-kv-cache.js")
    idle = page.evaluate(taps_on_kv_cache, KV_TAPS)
    page.click("#train-it [data-train='train']")
    page.wait_for_selector("#train-it [data-trainer][data-train-state='training']")
    # the run has started and trains (before it, the plot is the build's run, not at step 0)
    page.wait_for_selector("#train-it [data-train-heads] .mh-train-head", timeout=60_000)
    page.wait_for_function(
        "() => /^Step [1-9]/.test(document.querySelector('#train-it [data-train-stats]')"
        ".textContent)",
        timeout=60_000,
    )
    taps = page.evaluate(taps_on_kv_cache, KV_TAPS)
    page.click("#train-it [data-train='pause']")
    page.close()
    return {
        "widths": [r["width"] for r in recipes],
        "pyodide_sps": [r["sps"] for r in pyodide],
        "cpython_sps": [r["sps"] for r in cpython],
        "run_bytes": [r["memory"]["run"] for r in pyodide],
        "worker_wasm_bytes": max(r["memory"]["wasm"] for r in pyodide),
        "tap_idle_median_ms": statistics.median(idle),
        "tap_idle_p95_ms": percentile(idle, 95),
        "tap_idle_first_ms": idle[0],
        "tap_idle_max_after_first_ms": max(idle[1:]),
        "tap_while_training_median_ms": statistics.median(taps),
        "tap_while_training_p95_ms": percentile(taps, 95),
        "tap_while_training_max_ms": max(taps),
    }


def train_markdown(r):
    speeds = "; ".join(
        f"width {w}: {p:.1f} steps/s in Pyodide, {c:.1f} in CPython"
        for w, p, c in zip(r["widths"], r["pyodide_sps"], r["cpython_sps"], strict=True)
    )
    return (
        f"{TRAIN_STEPS} steps after a warm-up: "
        f"{speeds}. The default run's weights and Adam's moments hold "
        f"{r['run_bytes'][0] / 1e6:.2f} MB; the worker's WebAssembly memory reached "
        f"{r['worker_wasm_bytes'] / 1e6:.0f} MB. {KV_TAPS} taps on the KV-cache figure while the "
        f"chapter's run trains: median {r['tap_while_training_median_ms']:.0f} ms, p95 "
        f"{r['tap_while_training_p95_ms']:.0f} ms, at most {r['tap_while_training_max_ms']:.0f} "
        f"ms (target < 100 ms); the same taps in the same page before training: median "
        f"{r['tap_idle_median_ms']:.0f} ms, p95 {r['tap_idle_p95_ms']:.0f} ms, the first "
        f"{r['tap_idle_first_ms']:.0f} ms (it loads the figure's code), the others at most "
        f"{r['tap_idle_max_after_first_ms']:.0f} ms.\n"
    )


def char_model(p, browser, base):
    """The character model inside Pyodide on 64 characters, and on its chapter's page: taps on
    the characters, the drum over checkpoints fetched for the first time and again, Write on."""
    r = run_in_pyodide(browser, base, "charmodel.py", TEXT_64)
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(base + "one-character.html")
    page.wait_for_selector("html.py-ready", timeout=120_000)
    timed = page.evaluate(page_function("char-page.js"), [TEXT_64, 30, [0, 3, 6, 9, 12, 15]])
    context.close()
    return {
        "charmodel_forward_64_ms": r["forward"],
        "char_look_64_ms": r["look"],
        "char_render_64_ms": r["render"],
        "char_tap_64_median_ms": statistics.median(timed["taps"]),
        "char_tap_64_p95_ms": percentile(timed["taps"], 95),
        "char_drum_fresh_median_ms": statistics.median(timed["fresh"]),
        "char_drum_fresh_max_ms": max(timed["fresh"]),
        "char_drum_again_median_ms": statistics.median(timed["again"]),
        "char_write_on_median_ms": statistics.median(timed["write"]),
    }


def char_markdown(r):
    return (
        "The character model's forward pass over 64 characters, every intermediate kept, "
        f"in Pyodide in Chromium: {r['charmodel_forward_64_ms']} ms (median of 21). "
        "Everything the chapter computes for them "
        f"(`lab.look`) {r['char_look_64_ms']} ms, "
        f"the whole figure with its nine sections as HTML {r['char_render_64_ms']} ms "
        "(target < 50 ms).\n\n"
        f"On the page, tap a character to paint: median {r['char_tap_64_median_ms']:.1f} ms, "
        f"95th percentile {r['char_tap_64_p95_ms']:.1f} ms. "
        "Drum to another checkpoint, fetched for the first time: "
        f"median {r['char_drum_fresh_median_ms']:.1f} ms, "
        f"slowest {r['char_drum_fresh_max_ms']:.1f} ms; "
        f"again, kept by Python: median {r['char_drum_again_median_ms']:.1f} ms "
        "(target < 300 ms). "
        f'"Write on" (the model run once for each of {WRITE_ON} characters, then the page drawn): '
        f"median {r['char_write_on_median_ms']:.0f} ms.\n"
    )


def speed_ratio(browser, site, base):
    """bench/in_pyodide/ratio.py's work, each the best of its runs in ms: in CPython (a Python of
    its own, numpy on one thread as Pyodide's is), in the site's Python under Node as `check
    --strict` boots it (sitebuild/authoring/sitepython.mjs), and in Pyodide in Chromium."""
    code = in_pyodide("ratio.py")
    cpython = in_cpython(code)
    node = subprocess.run(
        ["node", str(ROOT / "bench" / "pages" / "ratio-node.mjs"), *site_python(ROOT, site)],
        input=code,
        capture_output=True,
        text=True,
        check=True,
    )
    return {
        "cpython_ms": cpython,
        "node_ms": json.loads(node.stdout),
        "chromium_ms": run_in_pyodide(browser, base, "ratio.py"),
    }


RATIO_ROWS = {
    "python_loop": "pure Python: 200,000 steps of integer arithmetic",
    "python_markup": "pure Python: a 64 × 64 grid's markup, a cell at a time",
    "numpy_product": "numpy alone: a 256 × 256 matrix product and a softmax of its rows",
    "char_forward": "numpy-heavy: the character model's forward pass, 64 characters",
    "char_state": 'numpy-heavy figure state: "One character"\'s figure, 64 characters',
    "heads_state": 'markup-heavy figure state: "Many heads"\' figure, word 5',
}


def ratio_markdown(r):
    rows = [
        "| work | CPython | Pyodide under Node | ratio | Pyodide in Chromium | ratio |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for key, what in RATIO_ROWS.items():
        here, node, web = (r[k][key] for k in ("cpython_ms", "node_ms", "chromium_ms"))
        rows.append(
            f"| {what} | {here:.2f} ms | {node:.2f} ms | {node / here:.1f}× | {web:.2f} ms "
            f"| {web / here:.1f}× |"
        )
    return (
        "\n".join(rows) + "\n\nThe same code (bench/in_pyodide/ratio.py) in the three, each the "
        f"best of {r['cpython_ms']['runs']} runs after one: CPython with numpy on one thread, "
        "as Pyodide's is; the site's Python under Node, booted as `check --strict` boots it to "
        "time each figure (sitebuild/authoring/drawtime.py); and a Python of its own in "
        "Chromium. The author guide's rule of thumb (the reader's Python several times slower, "
        "by the kind of work) rests on these ratios.\n"
    )


def first_tap(browser, url, field=None):
    """The first tap on a cold load, on a control of FIELD (any: None), from first paint to its
    answer painted (ms), and from the tap itself (tap_ms); a tap the build did not draw is kept
    and drawn once Python is ready, so its time includes Python's start."""
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(url, wait_until="commit")
    page.wait_for_selector("figure[data-figure] [data-body] [data-key]", state="visible")
    page.wait_for_selector("html.js", state="attached")  # figures.js listens from here on
    out = page.evaluate(page_function("first-tap.js"), field)
    context.close()
    return out


def first_tap_each_kind(browser, url, at):
    """The first tap on a cold load for each kind of control of the first live figure (each
    field its own controls set), the page opened at its top (URL) and at the figure (AT): the
    slowest tap to its paint, and each as 'field top/at' in ms."""
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(url)
    fields = page.evaluate(page_function("control-kinds.js"))
    context.close()
    times = {f: [first_tap(browser, u, f)["tap_ms"] for u in (url, at)] for f in fields}
    worst = max((t for ts in times.values() for t in ts), default=0)
    return worst, ", ".join(f"{f} {a:.0f}/{b:.0f}" for f, (a, b) in times.items())


def at_first_figure(site, name):
    """NAME's address at its first live figure, as a link to the figure opens it: the figure is
    on the screen from the first paint. (Opened at its top, six of seven chapters have their first
    figure below the screen, and Chromium paints it there all the same: not the reader's paint.)"""
    figure = re.search(r'<figure [^>]*id="([^"]+)" data-figure=', (site / name).read_text())
    return f"{name}#{figure[1]}"


def prerendered_bytes(site, name):
    """Bytes the page's pre-rendered first taps add (raw, gzipped), 0 for none: every figure's
    file, as if the reader scrolled through the whole page."""
    found = re.search(r"name=\"mh-prerendered\" content='([^']+)'", (site / name).read_text())
    if not found:
        return 0, 0
    files = json.loads(html.unescape(found[1])).values()
    data = [(site / path).read_bytes() for path in files]
    return sum(map(len, data)), sum(len(gzip.compress(d, 6)) for d in data)


def transferred(context):
    """-> (a function giving (bytes transferred, URLs fetched) in CONTEXT by the requests started
    in [SINCE, UNTIL) (ms since the epoch, the browser's clock; all by default), a function that
    returns once CONTEXT has had no request open and none finished for QUIET_MS)."""
    seen, open_ = [], set()
    context.on("request", lambda r: open_.add(r))
    context.on("requestfailed", lambda r: open_.discard(r))
    context.on(
        "requestfinished",
        lambda r: (open_.discard(r), seen.append((r.url, r.sizes(), r.timing["startTime"]))),
    )

    def quiet(page):
        for _ in range(60_000 // QUIET_MS):
            count = len(seen)
            page.wait_for_timeout(QUIET_MS)
            if not open_ and len(seen) == count:
                return

    def total(since=0, until=float("inf")):
        these = [(url, s) for url, s, start in seen if since <= start < until]
        return (
            sum(s["responseBodySize"] + s["responseHeadersSize"] for _, s in these),
            [url for url, _ in these],
        )

    return total, quiet


def compressed(site, base, urls):
    """What a static host would send for URLS compressed: the gzip size (level 6) of each
    served file, from SITE's files, summed; and their raw size."""
    raw = packed = 0
    for url in dict.fromkeys(urls):
        if not url.startswith(base):
            continue
        path = site / (url[len(base) :].split("?")[0].split("#")[0] or "index.html")
        if path.is_file():
            data = path.read_bytes()
            raw += len(data)
            packed += len(gzip.compress(data, 6))
    return raw, packed


def measure(page, url, main_thread):
    """A first visit to URL: its first figure painted, Python ready, the longest task before."""
    page.add_init_script(page_script("observe.js"))
    if main_thread:
        page.route(
            re.compile(r".*/static/pyclient\.(\w+\.)?js$"),
            lambda route: route.fulfill(
                body=page_script("main-thread-client.js"), content_type="text/javascript"
            ),
        )
    page.goto(url)
    page.wait_for_selector("html.py-ready", timeout=120_000)
    page.evaluate("performance.mark('mh-bench-settled')")
    page.wait_for_function("window.__bench.settled && window.__bench.element.length > 0")
    m = page.evaluate(page_function("first-paint.js"))
    longest = max([d for start, d in m["longtasks"] if start < m["ready"]] or [0])
    return {
        "first_figure_ms": m["figure"],
        "python_ready_ms": m["ready"],
        "longest_task_ms": longest,
    }


def cold_load(p, url, site, base, main_thread=False):
    """A first visit with an empty on-disk cache: its timings; with Python in its worker, also the
    bytes it transferred, and a second visit's, which may use the cache."""
    with tempfile.TemporaryDirectory() as profile:
        # the service worker's offline copy is fetched in the background after Python is ready;
        # it is reported on its own (offline_copy_bytes), not mixed into what a reader waits for
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            viewport={"width": 1200, "height": 900},
            service_workers="block",
        )
        total, quiet = transferred(context)
        first = context.new_page()
        result = measure(first, url, main_thread)
        if main_thread:  # only its timings are reported
            context.close()
            return result
        quiet(first)
        ready = first.evaluate(
            "performance.timeOrigin + performance.getEntriesByName('mh-python-ready')[0].startTime"
        )
        # what a reader waits for; then what the page fetches once Python is ready (the shown
        # figure's data, asked for ahead of a tap)
        result["bytes"], urls = total(until=ready)
        result["raw_bytes"], result["gzip_bytes"] = compressed(site, base, urls)
        result["after_ready_bytes"] = total(since=ready)[0]
        back = first.evaluate("performance.timeOrigin + performance.now()")
        page = context.new_page()
        page.goto(url)  # a reader coming back
        page.wait_for_selector("html.py-ready", timeout=120_000)
        quiet(page)
        result["warm_bytes"] = total(since=back)[0]
        context.close()
    return result


def first_figure_running(browser, url):
    """A first visit to URL (an empty cache, a new private window's) in a browser that is already
    running, as a reader following a link has it: its first figure's paint (ms)."""
    context = browser.new_context(viewport={"width": 1200, "height": 900}, service_workers="block")
    page = context.new_page()
    page.add_init_script(page_script("observe.js"))
    page.goto(url)
    page.wait_for_function("() => window.__bench.element.length > 0")
    ms = page.evaluate("() => Math.min(...window.__bench.element)")
    context.close()
    return ms


def first_tap_after_python(browser, url):
    """Once Python is ready (and its first answers worked out), the first tap on the first live
    figure, timed from the tap to the paint after it is drawn (ms)."""
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("html.py-ready", state="attached", timeout=120_000)
    ms = page.evaluate(page_function("first-tap-after-python.js"), FIRST_TAP_SETTLE_MS)
    context.close()
    return ms


def taps(browser, url, throttle=1, pause=0):
    """TAPS taps on each live figure of URL once Python is ready, with the CPU slowed THROTTLE
    times (1: not at all), each PAUSE ms after the last one painted (0: at once) -> {figure id:
    [{ms: tap to paint, python: the worker's answer, draw: the page's redraw}]}."""
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    if throttle != 1:
        cdp = page.context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": throttle})
    page.goto(url)
    page.wait_for_selector("html.py-ready", timeout=120_000 * throttle)
    times = page.evaluate(page_function("taps.js"), [TAPS, pause])
    context.close()
    return times


def tap_summary(runs, prefix=""):
    """A chapter's taps over all its figures in each run (a page load each): the medians over the
    runs of each run's median and p95, every run's p95, the slowest figure (its p95, the median
    over the runs) and, at the median, how much of a tap was Python's answer and how much the
    page's redraw."""
    every = [[t for taps in by_figure.values() for t in taps] for by_figure in runs]
    p95s = [percentile([t["ms"] for t in taps], 95) for taps in every]
    figures = {
        f: statistics.median(percentile([t["ms"] for t in run[f]], 95) for run in runs)
        for f in runs[0]
    }
    worst = max(figures, key=figures.get)

    def median_over_runs(key):
        return statistics.median(statistics.median(t[key] for t in taps) for taps in every)

    return {
        f"{prefix}tap_to_paint_median_ms": median_over_runs("ms"),
        f"{prefix}tap_to_paint_p95_ms": statistics.median(p95s),
        f"{prefix}tap_to_paint_p95_runs": ", ".join(f"{p:.1f}" for p in p95s),
        f"{prefix}tap_slowest_figure": f"{worst} {figures[worst]:.1f} ms",
        f"{prefix}tap_python_median_ms": median_over_runs("python"),
        f"{prefix}tap_draw_median_ms": median_over_runs("draw"),
    }


def chapter(p, browser, url, site, base):
    """One chapter's row: cold loads (worker and main thread), taps plain and throttled, the
    first tap before Python."""
    name = url[len(base) :]
    at = base + at_first_figure(site, name)
    worker = [cold_load(p, at, site, base) for _ in range(COLD_LOADS)]
    main_thread = [cold_load(p, at, site, base, main_thread=True) for _ in range(COLD_LOADS)]
    plain, slow = [], []
    for _ in range(TAP_RUNS):  # alternated: a busy moment on the machine does not fall on one kind
        plain.append(taps(browser, url))
        slow.append(taps(browser, url, THROTTLE))
    paced = [taps(browser, url, pause=PACE_MS)]
    first = [first_tap(browser, url) for _ in range(COLD_LOADS)]
    each_kind = first_tap_each_kind(browser, url, at)
    running = [first_figure_running(browser, at) for _ in range(COLD_LOADS)]
    after_python = [first_tap_after_python(browser, url) for _ in range(COLD_LOADS)]
    added = prerendered_bytes(site, name)
    return {
        "first_tap_before_python_ms": statistics.median(f["ms"] for f in first),
        "first_tap_python_was_ready": any(f["python_ready"] for f in first),
        "first_tap_each_kind_ms": each_kind[0],
        "first_tap_each_kind": each_kind[1],
        "prerendered_raw_bytes": added[0],
        "prerendered_gzip_bytes": added[1],
        "cold_bytes": median(worker, "bytes"),
        "cold_raw_bytes": median(worker, "raw_bytes"),
        "cold_gzip_bytes": median(worker, "gzip_bytes"),
        "after_ready_bytes": median(worker, "after_ready_bytes"),
        "warm_bytes": median(worker, "warm_bytes"),
        "first_figure_ms": median(worker, "first_figure_ms"),
        "first_figure_running_ms": statistics.median(running),
        "first_tap_after_python_ms": statistics.median(after_python),
        "python_ready_ms": median(worker, "python_ready_ms"),
        "longest_task_ms": median(worker, "longest_task_ms"),
        "main_thread_python_ready_ms": median(main_thread, "python_ready_ms"),
        "main_thread_longest_task_ms": median(main_thread, "longest_task_ms"),
        "figures_tapped": len(plain[0]),
        **tap_summary(plain),
        **tap_summary(slow, "throttled_"),
        **tap_summary(paced, "paced_"),
    }


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def chapters(p, browser, site, base, only=()):
    """Every chapter with a live figure (or the pages ONLY), a row each; and the offline copy."""
    names = sorted(f.name for f in site.glob("*.html") if "data-figure=" in f.read_text())
    unknown = set(only) - set(names)
    if unknown:
        raise SystemExit(f"no chapter with a live figure is called {', '.join(sorted(unknown))}")
    # the reader's own model (models/) is fetched only when asked, never by the service worker
    offline = sum(
        f.stat().st_size
        for f in site.rglob("*")
        if f.is_file() and f.relative_to(site).parts[0] != "models"
    )
    return {
        "offline_copy_bytes": offline,
        "cold_loads": COLD_LOADS,
        "taps": TAPS,
        "tap_runs": TAP_RUNS,
        "throttle": THROTTLE,
        "pace_ms": PACE_MS,
        "chapters": {
            name: chapter(p, browser, base + name, site, base)
            for name in names
            if not only or name in only
        },
    }


def chapters_markdown(results):
    rows = [
        ("cold load, bytes transferred", "cold_bytes", "{:,.0f}"),
        ("cold load, the served files raw", "cold_raw_bytes", "{:,.0f}"),
        ("cold load, the same gzipped (what a static host sends)", "cold_gzip_bytes", "{:,.0f}"),
        (
            "then, once Python is ready, the shown figure's data, bytes",
            "after_ready_bytes",
            "{:,.0f}",
        ),
        ("warm (cached) load, bytes (until its network is quiet)", "warm_bytes", "{:,.0f}"),
        (
            "first pre-rendered figure painted, the page opened at it, in a browser just started",
            "first_figure_ms",
            "{:.0f} ms",
        ),
        (
            "the same in a browser already running, as a reader's is (target < 200 ms)",
            "first_figure_running_ms",
            "{:.0f} ms",
        ),
        ("Python and numpy ready", "python_ready_ms", "{:.0f} ms"),
        (
            "longest main-thread task while Python loads (target < 200 ms)",
            "longest_task_ms",
            "{:.0f} ms",
        ),
        (
            "same, Pyodide on the main thread: Python ready",
            "main_thread_python_ready_ms",
            "{:.0f} ms",
        ),
        (
            "same, Pyodide on the main thread: longest task",
            "main_thread_longest_task_ms",
            "{:.0f} ms",
        ),
        (
            "first tap, first paint to its answer painted (target < 500 ms)",
            "first_tap_before_python_ms",
            "{:.0f} ms",
        ),
        ("… was Python ready by then", "first_tap_python_was_ready", "{}"),
        (
            "first tap of each kind of control, tap to its paint, the slowest",
            "first_tap_each_kind_ms",
            "{:.0f} ms",
        ),
        ("… each kind, opened at the top / at the figure", "first_tap_each_kind", "{} ms"),
        (
            f"first tap once Python is ready, {FIRST_TAP_SETTLE_MS} ms after its figure is "
            "scrolled to, to its paint",
            "first_tap_after_python_ms",
            "{:.0f} ms",
        ),
        ("pre-rendered first taps added, raw", "prerendered_raw_bytes", "{:,.0f}"),
        ("pre-rendered first taps added, gzipped", "prerendered_gzip_bytes", "{:,.0f}"),
        ("live figures tapped", "figures_tapped", "{}"),
        ("tap to paint, median", "tap_to_paint_median_ms", "{:.1f} ms"),
        ("… of which Python's answer (median)", "tap_python_median_ms", "{:.1f} ms"),
        ("… of which the page's redraw (median)", "tap_draw_median_ms", "{:.1f} ms"),
        ("tap to paint, 95th percentile (target < 33 ms)", "tap_to_paint_p95_ms", "{:.1f} ms"),
        ("… each run's", "tap_to_paint_p95_runs", "{} ms"),
        ("… the slowest figure's 95th percentile", "tap_slowest_figure", "{}"),
        (
            f"tap to paint, CPU throttled {results['throttle']}x, median",
            "throttled_tap_to_paint_median_ms",
            "{:.1f} ms",
        ),
        (
            f"tap to paint, CPU throttled {results['throttle']}x, p95 (target < 100 ms)",
            "throttled_tap_to_paint_p95_ms",
            "{:.1f} ms",
        ),
        ("… each run's", "throttled_tap_to_paint_p95_runs", "{} ms"),
        ("… the slowest figure's 95th percentile", "throttled_tap_slowest_figure", "{}"),
        (
            f"tap to paint at a reader's pace (a tap {results['pace_ms']} ms after the last "
            "painted), median",
            "paced_tap_to_paint_median_ms",
            "{:.1f} ms",
        ),
        ("… of which Python's answer (median)", "paced_tap_python_median_ms", "{:.1f} ms"),
        ("… 95th percentile", "paced_tap_to_paint_p95_ms", "{:.1f} ms"),
    ]
    names = list(results["chapters"])
    lines = ["| measure | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for label, key, fmt in rows:
        lines.append(
            f"| {label} | "
            + " | ".join(fmt.format(results["chapters"][n][key]) for n in names)
            + " |"
        )
    lines.append(
        f"\nThe whole site, which the service worker keeps offline when a reader chooses it: "
        f"{results['offline_copy_bytes']:,} bytes (a first visit's bytes: `firstvisit`)."
    )
    lines.append(
        f"\nMedians of {results['cold_loads']} cold loads; "
        f"taps: {results['taps']} on each live figure, back to back and throttled in "
        f"{results['tap_runs']} page loads each (alternated; medians over them), at a reader's "
        "pace in one. Served from 127.0.0.1."
    )
    return "\n".join(lines) + "\n"


# "What a head does", the reader's own pair: the figure's pair, and a longer one
OWN_PAIRS = (
    (
        "After Lucy and Mark finished dinner, Mark passed the salt to",
        "After Lucy and Mark finished dinner, Lucy passed the salt to",
        "Lucy",
        "Mark",
    ),
    (
        "The old lighthouse keeper and his two children spent the whole evening watching the storm "
        "roll in over the harbour, counting the fishing boats as they came home one by one. When "
        "Lucy and Mark finally climbed the narrow stairs to light the great lamp, Mark handed the "
        "matches to",
        "The old lighthouse keeper and his two children spent the whole evening watching the storm "
        "roll in over the harbour, counting the fishing boats as they came home one by one. When "
        "Lucy and Mark finally climbed the narrow stairs to light the great lamp, Lucy handed the "
        "matches to",
        "Lucy",
        "Mark",
    ),
)
OWN_PAIR_TAPS = 6


def live_own_pair(browser, base):
    """The reader's own pair in "What a head does" (Figure 3): in the chapter's page, with the
    longer pair in its boxes, from the load button to the maps drawn (download, start, the
    forward of both texts); then taps on tokens (each a new attribution and attention map, no
    forward), on "Patch all of layer 1" and on a typed head of layer 30, each to the paint after
    the figure's redraw, with the forward's time the table of patches reports. Then in a Python
    of its own, the figure's steps on both pairs (in_pyodide/own_pair.py)."""
    from toymodels.models.smollm2 import live

    clean, corrupt, _, _ = OWN_PAIRS[1]
    query = f"what-own.clean={quote(clean)}&what-own.corrupt={quote(corrupt)}"
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(f"{base}what-a-head-does.html?{query}#own")
    page.wait_for_selector("html.py-ready", timeout=120_000)
    t0 = time.perf_counter()
    page.click("#what-own [data-own-load]")
    page.wait_for_selector("#what-own table.wh-map", timeout=300_000)
    loaded = (time.perf_counter() - t0) * 1000
    tap = page_function("tap-control.js")
    n = page.locator("#what-own [data-key=token]").count()
    taps = [
        page.evaluate(tap, ["what-own", f'[data-key=token][data-value="{i}"]'])
        for i in range(n - 2, n - 2 - OWN_PAIR_TAPS, -1)
    ]
    rows = page.locator("#what-own table.wh-patches tbody tr")
    patches = {}
    page.locator("#what-own td[data-fk='dla-1-1']").click()
    page.locator("#what-own section.hc-opened h3", has_text="L1\u00a0H1").wait_for()
    for name, selector in (("L1", '[data-key=patch][data-value="L1"]'), ("L30H1", None)):
        if selector is None:
            page.locator("#what-own input[name=patch]").fill("L30H1")
            selector = "form.wh-patch button[type=submit]"
        done = rows.count()
        painted = page.evaluate(tap, ["what-own", selector])
        page.wait_for_function(
            "n => document.querySelectorAll('#what-own .wh-patches tbody tr').length > n",
            arg=done,
            timeout=120_000,
        )
        forward = rows.first.locator("td").last.inner_text()  # "175 ms, layers 20–30"
        patches[name] = {"first_paint_ms": painted, "forward_ms": int(forward.split()[0])}
    urls = [base + "models/" + f["file"] for f in live.files()]
    code = in_pyodide("own_pair.py", [list(x) for x in OWN_PAIRS], SMOLLM2_REPEAT)
    m = page.evaluate(page_function("smollm2-worker.js"), [urls, code])
    context.close()
    return {
        "load_to_maps_ms": loaded,
        "tokens": n,
        "token_taps_ms": taps,
        "patches": patches,
        "worker": answer(m["value"]),
        "repeat": SMOLLM2_REPEAT,
    }


def own_pair_markdown(r):
    w = r["worker"]
    short, long = (w[k] for k in sorted(w, key=int))
    n_short, n_long = sorted(w, key=int)
    taps = sorted(r["token_taps_ms"])

    def steps(x, n):
        return (
            f"{n} tokens: both texts' forward {x['forward']:.0f} ms; then every head's direct "
            f"attribution {x['attribution']:.0f} ms and the whole figure {x['figure']:.0f} ms "
            f"(target ≤ 1 s); a patch from layer 1 {x['L1H1']:.0f} ms (all nine heads of layer 1 "
            f"together {x['L1']:.0f} ms), from layer 15 {x['L15H1']:.0f} ms, from layer 30 "
            f"{x['L30H1']:.0f} ms"
        )

    return (
        f"In the chapter's page, the {r['tokens']}-token pair: from the load button to the maps "
        f"drawn {r['load_to_maps_ms'] / 1000:.1f} s (the download from 127.0.0.1, the model's "
        f"start, both texts' forward). A tap on a token, to the paint after the new maps: "
        f"median {statistics.median(taps):.0f} ms, slowest {taps[-1]:.0f} ms, over {len(taps)} "
        "taps (answers worked out ahead while the page was idle count, as a reader gets them). "
        f"Patch all of layer 1: the forward {r['patches']['L1']['forward_ms']} ms as the table "
        f"says it; a typed L30H1: {r['patches']['L30H1']['forward_ms']} ms. In a Python of its "
        f"own (medians of {r['repeat']}): {steps(short, n_short)}; {steps(long, n_long)}.\n"
    )


def own_files(folder):
    """A reader's own GGUF files in FOLDER: SmolLM2-135M-Instruct's Q4_1 file, as its recipe
    pins it, and two files the page refuses, made from its header: one cut short (its whole
    header, then 4 KB of its tensors; the card reads the header to the end before it can
    tell) and one of another architecture (refused as soon as that field is read) -> (the
    model file's path, [(name, path, the file's size as the page is told it)])."""
    from sitebuild.models import smollm2 as recipe
    from toymodels.models import gguf

    data = recipe.gguf_bytes()
    model = Path(folder) / "smollm2-135m-q4_1.gguf"
    model.write_bytes(data)
    start = gguf.Header(data).data_start
    cut = Path(folder) / "cut-short.gguf"
    cut.write_bytes(data[: start + 4096])
    arch = b"general.architecture\x08\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00"
    at = data.index(arch) + len(arch)
    other = Path(folder) / "other-architecture.gguf"
    other.write_bytes(data[:at] + b"mamba" + data[at + 5 : start + 4096])
    return model, [
        ("cut short", cut, start + 4096),
        ("another architecture", other, len(data)),
    ]


def own_file(browser, site, base):
    """A reader's own GGUF file (toymodels/models/gguffile/, card.py): SmolLM2's Q4_1 file from
    the file to its first maps on the 20-token text, and the card of two refused files
    (own_files), each timed once in CPython (a Python of its own, numpy on one thread) and in
    Pyodide in Chromium (a Python of its own, the files put into its file system first; they
    are served from a folder of their own in the site's folder for the while). Then the way
    the page opens a file (in_pyodide/own_file_page.py: the File handed to the worker, read in
    slices, the card's checks, the memory the worker ends with), for that file and for a
    synthetic file of SmolLM2-360M's shapes in Q4_K_M's block types (gguf360m.py: no 360M
    weights exist here), each in a Python of its own."""
    folder = Path(site) / "bench-own-files"
    folder.mkdir()
    try:
        model, refused = own_files(folder)
        code = in_pyodide(
            "own_file.py", str(model), OWN_SMOLLM2[0], [[n, str(p), size] for n, p, size in refused]
        )
        cpython = in_cpython(code)
        paths = [model] + [p for _, p, _ in refused]
        files = [[f"{base}bench-own-files/{p.name}", p.name] for p in paths]
        web = in_pyodide(
            "own_file.py",
            f"/tmp/{model.name}",
            OWN_SMOLLM2[0],
            [[n, f"/tmp/{p.name}", size] for n, p, size in refused],
        )
        pyodide = run_with_files(browser, base, files, web, "own_file")
        big = folder / "smollm2-360m-shape-q4_k_m.gguf"
        gguf360m.write(big, model.read_bytes())
        opened = {}
        for name, path in (("135M", model), ("360M", big)):
            code = in_pyodide("own_file_page.py", str(path), OWN_SMOLLM2[0])
            web = in_pyodide("own_file_page.py", path.stat().st_size, OWN_SMOLLM2[0])
            url = f"{base}bench-own-files/{path.name}"
            opened[name] = {
                "cpython": in_cpython(code),
                "pyodide": run_with_blob(browser, base, url, web, "own_file"),
            }
    finally:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()
    return {"cpython": cpython, "pyodide": pyodide, "opened": opened}


def own_file_markdown(r):
    def where(x, name):
        f = x["file"]
        refused = ", ".join(
            f"{n} {v['card_ms']:.0f} ms (refused: {v['reason']})" for n, v in x["refused"].items()
        )
        return (
            f"{name}: the {f['bytes'] / 1e6:.1f} MB file ({f['parameters'] / 1e6:.0f}M parameters, "
            f"kept as {f['keeps']}) to the first layer's maps of a {f['tokens']}-token text in "
            f"{f['to_first_maps_ms'] / 1000:.1f} s (target ≤ 5 s): the card "
            f"{f['card_ms']:.0f} ms, the file read {f['read_ms']:.0f} ms, the model loaded "
            f"{f['load_ms']:.0f} ms, the tokenizer {f['tokenizer_ms']:.0f} ms, the first layer "
            f"{f['first_layer_ms']:.0f} ms; all the maps {f['all_maps_ms']:.0f} ms. The card of "
            f"a refused file (target ≤ 1 s): {refused}. Memory: "
            f"{x['memory_bytes'] / 2**20:.0f} MiB"
        )

    def kept(x):
        if x["keeps"] != "mixed" or "plan" not in x:
            return x["keeps"]
        rows = ", the embedding as rows" if x["plan"][1] else ""
        return f"mixed: {x['plan'][0]} of its {x['layers']} layers in float32{rows}"

    def opened(x, name):
        kinds = ", ".join(f"{k} {n}" for k, n in x["quants"].items())
        planned = (
            f" (the card planned {x['planned_bytes'] / 2**20:.0f} MiB)"
            if "planned_bytes" in x
            else ""
        )
        if x.get("base_bytes"):
            planned += f", {x['base_bytes'] / 2**20:.0f} MiB before the file"
        return (
            f"{name}: the {x['bytes'] / 1e6:.1f} MB file ({kinds}; {x['parameters'] / 1e6:.0f}M "
            f"parameters, kept as {kept(x)}) to the first layer's maps of a "
            f"{x['tokens']}-token text in {x['to_first_maps_ms'] / 1000:.1f} s: the card "
            f"{x['card_ms']:.0f} ms, the tensors read in {x['steps']} steps, the model built "
            f"and its checks {x['load_ms'] / 1000:.1f} s (the checks {x['checks_ms']:.0f} ms), "
            f"the text tokenized {x['tokenizer_ms']:.0f} ms, the first layer "
            f"{x['first_layer_ms']:.0f} ms; all {x['tokens']} tokens' maps "
            f"{x['all_maps_ms'] / 1000:.1f} s, the last token's logits {x['logits_ms']:.0f} ms. "
            f"Memory: {x['memory_bytes'] / 2**20:.0f} MiB{planned}"
        )

    def targets(first, maps, memory):
        return f"(targets: first maps ≤ {first} s{maps}; memory ≤ {memory})"

    big_maps = "; 20 tokens' maps ≤ 4 s"
    o = r.get("opened")
    page = ""
    if o:
        small, big = o["135M"], o["360M"]
        page = (
            "\n\nOpened as the page opens a reader's file (the File handed to the worker, read "
            "a slice a tensor, the card's checks run; each in a Python of its own). "
            f"SmolLM2-135M's Q4_1 file {targets(5, '', '700 MB')}. "
            f"{opened(small['pyodide'], 'In Pyodide in Chromium')} (the worker's WebAssembly "
            f"memory). {opened(small['cpython'], 'In CPython')} (peak resident). "
            "A synthetic file of SmolLM2-360M's shapes with Q4_K_M's block types, random "
            f"weights (bench/gguf360m.py) {targets(15, big_maps, '1.5 GB')}. "
            f"{opened(big['pyodide'], 'In Pyodide in Chromium')} (the worker's WebAssembly "
            f"memory). {opened(big['cpython'], 'In CPython')} (peak resident)."
        )
    return (
        f"SmolLM2-135M-Instruct's own Q4_1 GGUF, opened as a reader's file, each step once. "
        f"{where(r['pyodide'], 'In Pyodide in Chromium')} (the worker's WebAssembly memory; "
        f"target ≤ 700 MB). {where(r['cpython'], 'In CPython, numpy on one thread')} (peak "
        f"resident).{page}\n"
    )


WHY_REPEAT = 5


def why_head(browser, site, base):
    """Figure 3 of "Why a head looks there" (toymodels/why_a_head_looks/own.py) on the 20-token
    text in SmolLM2: the forward's pieces, one head's split, a knockout (in_pyodide/why.py), in
    CPython (a Python of its own, numpy on one thread) and in Pyodide in Chromium (a Python of
    its own, the site's two model files put into its file system first, as the page's worker
    holds them once the reader has loaded the model)."""
    from toymodels.models.smollm2 import live

    code = in_pyodide("why.py", str(Path(site) / "models"), OWN_SMOLLM2[0], WHY_REPEAT)
    cpython = in_cpython(code)
    names = [f["file"] for f in live.files()]
    files = [[f"{base}models/{name}", name] for name in names]
    web = in_pyodide("why.py", "/tmp", OWN_SMOLLM2[0], WHY_REPEAT)
    return {"cpython": cpython, "pyodide": run_with_files(browser, base, files, web, "why")}


def why_markdown(r):
    web, here = r["pyodide"], r["cpython"]

    def ms(key):
        return (
            f"{web[key + '_ms']:.0f} ms (slowest {web[key + '_max_ms']:.0f} ms; CPython "
            f"{here[key + '_ms']:.0f} ms, {web[key + '_ms'] / here[key + '_ms']:.1f}×)"
        )

    return (
        f"Figure 3 on the reader's own text in SmolLM2, the figure's own calls, in Pyodide in "
        f"Chromium against CPython with numpy on one thread; medians of {web['repeat']} after "
        f"one, the slowest beside them, on a text of {web['tokens']} tokens. One head's split, "
        f"{web['head']} from the last token to all keys, as the figure makes it (`totals`, then "
        f"`kit.score_split`), the first time after the forward: {ms('split')} (target ≤ 500 ms "
        f"at a load ≤ 2); the same for another key, all kept (a tap on a key): {ms('again')}. "
        f"The knockout of the top key-side component ({web['removed']}) from the keys: "
        f"{ms('knockout')} (target ≤ 300 ms). The forward in the figure's pieces (one part, "
        f"then {web['budget_ms']:.0f} ms each; {web['pieces']} pieces at most, of "
        f"{web['parts']} parts: a slice of a product's rows, or a layer's attention): the "
        f"longest piece, what a tap made meanwhile waits for at most, {ms('piece')}; the "
        f"longest single part, the smallest piece there can be, {ms('part')}.\n"
    )


# each part: what it measures (Playwright, the browser, the site folder, its URL, the options)
# and how its section of RESULTS.md reads it
PARTS = {
    "chapters": (
        lambda p, browser, site, base, args: chapters(p, browser, site, base, args.chapter),
        chapters_markdown,
    ),
    "firstvisit": (
        lambda p, browser, site, base, args: first_visit.bytes_of_first_visits(
            p, site, base, args.chapter
        ),
        first_visit.bytes_markdown,
    ),
    "pyodide": (lambda p, browser, site, base, args: char_model(p, browser, base), char_markdown),
    "ratio": (
        lambda p, browser, site, base, args: speed_ratio(browser, site, base),
        ratio_markdown,
    ),
    "dense": (
        lambda p, browser, site, base, args: allheads.dense(browser, base, TAPS),
        allheads.markdown,
    ),
    "live": (lambda p, browser, site, base, args: live_minilm(browser, base), live_markdown),
    "smollm2": (
        lambda p, browser, site, base, args: live_smollm2(browser, base),
        smollm2_markdown,
    ),
    "whathead": (
        lambda p, browser, site, base, args: live_own_pair(browser, base),
        own_pair_markdown,
    ),
    "ownfile": (
        lambda p, browser, site, base, args: own_file(browser, site, base),
        own_file_markdown,
    ),
    "why": (lambda p, browser, site, base, args: why_head(browser, site, base), why_markdown),
    "train": (lambda p, browser, site, base, args: train_speed(p, browser, base), train_markdown),
    "serve": (
        lambda p, browser, site, base, args: serve_edit.edits(browser, args.chapter),
        serve_edit.markdown,
    ),
}


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Each part's numbers replace its section of bench/RESULTS.md.",
    )
    parser.add_argument(
        "parts",
        nargs="*",
        metavar="PART",
        help=f"what to measure, of {', '.join(PARTS)} (default: all of them)",
    )
    parser.add_argument(
        "--chapter",
        action="append",
        default=[],
        metavar="PAGE",
        help="with chapters and firstvisit: only this page, e.g. many-heads.html (repeatable); "
        "with serve: the chapter edited",
    )
    parser.add_argument("--site", type=Path, help="an already built site to measure")
    args = parser.parse_args(argv)
    parts = args.parts or list(PARTS)
    if unknown := [part for part in parts if part not in PARTS]:
        parser.error(f"no part called {', '.join(unknown)}: the parts are {', '.join(PARTS)}")
    measured = {}
    with served_site(args.site) as (site, base), chromium() as (p, browser):
        browser_version = chromium_version()
        for part in parts:
            before = results.load_average()
            measured[part] = PARTS[part][0](p, browser, site, base, args)
            after = results.load_average()
            measured[part]["load_average"] = {"before": before, "after": after}
            body = PARTS[part][1](measured[part])
            print(results.write(part, body, before, after, extra=browser_version))
    (ROOT / "bench" / "results.json").write_text(json.dumps(measured, indent=1))


if __name__ == "__main__":
    main()
