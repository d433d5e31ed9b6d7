"""Chapter "One head, from scratch": the head and its figure against numbers worked out here,
by hand, the exercises' checks, the built chapter, and the figure driven by the keyboard."""

import math
import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from conftest import open_ready, url_with

from toymodels.one_head import figure, model, values, worked
from toymodels.page import cells
from toymodels.page import figure as contract

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = "one-head.html"
WORDS = ["Puff", "found", "a", "key"]

# ---------------------------------------------------------------- the head, by hand
# The chapter's matrices, typed once more here: the test's own copy of what the page says.
X = [[1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0]]
W_Q = [[2, 0], [0, 0], [0, 1], [0, 0]]
W_K = [[-1, 0], [-0.5, 2], [2, 1], [0.5, -1]]
W_V = [[1, 1], [-1, 0], [1, 0], [0, 0]]


def matmul(a, b):
    return [
        [sum(a[i][t] * b[t][j] for t in range(len(b))) for j in range(len(b[0]))]
        for i in range(len(a))
    ]


def hand_softmax(scores):
    """e^s / Σ e^s over the finite scores, written out in plain Python; -inf gives 0."""
    top = max(s for s in scores if s != -math.inf)
    e = [0.0 if s == -math.inf else math.exp(s - top) for s in scores]
    return [x / sum(e) for x in e]


def hand_head():
    Q, K, V = matmul(X, W_Q), matmul(X, W_K), matmul(X, W_V)
    n = len(X)
    dots = [[Q[i][0] * K[j][0] + Q[i][1] * K[j][1] for j in range(n)] for i in range(n)]
    scores = [[d / math.sqrt(2) for d in row] for row in dots]
    masked = [
        [s if j <= i else -math.inf for j, s in enumerate(row)] for i, row in enumerate(scores)
    ]
    shares = [hand_softmax(row) for row in masked]
    out = [[sum(w[j] * V[j][c] for j in range(n)) for c in range(2)] for w in shares]
    return Q, K, V, dots, scores, masked, shares, out


def test_the_model_holds_the_chapters_matrices():
    assert list(model.WORDS) == WORDS and model.D_HEAD == 2
    for mine, theirs in ((X, model.X), (W_Q, model.W_Q), (W_K, model.W_K), (W_V, model.W_V)):
        assert np.array_equal(np.array(mine, dtype=float), theirs)


def test_every_step_of_the_head_matches_the_hand_calculation():
    Q, K, V, dots, scores, masked, shares, out = hand_head()
    h = model.HEAD
    for name, want in (("Q", Q), ("K", K), ("V", V), ("dots", dots), ("scores", scores)):
        assert np.allclose(h[name], want, atol=1e-12), name
    assert np.array_equal(np.isneginf(h["masked"]), np.isneginf(np.array(masked)))
    assert np.allclose(h["shares"], shares, atol=1e-12) and np.allclose(h["out"], out, atol=1e-12)
    later = np.triu(np.ones((4, 4), dtype=bool), k=1)
    assert np.all(h["shares"][later] == 0.0)  # exactly
    # the numbers the prose explains
    assert dots[3][1] == 2 * 2 + 0 * 1 == 4
    assert shares[0][0] == 1.0 and np.allclose(shares[2][:3], 1 / 3)  # itself only; a zero query
    assert np.argmax(shares[3]) == 1  # "key" looks at "found"


def test_the_unmasked_head_lets_puff_look_ahead():
    Q, K, *_ = hand_head()
    row = hand_softmax([(Q[0][0] * k[0] + Q[0][1] * k[1]) / math.sqrt(2) for k in K])
    assert np.allclose(model.attend(causal=False)["shares"][0], row)
    assert values.puff_unmasked_found() == f"{100 * row[1]:.1f}%"


def test_softmax_and_mask_of_the_model():
    s = np.array([[1000.0, 1001.0, 1002.0], [1.0, 2.0, -np.inf]])
    w = model.softmax(s)
    assert np.all(np.isfinite(w)) and np.allclose(w.sum(axis=1), 1)
    assert np.allclose(w[0], hand_softmax([1.0, 2.0, 3.0])) and w[1, 2] == 0.0
    m = model.causal_mask(np.zeros((3, 3)))
    assert np.array_equal(np.isneginf(m), np.triu(np.ones((3, 3), dtype=bool), k=1))


# ---------------------------------------------------------------- the figure


class Rows(HTMLParser):
    """The figure's table: for each word, the texts of its cells (key, q·k, score, share)."""

    def __init__(self, html):
        super().__init__()
        self.rows, self._row, self._cell, self._in = {}, None, None, None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self._row = []
        elif tag in ("th", "td") and self._row is not None:
            self._cell = ""

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row:
            self.rows[self._row[0]] = self._row[1:]
            self._row = None


def hand_look(angle, length):
    """One query of LENGTH at ANGLE degrees against the four keys, by hand."""
    q = (length * math.cos(math.radians(angle)), length * math.sin(math.radians(angle)))
    _, K, V, *_ = hand_head()
    dots = [q[0] * k[0] + q[1] * k[1] for k in K]
    scores = [d / math.sqrt(2) for d in dots]
    shares = hand_softmax(scores)
    out = [sum(w * v[c] for w, v in zip(shares, V, strict=True)) for c in range(2)]
    return q, dots, scores, shares, out


def shown(x, places=2):
    return f"{x:.{places}f}".replace("-", "−").replace("−0.00", "0.00")


@pytest.mark.parametrize(
    "angle, length", [(0, 2), (27, 1), (127, 2), (74, 4), (200, 0.5), (300, 3.25), (45, 0)]
)
def test_figure_numbers_match_the_hand_calculation(angle, length):
    r = contract.check(figure.render({"angle": str(angle), "length": str(length)}, "fig"))
    assert r["error"] is None and r["state"] == {"angle": str(angle), "length": f"{length:g}"}
    q, dots, scores, shares, out = hand_look(angle, length)
    rows = Rows(r["html"]).rows
    for j, word in enumerate(WORDS):
        key, dot, score, share, _bar = rows[word]
        assert (dot, score) == (shown(dots[j]), shown(scores[j])), word
        assert share == f"{100 * shares[j]:.1f}%", word
    assert rows["Total"][3] == "100.0%"
    assert f"Query [{shown(q[0])}, {shown(q[1])}]" in r["html"]
    # the values and the output are the slot placed once the chapter has introduced values
    output = f"Output = Σ share × value = [{shown(out[0])}, {shown(out[1])}]"
    assert output in r["slots"]["output"] and "Output" not in r["html"] + r["summary"]
    top = max(range(4), key=lambda j: shares[j])
    assert f"Shares: “{WORDS[top]}” {100 * shares[top]:.1f}%" in r["summary"]


def test_the_default_query_is_the_worked_examples_query_of_key():
    r = figure.render({}, "fig")
    assert r["state"] == {"angle": "0", "length": "2"}
    Q, *_ = hand_head()
    assert Q[3] == [2, 0]  # length 2, pointing along the first axis
    assert np.allclose(
        model.look(model.query(0, 2), model.KEYS, model.VALUES)["shares"], hand_head()[6][3]
    )


@pytest.mark.parametrize("angle", range(0, 360, 15))
def test_a_longer_query_looks_more_sharply(angle):
    """Direction fixed, length up: the top share grows, step by step, from an even split."""
    lengths = np.arange(0, model.MAX_LENGTH + 0.01, 0.25)
    tops = []
    for length in lengths:
        shares = model.look(model.query(angle, length), model.KEYS, model.VALUES)["shares"]
        assert np.allclose(shares, hand_look(angle, length)[3])
        tops.append(shares.max())
    assert tops[0] == pytest.approx(0.25)
    assert np.all(np.diff(tops) > 0), tops
    # and the figure shows it: the biggest share it prints never goes down
    printed = []
    for length in lengths:
        html = figure.render({"angle": str(angle), "length": f"{length:g}"}, "fig")["html"]
        printed.append(max(float(Rows(html).rows[w][3].rstrip("%")) for w in WORDS))
    assert printed == sorted(printed) and printed[-1] > printed[0]


def test_direction_chooses_the_key():
    for word in ("found", "Puff", "a"):
        shares = hand_look(figure.AIM[word], 2)[3]
        assert WORDS[int(np.argmax(shares))] == word
    # a dot product is not an angle: aimed at the short key of "key", the query still
    # finds that Puff's longer key reaches further along its direction
    shares = hand_look(figure.AIM["key"], 2)[3]
    assert WORDS[int(np.argmax(shares))] == "Puff" and shares[3] > shares[1]
    tie = hand_look(figure.AIM["between"], model.MAX_LENGTH)[3]
    assert abs(tie[1] - tie[0]) < 0.01 and tie[0] + tie[1] > 0.99  # found and Puff: half each


def test_state_is_words_in_the_url_and_junk_is_normalised():
    render = figure.render
    assert render({"angle": "found"}, "f")["state"]["angle"] == "27"
    assert render({"angle": "PUFF"}, "f")["state"]["angle"] == "127"
    assert render({"angle": "between"}, "f")["state"]["angle"] == str(figure.AIM["between"])
    assert render({"angle": "-15", "length": "9"}, "f")["state"] == {"angle": "345", "length": "4"}
    assert render({"angle": "720.4", "length": "0.333"}, "f")["state"] == {
        "angle": "0",
        "length": "0.33",
    }
    for junk in ("nan", "inf", "1e309", "²", "٣", "", "12abc", "__proto__", None, [1]):
        assert render({"angle": junk, "length": junk}, "f")["state"] == figure.DEFAULTS
    for state in ({"angle": "found"}, {"length": "4"}):  # every value a steps block may set
        for field, allowed in figure.CHOICES.items():
            for value in allowed:
                assert render({**state, field: value}, "f")["error"] is None


def test_controls_are_keyboard_ready_and_the_markup_has_no_inline_style():
    html = figure.render({}, "q")["html"]
    assert 'type="range"' in html and 'name="angle"' in html and 'name="length"' in html
    assert html.count('data-state-form="live"') == 2 and "data-roving" in html
    assert html.count('tabindex="0"') == 1  # one Tab stop in the group of aim buttons
    aimed = figure.render({"angle": "found"}, "q")["html"]
    assert re.search(r'aria-pressed="true"[^>]*>“found”', aimed)
    assert not re.search(r"\sstyle=|<script|\son[a-z]+=", html)
    assert html.count('role="img"') == 1 and 'aria-label="A plane with four key arrows' in html
    assert figure.render({}, "q")["slots"]["output"].count('role="img"') == 1  # the values


def test_the_worked_figure_shows_every_step():
    r = contract.check(worked.render({}, "words"))
    assert set(r["slots"]) == {
        "weights",
        "qk",
        "scores",
        "masked",
        "shares",
        "softmax",
        "values",
        "outputs",
    }
    shares = hand_head()[6]
    table = Rows(r["slots"]["shares"]).rows
    for i, word in enumerate(WORDS):
        row = table[word]
        assert row[: i + 1] == [f"{100 * p:.1f}%" for p in shares[i][: i + 1]]
        assert row[-1] == "100.0%"
    assert Rows(r["slots"]["masked"]).rows["Puff"][1:] == ["−∞"] * 3


# ---------------------------------------------------------------- the exercises


def run_exercise(code, check):
    cells.forget("test-one-head")
    done = cells.run(code, "test-one-head", f"toymodels.one_head.exercises:{check}")
    assert done["error"] is None, done["error"]
    return done["check"]["ok"], done["check"]["message"]


STABLE = """
def softmax(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
"""
LOGSUMEXP = """
def softmax(scores):
    top = np.max(scores, axis=-1, keepdims=True)
    return np.exp(scores - top - np.log(np.sum(np.exp(scores - top), axis=-1, keepdims=True)))
"""
NAIVE = """
def softmax(scores):
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)
"""
ONE_SHIFT = """
def softmax(scores):
    e = np.exp(scores - scores.max())
    return e / e.sum(axis=-1, keepdims=True)
"""


def test_the_softmax_check_accepts_a_stable_softmax():
    for code in (STABLE, LOGSUMEXP):
        ok, message = run_exercise(code, "check_softmax")
        assert ok and message.startswith("Right"), message


def test_the_softmax_check_refuses_one_without_the_max_shift():
    ok, message = run_exercise(NAIVE, "check_softmax")
    assert not ok
    assert "[1000, 1001, 1002]" in message and "nan" in message
    assert "Subtract the largest score from every score before np.exp" in message


def test_the_softmax_check_refuses_other_slips():
    ok, message = run_exercise(ONE_SHIFT, "check_softmax")
    assert not ok and "each row shifted by its own largest score" in message
    ok, message = run_exercise("def softmax(s):\n    return s / s.sum()", "check_softmax")
    assert not ok and "e to each score" in message
    assert not run_exercise("x = 1", "check_softmax")[0]
    ok, message = run_exercise("def softmax(s):\n    raise ValueError('no')", "check_softmax")
    assert not ok and "raised ValueError: no" in message


GOOD_MASK = """
def causal_mask(scores):
    n = scores.shape[0]
    return np.where(np.triu(np.ones((n, n), dtype=bool), k=1), -np.inf, scores)
"""
BIG_NEGATIVE = """
def causal_mask(scores):
    n = len(scores)
    return scores + np.triu(np.full((n, n), -1e9), k=1)
"""
HIDES_DIAGONAL = """
def causal_mask(scores):
    n = scores.shape[0]
    return np.where(np.triu(np.ones((n, n), dtype=bool)), -np.inf, scores)
"""
BACKWARDS = """
def causal_mask(scores):
    n = scores.shape[0]
    return np.where(np.tril(np.ones((n, n), dtype=bool), k=-1), -np.inf, scores)
"""
ZEROS = """
def causal_mask(scores):
    return np.tril(scores)
"""
FIXED_SIZE = """
def causal_mask(scores):
    out = scores.copy()
    out[np.triu_indices(4, k=1, m=scores.shape[1])] = -np.inf
    return out
"""


def test_the_mask_check_accepts_right_masks():
    ok, message = run_exercise(GOOD_MASK, "check_mask")
    assert ok and message.startswith("Right") and "-np.inf is exact" not in message
    ok, message = run_exercise(BIG_NEGATIVE, "check_mask")
    assert ok and "-np.inf is exact" in message


def test_the_mask_check_refuses_a_mask_that_hides_the_diagonal():
    ok, message = run_exercise(HIDES_DIAGONAL, "check_mask")
    assert not ok
    assert message.startswith("Your mask hides the diagonal too, so no word can see itself")
    assert "A word always sees itself" in message


def test_the_mask_check_refuses_other_slips():
    ok, message = run_exercise(BACKWARDS, "check_mask")
    assert not ok and "hides the earlier words and keeps the later ones" in message
    ok, message = run_exercise(ZEROS, "check_mask")
    assert not ok and "Use -np.inf" in message
    ok, message = run_exercise("def causal_mask(scores):\n    return scores", "check_mask")
    assert not ok and message.startswith("No later word is hidden yet")
    ok, message = run_exercise(FIXED_SIZE, "check_mask")
    assert not ok and "scores.shape[0]" in message
    ok, message = run_exercise("def causal_mask(scores):\n    scores[0, 1] = 0", "check_mask")
    assert not ok and "returned None" in message


def test_the_exercises_starting_code_is_refused():
    """What the page shows before the reader changes anything is wrong on purpose."""
    chapter = (ROOT / "chapters" / "00-one-head.md").read_text()
    starts = re.findall(
        r"^check: toymodels\.one_head\.exercises:(\w+)\n.*?^---\n(.*?)^:::", chapter, re.M | re.S
    )
    assert [name for name, _ in starts] == ["check_softmax", "check_mask"]
    for name, code in starts:
        assert not run_exercise(code, name)[0], name


# ---------------------------------------------------------------- the built chapter


def test_the_chapter_builds_with_every_value_in_place(site):
    html = (site / CHAPTER).read_text()
    assert "{{" not in html and "}}" not in html  # every placeholder became its value
    shares = hand_head()[6]
    expected = [
        "2 × 2 + 0 × 1 = 4",  # key's query · found's key
        "[−1, 0] + [−0.5, 2] = [−1.5, 2]",  # Puff's key, two rows of W_K
        f"“found” gets {100 * shares[3][1]:.1f}% and “a” {100 * shares[3][2]:.1f}%",
        f"gives “Puff” {100 * shares[1][0]:.1f}%",
        f"{100 * shares[2][2]:.1f}% each",
        f"Where the two score alike, at {figure.AIM['between']}°",
    ]
    text = " ".join(unescape(re.sub(r"<[^>]+>", "", html)).split())
    for snippet in expected:
        assert snippet in text, snippet
    assert f"<mn>{shown(4 / math.sqrt(2))}</mn>" in html  # 4 / √2 ≈ 2.83, in MathML
    assert html.count('data-figure="toymodels.one_head.figure:render"') == 1
    assert html.count('data-slot-of="words"') == 8
    assert 'href="many-heads.html"' in html and "One row, one kind of link" in text
    assert "Attention Is All You Need" in text and "Jointly Learning to Align and Translate" in text
    assert html.count('class="mh-cell mh-exercise"') == 2


def test_it_is_chapter_one_and_leads_to_many_heads(site):
    index = (site / "index.html").read_text()
    assert index.index('href="one-head.html"') < index.index('href="many-heads.html"')
    html = (site / CHAPTER).read_text()
    assert "Chapter 1 · Attention" in html
    assert "Chapter 2 · " in (site / "many-heads.html").read_text()


# ---------------------------------------------------------------- in the browser


def table_shares(page):
    rows = page.locator("#move-query table.oh-table tbody tr")
    return {r.locator("th").inner_text(): r.locator("td.oh-share").inner_text() for r in rows.all()}


@pytest.mark.browser
def test_the_keyboard_moves_the_query_and_the_shares_follow(page, base_url):
    open_ready(page, base_url + CHAPTER)
    before = table_shares(page)
    assert before["found"] == f"{100 * hand_look(0, 2)[3][1]:.1f}%"

    length = page.locator("#move-query input[name='length']")
    length.focus()
    for _ in range(4):  # four steps of 0.25: length 2 -> 3
        page.keyboard.press("ArrowRight")
    page.wait_for_selector("#move-query input[name='length'][value='3']")
    url_with(page, "move-query.length=3")
    assert page.evaluate("document.activeElement.dataset.fk") == "length"  # focus kept
    after = table_shares(page)
    assert after["found"] == f"{100 * hand_look(0, 3)[3][1]:.1f}%" and after != before

    angle = page.locator("#move-query input[name='angle']")
    angle.focus()
    page.keyboard.press("End")  # 359°
    page.wait_for_selector("#move-query input[name='angle'][value='359']")
    url_with(page, "move-query.angle=359")
    assert table_shares(page)["found"] == f"{100 * hand_look(359, 3)[3][1]:.1f}%"

    # the aim buttons: one Tab stop, arrow keys inside, Enter to press
    page.locator("#move-query [data-fk='aim-0']").focus()
    page.keyboard.press("ArrowRight")  # to "found"
    page.keyboard.press("ArrowLeft")  # back to "Puff"
    page.keyboard.press("Enter")
    page.wait_for_selector("#move-query [data-fk='aim-0'][aria-pressed='true']")
    shares = table_shares(page)
    assert max(shares, key=lambda w: float(shares[w].rstrip("%"))) == "Puff"
    assert shares["Puff"] == f"{100 * hand_look(figure.AIM['Puff'], 3)[3][0]:.1f}%"
    assert "points at 127° with length 3" in page.locator("#move-query [data-summary]").inner_text()


@pytest.mark.browser
def test_a_link_reopens_the_view_and_the_steps_drive_the_figure(page, base_url):
    open_ready(page, base_url + CHAPTER + "?move-query.angle=between&move-query.length=4")
    page.wait_for_selector(f"#move-query input[name='angle'][value='{figure.AIM['between']}']")
    shares = table_shares(page)
    tie = hand_look(figure.AIM["between"], 4)[3]
    assert shares["found"] == f"{100 * tie[1]:.1f}%" and shares["Puff"] == f"{100 * tie[0]:.1f}%"
    page.locator(".mh-step-link", has_text="Length 0.").click()
    page.wait_for_selector("#move-query input[name='length'][value='0']")
    url_with(page, "move-query.length=0")
    assert set(table_shares(page).values()) == {"25.0%"}


def test_figure_2_draws_values_only_after_the_chapter_introduces_them(site):
    """Figure 2's square of values and its output stand after the section that defines
    values ("The output: a weighted sum of values"), not in the figure itself."""
    html = (site / "one-head.html").read_text(encoding="utf-8")
    defined = html.index('id="the-output-a-weighted-sum-of-values"')
    figure = html.index('id="move-query"')
    square = html.index('data-slot-of="move-query" data-slot="output"')
    assert figure < defined < square
    assert "oh-square" not in html[figure : html.index("</figure>", figure)]
    assert "oh-square" in html[square : square + 4000]
    # the values section points ahead to where the square is drawn, not back to the figure
    section = html[defined : html.index("<h2", defined)]
    drawn_in = re.findall(r'<h2 id="([^"]+)"', html[:square])[-1]
    assert f'href="#{drawn_in}"' in section and "Figure 2" not in section
