"""`python bench/sanitize.py [SITE]`: what keeping Python's markup to the figure kit's allow-list
costs a tap (static/sanitize.js, DOMPurify), in Debian's Chromium.

Every piece of markup in the build's stored answers (prerendered/*.json: what taps draw) is
parsed as the page parsed it before (a <template>) and as it does now (clean(): the same
<template>, then a walk that checks it against the allow-list, and DOMPurify if anything is
off the list); each is timed as the median of REPEAT runs, and the
medians, 95th percentiles and the slowest are printed in milliseconds, with the machine's load.
A tap draws one such piece (the figure's markup) and its slots; an answer worked out ahead is
parsed in a gap between frames, before the tap (answers.js, morph.js)."""

import json
import os
import statistics
import sys
from pathlib import Path

# run as `python bench/sanitize.py`: Python puts bench/ on the path, not the project's root
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import chromium, page_function, served_site
from sitebuild.authoring.check import markup_in

REPEAT = 15


def pieces(site):
    """Every piece of markup in the build's stored answers, as check.py reads them."""
    return [
        m
        for f in sorted((site / "prerendered").glob("*.json"))
        for m in markup_in(json.loads(f.read_text()))
    ]


def main():
    with (
        served_site(sys.argv[1] if len(sys.argv) > 1 else None) as (site, base),
        chromium() as (_, browser),
    ):
        (sanitizer,) = (site / "static").glob("sanitize.*.js")
        load = os.getloadavg()
        page = browser.new_page()
        page.goto(base + "split-attend.html")
        rows = page.evaluate(
            page_function("sanitize-time.js"),
            [base + "static/" + sanitizer.name, pieces(site), REPEAT],
        )
    print(
        f"{len(rows)} pieces of markup, {REPEAT} runs each; "
        f"load {load[0]:.1f} → {os.getloadavg()[0]:.1f}"
    )
    for key in ("template", "clean"):
        ms = [r[key] for r in rows]
        p95 = statistics.quantiles(ms, n=20)[18]
        print(
            f"  {key:8s} median {statistics.median(ms):6.2f} ms, p95 {p95:6.2f} ms, "
            f"slowest {max(ms):6.2f} ms"
        )
    big = max(rows, key=lambda r: r["chars"])
    print(
        f"  the largest ({big['chars']:,} characters): "
        f"{big['template']:.2f} → {big['clean']:.2f} ms"
    )


if __name__ == "__main__":
    main()
