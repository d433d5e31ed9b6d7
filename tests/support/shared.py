"""The pages with Python ready that one module's tests share (SharedPages), lent to one test at a
time and given back as they were lent."""

import dataclasses
import warnings

from .python import NO_OFFLINE_COPY, open_ready
from .waits import FRAMES_JS, resized

# what a shared page must give back as it was lent: its address and history, its storage, the
# values of its fields and its markup (less the classes scrollers.js sets on boxes that scroll
# as they are laid out, scrolled or resized), each as a short digest
STATE_JS = """async () => {
  const digest = async (text) => {
    const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
    return [...new Uint8Array(bytes)].slice(0, 8).map((b) => b.toString(16).padStart(2, "0"))
      .join("");
  };
  const stored = Object.keys(localStorage).sort().map((k) => `${k}=${localStorage.getItem(k)}`);
  const fields = [...document.querySelectorAll("input, textarea, select")]
    .map((f) => (f.type === "checkbox" || f.type === "radio" ? f.checked : f.value));
  const markup = document.documentElement.outerHTML
    .replace(/ ?\\bmh-(more-left|more-right|scrolls|wide-math)\\b/g, "")
    .replace(/ class=""/g, "");
  return {
    address: location.href,
    history: history.length,
    storage: await digest(JSON.stringify(stored)),
    fields: await digest(JSON.stringify(fields)),
    markup: await digest(markup),
  };
}"""

# two frames, then the page's first idle moment (or a second): what a test set off in the page
# has run, and what it said has come back, before the page goes to another test
FLUSH_JS = """() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() =>
  requestIdleCallback(done, { timeout: 1000 }))))"""
# the boxes a shared page has scrolled when it opens (scrollers.js shows a selected column), kept
# so that each borrower gets them so, and every other box at its start
SCROLLS_KEPT_JS = """() => {
  window.__sharedScrolls = new Map([...document.querySelectorAll("*")]
    .filter((el) => el.scrollLeft || el.scrollTop)
    .map((el) => [el, [el.scrollLeft, el.scrollTop]]));
}"""
AS_OPENED_JS = """() => {
  document.activeElement?.blur();
  for (const el of document.querySelectorAll("*")) {
    const [left, top] = window.__sharedScrolls.get(el) ?? [0, 0];
    if (el.scrollLeft !== left || el.scrollTop !== top) {
      el.scrollTo({ left, top, behavior: "instant" });
    }
  }
  scrollTo({ left: 0, top: 0, behavior: "instant" });
}"""


@dataclasses.dataclass
class Shared:
    page: object
    profile: object  # tests/profiles.py's Profile, the page's alone
    viewport: dict
    state: dict = None
    changed_by: str = None  # the test that said it changes the page, and then closes it

    @property
    def relay(self):
        return self.profile.relay


class SharedPages:
    """The pages with Python ready that one module's tests share: one per path and options,
    opened by the first test that asks for it and lent to one test at a time.

    While a test holds a page, the page's errors and requests to other origins are that test's
    (page.watch is its watch). Before the test ends the page is given time to settle (two
    frames and an idle moment), so that what the test set off is reported as its own; what the
    page does while no test holds it fails the next test that borrows it, or the module's last
    test, naming the test that held it before.

    A borrower gets the page scrolled to the top (every box in it scrolled as when the page
    opened), with nothing focused, at the viewport it was opened with. It may scroll, resize
    (`resized`) and read; anything else it changes it puts back: its address and history, its
    storage, its fields and its markup are compared, when it gives the page back, with what they
    were when the page was opened, and a page that differs is closed (with a warning naming the
    test), so the next test gets a new one. So is a page whose test failed, or whose page
    misbehaved. A test that changes the page on purpose says so (`changes=True`): the page is
    closed when it ends, without a warning (so such a test is best placed after the tests that
    only read the page). A borrower adds no listeners, routes or init scripts of its own to a
    shared page: `init_script` and `prepare` (run once, after Python is ready) are part of what
    names the page."""

    def __init__(self, profiles, base_url):
        """PROFILES: tests/profiles.py's, whose pages these are; BASE_URL: the site's address,
        or a function that gives it (asked for at the first path under it, so a module whose
        pages are all elsewhere builds no site)."""
        self.profiles, self._base_url, self.pages = profiles, base_url, {}

    @property
    def base_url(self):
        if callable(self._base_url):
            self._base_url = self._base_url()
        return self._base_url

    def lend(self, watch, test, path, init_script=None, prepare=None, changes=False, **options):
        options.setdefault("viewport", {"width": 1200, "height": 900})
        key = (path, init_script, prepare, repr(sorted(options.items())))
        shared = self.pages.get(key)
        if shared is None:
            shared = self.pages[key] = self._open(watch, test, path, init_script, prepare, options)
        else:
            shared.page.evaluate("0")  # a round trip: what the page said till now is delivered
            problems = shared.relay.watch.problems()
            if problems:
                self._close(key)
                raise AssertionError(
                    f"the shared page {path} misbehaved while no test held it (after "
                    f"{shared.relay.after}):\n" + "\n".join(problems)
                )
            shared.relay.hold(watch)
            shared.page.evaluate(AS_OPENED_JS)
        shared.page.watch = watch
        shared.changed_by = test if changes else shared.changed_by
        return shared.page

    def _open(self, watch, test, path, init_script, prepare, options):
        profile, page = self.profiles.lend(watch, object(), {**NO_OFFLINE_COPY, **options})
        try:
            if init_script:
                page.add_init_script(init_script)
            open_ready(page, path if "://" in path else self.base_url + path)
            if prepare:
                prepare(page)
            page.evaluate(FRAMES_JS)
            page.evaluate(SCROLLS_KEPT_JS)
            shared = Shared(page, profile, options["viewport"])
            shared.state = page.evaluate(STATE_JS)
        except BaseException:
            self.profiles.give_back(profile, test, failed=True)
            raise
        return shared

    def give_back(self, page, test, failed):
        """TEST is done with PAGE (and FAILED, or not): let the page settle, put its viewport
        back, and keep it for the next test if the test passed and its pages behaved, and the
        page is as it was lent."""
        key = next((k for k, s in self.pages.items() if s.page is page), None)
        if key is None:
            return
        shared = self.pages[key]
        try:
            if not failed and not page.is_closed():
                page.evaluate(FLUSH_JS)
                failed = bool(shared.relay.watch.problems())
            failed = failed or shared.changed_by == test
            if not failed and not page.is_closed():
                if page.viewport_size != shared.viewport:
                    resized(page, **shared.viewport)
                now = page.evaluate(STATE_JS)
                changed = [k for k in now if now[k] != shared.state[k]]
                if changed:
                    warnings.warn(
                        f"{test} gave back the shared page {key[0]} changed "
                        f"({', '.join(changed)}): it is closed, and opened again for the next "
                        "test that asks for it",
                        stacklevel=1,
                    )
                    failed = True
        except Exception:
            failed = True
            raise
        finally:
            shared.relay.release(test)
            if failed or page.is_closed():
                self._close(key)

    def _close(self, key):
        shared = self.pages.pop(key)
        # closing is nobody's misbehaviour
        self.profiles.give_back(shared.profile, shared.relay.after, failed=False)

    def close(self):
        """Close every page; fail if one misbehaved after its last test gave it back."""
        problems = []
        for key, shared in list(self.pages.items()):
            if not shared.page.is_closed():
                shared.page.evaluate("0")
            problems += [
                f"{key[0]} after {shared.relay.after}: {p}" for p in shared.relay.watch.problems()
            ]
            self._close(key)
        assert not problems, "shared pages misbehaved while no test held them:\n" + "\n".join(
            problems
        )
