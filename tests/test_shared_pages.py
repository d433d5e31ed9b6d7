"""conftest's shared pages (`ready_page`) keep every test's errors its own: a module of tests
that share one page runs in a pytest of its own, and each test passes or fails as it would with
a page of its own; what a page does after its test has given it back fails the next borrower,
or the module's end, naming that test; a page given back changed is not lent again."""

import pytest
from conftest import outcomes_of

pytestmark = pytest.mark.browser

MODULE = '''
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import resized, wait_until

PAGE = """<!doctype html><title>shared</title><link rel="icon" href="data:,">
<script src="ready.js"></script>"""
# an error once the test lets the page's request go (a function: evaluate would await a promise)
LATE = """() => {
  fetch("hold").then(() => { console.error("late from %s"); fetch("logged"); });
}"""


class Host(SimpleHTTPRequestHandler):
    released, logged = threading.Event(), threading.Event()

    def do_GET(self):
        if self.path.endswith("/hold"):
            Host.released.wait(30)
            Host.released.clear()
        if self.path.endswith("/logged"):
            Host.logged.set()
        if self.path.endswith(("/hold", "/logged")):
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    root = tmp_path_factory.mktemp("host")
    (root / "page.html").write_text(PAGE)
    (root / "ready.js").write_text('document.documentElement.classList.add("py-ready");')
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Host, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/page.html"
    server.shutdown()


def release_late_error():
    Host.logged.clear()
    Host.released.set()
    wait_until(Host.logged.is_set, 30, "the page never logged its late error")


@pytest.fixture(scope="module")
def late_at_the_end(shared_pages):
    """Set up after shared_pages, so torn down before it closes the module's pages."""
    yield
    release_late_error()


def test_01_marks_the_page(ready_page, url):
    ready_page(url).evaluate("window.kept = 1")


def test_02_gets_the_same_page(ready_page, url):
    assert ready_page(url).evaluate("window.kept") == 1


def test_03_logs_an_error(ready_page, url):
    ready_page(url).evaluate("console.error('now from 03')")


def test_04_gets_a_new_page_after_an_error(ready_page, url):
    page = ready_page(url)
    assert page.evaluate("window.kept") is None
    page.evaluate("window.kept = 4")


def test_05_sets_off_an_error(ready_page, url):
    ready_page(url).evaluate("setTimeout(() => console.error('soon from 05'), 0)")


def test_06_sets_off_a_late_error(ready_page, url):
    page = ready_page(url)
    assert page.evaluate("window.kept") is None
    page.evaluate("window.kept = 6")
    page.evaluate(LATE % "06")


def test_07_borrows_after_the_late_error(ready_page, url):
    release_late_error()
    ready_page(url)


@pytest.mark.expect_errors("^expected from 08$")
def test_08_declares_its_error(ready_page, url):
    page = ready_page(url)
    assert page.evaluate("window.kept") is None
    page.evaluate("window.kept = 8; console.error('expected from 08')")


def test_09_resizes_and_keeps(ready_page, url):
    page = ready_page(url)
    assert page.evaluate("window.kept") == 8
    resized(page, 400, 300)


def test_10_changes_the_page(ready_page, url):
    page = ready_page(url)
    assert page.evaluate("[innerWidth, innerHeight, window.kept]") == [1200, 900, 8]
    page.evaluate("localStorage.setItem('left', 'behind')")


def test_11_gets_a_new_page_after_a_change(ready_page, url):
    page = ready_page(url)
    assert page.evaluate("[window.kept, localStorage.length]") == [None, 0]
    page.evaluate("window.kept = 11")


def test_12_changes_the_page_on_purpose(ready_page, url):
    page = ready_page(url, changes=True)
    assert page.evaluate("window.kept") == 11
    page.evaluate("localStorage.setItem('left', 'on purpose')")


def test_13_gets_a_new_page_after_a_change_on_purpose(ready_page, url):
    page = ready_page(url)
    assert page.evaluate("[window.kept, localStorage.length]") == [None, 0]


def test_14_sets_off_an_error_after_the_last_test(ready_page, late_at_the_end, url):
    ready_page(url).evaluate(LATE % "14")
'''


def test_each_test_of_a_shared_page_answers_for_its_own_errors(tmp_path):
    outcomes, log = outcomes_of(tmp_path, MODULE)
    passed = ["test_01", "test_02", "test_04", "test_06", "test_08", "test_09", "test_10"]
    passed += ["test_11", "test_12", "test_13"]
    for name in passed:
        assert outcomes[name] == [], (name, log)
    # an error the test logs, or sets off, is the test's, found when it ends
    [error] = outcomes["test_03"]
    assert error.startswith("error: failed on teardown") and "now from 03" in error, log
    [error] = outcomes["test_05"]
    assert error.startswith("error: failed on teardown") and "soon from 05" in error, log
    # a late one fails the next borrower, naming the test that held the page
    [failure] = outcomes["test_07"]
    assert "misbehaved while no test held it" in failure and "test_06" in failure, log
    assert "late from 06" in failure, log
    # or the module's last test, when it ends
    [error] = outcomes["test_14"]
    assert "test_14" in error and "late from 14" in error, log
    assert "error: failed on teardown" in error, log
    # a page given back changed is closed, and said, unless the test said it changes it
    assert "test_10_changes_the_page gave back the shared page" in log, log
    assert "changed (storage)" in log, log
    assert "test_12" not in log, log
