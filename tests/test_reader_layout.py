"""The reader's experience, measured in Chromium at a laptop's, a tablet's and a phone's width:
room for figures, nothing cut off or wider than the screen, the selected column in view, the map
on a phone's first screen, no layout shift while Python starts, tap targets, history and state
links, and what quizzes and code cells say.

The tests that only read a chapter share its page (conftest's ready_page): one opened at 1280 x
900 and resized for the other widths, one on a phone with touch, one on a phone without, each
recording at its opening the layout shift while Python started. A test that taps, types or
keeps an answer takes the chapter's page last (changes=True: it is closed after it), or opens
one of its own."""

import re

import pytest
from conftest import FRAMES_JS, open_before_python, open_ready, resized
from playwright.sync_api import expect

from toymodels.one_character import figure as fig

pytestmark = pytest.mark.browser

CHAPTERS = ["one-head", "many-heads", "split-attend", "real-heads", "one-character"]
WIDTHS = {1280: 900, 768: 1024, 360: 780}
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
TOUCH = {"has_touch": True, "is_mobile": True}

# the boxes the page lets scroll sideways; anything else wider than the screen is a fault
SCROLLS = """(el) => {
  for (let a = el.parentElement; a; a = a.parentElement) {
    const o = getComputedStyle(a).overflowX;
    if (o === "auto" || o === "scroll" || o === "hidden" || o === "clip") return a;
  }
  return null;
}"""


CLS = """window.__cls = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (!e.hadRecentInput) window.__cls += e.value;
}).observe({ type: "layout-shift", buffered: true });"""


def shift_at_ready(page):
    """The layout shift of the page's opening, two frames after Python is ready."""
    page.evaluate(FRAMES_JS)
    page.evaluate("window.__clsAtReady = window.__cls")


def chapter(ready_page, slug, opened_at=DESKTOP, size=None, **options):
    """SLUG's shared page, opened at the viewport OPENED_AT with OPTIONS, shown at SIZE."""
    page = ready_page(
        f"{slug}.html", init_script=CLS, prepare=shift_at_ready, viewport=opened_at, **options
    )
    if size and size != opened_at:
        resized(page, size["width"], size["height"])
    return page


def opened(new_page, base_url, slug, width, height, **options):
    page = new_page(viewport={"width": width, "height": height}, **options)
    return open_ready(page, f"{base_url}{slug}.html")


def test_prose_keeps_a_readable_measure_while_figures_take_the_page(ready_page):
    page = chapter(ready_page, "many-heads")
    # the longest line of the chapter's first long paragraph, in characters
    longest = page.evaluate("""() => {
      const p = [...document.querySelectorAll(".chapter > p")]
        .find((p) => p.textContent.length > 400);
      const lines = new Map();
      const walk = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);
      const range = document.createRange();
      for (let node; (node = walk.nextNode()); ) {
        for (let i = 0; i < node.length; i++) {
          range.setStart(node, i); range.setEnd(node, i + 1);
          const r = range.getClientRects()[0];
          if (r) lines.set(Math.round(r.top / 4), (lines.get(Math.round(r.top / 4)) || 0) + 1);
        }
      }
      return Math.max(...lines.values());
    }""")
    assert 60 <= longest <= 80, longest
    figure = page.locator("#three-heads").bounding_box()
    prose = page.locator(".chapter > p").first.bounding_box()
    assert figure["width"] >= 1000 and figure["width"] > prose["width"] + 300, (figure, prose)


def test_the_three_heads_stand_on_one_row_at_1280(ready_page):
    page = chapter(ready_page, "many-heads")
    boxes = [page.locator("#three-heads .mh-head").nth(i).bounding_box() for i in range(3)]
    grids = [page.locator("#three-heads .mh-grid").nth(i).bounding_box() for i in range(3)]
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"], boxes
        assert a["x"] + a["width"] <= b["x"], boxes
    for g in grids:
        assert g["x"] + g["width"] <= 1280, grids


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("slug", CHAPTERS)
def test_nothing_is_wider_than_the_screen_or_clipped(ready_page, slug, width):
    page = chapter(ready_page, slug, size={"width": width, "height": WIDTHS[width]})
    page.evaluate("""() => {
      window.__shut = [...document.querySelectorAll("details:not([open])")];
      window.__shut.forEach((d) => { d.open = true; });
    }""")
    # two frames drawn (page.evaluate awaits the promise; wait_for_function would take it for true)
    page.evaluate(FRAMES_JS)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    # every element reaching past the screen's edge sits in a box that scrolls (or hides it on
    # purpose: the screen-reader text), and that box itself is on the screen
    wide = page.evaluate(
        f"""() => {{
      const scrolls = {SCROLLS};
      const out = [];
      for (const el of document.querySelectorAll("main *")) {{
        const r = el.getBoundingClientRect();
        if (!r.width || (r.right <= innerWidth + 1 && r.left >= -1)) continue;
        const box = scrolls(el);
        const b = box && box.getBoundingClientRect();
        if (!box || b.right > innerWidth + 1 || b.left < -1) out.push(el.outerHTML.slice(0, 80));
      }}
      return out.slice(0, 5);
    }}"""
    )
    assert wide == []
    # a formula too wide for its column scrolls, and shows it does (a faded edge) once on screen
    clipped = failing_on_screen(
        page,
        "math",
        """(m) => {
      if (m.scrollWidth <= m.clientWidth + 1 || !m.clientWidth) return true;
      const o = getComputedStyle(m).overflowX;
      const shows = m.classList.contains("mh-more-right") || m.classList.contains("mh-more-left");
      return (o === "auto" || o === "scroll") && shows;
    }""",
        "(m) => m.textContent.slice(0, 40)",
    )
    assert clipped == []
    page.evaluate("() => window.__shut.forEach((d) => { d.open = false; })")  # as it was lent


def test_no_page_of_the_site_is_wider_than_a_phone(new_page, base_url, site):
    # every page the build writes (chapters, the author guide, the training report) and an
    # embed of each chapter, as a phone shows it before Python is ready: a page wider than the
    # screen pans sideways; and its tap targets, the embeds' too, keep the site's least size.
    # An embed is one of its chapter's figures in the embed's frame: the chapter's page holds
    # every figure at this width, so one embed a chapter checks the frame.
    page = new_page(viewport=PHONE, **TOUCH)
    paths = sorted(p.name for p in site.glob("*.html"))
    embeds = [sorted(folder.glob("*.html"))[0] for folder in sorted((site / "embed").iterdir())]
    paths += [p.relative_to(site).as_posix() for p in embeds]
    assert len(embeds) > 7 and "training-results.html" in paths
    wide, small = {}, {}
    for path in paths:
        open_before_python(page, base_url + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            wide[path] = width
        if targets := page.evaluate(SMALL_TARGETS):
            small[path] = targets
    assert wide == {}
    assert small == {}


def test_on_a_phone_a_row_of_tokens_shows_its_pressed_one_when_drawn(new_page, base_url):
    # "Why a head looks there", Figure 1's key characters before Python: a row scrolled until its
    # pressed character is out of view brings it back when the row is laid out again (a redraw
    # or, here, a resize), as a map brings back its selected column; one partly in view (as a
    # tapped one is) stays where it is
    page = open_before_python(
        new_page(viewport={"width": 360, "height": 740}, **TOUCH),
        f"{base_url}why-a-head-looks-there.html",
    )
    row = page.locator("#why-look .mh-words")
    row.scroll_into_view_if_needed()
    in_view = """(r) => {
      const b = r.getBoundingClientRect();
      const c = r.querySelector(":scope > [aria-pressed=true]").getBoundingClientRect();
      return [c.right > b.left && c.left < b.right, Math.round(r.scrollLeft)];
    }"""
    assert row.evaluate("(r) => r.scrollWidth > 2 * r.clientWidth")
    row.evaluate("(r) => { r.scrollLeft = r.scrollWidth; }")
    page.evaluate(FRAMES_JS)
    assert row.evaluate(in_view)[0] is False
    resized(page, 375, 740)
    page.wait_for_function(f"() => ({in_view})(document.querySelector('#why-look .mh-words'))[0]")
    # partly in view: left as it is
    at = row.evaluate(
        """(r) => {
          const c = r.querySelector(":scope > [aria-pressed=true]");
          r.scrollLeft = c.offsetLeft - r.offsetLeft + c.offsetWidth / 2 - r.clientWidth;
          return Math.round(r.scrollLeft);
        }"""
    )
    resized(page, 360, 740)
    assert row.evaluate(in_view) == [True, at]


def test_on_a_phone_heads_that_copy_offers_its_texts_and_layers_compactly(new_page, base_url):
    # before Python: the controls take their room from the first paint
    page = open_before_python(new_page(viewport=PHONE, **TOUCH), f"{base_url}heads-that-copy.html")
    texts = page.locator("#copy-layer .hc-texts")
    # one button for the ten runs of random tokens, in a row a third as wide as before (4,737
    # px), and "Your own text" in view at its start (the 17th button, at the end, before)
    assert texts.locator("button").count() == 8
    assert texts.evaluate("(t) => t.scrollWidth") < 4737 / 3
    own = texts.locator("button").first
    assert own.inner_text() == "Your own text"
    assert own.evaluate(
        "(b) => b.getBoundingClientRect().right <= b.parentElement.getBoundingClientRect().right"
    )
    # the layer stepper (◀, the slider and its value, ▶) on one line (four before)
    tops = page.locator("#copy-layer .hc-layer").evaluate(
        """(l) => [...l.querySelectorAll("button, input, output, label")]
          .map((e) => e.getBoundingClientRect()).map((r) => Math.round(r.top + r.height / 2))"""
    )
    assert len(tops) == 5 and max(tops) - min(tops) <= 2, tops


def test_on_a_phone_a_table_wider_than_its_box_keeps_its_caption_in_the_box(
    new_page, base_url, tmp_path
):
    # What a head does 3's table of patches, as Python draws it (a tiny llama's file opened as
    # the reader's, tests/support/tinygguf.py), is wider than a phone's figure and scrolls
    # sideways in its box; its caption wraps at the box's width, with none of it cut off
    pytest.importorskip("gguf", reason="the file is written with the gguf package")
    from support import tinygguf

    from toymodels.models import ownfile
    from toymodels.page.figure import check
    from toymodels.what_a_head_does import own

    path = tinygguf.write_llama(tmp_path / "tiny.gguf")
    ownfile.open_source(ownfile.PathSource(path))
    try:
        while not ownfile.load_step()["ready"]:
            pass
        state = {"clean": "The cat sat on the mat", "corrupt": "The cat sat on the hat"}
        state |= {"a": "cat", "b": "sat", "patched": "L1H2|L2"}
        answer = check(own.render(state))
        while answer.get("more"):
            answer = check(own.render(answer["state"]))
    finally:
        ownfile.close()
    table = re.search(
        r'<div class="hc-scroll"><table class="mh-matrix wh-patches">.*?</div>',
        answer["html"],
        re.S,
    )[0]
    page = open_before_python(new_page(viewport=PHONE, **TOUCH), f"{base_url}what-a-head-does.html")
    got = page.locator("#what-own .mh-body").evaluate(
        """(body, table) => {
          body.insertAdjacentHTML("beforeend", table);
          const box = body.lastElementChild, t = box.querySelector("table");
          const width = (e) => e.getBoundingClientRect().width;
          return [width(box), width(t), width(t.querySelector("caption"))];
        }""",
        table,
    )
    box, wide, caption = got
    assert wide > box + 20, got  # the table does scroll sideways
    assert caption <= box + 0.5, got


# each "Guess first"'s height as the page is parsed, before its script runs (module scripts
# run after the document reaches "interactive")
GUESS_AT_PARSE = """document.addEventListener("readystatechange", () => {
  if (document.readyState !== "interactive") return;
  window.__guessAtParse = [...document.querySelectorAll(".mh-guess")]
    .map((g) => Math.round(g.getBoundingClientRect().height));
});"""


def test_a_guess_first_takes_its_room_before_the_script_runs(new_page, base_url, site):
    page = new_page(viewport={"width": 1280, "height": 900})
    page.add_init_script(GUESS_AT_PARSE)
    slugs = [p.stem for p in sorted(site.glob("*.html"))]
    grew, seen = {}, 0
    for slug in slugs:
        open_before_python(page, f"{base_url}{slug}.html")
        page.evaluate(FRAMES_JS)
        before = page.evaluate("window.__guessAtParse")
        after = page.locator(".mh-guess").evaluate_all(
            "(gs) => gs.map((g) => Math.round(g.getBoundingClientRect().height))"
        )
        seen += len(after)
        if before != after:
            grew[slug] = (before, after)
    assert grew == {} and seen >= 6


BLOCKS = """async () => {
  const frame = () => new Promise((ok) => requestAnimationFrame(ok));
  const blocks = [...document.querySelectorAll(".chapter > *")];
  // every block that reaches into the screen is laid out (up to 60 frames a screen)
  const shown = () => blocks.every((e) => {
    const r = e.getBoundingClientRect();
    const away = !r.height || r.bottom <= 0 || r.top >= innerHeight;
    return away || e.checkVisibility({ contentVisibilityAuto: true });
  });
  for (let y = 0; y < document.documentElement.scrollHeight; y += innerHeight / 2) {
    scrollTo(0, y);
    for (let i = 0; i < 60; i++) { await frame(); if (shown()) break; }
  }
  scrollTo(0, 0);
  await frame();
  return blocks.map((e) => {
    const r = e.getBoundingClientRect();
    return [e.tagName, e.className, Math.round(r.top + scrollY), Math.round(r.height)];
  });
}"""


@pytest.mark.parametrize("width", [1280, 360])
def test_slots_laid_out_as_they_come_near_sit_where_they_would_have(ready_page, width):
    # content-visibility keeps a block's children's margins inside it: the page must not move
    page = chapter(ready_page, "one-character", size={"width": width, "height": WIDTHS[width]})
    assert (
        page.evaluate(
            "[...document.querySelectorAll('.chapter > *')].filter((e) =>"
            " getComputedStyle(e).contentVisibility === 'auto').length"
        )
        >= 9
    )
    late = page.evaluate(BLOCKS)
    page.evaluate(
        "document.querySelectorAll('.chapter > *')"
        ".forEach((e) => e.style.setProperty('content-visibility', 'visible', 'important'))"
    )
    assert page.evaluate(BLOCKS) == late
    page.evaluate(
        """document.querySelectorAll('.chapter > *').forEach((e) => {
          e.style.removeProperty('content-visibility');
          if (!e.getAttribute('style')) e.removeAttribute('style');
        })"""
    )  # as it was lent


def failing_on_screen(page, selector, ok, name):
    """NAME of each element matching SELECTOR for which OK is false once it is on the screen, as a
    reader scrolling to it sees it: a block off the screen (the character model's sections) is
    laid out, and its boxes set, only as it comes near (charmodel.css, static/scrollers.js). Each is
    given up to 60 frames to become OK."""
    return page.evaluate(
        f"""async () => {{
      const ok = {ok}, name = {name}, out = [];
      const frame = () => new Promise((r) => requestAnimationFrame(r));
      for (const el of document.querySelectorAll({selector!r})) {{
        el.scrollIntoView({{ block: "center" }});
        let frames = 0;
        while (!ok(el) && frames++ < 60) await frame();
        if (!ok(el)) out.push(name(el));
      }}
      return out;
    }}"""
    )


def selected_columns_outside(page):
    """The selected column of every map and table that scrolls sideways, where it is not in its
    box's visible part once the box is on the screen."""
    return failing_on_screen(
        page,
        ".mh-head, .mh-slot, .rh-scroll, .cm-scroll",
        """(box) => {
        if (box.scrollWidth <= box.clientWidth + 1) return true;
        let cell = box.querySelector("thead th.sel, td.sel");
        const row = box.querySelector("tbody tr.sel");
        const i = row ? [...row.parentElement.children].indexOf(row) : -1;
        if (!cell && row) cell = row.querySelectorAll("td")[i];
        if (!cell) return true;
        const b = box.getBoundingClientRect(), c = cell.getBoundingClientRect();
        return c.left >= b.left - 1 && c.right <= b.right + 1;
    }""",
        "(box) => box.className",
    )


def show_scores(page):
    page.locator(".mh-step-link", has_text="Scores.").click()
    page.wait_for_selector(".mh-step-link[aria-current=step]:has-text('Scores.')")


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_selected_column_is_in_view(ready_page, width):
    size = {"width": width, "height": WIDTHS[width]}
    # many heads opened at this width and its scores step drawn there (a page of its own for
    # each width: its figure's state is not the chapter's first)
    page = ready_page("many-heads.html", prepare=show_scores, viewport=size)
    assert selected_columns_outside(page) == []
    page = chapter(ready_page, "one-character", size=size)
    assert selected_columns_outside(page) == []


@pytest.mark.parametrize(
    ("slug", "fid", "map_"),
    [
        ("many-heads", "three-heads", ".mh-grid"),
        ("split-attend", "split-attend", "table"),
        ("real-heads", "real-heads", ".rh-heads"),
        ("one-character", "char-model", ".mh-svg"),
    ],
)
def test_on_a_phone_the_map_is_on_the_figures_first_screen(ready_page, slug, fid, map_):
    page = chapter(ready_page, slug, opened_at=PHONE, **TOUCH)
    page.locator(f"#{fid}").evaluate("(f) => f.scrollIntoView({ block: 'start' })")
    top = page.locator(f"#{fid} {map_}").first.evaluate("(m) => m.getBoundingClientRect().top")
    assert 0 <= top < PHONE["height"] - 100, top


@pytest.mark.parametrize(
    ("viewport", "device"), [(DESKTOP, {}), (PHONE, TOUCH)], ids=["1280", "phone"]
)
@pytest.mark.parametrize("slug", CHAPTERS)
def test_no_layout_shift_while_python_starts(ready_page, slug, viewport, device):
    # recorded as the shared page opened (shift_at_ready): two frames after Python was ready;
    # the phone's is the page the tap-target and first-screen tests measure
    page = chapter(ready_page, slug, opened_at=viewport, **device)
    assert page.evaluate("window.__clsAtReady") <= 0.05
    # the status note has gone from the screen, its news told
    assert page.locator("[data-pystatus]").evaluate("(b) => b.getBoundingClientRect().width") <= 1


# every target a reader taps smaller than 24 px either way (WCAG 2.5.8; site.css gives 44 px on a
# touch screen where the row has room)
SMALL_TARGETS = """() => {
  const out = [];
  const targets = "button, select, summary, input:not([type=radio]):not([type=checkbox]), "
    + "label:has(> input[type=radio]), label:has(> input[type=checkbox]), [data-key], .pager a";
  for (const el of document.querySelectorAll(targets)) {
    const r = el.getBoundingClientRect();
    if (!r.width || getComputedStyle(el).visibility === "hidden" || el.closest(".sr")) continue;
    const what = `${el.outerHTML.slice(0, 60)} ${r.width}x${r.height}`;
    if (r.width < 24 || r.height < 24) out.push(what);
  }
  return out.slice(0, 8);
}"""


@pytest.mark.parametrize("slug", CHAPTERS)
def test_tap_targets_are_at_least_24px(ready_page, slug):
    page = chapter(ready_page, slug, opened_at=PHONE, **TOUCH)
    assert page.evaluate(SMALL_TARGETS) == []


def test_back_undoes_a_figure_visit_in_one_press_and_stays_in_the_chapter(new_page, base_url):
    page = opened(new_page, base_url, "heads-that-copy", 1280, 900)
    steps = page.evaluate("history.length")
    layer = page.locator("#copy-layer [data-body] button[data-key=token]")
    layer.nth(2).click()
    page.wait_for_url(re.compile(r"copy-layer\.token=2"))
    layer.nth(4).click()  # the same visit: the URL follows, history does not grow
    page.wait_for_url(re.compile(r"copy-layer\.token=4"))
    # another figure: a visit of its own
    page.locator('#copy-map [data-key="head"][data-value="L1H2"]').click()
    page.wait_for_url(re.compile(r"copy-map\.head=L1H2"))
    assert page.evaluate("history.length") == steps + 2
    page.go_back()  # leaves the map as it was, the first figure as the reader left it
    page.wait_for_url(re.compile(r"heads-that-copy\.html\?copy-layer\.token=4$"))
    page.wait_for_selector('#copy-map section.hc-opened[aria-label^="L19"]')
    page.go_back()  # and the first figure's visit, in one press
    page.wait_for_url(re.compile(r"heads-that-copy\.html$"))
    expect(layer.nth(4)).to_have_attribute("aria-pressed", "false")


# the frames painted since the last redraw (from the click before it) at each history.pushState
URL_AT_FRAME = """
window.pushedAt = [];
let frames = null;
document.addEventListener("click", () => { frames = null; }, true);
document.addEventListener("mh:drawn", () => {
  frames = 0;
  const tick = () => { if (frames !== null && ++frames < 5) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
}, true);
const push = history.pushState.bind(history);
history.pushState = (...args) => { window.pushedAt.push(frames); return push(...args); };
"""


def test_a_taps_url_is_written_after_its_paint_and_a_visit_is_one_step_back(new_page, base_url):
    page = new_page(viewport={"width": 1280, "height": 900})
    page.add_init_script(URL_AT_FRAME)
    open_ready(page, f"{base_url}many-heads.html")
    words = page.locator("#three-heads .mh-word")
    for i in (1, 2, 3):  # each tap once the one before is drawn, as fast as that
        words.nth(i).click()
        expect(words.nth(i)).to_have_attribute("aria-pressed", "true")
    page.wait_for_url(re.compile(r"three-heads\.word=3$"))
    # never in the redraw itself: after the frame that painted it; one step for the visit
    pushed = page.evaluate("window.pushedAt")
    assert len(pushed) == 1 and all(f is not None and f >= 1 for f in pushed), pushed
    page.go_back()
    page.wait_for_url(re.compile(r"many-heads\.html$"))
    expect(words.nth(7)).to_have_attribute("aria-pressed", "true")
    words.nth(5).click()  # after Back, a new visit
    page.wait_for_url(re.compile(r"three-heads\.word=5$"))
    assert len(page.evaluate("window.pushedAt")) == 2


def test_a_state_link_opens_at_its_figure_before_the_script_and_the_script_leaves_it(
    new_page, base_url
):
    """A link holding a figure's state opens at that figure by the browser's own anchor scroll
    (templates/early.js names the figure as the link's place), while main.js is still held
    back; a scroll by the reader then is where main.js leaves the page (it jumped to the
    figure 0.15-1.3 s after the page showed, undoing it)."""
    page = new_page(viewport={"width": 1280, "height": 900})
    held = []
    page.route(re.compile(r".*/static/main\.[0-9a-f]+\.js$"), lambda route: held.append(route))
    page.goto(f"{base_url}many-heads.html?three-heads.word=6", wait_until="domcontentloaded")
    figure = page.locator("#three-heads")
    top = figure.evaluate("(f) => f.getBoundingClientRect().top")
    assert page.evaluate("scrollY") > 500 and -2 <= top < 100, top
    assert page.url.endswith("?three-heads.word=6#three-heads")
    assert page.locator("html.js").count() == 0 and held  # main.js asked for, not run
    # the reader scrolls on: what is then at the top of the screen stays there once main.js runs
    page.evaluate("() => window.scrollBy({ top: 400, behavior: 'instant' })")
    place = """(at) => {
      const prose = [...document.querySelectorAll("h2, h3, p")].filter(
        (e) => !e.closest("figure, [data-slot-of]"));
      at ??= prose.findIndex((e) => e.getBoundingClientRect().top > 0);
      return [at, prose[at].getBoundingClientRect().top];
    }"""
    at, before = page.evaluate(place, None)
    held[0].continue_()
    page.wait_for_selector("html.py-ready", timeout=90_000)
    assert abs(page.evaluate(place, at)[1] - before) <= 2, (before, page.evaluate(place, at))
    assert page.locator(".mh-shares caption").inner_text() == "Shares for “kept” in each head"


def test_a_change_far_away_is_said_beside_its_control(new_page, base_url):
    page = opened(new_page, base_url, "one-character", 1280, 900)
    slot = page.locator("[data-slot=ablate]")
    slot.scroll_into_view_if_needed()
    slot.locator(".cm-toggle").first.click()
    effect = slot.locator(".mh-effect")
    effect.wait_for()
    assert re.match(r"Figure 1 \(above\) now: After “.” the model .* expects", effect.inner_text())
    effect.get_by_role("button", name="Show it ↑").click()
    page.wait_for_function(
        "() => { const r = document.getElementById('char-model').getBoundingClientRect();"
        " return r.top < innerHeight && r.bottom > 0; }"
    )


def test_write_on_shows_what_it_wrote(ready_page):
    page = chapter(ready_page, "one-character", changes=True)
    box = page.locator("#char-model input[name=text]")
    before = box.input_value()
    page.locator("#char-model").get_by_role("button", name="Write on").click()
    wrote = page.locator("#char-model .mh-wrote")
    wrote.wait_for()
    after = box.input_value()
    assert after.startswith(before) and len(after) > len(before)
    assert wrote.inner_text() == f"Written on: “{after[len(before) :]}”"
    assert box.evaluate("(b) => b.scrollLeft + b.clientWidth >= b.scrollWidth - 1")
    # the note goes with the reader's next action, though a character's tap leaves the markup
    # of the figure's body, where the note is, as it was (morph.js leaves that area alone)
    body = [fig.render({"text": after, "character": c})["html"] for c in ("", "2")]
    assert body[0] == body[1]
    page.locator('[data-slot-of="char-model"][data-slot="numbers"] .cm-ch').nth(2).click()
    page.wait_for_url(re.compile(r"char-model\.character=2\b"))
    expect(wrote).to_have_count(0)


def test_a_guess_is_shown_beside_the_answer(ready_page):
    page = chapter(ready_page, "many-heads", changes=True)
    guess = page.locator(".mh-guess")
    guess.locator("label").first.click()
    guess.get_by_role("button", name="Commit my guess").click()
    assert guess.locator("label.is-yours").inner_text().startswith("A bigger head")
    assert guess.locator("label.is-answer").inner_text().startswith("One softmax")
    assert guess.locator("[data-guess-answer]").inner_text().startswith("The answer: One softmax")
    assert guess.locator("input[type=radio]").count() == 3  # the options stay, fixed
    assert guess.locator("input[type=radio]:disabled").count() == 3


def test_check_feedback_says_right_once(ready_page):
    for slug in ("author-guide", "one-head"):
        page = chapter(ready_page, slug, changes=slug == "one-head")
        html = page.content()
        assert not re.search(r"(?i)right\.(</strong>)? right", html)  # the author's "Right." too
        assert not re.search(r"(Right\.|Not quite\.)</strong> [a-z]", html)
    check = page.locator(".mh-check").first
    for i in range(check.locator(".mh-option").count()):
        option = check.locator(".mh-option").nth(i)
        if option.locator(".mh-feedback.right").count():
            option.locator("label").click()
            break
    check.get_by_role("button", name="Check").click()
    text = check.locator(".mh-feedback.right").inner_text()
    assert text.startswith("Right. ") and not text.startswith("Right. Right")


def test_code_cells_scroll_sideways_and_drop_the_keyboard_hint_on_touch(ready_page):
    page = chapter(ready_page, "split-attend", opened_at=PHONE, **TOUCH)
    box = page.locator("[data-cell] textarea").first
    assert box.get_attribute("wrap") == "off"
    assert box.evaluate("(b) => b.scrollHeight <= b.clientHeight + 1")  # the page scrolls, not it
    assert not page.locator(".mh-kbd-hint").first.is_visible()


LOOP = "import js\njs.console.log('looping')\nwhile True:\n    pass"


def test_after_stop_the_next_cell_asks_before_running_the_stopped_one(ready_page):
    page = chapter(ready_page, "split-attend", changes=True)
    first, second = page.locator("[data-cell]").nth(0), page.locator("[data-cell]").nth(1)
    first.locator("textarea").fill(LOOP)
    with page.context.expect_console_message(lambda m: m.text == "looping"):
        first.get_by_role("button", name="Run").click()
    first.get_by_role("button", name="Stop").click()
    first.locator("pre.quiet:has-text('Stopped.')").wait_for()
    page.wait_for_function("() => !document.querySelector('[data-cell] [data-run]').disabled")
    second.get_by_role("button", name="Run").click()
    note = second.locator(".mh-cell-note")
    note.wait_for()
    assert "cell 1 was stopped" in note.inner_text()
    second.get_by_role("button", name="Skip cell 1 and run").click()
    second.locator("pre:not(.quiet)").first.wait_for(timeout=90_000)
