"""How big what a chapter makes may be: one data file, one figure's markup, one page.

Nothing big stops the build, but each reaches readers: every data file of toymodels/data/ goes
into the site, the offline zip and a SCORM package of each chapter whose Python reads it; a
figure's markup goes into its page, its embed page and every answer Python sends on a tap,
and a figure whose answers outgrow sitebuild/pipeline/prerender.py's budget gets no prepared first
taps at all; a page is what a reader downloads before the first paint. So each over its budget is a
warning (`check --strict` fails) at the line to change: the line that read the data file (else
the file itself), the figure's `def render`, the page's biggest figure block; and a live
figure none of whose states fits the budget of the prepared first taps is named at its block.
Each budget is several times the biggest the site's own chapters make. A live cell's output
is capped where the cell runs.
"""

from pathlib import Path

from ..pipeline import prerender
from . import browser

DATA_FILE_BYTES = 2_000_000  # one file of toymodels/data/
FIGURE_BYTES = 300_000  # one answer's markup: its html and slots, as UTF-8
PAGE_BYTES = 1_000_000  # one chapter's HTML page


def size(n):
    """N bytes as an author reads it: '4.2 MB', '310 kB'."""
    return f"{n / 1e6:.1f} MB" if n >= 1_000_000 else f"{n / 1e3:.0f} kB"


def markup_bytes(answer):
    """The bytes of markup in a figure's answer: its html and every slot."""
    pieces = [answer.get("html") or "", *(answer.get("slots") or {}).values()]
    return sum(len(p.encode("utf-8")) for p in pieces)


def data_files(data_dir):
    """(file, line, message) for each file of DATA_DIR over DATA_FILE_BYTES: at the line of
    toymodels/ seen reading it (sitebuild/authoring/browser.py), else at the file."""
    out = []
    data_dir = Path(data_dir)
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()) if data_dir.is_dir() else []:
        n = path.stat().st_size
        if n <= DATA_FILE_BYTES:
            continue
        rel = path.relative_to(data_dir).as_posix()
        at = browser.READ_AT.get(rel, (f"toymodels/data/{rel}", 1))
        out.append(
            (
                *at,
                f"toymodels/data/{rel} is {size(n)}, more than the {size(DATA_FILE_BYTES)} a "
                "data file may be: the site, its offline zip and each SCORM package whose "
                "chapter reads it carry it, and a reader's browser fetches it whole; keep only "
                "what the figures show (float16, fewer steps, one file per state)",
            )
        )
    return out


def page(chapter, html, figures, answers=None):
    """[(file, line, message)]: the chapter's page HTML over PAGE_BYTES, at the block of its
    biggest figure (FIGURES: fid -> its markup), else at the chapter's first line; and each
    live figure that got no prepared first taps at all (ANSWERS: fid -> {state: answer}), at
    its block."""
    out = [
        (
            chapter.path,
            _block_line(chapter.source, fid) or 1,
            f"figure '{fid}' gets no prepared first taps: not one of its states fits what they "
            f"may take ({size(prerender.BUDGET)} gzipped, {size(prerender.RAW_BUDGET)} raw), "
            "so a tap before Python is ready waits for it; draw less",
        )
        for fid, kept in (answers or {}).items()
        if not kept
    ]
    n = len(html.encode("utf-8"))
    if n <= PAGE_BYTES:
        return out
    line, biggest = 1, ""
    if figures:
        fid = max(figures, key=lambda f: len(str(figures[f]).encode("utf-8")))
        line = _block_line(chapter.source, fid) or 1
        biggest = f"; its biggest figure, '{fid}', is {size(len(str(figures[fid]).encode()))}"
    return out + [
        (
            chapter.path,
            line,
            f"the page {chapter.meta['slug']}.html is {size(n)}, more than the "
            f"{size(PAGE_BYTES)} a page may be, which a reader downloads before seeing it"
            f"{biggest}; draw less, or split the chapter",
        )
    ]


def _block_line(source, fid):
    for n, text in enumerate(source.split("\n"), 1):
        if text.strip().split() == [":::", "figure", fid]:
            return n
    return None
