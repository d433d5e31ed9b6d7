"""A reader's first visit: what it downloads, chapter by chapter (`python bench/run.py
firstvisit`, a part of `make bench`), and how long it takes on a slow network (`python
bench/first_visit.py [SITE]`).

What it downloads (`bytes_of_first_visits`): each chapter opened at its top in a new browser
profile (an empty cache on disk, no offline copy) with the site's service worker allowed, as a
reader's browser has it; every request of the browser counted (the page's, Python's worker's and
the service worker's; a request the service worker answers, once), from the navigation until the
network is quiet once the page's offline copy is kept, and for at most FIRST_VISIT_S seconds
after Python is ready. Beside the bytes, what was
fetched that is another page's (a page, an embed, another chapter's pre-rendered answers), which
a first visit should not cost, and the whole site's size, which only the reader's choice costs.

How long it takes (`main`): the site is served on 127.0.0.1 by a server that waits LATENCY_MS
before answering each request (a round trip on a distant or mobile network), with the site's
Python in one archive (py/HASH/python.zip, which static/pyruntime.js unpacks) and file by file.
Each visit is cold (a new browser context: no HTTP cache, no offline copy) and timed from
navigation to Python ready (html.py-ready); the median of RUNS visits of each kind is printed,
alternated, with the load."""

import functools
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

# run as `python bench/first_visit.py`: Python puts bench/ on the path, not the project's root
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import CHROMIUM, CHROMIUM_ARGS, ROOT
from sitebuild.pipeline import build as site_build
from sitebuild.serving.loopback import QuietServer
from sitebuild.serving.serve import Handler

LATENCY_MS = 100
RUNS = int(os.environ.get("BENCH_LOADS", 3))
CHAPTER = "split-attend.html"
FIRST_VISIT_S = 30  # the longest a first visit is watched after Python is ready
QUIET_MS = 500  # the network is quiet once no request is open or ends for this long


def elsewhere(url, base, name):
    """Whether URL is a file of another page than NAME of the site at BASE: a page, an embed,
    another page's pre-rendered answers."""
    path = url.split("?")[0].split("#")[0].removeprefix(base)
    slug = name.removesuffix(".html")
    return (
        (path.endswith(".html") and path != name)
        or path.startswith("embed/")
        or (path.startswith("prerendered/") and not path.startswith(f"prerendered/{slug}."))
    )


def first_visit(p, base, name):
    """A first visit to the page NAME, in a new browser profile (with a cache on disk, as a
    reader's browser has): {bytes, bytes_until_ready, requests, others (what it fetched that
    belongs to another page), kept (what the page says it keeps offline)}."""
    profile = tempfile.TemporaryDirectory()
    context = p.chromium.launch_persistent_context(
        profile.name,
        executable_path=CHROMIUM,
        args=CHROMIUM_ARGS,
        viewport={"width": 1200, "height": 900},
    )
    seen, open_ = [], set()

    def finished(r):
        open_.discard(r)
        # a page's request the service worker answered is counted as the worker's own fetch
        if not r.response().from_service_worker:
            seen.append((r.url, r.sizes(), r.timing["startTime"]))

    context.on("request", lambda r: open_.add(r))
    context.on("requestfailed", lambda r: open_.discard(r))
    context.on("requestfinished", finished)
    page = context.new_page()
    page.goto(base + name)
    page.wait_for_selector("html.py-ready", timeout=120_000)
    ready = page.evaluate(
        "performance.timeOrigin + performance.getEntriesByName('mh-python-ready')[0].startTime"
    )
    deadline = time.monotonic() + FIRST_VISIT_S
    kept = page.locator("html[data-offline-kept]")
    while time.monotonic() < deadline:
        count = len(seen)
        page.wait_for_timeout(QUIET_MS)
        if not open_ and len(seen) == count and kept.count():
            break
    said = page.locator(".mh-offline [role=status]").text_content() if kept.count() else ""
    context.close()
    profile.cleanup()
    size = [(url, s["responseBodySize"] + s["responseHeadersSize"], t) for url, s, t in seen]
    others = sorted({u[len(base) :] for u, _, _ in seen if elsewhere(u, base, name)})
    return {
        "bytes": sum(b for _, b, _ in size),
        "bytes_until_ready": sum(b for _, b, t in size if t < ready),
        "requests": len(seen),
        "others": others,
        "kept": said,
    }


def bytes_of_first_visits(p, site, base, only=()):
    """A first visit to every chapter with a live figure (or the pages ONLY), and the whole
    site's size as its offer to keep it says."""
    names = sorted(f.name for f in site.glob("*.html") if "data-figure=" in f.read_text())
    visits = {name: first_visit(p, base, name) for name in names if not only or name in only}
    whole = json.loads(re.search(r"const WHOLE = (\d+);", (site / "sw.js").read_text())[1])
    return {"watch_s": FIRST_VISIT_S, "whole_site_bytes": whole, "chapters": visits}


def bytes_markdown(results):
    names = list(results["chapters"])
    rows = [
        ("bytes until Python is ready", lambda r: f"{r['bytes_until_ready']:,}"),
        ("bytes in all, the offline copy of the page included", lambda r: f"{r['bytes']:,}"),
        ("requests", lambda r: str(r["requests"])),
        ("files of other pages fetched", lambda r: str(len(r["others"]))),
    ]
    lines = ["| first visit | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for label, cell in rows:
        cells = " | ".join(cell(results["chapters"][n]) for n in names)
        lines.append(f"| {label} | {cells} |")
    others = {n: r["others"] for n, r in results["chapters"].items() if r["others"]}
    if others:
        lines.append(f"\nFetched for other pages: {others}.")
    lines.append(
        f"\nEach chapter opened at its top in a new browser profile, its service worker allowed;"
        f" every request of the browser counted until its network was quiet with the page kept "
        f"offline, at most {results['watch_s']} s after Python was ready. Keeping the whole site, "
        f"when a reader chooses it: {results['whole_site_bytes']:,} bytes. Served from 127.0.0.1."
    )
    return "\n".join(lines) + "\n"


class Slow(Handler):
    def handle_one_request(self):
        time.sleep(LATENCY_MS / 1000)
        super().handle_one_request()


def visit(browser, url):
    context = browser.new_context()
    page = context.new_page()
    t = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("html.py-ready", timeout=300_000)
    seconds = time.perf_counter() - t
    context.close()
    return seconds


def main():
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(sys.argv[1]) if len(sys.argv) > 1 else site_build.build(ROOT, Path(tmp) / "s")
        bundles = list(site.glob("py/*/python.zip"))
        server = QuietServer(("127.0.0.1", 0), functools.partial(Slow, directory=str(site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_port}/{CHAPTER}"
        times = {"one archive": [], "file by file": []}
        load = os.getloadavg()[0]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for _ in range(RUNS):
                for kind in times:
                    for b in bundles:  # file by file: the archive is out of the way
                        if kind == "file by file":
                            shutil.move(b, b.with_suffix(".away"))
                    try:
                        times[kind].append(visit(browser, url))
                    finally:
                        for b in bundles:
                            if b.with_suffix(".away").exists():
                                shutil.move(b.with_suffix(".away"), b)
            browser.close()
        server.shutdown()
    print(f"first visit to {CHAPTER}, {LATENCY_MS} ms before each answer, load {load:.1f}")
    for kind, seconds in times.items():
        runs = ", ".join(f"{s:.2f}" for s in seconds)
        print(f"  {kind:12s} median {statistics.median(seconds):.2f} s ({runs})")


if __name__ == "__main__":
    main()
