"""Answers ahead and answers kept, in the page: the store's logic (static/answers.js: what is
asked ahead and when, the slow-field rule, answers kept, the build's answers) is tested in Node
(tests/js/answers.test.js); here, what needs a real page. A state from the address is asked for
once, then the word beside it at once, before the page draws, and the others once the page is
idle; a tap on the next word is drawn from the answer worked out ahead, and a tap back to a word
answered before from Python's kept answer, exactly as Python draws them; after another call to
Python (the numbers as CSV) a tap is asked again. And once Python is ready and a figure comes
within a screen of the view, Python is asked for the state it shows, so the figure's first call
(its imports, its data) is not made at the reader's first tap, nor for a figure the reader never
reaches; then, once the page is idle, for the next state along the figure's first control. The
build's answers (prerendered/, test_prerendered.py) are not served here, so every tap is
Python's."""

import pytest
from conftest import open_ready, url_with, without_build_answers
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from toymodels.many_heads import figure as many_heads

FID = "three-heads"
# every call the page sends to Python's worker, in order, as [function, state]
RECORD = """
window.sentToPython = [];
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function (message, ...rest) {
  if (message && message.type === "call") window.sentToPython.push([message.fn, message.args[0]]);
  return post.call(this, message, ...rest);
};
"""
# whether the figure's drawn body is Python's markup for the state in the URL, node for node
# (a redraw may set an element's attributes in another order), less scrollers.js's own marks
DRAWN_IS = """([fid, html]) => {
  const body = document.getElementById(fid).querySelector("[data-body]").cloneNode(true);
  for (const el of body.querySelectorAll(".mh-more-left, .mh-more-right")) {
    el.classList.remove("mh-more-left", "mh-more-right");
    if (el.getAttribute("class") === "") el.removeAttribute("class");
  }
  const t = document.createElement("template");
  t.innerHTML = html;
  const want = [...t.content.childNodes];
  const got = [...body.childNodes];
  return got.length === want.length && want.every((n, i) => n.isEqualNode(got[i]));
}"""
# the words of the states the figure's render was sent, in order
WORDS_SENT = """(fid) => window.sentToPython
  .filter(([fn, state]) => fn === document.getElementById(fid).dataset.figure)
  .map(([, state]) => state.word)"""


@pytest.fixture
def page(new_page):
    """A page of its own whose figures have no build's answers to draw from."""
    page = new_page(viewport={"width": 1200, "height": 900})
    without_build_answers(page)
    return page


def tap_word(page, i):
    """Tap word I and wait until it is drawn pressed (the URL is written later, once the page
    has a gap between frames)."""
    word = page.locator(f"#{FID} .mh-word").nth(i)
    word.click()
    expect(word).to_have_attribute("aria-pressed", "true")


def drawn_as_python_says(page, word):
    """Whether the figure shows word WORD selected, exactly as CPython's render draws it."""
    url_with(page, f"{FID}.word={word}")
    return page.evaluate(DRAWN_IS, [FID, many_heads.render({"word": str(word)}, FID)["html"]])


def words_sent(page):
    return page.evaluate(WORDS_SENT, FID)


def states_sent(page):
    """The states the figure's render was sent, in order."""
    return page.evaluate(
        "(fid) => window.sentToPython.filter(([fn]) => fn === "
        "document.getElementById(fid).dataset.figure).map(([, state]) => state)",
        FID,
    )


def wait_sent(page, words, first=False):
    """Wait until the figure has sent WORDS, in that order, after what it had sent before; or
    (FIRST) as the first of all it has sent (on a busy machine the idle ones after them may
    already have gone when the page is next looked at)."""
    test = (
        "slice(0, want.length).join() === want.join()" if first else "join().endsWith(want.join())"
    )
    try:
        page.wait_for_function(
            f"([fid, want]) => ({WORDS_SENT})(fid).{test}",
            arg=[FID, words],
            timeout=15_000,
        )
    except PlaywrightTimeout:
        where = "beginning" if first else "ending"
        raise AssertionError(f"sent {words_sent(page)}, not {where} with {words}") from None


# the words the figure had sent to Python when each redraw was done (mh:drawn, from draw itself);
# and the page is never idle (requestIdleCallback's callbacks wait in window.idle) until the test
# says it is (window.idleNow())
AT_DRAWN = (
    RECORD
    + """
window.sentAtDrawn = [];
document.addEventListener("mh:drawn", () => window.sentAtDrawn.push(
  window.sentToPython.map(([, state]) => state.word)));
window.idle = [];
window.requestIdleCallback = (f) => window.idle.push(f);
const deadline = { didTimeout: false, timeRemaining: () => 50 };
window.idleNow = () => {
  window.requestIdleCallback = (f) => setTimeout(() => f(deadline), 0);
  window.idle.splice(0).forEach((f) => f(deadline));
};
"""
)


def download_csv(page):
    """Another call to Python, which may change what Python holds: the figure's numbers as CSV."""
    page.locator(f"#{FID} [data-download]").click()
    with page.expect_download():
        page.locator(f"#{FID}").get_by_role("button", name="Numbers (CSV)").click()


def drawn_at(page):
    """The words sent to Python when the last redraw was drawn."""
    return page.evaluate("window.sentAtDrawn.at(-1)")


@pytest.mark.browser
def test_taps_are_drawn_from_the_answers_ahead_and_kept_as_python_draws_them(page, base_url):
    page.add_init_script(AT_DRAWN)  # the page is idle only when the test says so
    open_ready(page, base_url + f"many-heads.html?{FID}.word=2")
    # the state from the address, and word 3 sent as its answer was about to be drawn
    wait_sent(page, ["2", "3"])
    assert drawn_at(page) == ["2", "3"]
    # the words before and further on wait for the page to be idle
    page.wait_for_function("() => window.idle.length >= 2")
    assert words_sent(page) == ["2", "3"]
    page.evaluate("window.idleNow()")
    # the four words beside word 2, after before before; the state the page was built with
    # (word 7) is never asked for, and the address's state only once
    wait_sent(page, ["2", "3", "1", "4", "0"])
    assert words_sent(page) == ["2", "3", "1", "4", "0"]
    tap_word(page, 3)  # drawn from the answer worked out ahead, the next word already asked
    assert drawn_at(page) == ["2", "3", "1", "4", "0", "5"]
    assert drawn_as_python_says(page, 3)
    wait_sent(
        page, ["2", "3", "1", "4", "0", "5", "6"], first=True
    )  # the words beside 3 not answered yet
    tap_word(page, 2)  # drawn from Python's answer kept from the start
    assert drawn_as_python_says(page, 2)
    assert words_sent(page).count("2") == 1
    download_csv(page)
    tap_word(page, 3)  # the answers kept before that call are not drawn again
    page.wait_for_function(
        f"(fid) => ({WORDS_SENT})(fid).filter((w) => w === '3').length === 2", arg=FID
    )
    assert drawn_as_python_says(page, 3)


# resolves once an IntersectionObserver made now has had its first notice for the figure: the
# page's own observers, made before it, have had theirs in the same task or before (the notices
# go out in the order the observers were made); then a task later, what they sent has gone
NOTICED = """(fid) => new Promise((done) => {
  const seen = new IntersectionObserver(() => { seen.disconnect(); setTimeout(done, 0); });
  seen.observe(document.getElementById(fid));
})"""


@pytest.mark.browser
def test_python_is_asked_for_the_state_shown_once_the_figure_comes_near_then_the_next_one(
    new_page, base_url
):
    page = new_page(viewport={"width": 1200, "height": 500})
    without_build_answers(page)
    page.add_init_script(AT_DRAWN)  # the page is idle only when the test says so
    open_ready(page, base_url + "many-heads.html")
    figure = page.locator(f"#{FID}")
    top = figure.evaluate("(f) => f.getBoundingClientRect().top")
    assert top > 2 * 500  # more than a screen below the view
    page.wait_for_selector(f"#{FID}.is-live")
    page.evaluate(NOTICED, FID)
    assert words_sent(page) == []  # far from the view: nothing asked for, nothing fetched
    figure.scroll_into_view_if_needed()
    shown = figure.evaluate("(f) => JSON.parse(f.dataset.state)")
    # its code and data loaded before the reader's first tap, not at it
    wait_sent(page, [shown["word"]])
    assert states_sent(page) == [shown]
    # then, once the page is idle, the next state along the figure's first control (its heads:
    # all of them, then head 1), and only that one, before the reader has done anything
    page.evaluate("window.idleNow()")
    page.wait_for_function("() => window.sentToPython.length >= 2")
    assert states_sent(page) == [shown, {**shown, "head": "1"}]
    # a tap on it is drawn from that answer, exactly as Python draws that state
    figure.locator("[data-key=head][data-value='1']").click()
    page.wait_for_function(
        "(fid) => new URLSearchParams(location.search).get(fid + '.head') === '1'", arg=FID
    )
    assert [s["head"] for s in states_sent(page)].count("1") == 1
    assert page.evaluate(DRAWN_IS, [FID, many_heads.render({"head": "1"}, FID)["html"]])
