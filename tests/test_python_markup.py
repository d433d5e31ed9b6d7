"""Python's markup is data: whatever reaches the page as a figure's answer keeps only the
elements and attributes the figure kit emits (static/sanitize.js, DOMPurify), on a host without
headers and under `build.py serve`. The two ways a live cell could answer a figure with markup
of its own: replace the figure's render in its module, or replace the worker's onmessage and
answer the page's next figure call itself. Each adds every way out a probe of the page found
(a meta refresh first) aimed at another origin, a recorder on another port of 127.0.0.1.
"""

import json

import pytest
from conftest import open_ready
from test_hostile_authors import KIT_ONLY
from test_netguard import CHAPTER, Handler, PlainHost, Recorder, run_cell, serve

pytestmark = pytest.mark.browser

HOSTILE = """
<meta http-equiv="refresh" content="0;url={o}/meta">
<meta http-equiv="refresh" content="0">
<base href="{o}/base/">
<a href="{o}/a" class="mh-probe-link">away</a>
<form action="{o}/form" method="post"><button formaction="{o}/formaction">go</button></form>
<form class="mh-probe-plain"><input name="q" aria-label="q">
<button type="submit">send</button></form>
<img src="{o}/img" onerror="location='{o}/onerror'">
<svg><use href="{o}/use.svg#x"/><rect fill="url({o}/fill#x)" width="1" height="1"/></svg>
<style>@import url({o}/style);</style>
<iframe src="{o}/iframe"></iframe>
<script>location = "{o}/script"</script>
<p class="{mark}" onclick="location='{o}/onclick'">probe</p>
"""

# what must not be in the figure once the hostile answer is drawn
LEFT_OVER = """(figure) => {
  const away = "meta, base, script, style, iframe, img, use, object, embed, link";
  const found = [...figure.querySelectorAll(away)].map((n) => n.tagName);
  for (const el of figure.querySelectorAll("*")) {
    for (const { name, value } of el.attributes) {
      const what = `${el.tagName} ${name}=${value}`;
      if (/^(on|style$|action$|formaction$)/i.test(name)) found.push(what);
      if (name === "href" && !value.startsWith("#")) found.push(what);
      if (/url\\(\\s*['"]?[^#\\s'"]/i.test(value)) found.push(what);
    }
  }
  return found;
}"""

# whether each form submission's default (a navigation) was prevented, once the page's own
# listeners have run
SUBMITS = """() => {
  window.mhSubmits = [];
  addEventListener("submit", (e) => window.mhSubmits.push(e.defaultPrevented));
}"""

BY_RENDER = """
import toymodels.split_attend.figure as f
_r = f.render
def render(state=None, fid="split-attend"):
    out = _r(state, fid)
    out["html"] += HOSTILE
    return out
f.render = render
print("armed")
"""

BY_WORKER = """
import importlib, json
import js
from pyodide.ffi import create_proxy
_original = js.self.onmessage
def _answer(event):
    d = event.data
    if d.type == "call" and d.fn.endswith(":render"):
        module, func = d.fn.split(":")
        out = getattr(importlib.import_module(module), func)(*d.args.to_py())
        out["html"] += HOSTILE
        js.self.postMessage(js.JSON.parse(json.dumps({"id": d.id, "ok": True, "result": out})))
    else:
        _original(event)
js.self.onmessage = create_proxy(_answer)
print("armed")
"""


@pytest.fixture(scope="module")
def recorder():
    with Recorder() as r:
        yield r


@pytest.fixture(scope="module", params=["no-header", "header"])
def host(request, site):
    server = serve(site, PlainHost if request.param == "no-header" else Handler, [])
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("how", ["render", "worker"])
def test_python_markup_cannot_take_the_page_away(browser, host, recorder, how):
    recorder.hits.clear()
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    open_ready(page, host + CHAPTER)
    mark = f"mh-probe-{how}"
    hostile = HOSTILE.format(o=recorder.origin, mark=mark)
    code = f"HOSTILE = {hostile!r}\n" + (BY_RENDER if how == "render" else BY_WORKER)
    assert "armed" in run_cell(page, code, "armed")
    figure = page.locator("figure#split-attend")
    figure.locator("button[data-key][aria-pressed='false']").first.click()
    # Python's answer is drawn (before the fix, the page was refreshed instead)
    figure.locator(f"p.{mark}").wait_for(state="attached", timeout=20_000)
    assert figure.evaluate(LEFT_OVER) == []
    # a form from Python submits nothing, by a click or by Enter: the page would reload
    page.evaluate(SUBMITS)
    go, send = (figure.get_by_role("button", name=n, exact=True) for n in ("go", "send"))
    enter = figure.locator("form.mh-probe-plain input")
    for n, submit in enumerate((go.click, send.click, lambda: enter.press("Enter")), 1):
        submit()
        assert page.evaluate("window.mhSubmits") == [True] * n
    assert page.url.startswith(host + CHAPTER)
    # a round trip to the page and to Python after the drawing: a refresh of 0 s would have gone
    assert "still" in run_cell(page, "print('still here')", "still here")
    context.close()
    assert recorder.hits == []


# every piece of markup in the build's stored answers, as a figure's <template> parses it and as
# the sanitizer leaves it
KIT_KEEPS = """async ([url, pieces]) => {
  const { clean } = await import(url);
  const changed = [];
  for (const html of pieces) {
    const parsed = document.createElement("template");
    parsed.innerHTML = html;
    const kept = document.createElement("div");
    kept.append(clean(html));
    const before = parsed.innerHTML;
    if (kept.innerHTML !== before) {
      let i = 0;
      while (before[i] === kept.innerHTML[i]) i++;
      changed.push([before.slice(i - 80, i + 80), kept.innerHTML.slice(i - 80, i + 80)]);
    }
  }
  return changed;
}"""


def markup_in(value):
    if isinstance(value, dict):
        return [m for v in value.values() for m in markup_in(v)]
    if isinstance(value, list):
        return [m for v in value for m in markup_in(v)]
    return [value] if isinstance(value, str) and "<" in value else []


def test_the_sanitizer_keeps_all_the_kit_emits(page, base_url, site):
    """The allow-list covers the figure kit: every stored answer of the build comes through the
    sanitizer as it went in (no element, attribute or value lost); and what the build refuses
    in a figure's first view by the same rules (sitebuild/authoring/sanitizer.py) is what it
    changes."""
    pieces = [
        m
        for f in sorted((site / "prerendered").glob("*.json"))
        for m in markup_in(json.loads(f.read_text("utf-8")))
    ]
    assert len(pieces) > 100
    (sanitizer,) = (site / "static").glob("sanitize.*.js")
    page.goto(base_url)  # the site's origin; no Python needed
    url = base_url + "static/" + sanitizer.name
    assert page.evaluate(KIT_KEEPS, [url, pieces]) == []
    refused = [html for html, _ in KIT_ONLY]
    assert len(page.evaluate(KIT_KEEPS, [url, refused])) == len(refused)
