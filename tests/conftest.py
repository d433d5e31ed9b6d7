"""Shared fixtures: one built site per test run, served on 127.0.0.1, and Debian's Chromium."""

import functools
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitebuild import build as site_build
from sitebuild.serve import Handler  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    return site_build.build(ROOT, tmp_path_factory.mktemp("built") / "site")


def serve_dir(directory):
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(directory))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="session")
def base_url(site):
    server = serve_dir(site)
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Watch:
    """Everything a page does that a test must not let pass: console errors, page errors, foreign requests."""

    def __init__(self, page):
        self.errors, self.foreign = [], []
        page.on("console", lambda m: m.type in ("error", "assert") and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        page.on(
            "request",
            lambda r: (
                r.url.startswith(("http://127.0.0.1:", "data:", "blob:"))
                or self.foreign.append(r.url)
            ),
        )

    def clean(self):
        assert self.errors == [], self.errors
        assert self.foreign == [], self.foreign


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    pg = context.new_page()
    pg.watch = Watch(pg)
    yield pg
    context.close()


def open_ready(page, url):
    """Open a chapter and wait until Python is ready and every figure is live."""
    page.goto(url)
    page.wait_for_selector("html.py-ready", timeout=90_000)
    return page
