"""Trust at first contact: the layout a reader meets on a phone (390x844, touch) and on laptops
(1280x800, 1920x1080). The character model's sections fit their column and open at their start,
an embedded figure takes its frame's width, a large screen's width goes to the figures that have
more to show, every tap target is 44 px high on a phone, the pictures' labels stay legible, the
loading note covers no text, and every page has a description and an outline without gaps.

The tests that only read a chapter (or take out what they put in) share its page (conftest's
ready_page): on a phone, one page for each chapter; on a laptop, one page resized to a large
screen's width."""

import re
from html.parser import HTMLParser

import pytest
from conftest import FRAMES_JS, hold_python, open_ready, resized

from sitebuild.pipeline.chapters import read

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
LAPTOP = {"viewport": {"width": 1280, "height": 800}}
WIDE = {"viewport": {"width": 1920, "height": 1080}}
CHAPTERS = ["one-head", "many-heads", "split-attend", "real-heads", "one-character"]
CHAPTERS += ["heads-that-copy", "what-a-head-does", "author-guide"]

# bring ELEMENT to the middle of the screen and wait until the browser has laid it out (the
# character model's sections are laid out only near the screen: charmodel.css)
SHOWN = """async (el) => {
  el.scrollIntoView({ block: "center" });
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  const laidOut = () => el.checkVisibility({ contentVisibilityAuto: true });
  for (let i = 0; i < 60 && !laidOut(); i++) await frame();
  await frame(); await frame();
}"""


def on_phone(ready_page, slug):
    return ready_page(f"{slug}.html", **PHONE)


@pytest.mark.parametrize("screen", [PHONE, LAPTOP, WIDE], ids=["phone", "1280", "1920"])
@pytest.mark.parametrize("section", ["numbers", "scores", "weights"])
def test_the_characters_sections_fit_and_open_at_their_start(ready_page, screen, section):
    # a text as long as a reader's after a press of "Write on"
    text = "the queen. the queen said that the queen would see her"
    # a phone's page, or the laptop's, resized to the large screen's width
    opened = PHONE if screen is PHONE else LAPTOP
    page = ready_page(f"one-character.html?char-model.text={text}", **opened)
    if screen is WIDE:
        resized(page, **WIDE["viewport"])
    page.wait_for_function(
        "(n) => document.querySelectorAll('[data-slot=weights] th').length > n", arg=len(text)
    )
    slot = page.locator(f"[data-slot-of=char-model][data-slot={section}]")
    slot.evaluate(SHOWN)
    out = slot.evaluate("""(slot) => {
      const out = [], s = slot.getBoundingClientRect();
      const name = (el) => `${el.tagName}.${el.className}`;
      for (const el of [slot, ...slot.querySelectorAll("*")]) {
        if (el.closest(".sr")) continue; // hidden on purpose, clipped to 1 px
        if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible")
          out.push(`${name(el)} scrolls: ${el.scrollWidth} in ${el.clientWidth}`);
        if (el.scrollLeft) out.push(`${name(el)} opens ${el.scrollLeft} px along`);
      }
      // the head picker, the characters, the sentence and the numbers all inside the column
      for (const el of slot.querySelectorAll(":scope > *, td, th, button")) {
        const r = el.getBoundingClientRect();
        if (r.width && (r.left < s.left - 1 || r.right > s.right + 1))
          out.push(`${name(el)} cut: ${r.left}-${r.right} in ${s.left}-${s.right}`);
      }
      if (s.right > innerWidth) out.push(`the slot reaches ${s.right}`);
      return out;
    }""")
    assert out == []


# a table in a box of its own, inside a slot: its selected column far to the right, its last
# header holding a name for screen readers (placed absolutely, as .sr is)
INNER_TABLE = """(slot) => {
  const cells = Array.from({ length: 40 }, (_, i) =>
    `<th${i === 39 ? ' class="sel"' : ""}>x<span class="sr">character ${i}</span></th>`);
  slot.insertAdjacentHTML("beforeend", `<div class="cm-scroll" data-test-inner>
    <table><thead><tr>${cells.join("")}</tr></thead></table></div>`);
}"""


# what the two tests below put in the slot, taken out (the page is shared)
TAKE_OUT = """(s) => {
  s.querySelectorAll("[data-test-inner], [data-test-wide]").forEach((el) => el.remove());
  s.dispatchEvent(new Event("mh:slotdrawn", { bubbles: true }));
}"""


def test_a_screen_reader_name_far_along_a_table_does_not_widen_its_slot(ready_page):
    page = on_phone(ready_page, "one-character")
    slot = page.locator("[data-slot-of=char-model][data-slot=weights]")
    slot.evaluate(SHOWN)
    slot.evaluate(INNER_TABLE)
    slot.evaluate("(s) => s.dispatchEvent(new Event('mh:slotdrawn', { bubbles: true }))")
    page.evaluate(FRAMES_JS)
    inner = slot.locator("[data-test-inner]")
    assert inner.evaluate("(b) => b.scrollWidth > b.clientWidth + 100")  # it scrolls, itself
    assert slot.evaluate("(s) => s.scrollWidth <= s.clientWidth + 1 && s.scrollLeft === 0")
    slot.evaluate(TAKE_OUT)


def test_a_box_is_not_scrolled_for_the_column_of_a_box_inside_it(ready_page):
    page = on_phone(ready_page, "one-character")
    slot = page.locator("[data-slot-of=char-model][data-slot=weights]")
    slot.evaluate(SHOWN)
    slot.evaluate(INNER_TABLE)
    # and something wide of the slot's own, so that the slot scrolls too
    slot.evaluate(
        "(s) => { const d = document.createElement('div'); d.style.width = '900px';"
        " d.dataset.testWide = ''; s.prepend(d); }"
    )
    slot.evaluate("(s) => s.dispatchEvent(new Event('mh:slotdrawn', { bubbles: true }))")
    inner = slot.locator("[data-test-inner]")
    # the inner box shows its selected column; the slot stays at its start, its text in view
    page.wait_for_function("() => document.querySelector('[data-test-inner]').scrollLeft > 100")
    page.evaluate(FRAMES_JS)
    assert inner.evaluate("(b) => b.scrollLeft") > 100
    assert slot.evaluate("(s) => s.scrollWidth > s.clientWidth + 100")
    assert slot.evaluate("(s) => s.scrollLeft") == 0
    slot.evaluate(TAKE_OUT)


def test_an_embedded_figure_takes_its_frames_width(new_page, base_url):
    # a course page's frame, 900 px wide: the three heads side by side, not the prose's 640 px
    page = new_page(viewport={"width": 900, "height": 800})
    open_ready(page, f"{base_url}embed/many-heads/three-heads.html")
    assert page.locator(".mh-figure").bounding_box()["width"] >= 860
    heads = [page.locator(".mh-head").nth(i).bounding_box() for i in range(3)]
    assert len({round(h["y"]) for h in heads}) == 1, heads


def test_a_large_screen_shows_every_key_value_group_of_a_layer_at_once(new_page, base_url):
    page = open_ready(new_page(**WIDE), f"{base_url}heads-that-copy.html")
    figure = page.locator("#copy-layer")
    assert figure.bounding_box()["width"] > 1400  # not 1,104 px in a 1,920 px screen
    groups = [figure.locator(".hc-group").nth(i).bounding_box() for i in range(3)]
    assert len({round(g["y"]) for g in groups}) == 1, groups
    # the whole figure, its tokens and the three groups, on one screen
    figure.evaluate("(f) => f.scrollIntoView({ block: 'start' })")
    assert figure.bounding_box()["height"] <= WIDE["viewport"]["height"]


# every target a finger aims at on the page, and where a tap 21 px above or below its middle
# lands: on it, or (for a small circle with a larger hit area) on what it drew there
TAPS = """async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  const targets = "button, select, summary, "
    + "input:not([type=radio]):not([type=checkbox]):not([type=hidden]), "
    + "label:has(> input[type=radio]), label:has(> input[type=checkbox]), [data-key], .pager a";
  const out = [];
  for (const el of document.querySelectorAll(targets)) {
    // the results' own controls are styled with the results; a map's rows repeat its words
    if (el.closest(".mh-results, .sr, [hidden]") || el.matches(".mh-grid tr")) continue;
    if (!el.getClientRects().length || getComputedStyle(el).visibility === "hidden") continue;
    el.scrollIntoView({ block: "center", inline: "center" });
    const laidOut = () => el.checkVisibility({ contentVisibilityAuto: true });
    for (let i = 0; i < 60 && !laidOut(); i++) await frame();
    const r = el.getBoundingClientRect();
    if (!r.width) continue;
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const hits = [y - 21, y + 21].map((at) => document.elementFromPoint(x, at));
    if (!hits.every((h) => h && (h === el || el.contains(h))))
      out.push(`${el.outerHTML.slice(0, 70)} ${Math.round(r.width)}x${Math.round(r.height)}`);
  }
  return out.slice(0, 8);
}"""


@pytest.mark.parametrize("slug", CHAPTERS)
def test_on_a_phone_every_tap_target_is_44px_high(ready_page, slug):
    page = on_phone(ready_page, slug)
    page.evaluate("""() => {
      window.__shut = [...document.querySelectorAll("details:not([open])")];
      window.__shut.forEach((d) => { d.open = true; });
    }""")
    assert page.evaluate(TAPS) == []
    page.evaluate("() => window.__shut.forEach((d) => { d.open = false; })")  # as it was lent


def test_the_desktop_keeps_its_compact_controls(new_page, base_url):
    page = open_ready(new_page(**LAPTOP), f"{base_url}real-heads.html")
    assert page.locator(".mh-download-button").first.bounding_box()["height"] < 36
    assert page.locator(".rh-step").first.bounding_box()["height"] < 36
    assert page.locator(".rh-token").first.bounding_box()["height"] < 40


# the size on the screen of every label drawn in a picture (an SVG scaled to its column shrinks
# its text with it), after every part of the page has been laid out
SMALL_TEXT = """async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  for (let y = 0; y < document.documentElement.scrollHeight; y += innerHeight / 2) {
    scrollTo(0, y); await frame(); await frame();
  }
  const out = [];
  for (const t of document.querySelectorAll("main svg text")) {
    const m = t.getScreenCTM();
    if (!m || !t.getClientRects().length || !t.getBoundingClientRect().width) continue;
    const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    const what = `${t.closest("svg").getAttribute("class")} “${t.textContent}”`;
    if (px < 11) out.push(`${what} ${px.toFixed(1)} px`);
  }
  return out.slice(0, 8);
}"""


@pytest.mark.parametrize("slug", ["split-attend", "one-character", "heads-that-copy"])
def test_on_a_phone_the_pictures_labels_are_11px_or_more(ready_page, slug):
    page = on_phone(ready_page, slug)
    assert page.evaluate(SMALL_TEXT) == []


class Outline(HTMLParser):
    """The page's headings' levels in order, and its meta description."""

    def __init__(self):
        super().__init__()
        self.levels, self.description = [], None

    def handle_starttag(self, tag, attrs):
        if re.fullmatch(r"h[1-6]", tag):
            self.levels.append(int(tag[1]))
        a = dict(attrs)
        if tag == "meta" and a.get("name") == "description":
            self.description = a.get("content")


def outline(path):
    o = Outline()
    o.feed(path.read_text(encoding="utf-8"))
    return o


def test_every_page_says_what_it_is_about(site):
    from conftest import ROOT

    files = sorted((ROOT / "chapters").glob("*.md"))
    chapters = {c.meta["slug"]: c.meta for c in (read(f, ROOT) for f in files)}
    for slug, meta in chapters.items():
        assert outline(site / f"{slug}.html").description == meta["summary"], slug
        for embed in (site / "embed" / slug).glob("*.html"):
            assert outline(embed).description == meta["summary"], embed
    home = outline(site / "index.html").description
    assert home and home.startswith("An explainer of how transformers attend")
    for page in site.glob("*.html"):
        assert outline(page).description, page.name


def test_no_page_skips_a_heading_level(site):
    pages = sorted(site.glob("*.html"))
    assert len(pages) >= 8
    for page in pages:
        levels = outline(page).levels
        assert levels[0] == 1, page.name
        skips = [(a, b) for a, b in zip(levels, levels[1:], strict=False) if b > a + 1]
        assert skips == [], page.name


# the elements with text of their own that the loading note at SELECTOR lies over
COVERED = """(selector) => {
  const noteEl = document.querySelector(selector);
  const note = noteEl.getBoundingClientRect();
  const over = (r) => r.width && r.left < note.right && r.right > note.left
    && r.top < note.bottom && r.bottom > note.top;
  return [...document.querySelectorAll("body *")].filter((el) =>
    !noteEl.contains(el) && !el.contains(noteEl)
    && [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())
    && over(el.getBoundingClientRect())).map((el) => el.outerHTML.slice(0, 60));
}"""


# a note's texts on screen: [text, the width it needs, the width it has]
SAID = """(selector) => [...document.querySelectorAll(`${selector} span`)]
  .filter((s) => s.checkVisibility() && s.getBoundingClientRect().width > 1)
  .map((s) => [s.textContent, s.scrollWidth, s.clientWidth])"""

NOTE = "[data-pystatus]"
FIGURE_NOTE = "#kv-cache [data-fig-loading]"

# the figure's note says STEP, in the header's words, and is on the screen
AT_STEP = """([selector, step]) => {
  const note = document.querySelector(selector), r = note.getBoundingClientRect();
  const header = document.querySelector("[data-pystatus-text]").textContent;
  return !note.hidden && note.textContent === header && header.includes(`(${step} of 3)`)
    && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight;
}"""


def test_the_loading_note_covers_no_text(new_page, base_url):
    """At two phones', a tablet's and a laptop's width: one page, resized while Python's runtime
    is held back (so the note stays); then, down at a figure on a phone, Python's progress on the
    figure's frame, step by step, until the figure is live."""
    page = new_page(viewport={"width": 390, "height": 800})
    release = hold_python(page)
    release_numpy = hold_python(page, "**/numpy.zip")  # the second step's
    page.goto(f"{base_url}one-character.html")
    for width in (360, 390, 768, 1280):
        resized(page, width, 800)
        page.evaluate("scrollTo(0, 0)")
        page.wait_for_function("""() => {
          const note = document.querySelector("[data-pystatus]");
          return !note.hidden && note.textContent.includes("Loading");
        }""")
        assert page.locator("html.py-ready").count() == 0  # still held back
        box = page.locator("[data-pystatus]").bounding_box()
        assert box["width"] > 100, width  # it is there to see
        # what it says is not cut ("Loading the Python…" on a phone): a short note there
        said = page.evaluate(SAID, NOTE)
        assert said and all(w <= room + 1 for _, w, room in said), (width, said)
        assert said[0][0] == (
            "Loading, 1 of 3…" if width < 576 else "Loading the Python runtime (1 of 3)…"
        )
        assert page.evaluate(COVERED, NOTE) == [], width
        # nor further down the page, as the reader scrolls while Python loads
        page.evaluate("scrollTo(0, 2000)")
        assert page.evaluate(COVERED, NOTE) == [], width
    # on a phone, down at a figure (the header's note far above): the progress is on the
    # figure's frame, whole, over no text, and it moves none of the figure's controls as it goes
    resized(page, 360, 740)
    page.locator("#kv-cache").evaluate("(f) => scrollBy(0, f.getBoundingClientRect().top - 100)")
    page.wait_for_function(AT_STEP, arg=[FIGURE_NOTE, 1])
    said = page.evaluate(SAID, FIGURE_NOTE)
    assert [text for text, _, _ in said] == ["Loading the Python runtime (1 of 3)…"]
    assert all(w <= room + 1 for _, w, room in said), said
    assert page.evaluate(COVERED, FIGURE_NOTE) == []
    # not read out at each figure and step: the header's note (a polite live region) tells
    # screen readers, once a step
    assert page.locator(FIGURE_NOTE).evaluate("(n) => !n.closest('[aria-live], [role=status]')")
    controls = """() => [...document.querySelectorAll("#kv-cache [data-body] :is(button, input)")]
      .map((c) => Math.round(c.getBoundingClientRect().top + scrollY))"""
    before = page.evaluate(controls)
    release()  # as it goes: the next step's
    page.wait_for_function(AT_STEP, arg=[FIGURE_NOTE, 2])
    assert page.evaluate(COVERED, FIGURE_NOTE) == []
    release_numpy()
    page.wait_for_selector("html.py-ready", timeout=90_000)
    assert page.locator(FIGURE_NOTE).is_hidden()  # gone once the figure is live
    assert page.evaluate(controls) == before
