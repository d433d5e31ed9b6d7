"""A figure's SVG download as a reader saves it, and what Chromium draws of the file by itself
(an <img> of it on a blank page of 127.0.0.1, where no style sheet of the site's reaches it),
beside what the page shows of the figure (tests/test_quality.py)."""

import base64
import re
from pathlib import Path

BLANK = "svg-alone.html"
# what is not in the picture: the controls (the state is written there) and the notes the page's
# script adds after a tap (effects.js: what changed elsewhere, what was written on)
CONTROLS = (
    "figcaption, form, .mh-controls, .mh-pick, .mh-fig-buttons, .mh-download-panel, "
    ".mh-effect, .mh-wrote"
)
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*\.svg")

# what the page shows of a figure, as text: every visible text outside its controls
PAGE_TEXT = """(figure) => {
  const skip = "SKIP";
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
}""".replace("SKIP", CONTROLS + ", .sr")

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
