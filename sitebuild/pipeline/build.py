"""The build: chapters/*.md -> site/, as a plain pipeline of small steps.

`build()` renders every page into a new folder beside site/ and swaps it in with one rename
(sitebuild/pipeline/publish.py), so an author mistake (an AuthorError naming file and line), a crash
or a kill leaves the previous site/ whole. Scripts, styles, the shipped Python and its data get
content-addressed names (sitebuild/pipeline/fingerprint.py), so a page never runs with another
build's files.

The steps, in order: read the chapters, render each chapter's body (its figures are called
here), copy the Python that ships to the browser and its data, copy the static files, write
the home page, the chapters and one embed page per figure, check the internal links, add the
Python runtime, and write the service worker that precaches it all.
"""

import base64
import dataclasses
import difflib
import errno
import functools
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from toymodels import BUILD_ONLY

from .. import models
from ..authoring import budgets
from ..fetched import assets, bytecode
from . import (
    cellrunner,
    chaptercache,
    fingerprint,
    icon,
    imports,
    prerender,
    publish,
    reading,
    styles,
)
from .archive import python_zip, unsafe_name
from .chapters import AuthorError, Chapter, read, reading_path
from .classbank import class_bank
from .markup import Prose
from .pages import ChapterRenderer
from .policy import content_security_policy, early_script


def build(
    root, site=None, cdn=False, lms=None, only=None, notes=None, reuse=None, lrs=None, memory=None
):
    """Build into a new folder beside site/, then swap it in with one rename, holding a lock
    on the folder around site/; on failure site/ is untouched (sitebuild/pipeline/publish.py). LMS
    ("1.2" or "2004") builds the chapters for a SCORM package instead (sitebuild/lms/scorm.py):
    no home page, embeds or service worker, and no links between chapters; ONLY, a list of
    slugs, then limits the chapters built. LMS "cmi5" builds them for a cmi5 package
    (sitebuild/lms/cmi5.py), whose pages may also connect to LRS, an origin, if given. Warnings
    (file, line, message), such as a figure slow to draw, are added to NOTES, a list, if
    given. REUSE, a folder, keeps each chapter rendered for the next build, which renders
    again only those whose sources changed (sitebuild/pipeline/chaptercache.py). MEMORY, a
    Memory, with REUSE, lets the next build of this process write only what a chapter's edit
    changed."""
    if only is not None and not lms:
        raise ValueError("only a build for an LMS leaves chapters out: its pages link to none")
    site = Path(site or Path(root) / "site").absolute()
    site.parent.mkdir(parents=True, exist_ok=True)
    with publish.locked(site):
        tmp = None
        try:
            tmp = publish.new_folder(site)
            url = assets.CDN_URL if cdn else "pyodide/"
            noted = [] if notes is None else notes
            made = _render_site(Path(root), tmp, url, lms, only, noted, reuse, lrs, memory, site)
            publish.publish(tmp, site)
            if memory is not None:
                memory.last = made and dataclasses.replace(made, site=_identity(site))
        except OSError as e:
            full = disk_full(e, tmp or site.parent)
            if full is None:
                raise
            raise full from None
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
    return site


class DiskFull(Exception):
    """The disk (or the builder's quota) filled up while the build wrote a file: the build
    stops, and site/ stays the previous build."""

    def __init__(self, path):
        super().__init__(f"the disk is full writing {path}; free space and build again")
        self.path = path


FULL = (errno.ENOSPC, errno.EDQUOT)


def disk_full(e, fallback):
    """DiskFull for the OSError E if it says the disk is full, else None. It names the file
    being written as E does (shutil's copies name the destination second), else FALLBACK.
    shutil.copytree gathers its failures into one shutil.Error of (source, destination, the
    error as text), so there the errno is read from the text."""
    if isinstance(e, shutil.Error) and isinstance(e.args[0], list):
        said = tuple(f"[Errno {n}]" for n in FULL)
        return next((DiskFull(dst) for _, dst, why in e.args[0] if why.startswith(said)), None)
    if e.errno not in FULL:
        return None
    return DiskFull(e.filename2 or e.filename or fallback)


def load_chapters(root):
    """Every chapter, in order; two chapters may not share a slug or an order."""
    chapters = [read(p, root) for p in sorted((root / "chapters").glob("*.md"))]
    for key in ("slug", "order"):
        seen = {}
        for ch in chapters:
            v = ch.meta[key]
            if v in seen:
                message = (
                    f"{key} {v!r} is already used by {seen[v]}; every chapter needs its own {key}"
                )
                raise AuthorError(ch.path, ch.meta_lines[key], message)
            seen[v] = ch.path
    return sorted(chapters, key=lambda c: c.meta["order"])


@functools.lru_cache(maxsize=8)
def environment(root):
    """The templates of ROOT, kept for the next build in this process: Jinja compiles each
    template once and compiles it again only when its file changed (auto_reload)."""
    return Environment(
        loader=FileSystemLoader(root / "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def shipped_python(root):
    """The toymodels package as the browser imports it, without its build-only packages:
    path and a content hash for each file."""
    package = root / "toymodels"
    files = sorted(
        p for p in package.rglob("*.py") if p.relative_to(package).parts[0] not in BUILD_ONLY
    )
    return [
        {
            "path": p.relative_to(root).as_posix(),
            "hash": hashlib.sha256(p.read_bytes()).hexdigest()[:12],
        }
        for p in files
    ]


@dataclass
class Shared:
    """What a build makes from the code alone, whatever the chapters say: the shipped Python
    (its folder, its data files), the bytecode's folder, the static files (by plain name, their
    content-addressed paths, and their integrity values), the styles and the early script; and
    the warnings about its data files."""

    python: str
    data: list
    compiled: str
    asset: dict
    sri: dict
    css: str
    early: str
    notes: list


@dataclass
class Built:
    """What the last good build of a process wrote (Memory)."""

    site: tuple  # the published folder as it stood after the build (_identity)
    inputs: tuple  # the code's hash (chaptercache.code) and the build's settings
    metas: list  # every chapter's front matter, in order
    keys: dict  # each chapter's path -> the key it was rendered under (chaptercache.key)
    shared: Shared
    page_notes: dict  # slug -> the warnings about its written page
    digests: dict  # (inode, size, modification time) -> a file's sha256, for the service worker


class Memory:
    """What the builds of one process (serve's builder, sitebuild/serving/worker.py) remember of
    the last good one, so that a one-chapter edit builds in a fraction of a second. When the
    code (templates/, toymodels/, sitebuild/), the build's settings and every chapter's front
    matter are as they were, and site/ is still the folder that build published, the next build
    renders only the chapters whose sources changed, writes their pages and embeds, the home
    page, the class page and the service worker, and takes every other file from the site it
    replaces as it is (a hard link, so no byte is copied), into a new folder swapped in as
    always. An edited front matter writes every chapter's page (the menus, previous and next),
    still rendering only the edited chapters; any other change builds the whole site."""

    def __init__(self):
        self.last = None  # Built
        # kept while the code is as it was (chaptercache.code): the templates as read, each
        # chapter's live cells' requests and answers (cellrunner.Replay), so that an edit to
        # its prose runs no cell again, and the toymodels modules that the modules its
        # chapters name import (_python_of), so that no module's source is parsed again
        self.code, self.env, self.replays, self.imported = None, None, {}, {}


def _identity(site):
    """The published folder and its service worker, by inode and time: another build
    published there (a `build.py build` beside serve) shows as another identity."""
    try:
        folder, sw = os.stat(site), os.stat(Path(site) / "sw.js")
    except OSError:
        return None
    return folder.st_dev, folder.st_ino, sw.st_ino, sw.st_mtime_ns, sw.st_size


def _render_site(
    root,
    out,
    pyodide_url,
    lms=None,
    only=None,
    notes=None,
    reuse=None,
    lrs=None,
    memory=None,
    site=None,
):
    """Write every page and asset into `out`; raises AuthorError on an author mistake. With
    LMS, only what a SCORM package holds: the chapters (those of ONLY, if given), static
    files, Python and runtime. With MEMORY (and REUSE), write only what changed since its last
    build, taking the rest from SITE (Memory); -> what was built (Built), with REUSE."""
    code = chaptercache.code(root) if reuse is not None else None
    if memory is not None and (memory.code != code or code is None):
        # what is kept only while the code is as it was: the templates read, the cells' answers
        memory.code, memory.env, memory.replays, memory.imported = code, environment(root), {}, {}
    env = environment(root) if memory is None else memory.env
    chapters = load_chapters(root)
    built = [ch for ch in chapters if only is None or ch.meta["slug"] in only]
    following = {ch.path: _following(chapters, ch) for ch in built}
    keys = {ch.path: code and chaptercache.key(ch, following[ch.path], code) for ch in built}
    # which models' files the site carries
    modules = _python_of(root, built, {} if memory is None else memory.imported)
    inputs = (code, pyodide_url, lms, only, lrs, modules)
    metas = [c.meta for c in chapters]
    last = memory.last if memory is not None else None
    if last is not None and (last.inputs != inputs or last.site != _identity(site)):
        last = None
    replays = {} if memory is None else memory.replays  # chapter path -> its cells' Replay
    pages = [
        _chapter_page(
            ch,
            env,
            root,
            following[ch.path],
            notes,
            reuse,
            keys[ch.path],
            replays.setdefault(ch.path, cellrunner.Replay()),
        )
        for ch in built
    ]
    if last is None:
        shared = _shared(root, out, pyodide_url, lms, modules)
        written = pages
    else:
        shared = last.shared
        same = last.metas == metas
        written = [
            p for p in pages if not same or keys[p.chapter.path] != last.keys.get(p.chapter.path)
        ]
        carried = {p.chapter.meta["slug"] for p in pages} - {
            p.chapter.meta["slug"] for p in written
        }
        _carry(site, out, [m["slug"] for m in last.metas if m["slug"] not in carried])
    notes += shared.notes
    common = {
        "pyodide_url": pyodide_url,
        "bytecode": shared.compiled,
        "chapters": metas,
        "root": "",
        "csp": content_security_policy(pyodide_url, shared.css, shared.early, lrs),
        "styles": Markup(shared.css),
        "early": Markup(shared.early),
        "asset": shared.asset,
        "sri": shared.sri,
        "lms": lms,
    }
    if not lms:
        _write(out / "index.html", _home(env, common, chapters))
        if last is None:
            _write_results(env, out, common, root)
        _write_class(env, out, common, chapters, pages)
    page_notes = {} if last is None else dict(last.page_notes)
    for page in written:
        _write_chapter(env, out, common, chapters, page)
        html = (out / f"{page.chapter.meta['slug']}.html").read_text(encoding="utf-8")
        page_notes[page.chapter.meta["slug"]] = budgets.page(
            page.chapter, html, page.figures, page.answers
        )
        if not lms:
            _write_embeds(env, out, common, page)
    for page in pages:
        notes += page_notes[page.chapter.meta["slug"]]
    check_links(out, built)  # a page taken as it was may link to a heading edited away
    digests = {} if last is None else last.digests
    if not lms:
        asset, compiled, python = shared.asset, shared.compiled, shared.python
        immutable = [*asset.values(), *shared.data, *(compiled + n for n in bytecode.FILES)]
        immutable += [p.relative_to(out).as_posix() for p in out.glob("prerendered/*.json")]
        python_files = (out / python).rglob("*")
        immutable += [p.relative_to(out).as_posix() for p in python_files if p.is_file()]
        runtime = ["pyodide/", compiled, python]
        _write_service_worker(env, out, immutable, runtime, digests)
    return Built(None, inputs, metas, keys, shared, page_notes, digests) if code else None


def _shared(root, out, pyodide_url, lms, modules):
    """The files a build makes from the code alone, whatever the chapters say (Shared): the
    shipped Python and its data, the bytecode, the static files, the training runs' page, the
    Python runtime, and the live models of those whose shipped module is among MODULES (the
    modules the chapters' Python may import)."""
    notes = []
    python, data = _copy_python(root, out)
    notes += budgets.data_files(root / "toymodels" / "data")
    compiled = bytecode.copy_bytecode(out)
    shutil.copytree(root / "templates" / "static", out / "static")
    _write(out / "static" / "morphdom.js", assets.morphdom_script())
    _write(out / "static" / "purify.js", assets.dompurify_script())
    if lms == "cmi5":  # the cmi5 client (static/cmi5.js and the library), in cmi5 packages only
        _write(out / "static" / "xapi-cmi5.js", assets.cmi5_script())
    else:
        (out / "static" / "cmi5.js").unlink()
    drawing = (root / "templates" / "icon.svg").read_text("utf-8")
    _write(out / "static" / "icon.png", icon.png(drawing))
    asset = fingerprint.static_files(out / "static", "../" + python)
    if pyodide_url == "pyodide/":
        assets.copy_runtime(out / "pyodide")
    if not lms:
        models.copy_all(root, out / "models", modules)
    css, early = styles.text(root), early_script(root)
    return Shared(python, data, compiled, asset, _integrity(out, asset), css, early, notes)


# what a build writes from the chapters: the rest of a site is the code's (Shared)
CHAPTERS_OWN = ("index.html", "class.html", "sw.js")


def _carry(site, out, slugs):
    """Every file of SITE into OUT as a hard link, but for what the chapters make: CHAPTERS_OWN,
    and each chapter of SLUGS's page, embeds and first taps (written again). Where the file
    system has no hard links, a copy (a reflink where it can)."""
    own = {*CHAPTERS_OWN, *(f"{s}.html" for s in slugs), *(f"embed/{s}" for s in slugs)}
    answers = tuple(f"prerendered/{s}." for s in slugs)
    for top, dirs, files in os.walk(site):
        rel = Path(top).relative_to(site).as_posix()
        rel = "" if rel == "." else rel + "/"
        dirs[:] = [d for d in dirs if rel + d not in own]
        (out / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            if rel + name in own or (rel + name).startswith(answers):
                continue
            try:
                os.link(os.path.join(top, name), out / rel / name)
            except OSError:
                assets.copy_file(Path(top) / name, out / rel / name)


def _python_of(root, chapters, known):
    """The toymodels modules the browser may import for CHAPTERS: those their figures, checks
    and live cells name, with every module these import (read from their source), as a
    frozenset. KNOWN, a dict, keeps the answer for the modules named, for a build of the same
    code (parsing every module's source is a good part of a one-chapter build)."""
    named = frozenset().union(*(imports.named_modules(ch) for ch in chapters))
    if named not in known:
        known[named] = frozenset(imports.imported(named, root))
    return known[named]


def _following(chapters, ch):
    """The meta of the chapter after CH on the readers' path; None after the last, and for an
    appendix (which is not on the path)."""
    path, _ = reading_path(chapters)
    i = next((k for k, c in enumerate(path) if c is ch), None)
    return path[i + 1].meta if i is not None and i + 1 < len(path) else None


def _home(env, common, chapters):
    """The home page: the path, each chapter with what it teaches and its reading time, then
    the appendices apart."""
    path, appendices = reading_path(chapters)

    def entry(c):
        n = reading.prose_words(c.body)
        return {**c.meta, "words": n, "minutes": reading.minutes(n)}

    return env.get_template("index.html").render(
        **common,
        title="Many Heads",
        path=[entry(c) for c in path],
        appendices=[c.meta for c in appendices],
        words_per_minute=reading.WORDS_PER_MINUTE,
    )


RESULTS = "toymodels/training/RESULTS.md"  # the character model's training runs, for readers


def _write_results(env, out, common, root):
    """The training runs' report as a page of the site (training-results.html), so chapters
    can link to it; the file itself stays in toymodels/training/, which does not ship."""
    source = root / RESULTS
    if not source.is_file():
        return
    _refuse_links(root, [source])
    text = source.read_text(encoding="utf-8")
    title = re.match(r"#\s+(.+)", text).group(1).strip() if text.startswith("#") else "Results"
    body = Markup(Prose(RESULTS).block(text.split("\n", 1)[1] if text.startswith("#") else text, 2))
    html = env.get_template("document.html").render(
        **common, title=title, body=body, source=RESULTS
    )
    _write(out / "training-results.html", html)


def _write_class(env, out, common, chapters, pages):
    """The class summary (class.html): a teacher's page that reads the students' "Your results"
    files in the browser; it carries the path's questions as the pages ask them
    (sitebuild/pipeline/classbank.py), to name each answer and its feedback."""
    path, _ = reading_path(chapters)
    on_path = [p for p in pages if p.chapter in path]
    html = env.get_template("class.html").render(
        **common,
        title="Class summary",
        bank=class_bank(on_path, env.get_template("blocks.html").module),
    )
    _write(out / "class.html", html)


@dataclass
class Page:
    """One chapter as the build's steps pass it on, once its body is rendered."""

    chapter: Chapter
    body: Markup  # the chapter's HTML, figures drawn
    sources: list  # each source of the front matter as inline HTML
    figures: dict  # figure id -> the figure's HTML, for its embed page
    answers: dict  # figure id -> {state key: answer}: the first taps before Python
    report: dict  # figure id -> (bytes of answers kept, gzip-compressed; states left out)
    questions: list = field(default_factory=list)  # its checks, guesses and exercises, in order


def _render_chapter(ch, env, root, following=None, notes=None, replay=None):
    """One chapter rendered: its Page (REPLAY: its cells' last answers, cellrunner.Replay)."""
    return _rendered(ch, env, root, following, notes, replay)[0]


def _rendered(ch, env, root, following=None, notes=None, replay=None):
    """(CH's Page, its ChapterRenderer, which holds its figures)."""
    renderer = ChapterRenderer(ch, env, root, following, notes, replay)
    body = renderer.render()
    prose = Prose(ch.path)
    sources = [prose.inline(s, ch.meta_lines["sources"]) for s in ch.meta["sources"]]
    answers, report = prerender.page_answers(renderer.figures, str(body))
    page = Page(ch, body, sources, renderer.figure_html, answers, report, renderer.questions)
    return page, renderer


def render_each(root, reuse, notes):
    """Each chapter of ROOT read and rendered on its own, as the build renders it, so that one
    broken chapter does not hide another's mistakes (`build.py check`): -> (the renderers of
    those rendered, which hold their figures; the AuthorErrors of the others). Warnings go to
    NOTES. Each Page is kept in REUSE (chaptercache.py) under the build's key, so a build given
    REUSE next renders none of them again."""
    env, code = environment(root), chaptercache.code(root)
    read_ok, errors = [], []
    for path in sorted((root / "chapters").glob("*.md")):
        try:
            read_ok.append(read(path, root))
        except AuthorError as e:
            errors.append(e)
    chapters = sorted(read_ok, key=lambda c: c.meta["order"])
    renderers = []
    for ch in read_ok:
        following, mine = _following(chapters, ch), []
        try:
            page, renderer = _rendered(ch, env, root, following, mine)
        except AuthorError as e:
            errors.append(e)
        else:
            renderers.append(renderer)
            k = chaptercache.key(ch, following, code)
            chaptercache.store(reuse, ch, k, page, mine)
        finally:
            notes += mine
    return renderers, errors


def _chapter_page(ch, env, root, following, notes, reuse, k, replay=None):
    """CH's Page: rendered, or as a build before rendered it under the key K (REUSE, a
    folder, else None)."""
    if reuse is None:
        return _render_chapter(ch, env, root, following, notes, replay)
    kept = chaptercache.load(reuse, ch, k)
    if kept is None:
        mine = []
        kept = _render_chapter(ch, env, root, following, mine, replay), mine
        chaptercache.store(reuse, ch, k, *kept)
    notes += kept[1]
    return kept[0]


def _write(path, data):
    """DATA (text, as UTF-8, or bytes) as the file PATH, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    except OSError as e:
        e.filename = e.filename or str(path)  # a write that fails names no file
        raise


def _write_chapter(env, out, common, chapters, page):
    """One chapter's page. Previous and next follow the readers' path; an appendix (order 90
    and up, such as the author guide) is outside it and links only to the home page."""
    ch = page.chapter
    path, _ = reading_path(chapters)
    k = next((k for k, c in enumerate(path) if c is ch), None)
    html = env.get_template("chapter.html").render(
        **common,
        ch=ch.meta,
        title=ch.meta["title"],
        body=page.body,
        sources=page.sources,
        number=None if k is None else k + 1,
        total=len(path),
        prev=path[k - 1].meta if k else None,
        next=path[k + 1].meta if k is not None and k + 1 < len(path) else None,
        prerendered=_write_answers(out, ch.meta["slug"], page.answers),
    )
    if common["lms"]:
        pages = [c.meta["slug"] for c in chapters] + ["index", "training-results"]
        html = _unlink_chapters(html, pages)
    _write(out / f"{ch.meta['slug']}.html", html)


def _write_answers(out, slug, answers):
    """A page's pre-rendered first taps (sitebuild/pipeline/prerender.py), a file for each figure,
    prerendered/SLUG.FID.HASH.json holding {FID: its answers}, so that the page fetches a
    figure's answers only once the figure comes near the screen (static/prerendered.js); ->
    {FID: its file's path from the site's top}, or None for a page without any."""
    files = {}
    for fid, states in answers.items():
        if not states:
            continue
        data = json.dumps({fid: states}, separators=(",", ":")).encode("utf-8")
        files[fid] = f"prerendered/{fingerprint.hashed_name(f'{slug}.{fid}.json', data)}"
        (out / "prerendered").mkdir(exist_ok=True)
        _write(out / files[fid], data)
    return files or None


def _unlink_chapters(html, slugs):
    """In an LMS each chapter is an activity of its own, and the LMS, not a link, moves a
    student between them: a link to another chapter keeps its words, without the link."""
    pages = "|".join(re.escape(slug) for slug in slugs)
    link = re.compile(rf'<a href="(?:{pages})\.html(?:#[^"]*)?"[^>]*>(.*?)</a>', re.S)
    return link.sub(r'<span class="mh-chapter-ref">\1</span>', html)


def _write_embeds(env, out, common, page):
    """Each figure alone on a page, for teachers to embed."""
    ch = page.chapter
    for fid, figure in page.figures.items():
        html = env.get_template("embed.html").render(
            **{**common, "root": "../../"},
            ch=ch.meta,
            fid=fid,
            figure=figure,
            title=ch.meta["title"],
        )
        _write(out / "embed" / ch.meta["slug"] / f"{fid}.html", html)


def _copy_python(root, out):
    """The shipped Python, files.json listing it for the browser, and the data it reads
    (fetched by Python on first use, not at start-up), content-addressed: returns the folder
    "py/HASH/" the pages use and the data files' paths."""
    files = shipped_python(root)
    _refuse_links(root, [root / f["path"] for f in files])
    if (root / "toymodels" / "data").is_dir():
        _refuse_links(root, (root / "toymodels" / "data").rglob("*"))
        _refuse_names(root, (root / "toymodels" / "data").rglob("*"))
    for f in files:
        (out / "py" / f["path"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / f["path"], out / "py" / f["path"])
    _write(out / "py" / "files.json", json.dumps(files, indent=1))
    folder, data = fingerprint.python_folder(out / "py", root / "toymodels" / "data")
    python_zip(out / folder)
    return folder, data


def _refuse_links(root, paths):
    """Symbolic links are never published: one could point at any file of the build machine."""
    for path in paths:
        if path.is_symlink():
            raise AuthorError(
                path.relative_to(root).as_posix(),
                1,
                "is a symbolic link; the build publishes only real files, so copy the file here "
                "or remove the link",
            )


def _refuse_names(root, paths):
    """A data file goes into the zip and SCORM packages, unpacked on Windows too: its name may
    not be one that leaves the folder there (a\\..\\x, C:x) or that Windows cannot hold."""
    for path in paths:
        rel = path.relative_to(root)
        if unsafe_name(rel):
            raise AuthorError(
                repr(rel.as_posix())[1:-1],
                1,
                "this file's name holds a \\, a :, a line break or another character a zip "
                'opened on Windows cannot hold (<>"|?*), or ends in a dot or a space; rename it',
            )


def _integrity(out, asset):
    """Subresource-integrity values of the scripts and styles pages link to, by plain name."""
    return {
        name: "sha384-" + base64.b64encode(hashlib.sha384((out / p).read_bytes()).digest()).decode()
        for name, p in asset.items()
        if name.endswith((".js", ".css"))
    }


def check_links(out, chapters):
    """Every internal link of every chapter leads to a page and anchor that exist; a broken one
    is reported with the closest page or id there is (difflib), the likely typo."""
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
                pages = sorted(p.stem for p in out.glob("*.html"))  # the slugs, and index
                near = difflib.get_close_matches(path.removesuffix(".html"), pages, n=1, cutoff=0.6)
                problem = f"the link to '{href}' leads to no page of this site" + (
                    f" (did you mean '{near[0]}.html{href[len(path) :]}'?)" if near else ""
                )
            elif anchor and f'id="{anchor}"' not in (text := target.read_text(encoding="utf-8")):
                ids = re.findall(r'\bid="([^"]+)"', text)
                near = difflib.get_close_matches(anchor, ids, n=1, cutoff=0.5)
                problem = (
                    f"the link to '{href}' names an anchor '#{anchor}' that "
                    f"{path or 'this page'} does not have"
                    + (f" (did you mean '{path}#{near[0]}'?)" if near else "")
                )
            if problem:
                fix = "; fix the link or the heading it points to"
                raise AuthorError(ch.path, _link_line(ch, href), problem + fix)


def _link_line(ch, href):
    """The line of the chapter that writes this link (Markdown keeps the target as written)."""
    for n, line in enumerate(ch.source.split("\n"), 1):
        if f"({href}" in line or f'"{href}"' in line or f"<{href}>" in line:
            return n
    return 1


def _write_service_worker(env, out, immutable, runtime, digests=None):
    """sw.js at the site's top, named by a hash of every file of this build: it keeps what the
    reader opens and, when asked, the whole site, whose size it is told here; it serves the
    content-addressed files (`immutable`) from its copy first. RUNTIME lists the folders a
    page that runs Python needs ("pyodide/", the bytecode's, the site's Python's). DIGESTS,
    a dict, keeps each file's sha256 by (inode, size, modification time) for the next build of
    this process, which takes most files as hard links of these (Memory)."""
    known = {} if digests is None else digests
    # not the reader's own model (models/): it is fetched only when the reader asks, and kept
    # by the page in a cache of its own
    files = sorted(
        p.relative_to(out).as_posix()
        for p in out.rglob("*")
        if p.is_file() and not p.relative_to(out).as_posix().startswith("models/")
    )
    fixed = set(immutable)
    digest = hashlib.sha256()
    digests, seen = {}, {}
    for name in files:
        if not name.startswith("pyodide/"):
            stat = (out / name).stat()
            held = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            sha = known.get(held) or hashlib.sha256((out / name).read_bytes()).hexdigest()
            seen[held] = sha
            digest.update(name.encode() + bytes.fromhex(sha))
            if name not in fixed:
                digests[name] = sha
    known.clear()
    known.update(seen)
    digests["./"] = digests["index.html"]
    sizes = [(out / name).stat().st_size for name in files]
    sw = env.get_template("sw.js").render(
        build=digest.hexdigest()[:16],
        runtime=assets.PYODIDE_VERSION,
        files=["./"] + files,
        sizes=[sizes[files.index("index.html")]] + sizes,
        whole=sum(sizes),
        digests=digests,
        shell=[n for n in files if n.startswith("static/") and n in fixed],
        python=[
            n for n in files if n.startswith(tuple(runtime)) and "/toymodels/" not in n
        ],  # the site's Python comes as one zip; its files one by one are for older builds
        immutable=sorted(immutable),
    )
    _write(out / "sw.js", sw)
