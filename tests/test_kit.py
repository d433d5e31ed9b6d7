"""The figure kit (toymodels/page/kit): every text escaped, the accessibility structure, each
share rounded to its nearest tenth with the total stated apart, sliders with decimal steps, a
cell of a matrix picked and its weight changed, and `build.py new --figure` scaffolding a figure
that works."""

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import serve_dir
from playwright.sync_api import expect
from test_build import GOOD, RECAP
from test_quality import axe_violations, describe

from sitebuild.authoring.scaffold import new_chapter
from sitebuild.fetched import assets
from toymodels.page import kit

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "<script>alert('x')</script> \"&"
WORDS = ["The", HOSTILE, "sat"]
SHARES = np.array([[1.0, 0, 0], [0.25, 0.75, 0], [0.2, 0.3, 0.5]])


def pieces():
    """Every component, each given the hostile text wherever it takes text."""
    return {
        "sentence_form": kit.sentence_form(HOSTILE, HOSTILE, label=HOSTILE, help=HOSTILE),
        "choices": kit.choices("view", [("a", HOSTILE), ("b", "B")], "a", label=HOSTILE),
        "token_buttons": kit.token_buttons(WORDS, 1, label=HOSTILE, names=lambda i: HOSTILE),
        "step_list": kit.step_list([("a", HOSTILE), ("b", "B")], "b", label=HOSTILE),
        "slider": kit.slider(
            HOSTILE, "n", 3, label=HOSTILE, low=0, high=9, step=1, said=HOSTILE, shown=HOSTILE
        ),  # fmt: skip
        "grid": kit.attention_grid(WORDS, shares=SHARES, selected=1, name=HOSTILE),
        "grid_scores": kit.attention_grid(WORDS, scores=SHARES, view="scores", caption=HOSTILE),
        "shares_table": kit.shares_table(WORDS, [(HOSTILE, SHARES[1])], caption=HOSTILE, seen=2),
        "bars": kit.bars(WORDS, SHARES[2], caption=HOSTILE, column=HOSTILE),
        "matrix": kit.matrix(HOSTILE, WORDS, WORDS, SHARES, shape=True),
        "legend": kit.legend(HOSTILE),
        "heatmap_svg": kit.heatmap_svg(SHARES, label=HOSTILE),
        "bars_svg": kit.bars_svg(WORDS, SHARES[2], title=HOSTILE, keys=WORDS),
        "summary_line": kit.summary_line(HOSTILE),
        "text_box": kit.text_box(HOSTILE, "own", HOSTILE, placeholder=HOSTILE),
    }


@pytest.mark.parametrize("name", list(pieces()))
def test_every_text_given_is_escaped(name):
    html = pieces()[name]
    assert "<script" not in html and "'x'" not in html
    assert "&lt;script&gt;" in html and "&amp;" in html
    for attr in re.findall(r'="([^"]*)"', html):  # no quote breaks out of an attribute
        assert "<" not in attr and "'" not in attr


def test_groups_of_buttons_are_named_with_one_tab_stop():
    for html in (pieces()["choices"], pieces()["token_buttons"], pieces()["step_list"]):
        assert re.match(r'<div class="[^"]+" role="group" aria-label="[^"]+" data-roving>', html)
        assert html.count('tabindex="0"') == html.count('aria-pressed="true"') == 1
        assert html.count("<button") == len(re.findall(r'data-fk="[^"]+"', html))
    steps = pieces()["step_list"]
    assert ">1. &lt;script&gt;" in steps and ">2. B</button>" in steps


def test_the_grid_is_a_captioned_table_with_a_value_for_every_cell():
    html = kit.attention_grid(["a", "b", "c"], shares=SHARES, selected=2)
    assert '<caption class="sr">Attention grid, share of attention: a row is' in html
    assert html.count('<th scope="col">') == 3 and html.count('<th scope="row">') == 3
    assert len(re.findall(r'<td [^>]*aria-label="“[abc]” (→|cannot see) “[abc]”', html)) == 9
    assert html.count('tabindex="0"') == 1
    assert html.count('class="c masked"') == 3  # the three cells above the diagonal
    assert '<tr class="sel" data-key="word" data-value="2">' in html
    # the colour classes by hand: 0 only for nothing, then nine bands of 1/9
    for share, cls in ((1.0, "l9"), (0.25, "l3"), (0.75, "l7"), (0.2, "l2"), (0.5, "l5")):
        assert f'class="c {cls}"' in html, share
    assert "“c” → “b”: 30.0%" in html and "“a” cannot see “b”: masked" in html
    full = kit.attention_grid(["a", "b"], shares=np.full((2, 2), 0.5), causal=False, key=None)
    assert "masked" not in full and "tabindex" not in full and "data-roving" not in full


AWKWARD = [
    [1 / 3] * 3,
    [1 / 7] * 7,
    [1 / 6] * 6,
    [0.9995, 0.0005],
    [0.00049] * 3 + [1 - 0.00147],
    list(np.random.default_rng(3).dirichlet(np.full(12, 0.3))),
]


@pytest.mark.parametrize("shares", AWKWARD)
def test_each_share_shows_its_nearest_tenth_and_the_total_is_stated_apart(shares):
    """Bent to add up to 100.0% (largest remainder), one sixth showed as 16.6% beside 16.7%:
    each share is rounded on its own, the total row is the exact shares' 100.0%, and a line
    says so where the shown shares add up to another number."""
    words = [f"w{j}" for j in range(len(shares))]
    for html in (
        kit.shares_table(words, [("Share", np.array(shares))], caption="c"),
        kit.bars(words, np.array(shares), caption="c"),
    ):
        shown = [float(x) for x in re.findall(r"<td>([0-9.]+)%</td>", html)]
        *cells, total = shown
        assert total == 100.0
        for got, p in zip(cells, shares, strict=True):
            assert got == math.floor(1000 * p + 0.5) / 10  # the nearest tenth, halves up
        note = re.findall(r'<p class="mh-rounding">(.*?)</p>', html)
        if math.isclose(sum(cells), 100.0):
            assert note == []
        else:
            assert note == [
                "Each share is rounded to a tenth on its own, so the shares shown add up to "
                f"{sum(cells):.1f}%; the exact ones add up to 100%."
            ]
    assert kit.share(np.array(shares), 0) == f"{math.floor(1000 * shares[0] + 0.5) / 10:.1f}%"


def test_a_sixth_is_16_7_percent_everywhere_the_kit_writes_it():
    words = [f"w{j}" for j in range(6)]
    sixths = np.tril(np.ones((6, 6))) / np.arange(1, 7)[:, None]
    grid = kit.attention_grid(words, shares=sixths, selected=5)
    table = kit.shares_table(words, [("Share", sixths[5])], caption="c")
    assert grid.count(": 16.7%") == 6 and "16.6%" not in grid + table
    assert table.count("<td>16.7%</td>") == 6 and kit.share(sixths[5], 4) == "16.7%"


def test_matrix_shape_highlight_and_cells_that_are_controls():
    M = np.arange(6.0).reshape(2, 3) - 2
    html = kit.matrix("M", ["r1", "r2"], ["a", "b", "c"], M, shape=True, lit=(1, 2), key="cell")
    assert '<caption>M <span class="shape">(2 × 3)</span></caption>' in html
    assert html.count('class="hl"') == 1 and ">−2.00<" in html and ">3.00<" in html
    assert 'data-key="cell" data-value="1,2"' in html and html.count('tabindex="0"') == 1


NUMBERS = [  # (what the field holds, the number read and its text), on -1 … 1 in steps of 0.05
    ("0.35", 0.35, "0.35"),
    ("0.3", 0.3, "0.30"),
    ("0.30000000000000004", 0.3, "0.30"),  # what float arithmetic may send
    ("0.07", 0.05, "0.05"),  # onto the nearest step
    ("-0.35", -0.35, "-0.35"),
    ("-0", 0.0, "0.00"),  # never "-0.00"
    ("1.5", 0.5, "0.50"),  # off the scale: the default
    ("1e3", 0.5, "0.50"),
    ("<b>", 0.5, "0.50"),
    ("", 0.5, "0.50"),
]


@pytest.mark.parametrize("text,number,written", NUMBERS, ids=[n[0] or "empty" for n in NUMBERS])
def test_a_slider_field_is_read_on_its_scale_of_decimal_steps(text, number, written):
    got = kit.read_number(text, low=-1, high=1, step=0.05, default=0.5)
    assert got == (number, written)


def test_a_slider_with_a_decimal_step_shows_its_value_as_the_reader_sees_it():
    html = kit.slider("f", "w", "-0.35", label="Weight", low=-1, high=1, step=0.05)
    assert 'type="range"' in html and 'step="0.05"' in html and 'value="-0.35"' in html
    assert 'aria-valuetext="−0.35"' in html and '<output for="f-w">−0.35</output>' in html
    tenth = kit.slider(
        "f",
        "s",
        kit.read_number("2", low=0, high=9, step=0.1, default=4)[1],
        label="Strength",
        low=0,
        high=9,
        step=0.1,
    )
    assert 'value="2.0"' in tenth and ">2.0</output>" in tenth
    assert kit.number_text(0.1 + 0.2, 0.1) == "0.3" and kit.number_text(3, 1) == "3"
    said = kit.slider("f", "s", "2", label="S", low=0, high=9, step=1, said="2 degrees")
    assert 'aria-valuetext="2 degrees"' in said and ">2</output>" in said


WEIGHTS = {"weights": "0.0,1.0;2.0,3.0", "cell": "1,0", "at": "", "weight": ""}


def pick_and_set(state):
    """The state as the page sends it after a change, read as a figure reads it."""
    state = kit.merge(WEIGHTS, state)
    weights, picked = kit.read_weights(state, WEIGHTS, low=-4, high=4, step=0.5)
    return weights.tolist(), picked, state


def test_a_cell_of_a_matrix_is_picked_then_its_weight_changed():
    """The pattern for "pick one cell, then change that weight": a tap on a cell sends the
    cell along with the slider's last weight and the cell that weight was for, so it changes
    nothing; a move of the slider sends the weight with its cell, which takes it."""
    weights, picked, shown = pick_and_set({})
    assert (weights, picked) == ([[0.0, 1.0], [2.0, 3.0]], (1, 0))
    assert shown == {"weights": "0.0,1.0;2.0,3.0", "cell": "1,0", "at": "1,0", "weight": "2.0"}
    tapped = {**shown, "cell": "0,1"}  # a tap on the cell (0, 1)
    weights, picked, shown = pick_and_set(tapped)
    assert (weights, picked) == ([[0.0, 1.0], [2.0, 3.0]], (0, 1))
    assert (shown["at"], shown["weight"]) == ("0,1", "1.0")  # the slider now holds that cell
    moved = {**shown, "weight": "-2.5", "at": "0,1"}  # the slider's form: its value and cell
    weights, picked, shown = pick_and_set(moved)
    assert weights == [[0.0, -2.5], [2.0, 3.0]] and shown["weights"] == "0.0,-2.5;2.0,3.0"
    weights, picked, shown = pick_and_set({**shown, "cell": "1,1"})  # another cell: kept
    assert weights == [[0.0, -2.5], [2.0, 3.0]] and shown["weight"] == "3.0"
    for junk in ({"cell": "9,9"}, {"weights": "1,2,3"}, {"at": "0,0", "weight": "99"}):
        assert pick_and_set(junk)[:2] == ([[0.0, 1.0], [2.0, 3.0]], (1, 0)), junk
    html = kit.weight_editor(
        "f",
        np.array(weights),
        picked,
        ["r1", "r2"],
        ["c1", "c2"],
        caption="W",
        label="Weight",
        low=-4,
        high=4,
        step=0.5,
    )
    assert html.count('data-key="cell"') == 4 and 'class="hl"' in html
    assert (
        '<td class="hl" tabindex="-1" data-fk="f-cell-1-1" data-key="cell" data-value="1,1">'
        in html
    )
    assert '<label for="f-weight">Weight (r2, c2)</label>' in html
    assert '<input type="hidden" name="at" value="1,1">' in html and 'value="3.0"' in html


def test_the_svg_pictures_are_named_images_or_decoration():
    named = kit.heatmap_svg(SHARES, label="Head 1", selected=1)
    assert 'role="img" aria-label="Head 1"' in named and 'class="rowmark" x="0" y="7"' in named
    assert 'aria-hidden="true"' in kit.heatmap_svg(SHARES)
    chart = kit.bars_svg(["a", "b", "c"], SHARES[2], title="Next", top=2)
    assert 'aria-label="Next: “c” 50.0%, “b” 30.0%"' in chart and chart.count("bar top") == 2


def test_a_map_drawn_again_follows_its_numbers_name_and_mark():
    """heatmap_svg keeps the maps it drew (a tap that moves the mark draws none again): the kept
    picture is found by the numbers, so a changed array, even changed in place, is drawn anew,
    and each call has its own name and marked row."""
    shares = np.array(SHARES, dtype=float)
    first = kit.heatmap_svg(shares, label="Head 1", selected=1)
    again = kit.heatmap_svg(shares, label="Head 2 & <3>", selected=2)
    assert 'aria-label="Head 2 &amp; &lt;3&gt;"' in again and 'x="0" y="14"' in again
    assert again.replace("Head 2 &amp; &lt;3&gt;", "Head 1").replace('y="14"', 'y="7"') == first
    plain = kit.heatmap_svg(shares)
    assert 'aria-hidden="true"' in plain and "rowmark" not in plain and "Head" not in plain
    shares[2] = [0.0, 1.0, 0.0]  # in place: the same array object, other numbers
    changed = kit.heatmap_svg(shares, label="Head 1", selected=1)
    # drawn anew: as a float32 copy of the new numbers, which nothing kept, is drawn
    assert changed != first
    assert changed == kit.heatmap_svg(shares.astype(np.float32), label="Head 1", selected=1)


@pytest.mark.parametrize("causal", [True, False])
def test_a_sheet_of_maps_draws_each_cell_in_its_shade_in_its_maps_box(causal):
    rng = np.random.default_rng(3)
    maps = rng.dirichlet(np.full(5, 0.4), size=(2, 3, 5))  # (rows, columns, n, n)
    maps[0, 0, 2] = [0, 0.5, 0.5, 0, 0]  # exact zeros and a share on a band's edge
    if causal:
        maps = np.tril(maps)
    svg = kit.heatmap_sheet(maps, causal=causal, selected=3, cell=7, gap=1, band=2)
    assert svg.count("<path") == len(set(re.findall(r'<path class="([^"]+)"', svg)))
    assert 'viewBox="0 0 126 98"' in svg and 'aria-hidden="true"' in svg  # boxes 6 x 7 cells
    got = {}  # (row, column, i, j) -> shade, read back from each run of cells
    for cls, d in re.findall(r'<path class="l(\d)" d="([^"]*)"', svg):
        if cls == "1":
            continue
        rects = re.findall(r"M(\d+) (\d+)h(\d+)v(\d+)h-\3z", d)
        assert "".join(f"M{x} {y}h{w}v{h}h-{w}z" for x, y, w, h in rects) == d
        for x, y, w, h in rects:
            for a in range(int(h) // 7):
                for b in range(int(w) // 7):
                    (r, i), (c, j) = divmod(int(y) // 7 + a, 7), divmod(int(x) // 7 + b, 6)
                    assert i < 5 and j < 5 and (r, c, i, j) not in got
                    got[(r, c, i, j)] = int(cls)
    want = {}
    for (r, c, i, j), p in np.ndenumerate(maps):
        shade = 0 if p <= 0 else min(9, 1 + int(p * 9))
        if (j <= i or not causal) and shade != 1:
            want[(r, c, i, j)] = shade
    assert got == want and want[(0, 0, 2, 0)] == 0 and want[(0, 0, 2, 1)] == 5
    marks = re.search(r'<path class="rowmark" d="([^"]*)"', svg).group(1)
    assert re.findall(r"M(\d+) (\d+)h35v7h-35z", marks) == [
        (str(c * 42), str(r * 49 + 21)) for r in range(2) for c in range(3)
    ]
    assert ('class="masked"' in svg) == causal


def test_read_sentence_checks_every_field():
    defaults = {"sentence": "a b c", "word": "1", "view": "x"}
    state, words, error = kit.read_sentence({"word": "07", "view": "y"}, defaults, {"view": "x"})
    assert (state, words, error) == (
        {"sentence": "a b c", "word": "1", "view": "x"},
        WORDS[:0] + ["a", "b", "c"],
        None,
    )
    assert (
        kit.read_sentence({"sentence": " "}, defaults)[2]
        == "Type a sentence with at least one word."
    )
    assert kit.read_sentence({"sentence": "a " * 9}, defaults)[2].startswith("Use at most 8 words")


@pytest.fixture(scope="module")
def two_back(tmp_path_factory):
    """A copy of the project with a chapter scaffolded by `build.py new "Two back" --figure`,
    built by a Python of its own (which imports the copy's toymodels): -> (root, site)."""
    tmp_path = tmp_path_factory.mktemp("two-back")
    root = tmp_path / "repo"
    root.mkdir()
    for part in ("toymodels", "templates", "sitebuild"):
        shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "build.py", root / "build.py")
    # a path of one chapter, so that the build renders the scaffold and little else
    (root / "chapters").mkdir()
    last = root / "chapters" / "01-test.md"  # the path's last chapter
    last.write_text(GOOD + RECAP, encoding="utf-8")
    path, led = new_chapter(root, "Two back", figure=True)
    assert led == last and "::: recap Next, Two back: rewrite this line" in last.read_text("utf-8")
    module = root / "toymodels" / "two_back" / "figure.py"
    assert module.exists() and "toymodels.two_back.figure:render" in path.read_text("utf-8")
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "build.py", "build", "--out", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    return root, site


def test_new_figure_scaffolds_a_chapter_whose_kit_figure_builds_and_keeps_the_contract(two_back):
    root, site = two_back
    page = (site / "two-back.html").read_text(encoding="utf-8")
    assert 'class="mh-grid" data-roving="grid"' in page
    share = math.exp(4) / (math.exp(4) + 3)  # "on" sees four words; only "sat" scores 4
    assert f"“on” gives {100 * share:.1f}% to the word before it, “sat”." in page
    probe = (
        "from toymodels.two_back import figure as f\n"
        "from toymodels.page.figure import check\n"
        "for st in [{}, {'view': 'scores'}, {'view': 'mask'}, {'word': '0'}, {'word': '5'},"
        " {'sentence': '<b>&'}, {'sentence': ''}]:\n"
        "    r = check(f.render(st, 'head'))\n"
        "    assert r['error'] or (r['summary'] and '<b>' not in r['html']), st\n"
        "s, w = f.head(4)\n"
        "import math\n"
        "assert abs(w[3, 2] - math.exp(4) / (math.exp(4) + 3)) < 1e-12\n"
        "print('ok')\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True)
    assert run.stdout.strip() == "ok", run.stderr


@pytest.mark.browser
def test_axe_finds_nothing_serious_on_a_page_built_only_from_the_kit(two_back, new_page):
    """The scaffolded chapter's figure is kit components only: axe-core finds nothing serious or
    critical on its page, in light and in dark, as built, once the page's Python is ready, and
    after the reader has chosen a word and the masked view (markup drawn by Python in the
    browser)."""
    server = serve_dir(two_back[1])
    found = {}

    def schemes(moment):
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            found[f"{moment}, {scheme}"] = axe_violations(page)

    try:
        page = new_page(viewport={"width": 1200, "height": 900})
        page.goto(f"http://127.0.0.1:{server.server_port}/two-back.html")
        expect(page.locator("figure[data-figure] table.mh-grid")).to_have_count(1)
        page.evaluate(assets.axe_script())  # once: the page is never left
        schemes("as built")
        page.wait_for_selector("html.py-ready", timeout=90_000)
        schemes("Python ready")
        figure = page.locator("figure[data-figure]")
        figure.locator('.mh-words [data-value="1"]').click()
        expect(figure.locator('.mh-words [data-value="1"]')).to_have_attribute(
            "aria-pressed", "true"
        )
        page.locator('[data-key="view"][data-value="mask"]').first.click()
        expect(figure.locator("td.num").first).to_be_attached()  # scores in the mask view
        schemes("redrawn")
    finally:
        server.shutdown()
    problems = [f"{moment}:\n{describe(v)}" for moment, v in found.items() if v]
    assert not problems, "\n\n".join(problems)
