"""What the bench's parts share: the site built and served on 127.0.0.1, Debian's Chromium, the
scripts each part runs in the page (bench/pages/*.js) and in Pyodide (bench/in_pyodide/*.py),
and a percentile. The server and the browser's arguments are the tests' own
(sitebuild/serving/loopback.py): the bench measures the site as the tests open it."""

import ast
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from sitebuild.pipeline import build as site_build
from sitebuild.serving.loopback import CHROMIUM, CHROMIUM_ARGS, serve_dir

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "bench" / "pages"
IN_PYODIDE = ROOT / "bench" / "in_pyodide"
HELPERS = "helpers.js"  # in scope of every page function: timeToPaint, readyPython, runCell
TEXT_64 = ("the queen. the queen. " * 3)[:64]  # the character model's text, 64 characters


def page_function(name):
    """bench/pages/NAME, a function expression, as page.evaluate takes it: an expression whose
    value is that function (Playwright calls it with the argument), with helpers.js in scope."""
    helpers = (PAGES / HELPERS).read_text(encoding="utf-8")
    function = (PAGES / name).read_text(encoding="utf-8").strip().removesuffix(";")
    return f"(() => {{\n{helpers}\nreturn (\n{function}\n);\n}})()"


def page_script(name):
    """bench/pages/NAME as it is: an init script or a module served to the page."""
    return (PAGES / name).read_text(encoding="utf-8")


def in_pyodide(name, *args):
    """bench/in_pyodide/NAME as a live cell's code whose last expression is measure(*ARGS)."""
    code = (IN_PYODIDE / name).read_text(encoding="utf-8")
    return f"{code}\nmeasure({', '.join(map(repr, args))})\n"


def in_cpython(code):
    """CODE, as in_pyodide makes it (its last line an expression), in a Python of its own with
    numpy on one thread, as Pyodide's is -> what that expression, a JSON string, holds."""
    body, call = code.rstrip().rsplit("\n", 1)
    done = subprocess.run(
        [sys.executable, "-c", f"{body}\nprint({call})"],
        cwd=ROOT,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def answer(value):
    """A live cell's value that is the repr of a JSON string -> what the JSON holds."""
    return json.loads(ast.literal_eval(value))


def run_in_pyodide(browser, base, name, *args):
    """bench/in_pyodide/NAME's measure(*ARGS) in a Python of its own, on the site's home page
    (which starts no Python of its own to compete with it) -> what it returned."""
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(base)
    try:
        return answer(page.evaluate(page_function("run-python.js"), [in_pyodide(name, *args)]))
    finally:
        context.close()


def run_with_files(browser, base, files, code, part):
    """CODE (as in_pyodide makes it) in a Python of its own on the site's home page, each of
    FILES ([url, name]) put into its file system as /tmp/NAME first (pages/own-file.js) -> what
    it returned; PART names the bench part if the page crashes."""
    return _on_home_page(browser, base, page_function("own-file.js"), [files, code], part)


def run_with_blob(browser, base, url, code, part):
    """CODE (as in_pyodide makes it) in a Python of its own on the site's home page, in its
    worker, with the file at URL handed to the worker as the page hands it a reader's File
    (pages/own-file-blob.js) -> what it returned; PART names the bench part if the page
    crashes."""
    return _on_home_page(browser, base, page_function("own-file-blob.js"), [url, code], part)


def _on_home_page(browser, base, function, args, part):
    """FUNCTION (a page function's source) called with ARGS on the site's home page, in a
    context of its own -> the answer of what it returned."""
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.on("crash", lambda _: print(f"{part}: the page crashed", file=sys.stderr))
    page.goto(base)
    try:
        return answer(page.evaluate(function, args)["value"])
    finally:
        context.close()


@contextlib.contextmanager
def served_site(site=None):
    """-> (the site folder, its URL on 127.0.0.1): SITE, or the project built afresh into a
    temporary folder."""
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(site) if site else site_build.build(ROOT, Path(tmp) / "site")
        server = serve_dir(site)
        try:
            yield site, f"http://127.0.0.1:{server.server_port}/"
        finally:
            server.shutdown()


@contextlib.contextmanager
def chromium():
    """-> (Playwright, Debian's Chromium launched as the tests launch it)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield p, browser
        finally:
            browser.close()


def chromium_version():
    return subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()


def percentile(values, p):
    """The P-th percentile of VALUES, the nearest rank."""
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]
