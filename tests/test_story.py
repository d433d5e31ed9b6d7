"""What the chapters claim, held against the code that computes it: the character model's names,
shape and habits, why a model that does not copy scores below always guessing a space, the split
width of the two heads by hand, and old links to a head of "Real heads"."""

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import open_ready, url_with

from toymodels.models.charmodel import copy_test
from toymodels.models.charmodel import model as cm
from toymodels.one_character import figure as char_figure
from toymodels.one_character import lab
from toymodels.one_character import values as cv
from toymodels.page import cells
from toymodels.page.html import capital
from toymodels.real_heads import figure as rh_figure
from toymodels.training import corpus

ROOT = Path(__file__).resolve().parent.parent


def test_the_models_are_named_by_what_they_are():
    assert lab.RUN_NAMES == {
        "reference": "trained as published",
        "reference-induction": "with repeats",
        "reference-repeats": "with repeats, slower",
        "induction": "twice as wide",
    }
    html = char_figure.render({}, "char-model")["html"]
    for run in lab.RUNS:
        name = capital(lab.RUN_NAMES[run])
        assert f'data-fk="run-{run}"' in html and f">{name}</button>" in html
    assert "Reference" not in html
    # the names match what the runs are: only the reference recipe has no repeats, only the
    # wide one another width, only the slower one more steps
    ref = lab.manifest("reference")
    for run in lab.RUNS:
        m = lab.manifest(run)
        repeats = m["recipe"]["repeat_share"] + m["recipe"]["nonsense_share"] > 0
        assert repeats == ("repeats" in lab.RUN_NAMES[run] or run == "induction")
        assert (m["config"]["d_model"] == 2 * ref["config"]["d_model"]) == (run == "induction")
        assert (m["recipe"]["steps"] > ref["recipe"]["steps"]) == ("slower" in lab.RUN_NAMES[run])


def test_the_shape_and_the_corpus_the_prose_states():
    assert (cv.n_layers(), cv.n_heads(), cv.d_model()) == (2, 4, 32)
    assert cv.concat_width() == cv.d_model()  # the heads side by side fill the stream
    assert len(corpus.NOVELS) == lab.N_NOVELS and cv.n_novels() == "six"
    assert cv.published_from() == "1,000" and cv.published_to() == "1,500"
    assert "never learned to copy" in cv.story_reference()
    assert cv.story_reference().startswith("the published size and recipe")
    assert "learning rate 0.01 instead of 0.003" in cv.story_shown()
    assert "18,000 steps instead of 9,000" in cv.story_slower()
    assert cv.story_wide().startswith("64 numbers per character instead of 32")


def test_the_heads_section_says_what_the_heads_are():
    labels = lab.labels(lab.DEFAULT_RUN, lab.steps(lab.DEFAULT_RUN)[-1])
    habits = {name for _, _, name, _ in labels}
    assert cv.heads_title() == f"Eight heads, {cv.n_habits()} habits" and len(habits) == 5
    listed = cv.heads_habits()
    for layer, head, _, _ in labels:  # every head named exactly once
        assert listed.count(f"L{layer}\u00a0H{head}") == 1
    assert "copy what came next last time (L2\u00a0H1 and L2\u00a0H3)" in listed
    assert "; and one looks at itself (L2\u00a0H4)" in listed


def test_a_model_that_does_not_copy_scores_below_always_guessing_a_space():
    x, periods = copy_test.copy_set()
    assert x.shape == (copy_test.N_STRETCHES, lab.MAX_CHARS)
    assert periods.min() >= copy_test.PERIODS[0] and periods.max() <= copy_test.PERIODS[1]
    end = lab.evaluation()["runs"]["reference"]["checkpoints"][-1]["copying"]
    spaces = float(cv.spaces_only().rstrip("%")) / 100
    assert end < spaces
    # because it seldom bets on a space: far less often than spaces come, and it misses most
    bets, caught = (
        float(v().rstrip("%")) / 100 for v in (cv.reference_space_bets, cv.reference_spaces_caught)
    )
    assert bets < spaces / 2 and caught < 0.5
    assert cv.uniform_bits() == f"{np.log2(len(cm.VOCAB)):.2f}"


def test_two_heads_by_hand_split_the_width():
    text = (ROOT / "chapters" / "02-split-attend.md").read_text(encoding="utf-8")
    cells_code = re.findall(r"```python live\n(.*?)```", text, re.S)
    cells.forget("split")
    for code in cells_code:
        assert cells.run(code, "split")["error"] is None
    ns = cells.run("(d_head, head1.shape, head2.shape, C.shape, W_O.shape, out.shape)", "split")
    assert ns["value"] == "(1, (3, 1), (3, 1), (3, 2), (2, 2), (3, 2))"
    exercise = re.search(r"::: exercise.*?\n---\n(.*?)\n:::", text, re.S).group(1)
    check = "toymodels.split_attend.model:check_head2_first"
    start = cells.run(exercise, "split", check)["check"]
    assert start["ok"] is False and start["message"].startswith("Token 1 gives 50% to token 0")
    hinted = exercise.replace("[[0.], [1.]]", "[[5.], [5.]]").replace(
        "[[1.], [0.5]]", "[[1.], [-1.]]"
    )
    assert cells.run(hinted, "split", check)["check"]["ok"] is True


def test_the_training_runs_are_a_page_the_chapter_links(site):
    html = (site / "training-results.html").read_text(encoding="utf-8")
    assert '<h2 id="the-search">The search</h2>' in html and "<table>" in html
    assert "&lt;p&gt;" not in html  # Markdown rendered, not shown as markup
    chapter = (site / "one-character.html").read_text(encoding="utf-8")
    assert 'href="training-results.html#the-search"' in chapter
    assert "call that size\nand recipe the <em>reference</em>" in chapter


@pytest.mark.parametrize("field", ["3.10", "L3H10"])
def test_an_enlarged_head_opens_from_old_and_new_links(field):
    r = rh_figure.render({"view": "model", "enlarge": field}, "real-heads")
    assert (r["state"]["layer"], r["state"]["head"], r["state"]["enlarge"]) == ("3", "10", "")
    assert "L3\u00a0H10 · " in r["html"] and "3.10" not in r["summary"]


@pytest.mark.browser
def test_an_old_link_to_a_head_opens_it_and_the_page_writes_the_new_name(page, base_url):
    open_ready(page, base_url + "real-heads.html?real-heads.view=model&real-heads.enlarge=3.10")
    page.locator("#real-heads .rh-big h4").filter(has_text="L3\u00a0H10").wait_for()
    page.wait_for_url(re.compile(r"real-heads\.head=10"))
    assert "enlarge" not in page.url and "real-heads.layer=3" in page.url
    # the model view now asks for heads by their new name
    page.locator("#real-heads [data-fk='view-model']").click()
    button = page.locator("#real-heads [data-fk='pick-2-9']")
    button.wait_for()
    assert button.get_attribute("data-value") == "L2H9"
    button.click()
    page.locator("#real-heads .rh-big h4").filter(has_text="L2\u00a0H9").wait_for()
    url_with(page, "real-heads.head=9", "real-heads.layer=2", without=["3.10", "2.9"])
