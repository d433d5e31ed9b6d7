"""Tap to paint in the dense maps: "Real heads" in its "All 72 heads" view, chapter 6's
maps of one layer ("Heads that copy", figure copy-layer) and the character taps of "One character
at a time" (as bench/run.py taps them), measured in Debian's Chromium.

`python bench/allheads.py [SITE]` builds the site (or serves the built SITE folder), opens each
page, taps the figure's tokens TAPS times and prints the median and the 95th percentile of the
time from a tap to the first paint after the figure is redrawn (bench/run.py's TIME_TO_PAINT),
with the markup's size, `render`'s time in Pyodide on the same state, and the load average.
`dense(browser, base)` is the same measurement for a bench that already serves a site.
"""

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent))
sys.path.insert(2, str(Path(__file__).resolve().parent.parent / "tests"))

from conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, serve_dir
from run import CHAR_PAGE, RUN_PYTHON, TEXT_64, TIME_TO_PAINT, percentile

from sitebuild import build as site_build

TAPS = int(os.environ.get("BENCH_TAPS", 40))
# on a figure's page: optionally one action first (the view to measure, timed on its own), then
# N taps on the figure's buttons WHAT (never the one shown), each timed from the click to the
# next paint
TAPS_JS = (
    """async ([id, first, n, what]) => {
  const fig = document.getElementById(id);"""
    + TIME_TO_PAINT
    + """
  const switched = first ? await timeToPaint(fig, () => fig.querySelector(first).click()) : null;
  const bytes = fig.querySelector("[data-body]").innerHTML.length;
  const times = [];
  for (let i = 0; i < n; i++) {
    const words = [...fig.querySelectorAll(what)];  // redrawn with each answer
    const pressed = words.findIndex((w) => w.matches("[aria-pressed=true], .open"));
    const target = words[(pressed + 1 + 7 * (i % 3)) % words.length];  // never the one shown
    times.push(await timeToPaint(fig, () => target.click()));
  }
  return { switched, bytes, times, elements: fig.querySelectorAll("*").length };
}"""
)
# `render` in Pyodide, on the state each page measures: median of 11 runs after one warm-up
RENDER_IN_PYODIDE = f"""
import json, time
from toymodels.real_heads import figure as rh
from toymodels.heads_that_copy import figure as hc, map as hm
from toymodels.one_character import figure as oc
def median_ms(f, n=11):
    f()
    times = []
    for i in range(n):
        t = time.perf_counter()
        f(i)
        times.append(time.perf_counter() - t)
    return round(sorted(times)[n // 2] * 1000, 2)
rh_state = lambda i: {{"view": "model", "token": f"cat:{{i % 9}}"}}
char_state = lambda i: {{"text": {TEXT_64!r}, "character": str(3 * i)}}
json.dumps({{
    "real-heads model view": median_ms(lambda i=0: rh.render(rh_state(i))),
    "copy-layer": median_ms(lambda i=0: hc.render({{"token": str(i % 9)}})),
    "copy-map": median_ms(lambda i=0: hm.render({{"head": f"L{{i + 1}}H{{i % 9 + 1}}"}})),
    "one-character": median_ms(lambda i=0: oc.render(char_state(i))),
}})
"""
OWN_32 = (  # a reader's sentence of 32 words, the most the box takes (issue 15)
    "When the morning train finally pulled into the quiet station, my grandmother stepped "
    "down with two heavy suitcases, a basket of apples, and a letter she had never once dared "
    "to open."
)
PAGES = {  # name: page, figure, what to press first (or None), what to tap
    "real-heads (All 72 heads)": (
        "real-heads.html",
        "real-heads",
        '[data-key="view"][data-value="model"]',
        ".mh-word",
    ),
    "real-heads (All 72 heads, the 22-token fox sentence)": (
        "real-heads.html?real-heads.sentence=fox&real-heads.view=model",
        "real-heads",
        None,
        ".mh-word",
    ),
    "real-heads (All 72 heads, the reader's 32 words)": (
        "real-heads.html?real-heads.sentence=own&real-heads.view=model&real-heads.own="
        + quote(OWN_32),
        "real-heads",
        None,
        ".mh-word",
    ),
    "heads-that-copy (one layer)": ("heads-that-copy.html", "copy-layer", None, ".mh-word"),
    "heads-that-copy (every head)": ("heads-that-copy.html", "copy-map", None, "td[data-key]"),
}


def load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def dense(browser, base, taps=TAPS):
    """-> {page: {median_ms, p95_ms, markup_chars, …}, "render_pyodide_ms": …}."""
    out = {}
    for name, (page_name, fid, first, what) in PAGES.items():
        context = browser.new_context(
            service_workers="block", viewport={"width": 1200, "height": 900}
        )
        page = context.new_page()
        page.goto(base + page_name)
        page.wait_for_selector("html.py-ready", timeout=120_000)
        if "sentence=own" in page_name:  # the reader loads the model and sees the sentence
            page.click("#real-heads [data-own-load]")
            page.locator("#real-heads .rh-own-msg", has_text="as the model sees it").wait_for(
                timeout=120_000
            )
        r = page.evaluate(TAPS_JS, [fid, first, taps, what])
        page_tokens = page.locator(f"#{fid} {what}").count()
        context.close()
        out[name] = {
            "median_ms": round(statistics.median(r["times"]), 1),
            "p95_ms": round(percentile(r["times"], 95), 1),
            "markup_chars": r["bytes"],
            "elements": r["elements"],
            "switch_ms": r["switched"] and round(r["switched"], 1),
            "tokens": page_tokens,
        }
    # "One character at a time": bench/run.py's taps on the characters of a 64-character text
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(base + "one-character.html")
    page.wait_for_selector("html.py-ready", timeout=120_000)
    r = page.evaluate(CHAR_PAGE, [TEXT_64, taps, []])
    bytes_ = page.evaluate("""() => [document.querySelector("#char-model [data-body]"),
        ...document.querySelectorAll('[data-slot-of="char-model"]')]
        .reduce((n, el) => n + el.innerHTML.length, 0)""")
    context.close()
    out["one-character (64 characters)"] = {
        "median_ms": round(statistics.median(r["taps"]), 1),
        "p95_ms": round(percentile(r["taps"], 95), 1),
        "markup_chars": bytes_,
    }
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(base)
    out["render_pyodide_ms"] = json.loads(page.evaluate(RUN_PYTHON, [RENDER_IN_PYODIDE])[1:-1])
    context.close()
    return out


def main(argv):
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(argv[0]) if argv else site_build.build(ROOT, Path(tmp) / "site")
        server = serve_dir(site)
        base = f"http://127.0.0.1:{server.server_port}/"
        before = load()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            results = dense(browser, base)
            browser.close()
        server.shutdown()
    results["load_average"] = {"before": before, "after": load()}
    results["taps"] = TAPS
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
