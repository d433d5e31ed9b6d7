"""Build the Many Heads site: chapters/*.md -> site/, then optionally serve it.

    python build.py               build site/ (atomically: the old site stays if anything fails)
    python build.py serve         build, serve on 127.0.0.1:8000, rebuild when sources change
    python build.py fetch         fetch and verify Pyodide and numpy into the cache
    --pyodide-cdn                 load Pyodide from its official CDN instead of site/pyodide/
"""
import argparse
import base64
import hashlib
import json
import shutil
import sys
import tempfile
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
        body = ChapterRenderer(ch, env, root).render()
        prose = Prose(ch.path)
        sources = [prose.inline(s, ch.meta_lines["sources"]) for s in ch.meta["sources"]]
        pages.append((ch, body, sources))
    shutil.copytree(root / "templates" / "static", out / "static")
    common = {"pyodide_url": pyodide_url, "chapters": [c.meta for c in chapters],
              "csp": content_security_policy(pyodide_url), "sri": integrity(out / "static")}
    (out / "index.html").write_text(env.get_template("index.html").render(**common, title="Many Heads"), encoding="utf-8")
    for i, (ch, body, sources) in enumerate(pages):
        html = env.get_template("chapter.html").render(
            **common, ch=ch.meta, title=ch.meta["title"], body=body, sources=sources, number=i + 1, total=len(pages),
            prev=chapters[i - 1].meta if i else None, next=chapters[i + 1].meta if i + 1 < len(chapters) else None)
        (out / f"{ch.meta['slug']}.html").write_text(html, encoding="utf-8")
    files = python_files(root)
    for f in files:
        (out / "py" / f["path"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / f["path"], out / "py" / f["path"])
    (out / "py" / "files.json").write_text(json.dumps(files, indent=1))
    if (root / "toymodels" / "data").is_dir():  # fetched by Python on first use, not at start-up
        shutil.copytree(root / "toymodels" / "data", out / "py" / "toymodels" / "data")
    if pyodide_url == "pyodide/":
        assets.copy_runtime(out / "pyodide")


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


def main(argv=None):
    ap = argparse.ArgumentParser(description="Build (and serve) the Many Heads site.")
    ap.add_argument("command", nargs="?", default="build", choices=("build", "serve", "fetch"))
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
