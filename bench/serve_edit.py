"""An author's edit under `build.py serve`: from the save to the open page showing it (`python
bench/run.py serve`, a part of `make bench`).

A copy of the project (its chapters, templates and toymodels) is served by `build.py serve`
in a process of its own, and a chapter is opened in Chromium as an author opens it, its
service worker allowed (serve answers for the worker with one that leaves:
sitebuild/serving/reload.py). Once the page's Python is ready, EDITS times, two edits are
saved: one that adds two lines more at the top of the chapter than the edit before, so that
every figure, cell and exercise moves down (their requests to the cells' Python and what the
build says name no line of the chapter, so that serve's builder still answers them from its
last build: cellrunner.Replay), then one that changes a sentence there, the lines as they were.
Each edit is timed from just before the save to the first paint of the page that shows it (the
reloaded page's first contentful paint, read from the page's own clock, the same wall clock as
the bench's), and split at the moment serve said it had built.
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
# the edits, taken in turns so that both meet the same load: each shift adds two lines more at
# the top than the edit before (every figure, cell and exercise moves down); each sentence
# edit then changes a sentence there, the lines as they were
KINDS = ("shift", "sentence")


def _edited(original, marker, i):
    """The chapter's text with a sentence holding MARKER at the top and I + 1 new lines below."""
    lines = "And a line more.\n\n" * (i + 1)
    return original.replace("+++\n\n", f"+++\n\n{marker} is new here.\n\n{lines}", 1)


def edits(browser, pages=()):
    """Save to shown, EDITS times of each of KINDS, on the chapter PAGES[0] (PAGE if none)."""
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
            runs = {kind: [] for kind in KINDS}
            for i, kind in [(i, kind) for i in range(EDITS) for kind in KINDS]:
                page.wait_for_selector("html.py-ready", timeout=SHOWN_S * 1000)
                marker = f"Edited{kind}{i}forthebench"
                text = _edited(original, marker, i)
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
                runs[kind].append({"built_s": built - saved, "shown_s": shown - saved})
            context.close()
        finally:
            proc.terminate()
            proc.wait(10)
    return {"page": name, **_medians(runs["sentence"]), "shift": _medians(runs["shift"])}


def _medians(runs):
    return {
        "edits": runs,
        "shown_median_s": statistics.median(r["shown_s"] for r in runs),
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
    return (
        f"A sentence at the top of {r['page']} changed under `build.py serve`, the lines as they "
        "were, the page open in Chromium: from the save to the reloaded page's first paint, "
        + _row(r)
        + "\n\nAn edit that adds lines at the top (two more each time, taken in turns with the "
        "sentence's), moving every figure, cell and exercise below them: " + _row(r["shift"]) + "\n"
    )


def _row(r):
    shown = sorted(x["shown_s"] for x in r["edits"])
    each = ", ".join(f"{x['shown_s']:.2f}" for x in r["edits"])
    return (
        f"median {r['shown_median_s']:.2f} s (target < 1 s at low load), slowest "
        f"{shown[-1]:.2f} s, over {len(shown)} edits ({each} s); of which the save to serve's "
        f"word that it had built, median {r['built_median_s']:.2f} s."
    )
