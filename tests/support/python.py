"""The page's Python: a page opened with it ready, or with it held back (for good, or until the
test lets it go), a page without the build's answers, and a Python of the test's own in the
page."""

# A page whose Python is ready registers the site's service worker and asks it to keep the page
# with what it loaded and the Python runtime, a copy no other test reads. So the test pages
# block it; the tests of the offline copy allow it (service_workers="allow"), or make
# their own contexts.
NO_OFFLINE_COPY = {"service_workers": "block"}

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


def hold_python(page, files="**/pyodide.mjs"):
    """Hold back PAGE's Python runtime (the first of its files the worker fetches; or the
    FILES of a later step) until the function returned is called: until then the page stays as
    a reader sees it while Python loads. Held at its first file, the runtime's script is not
    compiled either: a page with a route of Playwright's has no cache to keep it in."""
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
