"""The build: what it writes, and the exact message for each author mistake (with site/ left
as it was)."""

import html
import re
import shutil
import struct
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest
from conftest import wait_until

from sitebuild.authoring import check, scaffold
from sitebuild.fetched import assets
from sitebuild.models import minilm as minilm_recipe
from sitebuild.models import smollm2 as smollm2_recipe
from sitebuild.pipeline import build as site_build
from sitebuild.pipeline import chapters
from sitebuild.pipeline.chapters import AuthorError, reading_path

ROOT = Path(__file__).resolve().parent.parent
# its builds of projects, worth this many browser tests in the order workers take
# modules (conftest.py), which starts it early rather than last
SCHEDULE_WEIGHT = 12

GOOD = """+++
title = "A test chapter"
slug = "test"
order = 1
series = "Chapter 1 · Tests"
summary = "Checks the build."
sources = ["Someone (2020). A paper."]
+++

Some prose with $x^2$ maths.

::: figure three-heads
model: toymodels.many_heads.figure:render
caption: A caption.
alt: Three grids.
:::

::: slot three-heads shares
:::
"""


def project(tmp_path, chapters, copied=()):
    """A project folder sharing this repository's templates and toymodels (a copy of the
    folders named in COPIED, which the test may edit), with the given chapters."""
    root = tmp_path / "proj"
    (root / "chapters").mkdir(parents=True)
    for name in ("templates", "toymodels"):
        if name in copied:
            shutil.copytree(ROOT / name, root / name)
        else:
            (root / name).symlink_to(ROOT / name)
    for name, text in chapters.items():
        (root / "chapters" / name).write_text(text)
    return root


def broken(old, new):
    assert old in GOOD
    return GOOD.replace(old, new, 1)


MISTAKES = [
    (
        "no front matter",
        GOOD.split("+++\n", 2)[2],
        "chapters/a.md:1: a chapter starts with front matter: a line '+++', TOML fields (title, "
        "slug, order, series, summary, sources), and another '+++'",
    ),
    (
        "unclosed front matter",
        GOOD.replace("+++\n\nSome", "\nSome"),
        "chapters/a.md:1: front matter opened with '+++' is never closed; add a line '+++' after "
        "its last field",
    ),
    (
        "bad TOML",
        broken("order = 1", "order = one"),
        "chapters/a.md:4: front matter is not valid TOML: Invalid value; put text in double "
        'quotes, e.g. title = "My chapter"',
    ),
    (
        "unknown front matter field",
        broken("order = 1", 'order = 1\nsumary = "x"'),
        "chapters/a.md:5: unknown front matter field 'sumary' (did you mean 'summary'?); the "
        "fields are title, slug, order, series, summary, sources",
    ),
    (
        "missing field",
        broken('series = "Chapter 1 · Tests"\n', ""),
        "chapters/a.md:1: front matter is missing 'series'; add a line such as "
        'series = "Chapter 1 · Attention"',
    ),
    (
        "wrong type",
        broken("order = 1", 'order = "1"'),
        "chapters/a.md:4: 'order' must be a whole number, e.g. order = 1",
    ),
    (
        "bad slug",
        broken('slug = "test"', 'slug = "Test Page"'),
        "chapters/a.md:3: slug 'Test Page' must be lower-case letters, digits and single hyphens, "
        'e.g. slug = "many-heads"',
    ),
    (
        "empty sources",
        broken('sources = ["Someone (2020). A paper."]', "sources = []"),
        "chapters/a.md:7: sources must be a non-empty list of strings, one per work cited",
    ),
    (
        "unknown block",
        broken("::: slot", "::: slott"),
        "chapters/a.md:18: unknown block 'slott' (did you mean 'slot'?); the blocks are figure, "
        "slot, guess, check, steps, deeper, note, cards, exercise",
    ),
    (
        "unclosed block",
        GOOD.rsplit(":::\n", 1)[0],
        "chapters/a.md:18: block 'slot' opened here is never closed; add a line ':::' after its "
        "content",
    ),
    (
        "stray close",
        GOOD + ":::\n",
        "chapters/a.md:20: ':::' closes a block, but no block is open here; remove it",
    ),
    (
        "unknown figure",
        broken("many_heads.figure:render", "many_heads.figures:render"),
        "chapters/a.md:13: unknown figure 'toymodels.many_heads.figures:render': there is no "
        "toymodels/many_heads/figures.py "
        "(did you mean 'toymodels.many_heads.figure:render'?); figures are toymodels.",
    ),
    (
        "unknown figure function",
        broken("many_heads.figure:render", "many_heads.figure:draw"),
        "chapters/a.md:13: unknown figure 'toymodels.many_heads.figure:draw': a figure's model "
        "is a module's render function, not 'draw' "
        "(did you mean 'toymodels.many_heads.figure:render'?); figures are toymodels.",
    ),
    (
        "unknown figure field",
        broken("alt: Three grids.", "alt: Three grids.\ncolour: red"),
        "chapters/a.md:16: unknown figure field 'colour'; the fields are model, caption, alt, "
        "state, live",
    ),
    (
        "figure without alt",
        broken("alt: Three grids.\n", ""),
        "chapters/a.md:12: 'figure' block needs a field 'alt: …'",
    ),
    (
        "figure state rejected",
        broken("alt: Three grids.", 'alt: Three grids.\nstate: {"sentence": ""}'),
        "chapters/a.md:13: figure 'toymodels.many_heads.figure:render' rejected its state: Type a "
        "sentence with at least one word.",
    ),
    (
        "slot of a missing figure",
        broken("::: slot three-heads", "::: slot two-heads"),
        "chapters/a.md:18: no figure 'two-heads' on this page (did you mean 'three-heads'?); "
        "figures here: three-heads",
    ),
    (
        "unknown slot",
        broken("three-heads shares", "three-heads share"),
        "chapters/a.md:18: figure 'three-heads' has no slot 'share' (did you mean 'shares'?); its "
        "slots are shares, math",
    ),
    (
        "bad maths",
        broken("$x^2$", "$x^$"),
        "chapters/a.md:10: cannot read the TeX '$x^$': MissingSuperScriptOrSubscriptError; write "
        "\\$ for a plain dollar sign",
    ),
    (
        "unknown TeX command",
        broken("$x^2$", r"$\sofmax(x)$"),
        r"chapters/a.md:10: cannot read the TeX '$\\sofmax(x)$': unknown TeX command \sofmax; "
        r"write \$ for a plain dollar sign",
    ),
    (
        "unknown value",
        broken("Some prose", "Some {{ toymodels.many_heads.model.NOPE }} prose"),
        "chapters/a.md:10: no value 'toymodels.many_heads.model.NOPE': prose reads only the values "
        "a module lists in PROSE_VALUES; it lists D_MODEL, N_HEAD, D_HEAD, TURN, CLOCK, "
        "CLOCK_PRODUCT, FULL_TURN, MAX_WORDS, FEATURE",
    ),
    (
        "check without a right answer",
        GOOD + "\n::: check Why?\n- [ ] No.\n  Because.\n- [ ] Also no.\n  Because.\n:::\n",
        "chapters/a.md:21: a check block needs at least two options and one marked right "
        "with '- [x]'",
    ),
    (
        "guess without explanation",
        GOOD + "\n::: guess Why?\n- One.\n- Two.\n:::\n",
        "chapters/a.md:21: a guess block needs a line '---' before its explanation (choices, if "
        "any, go above it as '- choice' lines)",
    ),
    (
        "live cell raises",
        GOOD + "\n```python live\nx = 1\ny = x + z\n```\n",
        "chapters/a.md:23: this live cell raised NameError: name 'z' is not defined; fix the code "
        "or its earlier cells",
    ),
    (
        "live cell importing what only the build has",
        GOOD + "\n```python live\nx = 1\nimport markdown\n```\n",
        "chapters/a.md:23: this live cell imports markdown, which the reader's browser does not "
        "have, so it would fail when the reader runs it: its Python holds numpy, the standard "
        "library as Pyodide ships it and toymodels/ without its build-only packages",
    ),
    (
        "live cell never closed",
        GOOD + "\n```python live\nx = 1\n",
        "chapters/a.md:21: live cell opened here with ```python live is never closed; add a line "
        "``` after its code",
    ),
    (
        "exercise without a check",
        GOOD + "\n::: exercise Do it\nhint: Like this.\n---\nx = 1\n:::\n",
        "chapters/a.md:21: an exercise needs a line 'check: toymodels.MODULE:FUNCTION'",
    ),
    (
        "exercise with an unknown check",
        GOOD + "\n::: exercise Do it\ncheck: toymodels.many_heads.model:nope\n---\nx = 1\n:::\n",
        "chapters/a.md:22: unknown check 'toymodels.many_heads.model:nope': name a function in "
        "toymodels/ as toymodels.MODULE:FUNCTION",
    ),
    (
        "step the figure lacks",
        GOOD + "\n::: steps three-heads\n1. {step=dance} Dance.\n:::\n",
        "chapters/a.md:22: figure 'three-heads' has no state step=dance; it takes "
        "head: all, 1, 2, 3; step: qk, scores, mask, softmax, values, concat, output",
    ),
    (
        "one of a step's fields the figure lacks",
        GOOD + "\n::: steps three-heads\n1. {step=qk head=9} Dance.\n:::\n",
        "chapters/a.md:22: figure 'three-heads' has no state head=9; it takes "
        "head: all, 1, 2, 3; step: qk, scores, mask, softmax, values, concat, output",
    ),
    (
        "a step without a value",
        GOOD + "\n::: steps three-heads\n1. {step} Dance.\n:::\n",
        "chapters/a.md:22: a step sets fields as {field=value}, or several as "
        "{field=value other=value}",
    ),
]


STATE = "alt: Three grids."  # the figure block's last line: a state line goes after it
MISTAKES += [
    (
        "a state field misspelt",
        broken(STATE, STATE + '\nstate: {"haed": "2"}'),
        "chapters/a.md:16: figure 'toymodels.many_heads.figure:render' has no field 'haed' "
        "(did you mean 'head'?); its fields are sentence, word, head, step",
    ),
    (
        "a state value outside CHOICES",
        broken(STATE, STATE + '\nstate: {"head": "9"}'),
        "chapters/a.md:16: figure 'toymodels.many_heads.figure:render' has no head \"9\"; head "
        "is one of all, 1, 2, 3",
    ),
    (
        "a state value the figure would replace",
        broken(STATE, STATE + '\nstate: {"word": "99"}'),
        "chapters/a.md:16: figure 'toymodels.many_heads.figure:render' does not draw word "
        '"99": it drew word "7" instead; word is one of 0, 1, 2, 3, 4, 5, 6, 7; write a value it '
        "draws as written",
    ),
    (
        "a step's field misspelt",
        GOOD + "\n::: steps three-heads\n1. {haed=2} Dance.\n:::\n",
        "chapters/a.md:22: figure 'three-heads' has no field 'haed' (did you mean 'head'?); its "
        "steps set head: all, 1, 2, 3; step: qk, scores, mask, softmax, values, concat, output",
    ),
    (
        "a step setting a field outside CHOICES",
        GOOD + "\n::: steps three-heads\n1. {word=2} Dance.\n:::\n",
        "chapters/a.md:22: figure 'three-heads' has no state word=2: a step sets only a field "
        "of the module's CHOICES; it takes head: all, 1, 2, 3; step: qk, scores, mask, softmax, "
        "values, concat, output",
    ),
    (
        "a value from a module without PROSE_VALUES",
        broken("Some prose", "Some {{ toymodels.many_heads.figure.SENTENCE }} prose"),
        "chapters/a.md:10: no value 'toymodels.many_heads.figure.SENTENCE': prose reads only "
        "the values a module lists in PROSE_VALUES; toymodels/many_heads/figure.py lists none: "
        'add a line PROSE_VALUES = ("SENTENCE",) to it, naming every value of the module that '
        "prose may read",
    ),
    (
        "a value never closed",
        broken("Some prose", "Some\n{{ toymodels.many_heads.model.D_HEAD } prose"),
        "chapters/a.md:11: '{{' here is not read: a chapter puts a value into prose as "
        "{{ toymodels.MODULE.NAME }}, closed with '}}' on the same line, and runs no other "
        "template syntax; write \\{ for a brace, or put it in a code span",
    ),
    (
        "a template tag",
        broken("Some prose", "{% if x %}Some prose{% endif %}"),
        "chapters/a.md:10: '{%' here is not read",
    ),
    (
        "a lone dollar",
        broken("Some prose", "It costs\n$5, and some prose"),
        "chapters/a.md:11: a '$' here opens no maths: TeX goes between $…$ (no space inside "
        "either dollar) or $$…$$; write \\$ for a plain dollar sign",
    ),
    (
        "maths never closed",
        broken("$x^2$", "$x^2"),
        "chapters/a.md:10: a '$' here opens no maths",
    ),
    (
        "a guess with two answers",
        GOOD + "\n::: guess Which?\n- [x] One.\n- Two.\n- [x] Three.\n---\nBecause.\n:::\n",
        "chapters/a.md:24: a guess has one answer, and choice 1 is already marked '[x]'; remove "
        "one of the marks (a check block takes several right options)",
    ),
]


def test_a_readers_state_is_still_put_right_quietly():
    """Only the chapter's own state is held to the figure's fields and CHOICES: the same
    mistakes from a reader's address are normalised, as before."""
    from toymodels.many_heads import figure

    answer = figure.render({"haed": "2", "head": "9", "word": "99"}, "three-heads")
    assert answer["error"] is None and answer["state"]["head"] == "all"


@pytest.mark.parametrize("name,text,message", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_author_mistake_stops_the_build_and_keeps_site(tmp_path, name, text, message):
    root = project(tmp_path, {"a.md": text})
    site = root / "site"
    site.mkdir()
    (site / "index.html").write_text("the previous site")
    with pytest.raises(AuthorError) as err:
        site_build.build(root, site)
    assert str(err.value).startswith(message), str(err.value)
    assert (site / "index.html").read_text() == "the previous site"
    assert sorted(p.name for p in root.iterdir()) == ["chapters", "site", "templates", "toymodels"]


def test_single_quotes_are_toml_and_only_unquoted_text_gets_the_quotes_hint(tmp_path):
    """TOML takes 'single-quoted' strings; the hint to use double quotes comes only where a
    value is unquoted text, not with every TOML error."""
    path = tmp_path / "chapters" / "a.md"
    path.parent.mkdir()
    path.write_text(broken('title = "A test chapter"', "title = 'A test chapter'"))
    assert chapters.read(path, tmp_path).meta["title"] == "A test chapter"
    path.write_text(broken('series = "Chapter 1 · Tests"', 'series = "Chapter 1" "again"'))
    with pytest.raises(AuthorError) as err:
        chapters.read(path, tmp_path)
    assert str(err.value) == (
        "chapters/a.md:5: front matter is not valid TOML: "
        "Expected newline or end of document after a statement"
    )
    path.write_text(broken('series = "Chapter 1 · Tests"', "series = Chapter 1"))
    with pytest.raises(AuthorError) as err:
        chapters.read(path, tmp_path)
    assert str(err.value).endswith('; put text in double quotes, e.g. title = "My chapter"')


def test_duplicate_slug_and_order(tmp_path):
    second = GOOD.replace('title = "A test chapter"', 'title = "Another"').replace(
        "order = 1", "order = 2"
    )
    root = project(tmp_path, {"a.md": GOOD, "b.md": second})
    with pytest.raises(
        AuthorError,
        match=(
            r"^chapters/b.md:3: slug 'test' is already used by chapters/a.md; every chapter needs "
            r"its own slug$"
        ),
    ):
        site_build.build(root, root / "site")
    root2 = project(
        tmp_path / "2",
        {
            "a.md": GOOD,
            "b.md": second.replace('slug = "test"', 'slug = "other"').replace(
                "order = 2", "order = 1"
            ),
        },
    )
    with pytest.raises(
        AuthorError, match=r"^chapters/b.md:4: order 1 is already used by chapters/a.md"
    ):
        site_build.build(root2, root2 / "site")


HEADS = GOOD.replace('slug = "test"', 'slug = "many-heads"') + "\n## How heads share\n\nText.\n"
LINKS = [
    (
        "a page misspelt",
        "See [the chapter](many-head.html).",
        "chapters/a.md:25: the link to 'many-head.html' leads to no page of this site (did you "
        "mean 'many-heads.html'?); fix the link or the heading it points to",
    ),
    (
        "a page misspelt, with its heading",
        "See [the chapter](many-head.html#how-heads-share).",
        "chapters/a.md:25: the link to 'many-head.html#how-heads-share' leads to no page of this "
        "site (did you mean 'many-heads.html#how-heads-share'?); fix the link or the heading it "
        "points to",
    ),
    (
        "a heading misspelt",
        "See [sharing](many-heads.html#how-heads-shares).",
        "chapters/a.md:25: the link to 'many-heads.html#how-heads-shares' names an anchor "
        "'#how-heads-shares' that many-heads.html does not have (did you mean "
        "'many-heads.html#how-heads-share'?); fix the link or the heading it points to",
    ),
    (
        "a figure id misspelt, on this page",
        "See [the figure](#three-head).",
        "chapters/a.md:25: the link to '#three-head' names an anchor '#three-head' that this page "
        "does not have (did you mean '#three-heads'?); fix the link or the heading it points to",
    ),
    (
        "nothing close",
        "See [elsewhere](zebra.html).",
        "chapters/a.md:25: the link to 'zebra.html' leads to no page of this site; fix the link "
        "or the heading it points to",
    ),
]


@pytest.mark.parametrize("name,link,message", LINKS, ids=[k[0] for k in LINKS])
def test_a_broken_link_names_the_closest_page_or_heading(tmp_path, name, link, message):
    root = project(tmp_path, {"a.md": HEADS})
    site_build.build(root, root / "site")
    before = (root / "site" / "many-heads.html").read_bytes()
    (root / "chapters" / "a.md").write_text(f"{HEADS}\n{link}\n")
    with pytest.raises(AuthorError) as e:
        site_build.build(root, root / "site")
    assert str(e.value) == message
    assert (root / "site" / "many-heads.html").read_bytes() == before


def test_the_guide_documents_what_a_wrong_state_or_step_says():
    guide = (ROOT / "chapters" / "90-author-guide.md").read_text(encoding="utf-8")
    for name in (
        "a state field misspelt",
        "a state value outside CHOICES",
        "a state value the figure would replace",
        "a step's field misspelt",
        "a step setting a field outside CHOICES",
        "a value from a module without PROSE_VALUES",
    ):
        message = next(m for n, _, m in MISTAKES if n == name)
        assert f"`{message.split(': ', 1)[1]}`" in guide, name


def test_the_guide_documents_how_to_link_and_what_a_broken_link_says():
    guide = (ROOT / "chapters" / "90-author-guide.md").read_text(encoding="utf-8")
    assert "`SLUG.html`" in guide and "(many-heads.html#three-heads-one-sentence)" in guide
    for _, _, message in LINKS[0], LINKS[2]:
        assert f"`{message.split(': ', 1)[1]}`" in guide, message


def test_cli_exits_non_zero_with_the_message(tmp_path):
    root = project(tmp_path, {"a.md": broken("::: slot", "::: slott")})
    done = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "--root", str(root)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("chapters/a.md:18: unknown block 'slott'")
    assert not (root / "site").exists()


def test_the_command_line_is_the_table_of_commands(capsys):
    """build.py's commands, their choices and their help all come from its table COMMANDS."""
    sys.path.insert(0, str(ROOT))
    try:
        import build as cli
    finally:
        sys.path.remove(str(ROOT))
    command = next(a for a in cli.parser()._actions if a.dest == "command")
    assert command.choices == tuple(cli.COMMANDS)
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    said = " ".join(capsys.readouterr().out.split())
    for name, command in cli.COMMANDS.items():
        assert " ".join(f"{name} {command.help}".split()) in said, name
    assert cli.parser().parse_args([]).command == "build"


def test_site_pages(site):
    index = (site / "index.html").read_text()
    chapter = (site / "many-heads.html").read_text()
    assert '<a href="many-heads.html">' in index and "Many heads looking at once" in index
    path, _ = reading_path(site_build.load_chapters(ROOT))  # the guide is an appendix, apart
    place = [c.meta["slug"] for c in path].index("many-heads") + 1
    assert f"{place} of {len(path)}" in chapter
    assert chapter.count('class="mh-grid"') == 3 and 'class="mh-shares"' in chapter
    assert "<math" in chapter and "$" not in re.sub(r"<pre.*?</pre>", "", chapter, flags=re.S)
    assert "MHHELD" not in chapter and "{{" not in chapter
    # relative URLs only for everything the page loads; links out to papers may be absolute
    for page in (index, chapter):
        loads = re.findall(r'<(?:script|img|iframe|source)[^>]*\bsrc="([^"]*)"', page) + re.findall(
            r'<link[^>]*\bhref="([^"]*)"', page
        )
        assert loads and all(re.match(r"^[a-z][\w./-]*$", u) and ":" not in u for u in loads), loads
        for url in re.findall(r'<a[^>]*\bhref="([^"]*)"', page):
            assert not url.startswith("/") and (
                url.startswith(("https://", "#")) or "://" not in url
            ), url
    files = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert {
        "static/main.js",
        "static/worker.js",
        "py/files.json",
        "py/toymodels/many_heads/model.py",
        f"pyodide/{assets.NUMPY_WHEEL}",
        "pyodide/pyodide.asm.wasm",
    } <= files
    assert (site / "py/toymodels/many_heads/model.py").read_bytes() == (
        ROOT / "toymodels/many_heads/model.py"
    ).read_bytes()


def _png_pixels(data):
    """An independent reading of an 8-bit RGBA, non-interlaced PNG with no row filters."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = {}, 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        assert struct.unpack(">I", data[at + 8 + length : at + 12 + length])[0] == zlib.crc32(
            kind + body
        )
        chunks[kind] = chunks.get(kind, b"") + body
        at += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert (depth, colour, interlace) == (8, 6, 0)
    raw = zlib.decompress(chunks[b"IDAT"])
    rows = [raw[r * (1 + 4 * width) : (r + 1) * (1 + 4 * width)] for r in range(height)]
    assert all(row[0] == 0 for row in rows)
    return [[tuple(row[1 + 4 * c : 5 + 4 * c]) for c in range(width)] for row in rows]


def test_the_icon_is_a_png_drawn_from_the_svg(site):
    """Chromium fetches and decodes a page's icon again on each change of the URL (every tap):
    the pages name a 32-pixel PNG drawn from templates/icon.svg, never an SVG."""
    for page in ("index.html", "many-heads.html", "embed/many-heads/three-heads.html"):
        links = re.findall(r"<link[^>]*rel=\"icon\"[^>]*>", (site / page).read_text())
        assert len(links) == 1 and 'type="image/png" sizes="32x32"' in links[0], links
    href = re.search(r'<link rel="icon" href="([^"]+)"', (site / "index.html").read_text())[1]
    px = _png_pixels((site / href).read_bytes())
    assert len(px) == 32 and {len(row) for row in px} == {32}
    # templates/icon.svg, 16 units = 32 pixels: a rounded square #08519c, three bars
    assert px[1][16] == (0x08, 0x51, 0x9C, 255)  # the square, between the corners
    assert px[16][8] == (0xC6, 0xDB, 0xEF, 255)  # the first bar: x 3-6, y 3-13
    assert px[20][17] == (0x9E, 0xCA, 0xE1, 255)  # the second: x 7-10, y 5-13
    assert px[24][23] == (0xDE, 0xEB, 0xF7, 255)  # the third: x 11-13, y 7-13
    assert px[8][23] == (0x08, 0x51, 0x9C, 255)  # above the third bar
    assert px[0][0][3] == 0 and 0 < px[1][1][3] < 255  # a rounded corner
    assert not list(site.glob("static/icon*.svg"))


PINNED_DOWNLOADS = [  # a download, the pin it is held to, what fetches it, and the message
    (
        "NPM_TARBALL",
        "NPM_SHA256",
        assets.runtime_dir,
        r"^pyodide-0.27.7.tgz: sha256 is [0-9a-f]{64}, expected 0{64}\. The download is not "
        r"the pinned file",
    ),
    (
        "MORPHDOM_TARBALL",
        "MORPHDOM_SHA256",
        assets.morphdom_script,
        r"^morphdom-2\.7\.8\.tgz: sha256 is [0-9a-f]{64}, expected 0{64}\. The download is not "
        r"the pinned file",
    ),
]


@pytest.mark.parametrize("tarball,pin,fetch,message", PINNED_DOWNLOADS, ids=["pyodide", "morphdom"])
def test_hash_mismatch_is_reported(tmp_path, monkeypatch, tarball, pin, fetch, message):
    monkeypatch.setattr(assets, pin, "0" * 64)
    monkeypatch.setenv("MANYHEADS_CACHE", str(tmp_path / "cache"))
    downloads = tmp_path / "cache" / "downloads"
    downloads.mkdir(parents=True)
    (downloads / getattr(assets, tarball)).write_bytes(b"not the real tarball")
    with pytest.raises(assets.AssetError, match=message):
        fetch()


def test_prev_next_and_position(tmp_path):
    second = (
        GOOD.replace('title = "A test chapter"', 'title = "Second"')
        .replace('slug = "test"', 'slug = "second"')
        .replace("order = 1", "order = 2")
    )
    root = project(tmp_path, {"z.md": GOOD, "a.md": second})
    site = site_build.build(root, root / "site")
    first, last = (site / "test.html").read_text(), (site / "second.html").read_text()
    assert (
        "1 of 2" in first
        and '<a rel="next" href="second.html">Second →</a>' in first
        and 'rel="prev"' not in first
    )
    assert (
        "2 of 2" in last
        and '<a rel="prev" href="test.html">← A test chapter</a>' in last
        and 'rel="next"' not in last
    )
    index = (site / "index.html").read_text()
    assert index.index('href="test.html"') < index.index('href="second.html"')


def test_cdn_option(tmp_path):
    root = project(tmp_path, {"a.md": GOOD})
    site = site_build.build(root, root / "site", cdn=True)
    assert (
        f'<meta name="mh-pyodide" content="{assets.CDN_URL}">' in (site / "test.html").read_text()
    )
    assert not (site / "pyodide").exists()
    # its one chapter loads no model: none of the models' files (about 100 MB) are copied
    assert not (site / "models").exists()


def test_the_site_carries_the_files_of_the_models_its_chapters_load(site):
    models = {p.name for p in (site / "models").iterdir()}
    for recipe in (minilm_recipe, smollm2_recipe):
        assert {f["file"] for f in recipe.served(ROOT)} <= models, recipe.NAME


def test_a_stylesheet_no_page_would_hold_stops_the_build(tmp_path):
    root = project(tmp_path, {"a.md": GOOD}, copied=("templates",))
    (root / "templates" / "styles" / "extra.css").write_text(".x { color: red; }\n")
    with pytest.raises(AuthorError) as err:
        site_build.build(root, root / "site")
    assert str(err.value) == (
        "templates/styles/extra.css:1: is not in any page: add its name to CASCADE in "
        "sitebuild/pipeline/styles.py, after the files whose rules it may override"
    )
    assert not (root / "site").exists()


def test_serve_types_and_rebuild_on_change(tmp_path):
    import urllib.request

    root = project(tmp_path, {"a.md": GOOD}, copied=("templates",))  # it edits the styles
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "build.py"), "serve", "--root", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # what serve prints, read as it comes, so that the test can wait for a line with a timeout
    said = []

    def listen():
        for line in proc.stdout:
            said.append(line)

    threading.Thread(target=listen, daemon=True).start()

    def line_with(text):
        return next((line for line in said if text in line), None)

    try:
        line = wait_until(
            lambda: line_with("Many Heads is at") or proc.poll() is not None, 60, "no address"
        )
        assert isinstance(line, str), f"serve exited early: {said}"
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)

        def get(path):
            with urllib.request.urlopen(url + path, timeout=10) as r:
                return r.headers["Content-Type"], r.read()

        def policies(path):
            """The policy in the page's header, and in its <meta>."""
            with urllib.request.urlopen(url + path, timeout=10) as r:
                meta = re.search(rb'Content-Security-Policy" content="([^"]+)"', r.read())[1]
                return r.headers["Content-Security-Policy"], html.unescape(meta.decode())

        assert get("pyodide/pyodide.asm.wasm")[0] == "application/wasm"
        assert get("pyodide/pyodide.mjs")[0] == "text/javascript"
        assert get("static/main.js")[0] == "text/javascript"
        # no service worker under serve: one that leaves, never the site's, whose version changes
        # with every build (its updates held reloads); the built site keeps its own
        kind, worker = get("sw.js")
        assert kind == "text/javascript" and b"unregister()" in worker and b"fetch" not in worker
        assert b'addEventListener("fetch"' in (root / "site" / "sw.js").read_bytes()
        (root / "chapters" / "a.md").write_text(GOOD.replace("Some prose", "Freshly edited prose"))
        wait_until(
            lambda: b"Freshly edited prose" in get("test.html")[1], 20, "the site was not rebuilt"
        )
        (root / "chapters" / "a.md").write_text(GOOD.replace("::: slot", "::: slott"))
        wait_until(lambda: line_with("unknown block 'slott'"), 20, "the failed rebuild was silent")
        assert b"Freshly edited prose" in get("test.html")[1]  # the last good site is still served
        # an edited style changes the hash that lets the page's <style> apply, in both policies
        before = policies("test.html")
        assert before[0] == before[1] + "; frame-ancestors 'self'"  # framing: the header only
        (root / "chapters" / "a.md").write_text(GOOD)
        with (root / "templates" / "styles" / "site.css").open("a") as css:
            css.write("\n.edited { color: red; }\n")
        wait_until(lambda: policies("test.html")[1] != before[1], 20, "no rebuild for a style")
        wait_until(lambda: policies("test.html")[0] != before[0], 5, "the header kept the old hash")
        after = policies("test.html")
        assert after[0] == after[1] + "; frame-ancestors 'self'"
        assert b".edited {" in get("test.html")[1]
    finally:
        proc.terminate()
        proc.wait(10)


def site_files(site):
    """Every file of SITE by its path there -> its bytes."""
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


def test_a_build_that_remembers_the_last_writes_what_a_whole_build_writes(tmp_path, monkeypatch):
    """serve's builder (site_build.Memory): after an edited chapter, an edited front matter and
    a chapter taken away, it renders only the chapters edited and takes the other files from the
    site it replaces as hard links, and the site is byte for byte the one a whole build writes:
    the edited pages, the home page, the neighbour's links, the service worker, no file of a
    chapter gone. Nor does it parse the source of toymodels/ again for what the site's modules
    import, when the chapters name the same modules."""
    second = GOOD.replace('slug = "test"', 'slug = "second"').replace("order = 1", "order = 2")
    root = project(tmp_path, {"01-a.md": GOOD, "02-b.md": second})
    rendered = []
    render = site_build._render_chapter
    monkeypatch.setattr(
        site_build, "_render_chapter", lambda ch, *a: rendered.append(ch.path) or render(ch, *a)
    )
    parsed = []  # the modules of toymodels/ whose source a build read for what they import
    source = site_build.imports.source
    monkeypatch.setattr(
        site_build.imports, "source", lambda name, at: parsed.append(name) or source(name, at)
    )
    site, kept, memory = root / "site", tmp_path / "kept", site_build.Memory()

    def again(edit):
        """After EDIT, the chapters the build rendered; its site is the one a whole build
        writes, the runtime's files taken as they were."""
        runtime = (site / "pyodide" / "pyodide.asm.wasm").stat().st_ino
        edit()
        rendered.clear()
        parsed.clear()
        site_build.build(root, site, reuse=kept, memory=memory)
        assert parsed == []
        assert (site / "pyodide" / "pyodide.asm.wasm").stat().st_ino == runtime
        made = list(rendered)
        assert site_files(site) == site_files(site_build.build(root, tmp_path / "whole"))
        return made

    site_build.build(root, site, reuse=kept, memory=memory)
    a, b = root / "chapters" / "01-a.md", root / "chapters" / "02-b.md"
    edited = second.replace("Some prose", "Edited prose")
    assert again(lambda: b.write_text(edited)) == ["chapters/02-b.md"]
    assert "Edited prose" in (site / "second.html").read_text()
    title = 'title = "A renamed chapter"'
    assert again(lambda: a.write_text(GOOD.replace('title = "A test chapter"', title))) == [
        "chapters/01-a.md"
    ]
    assert "A renamed chapter" in (site / "second.html").read_text()  # its previous link
    assert again(b.unlink) == ["chapters/01-a.md"]  # its recap no longer leads anywhere
    assert not (site / "second.html").exists() and not (site / "embed" / "second").exists()


RECAP = "\n::: recap\n- One.\n- Two.\n- Three.\n:::\n"


def test_check_strict_fails_on_a_path_chapter_without_a_recap(tmp_path, capsys):
    second = GOOD.replace('slug = "test"', 'slug = "next"').replace("order = 1", "order = 2")
    root = project(
        tmp_path,
        {"a.md": GOOD.rstrip("\n") + "\n" + RECAP.replace("recap", "recap Next."), "b.md": second},
    )
    assert check.check(root, strict=False) == 0
    capsys.readouterr()
    assert check.check(root, strict=True, timed=False) == 1
    said = capsys.readouterr().err
    assert (
        "chapters/b.md:19: warning: this chapter is on the readers' path but has no recap; end "
        "it with '::: recap', three or four lines '- what the reader now knows' and ':::' (see "
        "the author guide)"
    ) in said, said
    assert "chapters/a.md" not in said  # it has its recap
    (root / "chapters" / "a.md").write_text(GOOD + RECAP)  # the path's last chapter now
    (root / "chapters" / "b.md").write_text(second.replace("order = 2", "order = 95"))
    assert check.check(root, strict=True, timed=False) == 0  # an appendix has none


def test_check_strict_fails_on_what_build_py_new_wrote_for_the_author_to_replace(tmp_path, capsys):
    root = project(tmp_path, {"a.md": GOOD + RECAP})
    path, led = scaffold.new_chapter(root, "Heads that wait")
    assert led == root / "chapters" / "a.md"
    assert check.check(root, strict=False) == 0  # the skeleton builds
    capsys.readouterr()
    assert check.check(root, strict=True, timed=False) == 1
    said = [line for line in capsys.readouterr().err.split("\n") if ": warning: " in line]
    new = path.relative_to(root).as_posix()
    wrote = "is still what `build.py new` wrote"
    assert said == [
        f"{new}:6: warning: 'One sentence for the home page: what the reader will understand "
        f"after this chapter.' {wrote}: write one sentence on what the reader will understand "
        "after this chapter",
        f"{new}:12: warning: 'Open with the question this chapter answers, in two or three "
        f"sentences.' {wrote}: open with the question this chapter answers",
        f"{new}:14: warning: '::: note How to continue' {wrote}: remove this note, written for "
        "you, not for readers",
        f"{new}:19: warning: '## A first section' {wrote}: name the section for what it explains",
        f"{new}:21: warning: 'Prose, maths such as $d_\\text{{head}} = d_\\text{{model}} / h$, "
        f"and figures go here.' {wrote}: write the section",
        f"{new}:24: warning: '- Three or four lines: what the reader now knows,' {wrote}: write "
        "what the reader now knows",
        f"{new}:25: warning: '- one idea each,' {wrote}: write what the reader now knows",
        f"{new}:26: warning: '- in words the reader learnt in this chapter.' {wrote}: write what "
        "the reader now knows",
        "chapters/a.md:21: warning: this recap still holds the sentence `build.py new` wrote "
        "when it added the chapter that follows; say in one sentence what that chapter adds",
    ], said


def test_a_build_reusing_chapters_renders_only_those_whose_sources_changed(tmp_path, monkeypatch):
    """What `build.py serve` does on a save (sitebuild/pipeline/chaptercache.py): a chapter edited
    is rendered again, the others are taken as the build before rendered them, and the site is the
    one a whole build writes; an edit to the code renders every chapter."""
    second = GOOD.replace('slug = "test"', 'slug = "second"').replace("order = 1", "order = 2")
    root = project(tmp_path, {"01-a.md": GOOD, "02-b.md": second}, copied=("templates",))
    rendered = []
    render = site_build._render_chapter
    monkeypatch.setattr(
        site_build, "_render_chapter", lambda ch, *a: rendered.append(ch.path) or render(ch, *a)
    )
    kept = tmp_path / "kept"
    site_build.build(root, root / "site", reuse=kept)
    assert rendered == ["chapters/01-a.md", "chapters/02-b.md"]
    (root / "chapters" / "02-b.md").write_text(second.replace("Some prose", "Edited prose"))
    rendered.clear()
    site_build.build(root, root / "site", reuse=kept)
    assert rendered == ["chapters/02-b.md"]
    site_build.build(root, tmp_path / "whole")  # every chapter rendered
    for page in ("index.html", "test.html", "second.html"):
        assert (root / "site" / page).read_text() == (tmp_path / "whole" / page).read_text()
    assert "Edited prose" in (root / "site" / "second.html").read_text()
    (root / "templates" / "chapter.html").write_text(
        (root / "templates" / "chapter.html").read_text() + "\n"
    )
    rendered.clear()
    site_build.build(root, root / "site", reuse=kept)
    assert rendered == ["chapters/01-a.md", "chapters/02-b.md"]
    # another project whose folders link to the same code, the same chapters in it: nothing
    # rendered again (as the tests' builds of this repository's chapters share the run's)
    (tmp_path / "other").mkdir()
    other = project(tmp_path / "other", {"01-a.md": GOOD, "02-b.md": second})
    (other / "templates").unlink()
    (other / "templates").symlink_to(root / "templates")
    (other / "chapters" / "02-b.md").write_text(second.replace("Some prose", "Edited prose"))
    rendered.clear()
    site_build.build(other, other / "site", reuse=kept)
    assert rendered == []
