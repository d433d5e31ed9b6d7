""" "Your results", as a teacher uses them: every attempt with its time, guesses recorded, the
student's name in the file and its name, one file for all chapters in reading order, a question
before clearing, a table read left to right; and reader input stays text."""

import csv
import io
from datetime import datetime
from pathlib import Path

import pytest
from conftest import open_ready

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
    return [
        row.locator("td").all_inner_texts() for row in page.locator("[data-results] tbody tr").all()
    ]


def download(page):
    with page.expect_download() as done:
        page.get_by_role("button", name="Download all chapters as CSV").click()
    text = Path(done.value.path()).read_text(encoding="utf-8")
    return done.value.suggested_filename, list(csv.DictReader(io.StringIO(text)))


@pytest.mark.browser
def test_every_attempt_is_kept_with_its_time_and_guesses_too(page, base_url):
    open_ready(page, base_url + "many-heads.html")
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
    open_ready(page, base_url + "real-heads.html")
    page.locator(".mh-check").get_by_text("Nothing: a head that always").click()
    page.locator(".mh-check").get_by_role("button", name="Check").click()
    open_ready(page, base_url + "many-heads.html")
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
    open_ready(page, base_url + "real-heads.html")
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
    open_ready(page, base_url + "many-heads.html")
    answer_check(page, RIGHT)
    aligns = page.evaluate(
        """() => [...document.querySelectorAll('[data-results] th, [data-results] td')]
          .map((el) => getComputedStyle(el).textAlign)"""
    )
    assert len(aligns) == 10 and set(aligns) <= {"left", "start"}, aligns


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
    cell = page.locator("[data-results] tbody td").nth(2)
    assert cell.inner_text() == code
    assert page.locator("[data-results] img").count() == 0
