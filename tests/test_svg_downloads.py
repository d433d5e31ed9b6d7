"""Every figure's SVG download stands alone: saved from the page as a reader saves it, then
opened by itself in Chromium (an <img> of the file on a blank page of 127.0.0.1, where no style
sheet of the site's reaches it), it looks like the figure on the page: no large dark areas where
the page has light fills, the page's words and the numbers of its tables and pictures in it,
every line of text inside the picture, and bars in the rows they belong to. Its name says the
chapter, the figure and its state, in safe characters."""

import base64
import re
from pathlib import Path

import pytest
from conftest import open_ready

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted(re.sub(r"^\d+-", "", p.stem) for p in (ROOT / "chapters").glob("*.md"))
BLANK = "svg-alone.html"
CONTROLS = "figcaption, form, .mh-controls, .mh-pick, .mh-fig-buttons, .mh-download-panel"
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*\.svg")

# what the page shows of a figure, as text: every visible text outside its controls
PAGE_TEXT = """(figure) => {
  const skip = "figcaption, form, .mh-controls, .mh-pick, .mh-fig-buttons, .mh-download-panel, .sr";
  const out = { words: [], cells: [], pictures: [], bars: [] };
  const walker = document.createTreeWalker(figure, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || el.closest(skip) || !el.checkVisibility()) continue;
    if (el.closest("svg")) out.pictures.push(n.textContent.trim());
    else if (el.matches("sup") && out.words.length) out.words.push(out.words.pop() + n.textContent);
    else out.words.push(n.textContent);
  }
  for (const td of figure.querySelectorAll("td, th")) {
    if (!td.closest(skip) && td.checkVisibility() && td.textContent.trim())
      out.cells.push(td.textContent.trim());
  }
  return out;
}"""

# the SVG file alone: drawn as an image (no script runs, nothing outside the file is read),
# then its pixels; and as a document of its own, its text and where that text lies
ALONE = """async ([svg, shot]) => {
  const load = (src) => new Promise((done, fail) => {
    const img = new Image(); img.onload = () => done(img); img.onerror = fail; img.src = src;
  });
  const pixels = (img) => {
    const c = document.createElement("canvas");
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const g = c.getContext("2d");
    g.drawImage(img, 0, 0);
    return g.getImageData(0, 0, c.width, c.height).data;
  };
  const measure = (data) => {
    let dark = 0, all = 0;
    const bins = new Map();
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] < 128) continue;
      const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
      all++;
      if (0.299 * r + 0.587 * g + 0.114 * b < 70) dark++;
      const key = `${r >> 6},${g >> 6},${b >> 6}`;
      bins.set(key, (bins.get(key) || 0) + 1);
    }
    return { dark: dark / all, bins: Object.fromEntries([...bins].map(([k, v]) => [k, v / all])) };
  };
  const url = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
  const img = await load(url);
  const file = measure(pixels(img));
  const page = measure(pixels(await load("data:image/png;base64," + shot)));
  const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
  const root = document.importNode(doc.documentElement, true);
  document.body.replaceChildren(root);
  const box = root.getBoundingClientRect();
  const outside = [...root.querySelectorAll("text")].filter((t) => {
    const r = t.getBoundingClientRect();
    const out = r.left < box.left - 1 || r.right > box.right + 1
      || r.top < box.top - 1 || r.bottom > box.bottom + 1;
    return r.width && out;
  }).map((t) => t.textContent);
  const texts = [...root.querySelectorAll("text")]
    .map((t) => t.textContent.replace(/\\s+/g, " ").trim());
  const middle = (el) => { const r = el.getBoundingClientRect(); return (r.top + r.bottom) / 2; };
  const rows = [...root.querySelectorAll("text")].map((t) => [t.textContent, middle(t)]);
  const bars = [...root.querySelectorAll(".mh-bar-fill")].map(middle);
  return { file, page, outside, texts, rows, bars, size: [img.naturalWidth, img.naturalHeight] };
}"""


def download_svg(page, fid):
    fig = page.locator(f"#{fid}")
    fig.locator("[data-download]").click()
    with page.expect_download() as done:
        fig.get_by_role("button", name="Picture (SVG)").click()
    return done.value.suggested_filename, Path(done.value.path()).read_text(encoding="utf-8")


def blank(new_page, base_url):
    """A blank page of 127.0.0.1, in a context of its own: no style sheet of the site's."""
    page = new_page(viewport={"width": 1400, "height": 900})
    page.route(
        base_url + BLANK,
        lambda route: route.fulfill(content_type="text/html", body="<!doctype html><body>"),
    )
    page.goto(base_url + BLANK)
    return page


def alone(blank_page, svg, shot):
    """What Chromium draws of the file SVG by itself (in BLANK_PAGE, in place of the file
    before it), beside the page's picture SHOT."""
    return blank_page.evaluate(ALONE, [svg, base64.b64encode(shot).decode()])


def words(texts):
    return re.findall(r"[^\W_]+", " ".join(texts))


@pytest.mark.browser
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_svg_download_looks_as_on_the_page_when_opened_alone(
    chapter, page, new_page, base_url
):
    open_ready(page, f"{base_url}{chapter}.html")
    figures = page.eval_on_selector_all(
        "figure[data-figure]:has([data-download])", "fs => fs.map((f) => f.id)"
    )
    assert figures, f"{chapter} offers no download"
    empty = blank(new_page, base_url)
    for fid in figures:
        figure = page.locator(f"#{fid}")
        shown = figure.evaluate(PAGE_TEXT)
        controls = figure.locator(CONTROLS)  # not in the picture: its state is written there
        shot = figure.screenshot(mask=[controls], mask_color="#ffffff")
        name, svg = download_svg(page, fid)
        got = alone(empty, svg, shot)
        where = f"{chapter}#{fid} ({name})"
        # the page's light fills stay light: no large dark areas the page does not have
        assert got["file"]["dark"] <= 2 * got["page"]["dark"] + 0.03, (where, got["file"]["dark"])
        # the colours of the page's picture are in the file's (ignoring a share under 1%)
        page_colours = {k for k, v in got["page"]["bins"].items() if v > 0.01}
        file_colours = {k for k, v in got["file"]["bins"].items() if v > 0.0005}
        assert page_colours <= file_colours, (where, page_colours - file_colours)
        # every word the figure shows, every number and label its tables and pictures hold
        in_file = " ".join(got["texts"])
        missing = sorted(set(words(shown["words"])) - set(words(got["texts"])))
        assert not missing, (where, missing)
        for text in shown["pictures"] + shown["cells"]:
            assert " ".join(text.split()) in in_file, (where, text)
        # and all of it inside the picture
        assert not got["outside"], (where, got["outside"])
        # named by the chapter, the figure's number (or id) and its state, in safe characters
        assert NAME.fullmatch(name) and len(name) <= 124, name
        assert re.match(rf"{chapter}-(figure-\d+|{fid})(-|\.svg$)", name), name


@pytest.mark.browser
def test_one_heads_bars_sit_in_their_rows_and_its_keys_are_whole(page, new_page, base_url):
    open_ready(page, base_url + "one-head.html")
    figure = page.locator("#move-query")
    keys = figure.locator("tbody td:nth-child(2)").all_inner_texts()
    name, svg = download_svg(page, "move-query")
    assert name == "one-head-figure-2-angle-0-length-2.svg"
    got = alone(blank(new_page, base_url), svg, figure.screenshot())
    assert len(keys) == 4 and all(k in got["texts"] for k in keys), (keys, got["texts"])
    # each bar beside its own row's word (the values' square, with the same words at its
    # corners, is drawn after the table)
    words = [(text, y) for text, y in got["rows"] if text in ("Puff", "found", "a", "key")]
    assert len(got["bars"]) == 4
    beside = [next((t for t, y in words if abs(y - bar) < 8), None) for bar in got["bars"]]
    assert beside == ["Puff", "found", "a", "key"], (words, got["bars"])
