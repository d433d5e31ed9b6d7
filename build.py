"""Build the Many Heads site: chapters/*.md -> site/, then optionally serve it.

    python build.py               build site/ (atomically: the old site stays if anything fails)
    python build.py serve         build, serve on 127.0.0.1:8000, rebuild when sources change
    python build.py fetch         fetch and verify Pyodide and numpy into the cache
    python build.py new "Title"   write chapters/NN-slug.md, a skeleton with the next order number
    python build.py check         build into a temporary folder and report every problem (--strict: warnings too)
    python build.py zip           build, then write manyheads-site.zip: the whole site, Pyodide inside
    --pyodide-cdn                 load Pyodide from its official CDN instead of site/pyodide/
"""
import argparse
import base64
import hashlib
import json
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from sitebuild import assets  # noqa: E402
from sitebuild.chapters import AuthorError, read  # noqa: E402
from sitebuild.markup import Prose  # noqa: E402
from sitebuild.pages import ChapterRenderer  # noqa: E402
from sitebuild.policy import content_security_policy  # noqa: E402


def load_chapters(root):
    """Every chapter, in order; two chapters may not share a slug or an order."""
    chapters = [read(p, root) for p in sorted((root / "chapters").glob("*.md"))]
    for key in ("slug", "order"):
        seen = {}
        for ch in chapters:
            v = ch.meta[key]
            if v in seen:
                raise AuthorError(ch.path, ch.meta_lines[key], f"{key} {v!r} is already used by {seen[v]}; "
                                                               f"every chapter needs its own {key}")
            seen[v] = ch.path
    return sorted(chapters, key=lambda c: c.meta["order"])


def environment(root):
    return Environment(loader=FileSystemLoader(root / "templates"), autoescape=select_autoescape(["html"]),
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def python_files(root):
    """The toymodels package as the browser imports it: path and a content hash for each file."""
    files = sorted((root / "toymodels").glob("*.py"))
    return [{"path": p.relative_to(root).as_posix(), "hash": hashlib.sha256(p.read_bytes()).hexdigest()[:12]}
            for p in files]


def integrity(static):
    """Subresource-integrity values for the files pages link to directly."""
    return {p.name: "sha384-" + base64.b64encode(hashlib.sha384(p.read_bytes()).digest()).decode()
            for p in static.iterdir() if p.suffix in (".js", ".css")}


def render_site(root, out, pyodide_url):
    """Write every page and asset into `out`; raises AuthorError on an author mistake."""
    env = environment(root)
    chapters = load_chapters(root)
    pages = []
    for ch in chapters:
        renderer = ChapterRenderer(ch, env, root)
        body = renderer.render()
        prose = Prose(ch.path)
        sources = [prose.inline(s, ch.meta_lines["sources"]) for s in ch.meta["sources"]]
        pages.append((ch, body, sources, renderer.figure_html))
    shutil.copytree(root / "templates" / "static", out / "static")
    common = {"pyodide_url": pyodide_url, "chapters": [c.meta for c in chapters], "root": "",
              "csp": content_security_policy(pyodide_url), "sri": integrity(out / "static")}
    (out / "index.html").write_text(env.get_template("index.html").render(**common, title="Many Heads"), encoding="utf-8")
    for i, (ch, body, sources, figures) in enumerate(pages):
        html = env.get_template("chapter.html").render(
            **common, ch=ch.meta, title=ch.meta["title"], body=body, sources=sources, number=i + 1, total=len(pages),
            prev=chapters[i - 1].meta if i else None, next=chapters[i + 1].meta if i + 1 < len(chapters) else None)
        (out / f"{ch.meta['slug']}.html").write_text(html, encoding="utf-8")
        for fid, figure in figures.items():  # each figure alone, for teachers to embed
            page = out / "embed" / ch.meta["slug"] / f"{fid}.html"
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(env.get_template("embed.html").render(
                **{**common, "root": "../../"}, ch=ch.meta, fid=fid, figure=figure, title=ch.meta["title"]), encoding="utf-8")
    files = python_files(root)
    for f in files:
        (out / "py" / f["path"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / f["path"], out / "py" / f["path"])
    (out / "py" / "files.json").write_text(json.dumps(files, indent=1))
    if (root / "toymodels" / "data").is_dir():  # fetched by Python on first use, not at start-up
        shutil.copytree(root / "toymodels" / "data", out / "py" / "toymodels" / "data")
    check_links(out, chapters)
    if pyodide_url == "pyodide/":
        assets.copy_runtime(out / "pyodide")
    write_service_worker(env, out)


def check_links(out, chapters):
    """Every internal link of every chapter leads to a page and anchor that exist."""
    for ch in chapters:
        page = out / f"{ch.meta['slug']}.html"
        html = page.read_text(encoding="utf-8")
        for href in re.findall(r'<a\b[^>]*\bhref="([^"]*)"', html):
            if re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I) or href.startswith("//"):
                continue
            path, _, anchor = href.partition("#")
            target = (page.parent / path.split("?")[0]).resolve() if path else page
            problem = None
            if not target.is_file() or out.resolve() not in target.parents:
                problem = f"the link to '{href}' leads to no page of this site"
            elif anchor and f'id="{anchor}"' not in target.read_text(encoding="utf-8"):
                problem = f"the link to '{href}' names an anchor '#{anchor}' that {path or 'this page'} does not have"
            if problem:
                raise AuthorError(ch.path, link_line(ch, href), problem + "; fix the link or the heading it points to")


def link_line(ch, href):
    """The line of the chapter that writes this link (Markdown keeps the target as written)."""
    for n, line in enumerate(ch.source.split("\n"), 1):
        if f"({href}" in line or f'"{href}"' in line or f"<{href}>" in line:
            return n
    return 1


def write_service_worker(env, out):
    """sw.js at the site's top: it precaches every file of this build, named by a hash of them all."""
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    digest = hashlib.sha256()
    for name in files:
        if not name.startswith("pyodide/"):
            digest.update(name.encode() + hashlib.sha256((out / name).read_bytes()).digest())
    (out / "sw.js").write_text(env.get_template("sw.js").render(
        build=digest.hexdigest()[:16], runtime=assets.PYODIDE_VERSION, files=["./"] + files), encoding="utf-8")


def build(root=ROOT, site=None, cdn=False):
    """Build into a temporary folder beside site/, then swap it in; on failure site/ is untouched."""
    site = Path(site or root / "site")
    tmp = Path(tempfile.mkdtemp(prefix="site.", dir=site.parent))
    try:
        render_site(root, tmp, assets.CDN_URL if cdn else "pyodide/")
        old = site.with_name(site.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if site.exists():
            site.rename(old)
        tmp.rename(site)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return site


def new_chapter(root, title):
    """A chapter skeleton that builds, with the next free order number."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "chapter"
    chapters = load_chapters(root)
    if any(c.meta["slug"] == slug for c in chapters):
        raise AuthorError(f"chapters/ (new '{title}')", 1, f"a chapter with slug '{slug}' exists already; choose another title")
    # orders from 90 up are kept for appendices such as the author guide
    order = max((c.meta["order"] for c in chapters if c.meta["order"] < APPENDIX_ORDER), default=0) + 1
    path = root / "chapters" / f"{order:02d}-{slug}.md"
    path.write_text(NEW_CHAPTER.format(title=title.replace('"', "'"), slug=slug, order=order), encoding="utf-8")
    return path


APPENDIX_ORDER = 90
NEW_CHAPTER = """+++
title = "{title}"
slug = "{slug}"
order = {order}
series = "Chapter {order} · Multi-head attention"
summary = "One sentence for the home page: what the reader will understand after this chapter."
sources = [
  "Vaswani, A. et al. (2017). *Attention Is All You Need.* NeurIPS.",
]
+++

Open with the question this chapter answers, in two or three sentences.

::: note How to continue
Every block is described in the author guide. A figure names a function in `toymodels/`;
`python build.py check` reports anything that needs fixing.
:::

## A first section

Prose, maths such as $d_\\text{{head}} = d_\\text{{model}} / h$, and figures go here.
"""


def zip_site(site, target):
    """One archive of the built site, Pyodide included, for a classroom without internet."""
    tmp = target.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(site.rglob("*")):
            if p.is_file():
                z.write(p, Path("manyheads") / p.relative_to(site))
    tmp.replace(target)
    return target


def main(argv=None):
    ap = argparse.ArgumentParser(description="Build (and serve) the Many Heads site.")
    ap.add_argument("command", nargs="?", default="build", choices=("build", "serve", "fetch", "new", "check", "zip"))
    ap.add_argument("title", nargs="?", help="with new: the chapter's title")
    ap.add_argument("--strict", action="store_true", help="with check: warnings fail too")
    ap.add_argument("--pyodide-cdn", action="store_true", help="load Pyodide from its CDN, not from site/pyodide/")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--test-tools", action="store_true", help="with fetch: also fetch axe-core for the tests")
    ap.add_argument("--out", type=Path, default=None, help="where to write the site (default: site/ in the root)")
    ap.add_argument("--root", type=Path, default=ROOT, help="the project folder holding chapters/, templates/, toymodels/")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    out = args.out or root / "site"
    try:
        if args.command == "fetch":
            print(assets.runtime_dir())
            if args.test_tools:
                print(f"{assets.AXE_SPEC}: {len(assets.axe_script()):,} characters, verified")
            return 0
        if args.command == "new":
            if not args.title:
                ap.error('new needs a title: python build.py new "My chapter"')
            print(f"wrote {new_chapter(root, args.title).relative_to(root)}")
            return 0
        if args.command == "check":
            from sitebuild.check import check
            return check(root, strict=args.strict)
        if args.command == "zip":
            target = zip_site(build(root, out, args.pyodide_cdn), root / "manyheads-site.zip")
            print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")
            return 0
        if args.command == "serve":
            from sitebuild.serve import serve
            return serve(root, out, args.port, ["--root", str(root)] + (["--pyodide-cdn"] if args.pyodide_cdn else []))
        site = build(root, out, args.pyodide_cdn)
        print(f"built {site}")
        return 0
    except AuthorError as e:
        print(e, file=sys.stderr)
        return 1
    except assets.AssetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
