"""Python in the reader's browser stays on the site's own origin, on a plain static host (no
policy header: the worker is bound by the page's <meta> policy, which a worker started from a
blob: URL inherits, and by netguard.js) and under `build.py serve` (the policy also as a header).

The other origin is a server on another loopback port that records every request reaching it.
Each technique runs in a live cell; the cell prints a marker when its attempt is made, and the
attempt, when it returns a promise, fetches /__settled/NAME from the site once it has settled,
so the test waits on the attempt's end, not on a clock, before it asks the recorder.
"""

import functools
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import open_ready

from sitebuild.serving.serve import Handler

pytestmark = pytest.mark.browser
CHAPTER = "split-attend.html"


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # a browser that closes a connection early is no failure here


class Recorder:
    """Another origin on 127.0.0.1: records every request, answers each one as permissively as
    it can (CORS open, JavaScript body), so a request that gets out is seen."""

    def __init__(self):
        hits = self.hits = []

        class Record(BaseHTTPRequestHandler):
            def answer(self):
                hits.append(f"{self.command} {self.path}")
                self.send_response(200)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Headers", "*")
                self.send_header("Content-Type", "text/javascript")
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = do_HEAD = do_OPTIONS = answer

            def log_message(self, fmt, *args):
                pass

        self.server = Server(("127.0.0.1", 0), Record)
        self.origin = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class PlainHost(SimpleHTTPRequestHandler):
    """A static host that sends no Content-Security-Policy header, only the same file types."""

    extensions_map = Handler.extensions_map

    def log_message(self, fmt, *args):
        pass


def serve(directory, handler, seen):
    class Seen(handler):
        def send_response(self, code, message=None):
            seen.append(self.path)
            super().send_response(code, message)

    server = Server(("127.0.0.1", 0), functools.partial(Seen, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def recorder():
    with Recorder() as r:
        yield r


@pytest.fixture(scope="module", params=["no-header", "header"])
def host(request, site):
    """The built site on a host without headers, or with the policy header (`build.py serve`)."""
    seen = []
    server = serve(site, PlainHost if request.param == "no-header" else Handler, seen)
    yield f"http://127.0.0.1:{server.server_port}/", seen
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def chapter(browser, host):
    """One chapter with Python ready, shared by the techniques on one host."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.uncaught = []
    page.on("pageerror", lambda e: page.uncaught.append(str(e)))
    open_ready(page, host[0] + CHAPTER)
    yield page
    context.close()


PRELUDE = """
import js
from pyodide.ffi import create_proxy, to_js
T = {target!r}
SITE = js.location.origin + "/"

def attempt(name, make):
    beacon = lambda *_: js.fetch(SITE + "__settled/" + name)
    try:
        outcome = make()
    except BaseException as err:
        print("refused:", type(err).__name__, str(err)[:300])
        outcome = None
    if outcome is not None and hasattr(outcome, "then"):
        outcome.then(beacon, beacon)
    else:
        beacon()
    print("attempted " + name)

def js_object(**entries):
    return to_js(entries, dict_converter=js.Object.fromEntries)

def connect(Socket, path):
    socket = Socket.new(T.replace("http:", "ws:") + path)
    def executor(resolve, reject):
        socket.onopen = create_proxy(lambda event: resolve("open"))
        socket.onerror = create_proxy(lambda event: resolve("error"))
    return js.Promise.new(create_proxy(executor))
"""

TECHNIQUES = {
    # the guard converted the URL to a string, then fetch converted it again
    "shifting-url": """
class Shifty:
    calls = 0
    def __str__(self):
        Shifty.calls += 1
        return SITE + "index.html" if Shifty.calls == 1 else T + "/shifting-url"
shifty = create_proxy(Shifty())
attempt("shifting-url", lambda: js.fetch(shifty))
""",
    "cache-add": """
def add():
    return js.caches.open("mh-probe").then(lambda cache: cache.add(T + "/cache-add"))
attempt("cache-add", add)
""",
    "run-js-import": """
from pyodide.code import run_js
attempt("run-js-import", lambda: run_js("import(" + repr(T + "/run-js-import.js") + ")"))
""",
    "nested-worker": """
def nested():
    source = "fetch(" + repr(T + "/nested-worker") + ").finally(() => postMessage('settled'))"
    blob = js.Blob.new(to_js([source]), js_object(type="text/javascript"))
    worker = js.Worker.new(js.URL.createObjectURL(blob))
    def executor(resolve, reject):
        worker.onmessage = create_proxy(lambda event: resolve(event.data))
        worker.onerror = create_proxy(lambda event: resolve("error"))
    return js.Promise.new(create_proxy(executor))
attempt("nested-worker", nested)
""",
    "fetch": """
attempt("fetch", lambda: js.fetch(T + "/fetch"))
""",
    # fetch as the worker's global scope defines it, past any wrapper put on the global object
    "fetch-from-prototype": """
def original_fetch():
    scope = js.Object.getPrototypeOf(js.self)
    while not js.Object.prototype.hasOwnProperty.call(scope, "fetch"):
        scope = js.Object.getPrototypeOf(scope)
    fetch = js.Object.getOwnPropertyDescriptor(scope, "fetch").value
    return fetch.call(js.self, T + "/fetch-from-prototype")
attempt("fetch-from-prototype", original_fetch)
""",
    # an object that passes `instanceof Request` and shows the guard one url, while fetch, for
    # which it is no Request, turns it into a string: another url
    "request-object": """
disguised = js.Object.create(js.Request.prototype)
js.Object.defineProperty(disguised, "url", js_object(value=SITE + "index.html"))
disguised.toString = create_proxy(lambda *_: T + "/request-object")
attempt("request-object", lambda: js.fetch(disguised))
""",
    "xhr": """
def xhr():
    x = js.XMLHttpRequest.new()
    x.open("GET", T + "/xhr", False)
    x.send()
attempt("xhr", xhr)
""",
    "open-url": """
from pyodide.http import open_url
attempt("open-url", lambda: open_url(T + "/open-url"))
""",
    "websocket": """
attempt("websocket", lambda: connect(js.WebSocket, "/websocket"))
""",
    # the browser's own WebSocket, behind a guard: the class a subclass extends, or the
    # constructor its instances name
    "websocket-real-constructor": """
def real_websocket():
    for candidate in (js.Object.getPrototypeOf(js.WebSocket), js.WebSocket.prototype.constructor):
        if candidate != js.WebSocket and getattr(candidate, "name", "") == "WebSocket":
            return candidate
    return js.WebSocket
attempt("websocket-real-constructor", lambda: connect(real_websocket(), "/websocket-real"))
""",
    "eventsource": """
def listen():
    source = js.EventSource.new(T + "/eventsource")
    def executor(resolve, reject):
        def done(event):
            source.close()
            resolve(event.type)
        source.onopen = source.onerror = create_proxy(done)
    return js.Promise.new(create_proxy(executor))
attempt("eventsource", listen)
""",
    "importscripts": """
attempt("importscripts", lambda: js.importScripts(T + "/importscripts.js"))
""",
    "font-face": """
attempt("font-face", lambda: js.FontFace.new("mh-probe", "url(" + T + "/font-face)").load())
""",
}


def run_cell(page, code, marker, timeout=30_000):
    cell = page.locator("[data-cell]").first
    cell.locator("textarea").fill(code)
    cell.get_by_role("button", name="Run").click()
    out = cell.locator("[data-output]")
    out.locator(f"pre.stdout:has-text('{marker}'), pre.error").first.wait_for(timeout=timeout)
    return out.inner_text()


def wait_until(condition, timeout=20):
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("technique", list(TECHNIQUES))
def test_python_reaches_no_other_origin(chapter, host, recorder, technique):
    _, seen = host
    recorder.hits.clear()
    code = PRELUDE.format(target=recorder.origin) + TECHNIQUES[technique]
    output = run_cell(chapter, code, f"attempted {technique}")
    assert f"attempted {technique}" in output, output  # the attempt ran, and was not a typo
    assert wait_until(lambda: f"/__settled/{technique}" in seen), (
        f"the attempt never settled: {output}"
    )
    assert recorder.hits == [], output
    assert chapter.uncaught == []


def test_the_page_and_its_worker_break_no_rule_while_python_boots(browser, host):
    """Pyodide, numpy and the models load in the worker under the page's policy, which the
    worker inherits even with no header: nothing of theirs needs eval or another origin (a
    refusal would show as a violation event in the worker), while a reader's eval is refused."""
    base, _ = host

    def listen(route):
        response = route.fetch()
        body = (
            "self.__violations = [];\n"
            'self.addEventListener("securitypolicyviolation", (e) => '
            "self.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));\n"
        ) + response.text()
        route.fulfill(response=response, body=body)

    context = browser.new_context()
    page = context.new_page()
    page.route(re.compile(r".*/static/worker\.(\w+\.)?js$"), listen)
    open_ready(page, base + CHAPTER)
    page.locator("#split-attend [data-fk='step-attend']").click()
    page.wait_for_selector("#split-attend [data-fk='step-attend'][aria-pressed='true']")
    output = run_cell(
        page, "import js\nprint('violations', list(js.self.__violations))", "violations"
    )
    assert "violations []" in output, output
    # and the worker is held to the page's policy: eval is refused, and reported (the report
    # is an event, dispatched after the cell has ended: later cells read it; once for each
    # policy in force, the <meta> one and, under `build.py serve`, the header)
    output = run_cell(
        page,
        "try:\n    js.eval('1')\nexcept Exception as err:\n    print('refused', err)",
        "refused",
    )
    assert "unsafe-eval" in output, output
    for _ in range(20):
        output = run_cell(page, "print('then', sorted(set(js.self.__violations)))", "then")
        if "then []" not in output:
            break
        page.wait_for_timeout(100)
    context.close()
    assert "then ['script-src eval']" in output, output


def test_a_link_cannot_move_python_onto_the_page_thread(browser, host):
    """?python=main-thread used to run Pyodide on the page's own thread, where Stop cannot end a
    reader's endless loop; Python runs in the worker whatever the address says."""
    base, _ = host
    context = browser.new_context()
    page = context.new_page()
    open_ready(page, base + CHAPTER + "?python=main-thread")
    output = run_cell(page, "import js\nprint('scope', js.globalThis.constructor.name)", "scope")
    context.close()
    assert "scope DedicatedWorkerGlobalScope" in output, output
