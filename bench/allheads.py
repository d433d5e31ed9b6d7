"""Tap to paint in the dense maps: "Real heads" in its "All 72 heads" view, and chapter 6's
maps of one layer ("Heads that copy", figure copy-layer), measured in Debian's Chromium.

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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent))
sys.path.insert(2, str(Path(__file__).resolve().parent.parent / "tests"))

from conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, serve_dir
from run import RUN_PYTHON, TIME_TO_PAINT, percentile

from sitebuild import build as site_build

TAPS = int(os.environ.get("BENCH_TAPS", 40))
# on a figure's page: optionally one action first (the view to measure, timed on its own), then
# N taps on the figure's token buttons, each timed from the click to the next paint
TAPS_JS = (
    """async ([id, first, n]) => {
  const fig = document.getElementById(id);"""
    + TIME_TO_PAINT
    + """
  const switched = first ? await timeToPaint(fig, () => fig.querySelector(first).click()) : null;
  const bytes = fig.querySelector("[data-body]").innerHTML.length;
  const times = [];
  for (let i = 0; i < n; i++) {
    const words = [...fig.querySelectorAll(".mh-word")];  // redrawn with each answer
    const pressed = words.findIndex((w) => w.getAttribute("aria-pressed") === "true");
    const target = words[(pressed + 1 + (i % 3)) % words.length];  // never the one shown
    times.push(await timeToPaint(fig, () => target.click()));
  }
  return { switched, bytes, times, elements: fig.querySelectorAll("*").length };
}"""
)
# `render` in Pyodide, on the state each page measures: median of 11 runs after one warm-up
RENDER_IN_PYODIDE = """
import time
from toymodels.real_heads import figure as rh
from toymodels.heads_that_copy import figure as hc
def median_ms(f, n=11):
    f()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return round(sorted(times)[n // 2] * 1000, 2)
a = median_ms(lambda: rh.render({"view": "model", "token": "cat:3"}))
b = median_ms(lambda: hc.render({"token": "3"}))
f"{a} {b}"
"""
PAGES = {
    "real-heads (All 72 heads)": (
        "real-heads.html",
        "real-heads",
        '[data-key="view"][data-value="model"]',
    ),
    "heads-that-copy (one layer)": ("heads-that-copy.html", "copy-layer", None),
}


def load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def dense(browser, base, taps=TAPS):
    """-> {page: {median_ms, p95_ms, bytes, elements, switch_ms}, "render_pyodide_ms": …}."""
    out = {}
    for name, (page_name, fid, first) in PAGES.items():
        context = browser.new_context(
            service_workers="block", viewport={"width": 1200, "height": 900}
        )
        page = context.new_page()
        page.goto(base + page_name)
        page.wait_for_selector("html.py-ready", timeout=120_000)
        r = page.evaluate(TAPS_JS, [fid, first, taps])
        context.close()
        out[name] = {
            "median_ms": round(statistics.median(r["times"]), 1),
            "p95_ms": round(percentile(r["times"], 95), 1),
            "markup_chars": r["bytes"],
            "elements": r["elements"],
            "switch_ms": r["switched"] and round(r["switched"], 1),
        }
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(base)
    a, b = page.evaluate(RUN_PYTHON, [RENDER_IN_PYODIDE]).strip("'").split()
    context.close()
    out["render_pyodide_ms"] = {"real-heads model view": float(a), "copy-layer": float(b)}
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
