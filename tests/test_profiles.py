"""conftest's `new_page` lends pages of warm browser profiles (tests/profiles.py), yet each test
still starts as in a new browser context: a module of tests runs in a pytest of its own, where a
test finds none of the storage, cookies or routes the test before it left in the same profile,
two pages open at once keep their storage apart (the second one's new profile starting with the
first one's caches), a page closed in a test leaves the test's next page nothing, and a failed
test's profile is not lent again."""

import pytest
from conftest import outcomes_of

pytestmark = pytest.mark.browser

MODULE = '''
from pathlib import Path

import pytest
from conftest import serve_dir

PAGE = """<!doctype html><title>profiles</title>"""
WRITE = """async () => {
  localStorage.setItem("k", "1");
  document.cookie = "c=1; max-age=3600";
  await new Promise((ok, bad) => {
    const open = indexedDB.open("kept");
    open.onupgradeneeded = () => open.result.createObjectStore("s");
    open.onsuccess = () => { open.result.close(); ok(); };
    open.onerror = bad;
  });
  await (await caches.open("kept")).put("x", new Response("y"));
}"""
READ = """async () => ({
  local: localStorage.length, cookie: document.cookie,
  idb: (await indexedDB.databases()).length, caches: (await caches.keys()).length,
})"""
WRITTEN = {"local": 1, "cookie": "c=1", "idb": 1, "caches": 1}
NOTHING = {"local": 0, "cookie": "", "idb": 0, "caches": 0}
ROUTED = "() => fetch('routed').then((r) => r.status)"
seen = {}  # what the tests before saw: their pages' contexts (a profile is one context)


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    root = tmp_path_factory.mktemp("host")
    (root / "page.html").write_text(PAGE)
    (root / "routed").write_text("the server's")
    (root / "favicon.ico").write_bytes(b"")  # asked for by Chromium
    server = serve_dir(root)
    yield f"http://127.0.0.1:{server.server_port}/page.html"
    server.shutdown()


def opened(new_page, url, **options):
    page = new_page(**options)
    page.goto(url)
    return page


def test_01_writes_every_kind_of_storage_and_routes_its_context(new_page, url):
    page = opened(new_page, url)
    page.evaluate(WRITE)
    assert page.evaluate(READ) == WRITTEN
    page.context.route("**/routed", lambda route: route.fulfill(status=201))
    assert page.evaluate(ROUTED) == 201
    seen["01"] = page.context


def test_02_the_next_test_in_that_profile_finds_nothing(new_page, url):
    page = opened(new_page, url)
    assert page.context is seen["01"]  # the same profile, warm
    assert page.evaluate(READ) == NOTHING
    assert page.evaluate(ROUTED) == 200
    assert page.viewport_size == {"width": 1280, "height": 720}  # Playwright's own default


def test_03_two_pages_at_once_keep_their_storage_apart(new_page, url, profiles):
    first = opened(new_page, url, viewport={"width": 600, "height": 500})
    second = new_page()
    assert first.context is not second.context
    # a new profile, which starts with the caches of the first: the page is in them, unasked
    [new] = [p for p in profiles.kept if p.context is second.context]
    assert list(Path(new.folder, "Default/Cache").rglob("*_0")), "no cache copied"
    second.goto(url)
    assert first.viewport_size == {"width": 600, "height": 500}
    first.evaluate(WRITE)
    assert second.evaluate(READ) == NOTHING
    context = first.context
    first.close()
    third = opened(new_page, url)  # the first page's profile, wiped for it
    assert third.context is context
    assert third.evaluate(READ) == NOTHING


def test_04_fails_with_its_page(new_page, url):
    page = opened(new_page, url)
    seen["04"] = page.context
    page.evaluate(WRITE)
    raise AssertionError("failed on purpose")


def test_05_a_failed_tests_profile_is_not_lent_again(new_page, url):
    page = opened(new_page, url)
    assert page.context is not seen["04"]
    assert page.evaluate(READ) == NOTHING
'''


def test_each_test_of_a_warm_profile_starts_with_nothing_of_the_test_before(tmp_path):
    outcomes, log = outcomes_of(tmp_path, MODULE)
    for name in ("test_01", "test_02", "test_03", "test_05"):
        assert outcomes[name] == [], (name, log)
    [failure] = outcomes["test_04"]
    assert "failed on purpose" in failure, log
