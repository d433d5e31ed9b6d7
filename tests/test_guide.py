"""The author guide: its first-word head against an independent calculation, and the built
page with every block."""

import inspect
import math
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import open_ready
from playwright.sync_api import expect

from toymodels.guide import exercise
from toymodels.guide import first_word as g
from toymodels.page.html import level

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "chapters" / "90-author-guide.md"


def expected_shares(n, strength):
    """By hand: word 0's score is strength/√2, every other score 0, later words masked."""
    big = math.exp(strength / math.sqrt(2))
    w = [[0.0] * n for _ in range(n)]
    w[0][0] = 1.0
    for i in range(1, n):
        w[i][0] = big / (big + i)
        for j in range(1, i + 1):
            w[i][j] = 1 / (big + i)
    return w


@pytest.mark.parametrize("n", range(1, g.MAX_WORDS + 1))
@pytest.mark.parametrize("strength", [0.0, 1.0, g.STRENGTH, 8.0])
def test_rows_sum_to_one_and_masked_cells_are_exactly_zero(n, strength):
    scores, masked, w = g.first_word_head(n, strength)
    assert w.shape == scores.shape == masked.shape == (n, n)
    assert np.allclose(w.sum(axis=1), 1.0, atol=1e-12)
    later = np.triu(np.ones((n, n), dtype=bool), k=1)
    assert np.all(w[later] == 0.0)  # exactly, not nearly
    assert np.all(np.isneginf(masked[later])) and np.all(np.isfinite(masked[~later]))
    assert np.all(w[~later] > 0)
    assert np.allclose(w, expected_shares(n, strength), rtol=0, atol=1e-12)


def test_scores_are_the_first_word_question():
    scores, _, _ = g.first_word_head(5, 4.0)
    want = np.zeros((5, 5))
    want[:, 0] = 4.0 / math.sqrt(2)
    assert np.allclose(scores, want)


def test_every_word_looks_most_at_the_first_word_and_less_as_the_sentence_grows():
    _, _, w = g.first_word_head(g.MAX_WORDS)
    firsts = w[:, 0]
    assert all(int(np.argmax(w[i, : i + 1])) == 0 for i in range(g.MAX_WORDS))
    assert np.all(np.diff(firsts) < 0) and firsts[0] == 1.0
    assert round(100 * w[5, 0], 1) == 77.2  # the number the guide's guess block explains
    _, _, even = g.first_word_head(4, 0.0)  # no strength: an even split over what a word sees
    assert np.allclose(even[3], 0.25)


def test_render_keeps_the_contract():
    r = g.render({}, "first-word")
    assert set(r) == {"html", "slots", "state", "error", "summary"}
    assert r["error"] is None and set(r["slots"]) == {"row"}
    assert r["state"] == {"sentence": g.SENTENCE, "word": "3", "view": "softmax"}
    words = g.SENTENCE.split()
    # "on" sees four words: the first gets e^a/(e^a + 3), each other 1/(e^a + 3); in tenths
    # of a point, each rounded to the nearest
    first = math.floor(1000 * expected_shares(len(words), g.STRENGTH)[3][0] + 0.5)
    assert r["summary"] == (
        f"“on” gives {first // 10}.{first % 10}% of its attention to the first word."
    )
    html = r["html"]
    assert html.count('class="mh-word"') == len(words) and html.count('aria-pressed="true"') == 1
    assert 'data-key="word" data-value="3" data-fk="w3" aria-pressed="true" tabindex="0"' in html
    assert (
        "data-state-form" in html and 'id="first-word-sentence"' in html and "data-roving" in html
    )
    assert (
        not re.search(r"\s(?:style|on[a-z]+)=", html + r["slots"]["row"]) and "<script" not in html
    )
    assert "Total</th><td>100.0%</td>" in r["slots"]["row"]


def test_grid_colours_come_from_level_and_later_words_are_masked():
    r = g.render({"word": "5"})
    _, _, w = g.first_word_head(6)
    cells = re.findall(r'<td class="(c [^"]+)"', r["html"])
    assert len(cells) == 36 and cells.count("c masked") == 15
    assert cells[6 * 5] == f"c {level(w[5, 0])}" and cells[1] == "c masked"
    scores = g.render({"view": "scores"})["html"]
    assert scores.count('class="c num future"') == 15 and "c masked" not in scores


def test_reader_text_is_escaped():
    r = g.render({"sentence": '<img src=x onerror=alert(1)> "hi"', "word": "3"})
    everything = r["html"] + r["slots"]["row"]
    assert "<img" not in everything and "&lt;img" in everything and "&quot;hi&quot;" in everything
    assert r["summary"].startswith(
        '“"hi"” gives'
    )  # plain text: the page escapes it where it is shown


@pytest.mark.parametrize(
    "state",
    [
        {"word": "99"},
        {"word": "²"},
        {"word": "-1"},
        {"word": "03"},
        {"view": "bogus"},
        {"colour": "red"},
        {"word": 2, "view": None},
    ],
)
def test_any_state_from_the_address_bar_is_checked(state):
    r = g.render(state)
    assert r["error"] is None
    assert (
        r["state"]["word"] in {str(i) for i in range(6)} and r["state"]["view"] in g.CHOICES["view"]
    )
    assert set(r["state"]) == set(g.DEFAULTS)


def test_a_sentence_that_cannot_be_drawn_is_an_error_for_the_reader():
    empty = g.render({"sentence": "   "})
    long = g.render({"sentence": "a b c d e f g h i"})
    assert empty["html"] is None and empty["error"] == "Type a sentence with at least one word."
    assert long["html"] is None and long["error"] == "Use at most 8 words; this sentence has 9."
    short = g.render({"sentence": "Hello", "word": "3"})
    assert (
        short["state"]["word"] == "0"
        and short["summary"] == "“Hello” gives 100.0% of its attention to the first word."
    )


def test_exercise_check():
    assert not exercise.check_strength({})[0]
    assert not exercise.check_strength({"w": g.first_word_head(6, 4.0)[2]})[0]
    ok, message = exercise.check_strength({"w": g.first_word_head(6, 6.0)[2]})
    assert ok and message.startswith("Right: the last word now gives the first word 93.3%")
    assert not exercise.check_strength({"w": np.ones((6, 6))})[0]


def test_code_shown_in_the_guide_is_the_module_code():
    guide = ROOT / "toymodels" / "guide"
    source = "".join(
        (guide / name).read_text(encoding="utf-8") for name in ("first_word.py", "exercise.py")
    )
    shown = re.findall(
        r"^```python\n(.*?)\n```$", CHAPTER.read_text(encoding="utf-8"), flags=re.M | re.S
    )
    assert len(shown) >= 4
    for block in shown:
        assert block in source, block[:80]
    example = (guide / "first_word.py").read_text(encoding="utf-8")
    assert len(example.splitlines()) <= 40  # the whole worked example, model to render
    for name in re.findall(r"^def (\w+)", example, flags=re.M):  # every function is shown
        assert any(block.startswith(f"def {name}(") for block in shown), name
    # a function shown is shown whole, to its last line
    for module in (g, exercise):
        for name, fn in vars(module).items():
            if any(block.startswith(f"def {name}(") for block in shown):
                assert inspect.getsource(fn).rstrip("\n") in shown, name


def test_the_guide_names_every_export_make_export_runs():
    """Each `python -m toymodels.export NAME` of the Makefile's export target is named in the
    guide's sentence on `make export`, with the chapter it writes for (the patching
    export was left out)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^export:.*?\n((?:\t.*\n|\s*#.*\n)+)", makefile, flags=re.M).group(1)
    run = re.findall(r"-m toymodels\.export (\w+)", target)
    assert run == ["minilm", "smollm2", "certificate", "patching", "why"]
    said = re.search(r"`make export` (.*?)\n\n", CHAPTER.read_text(encoding="utf-8"), re.S)
    said = " ".join(said.group(1).split())
    chapters = {"minilm": '"Real heads"', "smollm2": '"Heads that copy"'}
    chapters["patching"] = '"What a head does" (`python -m toymodels.export patching`'
    chapters["certificate"] = (
        "its certificate against transformers (`python -m toymodels.export certificate`)"
    )
    chapters["why"] = '"Why a head looks there" (`python -m toymodels.export why`)'
    for name in run:
        assert chapters[name] in said, (name, said)


@pytest.fixture(scope="module")
def guide_page(site):
    return site, (site / "author-guide.html").read_text(encoding="utf-8")


def test_the_guide_renders_every_block(guide_page):
    site, html = guide_page
    counts = {
        "figure": len(
            re.findall(
                r'<figure class="mh-figure" id="first-word" '
                r'data-figure="toymodels\.guide\.first_word:render"',
                html,
            )
        ),
        "slot": html.count('<div class="mh-slot" data-slot-of="first-word" data-slot="row">'),
        "steps": html.count('<ol class="mh-howto" data-steps-for="first-word">'),
        "step": html.count('class="mh-step-link" data-target="first-word" data-key="view"'),
        "guess": html.count('<section class="mh-guess"'),
        "check": html.count('<section class="mh-check"'),
        "deeper": html.count('<details class="mh-deeper">'),
        "note": html.count('<aside class="mh-note-block">'),
        "cards": html.count('<div class="mh-cards">'),
        "cell": html.count('<section class="mh-cell" '),
        "exercise": html.count('<section class="mh-cell mh-exercise" '),
        "hint": html.count('<details class="mh-hint">'),
    }
    assert counts == {
        "figure": 1,
        "slot": 1,
        "steps": 1,
        "step": 3,
        "guess": 1,
        "check": 1,
        "deeper": 1,
        "note": 4,
        "cards": 1,
        "cell": 1,
        "exercise": 1,
        "hint": 2,
    }
    assert 'data-cell-check="toymodels.guide.exercise:check_strength"' in html


def test_the_guide_page_is_pre_rendered_with_maths_values_and_sources(guide_page):
    site, html = guide_page
    r = g.render({}, "first-word")
    assert r["summary"] in html and r["slots"]["row"] in html
    prose = re.sub(r"<pre.*?</pre>|<code>.*?</code>", "", html, flags=re.S)
    assert "$" not in prose.replace("&#36;2", "") and "&#36;2" in html  # \$ became a plain dollar
    assert "{{" not in prose and "MHHELD" not in html
    assert len(re.findall(r'<math [^>]*display="block"', html)) >= 2 and html.count("<math") >= 8
    assert "takes up to 8\nwords" in html  # the value macro
    assert "{{ toymodels.guide.first_word.MAX_WORDS }}" in html  # left alone inside code
    assert html.count('href="https://') >= 6  # the sources' links
    assert "For authors" in html and '<a href="author-guide.html">' in (
        site / "index.html"
    ).read_text(encoding="utf-8")
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    for anchor in re.findall(r'href="#([^"]+)"', html):
        assert anchor in ids, anchor


@pytest.mark.browser
def test_a_weight_of_the_matrix_is_picked_then_moved_in_steps_of_a_half(page, base_url):
    """The guide's "pick a cell, then change its weight" figure in the page: a tap picks the
    cell, the slider (in steps of 0.5) sets that cell's weight, and a tap on another cell
    leaves it as set."""
    open_ready(page, base_url + "author-guide.html")
    fig = page.locator("#kit-weights")
    first = fig.locator('[data-key="cell"][data-value="0,0"]')
    first.click()
    expect(fig.locator(".mh-slider label")).to_have_text("Weight (is the first word, query 1)")
    fig.locator("input[type=range]").evaluate(
        "(el) => { el.value = '2.5'; el.dispatchEvent(new Event('change', { bubbles: true })); }"
    )
    expect(fig.locator(".mh-slider output")).to_have_text("2.5")
    expect(first).to_have_text("2.5")
    expect(first).to_have_class("hl")
    fig.locator('[data-key="cell"][data-value="1,0"]').click()
    expect(fig.locator(".mh-slider output")).to_have_text("4.0")
    expect(first).to_have_text("2.5")
