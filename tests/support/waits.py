"""Waiting for a condition, never for a fixed time: outside the browser (`wait_until`), and in
the page for what Playwright's own waits do not cover (a viewport drawn at its size, an address
written after a paint, what a redraw left for later, a control that has stopped moving)."""

import time


def wait_until(condition, timeout, message, interval=0.05):
    """Wait, outside the browser, until condition() is true (a server has rebuilt, a process has
    spoken); return its value, or fail with `message` after `timeout` seconds. In the browser,
    use Playwright's own waits (expect, wait_for_function, wait_for_url, locator.wait_for)."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{message} (waited {timeout} s)")
        time.sleep(interval)
    return value


FRAMES_JS = "new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))"


def resized(page, width, height):
    """Set PAGE's viewport to WIDTH x HEIGHT and wait until two frames are drawn at that size."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function("([w, h]) => innerWidth === w && innerHeight === h", arg=[width, height])
    page.evaluate(FRAMES_JS)
    return page


def url_with(page, *parts, without=()):
    """Wait until the page's address holds every one of PARTS and none of WITHOUT, and return
    it: figures.js writes a redraw's state into the URL once the redraw is painted, in the next
    gap between frames."""
    page.wait_for_url(lambda u: all(p in u for p in parts) and not any(p in u for p in without))
    return page.url


def settled(page):
    """Finish now what the page's last redraw left for after its paint (figures.js: a slot far
    from the view, the URL), as a download or printing does: the page's own figures module's
    writeURLNow(), the module main.js imports (its name has the build's hash). Waiting for an
    idle moment instead failed under load: headless Chromium can go a minute without an idle
    callback."""
    page.evaluate("""async () => {
      const main = document.querySelector("script[type=module][src*='static/main.']").src;
      const code = await (await fetch(main)).text();
      const name = code.match(/from "\\.\\/(figures\\.[0-9a-f]+\\.js)"/)[1];
      (await import(new URL(name, main).href)).writeURLNow();
    }""")


SETTLE_JS = """async (el, [frames, ms]) => {
  el.scrollIntoView({ block: "center" });
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  const places = [];
  const end = performance.now() + ms;
  for (let still = 0; performance.now() < end; ) {
    await frame();
    const r = el.getBoundingClientRect();
    const at = `x ${Math.round(r.x)} y ${Math.round(r.y)} (page at ${Math.round(scrollY)})`;
    still = at === places.at(-1) ? still + 1 : 0;
    if (still >= frames) return null;
    if (still === 0) places.push(at);
  }
  return places.slice(-12);
}"""


def click_settled(page, selector, timeout_ms=10_000):
    """Click a control far from the view as a reader does: scroll to it, wait until it has kept
    its place for a few frames (sections laid out as they come near the view may move it), then
    click. Fails naming the places it kept moving between if it never settles (Playwright's own
    click and scroll wait for a still element themselves, scroll again on each retry, and only
    say "element is not stable")."""
    control = page.locator(selector)
    moving = control.evaluate(SETTLE_JS, [3, timeout_ms])
    assert moving is None, f"{selector} kept moving for {timeout_ms} ms: " + "; ".join(moving)
    control.click()
