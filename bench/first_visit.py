"""`python bench/first_visit.py [SITE]`: a first visit on a slow network, with the site's Python
in one archive (py/HASH/python.zip, which static/pyruntime.js unpacks) and file by file.

The site is served on 127.0.0.1 by a server that waits LATENCY_MS before answering each
request (a round trip on a distant or mobile network). Each visit is cold (a new browser
context: no HTTP cache, no offline copy) and timed from navigation to Python ready
(html.py-ready); the median of RUNS visits of each kind is printed, alternated, with the load."""

import functools
import os
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
from sitebuild import build as site_build
from sitebuild.loopback import QuietServer
from sitebuild.serve import Handler

LATENCY_MS = 100
RUNS = int(os.environ.get("BENCH_LOADS", 3))
CHAPTER = "split-attend.html"


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
