"""No tap is ever lost: a tap before Python is ready on a state the build did not draw
(sitebuild/pipeline/prerender.py) is kept, shown as pending on the tapped control without moving
anything, and drawn as soon as Python is ready (static/figures.js); and the build draws, for
every kind of control, the states nearest the shown one first. How taps before Python are kept
and merged (the newest value of a field wins) is answers.js's, tested in Node too
(tests/js/answers.test.js); here, the page's side of it."""

import json
import re

import pytest
from conftest import url_with, without_build_answers
from test_prerendered import shipped

from sitebuild.pipeline import prerender

CHAPTER = "many-heads.html"
FIG = "three-heads"
# where each word button and the figure's first line stand on the page
PLACES = """(fid) => [...document.querySelectorAll(`#${fid} .mh-controls, #${fid} [data-key]`)]
  .map((el) => el.getBoundingClientRect())
  .map((r) => [Math.round(r.x), Math.round(r.y + scrollY)])"""


def hold_python(page):
    """Pyodide's files are held back until the returned function lets them go."""
    held, holding = [], [True]
    page.route(
        re.compile(r".*/pyodide/.*"),
        lambda route: held.append(route) if holding[0] else route.continue_(),
    )

    def release():
        holding[0] = False
        for route in held:
            route.continue_()

    return release


def open_before_python(page, url):
    """Open URL without the build's answers and with Python held back; -> the function that
    lets Python start."""
    without_build_answers(page)
    release = hold_python(page)
    page.goto(url)
    page.wait_for_load_state("load")
    return release


def pressed(page, key):
    return page.evaluate(
        """([fid, key]) => document.querySelector(
            `#${fid} [data-body] [data-key="${key}"][aria-pressed="true"]`)?.dataset.value""",
        [FIG, key],
    )


def wait_pressed(page, key, value):
    page.wait_for_function(
        """([fid, key, value]) => document.querySelector(
            `#${fid} [data-body] button[data-key="${key}"][data-value="${value}"]`
        )?.ariaPressed === "true" """,
        arg=[FIG, key, value],
    )


@pytest.mark.browser
def test_a_tap_the_build_did_not_draw_is_kept_and_drawn_once_python_is_ready(base_url, page):
    release = open_before_python(page, f"{base_url}{CHAPTER}#{FIG}")
    assert pressed(page, "word") == "7"
    before = page.evaluate(PLACES, FIG)
    kept = page.locator(f'#{FIG} [data-body] button[data-key="word"][data-value="6"]')
    kept.click()  # "kept": the build's answers are withheld, so nothing can draw it yet
    page.wait_for_selector(f'#{FIG} [data-key="word"][data-value="6"].mh-pending')
    status = page.locator(f"#{FIG} [data-fig-status]")
    assert "kept" in status.text_content()
    assert "mh-quiet" in status.get_attribute("class")  # said to screen readers, not in the way
    assert page.evaluate(PLACES, FIG) == before  # nothing moved
    # a second tap before Python replaces the first: one mark, the newest wins
    page.locator(f'#{FIG} [data-body] button[data-key="word"][data-value="3"]').click()
    page.wait_for_selector(f'#{FIG} [data-key="word"][data-value="3"].mh-pending')
    assert page.locator(f"#{FIG} .mh-pending").count() == 1
    assert pressed(page, "word") == "7"
    release()
    page.wait_for_selector("html.py-ready", timeout=90_000)
    wait_pressed(page, "word", "3")
    url_with(page, f"{FIG}.word=3")
    assert page.locator(".mh-pending").count() == 0
    assert status.text_content() == ""
    # the kept tap is a step in history: Back returns to the first view
    page.go_back()
    wait_pressed(page, "word", "7")


@pytest.mark.browser
def test_taps_before_the_pages_script_runs_are_kept_too(base_url, page):
    """A word and a step tapped after the first paint but before main.js runs (held back here;
    0.1-0.9 s on a reader's page) are kept by the page's inline listener (templates/early.js),
    the newest marked once main.js runs, and both drawn once Python is ready."""
    without_build_answers(page)
    release = hold_python(page)
    held = []
    page.route(re.compile(r".*/static/main\.[0-9a-f]+\.js$"), lambda route: held.append(route))
    page.goto(f"{base_url}{CHAPTER}", wait_until="commit")
    page.locator(f'#{FIG} [data-body] button[data-key="word"][data-value="6"]').click()
    step = page.locator(f'[data-target="{FIG}"][data-key="step"][data-value="qk"]').first
    step.click()
    assert page.locator("html.js").count() == 0  # main.js has not run
    held[0].continue_()
    page.wait_for_selector(f'[data-target="{FIG}"][data-value="qk"].mh-pending')
    assert page.locator(".mh-pending").count() == 1  # the newest tap's control is marked
    page.evaluate("scrollTo({ top: 0, behavior: 'instant' })")  # the reader reads on elsewhere
    release()
    page.wait_for_selector("html.py-ready", timeout=90_000)
    wait_pressed(page, "step", "qk")
    wait_pressed(page, "word", "6")
    url_with(page, f"{FIG}.step=qk")
    url_with(page, f"{FIG}.word=6")
    assert page.locator(".mh-pending").count() == 0
    # drawn once Python is ready, the step does not take the reader back to its figure
    assert page.evaluate("scrollY") == 0


class Fig:
    def __init__(self, state, html):
        self.result, self.fid = {"state": state, "html": html, "slots": {}}, "f"


def test_the_build_draws_each_kind_of_control_nearest_first():
    buttons = "".join(
        f'<button data-key="{k}" data-value="{v}">'
        for k, vs in (("word", "01234"), ("head", "12"))
        for v in vs
    )
    steps = '<button data-target="f" data-key="step" data-value="b">'
    fig = Fig({"word": "2", "head": "1", "step": "a"}, buttons)
    got = [
        next((k, v) for k, v in s.items() if v != fig.result["state"][k])
        for s in prerender.neighbours(fig, steps)
    ]
    # one field at a time in turn; each field's values nearest the shown one, next before previous
    assert got == [
        ("word", "3"),
        ("head", "2"),
        ("step", "b"),
        ("word", "1"),
        ("word", "4"),
        ("word", "0"),
    ]


@pytest.mark.parametrize("name", [CHAPTER, "real-heads.html"])
def test_every_state_one_tap_from_the_first_figure_ships_where_it_is_cheap(site, name):
    """The word buttons of "Many heads" and the token buttons of "Real heads" (every control
    of both first figures) are drawn by the build: a first tap there is never kept waiting."""
    html = (site / name).read_text(encoding="utf-8")
    answers, models = shipped(site, name)
    fid = next(iter(models))
    states = [dict(json.loads(k)) for k in answers[fid]]
    default = states[0]
    offered = prerender.controls(html[html.index(f'id="{fid}"') :].split("</figure>")[0])
    assert offered
    for k, v in offered:
        assert {**default, k: v} in states, (name, k, v)


@pytest.mark.browser
def test_a_step_sets_every_field_it_describes(base_url, page):
    """'Aim at "Puff"' after 'Length 0' shows Puff winning, not 25% for every word: the step
    sets the length it describes too, and is marked as the step on screen."""
    page.goto(f"{base_url}one-head.html")
    page.wait_for_selector("html.py-ready", timeout=90_000)
    first = page.locator('[data-target="move-query"][data-set="angle=found&length=0"]')
    first.click()
    url_with(page, "move-query.length=0")
    puff = page.locator('[data-target="move-query"][data-set="angle=Puff&length=2"]')
    puff.click()
    url_with(page, "move-query.angle=", without=["length=0"])
    assert puff.get_attribute("aria-current") == "step"
    assert first.get_attribute("aria-current") is None
    summary = page.locator("#move-query [data-summary]").text_content()
    assert "Puff" in summary and "25%" not in summary, summary
