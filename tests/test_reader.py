"""What a reader sees and does, in Debian's Chromium: static page, taps, keys, edits, links,
failures. The tests that only read the chapter share its page (conftest's ready_page); those
that tap, type or keep an answer open their own."""

from urllib.parse import quote

import numpy as np
import pytest
from conftest import open_before_python, open_ready, url_with, with_own_python

from toymodels.many_heads import model as heads
from toymodels.page.html import tenths

pytestmark = pytest.mark.browser
CHAPTER = "many-heads.html"
SENTENCE = "Puff found a shiny key and kept it."


def selected_rows(page):
    return page.locator("#three-heads .mh-grid tr.sel th").all_inner_texts()


def shares(page):
    """The shares table as {word: [head 1, head 2, head 3]} in percent (None where masked)."""
    out = {}
    for row in page.locator(".mh-shares tbody tr").all():
        cells = row.locator("td").all_inner_texts()
        out[row.locator("th").inner_text()] = [
            None if "masked" in c else float(c.rstrip("%")) for c in cells
        ]
    return out


def expected_shares(words, i):
    w = heads.multi_head(words)["weights"][:, i]
    return {
        words[j]: [100 * w[h, j] if j <= i else None for h in range(3)] for j in range(len(words))
    }


def assert_close(table, words, i):
    want = expected_shares(words, i)
    assert list(table) == list(want)
    for word in want:
        for got, exact in zip(table[word], want[word], strict=True):
            assert (got is None) == (exact is None)
            if got is not None:
                assert abs(got - exact) <= 0.1, (word, got, exact)


def test_without_javascript_the_page_is_complete(new_page, base_url):
    page = new_page(java_script_enabled=False)
    page.goto(base_url + CHAPTER)
    assert page.locator("#three-heads .mh-grid").count() == 3
    assert page.locator(".mh-shares caption").inner_text() == "Shares for “it” in each head"
    assert_close(shares(page), heads.split_words(SENTENCE), 7)
    assert page.locator("math").count() > 5
    assert not page.locator("[data-pystatus]").is_visible()
    # the guess's explanation is reachable, and no choice is offered that nothing would keep
    assert page.locator("details.mh-explain").is_visible()
    assert page.locator(".mh-guess-form").count() == 1
    assert not page.locator(".mh-guess-form").is_visible()


def test_home_page_lists_chapters_in_order(page, base_url):
    page.goto(base_url)
    links = page.locator(".toc a")
    assert links.first.get_attribute("href") == "one-head.html"
    assert links.nth(1).get_attribute("href") == CHAPTER
    links.nth(1).click()
    assert page.locator("h1").inner_text() == "Many heads looking at once"


def test_progress_names_each_step_then_ready(page, base_url):
    page.add_init_script("""
        window.__statuses = [];
        new MutationObserver(() => {
            const el = document.querySelector("[data-pystatus-text]");
            if (el && el.textContent && window.__statuses.at(-1) !== el.textContent) {
                window.__statuses.push(el.textContent);
            }
        }).observe(document, { subtree: true, childList: true, characterData: true });
    """)
    open_ready(page, base_url + CHAPTER)
    assert page.evaluate("window.__statuses") == [
        "Loading the Python runtime (1 of 3)…",
        "Loading numpy (2 of 3)…",
        "Loading the models (3 of 3)…",
        "Interactive figures are ready.",
    ]


def test_tapping_a_word_highlights_its_row_in_every_head(page, base_url):
    open_ready(page, base_url + CHAPTER)
    words = heads.split_words(SENTENCE)
    page.get_by_role("button", name="kept", exact=True).click()
    page.wait_for_selector(".mh-shares caption:has-text('“kept”')")
    assert selected_rows(page) == ["kept"] * 3
    assert_close(shares(page), words, 6)
    page.get_by_role("button", name="it", exact=True).click()
    page.wait_for_selector(".mh-shares caption:has-text('“it”')")
    assert selected_rows(page) == ["it"] * 3
    assert_close(shares(page), words, 7)
    assert page.locator(".mh-shares tfoot td").all_inner_texts() == ["100.0%"] * 3
    assert page.get_by_role("button", name="it", exact=True).get_attribute("aria-pressed") == "true"


def test_hover_shows_the_exact_share(ready_page):
    page = ready_page(CHAPTER)
    cell = page.locator("#three-heads td[data-fk='g2-7-4']")  # head 3, "it" looking at "key"
    tip = """(c) => { const s = getComputedStyle(c, "::after");
      return [s.content, s.content === "none" ? 0 : c.offsetWidth && parseFloat(s.width)]; }"""
    assert cell.evaluate(tip) == ["none", 0]  # drawn only while hovered
    cell.hover()
    share = tenths(heads.multi_head(heads.split_words(SENTENCE))["weights"][2, 7])[4]
    text = f"“it” → “key”: {share // 10}.{share % 10}%"
    assert cell.get_attribute("aria-label") == text  # what a screen reader says for the cell
    content, width = cell.evaluate(tip)
    assert content == f'"{text}"' and width > 50  # what the pointer's reader sees


def test_keyboard_only(page, base_url):
    open_ready(page, base_url + CHAPTER)
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('mh-word')"):
            break
    assert page.evaluate("document.activeElement.textContent") == "it"
    for _ in range(3):
        page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    page.wait_for_selector(".mh-shares caption:has-text('“key”')")
    assert page.evaluate("document.activeElement.textContent") == "key"  # focus survives the redraw
    assert selected_rows(page) == ["key"] * 3
    # into the first grid: its tab stop is the selected row; arrows move, Enter selects that row
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.fk") == "g0-4-0"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_selector(".mh-shares caption:has-text('“kept”')")
    assert page.evaluate("document.activeElement.dataset.fk") == "g0-6-0"
    # the head picker: one head at a time
    page.locator("#three-heads [data-fk='head-all']").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.wait_for_selector("#three-heads .mh-head[data-head='1'][hidden]", state="attached")
    assert [s.is_visible() for s in page.locator("#three-heads .mh-head").all()] == [
        False,
        True,
        False,
    ]


def test_editing_the_sentence_updates_every_grid(page, base_url):
    open_ready(page, base_url + CHAPTER)
    box = page.get_by_label("Sentence")
    box.fill("The zorp sat on the mat and it was blick")
    box.press("Enter")
    page.wait_for_selector(".mh-note")
    for grid in page.locator("#three-heads .mh-grid").all():
        assert grid.locator("tbody tr").count() == 10
        assert grid.locator("thead th").all_inner_texts() == [
            "The",
            "zorp",
            "sat",
            "on",
            "the",
            "mat",
            "and",
            "it",
            "was",
            "blick",
        ]
    assert (
        page.locator(".mh-note")
        .inner_text()
        .startswith("Heads 2 and 3 did not know “zorp”, “blick”.")
    )
    words = heads.split_words("The zorp sat on the mat and it was blick")
    table = shares(page)
    assert (
        list(table)[:2] == ["The", "zorp"]
        and page.locator(".mh-shares caption").inner_text() == "Shares for “it” in each head"
    )
    want = heads.multi_head(words)["weights"][2, 7]
    assert abs(table["mat"][2] - 100 * want[5]) <= 0.1 and np.argmax(want) == 5


def test_too_many_words_is_refused_and_nothing_is_lost(page, base_url):
    open_ready(page, base_url + CHAPTER)
    long = " ".join(f"w{i}" for i in range(17))
    box = page.get_by_label("Sentence")
    box.fill(long)
    box.press("Enter")
    status = page.locator("#three-heads [data-fig-status]")
    status.wait_for()
    assert status.inner_text() == (
        "A sentence here can have at most 16 words; this one has 17. Shorten it and press Update."
    )
    assert box.input_value() == long
    assert page.locator("#three-heads .mh-grid").first.locator("tbody tr").count() == 8


XSS = (
    '<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script> javascript:window.__xss=3'
)


def test_html_in_the_sentence_stays_text(page, base_url):
    open_ready(page, base_url + CHAPTER)
    box = page.get_by_label("Sentence")
    box.fill(XSS)
    box.press("Enter")
    page.wait_for_selector("#three-heads .mh-word:text-is('img')")
    assert page.locator("#three-heads img, #three-heads script, .mh-slot img").count() == 0
    assert box.input_value() == XSS
    assert page.evaluate("window.__xss") is None


def test_link_reopens_the_same_view_and_cannot_inject(page, base_url):
    open_ready(page, base_url + CHAPTER)
    page.get_by_role("button", name="Head 3", exact=True).click()
    page.get_by_role("button", name="found", exact=True).click()
    page.wait_for_selector(".mh-shares caption:has-text('“found”')")
    url = url_with(page, "three-heads.head=3", "three-heads.word=1")
    # another page of the site first, so the link opens the chapter afresh (from about:blank, the
    # icon Chromium was still fetching for the last URL the tap wrote was refused as a request
    # from a null origin to the loopback)
    page.goto(base_url)
    open_ready(page, url)
    page.wait_for_selector(".mh-shares caption:has-text('“found”')")
    assert (
        page.get_by_role("button", name="Head 3", exact=True).get_attribute("aria-pressed")
        == "true"
    )
    assert [s.is_visible() for s in page.locator("#three-heads .mh-head").all()] == [
        False,
        False,
        True,
    ]
    open_ready(
        page, f"{base_url}{CHAPTER}?three-heads.sentence={quote(XSS)}&three-heads.step=%3Cb%3E"
    )
    page.wait_for_selector("#three-heads .mh-word:text-is('img')")
    assert page.locator("#three-heads img, #three-heads script, #three-heads b").count() == 0
    assert page.evaluate("window.__xss") is None


def test_how_it_works_steps_drive_the_figure(page, base_url):
    open_ready(page, base_url + CHAPTER)
    page.locator(".mh-step-link", has_text="Scores.").click()
    page.wait_for_selector("#three-heads td.num")
    words = heads.split_words(SENTENCE)
    score = heads.multi_head(words)["scores"][0, 7, 6]
    cell = page.locator("#three-heads td[data-fk='g0-7-6']")
    assert cell.inner_text().split("\n")[0] == f"{score:.1f}".replace("-", "−")
    assert (
        page.locator("#three-heads [data-fk='step-scores']").get_attribute("aria-pressed") == "true"
    )
    page.locator(".mh-step-link", has_text="Concatenate.").click()
    page.wait_for_selector("#three-heads .mh-mix")
    assert "Concatenated head outputs" in page.locator("#three-heads .mh-mix").inner_text()


def test_guess_first_then_explanation(page, base_url):
    open_before_python(page, base_url + CHAPTER)
    explain = page.locator("details.mh-explain")
    assert not explain.is_visible()
    page.locator(".mh-guess label").nth(1).click()
    page.get_by_role("button", name="Commit my guess").click()
    assert explain.is_visible() and explain.get_attribute("open") is not None
    assert (
        page.locator("[data-your-guess]")
        .inner_text()
        .startswith("Your guess: One softmax has to split")
    )
    page.reload()
    page.wait_for_selector("html.js")
    assert page.locator("details.mh-explain").is_visible()  # the committed guess is remembered


def test_check_yourself_gives_feedback(page, base_url):
    open_before_python(page, base_url + CHAPTER)
    check = page.locator(".mh-check")
    check.get_by_text("Working out which noun").click()
    check.get_by_role("button", name="Check").click()
    visible = check.locator("[data-feedback]:visible")
    assert visible.count() == 1 and visible.inner_text().startswith("Not quite.")
    check.get_by_text("Keeping track of local order").click()
    check.get_by_role("button", name="Check").click()
    assert check.locator("[data-feedback]:visible").inner_text().startswith("Right.")


def test_go_deeper_table_is_live(page, base_url):
    open_ready(page, base_url + CHAPTER)
    page.get_by_text("Go deeper: the math").click()
    assert "512 ÷ 8 = 64" in page.locator(".mh-configs").inner_text()
    page.get_by_role("button", name="key", exact=True).click()
    page.wait_for_selector(".mh-worked caption:has-text('“key”')")
    assert page.locator(".mh-worked tbody tr").count() == 5


def test_missing_runtime_leaves_static_figures_and_says_why(page, base_url):
    page.route("**/pyodide.asm.wasm", lambda route: route.fulfill(status=404, body="missing"))
    page.goto(base_url + CHAPTER)
    page.wait_for_selector("[data-pystatus].is-off", timeout=90_000)
    text = page.locator("[data-pystatus-text]").inner_text()
    assert text.startswith("Interaction is off: ") and text.endswith(
        "The figures show their first state."
    )
    # and so does every live figure, where a reader down the page sees it
    notes = page.locator("[data-fig-loading]")
    assert notes.count() == page.locator("[data-figure]").count() >= 1
    for note in notes.all():
        note.scroll_into_view_if_needed()
        assert note.is_visible() and note.inner_text() == "Interaction is off: Python did not load."
    assert page.locator("#three-heads .mh-grid").count() == 3
    page.get_by_role("button", name="kept", exact=True).click()
    assert selected_rows(page) == ["it"] * 3


def test_works_under_a_sub_path(page, site, tmp_path):
    from conftest import serve_dir

    (tmp_path / "courses" / "attention").mkdir(parents=True)
    (tmp_path / "courses" / "attention" / "many-heads").symlink_to(site)
    server = serve_dir(tmp_path)
    try:
        url = f"http://127.0.0.1:{server.server_port}/courses/attention/many-heads/"
        page.goto(url)
        page.locator(f".toc a[href='{CHAPTER}']").click()
        page.wait_for_selector("html.py-ready", timeout=90_000)
        page.get_by_role("button", name="key", exact=True).click()
        page.wait_for_selector(".mh-shares caption:has-text('“key”')")
    finally:
        server.shutdown()


def test_python_errors_come_back_as_data(ready_page):
    page = ready_page(CHAPTER)
    message = page.evaluate(
        with_own_python("""async () => {
        try { await py.call("toymodels.many_heads.model:split_words", [42]); return "no error"; }
        catch (err) {
            const traced = err.traceback.includes("Traceback");
            return `${err.constructor.name} | ${err.message} | ${traced}`;
        }
    }""")
    )
    assert (
        message == "PythonError | TypeError: expected string or bytes-like object, got 'int' | true"
    )


def test_what_a_functions_first_call_loaded_is_kept_out_of_the_collectors_way(ready_page):
    # static/pyruntime.js: after a function's first call, a full collection (23 ms under
    # Pyodide, in the middle of a tap) no longer walks the code and data it loaded; a Python of
    # the test's own, started in the chapter's page
    page = ready_page(CHAPTER)
    frozen = page.evaluate(
        with_own_python("""async () => {
        const code = "import gc; gc.get_freeze_count()";
        const ask = async () =>
          (await py.call("toymodels.page.cells:run", [code, "t", null])).value;
        return [await ask(), await ask()];
    }""")
    )
    assert int(frozen[1]) > int(frozen[0]) + 10_000, frozen
