"""Authors and teachers: the chapter scaffold, `build.py check`, embedding, results as CSV, the
offline zip, the service worker, and printing."""

import functools
import json
import re
import shutil
import subprocess
import sys
import threading
import zipfile
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import open_before_python, open_ready, serve_dir
from playwright.sync_api import Error, expect
from test_build import GOOD, RECAP, project

from sitebuild.pipeline import build as site_build
from sitebuild.pipeline.archive import zip_site

ROOT = Path(__file__).resolve().parent.parent


def run(*args, root):
    return subprocess.run(
        [sys.executable, str(ROOT / "build.py"), *args, "--root", str(root)],
        capture_output=True,
        text=True,
    )


def test_new_writes_a_skeleton_that_builds(tmp_path):
    root = project(tmp_path, {"01-a.md": GOOD})
    done = run("new", "Heads in practice: a tour", root=root)
    assert (
        done.returncode == 0
        and done.stdout.strip() == "wrote chapters/02-heads-in-practice-a-tour.md"
    )
    text = (root / "chapters/02-heads-in-practice-a-tour.md").read_text()
    assert 'title = "Heads in practice: a tour"' in text and "order = 2" in text
    site = site_build.build(root, root / "site")
    assert "Heads in practice: a tour" in (site / "heads-in-practice-a-tour.html").read_text()
    again = run("new", "Heads in practice: a tour", root=root)
    assert (
        again.returncode == 1
        and "a chapter with slug 'heads-in-practice-a-tour' exists already" in again.stderr
    )


CHECKS = [
    (
        "broken page link",
        GOOD + "\nSee [the other page](nowhere.html).\n",
        1,
        "chapters/a.md:21: the link to 'nowhere.html' leads to no page of this site; fix the link "
        "or the heading it points to",
    ),
    (
        "broken anchor",
        GOOD + "\nSee [below](#no-such-heading).\n",
        1,
        "chapters/a.md:21: the link to '#no-such-heading' names an anchor '#no-such-heading' that "
        "this page does not have",
    ),
    (
        "another origin",
        GOOD + "\n![x](https://example.org/x.png)\n",
        1,
        "site/test.html: loads https://example.org/x.png from another origin; serve it from this "
        "site instead",
    ),
]


@pytest.mark.parametrize("name,text,code,message", CHECKS, ids=[c[0] for c in CHECKS])
def test_check_reports_errors(tmp_path, name, text, code, message):
    root = project(tmp_path, {"a.md": text})
    done = run("check", root=root)
    assert done.returncode == code and message in done.stderr, done.stderr


def test_check_reports_the_mistakes_of_every_chapter(tmp_path):
    second = GOOD.replace('slug = "test"', 'slug = "two"').replace("order = 1", "order = 2")
    root = project(
        tmp_path,
        {
            "a.md": GOOD.replace("::: slot", "::: slott"),
            "b.md": second.replace("alt: Three grids.\n", ""),
        },
    )
    done = run("check", root=root)
    assert done.returncode == 1
    assert "chapters/a.md:18: unknown block 'slott'" in done.stderr
    assert "chapters/b.md:12: 'figure' block needs a field 'alt: …'" in done.stderr
    assert "check: 2 error(s)" in done.stderr


def test_new_leaves_appendix_orders_alone(tmp_path):
    guide = GOOD.replace('slug = "test"', 'slug = "guide"').replace("order = 1", "order = 90")
    root = project(tmp_path, {"01-a.md": GOOD, "90-guide.md": guide})
    assert run("new", "Next one", root=root).stdout.strip() == "wrote chapters/02-next-one.md"


def test_new_after_places_the_chapter_renumbers_and_moves_the_lead_in(tmp_path):
    """`new --after a` puts the chapter second: the chapters after it one order later (and
    their series' numbers), a's sentence on what comes next moved to the new chapter's recap,
    a lead-in for the author to rewrite in a's; an appendix keeps its order."""

    def chapter(slug, order, sentence):
        text = GOOD.replace('slug = "test"', f'slug = "{slug}"').replace(
            "order = 1", f"order = {order}"
        )
        recap = RECAP.replace("::: recap", f"::: recap {sentence}".rstrip())
        return text.replace("Chapter 1 ·", f"Chapter {order} ·") + recap

    guide = GOOD.replace('slug = "test"', 'slug = "guide"').replace("order = 1", "order = 90")
    chapters = {
        "01-a.md": chapter("a", 1, "It adds b."),
        "02-b.md": chapter("b", 2, "It adds c."),
        "03-c.md": chapter("c", 3, ""),
        "90-guide.md": guide,
    }
    root = project(tmp_path, chapters)
    for wrong, said in (
        ("bb", "no chapter has the slug 'bb' (did you mean 'b'?); the chapters on the readers' "
         "path are a, b, c"),
        ("guide", "'guide' is an appendix (order 90 or more), outside the readers' path; place "
         "a chapter after one of a, b, c"),
    ):  # fmt: skip
        done = run("new", "Same first letter", "--after", wrong, root=root)
        assert (
            done.returncode == 1 and done.stderr == f"chapters/ (new --after {wrong}):1: {said}\n"
        )
        assert {p.name: p.read_text() for p in (root / "chapters").iterdir()} == chapters
    done = run("new", "Same first letter", "--after", "a", root=root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n") == [
        "wrote chapters/02-same-first-letter.md",
        "changed chapters/02-b.md: order 2 -> 3, series 'Chapter 2' -> 'Chapter 3'",
        "changed chapters/03-c.md: order 3 -> 4, series 'Chapter 3' -> 'Chapter 4'",
        "changed chapters/02-same-first-letter.md: its recap leads on with the sentence "
        "chapters/01-a.md's had",
        "and gave the recap of chapters/01-a.md a sentence leading to it: rewrite that sentence "
        "to say what the new chapter adds",
        "",
    ]
    now = {p.name: p.read_text() for p in (root / "chapters").iterdir()}
    assert now["01-a.md"] == chapters["01-a.md"].replace(
        "It adds b.", "Next, Same first letter: rewrite this line to say what it adds."
    )
    assert "order = 2\n" in now["02-same-first-letter.md"]
    assert "\n::: recap It adds b.\n" in now["02-same-first-letter.md"]
    assert now["02-b.md"] == chapter("b", 3, "It adds c.")
    assert now["03-c.md"] == chapter("c", 4, "")
    assert now["90-guide.md"] == guide
    site = site_build.build(root, root / "site")
    assert [
        a.split('"')[0] for a in (site / "a.html").read_text().split('rel="next" href="')[1:2]
    ] == ["same-first-letter.html"]


def test_check_warnings_fail_only_when_strict(tmp_path):
    text = (
        GOOD
        + "\nTODO: finish.\n\n#### Too deep\n\nRead [this](http://example.org/).\n\n![](static/icon.svg)\n"
    )
    root = project(tmp_path, {"a.md": text})
    lenient, strict = run("check", root=root), run("check", "--strict", root=root)
    assert lenient.returncode == 0 and strict.returncode == 1
    for message in (
        "chapters/a.md:21: warning: a TODO is left in the text",
        "chapters/a.md:23: warning: heading level 4 follows level 1; do not skip a level",
        "chapters/a.md:25: warning: this link uses http://; use https:// so readers are not sent "
        "to an insecure page",
        "chapters/a.md:27: warning: this image has no text alternative: write ![what it shows](…)",
        "chapters/a.md:27: warning: this chapter is on the readers' path but has no recap; end "
        "it with '::: recap', three or four lines '- what the reader now knows' and ':::' (see "
        "the author guide)",
    ):
        assert message in strict.stderr, strict.stderr
    assert strict.stderr.strip().endswith("check: 0 error(s), 5 warning(s) (strict): FAILED")


@pytest.mark.browser
def test_embed_button_gives_a_snippet_in_the_current_state(page, base_url):
    open_before_python(page, base_url + "many-heads.html")
    page.get_by_role("button", name="kept", exact=True).click()
    page.wait_for_selector(".mh-shares caption:has-text('“kept”')")
    page.locator("#three-heads [data-embed]").click()
    code = page.locator("#three-heads .mh-snippet").input_value()
    assert code.startswith(
        f'<iframe src="{base_url}embed/many-heads/three-heads.html?three-heads.word=6" '
        'title="Figure 1'
    )
    assert code.endswith(f'<script src="{base_url}static/embed-resize.js" async></script>')


# the course page names no icon of its own, so that Chromium asks its server for no favicon.ico
PARENT = """<!doctype html><html><head><title>A course page</title>
<link rel="icon" href="data:,"></head><body>
<h1>Week 3: attention</h1>
<iframe id="fig" src="{src}" title="Figure" width="100%" height="200"></iframe>
<script src="{resize}"></script></body></html>"""
# the iframe is as tall as the content of the frame (`inner`) reported
FITS = """(inner) => {
  const height = document.getElementById("fig").getBoundingClientRect().height;
  return Math.abs(height - inner) <= 4;
}"""


@pytest.mark.browser
def test_a_figure_embedded_on_another_origin_sizes_itself_and_works(page, base_url, tmp_path):
    src = f"{base_url}embed/many-heads/three-heads.html?three-heads.head=3"
    (tmp_path / "course.html").write_text(
        PARENT.format(src=src, resize=f"{base_url}static/embed-resize.js")
    )
    # the course page is someone else's: a plain server, without this site's policy
    other = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    )
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{other.server_port}/course.html")
        frame = page.frame_locator("#fig")
        frame.locator("html.py-ready").wait_for(timeout=90_000)
        # the frame is of another origin than the course page: its height is read inside it,
        # then the course page waits until the frame's reported height has reached the iframe
        inner = frame.locator("html").evaluate("el => el.scrollHeight")
        page.wait_for_function(FITS, arg=inner)
        height = page.evaluate("document.getElementById('fig').getBoundingClientRect().height")
        assert height > 300 and abs(height - inner) <= 4, (height, inner)
        frame.get_by_role("button", name="key", exact=True).click()
        frame.locator(".mh-head[data-head='3'] tr.sel th:text-is('key')").wait_for()
        assert [s.is_visible() for s in frame.locator(".mh-head").all()] == [False, False, True]
        expect(frame.locator("[data-back]")).to_have_attribute(  # once the URL is written
            "href", f"{base_url}many-heads.html?three-heads.head=3&three-heads.word=4#three-heads"
        )
    finally:
        other.shutdown()


@pytest.mark.browser
def test_print_shows_the_pre_rendered_figures_without_controls(page, base_url):
    open_before_python(page, base_url + "many-heads.html")
    page.get_by_role("button", name="kept", exact=True).click()
    page.wait_for_selector(".mh-shares caption:has-text('“kept”')")
    page.emulate_media(media="print")
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert page.locator(".mh-shares caption").inner_text() == "Shares for “it” in each head"
    for selector in (".mh-controls", "[data-embed]", ".mh-pystatus", ".mh-results", ".pager"):
        assert not page.locator(selector).first.is_visible(), selector
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    page.emulate_media(media="screen")
    assert page.locator(".mh-shares caption").inner_text() == "Shares for “kept” in each head"


@pytest.mark.browser
def test_zip_unpacked_works_behind_a_plain_server(page, site, tmp_path):
    archive = zip_site(site, tmp_path / "site.zip")
    with zipfile.ZipFile(archive) as z:
        z.extractall(tmp_path / "classroom")
    server = serve_dir(tmp_path / "classroom")
    try:
        open_ready(page, f"http://127.0.0.1:{server.server_port}/manyheads/many-heads.html")
        page.get_by_role("button", name="key", exact=True).click()
        page.wait_for_selector(".mh-shares caption:has-text('“key”')")
    finally:
        server.shutdown()


def site_cache_keys(page):
    """The names of the caches that hold a build of the site, as `page` sees them."""
    return sorted(k for k in page.evaluate("caches.keys()") if k.startswith("mh-site-"))


# the site's build caches, as the page sees them, once they are not `first` (an update has been
# kept) and, with `alone`, are one cache only (the previous build is deleted); null after `ms`.
# The cache API has no event to wait for, so the page polls it. (Not page.wait_for_function: it
# takes the promise an async predicate returns for true and returns at once.)
CACHES_UPDATED = """async ([first, alone, ms]) => {
  const until = performance.now() + ms;
  for (;;) {
    const keys = (await caches.keys()).filter((k) => k.startsWith("mh-site-")).sort();
    const updated = JSON.stringify(keys) !== JSON.stringify(first);
    if (updated && (!alone || keys.length === 1)) return keys;
    if (performance.now() > until) return null;
    await new Promise((r) => setTimeout(r, 200));
  }
}"""


def wait_for_updated_caches(page, first, alone=False):
    """The site's build caches once an update has replaced `first` (and, with alone, is the
    only build left)."""
    keys = page.evaluate(CACHES_UPDATED, [first, alone, 60_000])
    assert keys is not None, f"the caches are still {site_cache_keys(page)} after 60 s"
    return keys


def wait_for_offline_copy(page):
    """The service worker has kept the page and what it loaded, and said so to the page."""
    page.wait_for_selector("html[data-offline-kept]", state="attached", timeout=120_000)
    return site_cache_keys(page)


# a page of the server outside the site; it names an icon of its own, so that Chromium does
# not ask for a favicon.ico that is not there (the server's policy refuses a data: icon)
OUTSIDE = """<!doctype html><html><head><title>Outside</title>
<link rel="icon" href="outside.svg"></head><body>Not the site.</body></html>"""
ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>'


@pytest.mark.browser
def test_second_visit_works_with_the_server_gone_and_updates_are_not_mixed(
    new_page, tmp_path, site, rendered
):
    # the site lives under a sub-path, so a page of the same origin outside it can watch its caches
    (tmp_path / "www").mkdir()
    (tmp_path / "www/outside.html").write_text(OUTSIDE)
    (tmp_path / "www/outside.svg").write_text(ICON)
    # the site as built (a copy of the run's: a build of this repository gives the same files)
    site = Path(shutil.copytree(site, tmp_path / "www/manyheads"))
    server = serve_dir(tmp_path / "www")
    outside = f"http://127.0.0.1:{server.server_port}/outside.html"
    url = f"http://127.0.0.1:{server.server_port}/manyheads/many-heads.html"
    page = new_page(service_workers="allow")
    try:
        open_ready(page, url)
        first = wait_for_offline_copy(page)
        # the site is updated: a new build replaces the old one on the same server
        chapter = (ROOT / "chapters/01-many-heads.md").read_text()
        updated = tmp_path / "updated"
        (updated / "chapters").mkdir(parents=True)
        for name in ("templates", "toymodels"):
            (updated / name).symlink_to(ROOT / name)
        for p in (ROOT / "chapters").glob("*.md"):
            (updated / "chapters" / p.name).write_text(p.read_text())
        (updated / "chapters/01-many-heads.md").write_text(
            chapter.replace("## What real heads do", "## What real heads do, updated")
        )
        # the run's renderings of the chapters (a copy: this build keeps its own first chapter's),
        # so that only the chapter changed is rendered again
        kept = shutil.copytree(rendered, tmp_path / "rendered")
        site_build.build(updated, site, reuse=kept)
        open_ready(page, url)
        assert page.locator("h2:has-text('What real heads do, updated')").count() == 1
        # the page asks for the update once Python is up
        assert wait_for_updated_caches(page, first) != first
        # Chromium sometimes keeps the new worker waiting, skipWaiting or not, while a page of the
        # site is open (one run in three here); it takes over when the reader leaves. A visit into
        # the site at that very moment can hang in Chromium (seen under load), so the test watches
        # from outside the site, where no service worker answers
        page.goto(outside)
        keys = wait_for_updated_caches(page, first, alone=True)
        assert len(keys) == 1 and keys != first, (first, keys)
    finally:
        server.shutdown()
        server.server_close()
    # the network to the server is gone: the second visit still renders and computes
    open_ready(page, url)
    assert page.locator("h2:has-text('What real heads do, updated')").count() == 1
    page.get_by_role("button", name="key", exact=True).click()
    page.wait_for_selector(".mh-shares caption:has-text('“key”')")


def home_copy_mb(site):
    """What a visit to the home page keeps, in MB as said: the page and the hashed static files."""
    hashed = [
        p for p in (site / "static").iterdir() if re.fullmatch(r"[\w-]+\.[0-9a-f]{12}\.\w+", p.name)
    ]
    total = (site / "index.html").stat().st_size + sum(p.stat().st_size for p in hashed)
    return f"{total / 1e6:.1f} MB"


@pytest.mark.browser
def test_a_visit_to_the_home_page_keeps_it_alone(new_page, site):
    """The home page runs no Python: a visit keeps it and its scripts, for an offline visit, and
    fetches neither the Python runtime nor any chapter for the copy."""
    server = serve_dir(site)
    base = f"http://127.0.0.1:{server.server_port}/"
    page = new_page(service_workers="allow")
    fetched = []
    page.context.on("request", lambda r: fetched.append(r.url.removeprefix(base)))
    page.goto(base)
    page.wait_for_selector("html[data-offline-kept=page]", state="attached", timeout=60_000)
    server.shutdown()
    server.server_close()
    assert not [u for u in fetched if u.startswith(("pyodide/", "bytecode/", "py/", "embed/"))]
    assert not [u for u in fetched if u.endswith(".html")], fetched
    page.reload()
    expect(page.locator(".mh-offline [role=status]")).to_have_text(
        "Kept in this browser for offline reading: this page, with what it loaded "
        f"({home_copy_mb(site)}). Other pages need the network."
    )
    with pytest.raises(Error, match="ERR_FAILED"):
        page.goto(base + "split-attend.html")


def results_csv(rows):
    """A "Your results" file as results.js writes one: every field quoted, CRLF line ends."""
    columns = ["student", "chapter", "block", "kind", "question", "attempt", "answer"]
    columns += ["result", "time"]
    quoted = ['"' + str(v).replace('"', '""') + '"' for v in columns]
    lines = [",".join(quoted)]
    for r in rows:
        lines.append(",".join('"' + str(r[c]).replace('"', '""') + '"' for c in columns))
    return "\r\n".join(lines) + "\r\n"


def test_the_class_summary_reads_students_files_in_the_page_and_sends_nothing(
    page, base_url, site, tmp_path
):
    from test_questions import on_the_pages

    asked = on_the_pages(site)["one-head.check-1"]
    wrong, right = asked["choices"][2], asked["choices"][asked["right"].index(True)]
    hostile = '<img src=x onerror="document.title=1">'

    def attempt(student, block, n, answer, result, chapter="One head, from scratch"):
        return {
            "student": student, "chapter": chapter, "block": block, "kind": "check yourself",
            "question": "?", "attempt": n, "answer": answer, "result": result,
            "time": "2026-12-07T09:00:00.000Z",
        }  # fmt: skip

    files = {
        "ada.csv": [
            attempt("Ada", "check-1", 1, wrong, "not yet"),
            attempt("Ada", "check-1", 2, right, "correct"),
        ],
        "other.csv": [attempt(hostile, "check-1", 1, hostile, "not yet", chapter="Biology")],
        "bob.csv": [attempt(hostile, "check-1", 1, wrong, "not yet")],
    }
    paths = []
    for name, rows in files.items():
        (tmp_path / name).write_text(results_csv(rows), "utf-8")
        paths.append(tmp_path / name)
    page.goto(base_url + "class.html")
    expect(page.locator("[data-class-drop]")).to_be_visible()  # its script is ready
    sent = []
    page.on("request", lambda r: sent.append(r.url))
    page.set_input_files("[data-class-files]", paths)
    rows = page.locator("[data-class-questions] tbody tr")
    expect(page.locator("[data-class-count]")).to_have_text(f"2 students: Ada, {hostile}.")
    assert rows.count() == len(json_bank_questions(site))
    check = rows.filter(has_text=asked["question"])
    expect(check.locator("td")).to_have_text(
        ["One head, from scratch", asked["question"], "2", "0", f"{wrong} (2×)",
         asked["feedback"][2], "1.5"]
    )  # fmt: skip
    expect(page.locator("[data-class-skipped] li")).to_have_text(
        ["other.csv is from another course: no chapter of this site (it has Biology)."]
    )
    students = page.locator("[data-class-students] tbody tr")
    expect(students.nth(1).locator("th")).to_have_text(hostile)
    assert page.locator("[data-class] img").count() == 0 and page.title() != "1"
    assert sent == []  # the files are read in the page: nothing is requested, nothing sent


def json_bank_questions(site):
    """Every question class.html carries, read from its data."""
    html = (site / "class.html").read_text("utf-8")
    data = re.search(r"data-class-bank='([^']*)'", html).group(1)
    return [q for chapter in json.loads(data) for q in chapter["questions"]]
