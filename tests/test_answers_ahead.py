"""Answers ahead (static/figures.js): as a tap is drawn, Python works out the answers for the
controls beside it, the next one at once and the others once the reader pauses; a tap on one of
them is drawn from that answer without asking Python again, exactly as Python draws that state;
an answer worked out before anything else asked Python is not used; a field stops being worked
out ahead after two slow answers in a row, not one. And once Python is ready and a figure comes
within a screen of the view, Python is asked for the state it shows, so the figure's first call
(its imports, its data) is not made at the reader's first tap, nor for a figure the reader never
reaches; then, once the page is idle, for the next state along the figure's first control.
Python's answers are kept: a tap back to a state Python answered is drawn at once, until anything
but a figure's drawing asks Python. The build's answers (prerendered/, drawn until Python has
answered for a figure: test_prerendered.py) are not served here, so every tap is Python's."""

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
# Python's answers for the words in window.slowWords say they took 10 s, as on a machine busy
# for a moment; window.answered lists the words answered, in order
SLOWED = """
window.slowWords = new Set();
window.answered = [];
const words = new Map();
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function (message, ...rest) {
  if (message && message.type === "call") words.set(message.id, message.args[0].word);
  return post.call(this, message, ...rest);
};
const handler = Object.getOwnPropertyDescriptor(Worker.prototype, "onmessage");
Object.defineProperty(Worker.prototype, "onmessage", {
  get() { return handler.get.call(this); },
  set(on) {
    handler.set.call(this, (event) => {
      const data = event.data; // a new copy at each read: changed here, handed on as it is
      const word = words.get(data?.id);
      if (word !== undefined) {
        if (window.slowWords.has(word)) data.ms = 10_000;
        window.answered.push(word);
      }
      on.call(this, new MessageEvent("message", { data }));
    });
  },
});
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


def wait_sent(page, words):
    """Wait until the figure has sent WORDS, in that order, after what it had sent before."""
    try:
        page.wait_for_function(
            f"([fid, want]) => ({WORDS_SENT})(fid).join() .endsWith(want.join())",
            arg=[FID, words],
            timeout=15_000,
        )
    except PlaywrightTimeout:
        raise AssertionError(f"sent {words_sent(page)}, not ending with {words}") from None


def tapped_word_2(page, base_url):
    """The chapter opened, its calls to Python recorded, word 2 tapped and the four words
    beside it worked out ahead."""
    page.add_init_script(RECORD)
    open_ready(page, base_url + "many-heads.html")
    tap_word(page, 2)
    # the tap's own call, then the four words beside it, after before before
    wait_sent(page, ["2", "3", "1", "4", "0"])


@pytest.mark.browser
def test_the_next_word_is_drawn_from_the_answer_worked_out_ahead(page, base_url):
    tapped_word_2(page, base_url)
    assert drawn_as_python_says(page, 2)
    tap_word(page, 3)
    # drawn from the answer worked out ahead, so word 3 was sent once, before the tap; then the
    # words nearest to it that Python has not answered yet, of the sentence's eight (it has
    # answered 4, 2, 1 and 0, and 7, the word shown at first)
    wait_sent(page, ["0", "5", "6"])
    assert words_sent(page).count("3") == 1
    assert drawn_as_python_says(page, 3)


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


@pytest.mark.browser
def test_the_next_word_goes_to_python_while_the_page_draws_and_the_others_once_it_is_idle(
    page, base_url
):
    page.add_init_script(AT_DRAWN)
    open_ready(page, base_url + "many-heads.html")
    shown = page.locator(f"#{FID}").evaluate("(f) => JSON.parse(f.dataset.state).word")
    wait_sent(page, [shown])  # the state shown, asked for as the figure came near
    tap_word(page, 2)
    # when the tap's answer was drawn, word 3 had gone to Python already
    assert page.evaluate("window.sentAtDrawn.at(-1)") == [shown, "2", "3"]
    # once word 3 is answered (its markup waits for an idle moment to be parsed), the words before
    # and further on wait too: a reader tapping on to word 3 does not find Python busy with word 1
    page.wait_for_function("() => window.idle.length >= 2")
    assert words_sent(page) == [shown, "2", "3"]
    page.evaluate("window.idleNow()")
    wait_sent(page, ["2", "3", "1", "4", "0"])


@pytest.mark.browser
def test_an_answer_worked_out_before_another_call_to_python_is_not_used(page, base_url):
    tapped_word_2(page, base_url)
    # another call to Python: the figure's numbers as CSV, made by Python
    page.locator(f"#{FID} [data-download]").click()
    with page.expect_download():
        page.locator(f"#{FID}").get_by_role("button", name="Numbers (CSV)").click()
    tap_word(page, 3)
    assert words_sent(page).count("3") == 2  # asked again at the tap
    assert drawn_as_python_says(page, 3)


@pytest.mark.browser
def test_a_word_answered_before_is_drawn_again_without_asking_python(page, base_url):
    tapped_word_2(page, base_url)
    tap_word(page, 6)  # not beside word 2: asked at the tap, then word 5, the one beside it not
    wait_sent(page, ["6", "5"])  # answered yet (7, the word shown at first, is)
    tap_word(page, 2)
    assert drawn_as_python_says(page, 2)
    assert words_sent(page).count("2") == 1
    # another call to Python (the figure's numbers as CSV) may change what Python holds: the
    # answers kept before it are not drawn again
    page.locator(f"#{FID} [data-download]").click()
    with page.expect_download():
        page.locator(f"#{FID}").get_by_role("button", name="Numbers (CSV)").click()
    tap_word(page, 6)  # asked again at the tap
    page.wait_for_function(
        f"(fid) => ({WORDS_SENT})(fid).filter((w) => w === '6').length === 2", arg=FID
    )
    assert drawn_as_python_says(page, 6)


@pytest.mark.browser
def test_one_slow_answer_ahead_does_not_stop_the_words_after_it(page, base_url):
    page.add_init_script(SLOWED)
    page.add_init_script("window.slowWords.add('3')")
    # word 3's answer ahead "took" 10 s: the words after it are still worked out ahead
    tapped_word_2(page, base_url)
    assert page.evaluate("window.answered").count("3") == 1


# words 1 to 4 tapped on, each 50 ms after the one before is drawn; then the words
# the figure had sent to Python by the time the last was drawn (word 5, the next, may still be
# waiting for word 4's answer ahead to come back)
TAP_ON = """async (fid) => {
  const fig = document.getElementById(fid);
  for (const i of [1, 2, 3, 4]) {
    const drawn = new Promise((r) => fig.addEventListener("mh:drawn", r, { once: true }));
    fig.querySelectorAll(".mh-word")[i].click();
    await drawn;
    await new Promise((r) => setTimeout(r, 50)); // a quick reader: time for the page to be idle
  }
  return window.sentToPython.filter(([fn]) => fn === fig.dataset.figure).map(([, s]) => s.word);
}"""


@pytest.mark.browser
def test_a_reader_tapping_on_finds_python_with_only_the_next_word(page, base_url):
    """While the reader taps on (each tap within 150 ms of the last), only the next word is
    worked out ahead, so it never waits behind a word the reader passed by; the others once
    they pause."""
    page.add_init_script(RECORD)
    open_ready(page, base_url + "many-heads.html")
    # the figure's first call, for the state it shows (word 7), and once that is in, the next
    # state along its first control (head 1, word 7): both go out after Python is ready
    page.wait_for_function(
        "(fid) => JSON.stringify(window.sentToPython.filter(([fn]) => fn === "
        "document.getElementById(fid).dataset.figure).map(([, s]) => [s.word, s.head])) === "
        """'[["7","all"],["7","1"]]'""",
        arg=FID,
    )
    before = len(words_sent(page))
    assert page.evaluate(TAP_ON, FID)[before:] in (["1", "2", "3", "4"], ["1", "2", "3", "4", "5"])
    wait_sent(page, ["4", "5"])  # word 1 asked at its tap, then each next one ahead
    assert words_sent(page)[before:] == ["1", "2", "3", "4", "5"]
    # then, once the reader pauses, the others beside 4 that Python has not answered yet (7 is
    # the word shown at first)
    wait_sent(page, ["5", "6", "0"])


@pytest.mark.browser
def test_two_slow_answers_ahead_in_a_row_stop_working_out_that_field(page, base_url):
    page.add_init_script(RECORD)
    page.add_init_script(SLOWED)
    page.add_init_script("['3', '1'].forEach((w) => window.slowWords.add(w))")
    open_ready(page, base_url + "many-heads.html")
    tap_word(page, 2)
    wait_sent(page, ["2", "3", "1"])
    # once the second slow answer is in, nothing more is sent for the word field
    page.wait_for_function("() => window.answered.join().endsWith('2,3,1')")
    assert words_sent(page)[-3:] == ["2", "3", "1"]
    tap_word(page, 4)  # not worked out ahead: asked at the tap, and no neighbours after it
    wait_sent(page, ["2", "3", "1", "4"])
    page.wait_for_function("() => window.answered.join().endsWith('2,3,1,4')")
    assert words_sent(page)[-4:] == ["2", "3", "1", "4"]
    assert drawn_as_python_says(page, 4)


@pytest.mark.browser
def test_a_state_from_the_address_is_asked_for_once(page, base_url):
    page.add_init_script(RECORD)
    open_ready(page, base_url + f"many-heads.html?{FID}.word=3")
    # that state, drawn by Python once it is ready, then the four words beside it, worked out
    # ahead; nothing else: the state shown at first (word 7) is not asked for
    wait_sent(page, ["3", "4", "2", "5", "1"])
    assert words_sent(page) == ["3", "4", "2", "5", "1"]


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
