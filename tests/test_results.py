""" "Your results", as a teacher uses them: every attempt with its time, guesses recorded, the
student's name in the file and its name, one file for all chapters in reading order, a question
before clearing, a table read left to right; and reader input stays text."""

import csv
import functools
import io
import threading
from datetime import datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import open_before_python, open_ready
from playwright.sync_api import expect

from sitebuild.serving.serve import Handler

WRONG = "Working out which noun “it” refers to."
RIGHT = (
    "Keeping track of local order: which word came right before, to build phrases such as "
    "“shiny key”."
)
QUESTION = "A head always looks at the word just before. What is it probably useful for?"


def answer_check(page, *choices):
    check = page.locator(".mh-check")
    for choice in choices:
        check.get_by_text(choice).click()
        check.get_by_role("button", name="Check").click()


def table(page):
    """The attempts' rows (an exercise's code has a row of its own below its attempt's)."""
    rows = page.locator("[data-results] tbody tr:not(.mh-results-code-row)").all()
    return [row.locator("td").all_inner_texts() for row in rows]


def download(page):
    with page.expect_download() as done:
        page.get_by_role("button", name="Download all chapters as CSV").click()
    text = Path(done.value.path()).read_text(encoding="utf-8")
    return done.value.suggested_filename, list(csv.DictReader(io.StringIO(text)))


@pytest.mark.browser
def test_every_attempt_is_kept_with_its_time_and_guesses_too(page, base_url):
    open_before_python(page, base_url + "many-heads.html")
    page.locator(".mh-guess label").nth(1).click()
    page.get_by_role("button", name="Commit my guess").click()
    answer_check(page, WRONG, RIGHT)
    rows = table(page)
    assert [r[:4] for r in rows] == [
        [QUESTION, "1", WRONG, "not yet"],
        [QUESTION, "2", RIGHT, "correct"],
        ["Why run many heads side by side instead of one big one?", "1", rows[2][2], "guess"],
    ]
    assert rows[2][2].startswith("One softmax has to split")
    assert all(r[4] and r[4] != "an earlier visit" for r in rows)  # each try has its time
    page.reload()
    page.wait_for_selector("[data-results]:not([hidden]) tbody tr")
    assert [r[:4] for r in table(page)] == [r[:4] for r in rows]
    # the last checked answer is shown again, with its feedback
    assert page.locator(".mh-check").get_by_label(RIGHT).is_checked()
    assert page.locator(".mh-check .mh-feedback.right").is_visible()


def answer_in_two_chapters(page, base_url):
    """Real heads' check once, then Many heads' check wrong and right; ends on Many heads."""
    open_before_python(page, base_url + "real-heads.html")
    page.locator(".mh-check").get_by_text("Nothing: a head that always").click()
    page.locator(".mh-check").get_by_role("button", name="Check").click()
    open_before_python(page, base_url + "many-heads.html")
    answer_check(page, WRONG, RIGHT)


@pytest.mark.browser
def test_one_file_for_all_chapters_named_for_the_student(page, base_url):
    answer_in_two_chapters(page, base_url)
    page.get_by_label("Your name").fill("Ada Lovelace")
    name, rows = download(page)
    assert name == "many-heads-results-ada-lovelace.csv"
    assert list(rows[0]) == [
        "student",
        "chapter",
        "block",
        "kind",
        "question",
        "attempt",
        "answer",
        "result",
        "time",
    ]
    # the chapters in reading order, each block's tries in order
    assert [(r["chapter"], r["attempt"], r["result"]) for r in rows] == [
        ("Many heads looking at once", "1", "not yet"),
        ("Many heads looking at once", "2", "correct"),
        ("Real heads", "1", "not yet"),
    ]
    assert {r["student"] for r in rows} == {"Ada Lovelace"}
    for r in rows:
        datetime.fromisoformat(r["time"].replace("Z", "+00:00"))
    # the name is kept for every chapter of the site
    open_before_python(page, base_url + "real-heads.html")
    assert page.get_by_label("Your name").input_value() == "Ada Lovelace"
    page.get_by_label("Your name").fill("Émilie du Châtelet <b>")
    assert download(page)[0] == "many-heads-results-émilie-du-châtelet-b.csv"


@pytest.mark.browser
def test_clearing_a_chapter_asks_first_and_keeps_the_others(page, base_url):
    answer_in_two_chapters(page, base_url)
    results = page.locator("[data-results]")
    results.get_by_role("button", name="Clear this chapter's results…").click()
    question = results.locator("[data-results-confirm]")
    assert question.is_visible()
    assert question.inner_text().startswith("Clear your 2 answers to this chapter")
    assert page.evaluate("document.activeElement.textContent") == "Keep them"
    question.get_by_role("button", name="Keep them").click()
    assert question.is_hidden() and len(table(page)) == 2
    results.get_by_role("button", name="Clear this chapter's results…").click()
    question.get_by_role("button", name="Yes, clear them").click()
    assert table(page) == [] and results.locator("[data-results-empty]").is_visible()
    # the other chapter's answers are still there, and still in the file
    assert [r["chapter"] for r in download(page)[1]] == ["Real heads"]


@pytest.mark.browser
def test_the_results_table_reads_left_aligned(page, base_url):
    open_before_python(page, base_url + "many-heads.html")
    answer_check(page, RIGHT)
    aligns = page.evaluate(
        """() => [...document.querySelectorAll('[data-results] th, [data-results] td')]
          .map((el) => getComputedStyle(el).textAlign)"""
    )
    assert len(aligns) == 10 and set(aligns) <= {"left", "start"}, aligns
    # on a 360 px phone its five columns keep within the page (they made it 386 px wide)
    page.set_viewport_size({"width": 360, "height": 800})
    page.wait_for_function("innerWidth === 360")
    table = page.locator("[data-results] table").bounding_box()
    assert table["x"] + table["width"] <= 360
    assert page.evaluate("document.documentElement.scrollWidth") == 360


@pytest.mark.browser
def test_an_answer_full_of_markup_is_shown_as_text(page, base_url):
    open_ready(page, base_url + "split-attend.html")
    code = (
        "W_Q2 = np.eye(2)\nW_K2 = np.eye(2)\nw2, head2 = attention(X, W_Q2, W_K2, W_V2)\n"
        '"<img src=x onerror=alert(1)>"'
    )
    exercise = page.locator(".mh-exercise")
    exercise.locator("textarea").fill(code)
    exercise.get_by_role("button", name="Run").click()
    exercise.locator(".mh-verdict.wrong").wait_for()
    cell = page.locator("[data-results] .mh-results-code")
    assert cell.inner_text() == code
    assert page.locator("[data-results] img").count() == 0


# --- grading in "One head, from scratch": only the cell whose Run was pressed is graded -------

SOFTMAX_SOLVED = (
    "def softmax(scores):\n"
    "    e = np.exp(scores - scores.max(axis=-1, keepdims=True))\n"
    "    return e / e.sum(axis=-1, keepdims=True)\n"
)


def run_cell(page, cell, done="[data-output] pre"):
    """Press Run on CELL (an id), wait until the run is over, then until DONE shows in it."""
    box = page.locator(f"#{cell}")
    box.get_by_role("button", name="Run").click()
    expect(box.locator("[data-output]")).not_to_contain_text("Running", timeout=90_000)
    expect(box.get_by_role("button", name="Run")).to_be_enabled(timeout=90_000)
    box.locator(done).first.wait_for()


def verdict(page, cell):
    box = page.locator(f"#{cell} [data-verdict]")
    return box.inner_text(), box.get_attribute("class")


def kept_attempts(page):
    return page.evaluate(
        """() => Object.keys(localStorage).filter((k) => k.includes(':attempts:'))
             .map((k) => [k.split(':').pop(), JSON.parse(localStorage[k]).length])"""
    )


@pytest.mark.browser
def test_exercises_run_for_a_later_cell_are_not_graded(page, base_url):
    """Run on "The whole head" first runs the two exercises above it: they run (the cell needs
    them) but show no verdict, record no try and are not marked solved, and say why they ran."""
    open_ready(page, base_url + "one-head.html")
    page.locator("#exercise-1 textarea").fill(SOFTMAX_SOLVED)
    run_cell(page, "cell-3", "[data-output] pre.value")
    for exercise in ("exercise-1", "exercise-2"):
        assert verdict(page, exercise) == ("", "mh-verdict"), exercise
        note = page.locator(f"#{exercise} [data-output] pre.quiet").first.inner_text()
        assert note.startswith("Ran because a cell below needs its variables; not checked.")
    assert table(page) == [] and kept_attempts(page) == []
    assert page.evaluate("Object.keys(localStorage).filter((k) => k.includes(':exercise:'))") == []
    # pressed on purpose, the exercise is graded: its first try
    run_cell(page, "exercise-2", ".mh-verdict.wrong")
    assert [r[1:4:2] for r in table(page)] == [["1", "not yet"]]


@pytest.mark.browser
def test_a_stopped_run_records_nothing_again(page, base_url):
    """The student runs the first exercise once, then "The whole head" is stopped in an endless
    loop and run again: the exercise above has still one try, the other none."""
    open_ready(page, base_url + "one-head.html")
    run_cell(page, "exercise-1", ".mh-verdict.wrong")
    whole = page.locator("#cell-3")
    whole.locator("textarea").fill("while True:\n    pass")
    page.locator("#exercise-2 [data-output] > *").evaluate_all(
        "(all) => all.forEach((el) => el.setAttribute('data-built', ''))"
    )
    whole.get_by_role("button", name="Run").click()
    # the cells above have run (the last one's output is new): the endless cell is running
    page.locator("#exercise-2 [data-output] > :not([data-built])").first.wait_for(timeout=90_000)
    whole.get_by_role("button", name="Stop").click()
    whole.get_by_text("Stopped. Python is restarting").wait_for()
    whole.locator("textarea").fill("6 * 7")
    page.locator("#cell-3 [data-run]:not([disabled])").wait_for(timeout=90_000)
    run_cell(page, "cell-3", "[data-output] pre.value")
    assert whole.locator("[data-output] pre.value").inner_text() == "42"
    assert kept_attempts(page) == [["exercise-1", 1]]
    assert [r[1] for r in table(page)] == ["1"]
    # stopped while the exercise's check runs (it calls the reader's endless softmax): the
    # message says the reader's code had finished, and no try is recorded
    first = page.locator("#exercise-1")
    first.locator("textarea").fill("def softmax(scores):\n    while True:\n        pass")
    first.get_by_role("button", name="Run").click()
    first.get_by_text("Your code ran; the exercise's check is running…").wait_for(timeout=90_000)
    first.get_by_role("button", name="Stop").click()
    first.get_by_text(
        "Stopped while the exercise's check was running (your code itself had finished). A "
        "function of yours that the check calls may never end; if none does, the mistake is in "
        "the page's check, not in your code. Python is restarting"
    ).wait_for()
    assert kept_attempts(page) == [["exercise-1", 1]]


@pytest.mark.browser
def test_the_code_graded_is_the_code_when_run_was_pressed(page, base_url):
    """The student presses Run and types on while the cells above run: the try graded and
    recorded is the code as it was when Run was pressed."""
    open_ready(page, base_url + "one-head.html")
    page.locator("#exercise-1 textarea").fill(SOFTMAX_SOLVED)
    page.evaluate(
        """() => {
          const cell = document.querySelector('#exercise-1');
          cell.querySelector('[data-run]').click();
          const box = cell.querySelector('textarea');
          box.value = 'typed after Run was pressed';
          box.dispatchEvent(new Event('input'));
        }"""
    )
    page.locator("#exercise-1 .mh-verdict.right, #exercise-1 pre.error").first.wait_for(
        timeout=90_000
    )
    assert "right" in verdict(page, "exercise-1")[1]
    assert page.locator("[data-results] .mh-results-code").inner_text() == SOFTMAX_SOLVED


# --- clearing: no old verdict stays, and a framed page cannot clear ---------------------------


@pytest.mark.browser
def test_clearing_takes_every_verdict_off_the_page(page, base_url):
    open_ready(page, base_url + "one-head.html")
    guess = page.locator("#guess-1")
    guess.locator("label").first.click()
    guess.get_by_role("button", name="Commit my guess").click()
    for check in ("#check-1", "#check-2"):
        page.locator(check).locator("input").first.check()
        page.locator(check).get_by_role("button", name="Check").click()
    page.locator("#exercise-1 textarea").fill(SOFTMAX_SOLVED)
    run_cell(page, "exercise-1", ".mh-verdict.right")
    results = page.locator("[data-results]")
    results.get_by_role("button", name="Clear this chapter's results…").click()
    results.get_by_role("button", name="Yes, clear them").click()
    assert table(page) == []

    def nothing_old():
        assert page.locator("[data-check] input:checked").count() == 0
        assert page.locator("[data-check] .mh-feedback:visible").count() == 0
        assert verdict(page, "exercise-1") == ("", "mh-verdict")
        assert guess.locator("[data-your-guess]").is_hidden()
        assert guess.get_by_role("button", name="Commit my guess").is_visible()
        assert guess.locator("input:checked, input:disabled").count() == 0
        assert page.locator("[data-guess-answer]:visible, .mh-explain:visible").count() == 0

    nothing_old()
    # the student's code stays: it is their work, not a verdict
    assert page.locator("#exercise-1 textarea").input_value() == SOFTMAX_SOLVED
    page.reload()
    page.wait_for_selector("html.py-ready", timeout=90_000)
    nothing_old()


class WithoutFraming(Handler):
    """A host that sends the site's policy but no frame-ancestors rule (the <meta> policy cannot
    carry one): any page may frame its chapters, so the page itself must guard its results."""

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Security-Policy", self.csp)
        SimpleHTTPRequestHandler.end_headers(self)


@pytest.mark.browser
def test_a_chapter_framed_by_another_site_does_not_clear(page, site, tmp_path):
    """A page of another origin frames the chapter (clickjacking: its own buttons over ours),
    on a host that does not refuse framing. The chapter offers no Clear there, and opens itself
    on its own instead; its results stay."""
    host = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(WithoutFraming, directory=site))
    threading.Thread(target=host.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{host.server_port}/"
    open_before_python(page, base_url + "many-heads.html")
    answer_check(page, RIGHT)
    (tmp_path / "frame.html").write_text(
        '<!doctype html><title>another site</title><link rel="icon" href="data:,">'
        f'<iframe src="{base_url}many-heads.html" width="1000" height="800"></iframe>'
    )
    # another site: a plain server, without the site's own security policy
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    other = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{other.server_port}/frame.html")
        frame = page.frame_locator("iframe")
        frame.locator("html.js").wait_for()
        results = frame.locator("[data-results]")
        assert results.locator("tbody tr").count() == 1
        assert results.locator("[data-results-clear], [data-results-confirm]").count() == 0
        note = results.locator("[data-results-framed]")
        assert note.inner_text().startswith("This chapter is shown inside another site's page")
        link = note.get_by_role("link", name="open this chapter on its own")
        assert link.get_attribute("href") == f"{base_url}many-heads.html"
        assert link.get_attribute("target") == "_blank"
        page.goto(base_url + "many-heads.html")
        page.wait_for_selector("[data-results]:not([hidden]) tbody tr")
        assert len(table(page)) == 1
    finally:
        other.shutdown()
        host.shutdown()


# --- how the results look: code as code, buttons a finger can hit ------------------------------


@pytest.mark.browser
def test_submitted_code_is_monospace_across_the_table_and_scrolls_sideways(page, base_url):
    open_ready(page, base_url + "split-attend.html")
    exercise = page.locator(".mh-exercise")
    code = exercise.locator("textarea").input_value() + "\n# " + "a long line " * 40
    exercise.locator("textarea").fill(code)
    exercise.get_by_role("button", name="Run").click()
    exercise.locator(".mh-verdict.right, .mh-verdict.wrong").wait_for(timeout=90_000)
    shown = page.locator("[data-results] .mh-results-code")
    assert shown.inner_text() == code
    box = shown.evaluate(
        """(el) => {
          const s = getComputedStyle(el);
          const table = el.closest('table').getBoundingClientRect();
          const section = el.closest('[data-results]').getBoundingClientRect();
          return { font: s.fontFamily, space: s.whiteSpace, width: el.getBoundingClientRect().width,
                   table: table.width, section: section.width, scroll: el.scrollWidth,
                   client: el.clientWidth };
        }"""
    )
    assert "monospace" in box["font"] and box["space"] == "pre", box
    assert box["width"] >= box["table"] - 20, box  # across the table, not one narrow column
    assert box["table"] <= box["section"] + 1, box  # the long line does not widen the page
    assert box["scroll"] > box["client"], box  # it scrolls sideways instead


@pytest.mark.browser
@pytest.mark.parametrize("touch", [True, False], ids=["touch", "narrow"])
def test_the_results_buttons_are_44_px_high_on_a_phone(new_page, base_url, touch):
    page = new_page(viewport={"width": 390, "height": 844}, is_mobile=touch, has_touch=touch)
    open_before_python(page, base_url + "many-heads.html")
    answer_check(page, RIGHT)
    results = page.locator("[data-results]")
    results.get_by_role("button", name="Clear this chapter's results…").click()
    heights = results.locator("button").evaluate_all(
        "(all) => all.map((b) => [b.textContent, b.getBoundingClientRect().height])"
    )
    assert len(heights) == 4 and all(h >= 44 for _, h in heights), heights
