"""The readers' path: chapters read in order, each ending on a recap and a link to the next, the
author guide apart as an appendix, the home page's order and reading times; prose that never
starts a sentence in lower case; counts and head names from one helper each."""

import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from sitebuild.pipeline import build as site_build
from sitebuild.pipeline import reading
from sitebuild.pipeline.chapters import APPENDIX_ORDER, AuthorError, Block, reading_path
from toymodels.page.html import capital, count_words, head_name, plural_of

ROOT = Path(__file__).resolve().parent.parent


def chapters():
    return site_build.load_chapters(ROOT)


def html_of(site, slug):
    return (site / f"{slug}.html").read_text(encoding="utf-8")


# ---- the chain of previous and next ------------------------------------------------------------


def test_every_page_links_to_its_neighbours_on_the_path(site):
    path, appendices = reading_path(chapters())
    assert path and all(c.meta["order"] < APPENDIX_ORDER for c in path)
    assert "author-guide" in [c.meta["slug"] for c in appendices]
    for i, ch in enumerate(path):
        html = html_of(site, ch.meta["slug"])
        prev = re.findall(r'<a rel="prev" href="([^"]+)">', html)
        nxt = re.findall(r'<a rel="next" href="([^"]+)">', html)
        assert prev == ([f"{path[i - 1].meta['slug']}.html"] if i else []), ch.path
        assert nxt == ([f"{path[i + 1].meta['slug']}.html"] if i + 1 < len(path) else []), ch.path
        assert f'<span class="count">{i + 1} of {len(path)}</span>' in html
    for ch in appendices:  # outside the chain: no previous, no next, only the way home
        html = html_of(site, ch.meta["slug"])
        assert 'rel="prev"' not in html and 'rel="next"' not in html, ch.path
        assert '<span class="count">Appendix</span>' in html and 'href="index.html"' in html
    # and no chapter of the path leads into an appendix
    for ch in path:
        for other in appendices:
            assert f'rel="next" href="{other.meta["slug"]}.html"' not in html_of(
                site, ch.meta["slug"]
            )


def test_the_home_page_shows_the_path_in_order_with_reading_times(site):
    path, appendices = reading_path(chapters())
    index = (site / "index.html").read_text(encoding="utf-8")
    listed = re.search(r'<ol class="toc path">(.*?)</ol>', index, re.S).group(1)
    assert re.findall(r'<a href="([^"]+)\.html">', listed) == [c.meta["slug"] for c in path]
    for ch in path:
        n = reading.prose_words(ch.body)
        assert 100 < n < 6000, (ch.path, n)  # prose, not code or the figures' numbers
        minutes = reading.minutes(n)
        assert f"About {minutes} min to read ({n:,} words).</p>" in listed, ch.path
        assert ch.meta["summary"].replace("'", "&#39;") in listed
    assert f"at {reading.WORDS_PER_MINUTE} words a minute" in index
    apart = re.search(r'<h2>Appendix</h2>\s*<ul class="toc appendix">(.*?)</ul>', index, re.S)
    assert re.findall(r'<a href="([^"]+)\.html">', apart.group(1)) == [
        c.meta["slug"] for c in appendices
    ]
    assert "min to read" not in apart.group(1)


# what each folder of toymodels/data holds, as the footer names it: numbers read from a file
READ_FROM_FILES = {
    "realheads": "MiniLM's and SmolLM2's attention maps",
    "smollm2": "SmolLM2's runs with heads pulled out",
    "what_a_head_does": "its patching shares",
    "why_a_head_looks": "its heads split and knocked out",
    "charmodel": "the character model's trained weights and training curves",
}


def test_the_footer_and_the_home_page_say_which_numbers_are_read_from_files(site):
    data = ROOT / "toymodels" / "data"
    assert sorted(p.name for p in data.iterdir() if p.is_dir()) == sorted(READ_FROM_FILES)
    for page in ("index.html", "heads-that-copy.html", "one-head.html"):
        html = (site / page).read_text(encoding="utf-8")
        footer = re.search(r'<footer class="site-footer">(.*?)</footer>', html, re.S).group(1)
        footer = " ".join(unescape(footer).split())  # as read, whatever lines it spans
        assert "Every number" not in footer, page
        for said in READ_FROM_FILES.values():
            assert said in footer, (page, said)
    index = (site / "index.html").read_text(encoding="utf-8")
    lede = " ".join(unescape(re.search(r'<p class="lede">(.*?)</p>', index, re.S).group(1)).split())
    assert "two real language models, MiniLM and SmolLM2, whose maps" in lede
    assert "exported ahead" in lede


# ---- the recap at the end of every chapter -----------------------------------------------------


def test_every_chapter_of_the_path_ends_on_a_recap_and_the_next_step(site):
    path, appendices = reading_path(chapters())
    for i, ch in enumerate(path):
        last = ch.body[-1]
        assert isinstance(last, Block) and last.name == "recap", f"{ch.path} ends on no recap"
        assert [b.name for b in ch.body if isinstance(b, Block)].count("recap") == 1
        html = html_of(site, ch.meta["slug"])
        recap = re.search(r'<section class="mh-recap".*?</section>', html, re.S).group(0)
        assert '<h2 id="recap">What you now know</h2>' in recap
        assert 3 <= recap.count("<li>") <= 4, ch.path
        step = re.search(r'<p class="mh-next-step">(.*?)</p>', recap, re.S).group(1)
        if i + 1 < len(path):
            nxt = path[i + 1].meta
            assert step.startswith(
                f'<strong>Next:</strong> <a href="{nxt["slug"]}.html">{nxt["title"]}</a>. '
            ), ch.path
            sentence = re.sub(r"<[^>]+>", "", step.split("</a>. ", 1)[1]).strip()
            assert sentence[:1].isupper() and sentence.endswith("."), (ch.path, sentence)
        else:
            assert "last chapter of the path" in step and 'href="index.html"' in step
        # nothing of the chapter follows the recap: only the results and the sources
        after = html.split(recap, 1)[1]
        assert re.match(r"\s*<section class=\"mh-results\"", after), ch.path
    for ch in appendices:
        assert not any(isinstance(b, Block) and b.name == "recap" for b in ch.body)


HEAD = """+++
title = "{title}"
slug = "{slug}"
order = {order}
series = "Chapter"
summary = "One sentence."
sources = ["Someone (2020). A paper."]
+++

Some prose.

"""
RECAP = "::: recap It adds the next idea.\n- One.\n- Two.\n- Three.\n:::\n"
LAST = "::: recap\n- One.\n- Two.\n- Three.\n:::\n"


def chapter(slug, order, body):
    return HEAD.format(title=slug.capitalize(), slug=slug, order=order) + body


def project(tmp_path, files):
    root = tmp_path / "proj"
    (root / "chapters").mkdir(parents=True)
    for name in ("templates", "toymodels"):
        (root / name).symlink_to(ROOT / name)
    for name, text in files.items():
        (root / "chapters" / name).write_text(text, encoding="utf-8")
    return root


def test_a_short_path_builds_with_its_recaps(tmp_path):
    root = project(
        tmp_path,
        {
            "a.md": chapter("first", 1, RECAP),
            "b.md": chapter("second", 2, LAST),
            "g.md": chapter("guide", APPENDIX_ORDER, ""),
        },
    )
    site = site_build.build(root, tmp_path / "site")
    first = (site / "first.html").read_text(encoding="utf-8")
    assert (
        '<strong>Next:</strong> <a href="second.html">Second</a>. It adds the next idea.' in first
    )
    assert "last chapter of the path" in (site / "second.html").read_text(encoding="utf-8")
    index = (site / "index.html").read_text(encoding="utf-8")
    assert index.index('href="first.html"') < index.index('href="second.html"')
    assert index.index('href="second.html"') < index.index("<h2>Appendix</h2>")
    assert index.index("<h2>Appendix</h2>") < index.index('href="guide.html"')


MISTAKES = [
    (
        "two lines",
        {"a.md": chapter("first", 1, "::: recap It adds.\n- One.\n- Two.\n:::\n")},
        "chapters/a.md:12: a recap holds three or four lines '- what the reader now knows', "
        "one idea each; this one has 2",
    ),
    (
        "five lines",
        {"a.md": chapter("first", 1, "::: recap\n- A.\n- B.\n- C.\n- D.\n- E.\n:::\n")},
        "chapters/a.md:12: a recap holds three or four lines '- what the reader now knows', "
        "one idea each; this one has 5",
    ),
    (
        "a stray line",
        {"a.md": chapter("first", 1, "::: recap\n- One.\n- Two.\nthree\n- Four.\n:::\n")},
        "chapters/a.md:15: a recap holds lines '- what the reader now knows', continued on "
        "indented lines",
    ),
    (
        "text after it",
        {"a.md": chapter("first", 1, LAST + "\nMore prose.\n")},
        "chapters/a.md:12: a recap ends the chapter, but line 18 comes after it; move the recap "
        "below everything else",
    ),
    (
        "inside another block",
        {"a.md": chapter("first", 1, "::: deeper More\n" + LAST + ":::\n")},
        "chapters/a.md:13: a recap ends the chapter, so it cannot sit inside 'deeper' (opened at "
        "line 12); close 'deeper' with ':::' first",
    ),
    (
        "two recaps",
        {"a.md": chapter("first", 1, LAST + LAST)},
        "chapters/a.md:17: a chapter has one recap; the first is at line 12",
    ),
    (
        "no sentence for the next chapter",
        {"a.md": chapter("first", 1, LAST), "b.md": chapter("second", 2, LAST)},
        "chapters/a.md:12: this recap leads to the next chapter, 'Second': add one sentence on "
        "what it adds after '::: recap', e.g. '::: recap It takes the heads apart one matrix at "
        "a time.'",
    ),
    (
        "a sentence on the last chapter",
        {"a.md": chapter("first", 1, RECAP), "b.md": chapter("second", 2, RECAP)},
        "chapters/b.md:12: this is the last chapter of the path, so no next chapter follows: "
        "remove the sentence after '::: recap' (or add the chapter it announces)",
    ),
    (
        "a recap in an appendix",
        {"a.md": chapter("first", 1, LAST), "g.md": chapter("guide", APPENDIX_ORDER, LAST)},
        "chapters/g.md:12: this chapter is an appendix (order 90 or more), outside the readers' "
        "path, so it has no recap; remove the block or give it a smaller order",
    ),
]


@pytest.mark.parametrize("name,files,message", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_recap_mistakes_name_file_and_line(tmp_path, name, files, message):
    root = project(tmp_path, files)
    with pytest.raises(AuthorError) as e:
        site_build.build(root, tmp_path / "site")
    assert str(e.value) == message


def test_the_author_guide_documents_every_recap_message():
    guide = (ROOT / "chapters" / "90-author-guide.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "### recap" in guide and "| `recap` |" in readme
    for _, _, message in MISTAKES:
        text = message.split(": ", 1)[1]  # without 'chapters/a.md:12'
        pattern = re.escape(text).replace("'Second'", "'[^']+'").replace("'deeper'", "'[^']+'")
        pattern = re.sub(r"\d+", r"\\d+", pattern)
        assert re.search(f"`{pattern}`", guide), text


# ---- reading time ------------------------------------------------------------------------------


def test_words_count_prose_and_leave_code_and_figures_out(tmp_path):
    assert reading.words("Hello, world. It's 1,000 `code here` $x^2$ {{ toymodels.a.b }}") == 7
    assert reading.words("A [link](https://example.org/a/b) and ## heading {#anchor}") == 4
    assert reading.words("```python\nx = 1 + 2\n```\nTwo words.") == 2
    root = project(
        tmp_path,
        {
            "a.md": chapter(
                "first",
                1,
                "::: figure f\nmodel: toymodels.guide.first_word:render\ncaption: Four words "
                "of caption.\nalt: An alternative text that is not counted.\n:::\n\n"
                "```python live\nprint('not prose at all')\n```\n\n"
                "::: check Is it?\n- [x] Yes.\n  Because.\n- [ ] No.\n  Not so.\n:::\n",
            )
        },
    )
    (ch,) = site_build.load_chapters(root)
    assert reading.prose_words(ch.body) == 2 + 4 + 7  # the prose, the caption, the check


# the most words (reading.prose_words) a chapter of the path may have: the first chapter, where
# most readers start, is held to its length
LONGEST = {"one-head": 2810}


def test_a_held_chapter_stays_within_its_length():
    words = {ch.meta["slug"]: reading.prose_words(ch.body) for ch in chapters()}
    for slug, most in LONGEST.items():
        assert words[slug] <= most, f"{slug}: {words[slug]:,} words, at most {most:,}"


def test_minutes_round_to_the_nearest_at_the_stated_pace():
    wpm = reading.WORDS_PER_MINUTE
    assert wpm == 200
    assert reading.minutes(0) == 1 and reading.minutes(wpm // 2 - 1) == 1
    assert reading.minutes(wpm + wpm // 2) == 2  # a half rounds up
    assert reading.minutes(wpm + wpm // 2 - 1) == 1
    assert reading.minutes(10 * wpm) == 10


# ---- sentences never start in lower case -------------------------------------------------------


class Sentences(HTMLParser):
    """The text of a page's blocks (paragraphs, list items, headings …), without figures,
    slots, code, maths or the sources; code and maths leave a placeholder word."""

    BLOCKS = {"p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "figcaption", "summary", "legend"}
    BLOCKS |= {"dd", "dt", "caption", "td", "th", "blockquote", "div", "section", "aside"}
    BLOCKS |= {"ul", "ol", "article", "main", "footer", "header", "details", "form"}
    VOID = {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "col"}
    SKIP = {"figure", "pre", "script", "style", "template", "textarea", "nav", "math", "code"}

    def __init__(self):
        super().__init__()
        self.blocks, self.text, self.stack, self.skip = [], [], [], 0

    def flush(self):
        block = " ".join("".join(self.text).split())
        if block:
            self.blocks.append(block)
        self.text = []

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        cls = (dict(attrs).get("class") or "").split()
        if not self.skip and tag in ("math", "code"):
            self.text.append(" Formula " if tag == "math" else " Code ")
        skip = tag in self.SKIP or "mh-slot" in cls or "sources" in cls
        self.stack.append(skip)
        self.skip += skip
        if tag in self.BLOCKS and not self.skip:
            self.flush()

    def handle_endtag(self, tag):
        if tag in self.VOID or not self.stack:
            return
        self.skip -= self.stack.pop()
        if tag in self.BLOCKS and not self.skip:
            self.flush()

    def handle_data(self, data):
        if not self.skip:
            self.text.append(data)


ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|et al|vs|cf|etc)\.$")


def lower_case_starts(html):
    """Every sentence but a block's first that starts with a lower-case letter, with the end of
    the sentence before it; abbreviations such as 'e.g.' do not end a sentence."""
    parser = Sentences()
    parser.feed(html)
    parser.flush()
    found = []
    for block in parser.blocks:
        parts = re.split(r"(?<=[.!?])\s+", block)
        for before, sentence in zip(parts, parts[1:], strict=False):
            if not ABBREVIATION.search(before) and sentence[:1].islower():
                found.append(f"…{before[-40:]} | {sentence[:60]}…")
    return found


def test_the_checker_finds_a_sentence_in_lower_case():
    broken = "<p>Every number is ours, not a published one). three have the reference size.</p>"
    (found,) = lower_case_starts(broken)
    assert found.endswith("a published one). | three have the reference size.…")
    fine = (
        "<p>Heads differ, e.g. this one. It looks back. <code>np.where</code> is numpy's. "
        "<math><mi>x</mi></math> grows.</p><figure><p>Done. lower case in a figure</p></figure>"
    )
    assert lower_case_starts(fine) == []


def test_no_sentence_of_any_page_starts_in_lower_case(site):
    pages = sorted(p for p in site.glob("*.html"))
    assert len(pages) >= len(chapters()) + 1
    problems = {p.name: lower_case_starts(p.read_text(encoding="utf-8")) for p in pages}
    assert {name: found for name, found in problems.items() if found} == {}


# ---- counts and head names come from one helper ------------------------------------------------


def test_count_words_writes_counts_and_plurals():
    assert [count_words(n) for n in (0, 1, 3, 12, 13, 1234)] == [
        "no",
        "one",
        "three",
        "twelve",
        "13",
        "1,234",
    ]
    assert count_words(1, "head") == "one head" and count_words(2, "head") == "two heads"
    assert count_words(0, "head") == "no heads" and count_words(20, "head") == "20 heads"
    assert count_words(2, "matrix", plural="matrices") == "two matrices"
    assert count_words(3, "head", start=True) == "Three heads"
    # a sentence that quotes 20 writes 10 in digits too
    assert count_words(10, among=(20,)) == "10" and count_words(10, among=(12,)) == "ten"
    assert plural_of(1, "habit") == "habit" and plural_of(5, "habit") == "habits"
    assert capital("three heads") == "Three heads" and capital("") == ""


def test_head_names_never_read_as_decimals():
    assert head_name(3, 10) == "L3\u00a0H10"
    from toymodels.real_heads import maps, values

    assert maps.head_name(2, 9) == "L3\u00a0H10"  # maps counts from 0
    assert not re.search(r"\b\d+\.\d+\b", values.copy_head() + values.best_previous_head())
