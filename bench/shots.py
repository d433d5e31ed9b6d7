"""`make shots`: full-page screenshots of every chapter at 1280, 768 and 360 px, for review.

Builds the site into a temporary folder, serves it on 127.0.0.1, opens each page in Debian's
Chromium, waits until Python is ready (every figure live) and writes shots/SLUG-WIDTH.png (the
folder is git-ignored). `python bench/shots.py [SLUG ...] [--width W ...] [--out DIR]` narrows it.
"""

import argparse
import sys
from pathlib import Path

# run as `python bench/shots.py`: Python puts bench/ on the path, not the project's root
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, chromium, served_site

WIDTHS = (1280, 768, 360)
HEIGHTS = {1280: 900, 768: 1024, 360: 780}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*", help="chapters to shoot (default: every page)")
    parser.add_argument("--width", type=int, action="append", help="a width in px (repeatable)")
    parser.add_argument("--out", type=Path, default=ROOT / "shots")
    parser.add_argument("--site", type=Path, help="an already built site to shoot")
    args = parser.parse_args()
    with served_site(args.site) as (site, base), chromium() as (_, browser):
        slugs = args.slugs or sorted(p.stem for p in site.glob("*.html") if p.stem != "index")
        args.out.mkdir(parents=True, exist_ok=True)
        for width in args.width or WIDTHS:
            context = browser.new_context(
                viewport={"width": width, "height": HEIGHTS.get(width, 900)}
            )
            page = context.new_page()
            for slug in slugs:
                page.goto(f"{base}{slug}.html")
                if page.query_selector("[data-figure], [data-cell]"):
                    page.wait_for_selector("html.py-ready", timeout=120_000)
                page.evaluate("document.fonts.ready")
                path = args.out / f"{slug}-{width}.png"
                page.screenshot(path=str(path), full_page=True)
                print(path)
            context.close()


if __name__ == "__main__":
    main()
