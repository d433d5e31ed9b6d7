"""`python build.py check`: build into a temporary folder and report every problem an author
can fix.

Errors (the build's own, broken links, a request to another origin) always fail; warnings
(http:// links, a TODO left in the text, a skipped heading level, an image without a text
alternative) fail only with --strict. Each is printed as `chapters/NAME.md:LINE: message`.
"""

import re
import sys
import tempfile
from pathlib import Path

from .build import build, environment
from .chapters import AuthorError, read
from .markup import tags
from .pages import ChapterRenderer

# elements that make the browser load something, and the attributes naming what
LOADS = {
    "script": ("src",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "audio": ("src",),
    "video": ("src", "poster"),
    "source": ("src", "srcset"),
    "track": ("src",),
    "link": ("href",),
    "embed": ("src",),
    "object": ("data",),
    "input": ("src",),
    "image": ("href", "xlink:href"),
    "use": ("href", "xlink:href"),
}
CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)")


def warnings(root):
    """(file, line, message) for each weak spot in the chapters' text."""
    out = []
    for path in sorted((root / "chapters").glob("*.md")):
        rel = path.relative_to(root).as_posix()
        level, fence = 1, False
        for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
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


def foreign(site):
    """(page, url) for everything a page, its <style> or a stylesheet would load from another
    origin."""
    out = []
    for page in sorted(site.rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        for url in _loads(html):
            if re.match(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", url, re.I) or re.match(
                r"^\s*https?:", url, re.I
            ):
                out.append((page.relative_to(site).as_posix(), url))
        inline = re.findall(r"<style\b[^>]*>(.*?)</style", html, re.S | re.I)
        out += [(page.relative_to(site).as_posix(), url) for url in _css_foreign(*inline)]
    for css in sorted(site.rglob("*.css")):
        out += [
            (css.relative_to(site).as_posix(), url)
            for url in _css_foreign(css.read_text(encoding="utf-8"))
        ]
    return out


def _css_foreign(*sheets):
    """The addresses on other origins that the CSS of SHEETS would load."""
    for css in sheets:
        yield from (u for u in CSS_URL.findall(css) if "://" in u or u.startswith("//"))


def _loads(html):
    """Every address an HTML page makes the browser load, read by an HTML parser (so quoted
    either way or not at all), srcset's addresses one by one, and a refresh's target."""
    for tag, attributes, _ in tags(html):
        named = dict(attributes)
        for name in LOADS.get(tag, ()):
            value = named.get(name) or ""
            if name == "srcset":
                yield from (part.split()[0] for part in value.split(",") if part.split())
            elif value:
                yield value
        if tag == "meta" and (named.get("http-equiv") or "").lower() == "refresh":
            target = re.search(r"url\s*=\s*['\"]?([^'\"]+)", named.get("content") or "", re.I)
            if target:
                yield target.group(1)


def check(root, strict=False):
    problems, notes = [], [f"{f}:{n}: warning: {m}" for f, n, m in warnings(root)]
    # each chapter on its own first, so that one broken chapter does not hide another's mistakes
    env = environment(root)
    for path in sorted((root / "chapters").glob("*.md")):
        try:
            ChapterRenderer(read(path, root), env, root).render()
        except AuthorError as e:
            problems.append(str(e))
    with tempfile.TemporaryDirectory() as tmp:
        try:
            # the whole build then finds what spans chapters: duplicate slugs, broken links
            site = build(root, Path(tmp) / "site")
        except AuthorError as e:
            if str(e) not in problems:
                problems.append(str(e))
        else:
            problems += [
                f"site/{page}: loads {url} from another origin; serve it from this site instead"
                for page, url in foreign(site)
            ]
    for line in problems + notes:
        print(line, file=sys.stderr)
    failed = bool(problems) or (strict and bool(notes))
    print(
        f"check: {len(problems)} error(s), {len(notes)} warning(s){' (strict)' if strict else ''}: "
        f"{'FAILED' if failed else 'ok'}",
        file=sys.stderr,
    )
    return 1 if failed else 0
