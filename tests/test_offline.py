"""Offline copies and updates: content-addressed files, one build per page, one copy per course.

Every server here listens on 127.0.0.1 and is started by the test that uses it."""

import functools
import hashlib
import json
import re
import shutil
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import open_ready, serve_dir
from playwright.sync_api import Error as PlaywrightError
from test_build import GOOD

from sitebuild.pipeline import build as site_build
from sitebuild.serving.serve import Handler

# its few tests each keep the whole site offline, worth several browser tests in the order
# workers take modules (conftest.py), which starts it early rather than last
SCHEDULE_WEIGHT = 30

ROOT = Path(__file__).resolve().parent.parent
HASHED = re.compile(r"^(?P<stem>[\w-]+)\.(?P<hash>[0-9a-f]{12})\.(?P<ext>js|css|png)$")


REAL_HEADS = """
::: figure real-heads
model: toymodels.real_heads.figure:render
caption: Real heads.
alt: Maps of real heads.
:::
"""


def variant(tmp_path, label, other=False):
    """A project whose chapter and main.js both say `label`, with this repository's toymodels;
    its page is test.html (and, with OTHER, a second chapter's is other.html, and test.html
    also holds a figure that reads data files)."""
    root = tmp_path / f"project-{label}"
    (root / "chapters").mkdir(parents=True)
    shutil.copytree(ROOT / "templates", root / "templates")
    (root / "toymodels").symlink_to(ROOT / "toymodels")
    main = root / "templates/static/main.js"
    main.write_text(main.read_text() + f'\ndocument.documentElement.dataset.variant = "{label}";\n')
    chapter = GOOD.replace("Some prose", f"Variant {label}: some prose")
    if other:  # first, so that it is in view and Python draws it at once
        first = "\n::: figure three-heads"
        chapter = chapter.replace(first, REAL_HEADS + first)
    (root / "chapters/a.md").write_text(chapter)
    if other:
        second = GOOD.replace('slug = "test"', 'slug = "other"').replace("order = 1", "order = 2")
        (root / "chapters/b.md").write_text(second.replace("Some prose", "The other chapter"))
    return root


KEPT = "async (urls) => (await Promise.all(urls.map((u) => caches.match(u)))).every(Boolean)"


def wait_for_offline_copy(page, kept="page", seconds=120):
    """The site's service worker has kept the page (and what it loaded; `kept="site"`: the whole
    site, as the reader chose) and said so to the page, which then offers or shows it."""
    page.wait_for_selector(
        f"html[data-offline-kept={kept}]", state="attached", timeout=seconds * 1000
    )


def computes(page):
    """Python answers a reader's tap on the page's figure."""
    page.get_by_role("button", name="key", exact=True).first.click()
    page.wait_for_selector(".mh-shares caption:has-text('“key”')", timeout=60_000)


def static_names(site):
    """The names of the files in a build's static/ folder."""
    return {p.name for p in (site / "static").iterdir()}


# ---- the build -------------------------------------------------------------------------------


def test_pages_load_only_content_addressed_files(tmp_path):
    root = variant(tmp_path, "1")
    site = site_build.build(root, tmp_path / "site", cdn=True)
    html = (site / "test.html").read_text() + (site / "embed/test/three-heads.html").read_text()
    loads = re.findall(r'(?:src|href)="(?:\.\./\.\./)?(static/[^"]+)"', html)
    assert len(loads) >= 6
    for path in loads:
        m = HASHED.match(Path(path).name)
        assert m, path
        assert m["hash"] == hashlib.sha256((site / path).read_bytes()).hexdigest()[:12], path
    # every module names the modules it imports by their hashed names, and the Python by its folder
    main = next(site.glob("static/main.*.js")).read_text()
    python = re.search(r'new URL\("\.\./(py/[0-9a-f]{12}/)"', main).group(1)
    for module in site.glob("static/*.*.js"):
        for name in re.findall(r'["\']\./([\w.-]+\.js)["\']', module.read_text()):
            assert HASHED.match(name) and (site / "static" / name).is_file(), (module.name, name)
    # the Python folder holds files.json, the modules and data.json, whose data files are hashed
    assert json.loads((site / python / "files.json").read_text()) == json.loads(
        (site / "py/files.json").read_text()
    )
    data = json.loads((site / python / "data.json").read_text())
    assert "charmodel/evaluation.json" in data
    for rel, url in data.items():
        target = (site / python / url).resolve()
        digest = hashlib.sha256(target.read_bytes()).hexdigest()[:12]
        assert target.name == f"{Path(rel).stem}.{digest}{Path(rel).suffix}", rel
        assert target.read_bytes() == (ROOT / "toymodels/data" / rel).read_bytes(), rel
    # a change deep in the import graph renames every module that reaches it, and only those
    before = static_names(site)
    storage = root / "templates/static/storage.js"
    storage.write_text(storage.read_text() + "\n// changed\n")
    after = static_names(site_build.build(root, site, cdn=True))
    renamed = {n.split(".")[0] for n in before - after if HASHED.match(n)}
    assert renamed == {
        "storage",
        "attempts",
        "results",
        "blocks",
        "cells",
        "lms",
        "main",
        "class",
        "classsummary",
    }, renamed


# ---- the browser -----------------------------------------------------------------------------


@pytest.mark.browser
def test_two_courses_on_one_host_keep_their_offline_copies(browser, tmp_path):
    www = tmp_path / "www"
    www.mkdir()
    for label in "ab":
        site_build.build(variant(tmp_path, label), www / label)
    server = serve_dir(www)
    base = f"http://127.0.0.1:{server.server_port}/"
    context = browser.new_context()
    page = context.new_page()
    try:
        # copies by an earlier worker, named without a scope: course a's goes, another stays
        page.goto(base)
        page.evaluate(
            """async ([base, copies]) => {
              for (const [key, path] of copies) {
                await (await caches.open(key)).put(base + path, new Response("old"));
              }
            }""",
            [
                base,
                [["mh-site-0000000000000000", "a/old.html"], ["mh-site-1111111111111111", "c/x"]],
            ],
        )
        for label in "ab":
            open_ready(page, f"{base}{label}/test.html")
            wait_for_offline_copy(page)
        page.goto(base)  # outside both courses, where no service worker answers
        for label in "ab":
            kept = page.evaluate(
                "async (url) => Boolean(await caches.match(url))", f"{base}{label}/test.html"
            )
            assert kept, f"course {label} has no offline copy: {page.evaluate('caches.keys()')}"
        keys = page.evaluate("caches.keys()")
        assert "mh-site-0000000000000000" not in keys and "mh-site-1111111111111111" in keys
    finally:
        server.shutdown()
        server.server_close()
    # the server is gone: both courses still open, run their own scripts, and compute
    for label in "ab":
        open_ready(page, f"{base}{label}/test.html")
        assert page.locator(f"text=Variant {label}: some prose").count() == 1
        assert page.evaluate("document.documentElement.dataset.variant") == label
        computes(page)
    context.close()


class Network:
    """A server on 127.0.0.1 whose answers are delayed by `delay` seconds for paths that
    `slow(path)` picks: a slow network, file by file; while `down`, it answers nothing."""

    def __init__(self, directory, delay=6):
        network = self

        class SlowHandler(Handler):
            def send_head(self):
                if network.down:  # the connection closes unanswered: a network failure
                    self.close_connection = True
                    return None
                if network.slow(self.path):
                    time.sleep(network.delay)
                return super().send_head()

        self.delay, self.slow, self.down = delay, lambda path: False, False
        server = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 256})
        self.server = server(
            ("127.0.0.1", 0), functools.partial(SlowHandler, directory=str(directory))
        )
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def whole_site_mb(site):
    """The size of what the worker keeps of a build, in MB as said: every file but the reader's
    models and sw.js, counted before a file goes missing, as the build counted it."""
    files = [f for f in site.rglob("*") if f.is_file() and f.relative_to(site).parts[0] != "models"]
    return f"{sum(f.stat().st_size for f in files if f != site / 'sw.js') / 1e6:.1f} MB"


@pytest.mark.browser
def test_a_first_visit_keeps_its_page_and_the_whole_site_only_when_asked(browser, tmp_path):
    """A first visit keeps the page it opened, with what it loaded, and fetches no other page or
    data file for it; offline, that page opens and computes and another does not, until the
    reader keeps the whole site (a file the deploy lost is left out of it)."""
    site = site_build.build(variant(tmp_path, "1", other=True), tmp_path / "www/site")
    size = whole_site_mb(site)
    (site / "embed/test/three-heads.html").unlink()  # a deploy that lost one file
    network = Network(site)
    url, other = network.url + "test.html", network.url + "other.html"
    context = browser.new_context()
    page = context.new_page()
    fetched = []
    context.on("request", lambda r: fetched.append(r.url.removeprefix(network.url)))
    note = page.locator("[data-offline]")
    whole = f"Keep the whole site for offline reading ({size})"
    try:
        open_ready(page, url)
        wait_for_offline_copy(page)  # the worker has kept all it was asked to
        assert {u for u in fetched if ".html" in u} == {"test.html"}, fetched
        assert not [u for u in fetched if u.startswith(("embed/", "prerendered/other"))]
        assert not [u for u in fetched if "/toymodels/" in u], "the Python came file by file"
        data = {u for u in fetched if u.startswith("py/data/")}  # the figure's own
        assert data and all(u.startswith("py/data/realheads/") for u in data), data
        # all kept: those Python read before the page asked (which it names), and the others
        # as they came
        deadline = time.monotonic() + 30
        while not page.evaluate(KEPT, [network.url + u for u in sorted(data)]):
            assert time.monotonic() < deadline, f"not all of {data} kept"
            page.wait_for_timeout(250)
        assert note.inner_text().startswith(
            "Kept in this browser for offline reading: this page, with what it loaded ("
        )
        assert page.get_by_role("button", name=whole).is_visible()
        network.down = True
        open_ready(page, url)
        computes(page)
        elsewhere = context.new_page()  # a page of its own: Chromium's error page comes late
        with pytest.raises(PlaywrightError, match="ERR_FAILED"):
            elsewhere.goto(other)
        elsewhere.close()
        network.down = False
        open_ready(page, url)
        wait_for_offline_copy(page)
        page.get_by_role("button", name=whole).click()
        wait_for_offline_copy(page, "site")
        assert note.inner_text() == (
            f"The whole site is kept in this browser for offline reading ({size})."
        )
        network.down = True
        open_ready(page, other)
        assert page.locator("text=The other chapter").count() == 1
        computes(page)
    finally:
        context.close()
        network.close()


def visit(page, url, errors, seconds=240):
    """Open `url` and wait until Python is ready or a script or style was refused."""
    page.goto(url, timeout=seconds * 1000)
    deadline = time.monotonic() + seconds
    while not page.locator("html.py-ready").count():
        assert not errors, errors
        assert time.monotonic() < deadline, "Python never became ready"
        page.wait_for_timeout(250)


def which_build(page):
    """The build whose page is shown, and the build whose main.js runs on it."""
    shown = re.search(r"Variant (\d): some prose", page.content())
    return shown and shown.group(1), page.evaluate("document.documentElement.dataset.variant")


@pytest.mark.browser
def test_a_slow_network_never_mixes_two_builds(browser, tmp_path):
    site = tmp_path / "www/course"
    site.parent.mkdir()
    projects = {label: variant(tmp_path, label) for label in "12"}
    builds = {}
    for label in "21":  # build 1 is the one online
        builds[label] = static_names(site_build.build(projects[label], site))
    network = Network(site.parent)
    url = network.url + "course/test.html"
    context = browser.new_context()
    page = context.new_page()
    errors, loaded = [], []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: loaded.append(r.url))
    try:
        visit(page, url, errors)
        wait_for_offline_copy(page)
        assert which_build(page) == ("1", "1")
        # build 2 is published; its scripts and styles now take 6 s each, more than the
        # worker waits before it answers from its copy of build 1
        site_build.build(projects["2"], site)
        network.slow = lambda path: "/static/" in path
        loaded.clear()
        visit(page, url, errors)
        assert which_build(page) == ("2", "2")
        static = {u.split("/static/")[1].split("?")[0] for u in loaded if "/static/" in u}
        assert static and static <= builds["2"], static - builds["2"]
        assert all(HASHED.match(name) for name in static), static
        # now every file is slow, the page too: the reader sees one build, whichever it is
        network.slow = lambda path: "/pyodide/" not in path
        loaded.clear()
        visit(page, url, errors)
        shown, running = which_build(page)
        static = {u.split("/static/")[1].split("?")[0] for u in loaded if "/static/" in u}
        print(f"every file slow: the page of build {shown} runs the scripts of build {running}")
        assert shown == running and static <= builds[shown], (shown, running, static)
        assert errors == []
    finally:
        context.close()
        network.close()
