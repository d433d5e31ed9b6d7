"""A tap never moves the tapped control: the page does not scroll on a tap (whatever changes
above the control, the page keeps it under the reader's finger), and what the tap changed out of
sight is said beside the control, naming where it is, with a button that goes there
(static/figures.js, static/effects.js)."""

import re

import pytest
from conftest import open_before_python, open_ready

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
# a control's top on the screen once its figure has redrawn and painted
TAP = """async ([fid, selector]) => {
  const fig = document.getElementById(fid);
  const control = () => document.querySelector(selector);
  control().scrollIntoView({ block: "center" });
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  await frame();
  const before = [control().getBoundingClientRect().top, scrollY];
  const drawn = new Promise((r) => fig.addEventListener("mh:drawn", r, { once: true }));
  control().click();
  await drawn;
  for (let i = 0; i < 10; i++) await frame();
  return { before, after: [control().getBoundingClientRect().top, scrollY] };
}"""
IN_VIEW = """(el) => { const r = el.getBoundingClientRect();
  return r.top < innerHeight && r.bottom > 0; }"""


def tap(page, fid, selector):
    moved = page.evaluate(TAP, [fid, selector])
    assert abs(moved["after"][0] - moved["before"][0]) < 1, moved  # under the reader's finger
    return moved


def test_a_head_tapped_in_the_map_stays_put_and_the_page_says_where_its_head_opened(
    new_page, base_url
):
    page = open_ready(new_page(**PHONE), f"{base_url}heads-that-copy.html")
    tap(page, "copy-map", '#copy-map [data-key="head"][data-value="L1H2"]')
    note = page.locator("#copy-map .mh-effect")
    assert re.fullmatch(r"What this changed is (below|above)\. Show it [↓↑]", note.inner_text())
    # after the map, not in the tapped cell's row, whose grid it would distort
    assert note.evaluate(
        "(n) => !n.closest('table') && n.previousElementSibling.matches('.hc-scroll')"
    )
    # the note's button goes there
    note.get_by_role("button").click()
    opened = page.locator("#copy-map section.hc-opened")
    assert opened.get_attribute("aria-label") == "L1\u00a0H2, opened"
    page.wait_for_function(f"(el) => ({IN_VIEW})(el)", arg=opened.element_handle())


def test_a_head_chosen_to_enlarge_is_said_and_shown_on_request(new_page, base_url):
    page = open_ready(new_page(**PHONE), f"{base_url}real-heads.html")
    tap(page, "real-heads", '#real-heads .rh-pickhead[data-fk="head-6"]')
    big = page.locator(".rh-big")
    if not big.evaluate(IN_VIEW):
        note = page.locator("#real-heads .mh-effect")
        assert "What this changed is below." in note.inner_text()
        note.get_by_role("button", name="Show it ↓").click()
    page.wait_for_function(f"() => ({IN_VIEW})(document.querySelector('.rh-big'))")


def test_a_note_beside_a_slot_names_what_changed_and_repeats_no_unchanged_summary(
    new_page, base_url
):
    page = open_ready(
        new_page(viewport={"width": 1280, "height": 900}), f"{base_url}one-character.html"
    )
    slot = '[data-slot="numbers"]'
    tap(page, "char-model", f'{slot} [data-key="character"][data-value="1"]')
    note = page.locator(f"{slot} .mh-effect")
    # the part that changed nearest the control, named; the model's guess (the figure's
    # summary) did not change, so the note does not repeat it as if it were news
    text = note.inner_text()
    found = re.fullmatch(
        r"(“Queries and keys” \(below\)|Figure 1 \(above\)) changed too\. Show it [↓↑]", text
    )
    assert found, text
    note.get_by_role("button").click()
    target = "#char-model" if found[1].startswith("Figure") else '[data-slot="scores"]'
    page.wait_for_function(f"() => ({IN_VIEW})(document.querySelector('{target}'))")


@pytest.mark.parametrize(
    "options",
    [{"viewport": {"width": 1280, "height": 800}}, PHONE],
    ids=["laptop", "phone"],
)
def test_a_step_list_stays_on_the_screen_with_its_figure(new_page, base_url, options):
    page = open_ready(new_page(**options), f"{base_url}one-head.html")
    step = page.locator('[data-target="move-query"]').nth(1)
    step.scroll_into_view_if_needed()
    step.click()
    page.wait_for_url("**move-query.length=1*")
    at = page.evaluate("""() => {
      const s = document.querySelectorAll('[data-target="move-query"]')[1].getBoundingClientRect();
      const f = document.getElementById("move-query").getBoundingClientRect();
      return { step: [s.top, s.bottom], figure: f.top, screen: innerHeight };
    }""")
    # the step tapped and the figure's top both on the screen (the figure was far above)
    assert at["step"][0] >= 0 and at["step"][1] <= at["screen"], at
    assert -1 <= at["figure"] < at["screen"] / 2, at
    # the next step is one tap away without scrolling back
    page.locator('[data-target="move-query"]').nth(2).click()
    page.wait_for_url("**move-query.length=4*")
    # away from the figure, the list goes back into the page
    page.evaluate("scrollTo(0, 0)")
    page.wait_for_function("() => !document.querySelector('.mh-howto.is-docked')")


def test_a_step_brings_into_view_the_part_of_its_figure_it_changed(new_page, base_url):
    # "Many heads": each step changes Figure 1 (the map), not the shares table between it and
    # the list, which is the same for every step; drawn from the build's answers before Python
    page = open_before_python(
        new_page(viewport={"width": 1280, "height": 800}), f"{base_url}many-heads.html"
    )
    steps = page.locator('.mh-howto [data-target="three-heads"]')
    for i, step in ((1, "scores"), (4, "values")):
        steps.nth(i).scroll_into_view_if_needed()
        steps.nth(i).click()
        page.wait_for_url(f"**three-heads.step={step}*")
        page.wait_for_function(
            f"() => ({IN_VIEW})(document.querySelector('#three-heads [data-body]'))"
            " && document.querySelector('.mh-howto.is-docked')"
        )
        # the tapped step on the screen too, for the next one
        assert steps.nth(i).evaluate(IN_VIEW)
