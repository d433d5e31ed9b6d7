"""`make bench`: what readers wait for, measured in Debian's Chromium on a freshly built site.

Serves the site on 127.0.0.1 and writes bench/results.json and bench/results.md. Each
start-up figure is the median of repeated cold loads (a new browser context each time) of the
page opened at its first live figure;
the tap latency is measured over 50 taps on one page. The same start-up is measured with
Pyodide on the main thread (MAIN_THREAD_CLIENT served in place of static/pyclient.js) to
show what the worker buys. Taps are timed twice, from one script: unthrottled and with
Chromium's CPU slowed THROTTLE times (the DevTools protocol's Emulation.setCPUThrottlingRate,
a mid-range phone). The machine's load average is recorded before and after, and a run on a
busy machine (load above the CPU count) says so. The first tap before Python, answered from
the build's pre-rendered states (sitebuild/prerender.py), is timed from the first paint.
"""

import gzip
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# run as `python bench/run.py`: Python puts bench/ on the path, not the root with the project's
# packages, nor tests/ with the browser set-up the tests use
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "tests"))

from conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, serve_dir

from sitebuild import build as site_build
from toymodels.one_character.figure import WRITE_ON

COLD_LOADS = int(os.environ.get("BENCH_LOADS", 5))
TAPS = 40  # on each live figure
TAP_RUNS = int(os.environ.get("BENCH_TAP_RUNS", 3))  # page loads tapped back to back, each kind
THROTTLE = 4  # Chromium's CPU slowed 4x: a mid-range phone, as DevTools calls it
PACE_MS = 400  # a reader's pace: the next tap this long after the last one painted
QUIET_MS = 500  # a page's network is quiet once no request is open or ends for this long
# one observer for painted elements, long tasks and marks, registered before the page's own
# scripts run: it is handed its entries in the order they were recorded, so once it has seen
# the mark "mh-bench-settled", made after Python is ready, it has seen every earlier long task
OBSERVE = """
window.__bench = { element: [], longtasks: [], settled: false };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.entryType === "element") window.__bench.element.push(e.renderTime || e.loadTime);
    else if (e.entryType === "longtask") window.__bench.longtasks.push([e.startTime, e.duration]);
    else if (e.name === "mh-bench-settled") window.__bench.settled = true;
  }
}).observe({ entryTypes: ["element", "longtask", "mark"] });
"""
TEXT_64 = ("the queen. the queen. " * 3)[:64]
# inside Pyodide, on 64 characters: the character model's forward pass with every intermediate,
# and everything the chapter "One character at a time" computes and draws for them
IN_PYODIDE = f"""
import time
from toymodels.one_character import figure as fig, lab, model as cm
text = {TEXT_64!r}
def median_ms(f, n):
    f()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return round(sorted(times)[n // 2] * 1000, 2)
params, cfg, _ = cm.load("reference")
x = cm.encode(text)
forward = median_ms(lambda: cm.forward(params, cfg, x, keep=True), 21)
params, cfg = lab.checkpoint(lab.DEFAULT_RUN, lab.steps(lab.DEFAULT_RUN)[-1])
look = median_ms(lambda: lab.look(params, cfg, text, 63, 1, 0), 21)
render = median_ms(lambda: fig.render({{"text": text}}), 11)
f"{{forward}} {{look}} {{render}}"
"""
RUN_PYTHON = """async ([code]) => {
  const { startPython } = await import("./static/pyclient.js");
  const py = startPython({
    pyodideURL: new URL("pyodide/", location.href), pyURL: new URL("py/", location.href),
  });
  await py.ready;
  const out = await py.call("toymodels.page.cells:run", [code, "bench", null]);
  return out.error ? out.error : out.value;
}"""
# "Real heads", the reader's own sentence (issue 15): in a worker of its own, the model file
# fetched once (so the HTTP cache is warm), then fetched again, handed to Python and warmed up
# (load to ready); a 24-token sentence's 72 maps, labels and figure, 20 runs; the worker's wasm
# memory; and the matrix product the browser's forwards use, einsum against @, on its shapes
OWN_24 = (
    "The old lighthouse keeper watched the storm roll in while his daughter counted the "
    "fishing boats returning safely home at dusk."
)
LIVE_IN_PYODIDE = f"""
import time, json
import numpy as np
import pyodide_js
from toymodels.real_heads import figure as fig, live
text = {OWN_24!r}
def times(f, n):
    f()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        out.append((time.perf_counter() - t) * 1000)
    return out
def own():
    live._done.clear()
    return fig.render({{"sentence": "own", "own": text}})
assert len(live.tokens(text)) == 24
runs = times(own, 20)
rng = np.random.default_rng(0)
mm = {{}}
for a, b in ((384, 384), (384, 1536), (1536, 384)):
    x, w = rng.standard_normal((24, a)), rng.standard_normal((b, a))
    mm[f"24x{{a}} by {{a}}x{{b}}"] = {{
        "@": float(np.median(times(lambda: x @ w.T, 9))),
        "einsum": float(np.median(times(lambda: np.einsum("ik,jk->ij", x, w), 9))),
    }}
json.dumps({{"runs": runs, "heap": pyodide_js._module.HEAP8.length, "matmul": mm}})
"""
LIVE_MODEL = """async ([url, code]) => {
  const { startPython } = await import("./static/pyclient.js");
  const py = startPython({
    pyodideURL: new URL("pyodide/", location.href), pyURL: new URL("py/", location.href),
  });
  await py.ready;
  await (await fetch(url)).arrayBuffer(); // the HTTP cache is warm from here on
  const t0 = performance.now();
  const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
  await py.put("/home/pyodide/models/" + url.split("/").pop(), bytes);
  await py.call("toymodels.real_heads.live:warm", []);
  const ready = performance.now() - t0;
  const out = await py.call("toymodels.page.cells:run", [code, "bench", null]);
  if (out.error) throw new Error(JSON.stringify(out.error));
  return { ready, ...JSON.parse(out.value.slice(1, -1)) }; // the repr of a JSON string
}"""


def live_minilm(browser, base):
    """The reader's own sentence in all-MiniLM-L6-v2, with the machine's load average."""
    from toymodels.real_heads import live

    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(base)
    url = base + "models/" + live.manifest()["file"]
    load = Path("/proc/loadavg").read_text().split()[:3]
    m = page.evaluate(LIVE_MODEL, [url, LIVE_IN_PYODIDE])
    context.close()
    return {
        "own_24_median_ms": statistics.median(m["runs"]),
        "own_24_p95_ms": percentile(m["runs"], 95),
        "model_ready_warm_ms": m["ready"],
        "model_bytes": live.manifest()["bytes"],
        "worker_wasm_heap_mb": m["heap"] / 1e6,
        "matmul_ms": m["matmul"],
        "loadavg": load,
    }


TRAIN_STEPS = 40  # steps timed per width, after one warm-up step
KV_TAPS = 40  # taps on another figure, before and while the chapter trains
TRAIN_IN_WORKER = """async ([recipes, n]) => {
  const { startPython } = await import(new URL("static/pyclient.js", location.href).href);
  const py = startPython({
    pyodideURL: new URL("pyodide/", location.href), pyURL: new URL("py/", location.href),
  });
  await py.ready;
  const out = [];
  const speed = "toymodels.one_character.train_live:speed";
  for (const r of recipes) out.push(await py.call(speed, [r, n]));
  return out;
}"""
# N taps on the KV-cache figure's presets, each timed until its answer shows (train_speed taps
# before Train and while the chapter's run trains)
TAPS_ON_KV_CACHE = """async (n) => {
  const fig = document.querySelector("#kv-cache");
  const out = () => fig.querySelector(".mh-out")?.textContent;
  const times = [];
  for (let i = 0; i < n; i++) {
    const before = out();
    const t = performance.now();
    fig.querySelector(`[data-fk='${i % 2 ? "preset-gpt3" : "preset-gpt2"}']`).click();
    while (out() === before) await new Promise((r) => requestAnimationFrame(r));
    times.push(performance.now() - t);
  }
  return times;
}"""


def train_speed(browser, base):
    """Train it yourself: steps per second of each width in Pyodide (in the worker) and in
    CPython (this process, one thread), the memory the run holds, and how long a tap on another
    figure waits while the chapter's run trains; with the machine's load average."""
    from toymodels.one_character import train_live

    recipes = [{"width": w} for w in train_live.OPTIONS["width"]]
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    page = browser.new_page()
    page.goto(base + "index.html")
    pyodide = page.evaluate(TRAIN_IN_WORKER, [recipes, TRAIN_STEPS])
    page.close()
    cpython = [train_live.speed(r, TRAIN_STEPS) for r in recipes]
    page = browser.new_page()
    page.goto(base + "one-character.html")
    page.wait_for_selector("html.py-ready", timeout=90_000)
    # the same taps before training, in the same page: what training adds (the first of them
    # also loads the figure's code, which a tap on a fresh figure pays with or without training)
    idle = page.evaluate(TAPS_ON_KV_CACHE, KV_TAPS)
    page.click("#train-it [data-train='train']")
    page.wait_for_selector("#train-it [data-trainer][data-train-state='training']")
    # the run has started and trains (before it, the plot is the build's run, not at step 0)
    page.wait_for_selector("#train-it [data-train-heads] .mh-train-head", timeout=60_000)
    page.wait_for_function(
        "() => /^Step [1-9]/.test(document.querySelector('#train-it [data-train-stats]')"
        ".textContent)",
        timeout=60_000,
    )
    taps = page.evaluate(TAPS_ON_KV_CACHE, KV_TAPS)
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
        "loadavg": [load_before, Path("/proc/loadavg").read_text().split()[:3]],
    }


def train_markdown(r):
    speeds = "; ".join(
        f"width {w}: {p:.1f} steps/s in Pyodide, {c:.1f} in CPython"
        for w, p, c in zip(r["widths"], r["pyodide_sps"], r["cpython_sps"], strict=True)
    )
    return (
        f"\nTrain it yourself (One character at a time), {TRAIN_STEPS} steps after a warm-up: "
        f"{speeds}. The default run's weights and Adam's moments hold "
        f"{r['run_bytes'][0] / 1e6:.2f} MB; the worker's WebAssembly memory reached "
        f"{r['worker_wasm_bytes'] / 1e6:.0f} MB. {KV_TAPS} taps on the KV-cache figure while the "
        f"chapter's run trains: median {r['tap_while_training_median_ms']:.0f} ms, p95 "
        f"{r['tap_while_training_p95_ms']:.0f} ms, at most {r['tap_while_training_max_ms']:.0f} "
        f"ms (target < 100 ms); the same taps in the same page before training: median "
        f"{r['tap_idle_median_ms']:.0f} ms, p95 {r['tap_idle_p95_ms']:.0f} ms, the first "
        f"{r['tap_idle_first_ms']:.0f} ms (it loads the figure's code), the others at most "
        f"{r['tap_idle_max_after_first_ms']:.0f} ms. Load average "
        f"{' '.join(r['loadavg'][0])} before, {' '.join(r['loadavg'][1])} after.\n"
    )


def dense_markdown(r):
    """The dense maps (bench/allheads.py), one line each."""
    rows = [
        f"{name}: median {m['median_ms']:.0f} ms, 95th percentile {m['p95_ms']:.0f} ms, "
        f"markup {m['markup_chars']:,} characters"
        + (f", {m['elements']:,} elements" if "elements" in m else "")
        for name, m in r.items()
        if isinstance(m, dict) and "p95_ms" in m
    ]
    render = ", ".join(f"{k} {v} ms" for k, v in r["render_pyodide_ms"].items())
    return (
        "\nDense maps, tap to paint after Python is ready: "
        + "; ".join(rows)
        + f". `render` alone in Pyodide, median of 11: {render}.\n"
    )


def live_markdown(r):
    mm = "; ".join(
        f"{k}: @ {v['@']:.1f} ms, einsum {v['einsum']:.1f} ms" for k, v in r["matmul_ms"].items()
    )
    return (
        "\nYour own sentence in all-MiniLM-L6-v2 (Real heads), in Pyodide in Chromium: "
        f"a 24-token sentence's 72 maps, labels and figure, median {r['own_24_median_ms']:.0f} ms, "
        f"95th percentile {r['own_24_p95_ms']:.0f} ms over 20 runs (target < 300 ms); "
        f"the model ({r['model_bytes'] / 1e6:.1f} MB) fetched from a warm HTTP cache, "
        f"handed to Python and ready in {r['model_ready_warm_ms']:.0f} ms (target < 5 s); "
        f"the worker's wasm memory {r['worker_wasm_heap_mb']:.0f} MB (target < 300 MB). "
        f"Matrix products in float64, median of 9: {mm}. "
        f"Load average at the start: {' '.join(r['loadavg'])}.\n"
    )


# what the benchmark serves in place of static/pyclient.js to run Pyodide on the page's own thread;
# the site itself has no such switch, so no link can move a reader's Python off the worker
MAIN_THREAD_CLIENT = """
import { boot, pythonError } from "./pyruntime.js";
export class PythonError extends Error {
  constructor({ type, message, traceback }) {
    super(`${type}: ${message}`);
    this.type = type;
    this.traceback = traceback;
  }
}
export function startPython({ pyodideURL, pyURL, onProgress }) {
  let callPython = null;
  const progress = (step, label) => onProgress?.(step, 3, label);
  const ready = boot({ pyodideURL, pyURL }, progress).then((call) => {
    callPython = (fn, args) => {
      try {
        return Promise.resolve(call(fn, args));
      } catch (err) {
        return Promise.reject(new PythonError(pythonError(err)));
      }
    };
  });
  ready.catch(() => {});
  return { ready, call: (fn, args) => callPython(fn, args), restart: () => ready };
}
"""
# milliseconds from a reader's action on figure `fig` to the first paint after Python's answer
# is drawn; spliced into the timed snippets below
TIME_TO_PAINT = """
  async function timeToPaint(fig, act) {
    const drawn = new Promise((r) => fig.addEventListener("mh:drawn", r, { once: true }));
    const t0 = performance.now();
    act();
    let timer;
    const late = new Promise((_, no) => { timer = setTimeout(() => no(new Error(
      `#${fig.id} never redrew within 60 s of a tap (no mh:drawn)`)), 60_000); });
    await Promise.race([drawn, late]).finally(() => clearTimeout(timer));
    // after the next paint
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now() - t0;
  }"""
# on the chapter's page: a 64-character text, taps on its characters, then the drum over
# checkpoints fetched for the first time and again (kept by Python), each timed from the action
# to the next paint
CHAR_PAGE = (
    """async ([text, n, steps]) => {
  const fig = document.getElementById("char-model");
"""
    + TIME_TO_PAINT
    + """
  const type = (value) => {  // the box is redrawn with each answer: find it anew every time
    const box = document.getElementById("char-model-text");
    box.value = value;
    box.dispatchEvent(new Event("input", { bubbles: true }));
  };
  const write = [];
  for (let i = 0; i < 5; i++) {
    await timeToPaint(fig, () => type(text.slice(0, 20 + i)));
    write.push(await timeToPaint(fig, () => fig.querySelector("[data-key=write]").click()));
  }
  await timeToPaint(fig, () => type(text));
  const taps = [];
  for (let i = 0; i < n; i++) {
    const tape = [...document.querySelectorAll('[data-slot="numbers"] .cm-ch')];
    taps.push(await timeToPaint(fig, () => tape[(i * 7) % tape.length].click()));
  }
  const drum = (i) => {
    const d = document.getElementById("drum-at");
    d.value = String(i);
    d.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const fresh = [], again = [];
  for (const list of [fresh, again]) {
    for (const i of steps) list.push(await timeToPaint(fig, () => drum(i)));
  }
  return { taps, fresh, again, write };
}"""
)
TAP = (
    """async ([n, pause]) => {"""
    + TIME_TO_PAINT
    + """
  // every live figure of the page, scrolled into view: its word buttons where it has them, else
  // its other state buttons (steps, presets, models); not "Write on", which runs the model once
  // per character written, timed on its own. figures.js's marks say where each tap's time went.
  const out = {};
  for (const fig of document.querySelectorAll("figure[data-figure]")) {
    const buttons = fig.querySelector(".mh-word")
      ? ".mh-word"
      : "button[data-key]:not([disabled]):not([data-key=write])";
    const words = () => [...fig.querySelectorAll(buttons)];
    if (!words().length) continue;
    fig.scrollIntoView({ block: "start" });
    const taps = [];
    for (let i = 0; i < n; i++) {
      const target = words()[i % words().length];
      performance.clearMarks();
      const ms = await timeToPaint(fig, () => target.click());
      const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN;
      const python = at("mh:answer") - at("mh:call");
      taps.push({ ms, python, draw: at("mh:drawn") - at("mh:answer") });
      if (pause) await new Promise((r) => setTimeout(r, pause));
    }
    out[fig.id] = taps;
  }
  return out;
}"""
)


# on a cold load, as soon as the first figure's controls are there: a tap on its first control
# (a word, a step), timed from the page's first paint to the next paint after the answer is
# drawn, with whether Python was ready by then (answered from the build's pre-rendered states
# it is not)
FIRST_TAP = (
    """async (field) => {
  const fig = document.querySelector("figure[data-figure]");"""
    + TIME_TO_PAINT
    + """
  const paint = await new Promise((r) => {
    const seen = performance.getEntriesByName("first-contentful-paint");
    if (seen.length) return r(seen[0].startTime);
    new PerformanceObserver((l, o) => { o.disconnect(); r(l.getEntries()[0].startTime); })
      .observe({ type: "paint", buffered: true });
  });
  const state = JSON.parse(fig.dataset.state);
  const button = [...fig.querySelectorAll("[data-body] [data-key][data-value]")]
    .find((b) => !b.disabled && state[b.dataset.key] !== b.dataset.value
      && (field === null || b.dataset.key === field));
  const tapped = performance.now();
  await timeToPaint(fig, () => button.click());
  return {
    ms: performance.now() - paint,
    tap_ms: performance.now() - tapped,
    python_ready: document.documentElement.classList.contains("py-ready"),
  };
}"""
)
# the fields the first live figure's own controls set, in order (a word, a head, a step)
CONTROL_KINDS = """() => [...new Set([...document.querySelector("figure[data-figure]")
  .querySelectorAll("[data-body] [data-key][data-value]")].map((b) => b.dataset.key))]"""


# once Python is ready, the first live figure scrolled to and given SETTLE ms (a reader reading
# it): a tap on its first control not already drawn, to the paint after it
FIRST_TAP_SETTLE_MS = 1500
FIRST_TAP_AFTER_PYTHON = (
    """async (settle) => {
  const fig = document.querySelector("figure[data-figure]");"""
    + TIME_TO_PAINT
    + """
  fig.scrollIntoView({ block: "start" });
  await new Promise((r) => setTimeout(r, settle));
  const state = JSON.parse(fig.dataset.state);
  const button = [...fig.querySelectorAll("[data-body] [data-key][data-value]")]
    .find((b) => !b.disabled && state[b.dataset.key] !== b.dataset.value);
  return await timeToPaint(fig, () => button.click());
}"""
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
    out = page.evaluate(FIRST_TAP, field)
    context.close()
    return out


def first_tap_each_kind(browser, url, at):
    """The first tap on a cold load for each kind of control of the first live figure (each
    field its own controls set), the page opened at its top (URL) and at the figure (AT): the
    slowest tap to its paint, and each as 'field top/at' in ms."""
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(url)
    fields = page.evaluate(CONTROL_KINDS)
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
    """Bytes the page's pre-rendered first taps add (raw, gzipped), 0 for none."""
    found = re.search(r'name="mh-prerendered" content="([^"]+)"', (site / name).read_text())
    if not found:
        return 0, 0
    data = (site / found[1]).read_bytes()
    return len(data), len(gzip.compress(data, 6))


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


def load_average():
    return [round(x, 2) for x in os.getloadavg()]


def busy(load, cpus):
    """A sentence when the machine was busy during the run (a load average above its CPU
    count, before or after), else ''."""
    worst = max(load["before"][0], load["after"][0], load["before"][1], load["after"][1])
    if worst <= cpus:
        return ""
    return (
        f"**The machine was busy**: load average up to {worst:.1f} on {cpus} CPUs "
        "(before and after the run); timings are slower than on an idle machine."
    )


def measure(page, url, main_thread):
    """A first visit to URL: its first figure painted, Python ready, the longest task before."""
    page.add_init_script(OBSERVE)
    if main_thread:
        page.route(
            re.compile(r".*/static/pyclient\.(\w+\.)?js$"),
            lambda route: route.fulfill(body=MAIN_THREAD_CLIENT, content_type="text/javascript"),
        )
    page.goto(url)
    page.wait_for_selector("html.py-ready", timeout=120_000)
    page.evaluate("performance.mark('mh-bench-settled')")
    page.wait_for_function("window.__bench.settled && window.__bench.element.length > 0")
    m = page.evaluate("""() => ({
        figure: Math.min(...window.__bench.element),
        ready: performance.getEntriesByName("mh-python-ready")[0].startTime,
        longtasks: window.__bench.longtasks })""")
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
    page.add_init_script(OBSERVE)
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
    ms = page.evaluate(FIRST_TAP_AFTER_PYTHON, FIRST_TAP_SETTLE_MS)
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
    times = page.evaluate(TAP, [TAPS, pause])
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


def machine():
    return {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "chromium": subprocess.run(
            [CHROMIUM, "--version"], capture_output=True, text=True
        ).stdout.strip(),
    }


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def main():
    from playwright.sync_api import sync_playwright

    out_dir = ROOT / "bench"
    with tempfile.TemporaryDirectory() as tmp:
        site = site_build.build(ROOT, Path(tmp) / "site")
        chapters = sorted(p.name for p in site.glob("*.html") if "data-figure=" in p.read_text())
        server = serve_dir(site)
        base = f"http://127.0.0.1:{server.server_port}/"
        # the reader's own model (models/) is fetched only when asked, never by the service worker
        offline = sum(
            f.stat().st_size
            for f in site.rglob("*")
            if f.is_file() and f.relative_to(site).parts[0] != "models"
        )
        results = {
            "offline_copy_bytes": offline,
            "machine": machine(),
            "load_average": {"before": load_average()},
            "cold_loads": COLD_LOADS,
            "taps": TAPS,
            "tap_runs": TAP_RUNS,
            "throttle": THROTTLE,
            "pace_ms": PACE_MS,
            "chapters": {},
        }
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for name in chapters:
                results["chapters"][name] = chapter(p, browser, base + name, site, base)
            context = browser.new_context(service_workers="block")
            page = context.new_page()
            page.goto(base)  # the home page starts no Python of its own to compete with this one
            forward, look, render = page.evaluate(RUN_PYTHON, [IN_PYODIDE]).strip("'").split()
            (
                results["charmodel_forward_64_ms"],
                results["char_look_64_ms"],
                results["char_render_64_ms"],
            ) = float(forward), float(look), float(render)
            context.close()
            context = browser.new_context(service_workers="block")
            page = context.new_page()
            page.goto(base + "one-character.html")
            page.wait_for_selector("html.py-ready", timeout=120_000)
            timed = page.evaluate(CHAR_PAGE, [TEXT_64, 30, [0, 3, 6, 9, 12, 15]])
            context.close()
            results["char_tap_64_median_ms"] = statistics.median(timed["taps"])
            results["char_tap_64_p95_ms"] = percentile(timed["taps"], 95)
            results["char_drum_fresh_median_ms"] = statistics.median(timed["fresh"])
            results["char_drum_fresh_max_ms"] = max(timed["fresh"])
            results["char_drum_again_median_ms"] = statistics.median(timed["again"])
            results["char_write_on_median_ms"] = statistics.median(timed["write"])
            from allheads import dense  # it reads this module's constants: imported here

            results["dense"] = dense(browser, base, TAPS)
            results["live_minilm"] = live_minilm(browser, base)
            results["train"] = train_speed(browser, base)
            browser.close()
        server.shutdown()
    results["load_average"]["after"] = load_average()
    results["busy"] = busy(results["load_average"], results["machine"]["cpus"])
    (out_dir / "results.json").write_text(json.dumps(results, indent=1))
    table = (
        markdown(results)
        + dense_markdown(results["dense"])
        + live_markdown(results["live_minilm"])
        + train_markdown(results["train"])
    )
    (out_dir / "results.md").write_text(table)
    print(table)


def markdown(results):
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
    m = results["machine"]
    r = results
    lines.append(
        "\nThe character model's forward pass over 64 characters, every intermediate kept, "
        f"in Pyodide in Chromium: {r['charmodel_forward_64_ms']} ms (median of 21)."
    )
    lines.append(
        "\nOne character at a time, 64 characters, inside Pyodide: "
        f"every intermediate (`char_lab.look`) {r['char_look_64_ms']} ms, "
        f"the whole figure with its nine sections as HTML {r['char_render_64_ms']} ms "
        "(target < 50 ms). "
        f"On the page, tap a character to paint: median {r['char_tap_64_median_ms']:.1f} ms, "
        f"95th percentile {r['char_tap_64_p95_ms']:.1f} ms. "
        "Drum to another checkpoint, fetched for the first time: "
        f"median {r['char_drum_fresh_median_ms']:.1f} ms, "
        f"slowest {r['char_drum_fresh_max_ms']:.1f} ms; "
        f"again, kept by Python: median {r['char_drum_again_median_ms']:.1f} ms "
        "(target < 300 ms). "
        f'"Write on" (the model run once for each of {WRITE_ON} characters, then the page drawn): '
        f"median {r['char_write_on_median_ms']:.0f} ms."
    )
    lines.append(
        f"\nAfter Python is ready, the service worker keeps the whole site for offline visits: "
        f"{results['offline_copy_bytes']:,} bytes, most of them already in the browser's cache."
    )
    lines.append(
        f"\nMedians of {results['cold_loads']} cold loads; "
        f"taps: {results['taps']} on each live figure, back to back and throttled in "
        f"{results['tap_runs']} page loads each (alternated; medians over them), at a reader's "
        "pace in one. "
        f"Machine: {m['platform']}, {m['cpus']} CPUs, {m['chromium']}, served from 127.0.0.1. "
        f"Load average (1, 5, 15 min) before: {' '.join(map(str, r['load_average']['before']))}; "
        f"after: {' '.join(map(str, r['load_average']['after']))}."
    )
    if r["busy"]:
        lines.append("\n" + r["busy"])
    return "\n".join(lines) + "\n"


def main_live(part="live"):
    """`python bench/run.py live` (the reader's own sentence) or `python bench/run.py train`
    (Train it yourself) alone, on a fresh build."""
    from playwright.sync_api import sync_playwright

    measure, text = {"live": (live_minilm, live_markdown), "train": (train_speed, train_markdown)}[
        part
    ]
    with tempfile.TemporaryDirectory() as tmp:
        site = site_build.build(ROOT, Path(tmp) / "site")
        server = serve_dir(site)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            r = measure(browser, f"http://127.0.0.1:{server.server_port}/")
            browser.close()
        server.shutdown()
    print(json.dumps(r, indent=1))
    print(text(r))


if __name__ == "__main__":
    main_live(sys.argv[1]) if sys.argv[1:] in (["live"], ["train"]) else main()
