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
(expect, wait_for_function, wait_for_url, locator.wait_for), `wait_until` outside it
(tests/support/waits.py).

Python takes seconds to start in a new page, so a test that only reads a chapter (or puts back
what it changes) borrows one with `ready_page(path, **context_options)`: opened with Python
ready once for all the tests of its module that ask for the same path and options, and lent to
one test at a time, watched as that test's page (see SharedPages, tests/support/shared.py, for
what a borrower may do).

Both are pages of warm browser profiles (tests/profiles.py): each starts with no storage, as in a
new browser context, but finds Pyodide's runtime already compiled.

This file holds pytest's hooks and fixtures; the helpers are in tests/support/, one job a
module, and the ones tests import are re-exported here (`from conftest import open_ready`).
"""

import fcntl
import os
import shutil
from pathlib import Path

import pytest
from profiles import Profiles

# the helpers tests import from here (`from conftest import open_ready`), each from its module
from support.blas import one_blas_thread
from support.inner import outcomes_of  # noqa: F401
from support.python import (  # noqa: F401
    NO_OFFLINE_COPY,
    hold_python,
    open_before_python,
    open_ready,
    with_own_python,
    without_build_answers,
)
from support.shared import SharedPages
from support.waits import (  # noqa: F401
    FRAMES_JS,
    click_settled,
    resized,
    settled,
    url_with,
    wait_until,
)
from support.watch import Relay, Watch

from sitebuild.pipeline import build as site_build
from sitebuild.serving.loopback import (  # noqa: F401
    CHROMIUM_ARGS,
    HEADLESS_SHELL,
    QuietServer,
    serve_dir,
)

ROOT = Path(__file__).resolve().parent.parent


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
    (test_figures.py) take 5 s, less than one browser test. A module whose other tests build
    sites says what they are worth in browser tests (its SCHEDULE_WEIGHT), so that it is not
    left to run alone at the end."""
    weight, first = {}, {}
    for i, item in enumerate(items):
        if uses_a_browser(item) and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)
        slow = item.get_closest_marker("browser") or item.get_closest_marker("model")
        if item.path not in weight:
            weight[item.path] = getattr(item.module, "SCHEDULE_WEIGHT", 0)
        weight[item.path] += 1 if slow else 0
        first.setdefault(item.path, i)
    items.sort(key=lambda item: (-weight[item.path], first[item.path]))


@pytest.fixture(scope="session")
def node():
    """The path of Node, which runs the tests of tests/js/ and the parsers tests read with."""
    found = shutil.which("node")
    if not found:
        pytest.fail("node is not installed: it comes with npm (Debian: apt-get install npm)")
    return found


@pytest.fixture(scope="session")
def rendered(tmp_path_factory):
    """Where the run's builds of the project's own chapters keep them rendered
    (sitebuild/pipeline/chaptercache.py), one folder for all its workers: a chapter renders the
    same for the site and for an LMS, so the run renders each once, whatever it builds."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "rendered"


@pytest.fixture(scope="session")
def site(tmp_path_factory, rendered):
    """The site, built once a run: with pytest-xdist (`make test`), the first
    worker to ask builds it into the run's folder above the workers' own while the others wait,
    and all of them serve that one (tests never change it)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return site_build.build(ROOT, tmp_path_factory.mktemp("built") / "site", reuse=rendered)
    run = tmp_path_factory.getbasetemp().parent
    with open(run / "site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # let go when the file closes
        if not (run / "site.built").exists():
            site_build.build(ROOT, run / "built" / "site", reuse=rendered)
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
