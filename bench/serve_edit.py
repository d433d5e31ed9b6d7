"""An author's edit under `build.py serve`: from the save to the open page showing it (`python
bench/run.py serve`, a part of `make bench`).

A copy of the project (its chapters, templates and toymodels) is served by `build.py serve`
in a process of its own, and a chapter is opened in Chromium as an author opens it, its
service worker allowed (serve answers for the worker with one that leaves:
sitebuild/serving/reload.py). Once the page's Python is ready, a new
sentence is saved at the top of the chapter, EDITS times; each is timed from just before the
save to the first paint of the page that shows it (the reloaded page's first contentful paint,
read from the page's own clock, the same wall clock as the bench's), and split at the moment
serve said it had built.
"""

import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import ROOT, page_function

EDITS = 5
PAGE = "one-head.html"  # the path's first chapter
SERVE_S = 300  # serve's first, whole build, on a busy machine
SHOWN_S = 60  # one edit, on a busy machine


def edits(browser, pages=()):
    """Save to shown, EDITS times, on the chapter PAGES[0] (PAGE if none)."""
    from playwright.sync_api import expect

    name = pages[0] if pages else PAGE
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        for folder in ("chapters", "templates", "toymodels"):
            skip = shutil.ignore_patterns("__pycache__")
            shutil.copytree(ROOT / folder, root / folder, ignore=skip)
        chapter = _chapter(root, name.removesuffix(".html"))
        original = chapter.read_text(encoding="utf-8")
        cmd = [sys.executable, str(ROOT / "build.py"), "serve", "--root", str(root), "--port", "0"]
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp
        )
        said = []  # (when, line)
        threading.Thread(
            target=lambda: said.extend((time.time(), line) for line in proc.stdout), daemon=True
        ).start()
        try:
            url = _address(said, proc) + name
            context = browser.new_context(service_workers="allow")
            page = context.new_page()
            page.goto(url)
            runs = []
            for i in range(EDITS):
                page.wait_for_selector("html.py-ready", timeout=SHOWN_S * 1000)
                marker = f"Edited{i}forthebench"
                text = original.replace("+++\n\n", f"+++\n\n{marker} is new here.\n\n", 1)
                heard = len(said)
                saved = time.time()
                chapter.write_text(text, encoding="utf-8")
                try:
                    expect(page.locator("main")).to_contain_text(marker, timeout=SHOWN_S * 1000)
                except AssertionError:
                    print("".join(line for _, line in said), file=sys.stderr)
                    raise
                shown = page.evaluate(page_function("painted-at.js")) / 1000
                built = next(t for t, line in said[heard:] if line.startswith("built"))
                runs.append({"built_s": built - saved, "shown_s": shown - saved})
            context.close()
        finally:
            proc.terminate()
            proc.wait(10)
    shown = [r["shown_s"] for r in runs]
    return {
        "page": name,
        "edits": runs,
        "shown_median_s": statistics.median(shown),
        "built_median_s": statistics.median(r["built_s"] for r in runs),
    }


def _chapter(root, slug):
    for path in sorted((root / "chapters").glob("*.md")):
        if re.search(rf'^slug = "{re.escape(slug)}"$', path.read_text(encoding="utf-8"), re.M):
            return path
    raise SystemExit(f"no chapter has the slug {slug!r}")


def _address(said, proc):
    """serve's address once its first build is done."""
    deadline = time.monotonic() + SERVE_S
    while time.monotonic() < deadline:
        for _, line in said:
            if m := re.search(r"http://127\.0\.0\.1:\d+/", line):
                return m[0]
        if proc.poll() is not None:
            raise SystemExit("serve ended: " + "".join(line for _, line in said))
        time.sleep(0.1)
    raise SystemExit("serve did not start")


def markdown(r):
    shown = sorted(x["shown_s"] for x in r["edits"])
    each = ", ".join(f"{x['shown_s']:.2f}" for x in r["edits"])
    return (
        f"A new sentence saved at the top of {r['page']} under `build.py serve`, the page open "
        "in Chromium: from the save to the reloaded page's first paint, median "
        f"{r['shown_median_s']:.2f} s (target < 1 s at low load), slowest {shown[-1]:.2f} s, "
        f"over {len(shown)} edits ({each} s); of which the save to serve's word that it had "
        f"built, median {r['built_median_s']:.2f} s.\n"
    )
