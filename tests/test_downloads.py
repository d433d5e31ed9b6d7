"""Figures to take away: every figure's picture as SVG and its numbers as CSV, made by Python
from the figure's own render function (toymodels/page/download/), and saved by the page."""

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import open_ready

from sitebuild.pipeline.chapters import APPENDIX_ORDER, Block, read
from sitebuild.pipeline.figures import figure_modules
from toymodels.page.download import file_name, files, safe, value

ROOT = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert(1)</script> "=1+2" & @cmd'


def parse_svg(text):
    """The SVG document, checked: well-formed, and nothing in it that could run."""
    root = ET.fromstring(text.split("\n", 1)[1] if text.startswith("<?xml") else text)
    assert root.tag == f"{SVG}svg"
    for el in root.iter():
        assert el.tag.split("}")[-1].lower() not in ("script", "foreignobject"), el.tag
        assert not [a for a in el.attrib if a.lower().startswith("on") or a.endswith("href")]
    return root


def parse_csv(text):
    """(header lines, rows as dicts) of a figure's CSV."""
    lines = list(csv.reader(io.StringIO(text)))
    head = [line[0] for line in lines[:3]]
    return head, [dict(zip(lines[3], line, strict=True)) for line in lines[4:]]


def live_figures():
    """(chapter, figure id, model, state) of every figure on the readers' path that offers its
    downloads (every one but `live: no`), in the state the chapter opens it in."""
    out = []

    def walk(rel, pieces):
        for b in pieces:
            if not isinstance(b, Block):
                continue
            walk(rel, b.children)
            if b.name != "figure":
                continue
            given = dict(re.findall(r"^(\w+)\s*:\s*(.*)$", "\n".join(t for _, t in b.lines), re.M))
            if given.get("live") != "no":
                out.append((rel, b.args, given["model"], json.loads(given.get("state", "{}"))))

    for path in sorted((ROOT / "chapters").glob("*.md")):
        chapter = read(path, ROOT)
        if chapter.meta["order"] < APPENDIX_ORDER:  # the guide's kit examples show no numbers
            walk(chapter.path, chapter.body)
    return out


# measures nothing until the reader loads SmolLM2 in the browser: the numbers come with it
MEASURES_NOTHING_YET = {"what-own", "why-own"}


LIVE = live_figures()


@pytest.mark.parametrize(("chapter", "fid", "model", "state"), LIVE, ids=[f[1] for f in LIVE])
def test_every_figures_csv_holds_numbers(chapter, fid, model, state):
    _, rows = parse_csv(files(model, state, fid, "Figure", "s")["csv"])
    if fid in MEASURES_NOTHING_YET:
        assert rows == []
        return
    assert [r for r in rows if r["value"]], f"{chapter}: #{fid}'s CSV holds no number"


def test_value_reads_the_number_a_cell_shows():
    shown = ("−0.25", "88.5%", "“it” → “key”: 92.3%", "“1” → “2”: 50.0%", "27,166", "“a” → “3”")
    assert [value(t) for t in shown] == ["-0.25", "88.5%", "92.3%", "50.0%", "27166", ""]


@pytest.mark.parametrize("model", figure_modules(ROOT))
def test_every_figure_downloads_as_svg_and_csv(model):
    fid = "fig"
    source = "https://example.org/x.html#fig"
    got = files(model, {}, fid, "Figure 9: a caption", source, site_css())
    root = parse_svg(got["svg"])
    assert "url(" not in (root.find(f"{SVG}style").text or "") and "var(" not in got["svg"]
    assert root.find(f"{SVG}title").text == "Figure 9: a caption"
    text = " ".join(t for el in root.iter(f"{SVG}text") for t in el.itertext())
    assert "Figure 9: a caption" in text and "Source: https://example.org/x.html#fig" in text
    head, rows = parse_csv(got["csv"])
    assert head[0] == "# Figure 9: a caption" and head[1].startswith("# state: ")
    assert head[2] == "# source: https://example.org/x.html#fig"
    for row in rows:
        assert re.fullmatch(r"(-?\d+(\.\d+)?%?)?", row["value"]), row
    assert re.fullmatch(r"x-figure-9(-[a-z0-9]+)*", got["name"]), got["name"]


def test_a_download_is_named_by_its_chapter_figure_and_state_in_safe_characters():
    state = {"sentence": "Puff found a shiny key and kept it.", "word": 6, "own": ""}
    page = "http://127.0.0.1:8000/course/many-heads.html?three-heads.word=6#three-heads"
    assert file_name(page, "Figure 1 · Three heads", "three-heads", state) == (
        "many-heads-figure-1-sentence-puff-found-a-shiny-word-6"
    )
    embedded = "file:///home/me/site/embed/one-head/move-query.html"
    assert file_name(embedded, "Figure 2 · Move", "move-query", {"angle": 30, "length": 2}) == (
        "one-head-figure-2-angle-30-length-2"
    )
    # no number in the caption: the figure's id; a reader's sentence: safe characters only
    got = file_name("one-head.html", "A figure", "words", {"sentence": HOSTILE + " Ça été"})
    assert got == "one-head-words-sentence-script-alert-1-script"
    long = file_name("real-heads.html", "Figure 1 · x", "real-heads", {"own": "Ça été " * 40})
    assert long == "real-heads-figure-1-own-ca-ete-ca-ete-ca-ete-ca" and len(long) <= 120


def test_a_readers_sentence_is_escaped_in_the_svg_and_neutralised_in_the_csv():
    got = files(
        "toymodels.many_heads.figure:render", {"sentence": HOSTILE}, "three-heads", "Fig", "s"
    )
    root = parse_svg(got["svg"])
    texts = [" ".join(el.itertext()) for el in root.iter(f"{SVG}text")]
    assert f"State: sentence={HOSTILE}; word=6; head=all; step=softmax" in texts
    assert {"script", "alert", "1", "2", "cmd"} <= set(texts)  # the figure's own words
    assert "<script>" not in got["svg"]
    head, rows = parse_csv(got["csv"])
    assert head[1] == f"# state: sentence={HOSTILE}; word=6; head=all; step=softmax"
    masked = [r for r in rows if r["text"] == "“script” cannot see “1”: masked"]
    assert masked and {r["value"] for r in masked} == {""}


def test_a_field_a_spreadsheet_would_run_is_kept_as_text():
    assert [safe(t) for t in ("=1+2", "+x", "-y", "@cmd", "\tz", "plain", "")] == [
        "'=1+2",
        "'+x",
        "'-y",
        "'@cmd",
        "'\tz",
        "plain",
        "",
    ]


def download(page, figure, kind):
    fig = page.locator(f"#{figure}")
    if fig.locator("[data-download]").get_attribute("aria-expanded") != "true":
        fig.locator("[data-download]").click()
    with page.expect_download() as done:
        fig.get_by_role("button", name=kind).click()
    return done.value.suggested_filename, Path(done.value.path()).read_text(encoding="utf-8")


@pytest.mark.browser
def test_the_csv_holds_the_numbers_on_screen(page, base_url):
    open_ready(page, base_url + "many-heads.html")
    page.get_by_role("button", name="kept", exact=True).click()
    page.wait_for_selector(".mh-shares caption:has-text('“kept”')")
    name, text = download(page, "three-heads", "Numbers (CSV)")
    assert (
        name == "many-heads-figure-1-sentence-puff-found-a-shiny-word-6-head-all-step-softmax.csv"
    )
    head, rows = parse_csv(text)
    assert "word=6" in head[1]
    on_screen = page.evaluate(
        """() => {
          const t = document.querySelector('[data-slot-of="three-heads"] .mh-shares');
          const cols = [...t.querySelectorAll('thead th')].map((th) => th.textContent.trim());
          return [...t.querySelectorAll('tbody tr, tfoot tr')].flatMap((tr) => {
            const cells = [...tr.querySelectorAll('td')];
            const names = cols.slice(cols.length - cells.length);
            return cells.map((td, i) =>
              [tr.querySelector('th').textContent.trim(), names[i], td.textContent.trim()]);
          });
        }"""
    )
    shares = [r for r in rows if r["table"] == "Shares for “kept” in each head"]
    assert [[r["row"], r["column"], r["text"]] for r in shares] == on_screen
    # the number column is the number shown, where a cell shows one
    numbers = [(r["value"], r["text"]) for r in shares if r["value"]]
    assert len(numbers) > 10 and all(v == t for v, t in numbers), numbers


@pytest.mark.browser
def test_the_svg_of_a_readers_sentence_is_that_sentence_escaped(page, base_url):
    sentence = 'Tom & <b>Jerry</b> ran "home"'
    open_ready(page, base_url + "many-heads.html")
    page.locator("#three-heads-sentence").fill(sentence)
    page.locator("#three-heads").get_by_role("button", name="Update").click()
    page.wait_for_selector("#three-heads .mh-word:text-is('Jerry')")
    name, text = download(page, "three-heads", "Picture (SVG)")
    # the sentence, cut between words, in letters, digits and hyphens only
    assert name == "many-heads-figure-1-sentence-tom-b-jerry-b-ran-word-5-head-all-step-softmax.svg"
    root = parse_svg(text)
    texts = [" ".join(el.itertext()) for el in root.iter(f"{SVG}text")]
    assert {"Tom", "Jerry", "ran", "home"} <= set(texts)
    assert any(t.startswith(f"State: sentence={sentence};") for t in texts), texts
    assert root.find(f"{SVG}title").text.startswith("Figure 1")
    assert "&lt;b&gt;Jerry&lt;/b&gt;" in text and "<b>" not in text


def site_css():
    return "\n".join(p.read_text() for p in sorted((ROOT / "templates/styles").glob("*.css")))


def test_the_svg_carries_the_page_styles_its_pictures_use_and_no_others():
    got = files("toymodels.one_head.figure:render", {}, "q", "Figure 2", "s", site_css())
    style = parse_svg(got["svg"]).find(f"{SVG}style").text
    rules = dict(re.findall(r"([^{}]+)\{([^{}]*)\}", style))
    # the plane's and the square's light fills, in the light theme's colours
    assert rules[".oh-square"] == "fill:#f3f5f8;stroke:#d5d9e0"
    assert rules[".oh-ring"] == "fill:none;stroke:#d5d9e0"
    assert rules[".mh-bar-fill"].startswith("fill:#")
    # only what an SVG draws with, nothing the file would fetch, no rule for what it lacks
    assert not re.search(r"var\(|url\(|@import|@media|display:flex|max-width|height:auto", style)
    used = set(re.findall(r'class="([^"]+)"', got["svg"]))
    used = {c for names in used for c in names.split()}
    for selector in rules:
        for part in selector.split(","):
            assert set(re.findall(r"\.([\w-]+)", part)) <= used, part


def test_a_picture_draws_pieces_apart_the_masked_hatch_small_maps_readable_and_bold_words():
    css = site_css()
    got = files("toymodels.heads_that_copy.figure:render", {"text": "puff"}, "l", "F", "s", css)
    texts = [
        " ".join("".join(el.itertext()).split()) for el in parse_svg(got["svg"]).iter(f"{SVG}text")
    ]
    # a tokenizer's pieces apart ("Puff" is two: not the two words "P uff"), no mark at the end
    assert "P · uff · found · a · shiny · key · and · kept · it · ." in texts
    # the legend's hatch of a masked cell, apart from "100%"
    assert any(t.endswith("100% ▨ masked (a later token)") for t in texts), texts
    # nine maps of ten tokens (7 px a token, shown at least 13rem wide on the page): 150 px wide
    maps = re.findall(r'<svg [^>]*class="mh-svg mh-mini hc-map"[^>]*>', got["svg"])
    assert len(maps) == 9 and all('width="150" height="150"' in m for m in maps), maps
    # "What a head does", Figure 1: the word that differs, bold in the picture as on the page
    got = files("toymodels.what_a_head_does.figure:render", {}, "w", "F", "s", css)
    assert 'store,<tspan style="font-weight:700"> John</tspan> gave' in got["svg"]
    _, rows = parse_csv(got["csv"])
    clean = next(r for r in rows if r["row"] == "Clean" and r["column"] == "Text")
    assert clean["text"] == "When Mary and John went to the store, John gave a drink to…"
