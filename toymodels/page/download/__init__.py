"""A figure to take away: its picture as SVG and the numbers behind it as CSV.

Both come from the figure's own `render(state, fid)`, the function that draws it on screen, so
the files hold exactly the numbers the reader sees: `files` calls it with the reader's state and
reads what it returned (the figure's HTML and its slots). Each table becomes CSV rows, one per
cell (its table, row, column, the number in it and the cell's text as shown), under a header
naming the figure, its state and its source. The SVG stands alone: it shows what the page shows
of the figure, in the page's order (its text, its tables as grids shaded as on screen with the
bars in their rows, the pictures the figure drew as SVG, the items of a list of pictures side by
side with their labels), leaves out its controls (their state is written under the picture) and
what a narrow screen shows in place of a whole picture (`mh-narrow-only`), wraps every line to
its width, and carries the rules of the page's style sheet that its pictures use (the light
theme's colours; only what an SVG draws with; no @import, no url(), no script). The files are
named by chapter, figure and state (`one-head-figure-2-angle-0-length-2`), never by the site's
name, which is also a chapter's ("Many heads"). A figure that draws numbers as one picture
rather than as tables (Real heads' "All 72 heads") offers them to the CSV with an optional
`download_tables(state, fid)` in its module, made from the same data it draws: a list of tables,
each {"caption", "columns", "rows": [(label, [cell text, …])], "words": [columns that hold
words, never a number]}, whose cells become rows as a table's do. Nothing here computes a number
of its own, and the browser only saves what this returns: nothing is sent anywhere.

Every piece of text goes through escaping (a reader's own sentence may hold anything), SVG the
figure drew passes through `clean_svg`, and a CSV field that a spreadsheet would run as a
formula is neutralised.

The parts: reader.py reads the figure's HTML, sheet.py writes the CSV, layout.py lays out the
SVG and styles.py picks the page's CSS its pictures use.
"""

import importlib
import re
import unicodedata
from urllib.parse import urlsplit

from ..figure import check
from .layout import picture
from .reader import offered, read, value
from .sheet import safe, table_csv

__all__ = ["file_name", "files", "safe", "value"]


def _slug(text, most=40):
    """TEXT in lower-case letters, digits and single hyphens, at most MOST characters (cut
    between words where it can be)."""
    plain = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")
    if len(slug) > most:
        slug = slug[: most + 1].rsplit("-", 1)[0] if "-" in slug[:most] else slug[:most]
    return slug.strip("-")


def file_name(source, caption, fid, state):
    """The files' name without extension: the chapter (from the page's address SOURCE, an
    embedded figure's too), the figure's number (from its CAPTION, else its id FID) and its
    state, e.g. 'one-head-figure-2-angle-30-length-2'; letters, digits and hyphens only."""
    parts = [p for p in urlsplit(str(source)).path.split("/") if p]
    if "embed" in parts[:-1]:
        chapter = parts[parts.index("embed") + 1]
    else:
        chapter = parts[-1].rsplit(".", 1)[0] if parts else ""
    number = re.match(r"\s*Figure\s+(\d+)", str(caption))
    pieces = [_slug(chapter) or "figure", f"figure-{number.group(1)}" if number else _slug(fid)]
    pieces += [_slug(f"{k}-{v}", 30) for k, v in state.items() if str(v) != ""]
    return _slug("-".join(p for p in pieces if p), 120)


def files(model, state, fid, caption, source, css=""):
    """{"svg", "csv", "name"} of the figure drawn by MODEL ('toymodels.MODULE:render') in
    STATE, or {"error"} when the state cannot be drawn. CAPTION and SOURCE (the page's address)
    are plain text for the files' headers; CSS is the page's style sheet, whose rules for the
    figure's own pictures the SVG carries."""
    name, _, func = str(model).partition(":")
    if not name.startswith("toymodels.") or func != "render":
        return {"error": f"{model} is not a figure"}
    module = importlib.import_module(name)
    answer = check(getattr(module, func)(state, fid))
    if answer["error"]:
        return {"error": answer["error"]}
    html = answer["html"] + "".join(answer["slots"].values())
    tables, shown = read(html)
    drawn = answer["state"]
    more = getattr(module, "download_tables", None)
    numbers = tables + (offered(more(drawn, fid)) if more else [])
    return {
        "svg": picture(shown, str(caption), drawn, str(source), str(css)),
        "csv": table_csv(numbers, str(caption), drawn, str(source)),
        "name": file_name(source, caption, fid, drawn),
    }
