"""`python build.py check`: build into a temporary folder and report every problem an author
can fix.

Errors (the build's own, broken links, a request to another origin) always fail; warnings
(http:// links, a TODO left in the text, a skipped heading level, an image without a text
alternative, a path chapter without a recap, a placeholder of `build.py new` left in, a
figure slow to draw, a warning numpy or Python gave as a figure drew, a chapter's module was
imported, a value for prose or an exercise's check ran) fail only with --strict, which also
times each live figure's first state in the reader's Python, Pyodide under Node
(sitebuild/authoring/drawtime.py). Each is printed as `FILE:LINE: message`.
"""

import json
import re
import sys
import tempfile
from pathlib import Path

from ..pipeline.build import build, render_each
from ..pipeline.chapters import APPENDIX_ORDER, AuthorError, Block, read
from ..pipeline.markup import elements, in_select, parsed
from . import drawtime, sanitizer
from .scaffold import placeholders

# elements that make the browser load something, and the attributes naming what
LOADS = {
    "script": ("src", "href", "xlink:href"),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "audio": ("src",),
    "video": ("src", "poster"),
    "source": ("src", "srcset"),
    "track": ("src",),
    "link": ("href", "imagesrcset"),
    "embed": ("src",),
    "object": ("data",),
    "input": ("src",),
    "image": ("href", "xlink:href"),
    "use": ("href", "xlink:href"),
    "feimage": ("href", "xlink:href"),
    "a": ("ping",),
    "area": ("ping",),
    "form": ("action",),
    "button": ("formaction",),
    "body": ("background",),
    "table": ("background",),
    "td": ("background",),
    "th": ("background",),
}
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)|@import\s+['"]([^'"]+)""", re.I)
# SVG's attributes that are CSS, and may name a file in url()
PRESENTATION = {"fill", "stroke", "mask", "clip-path", "filter", "cursor"} | {
    f"marker-{at}" for at in ("start", "mid", "end")
}
# where a browser goes to another origin: a scheme (http:, javascript:) or two slashes, either
# way round (it reads \ as /), once it has dropped tabs and line breaks anywhere and spaces and
# control characters at the ends
OFF_SITE = re.compile(r"^(?:(?!data:|blob:)[a-z][a-z0-9+.-]*:|[/\\]{2})", re.I)
# in the note of a warning the code of toymodels/ set off (figures.Drawing, blame.warning_notes)
WARNED = "set off a warning ("


def warnings(root):
    """(file, line, message) for each weak spot in the chapters' text."""
    out = []
    for path in sorted((root / "chapters").glob("*.md")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        out += [(rel, n, message) for n, message in placeholders(text)]
        out += _no_recap(path, root)
        level, fence = 1, False
        for n, line in enumerate(text.split("\n"), 1):
            if line.startswith(("```", "~~~")):
                fence = not fence
            if fence:
                continue
            if re.search(r"\]\(http://", line):
                out.append(
                    (
                        rel,
                        n,
                        "this link uses http://; "
                        "use https:// so readers are not sent to an insecure page",
                    )
                )
            if re.search(r"\bTODO\b", line):
                out.append((rel, n, "a TODO is left in the text"))
            if re.search(r"!\[\s*\]\(", line):
                out.append(
                    (rel, n, "this image has no text alternative: write ![what it shows](…)")
                )
            m = re.match(r"^(#{1,6})\s", line)
            if m:
                if len(m.group(1)) > level + 1:
                    out.append(
                        (
                            rel,
                            n,
                            f"heading level {len(m.group(1))} follows level {level}; "
                            "do not skip a level",
                        )
                    )
                level = len(m.group(1))
    return out


def _no_recap(path, root):
    """A chapter on the readers' path ends with a recap: a warning at its last line if not (a
    chapter that cannot be read is the build's error, reported apart)."""
    try:
        chapter = read(path, root)
    except AuthorError:
        return []
    if chapter.meta["order"] >= APPENDIX_ORDER:
        return []
    if any(isinstance(p, Block) and p.name == "recap" for p in chapter.body):
        return []
    lines = chapter.source.rstrip().split("\n")
    return [
        (
            chapter.path,
            len(lines),
            "this chapter is on the readers' path but has no recap; end it with '::: recap', "
            "three or four lines '- what the reader now knows' and ':::' (see the author guide)",
        )
    ]


def off_site(url):
    """Whether a browser would take URL to another origin (or run it, javascript:)."""
    return bool(OFF_SITE.match(re.sub(r"[\t\n\r]", "", url).strip("\x00- ")))


def foreign(site):
    """(file, what) for everything a page, its styles, a stylesheet or one of the build's stored
    answers (prerendered/*.json) would load from another origin, or would do to send the
    reader away: a <meta> refresh or a <base> (none of which the site uses), a form or a link
    ping to another origin, or an on* handler; markup in a <select> that browsers read
    differently; and in stored answers, whatever the page's sanitizer would drop. Pages are
    read as a browser parses them."""
    out = []
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site).as_posix()
        out += [(rel, what) for what in _away(page.read_text(encoding="utf-8"), document=True)]
    for css in sorted(site.rglob("*.css")):
        out += [
            (css.relative_to(site).as_posix(), f"loads {u.strip()} from another origin")
            for u in _css_urls(css.read_text(encoding="utf-8"))
            if off_site(u)
        ]
    for stored in sorted(site.glob("prerendered/*.json")):
        rel = stored.relative_to(site).as_posix()
        for html in sorted(set(markup_in(json.loads(stored.read_text(encoding="utf-8"))))):
            out += [(rel, what) for what in _away(html)]
            out += [
                (rel, f"{what}, which a figure's markup may not hold (static/sanitize.js)")
                for _, what in sanitizer.refused(html, select=False)
            ]
    return out


def markup_in(value):
    """Every string holding markup in a stored answer (dicts and lists walked through)."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for v in value:
            yield from markup_in(v)
    elif isinstance(value, str) and "<" in value:
        yield value


def _away(html, document=False):
    """What HTML would load from another origin, or do to leave the page; and markup in a
    <select> that the reader's browser would read otherwise than this check (markup.in_select)."""
    root, errors = parsed(html, document)
    for line, what in in_select(errors):
        yield (
            f"line {line}: {what} inside a <select>, which Chromium keeps and this check's "
            "parser drops (a <meta> refresh there sends the reader away); a <select> holds "
            "only <option> and <optgroup>"
        )
    for tag, named, text in elements(html, document, text=True, root=root):
        if tag == "meta" and (named.get("http-equiv") or "").strip().lower() == "refresh":
            yield f"a <meta> refresh ({named.get('content')!r}) sends the reader away; remove it"
        if tag == "base":
            yield f"a <base> ({named.get('href')!r}) changes where every address leads; remove it"
        urls = []
        for name in LOADS.get(tag, ()):
            value = named.get(name) or ""
            if name.endswith("srcset"):
                urls += [part.split()[0] for part in value.split(",") if part.split()]
            else:
                urls += value.split() if name == "ping" else [value]
        css = [v for k, v in named.items() if k == "style" or k in PRESENTATION]
        urls += _css_urls(*css, text if tag == "style" else "")
        yield from (
            f"loads {u.strip()} from another origin; serve it from this site instead"
            for u in urls
            if off_site(u)
        )
        yield from (
            f"<{tag}> carries {name}, a script the pages may not run; remove it"
            for name in named
            if name.startswith("on")
        )


def _css_urls(*sheets):
    """Every address the CSS of SHEETS names in url() or @import."""
    return [url or imported for css in sheets for url, imported in CSS_URL.findall(css)]


def check(root, strict=False, timed=None):
    """Check the chapters of ROOT, print what is wrong, return the exit code; STRICT fails on
    warnings too and TIMED (by default STRICT) times each live figure in Pyodide."""
    timed = strict if timed is None else timed
    problems, found = [], warnings(root)
    with tempfile.TemporaryDirectory() as tmp:
        # each chapter on its own first, so that one broken chapter does not hide another's
        # mistakes, kept for the whole build, which then renders none again
        kept = Path(tmp) / "rendered"
        rendered, errors = render_each(root, kept, found)
        problems += [str(e) for e in errors]
        try:
            # the whole build then finds what spans chapters: duplicate slugs, broken links
            site = build(root, Path(tmp) / "site", notes=found, reuse=kept)
        except AuthorError as e:
            if str(e) not in problems:
                problems.append(str(e))
        else:
            try:  # each live figure's first state timed in the reader's Python, meanwhile
                times = drawtime.start(root, site, drawtime.figures_of(rendered)) if timed else list
                problems += [f"site/{page}: {what}" for page, what in foreign(site)]
                found += times()
            except RuntimeError as e:
                problems.append(str(e))
    notes = list(dict.fromkeys(f"{f}:{n}: warning: {m}" for f, n, m in found))
    for line in problems + notes:
        print(line, file=sys.stderr)
    failed = bool(problems) or (strict and bool(notes))
    warned = sum(WARNED in note for note in notes)
    print(
        f"check: {len(problems)} error(s), {len(notes)} warning(s)"
        f"{f' ({warned} of them set off by the code of toymodels/)' if warned else ''}"
        f"{' (strict)' if strict else ''}: {'FAILED' if failed else 'ok'}",
        file=sys.stderr,
    )
    return 1 if failed else 0
