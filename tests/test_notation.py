"""One notation across chapters: the maths writes a weight matrix W^Q, and so does every figure
(W<sup>Q</sup> in HTML, a raised letter in SVG, "W-Q" where only plain text can go, as chapter 1
says it is read). Only code, which the chapters say writes it W_Q, keeps the underscore."""

import json
import re
from html.parser import HTMLParser

from toymodels.page import download
from toymodels.page.html import spoken, symbols
from toymodels.split_attend import diagram

UNDERSCORED = re.compile(r"\bW_[QKVO]\b")
CODE = {"code", "pre", "textarea", "template", "script", "style"}
READ_ALOUD = ("aria-label", "alt", "title")


class Shown(HTMLParser):
    """The text a reader sees or hears, outside code."""

    def __init__(self):
        super().__init__()
        self.inside, self.text = [], []

    def handle_starttag(self, tag, attributes):
        if tag in CODE:
            self.inside.append(tag)
        self.text += [value or "" for name, value in attributes if name in READ_ALOUD]

    def handle_endtag(self, tag):
        if self.inside and self.inside[-1] == tag:
            self.inside.pop()

    def handle_data(self, data):
        if not self.inside:
            self.text.append(data)


def shown(markup):
    parser = Shown()
    parser.feed(markup)
    return " ".join(parser.text)


def strings(value):
    """Every string inside a stored answer (its markup, summaries, notes)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            yield from strings(item)


def test_symbols_raise_a_matrix_name_and_spoken_says_it():
    assert symbols("Q = X · W_Q <b>") == "Q = X · W<sup>Q</sup> &lt;b&gt;"
    assert symbols("W_Qx and NEW_O") == "W_Qx and NEW_O"  # only a name on its own
    assert spoken("Head 2 W_K row") == "Head 2 W-K row"


def test_the_diagram_raises_the_o_of_w_o():
    svg = diagram.svg()
    assert svg.count('W<tspan dy="-6" font-size="75%">O</tspan>') == 2  # wide and tall
    assert not UNDERSCORED.search(svg)


def test_no_page_or_stored_answer_shows_w_underscore_outside_code(site):
    found = []
    for page in sorted(site.glob("*.html")):
        found += [(page.name, m) for m in UNDERSCORED.findall(shown(page.read_text()))]
    for answers in sorted((site / "prerendered").glob("*.json")):
        for markup in strings(json.loads(answers.read_text())):
            found += [(answers.name, m) for m in UNDERSCORED.findall(shown(markup))]
    assert not found
    split = (site / "split-attend.html").read_text()
    assert "W<sup>Q</sup>" in split or "W<sup>O</sup>" in split  # the figures do raise it


def test_a_downloaded_figure_keeps_the_raised_letter():
    """The SVG file draws W^O raised, as the page does; the CSV, which is plain text, says W^O."""
    got = download.files("toymodels.split_attend.figure:render", {"step": "mix"}, "f", "Fig", "x")
    assert '<tspan style="baseline-shift:super;font-size:75%">O</tspan>' in got["svg"]
    assert '"W^O (4 × 4)"' in got["csv"] and not UNDERSCORED.search(got["csv"])
    assert "\ue000" not in got["svg"] + got["csv"]  # no mark of the reader's left in either


# A term is explained where a chapter first uses it: the term, and what must stand
# within a sentence after its first use in the chapter's Markdown
EXPLAINED = {
    "02-split-attend.md": [("$d_\\text{model}$", "how many numbers describe it")],
    "03-real-heads.md": [("entropy", "a measure of spread")],
    "04-one-character.md": [
        ("MLP", "the part of a layer after its heads"),
        ("loss", "how surprised the model is"),
    ],
    "06-what-a-head-does.md": [("MLP", "the part of each layer after")],
    "08-why-a-head-looks-there.md": [("MLP", "the part of each layer after")],
}
# one name for one thing: the layer's part after its heads is its MLP (chapter 5's name)
OTHER_NAMES = ("feed-forward layer", "feed-forward block")


def test_a_term_is_explained_where_a_chapter_first_uses_it():
    from pathlib import Path

    chapters = Path(__file__).resolve().parent.parent / "chapters"
    for name, terms in EXPLAINED.items():
        body = (chapters / name).read_text("utf-8").split("+++", 2)[2]
        for term, said in terms:
            at = re.search(rf"(?<![\w-]){re.escape(term)}(?![\w-])", body)
            assert at and said in body[at.end() : at.end() + 120], (name, term)
    for path in sorted(chapters.glob("0*.md")):
        text = path.read_text("utf-8").split("+++", 2)[2]
        assert not [n for n in OTHER_NAMES if n in text], path.name
