"""Framing: under `build.py serve`'s header a chapter may be framed only by the
site itself, so a page on another origin cannot show one invisibly and steer the reader's
clicks; an embed/ page may be framed by a course page anywhere. The other origin is a server on
another port of 127.0.0.1."""

import urllib.request

import pytest
from test_netguard import PlainHost, serve

from sitebuild.pipeline import policy

COURSE = """<!doctype html><html><head><title>Another origin</title>
<link rel="icon" href="data:,"></head><body>
<iframe name="chapter" src="{base}split-attend.html"></iframe>
<iframe name="embed" src="{base}embed/split-attend/split-attend.html"></iframe>
</body></html>"""


def test_the_header_says_who_may_frame_each_page(base_url):
    def framing(path):
        with urllib.request.urlopen(base_url + path) as answer:
            rules = answer.headers["Content-Security-Policy"].split("; ")
        return [r for r in rules if r.startswith("frame-ancestors")]

    assert framing("split-attend.html") == ["frame-ancestors 'self'"]
    assert framing("index.html") == ["frame-ancestors 'self'"]
    assert framing("embed/split-attend/split-attend.html") == [
        f"frame-ancestors {policy.EMBED_ANCESTORS}"
    ]


@pytest.mark.browser
def test_another_origin_can_frame_an_embed_but_not_a_chapter(browser, base_url, tmp_path):
    (tmp_path / "course.html").write_text(COURSE.format(base=base_url))
    server = serve(tmp_path, PlainHost, [])  # the course page's host sends no policy
    context = browser.new_context()
    page = context.new_page()
    try:
        with page.expect_console_message(lambda m: "frame-ancestors" in m.text) as refused:
            page.goto(f"http://127.0.0.1:{server.server_port}/course.html")
        assert "frame-ancestors 'self'" in refused.value.text, refused.value.text
        page.frame(name="embed").wait_for_selector("figure[data-figure]", state="attached")
        assert page.frame(name="chapter").url.startswith("chrome-error:")
    finally:
        context.close()
        server.shutdown()
        server.server_close()
