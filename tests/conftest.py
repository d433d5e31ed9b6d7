r"""Shared fixtures: one built site per test run, served on 127.0.0.1, and Debian's Chromium.

Every page a test opens (the `page` fixture, or `new_page(**context_options)` for a page with
options of its own) is watched: the test fails if the page, its frames or its workers log a
console error, throw an uncaught error, or request anything from another origin. A test that
means to provoke errors declares them, each a regular expression searched for in the error's
text (a console message, followed by the address of its source in parentheses, if it has one):

    @pytest.mark.expect_errors(r"^Executing inline script violates")  # for the whole test
    page.watch.expect(r"status of 404 .*/missing\.json\)$")  # from inside the test

Each declared pattern must match at least one error, or the declaration is stale and the test
fails too. Tests wait for conditions, never for a fixed time: Playwright's waits in the browser
(expect, wait_for_function, wait_for_url, locator.wait_for), `wait_until` outside it.

Python takes seconds to start in a new page, so a test that only reads a chapter (or puts back
what it changes) borrows one with `ready_page(path, **context_options)`: opened with Python
ready once for all the tests of its module that ask for the same path and options, and lent to
one test at a time, watched as that test's page (see SharedPages for what a borrower may do).

Both are pages of warm browser profiles (tests/profiles.py): each starts with no storage, as in a
new browser context, but finds Pyodide's runtime already compiled.
"""

import dataclasses
import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from xml.etree import ElementTree

import pytest
from profiles import Profiles

from sitebuild.pipeline import build as site_build
from sitebuild.serving.loopback import CHROMIUM_ARGS, HEADLESS_SHELL, QuietServer, serve_dir  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
OWN_ORIGINS = ("http://127.0.0.1:", "data:", "blob:")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "expect_errors(*patterns): console or page errors this test provokes on purpose; "
        "each regular expression must match at least one of them",
    )


# the fixtures that start Chromium; every page fixture asks for one of them
BROWSER_FIXTURES = frozenset({"playwright", "browser", "profiles"})


def uses_a_browser(item):
    """Whether ITEM asks, directly or through another fixture, for one that starts Chromium."""
    return not BROWSER_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects, so `-m "not browser"` starts none
def pytest_collection_modifyitems(items):
    """Every test that uses a browser fixture is marked `browser` (no test has to remember the
    marker). Then modules with more browser and model tests first, each module's tests in their
    order: with pytest-xdist (`make test`), each worker takes a whole module at a time
    (--dist loadfile, so a module's shared pages open once), and the slowest ones started first
    end with the rest rather than after it. The other tests count for nothing: 280 of them
    (test_figures.py) take 5 s, less than one browser test."""
    weight, first = {}, {}
    for i, item in enumerate(items):
        if uses_a_browser(item) and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)
        slow = item.get_closest_marker("browser") or item.get_closest_marker("model")
        weight[item.path] = weight.get(item.path, 0) + (1 if slow else 0)
        first.setdefault(item.path, i)
    items.sort(key=lambda item: (-weight[item.path], first[item.path]))


def outcomes_of(folder, module):
    """Run MODULE (a test module's text, with this conftest's fixtures) in a pytest of its own in
    FOLDER -> ({a test's name's first seven characters: what its report says went wrong}, the
    run's output): for tests of the fixtures themselves, whose tests must fail on purpose."""
    (folder / "test_inner.py").write_text(module)
    report = folder / "report.xml"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider"]
        + ["-q", "-W", "always", f"--junitxml={report}", "test_inner.py"],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    outcomes = {}
    for case in ElementTree.parse(report).iter("testcase"):
        said = [f"{e.tag}: {e.get('message')} {e.text}" for e in case if e.tag != "properties"]
        said = [s for s in said if not s.startswith("system-")]
        outcomes.setdefault(case.get("name")[:7], []).extend(said)
    return outcomes, run.stdout + run.stderr


def wait_until(condition, timeout, message, interval=0.05):
    """Wait, outside the browser, until condition() is true (a server has rebuilt, a process has
    spoken); return its value, or fail with `message` after `timeout` seconds. In the browser,
    use Playwright's own waits (expect, wait_for_function, wait_for_url, locator.wait_for)."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{message} (waited {timeout} s)")
        time.sleep(interval)
    return value


@pytest.fixture(scope="session")
def node():
    """The path of Node, which runs the tests of tests/js/ and the parsers tests read with."""
    found = shutil.which("node")
    if not found:
        pytest.fail("node is not installed: it comes with npm (Debian: apt-get install npm)")
    return found


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The site, built once a run: with pytest-xdist (`make test`), the first
    worker to ask builds it into the run's folder above the workers' own while the others wait,
    and all of them serve that one (tests never change it)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return site_build.build(ROOT, tmp_path_factory.mktemp("built") / "site")
    run = tmp_path_factory.getbasetemp().parent
    with open(run / "site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # let go when the file closes
        if not (run / "site.built").exists():
            site_build.build(ROOT, run / "built" / "site")
            (run / "site.built").touch()
    return run / "built" / "site"


@pytest.fixture(scope="session")
def base_url(site):
    server = serve_dir(site)
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


@pytest.fixture(scope="session")
def playwright():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright):
    b = playwright.chromium.launch(executable_path=HEADLESS_SHELL, args=CHROMIUM_ARGS)
    yield b
    b.close()


@pytest.fixture(scope="session")
def profiles(playwright, tmp_path_factory):
    kept = Profiles(playwright, Relay, tmp_path_factory.mktemp("profiles"))
    yield kept
    kept.close()


class Watch:
    """What the pages of one test do that the test must not let pass: console errors, uncaught
    errors (from the pages, their frames and workers) and requests to other origins; less the
    errors the test declared with expect()."""

    def __init__(self):
        self.errors, self.foreign, self.expected = [], [], []

    def attach(self, context):
        context.on("console", self._console)
        context.on("weberror", self._weberror)
        context.on("request", self._request)

    def _weberror(self, error):
        self.errors.append(f"uncaught: {error.error}")

    def _console(self, message):
        if message.type in ("error", "assert"):
            url = message.location.get("url")
            self.errors.append(f"{message.text} ({url})" if url else message.text)

    def _request(self, request):
        if not request.url.startswith(OWN_ORIGINS):
            self.foreign.append(request.url)

    def expect(self, *patterns):
        """Declare errors the test provokes on purpose, as regular expressions."""
        self.expected += [re.compile(p) for p in patterns]
        return self

    def problems(self):
        """Everything wrong so far, in words; empty when the pages behaved as declared."""
        unexpected = [e for e in self.errors if not any(p.search(e) for p in self.expected)]
        stale = [p.pattern for p in self.expected if not any(p.search(e) for e in self.errors)]
        return (
            [f"unexpected error: {e}" for e in unexpected]
            + [f"request to another origin: {u}" for u in self.foreign]
            + [f"declared error that never happened: {p!r}" for p in stale]
        )


WATCH = pytest.StashKey[Watch]()
CALL_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that failed on its own is not failed again by its page's errors in teardown; they
    are shown with its failure instead, where they may explain it."""
    report = yield
    if report.when == "call" and report.failed:
        item.stash[CALL_FAILED] = True
        if WATCH in item.stash and item.stash[WATCH].problems():
            report.sections.append(("page errors", "\n".join(item.stash[WATCH].problems())))
    return report


@pytest.fixture
def watch(request):
    w = Watch()
    for marker in request.node.iter_markers("expect_errors"):
        w.expect(*marker.args)
    request.node.stash[WATCH] = w
    yield w
    if not request.node.stash.get(CALL_FAILED, False):
        problems = w.problems()
        assert not problems, "the pages of this test misbehaved:\n" + "\n".join(problems)


# A page whose Python is ready registers the site's service worker and asks it to keep the page
# with what it loaded and the Python runtime, a copy no other test reads. So the test pages
# block it; the tests of the offline copy allow it (service_workers="allow"), or make
# their own contexts.
NO_OFFLINE_COPY = {"service_workers": "block"}


@pytest.fixture
def new_page(profiles, watch, request):
    """new_page(**context_options): a page as in a new browser context (a warm profile's:
    tests/profiles.py), watched; closed after the test. The site's service worker is blocked
    unless the test allows it (NO_OFFLINE_COPY)."""
    lent = []

    def open_page(**options):
        profile, page = profiles.lend(watch, lent, {**NO_OFFLINE_COPY, **options})
        if profile not in lent:
            lent.append(profile)
        page.watch = watch
        return page

    yield open_page
    failed = request.node.stash.get(CALL_FAILED, False)
    for profile in lent:
        profiles.give_back(profile, request.node.nodeid, failed)


@pytest.fixture
def page(new_page):
    return new_page(viewport={"width": 1200, "height": 900})


class Relay:
    """A shared page's context's events, passed to the watch of the test that holds the page;
    while no test holds it, to a watch of its own, so that nothing the page does is lost."""

    def __init__(self, context):
        self.release(None)
        context.on("console", lambda message: self.watch._console(message))
        context.on("weberror", lambda error: self.watch._weberror(error))
        context.on("request", lambda request: self.watch._request(request))

    def hold(self, watch):
        self.watch = watch

    def release(self, test):
        """No test holds the page now; TEST (its id) was the last that did."""
        self.watch, self.after = Watch(), test


# what a shared page must give back as it was lent: its address and history, its storage, the
# values of its fields and its markup (less the classes scrollers.js sets on boxes that scroll
# as they are laid out, scrolled or resized), each as a short digest
STATE_JS = """async () => {
  const digest = async (text) => {
    const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
    return [...new Uint8Array(bytes)].slice(0, 8).map((b) => b.toString(16).padStart(2, "0"))
      .join("");
  };
  const stored = Object.keys(localStorage).sort().map((k) => `${k}=${localStorage.getItem(k)}`);
  const fields = [...document.querySelectorAll("input, textarea, select")]
    .map((f) => (f.type === "checkbox" || f.type === "radio" ? f.checked : f.value));
  const markup = document.documentElement.outerHTML
    .replace(/ ?\\bmh-(more-left|more-right|scrolls|wide-math)\\b/g, "")
    .replace(/ class=""/g, "");
  return {
    address: location.href,
    history: history.length,
    storage: await digest(JSON.stringify(stored)),
    fields: await digest(JSON.stringify(fields)),
    markup: await digest(markup),
  };
}"""
FRAMES_JS = "new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))"
# a Python of the test's own, `py`, started as the page starts its own (static/main.js: the
# runtime and the bytecode its <meta>s name)
OWN_PYTHON_JS = """
  const { startPython } = await import(new URL("static/pyclient.js", location.href).href);
  const meta = (name) =>
    new URL(document.querySelector(`meta[name="${name}"]`).content, document.baseURI);
  const py = startPython({
    pyodideURL: meta("mh-pyodide"), pyURL: new URL("py/", location.href),
    bytecodeURL: meta("mh-bytecode"),
  });
  await py.ready;"""


def with_own_python(script):
    """SCRIPT, a page function `async (…) => { … }`, starting with a Python of the test's own
    ready as `py`."""
    head, brace, body = script.partition("{")
    return head + brace + OWN_PYTHON_JS + body


# two frames, then the page's first idle moment (or a second): what a test set off in the page
# has run, and what it said has come back, before the page goes to another test
FLUSH_JS = """() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() =>
  requestIdleCallback(done, { timeout: 1000 }))))"""
# the boxes a shared page has scrolled when it opens (scrollers.js shows a selected column), kept
# so that each borrower gets them so, and every other box at its start
SCROLLS_KEPT_JS = """() => {
  window.__sharedScrolls = new Map([...document.querySelectorAll("*")]
    .filter((el) => el.scrollLeft || el.scrollTop)
    .map((el) => [el, [el.scrollLeft, el.scrollTop]]));
}"""
AS_OPENED_JS = """() => {
  document.activeElement?.blur();
  for (const el of document.querySelectorAll("*")) {
    const [left, top] = window.__sharedScrolls.get(el) ?? [0, 0];
    if (el.scrollLeft !== left || el.scrollTop !== top) {
      el.scrollTo({ left, top, behavior: "instant" });
    }
  }
  scrollTo({ left: 0, top: 0, behavior: "instant" });
}"""


def resized(page, width, height):
    """Set PAGE's viewport to WIDTH x HEIGHT and wait until two frames are drawn at that size."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function("([w, h]) => innerWidth === w && innerHeight === h", arg=[width, height])
    page.evaluate(FRAMES_JS)
    return page


@dataclasses.dataclass
class Shared:
    page: object
    profile: object  # tests/profiles.py's Profile, the page's alone
    viewport: dict
    state: dict = None
    changed_by: str = None  # the test that said it changes the page, and then closes it

    @property
    def relay(self):
        return self.profile.relay


class SharedPages:
    """The pages with Python ready that one module's tests share: one per path and options,
    opened by the first test that asks for it and lent to one test at a time.

    While a test holds a page, the page's errors and requests to other origins are that test's
    (page.watch is its watch). Before the test ends the page is given time to settle (two
    frames and an idle moment), so that what the test set off is reported as its own; what the
    page does while no test holds it fails the next test that borrows it, or the module's last
    test, naming the test that held it before.

    A borrower gets the page scrolled to the top (every box in it scrolled as when the page
    opened), with nothing focused, at the viewport it was opened with. It may scroll, resize
    (`resized`) and read; anything else it changes it puts back: its address and history, its
    storage, its fields and its markup are compared, when it gives the page back, with what they
    were when the page was opened, and a page that differs is closed (with a warning naming the
    test), so the next test gets a new one. So is a page whose test failed, or whose page
    misbehaved. A test that changes the page on purpose says so (`changes=True`): the page is
    closed when it ends, without a warning (so such a test is best placed after the tests that
    only read the page). A borrower adds no listeners, routes or init scripts of its own to a
    shared page: `init_script` and `prepare` (run once, after Python is ready) are part of what
    names the page."""

    def __init__(self, profiles, base_url):
        """PROFILES: tests/profiles.py's, whose pages these are; BASE_URL: the site's address,
        or a function that gives it (asked for at the first path under it, so a module whose
        pages are all elsewhere builds no site)."""
        self.profiles, self._base_url, self.pages = profiles, base_url, {}

    @property
    def base_url(self):
        if callable(self._base_url):
            self._base_url = self._base_url()
        return self._base_url

    def lend(self, watch, test, path, init_script=None, prepare=None, changes=False, **options):
        options.setdefault("viewport", {"width": 1200, "height": 900})
        key = (path, init_script, prepare, repr(sorted(options.items())))
        shared = self.pages.get(key)
        if shared is None:
            shared = self.pages[key] = self._open(watch, test, path, init_script, prepare, options)
        else:
            shared.page.evaluate("0")  # a round trip: what the page said till now is delivered
            problems = shared.relay.watch.problems()
            if problems:
                self._close(key)
                raise AssertionError(
                    f"the shared page {path} misbehaved while no test held it (after "
                    f"{shared.relay.after}):\n" + "\n".join(problems)
                )
            shared.relay.hold(watch)
            shared.page.evaluate(AS_OPENED_JS)
        shared.page.watch = watch
        shared.changed_by = test if changes else shared.changed_by
        return shared.page

    def _open(self, watch, test, path, init_script, prepare, options):
        profile, page = self.profiles.lend(watch, object(), {**NO_OFFLINE_COPY, **options})
        try:
            if init_script:
                page.add_init_script(init_script)
            open_ready(page, path if "://" in path else self.base_url + path)
            if prepare:
                prepare(page)
            page.evaluate(FRAMES_JS)
            page.evaluate(SCROLLS_KEPT_JS)
            shared = Shared(page, profile, options["viewport"])
            shared.state = page.evaluate(STATE_JS)
        except BaseException:
            self.profiles.give_back(profile, test, failed=True)
            raise
        return shared

    def give_back(self, page, test, failed):
        """TEST is done with PAGE (and FAILED, or not): let the page settle, put its viewport
        back, and keep it for the next test if the test passed and its pages behaved, and the
        page is as it was lent."""
        key = next((k for k, s in self.pages.items() if s.page is page), None)
        if key is None:
            return
        shared = self.pages[key]
        try:
            if not failed and not page.is_closed():
                page.evaluate(FLUSH_JS)
                failed = bool(shared.relay.watch.problems())
            failed = failed or shared.changed_by == test
            if not failed and not page.is_closed():
                if page.viewport_size != shared.viewport:
                    resized(page, **shared.viewport)
                now = page.evaluate(STATE_JS)
                changed = [k for k in now if now[k] != shared.state[k]]
                if changed:
                    warnings.warn(
                        f"{test} gave back the shared page {key[0]} changed "
                        f"({', '.join(changed)}): it is closed, and opened again for the next "
                        "test that asks for it",
                        stacklevel=1,
                    )
                    failed = True
        except Exception:
            failed = True
            raise
        finally:
            shared.relay.release(test)
            if failed or page.is_closed():
                self._close(key)

    def _close(self, key):
        shared = self.pages.pop(key)
        # closing is nobody's misbehaviour
        self.profiles.give_back(shared.profile, shared.relay.after, failed=False)

    def close(self):
        """Close every page; fail if one misbehaved after its last test gave it back."""
        problems = []
        for key, shared in list(self.pages.items()):
            if not shared.page.is_closed():
                shared.page.evaluate("0")
            problems += [
                f"{key[0]} after {shared.relay.after}: {p}" for p in shared.relay.watch.problems()
            ]
            self._close(key)
        assert not problems, "shared pages misbehaved while no test held them:\n" + "\n".join(
            problems
        )


@pytest.fixture(scope="module")
def shared_pages(profiles, request):
    pages = SharedPages(profiles, lambda: request.getfixturevalue("base_url"))
    yield pages
    pages.close()


@pytest.fixture
def ready_page(shared_pages, watch, request):
    """ready_page(path, init_script=None, prepare=None, changes=False, **context_options): the
    page at PATH (under base_url, or a whole address) with Python ready, shared with the
    module's other tests that ask for the same (see SharedPages); lent to this test until it
    ends."""
    lent = []

    def borrow(path, **options):
        page = shared_pages.lend(watch, request.node.nodeid, path, **options)
        if page not in lent:
            lent.append(page)
        return page

    yield borrow
    failed = request.node.stash.get(CALL_FAILED, False)
    for page in lent:
        shared_pages.give_back(page, request.node.nodeid, failed)


SETTLE_JS = """async (el, [frames, ms]) => {
  el.scrollIntoView({ block: "center" });
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  const places = [];
  const end = performance.now() + ms;
  for (let still = 0; performance.now() < end; ) {
    await frame();
    const r = el.getBoundingClientRect();
    const at = `x ${Math.round(r.x)} y ${Math.round(r.y)} (page at ${Math.round(scrollY)})`;
    still = at === places.at(-1) ? still + 1 : 0;
    if (still >= frames) return null;
    if (still === 0) places.push(at);
  }
  return places.slice(-12);
}"""


def click_settled(page, selector, timeout_ms=10_000):
    """Click a control far from the view as a reader does: scroll to it, wait until it has kept
    its place for a few frames (sections laid out as they come near the view may move it), then
    click. Fails naming the places it kept moving between if it never settles (Playwright's own
    click and scroll wait for a still element themselves, scroll again on each retry, and only
    say "element is not stable")."""
    control = page.locator(selector)
    moving = control.evaluate(SETTLE_JS, [3, timeout_ms])
    assert moving is None, f"{selector} kept moving for {timeout_ms} ms: " + "; ".join(moving)
    control.click()


def open_ready(page, url):
    """Open a chapter and wait until Python is ready and every figure is live."""
    page.goto(url)
    page.wait_for_selector("html.py-ready", timeout=90_000)
    return page


def open_before_python(page, url):
    """Open a page with its Python held back (for good: the page is as a reader finds it before
    Python is ready) and wait until its own behaviour is wired up (main.js marks it html.js as
    it does so). For tests of what needs no Python: checks, guesses, "Your results", what an LMS
    is told. They are spared Python's start, about 5 s of processor time a page."""
    if not getattr(page, "python_held", False):
        hold_python(page)
        page.python_held = True
    page.goto(url)
    page.wait_for_selector("html.js")
    assert page.locator("html.py-ready").count() == 0
    return page


def hold_python(page, files="**/pyodide.asm.wasm"):
    """Hold back PAGE's Python runtime (the WebAssembly file its worker fetches; or the FILES
    of a later step) until the function returned is called: until then the page stays as a
    reader sees it while Python loads."""
    held, released = [], []

    def hold(route):
        if released:
            route.continue_()
        else:
            held.append(route)

    def release():
        released.append(True)
        for route in held:
            route.continue_()

    page.route(files, hold)
    return release


def without_build_answers(page_or_context):
    """The pages' files of the build's answers (prerendered/) hold none: every tap is Python's,
    also before Python's first answer for a figure is in."""
    page_or_context.route(
        "**/prerendered/*.json",
        lambda route: route.fulfill(status=200, content_type="application/json", body="{}"),
    )


def url_with(page, *parts, without=()):
    """Wait until the page's address holds every one of PARTS and none of WITHOUT, and return
    it: figures.js writes a redraw's state into the URL once the redraw is painted, in the next
    gap between frames."""
    page.wait_for_url(lambda u: all(p in u for p in parts) and not any(p in u for p in without))
    return page.url


def settled(page):
    """Finish now what the page's last redraw left for after its paint (figures.js: a slot far
    from the view, the URL), as a download or printing does: the page's own figures module's
    writeURLNow(), the module found among the files the page loaded. Waiting for an idle moment
    instead failed under load: headless Chromium can go a minute without an idle callback."""
    page.evaluate("""async () => {
      const src = performance.getEntriesByType("resource").map((e) => e.name)
        .find((name) => /\\/static\\/figures\\.[0-9a-f]+\\.js$/.test(name));
      (await import(src)).writeURLNow();
    }""")


def one_blas_thread():
    """numpy's OpenBLAS held to one thread (for a test module) -> a function that gives the
    threads back. Writing on is a long series of one-token products: on a busy machine,
    OpenBLAS's threads waiting on each other made them ten times slower (45 s against 10 s
    for this module at a load of 6). Does nothing where numpy's OpenBLAS is not found."""
    import ctypes
    import glob

    import numpy as np

    found = glob.glob(str(Path(np.__file__).parent.parent / "numpy.libs" / "*openblas*.so*"))
    try:
        lib = ctypes.CDLL(found[0])
        get, put = lib.scipy_openblas_get_num_threads64_, lib.scipy_openblas_set_num_threads64_
    except (IndexError, OSError, AttributeError):
        return lambda: None
    before = get()
    put(1)
    return lambda: put(before)


@pytest.fixture(scope="module")
def llama():
    """SmolLM2's live model (toymodels/models/smollm2/live.py) from the repacked files
    (sitebuild.models.smollm2.files()), built once for a test module; skips where the files cannot
    be made."""
    from toymodels.models.smollm2 import live

    try:
        from sitebuild.models import smollm2 as smollm2_recipe

        folder, _ = smollm2_recipe.files()
    except (ModuleNotFoundError, FileNotFoundError) as e:
        pytest.skip(f"{e}: the live model's files need the export tier")
    give_back = one_blas_thread()
    live.use(folder)
    yield live.model()[0]
    live._state.update(folder=None, model=None, bpe=None)
    give_back()
