"""Chapter 2 in Chromium: the stepper's shapes, editing the heads, live cells, the exercise,
Python kept off the network."""

import re

import pytest
from conftest import hold_python, open_ready
from playwright.sync_api import expect

from toymodels.page import cells
from toymodels.page.html import tenths
from toymodels.split_attend import model as sa

pytestmark = pytest.mark.browser
CHAPTER = "split-attend.html"


def step(page, name):
    page.locator(f"#split-attend [data-fk='step-{name}']").click()
    page.wait_for_selector(f"#split-attend [data-fk='step-{name}'][aria-pressed='true']")


# a caption's text, with a raised letter (W<sup>Q</sup>, as the maths writes it) read as ^Q
RAISED = """(captions) => captions.map((c) => {
  const copy = c.cloneNode(true);
  copy.querySelectorAll("sup").forEach((s) => s.replaceWith("^" + s.textContent));
  return copy.textContent;
})"""


def test_stepper_shows_each_step_with_its_shapes(page, base_url):
    open_ready(page, base_url + CHAPTER)
    expect = {
        "project": ["Q = X · W^Q (6 × 4)", "K = X · W^K (6 × 4)", "V = X · W^V (6 × 4)"],
        "split": ["Q (6 × 4)", "q for head 1 (6 × 2)", "q for head 2 (6 × 2)"],
        "attend": ["Head 1 output = weights · v (6 × 2)", "Head 2 output = weights · v (6 × 2)"],
        "concat": ["Concatenated heads C (6 × 4)"],
        "mix": ["Output Y = C · W^O (6 × 4)", "C (6 × 4)", "W^O (4 × 4)"],
    }
    for name, captions in expect.items():
        step(page, name)
        assert page.locator("#split-attend .mh-matrix caption").evaluate_all(RAISED) == captions

    step(page, "split")
    assert "No arithmetic happens" in page.locator("#split-attend .mh-stage").inner_text()
    step(page, "mix")
    page.locator("#split-attend td[data-fk='y-4-1']").click()
    page.wait_for_selector("#split-attend .mh-stage [role='status']:has-text('Output (“the”, d2)')")
    assert (
        page.locator("#split-attend table:nth-of-type(2) td.hl").count() == 4
    )  # row "the" of C: both heads' numbers


def grid_tips(page, head, row):
    """The cells of one row of a head's grid that give a share: each cell's name (aria-label),
    which hover and focus show, is "“a” → “b”: 12.5%"."""
    return (
        page.locator(f"#split-attend table.mh-grid[data-head='{head}'] tbody tr")
        .nth(row)
        .locator("td.c:not(.masked)")
    )


def grid_shares(page, head, row):
    tips = grid_tips(page, head, row).evaluate_all("(cells) => cells.map((c) => c.ariaLabel)")
    return [t.rsplit(": ", 1)[1] for t in tips]


def test_editing_a_head_recomputes_its_grid_like_cpython(page, base_url):
    open_ready(page, base_url + CHAPTER)
    words = sa.SENTENCE.split()
    # head 2's key reads "noun" instead of "first": every word now looks for a noun
    page.get_by_label("Head 2 W-K row first column 1").fill("0")
    page.get_by_label("Head 2 W-K row noun column 1").fill("3")
    page.get_by_label("Head 2 W-K row noun column 1").press("Enter")
    page.wait_for_selector("#split-attend [data-fk='step-attend']")
    heads = [list(map(lambda a: a.copy(), pair)) for pair in sa.PRESETS["designed"]]
    heads[1][1][0, 0], heads[1][1][1, 0] = 0.0, 3.0
    want = sa.forward(words, heads)["weights"][1, 5]
    expected = [f"{t // 10}.{t % 10}%" for t in tenths(want)]
    # the grid is redrawn when Python answers: wait until its tips end in the expected shares
    for cell, e in zip(grid_tips(page, 2, 5).all(), expected, strict=True):
        expect(cell).to_have_attribute("aria-label", re.compile(f": {re.escape(e)}$"))
    assert grid_shares(page, 2, 5) == expected
    assert page.get_by_role("button", name="As designed").get_attribute("aria-pressed") == "false"
    page.get_by_role("button", name="Heads swapped").click()
    page.wait_for_selector("[data-fk='preset-swapped'][aria-pressed='true']")
    assert grid_shares(page, 1, 5) == [
        f"{t // 10}.{t % 10}%"
        for t in tenths(sa.forward(words, sa.PRESETS["swapped"])["weights"][0, 5])
    ]


def run_cell(page, index):
    cell = page.locator("[data-cell]").nth(index)
    cell.get_by_role("button", name="Run").click()
    cell.locator("[data-output] pre:not(.quiet)").first.wait_for()
    return cell


def test_cells_run_like_the_build_and_show_tracebacks(page, base_url, site):
    open_ready(page, base_url + CHAPTER)
    cell = run_cell(page, 1)  # the second cell runs the first one before itself
    codes = [page.locator("[data-cell]").nth(i).locator("textarea").input_value() for i in range(2)]
    cells.forget("check")
    cells.run(codes[0], "check")
    want = cells.run(codes[1], "check")
    assert cell.locator("pre.stdout").inner_text() == want["stdout"]
    assert cell.locator("pre.value").inner_text() == want["value"]
    box = cell.locator("textarea")
    box.fill("result = C.sum()\nresult / undefined_name")
    box.press("Control+Enter")
    cell.locator("pre.error").wait_for()
    error = cell.locator("pre.error").inner_text()
    assert error.startswith("Traceback (most recent call last):") and error.endswith(
        "NameError: name 'undefined_name' is not defined\n"
    )
    # a flood of output: the page shows what the build would, cut as Python cut it
    flood = "for i in range(20_000):\n    print(i)"
    box.fill(flood)
    box.press("Control+Enter")
    cell.locator("pre.stdout").wait_for()
    shown = cell.locator("pre.stdout").inner_text()
    assert shown == cells.run(flood, "check")["stdout"]
    assert shown.endswith(
        f"\n[output cut at {cells.OUTPUT_LINES:,} lines, {20_000 - cells.OUTPUT_LINES:,} more]\n"
    )
    cell.get_by_role("button", name="Reset").click()
    assert box.input_value() == codes[1]


LOOP = "import js\njs.console.log('looping')\nwhile True:\n    pass"


# a JavaScript error thrown through Python's WebAssembly (a lazy file that cannot be fetched,
# read): what Pyodide calls a fatal error, after which it answers no call
CRASH = (
    "import pyodide_js\npyodide_js.FS.createLazyFile('/tmp', 'lazy', 'no-such-file.bin', True, "
    "False)\nopen('/tmp/lazy').read()"
)


def test_an_endless_loop_can_be_stopped_and_a_crash_restarts_python(page, base_url):
    open_ready(page, base_url + CHAPTER)
    cell = page.locator("[data-cell]").first
    # the loop says on the worker's console that it has begun, so Stop ends a loop that runs,
    # not a call still on its way to Python
    cell.locator("textarea").fill(LOOP)
    with page.context.expect_console_message(lambda m: m.text == "looping"):
        cell.get_by_role("button", name="Run").click()
    stop = cell.get_by_role("button", name="Stop")
    stop.click()
    cell.locator("pre.quiet:has-text('Stopped.')").wait_for()
    cell.get_by_role("button", name="Reset").click()
    cell.get_by_role("button", name="Run").click()
    cell.locator("pre.value").wait_for(timeout=90_000)
    assert cell.locator("pre.value").inner_text().startswith("array([[1.")
    step(page, "concat")  # the figures work again on the new worker
    # a crash: Python is started again, and the cell says so
    for said in ("^Pyodide has suffered a fatal error", "^The cause of the fatal error was:"):
        page.watch.expect(said)
    page.watch.expect(r"Couldn't load no-such-file\.bin\. Status: 404")
    cell.locator("textarea").fill(CRASH)
    cell.get_by_role("button", name="Run").click()
    cell.locator("pre.error").wait_for(timeout=60_000)
    assert cell.locator("pre.error").inner_text() == (
        "Python stopped working (Error: Couldn't load no-such-file.bin. Status: 404) and was "
        "started again: what it held, such as the variables of every cell, is gone"
    )
    cell.get_by_role("button", name="Reset").click()
    cell.get_by_role("button", name="Run").click()
    cell.locator("pre.value").wait_for(timeout=90_000)
    assert cell.locator("pre.value").inner_text().startswith("array([[1.")
    step(page, "mix")


def test_exercise_reports_the_check(page, base_url):
    open_ready(page, base_url + CHAPTER)
    ex = page.locator(".mh-exercise")
    ex.get_by_role("button", name="Run").click()
    verdict = ex.locator("[data-verdict]")
    page.wait_for_selector(".mh-exercise [data-verdict].wrong")
    assert verdict.inner_text().startswith("Not yet: Token 1 gives 50% to token 0")
    ex.locator("textarea").fill(
        "W_Q2 = np.array([[5., 0.], [5., 0.]])\nW_K2 = np.array([[1., 0.], [0., -1.]])\n"
        "w2, head2 = attention(X, W_Q2, W_K2, W_V2)\nw2.round(3)"
    )
    ex.get_by_role("button", name="Run").click()
    page.wait_for_selector(".mh-exercise [data-verdict].right")
    assert verdict.inner_text().startswith("Correct: token 1 gives 100% to token 0.")
    # back later, Python still starting (held): the cells are numbered as the messages name
    # them, and the exercise shows no build output of the starter code under the kept code
    release = hold_python(page)
    page.reload()
    page.wait_for_selector("html.js")
    assert (
        page.locator(".mh-exercise [data-verdict]")
        .inner_text()
        .startswith("You solved this exercise earlier.")
    )
    assert (
        "W_Q2 = np.array([[5., 0.]" in page.locator(".mh-exercise textarea").input_value()
    )  # the edit was kept
    out = ex.locator("[data-output]")
    kept = "Your code, kept from your last visit: press Run to see what it gives."
    assert out.inner_text() == kept
    assert page.locator(".mh-cell-name").all_inner_texts() == ["Cell 1", "Cell 2", "Cell 3"]
    # Run before Python is ready says so; a cell above that fails is named, with its error
    page.locator("[data-cell]").first.locator("textarea").fill("1 / 0")
    ex.get_by_role("button", name="Run").click()
    assert out.inner_text() == "Python is still starting: this cell runs as soon as it is ready…"
    release()
    ex.locator("pre.error").wait_for(timeout=90_000)
    assert ex.locator("pre.error").inner_text() == (
        "An earlier cell, cell 1, failed (ZeroDivisionError: division by zero), so this one "
        "did not run. Fix it first."
    )


STEALS = (
    "from js import XMLHttpRequest\nx = XMLHttpRequest.new()\n"
    "x.open('GET', '{target}/steal', False)\nx.send()",
    "from pyodide.http import open_url\nopen_url('{target}/steal')",
)


def test_python_in_the_page_cannot_reach_another_origin(page, base_url):
    """Each way Python in the page could send a request, tried in turn in the same cell."""
    from test_netguard import Recorder  # another origin: a server on another loopback port

    open_ready(page, base_url + CHAPTER)
    cell = page.locator("[data-cell]").first
    for code in STEALS:
        with Recorder() as other:
            cell.locator("textarea").fill(code.format(target=other.origin))
            cell.locator("[data-output] *").evaluate_all(
                "(all) => all.forEach((el) => el.setAttribute('data-before', ''))"
            )
            cell.get_by_role("button", name="Run").click()
            error = cell.locator("pre.error:not([data-before])")
            error.wait_for()
            assert (
                "blocked by Many Heads' policy: this page may only contact its own origin, "
                f"not {other.origin}" in error.inner_text()
            ), code
            assert other.hits == [], code
    assert page.watch.foreign == []


XSS = '<img src=x onerror="window.__xss=1">'


def test_cell_output_and_url_state_stay_text(page, base_url):
    open_ready(
        page,
        f"{base_url}{CHAPTER}?split-attend.step=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&split-attend.w=javascript:alert(1)",
    )
    assert (
        page.locator("#split-attend [data-fk='step-attend']").get_attribute("aria-pressed")
        == "true"
    )
    cell = page.locator("[data-cell]").first
    cell.locator("textarea").fill(f"print({XSS!r})\n{XSS!r}")
    cell.get_by_role("button", name="Run").click()
    cell.locator("pre.stdout").wait_for()
    assert cell.locator("pre.stdout").inner_text() == XSS + "\n"
    assert (
        page.locator("[data-cell] img, #split-attend img").count() == 0
        and page.evaluate("window.__xss") is None
    )
