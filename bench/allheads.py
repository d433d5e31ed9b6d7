"""Tap to paint in the dense maps: "Real heads" in its "All 72 heads" view, chapter 6's
maps of one layer ("Heads that copy", figure copy-layer) and the character taps of "One character
at a time" (as bench/run.py taps them), measured in Debian's Chromium.

`python bench/allheads.py [SITE]` builds the site (or serves the built SITE folder), opens each
page, taps the figure's tokens TAPS times and writes the median and the 95th percentile of the
time from a tap to the first paint after the figure is redrawn (pages/dense-taps.js), with the
markup's size and `render`'s time in Pyodide on the same state (in_pyodide/dense_render.py),
into its section of bench/RESULTS.md. `dense(browser, base)` is the same measurement for a
bench that already serves a site (`python bench/run.py dense`).
"""

import json
import os
import statistics
import sys
from pathlib import Path
from urllib.parse import quote

# run as `python bench/allheads.py`: Python puts bench/ on the path, not the root with the project
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import results
from bench.common import (
    TEXT_64,
    chromium,
    chromium_version,
    page_function,
    percentile,
    run_in_pyodide,
    served_site,
)

TAPS = int(os.environ.get("BENCH_TAPS", 40))
OWN_32 = (  # a reader's sentence of 32 words, the most the box takes
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
        r = page.evaluate(page_function("dense-taps.js"), [fid, first, taps, what])
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
    r = page.evaluate(page_function("char-page.js"), [TEXT_64, taps, []])
    markup = page.evaluate(page_function("char-markup.js"))
    context.close()
    out["one-character (64 characters)"] = {
        "median_ms": round(statistics.median(r["taps"]), 1),
        "p95_ms": round(percentile(r["taps"], 95), 1),
        "markup_chars": markup,
    }
    out["taps"] = taps
    out["render_pyodide_ms"] = run_in_pyodide(browser, base, "dense_render.py", TEXT_64)
    return out


def markdown(r):
    """The dense maps, one line each, and `render` alone in Pyodide."""
    rows = [
        f"- {name}: median {m['median_ms']:.0f} ms, 95th percentile {m['p95_ms']:.0f} ms, "
        f"markup {m['markup_chars']:,} characters"
        + (f", {m['elements']:,} elements" if "elements" in m else "")
        for name, m in r.items()
        if isinstance(m, dict) and "p95_ms" in m
    ]
    render = ", ".join(f"{k} {v} ms" for k, v in r["render_pyodide_ms"].items())
    return (
        f"Tap to paint after Python is ready, {r['taps']} taps each:\n\n"
        + "\n".join(rows)
        + f"\n\n`render` alone in Pyodide, median of 11: {render}.\n"
    )


def main(argv):
    with served_site(argv[0] if argv else None) as (_, base), chromium() as (_, browser):
        before = results.load_average()
        r = dense(browser, base)
        after = results.load_average()
        print(json.dumps(r, indent=1))
        print(results.write("dense", markdown(r), before, after, extra=chromium_version()))


if __name__ == "__main__":
    main(sys.argv[1:])
