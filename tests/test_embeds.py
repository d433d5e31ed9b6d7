"""Embeds that fit: the frame on a course page follows its content's height both ways, exactly,
and the embed page shows the figure and what it needs, nothing more."""

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

# the course page is someone else's; it names no icon, so that Chromium asks for no favicon.ico.
# Its frame is 640 px wide, where the three heads take two rows (one head alone, one row).
# STYLE is the course page's own style sheet (inline: it is not this site's page)
COURSE = """<!doctype html><html><head><title>A course page</title>
<link rel="icon" href="data:,"><style>{style}</style></head><body>
<h1>Week 3: attention</h1>
<iframe id="fig" src="{src}" title="Figure" width="640" height="200"></iframe>
<p id="after">After the figure.</p>
<script src="{resize}"></script></body></html>"""

# [the frame's viewport height, the height of the content inside it], read by the course page
# and, since the frame is of another origin, by the test inside the frame
VIEWPORT = "() => document.getElementById('fig').clientHeight"
CONTENT = "() => Math.ceil(document.documentElement.getBoundingClientRect().height)"
FITS = """(content) => document.getElementById('fig').clientHeight === content"""


@pytest.fixture
def course(base_url, tmp_path):
    """course(style=""): the address of a course page on another origin that embeds Figure 1."""
    servers = []

    def make(style=""):
        folder = tmp_path / f"course{len(servers)}"
        folder.mkdir()
        src = f"{base_url}embed/many-heads/three-heads.html"
        (folder / "course.html").write_text(
            COURSE.format(style=style, src=src, resize=f"{base_url}static/embed-resize.js")
        )
        handler = functools.partial(SimpleHTTPRequestHandler, directory=str(folder))
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}/course.html"

    yield make
    for server in servers:
        server.shutdown()


def fitted(page):
    """The frame's viewport height once it equals its content's height, exactly."""
    frame = page.frame_locator("#fig")
    content = frame.locator("html").evaluate(f"({CONTENT})")
    page.wait_for_function(FITS, arg=content)
    return page.evaluate(VIEWPORT), content


@pytest.mark.browser
@pytest.mark.parametrize("style", ["", "*, *::before, *::after { box-sizing: border-box; }"])
def test_the_frame_follows_its_content_both_ways_exactly(page, course, style):
    page.goto(course(style))
    frame = page.frame_locator("#fig")
    frame.locator("html.py-ready").wait_for(timeout=90_000)
    start, _ = fitted(page)
    assert start > 300
    frame.get_by_role("button", name="Head 1", exact=True).click()
    frame.locator(".mh-head[data-head='2']").first.wait_for(state="hidden")
    shrunk, content = fitted(page)
    assert shrunk == content < start - 100, (shrunk, start)
    for _ in range(3):  # taps that change nothing change no height
        frame.get_by_role("button", name="Head 1", exact=True).click()
    assert fitted(page)[0] == shrunk
    frame.get_by_role("button", name="All heads", exact=True).click()
    frame.locator(".mh-head[data-head='2']").first.wait_for()
    grown, content = fitted(page)
    assert grown == content == start, (grown, start)
    # no scrollbar inside the frame: the content is exactly as tall as the frame
    assert frame.locator("html").evaluate("(el) => el.scrollHeight === el.clientHeight")


@pytest.mark.browser
def test_an_embed_shows_only_the_figure_once_ready(page, base_url):
    page.goto(f"{base_url}embed/many-heads/three-heads.html")
    page.wait_for_selector("html.py-ready", timeout=90_000)
    shown = page.evaluate(
        """() => [...document.querySelector('main').children]
          .filter((el) => el.getClientRects().length)
          .map((el) => el.className)"""
    )
    assert shown == ["mh-figure is-live", "mh-from"], shown
    assert page.locator("[data-pystatus]").is_hidden()
    assert page.locator("#three-heads [data-embed]").is_hidden()
