"""A chapter is code, and its author is trusted like a contributor; still, a chapter cannot
make the build run what no module offers it, hang the build, publish files from outside
the tree, or put scripts, frames or redirects into a page. Each case stops the build with
file:line and what to do."""

import json
import shutil
import sys
import time
import types
from pathlib import Path

import pytest
from test_build import GOOD, broken, project

from sitebuild.authoring import check
from sitebuild.pipeline import build as site_build
from sitebuild.pipeline import cellrunner, markup, pages
from sitebuild.pipeline.chapters import AuthorError

ROOT = Path(__file__).resolve().parent.parent


def fails(tmp_path, text, message, name="a.md"):
    """Building a project whose one chapter is TEXT (str or bytes) stops with MESSAGE."""
    root = project(tmp_path, {})
    path = root / "chapters" / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    with pytest.raises(AuthorError) as err:
        site_build.build(root, root / "site")
    assert str(err.value).startswith(message), str(err.value)
    assert not (root / "site").exists()
    return root


META = "<meta http-equiv=refresh content='0;url=//example.org/'>"
NOT_ALLOWED = (
    "<meta> is not allowed in a chapter (a browser reads one in this piece's HTML); write "
    "Markdown or a block, or use one of the tags the author guide lists: abbr, br, kbd, mark, "
    "small, sub, sup"
)
NO_SCRIPT = (
    "(an attribute list such as {: name=…} included); a chapter's HTML runs no script and "
    "loads nothing"
)
PROSE = "Some prose with $x^2$ maths."
CASES = [
    (
        "a refresh after a comment that ends at once",
        broken(PROSE, f"Some <!--> {META} --> prose"),
        f"chapters/a.md:10: {NOT_ALLOWED}",
    ),
    (
        "a refresh after a comment ended by --!>",
        broken(PROSE, f"Some <!-- --!> {META} --> prose"),
        f"chapters/a.md:10: {NOT_ALLOWED}",
    ),
    (
        "a refresh between escaped backticks",
        broken(PROSE, f"Some \\`{META}\\` prose"),
        f"chapters/a.md:10: {NOT_ALLOWED}",
    ),
    (
        "a handler from an attribute list",
        broken(PROSE, "Some prose\n{: onclick=\"location='//example.org/'\" }"),
        f"chapters/a.md:11: <p> may not carry the attribute 'onclick' in a chapter {NO_SCRIPT}",
    ),
    (
        "a style from an attribute list",
        broken(PROSE, 'Some prose\n{: style="background:url(//example.org/a.png)" }'),
        f"chapters/a.md:11: <p> may not carry the attribute 'style' in a chapter {NO_SCRIPT}",
    ),
    (
        "a handler on a link from an attribute list",
        broken(PROSE, 'Some [link](#x){: onmouseover="x" } prose'),
        f"chapters/a.md:10: <a> may not carry the attribute 'onmouseover' in a chapter {NO_SCRIPT}",
    ),
    (
        "a placeholder naming the trainer",
        broken("Some prose", "Some {{ toymodels.training.train.main }} prose"),
        "chapters/a.md:10: no value 'toymodels.training.train.main': toymodels/training/ is "
        "build-only; prose reads the values of a chapter's package",
    ),
    (
        "a placeholder naming what a module does not list",
        broken("Some prose", "Some {{ toymodels.many_heads.model.weights }} prose"),
        "chapters/a.md:10: no value 'toymodels.many_heads.model.weights': prose reads only the "
        "values a module lists in PROSE_VALUES",
    ),
    (
        "a placeholder naming the package's class",
        broken("Some prose", "Some {{ toymodels.__class__ }} prose"),
        "chapters/a.md:10: no value 'toymodels.__class__': prose reads only the values a module "
        "lists in PROSE_VALUES; it lists none",
    ),
    (
        "a figure naming the trainer",
        broken("toymodels.many_heads.figure:render", "toymodels.training.train:main"),
        "chapters/a.md:13: model 'toymodels.training.train:main' is in toymodels/training/, "
        "which is build-only and never reaches the browser",
    ),
    (
        "a figure naming a function that is not render",
        broken("toymodels.many_heads.figure:render", "toymodels.many_heads.model:multi_head"),
        "chapters/a.md:13: unknown figure 'toymodels.many_heads.model:multi_head': a figure's "
        "model is a module's render function, not 'multi_head'",
    ),
    (
        "an exercise checked by the trainer",
        GOOD + "\n::: exercise Do it\ncheck: toymodels.training.train:main\n---\nx = 1\n:::\n",
        "chapters/a.md:22: check 'toymodels.training.train:main' is in toymodels/training/",
    ),
    (
        "not UTF-8",
        GOOD.encode("utf-8") + "\nCaf\xe9 au lait.\n".encode("latin-1"),
        "chapters/a.md:21: this file is not UTF-8 text (byte 0xe9 cannot be read); save it as "
        "UTF-8",
    ),
    (
        "binary",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe",
        "chapters/a.md:1: this file is not UTF-8 text",
    ),
    (
        "blocks nested 3,000 deep",
        GOOD + "\n" + "::: note\n" * 3000 + ":::\n" * 3000,
        "chapters/a.md:29: blocks nest more than 8 deep here; close some with ':::' first",
    ),
    (
        "a script",
        broken("Some prose", "Some <script>alert(1)</script> prose"),
        "chapters/a.md:10: raw HTML <script> is not allowed in a chapter",
    ),
    (
        "an image with a handler, attributes unquoted",
        broken("Some prose", "Some <kbd onclick=alert(1)>x</kbd> prose"),
        "chapters/a.md:10: raw HTML <kbd> may not carry the attribute 'onclick' (its "
        "attributes: none)",
    ),
    (
        "a frame",
        broken("Some prose", "Some prose\n\n<iframe src='https://example.org/'></iframe>"),
        "chapters/a.md:12: raw HTML <iframe> is not allowed in a chapter",
    ),
    (
        "a refresh to another origin",
        broken(
            "Some prose", "<meta http-equiv=refresh content='0;url=https://example.org'>\n\nSome"
        ),
        "chapters/a.md:10: raw HTML <meta> is not allowed in a chapter",
    ),
    (
        "a javascript: link",
        broken("Some prose", "Some [prose](javascript:alert(1))"),
        "chapters/a.md:10: the address 'javascript:alert(1)' is not allowed",
    ),
    (
        "a link to a script in TeX",
        broken(PROSE, r"Some $\href{javascript:alert(1)}{x}$ prose"),
        "chapters/a.md:10: the address 'javascript:alert(1)' is not allowed",
    ),
    (
        "a style in TeX",
        broken(PROSE, "Some prose\nwith $\\style{background:url(//example.org/a.png)}{x}$"),
        "chapters/a.md:11: <mrow> may not carry the attribute 'style' in a chapter (TeX's "
        "\\style included); a chapter's HTML runs no script and loads nothing",
    ),
    (
        "HTML in the sources",
        broken('"Someone (2020). A paper."', '"Someone (2020). <img src=x onerror=alert(1)>"'),
        "chapters/a.md:7: raw HTML <img> is not allowed in a chapter",
    ),
]


@pytest.mark.parametrize("name,text,message", CASES, ids=[c[0] for c in CASES])
def test_a_hostile_chapter_stops_the_build(tmp_path, name, text, message):
    fails(tmp_path, text, message)


def test_allowed_raw_html_and_a_byte_order_mark_build(tmp_path):
    text = "\ufeff" + broken(
        "Some prose", "Press <kbd>Ctrl</kbd>+<kbd>Enter</kbd>, H<sub>2</sub>O, <!-- a note -->"
    )
    root = project(tmp_path, {"a.md": text})
    html = (site_build.build(root, root / "site") / "test.html").read_text()
    assert "Press <kbd>Ctrl</kbd>+<kbd>Enter</kbd>, H<sub>2</sub>O" in html


# latex2mathml wrote the text of \\text{…} as markup, put into the page after the
# chapter's HTML was checked: this line sent every reader away, from prose and captions alike
TEX_REFRESH = r'$\text{<select><meta/http-equiv="refresh"/content="2;url=http://127.0.0.2:9/">}$'


def test_text_in_tex_reaches_the_page_as_text(tmp_path):
    text = broken(PROSE, f"Some prose with {TEX_REFRESH} maths.")
    text = text.replace("caption: A caption.", f"caption: A caption with {TEX_REFRESH}")
    root = project(tmp_path, {"a.md": text})
    site = site_build.build(root, root / "site")
    shown = (
        '<mtext>&lt;select&gt;&lt;meta/http-equiv="refresh"/content="2;url=http://127.0.0.2:9/"'
        "&gt;</mtext>"
    )
    for page, times in (("test.html", 2), ("embed/test/three-heads.html", 1)):
        html = (site / page).read_text(encoding="utf-8")
        assert html.count(shown) == times, page
        assert "<select" not in html and "<meta/" not in html, page


@pytest.mark.parametrize(
    "tex,shown",
    [
        (r"\textbf{<b>&}", '<mtext mathvariant="bold">&lt;b&gt;&amp;</mtext>'),
        (
            r"\mbox{</p><img/src=x>}",
            '<mstyle displaystyle="false" scriptlevel="0"><mtext>&lt;/p&gt;&lt;img/src=x&gt;'
            "</mtext></mstyle>",
        ),
        (r"a & b", "<mi>a</mi><mi>&amp;</mi><mi>b</mi>"),
        (r'\color{"><meta>}x', '<mstyle mathcolor="&quot;&gt;&lt;meta&gt;"><mi>x</mi></mstyle>'),
        (r"x \le \alpha", "<mi>x</mi><mo>\u2264</mo><mi>\u03b1</mi>"),
    ],
)
def test_tex_text_and_attributes_are_escaped(tex, shown):
    """What latex2mathml copies from TeX (text, a colour) is escaped once; its own symbols are
    the characters they stand for."""
    html = markup.Prose("chapters/a.md").inline(f"${tex}$", 1)
    assert html == (
        f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline"><mrow>{shown}'
        "</mrow></math>"
    )


def test_a_chapter_that_links_out_of_the_tree(tmp_path):
    root = project(tmp_path, {})
    outside = tmp_path / "outside.md"
    outside.write_text(GOOD)
    (root / "chapters" / "a.md").symlink_to(outside)
    with pytest.raises(AuthorError, match=r"^chapters/a.md:1: this chapter is a symbolic link"):
        site_build.build(root, root / "site")


def test_a_data_file_that_links_out_of_the_tree(tmp_path):
    """A link in toymodels/data would publish any file of the machine (/etc/passwd did)."""
    package = tmp_path / "toymodels"
    shutil.copytree(ROOT / "toymodels", package, ignore=shutil.ignore_patterns("__pycache__"))
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the web")
    (package / "data" / "passwd").symlink_to(secret)
    root = tmp_path / "proj"
    (root / "chapters").mkdir(parents=True)
    (root / "templates").symlink_to(ROOT / "templates")
    (root / "toymodels").symlink_to(package)
    (root / "chapters" / "a.md").write_text(GOOD)
    with pytest.raises(AuthorError, match=r"^toymodels/data/passwd:1: is a symbolic link"):
        site_build.build(root, root / "site")
    assert not (root / "site").exists()


def test_an_endless_cell_stops_the_build(tmp_path, monkeypatch):
    monkeypatch.setattr(pages, "CELL_SECONDS", 1)
    text = GOOD + "\n```python live\nx = 0\nwhile True:\n    x += 1\n```\n"
    start = time.monotonic()
    fails(
        tmp_path,
        text,
        "chapters/a.md:22: this live cell ran for more than 1 s at build time (an endless loop?)",
    )
    assert time.monotonic() - start < 30


def test_an_endless_cell_that_catches_everything_still_stops(tmp_path, monkeypatch):
    monkeypatch.setattr(pages, "CELL_SECONDS", 1)
    code = "while True:\n    try:\n        pass\n    except Exception:\n        pass"
    fails(tmp_path, GOOD + f"\n```python live\n{code}\n```\n", "chapters/a.md:22: this live cell")


# cells that a signal cannot stop, or that end the build's Python: each runs in a child process
# killed after its time (sitebuild/pipeline/cellrunner.py)
UNSTOPPABLE = {
    "a bare except, SIGALRM ignored": "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)"
    "\nwhile True:\n    try:\n        pass\n    except:\n        pass",
    "the timer cleared": "import signal\nsignal.setitimer(signal.ITIMER_REAL, 0)\nwhile True:\n"
    "    pass",
}


@pytest.mark.parametrize("code", UNSTOPPABLE.values(), ids=UNSTOPPABLE)
def test_a_cell_that_a_signal_cannot_stop_is_killed(tmp_path, monkeypatch, code):
    monkeypatch.setattr(pages, "CELL_SECONDS", 1)
    fails(
        tmp_path,
        GOOD + f"\n```python live\nx = 1\n```\n\n```python live\n{code}\n```\n",
        "chapters/a.md:26: this live cell ran for more than 1 s at build time (an endless loop?)",
    )


ENDINGS = {
    "os._exit(0)": "exit status 0",
    "os.kill(os.getpid(), 9)": "killed by signal 9",
}


@pytest.mark.parametrize("code,how", ENDINGS.items(), ids=ENDINGS)
def test_a_cell_that_ends_its_python_is_named(tmp_path, code, how):
    fails(
        tmp_path,
        GOOD + f"\n```python live\nimport os\n{code}\n```\n",
        f"chapters/a.md:22: this live cell ended the Python that runs the page's cells ({how}); "
        "a cell may not end or kill its process (os._exit, os.kill, …), since the build runs "
        "every cell",
    )


def test_markdown_that_reads_slowly_stops_the_build(tmp_path, monkeypatch):
    monkeypatch.setattr(markup, "MARKDOWN_SECONDS", 1)
    text = broken("Some prose", "Some prose " + "[" * 8000)
    start = time.monotonic()
    fails(
        tmp_path,
        text,
        "chapters/a.md:9: Markdown took more than 1 s to read the text from this line",
    )
    assert time.monotonic() - start < 30


def test_a_placeholder_naming_a_function_that_needs_arguments(tmp_path, monkeypatch):
    from toymodels.split_attend import param_count

    monkeypatch.setattr(param_count, "PROSE_VALUES", ("attention_params",))
    fails(
        tmp_path,
        broken("Some prose", "{{ toymodels.split_attend.param_count.attention_params }}"),
        "chapters/a.md:10: 'toymodels.split_attend.param_count.attention_params' needs arguments "
        "(d_model, n_head); a value for prose takes none",
    )


# what a page may hold that loads from another origin or sends the reader away (the
# misses of a probe of the build first), each as `check` must report it
OFF_SITE = [
    ("<meta http-equiv=refresh content='0; url=https://example.org/'>", "a <meta> refresh"),
    ('<meta http-equiv="refresh" content="0">', "a <meta> refresh"),
    ('<meta http-equiv="Refresh" content="0;https://example.org/">', "a <meta> refresh"),
    ('<meta http-equiv=refresh content="0;url=\\\\example.org/">', "a <meta> refresh"),
    ('<meta http-equiv=refresh content="0;url=/\\example.org/">', "a <meta> refresh"),
    ('<meta http-equiv=refresh content="0;url=/\t/example.org/">', "a <meta> refresh"),
    ("<!--> <meta http-equiv=refresh content='0;url=//example.org/'> -->", "a <meta> refresh"),
    ("<!-- --!> <meta http-equiv=refresh content='0;url=//example.org/'> -->", "a <meta> refresh"),
    ('<base href="https://example.org/">', "a <base>"),
    ('<img src="https://example.org/a.png">', "loads https://example.org/a.png"),
    ("<img src='https://example.org/a.png'>", "loads https://example.org/a.png"),
    ("<img src=https://example.org/a.png>", "loads https://example.org/a.png"),
    ("<IMG SRC=//example.org/a.png>", "loads //example.org/a.png"),
    ("<img src=\\\\example.org/a.png>", "loads \\\\example.org/a.png"),
    ("<img src='/\\example.org/a.png'>", "loads /\\example.org/a.png"),
    ("<img src=' h\ttps://example.org/a.png'>", "loads h\ttps://example.org/a.png"),
    ('<img srcset="a.png 1x, https://example.org/b.png 2x">', "loads https://example.org/b.png"),
    ("<script src = 'https://example.org/x.js'></script>", "loads https://example.org/x.js"),
    ('<form action="https://example.org/f"><button>Go</button></form>', "loads https://exam"),
    ('<form><button formaction="//example.org/f">Go</button></form>', "loads //example.org/f"),
    ('<a href="#x" ping="https://example.org/p">x</a>', "loads https://example.org/p"),
    ('<svg><use href="https://example.org/s.svg#a"/></svg>', "loads https://example.org/s.svg"),
    ('<svg><use xlink:href="//example.org/s.svg#a"/></svg>', "loads //example.org/s.svg#a"),
    ('<svg><image href="https://example.org/a.png"/></svg>', "loads https://example.org/a.png"),
    ('<svg><feImage href="https://example.org/a.png"/></svg>', "loads https://example.org/a"),
    ('<table background="https://example.org/a.png"></table>', "loads https://example.org/a"),
    ('<link rel=prefetch href="https://example.org/a">', "loads https://example.org/a"),
    ("<style>p { background: url( 'https://example.org/a.png') }</style>", "loads https://exa"),
    ('<style>@import "https://example.org/a.css";</style>', "loads https://example.org/a.css"),
    ('<p style="background:url(//example.org/a.png)">x</p>', "loads //example.org/a.png"),
    ('<svg><rect fill="url(https://example.org/f.svg#g)"/></svg>', "loads https://example.org/f"),
    ('<p onclick="location=1">x</p>', "<p> carries onclick"),
    ('<iframe src="https://example.org/"></iframe>', "loads https://example.org/"),
    ('<object data="https://example.org/o"></object>', "loads https://example.org/o"),
    ('<video poster="https://example.org/p.png"></video>', "loads https://example.org/p.png"),
    ('<input type=image src="https://example.org/i.png">', "loads https://example.org/i.png"),
    ('<a href="#x"><img src="javascript:alert(1)"></a>', "loads javascript:alert(1)"),
    ('<svg><script href="https://example.org/s.js"></script></svg>', "loads https://example"),
    # what Chromium keeps in a <select> and html5lib drops
    (
        '<select><meta/http-equiv="refresh"/content="2;url=http://127.0.0.2:9/"></select>',
        "line 1: <meta> inside a <select>, which Chromium keeps and this check's parser drops",
    ),
    ('<select><option>a</option><base href="//example.org/"></select>', "line 1: <base> inside"),
    ("<select><img src=//example.org/a.png></select>", "line 1: <img> inside a <select>"),
    ('<select>\n<iframe src="//example.org/"></select>', "line 2: <iframe> inside"),
]


@pytest.mark.parametrize("html,said", OFF_SITE, ids=[str(i) for i in range(len(OFF_SITE))])
def test_check_reads_html_as_a_browser_does(tmp_path, html, said):
    (tmp_path / "p.html").write_text(f"<!doctype html><p>{html}</p>")
    found = check.foreign(tmp_path)
    assert [page for page, _ in found] == ["p.html"], found
    assert found[0][1].startswith(said), found


@pytest.mark.parametrize("html,said", OFF_SITE, ids=[str(i) for i in range(len(OFF_SITE))])
def test_check_reads_the_builds_stored_answers(tmp_path, html, said):
    """A figure's state the build stored (prerendered/*.json) is markup a tap puts in the page."""
    (tmp_path / "prerendered").mkdir()
    answers = {"fig": {'[["word", "3"]]': {"html": f"<p>{html}</p>", "slots": {}}}}
    (tmp_path / "prerendered" / "a.0123456789ab.json").write_text(json.dumps(answers))
    found = check.foreign(tmp_path)
    assert found and {page for page, _ in found} == {"prerendered/a.0123456789ab.json"}, found
    assert any(what.startswith(said) for _, what in found), found


def test_check_lets_the_sites_own_markup_pass(tmp_path):
    page = (
        '<!doctype html><link rel=stylesheet href="static/a.css"><img src="a.png" srcset="b.png '
        '2x"><form action="#x"><a href="https://example.org/">out</a></form><svg><rect '
        'fill="url(#g)"/><use href="#m"/></svg><style>p{background:url(data:image/png;base64,'
        "AA==)}</style><textarea><meta http-equiv=refresh content=0></textarea>"
    )
    (tmp_path / "p.html").write_text(page)
    assert check.foreign(tmp_path) == []


def test_a_figure_that_returns_no_dict(monkeypatch):
    module = types.ModuleType("toymodels.listing_figure")
    module.render = lambda state, fid: ["<p>", "not a dict"]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with pytest.raises(AuthorError) as caught:
        pages.call_figure("chapters/a.md", 13, "toymodels.listing_figure:render", "f", {}, ROOT)
    assert str(caught.value) == (
        "chapters/a.md:13: figure 'toymodels.listing_figure:render' returned a list, not a dict, "
        "given the state {} (from the chapter); a figure returns "
        "toymodels.page.figure.result(html, state, slots=..., summary=...) or failure(state, error)"
    )


# a figure's first view goes into its chapter and embed page as the build drew it,
# where no sanitizer sees it: it may hold only what the page's sanitizer keeps
KIT_ONLY = [
    (
        '<select name="a"><meta/http-equiv="refresh"/content="2;url=http://127.0.0.2:9/">'
        "<option>1</option></select>",
        "<meta> inside a <select>, which browsers read differently; a <select> holds only "
        "<option> and <optgroup> (line 1 of its markup)",
    ),
    (
        '<p>Hi</p><iframe src="//example.org/"></iframe>',
        "<iframe>, an element the figure kit does not make",
    ),
    (
        '<p><a href="https://example.org/">out</a></p>',
        "<a href='https://example.org/'>, a link out of the figure (an href starts with #)",
    ),
    (
        '<svg><rect fill="url(//example.org/f.svg#g)"/></svg>',
        "<rect fill='url(//example.org/f.svg#g)'>, a value with a quote, colon, slash or escape",
    ),
    ('<p name="length">x</p>', "<p name='length'>, a name on what is not a form control"),
    ("<p formaction=x>x</p>", "<p formaction='x'>, an attribute the figure kit does not write"),
]


@pytest.mark.parametrize("html,said", KIT_ONLY, ids=[str(i) for i in range(len(KIT_ONLY))])
def test_a_figure_may_write_only_what_the_sanitizer_keeps(monkeypatch, html, said):
    from toymodels.page import figure

    module = types.ModuleType("toymodels.hostile_figure")
    module.render = lambda state, fid: figure.result(html, state, summary="A probe.")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with pytest.raises(AuthorError) as caught:
        pages.call_figure("chapters/a.md", 13, "toymodels.hostile_figure:render", "f", {}, ROOT)
    assert str(caught.value).startswith(
        f"chapters/a.md:13: figure 'toymodels.hostile_figure:render' wrote {said}"
    ), str(caught.value)
    assert str(caught.value).endswith(
        "given the state {} (from the chapter); the page's sanitizer "
        "(templates/static/sanitize.js) keeps only what the figure kit makes, so build the "
        "figure from toymodels/page/kit/ and toymodels.page.html"
    ), str(caught.value)


def test_a_value_with_every_digit_of_a_float_stops_the_build(tmp_path, monkeypatch):
    """A numpy mean prints 17 digits (0.30000000000000004) into prose: the author rounds it."""
    import numpy as np

    from toymodels.many_heads import model

    monkeypatch.setattr(model, "CLOCK", np.float64(0.1) + np.float64(0.2))
    fails(
        tmp_path,
        broken("Some prose", "Some {{ toymodels.many_heads.model.CLOCK }} prose"),
        "chapters/a.md:10: 'toymodels.many_heads.model.CLOCK' gave the number "
        "0.30000000000000004, which prose would print with every digit; return it rounded, as "
        'text, e.g. f"{x:.2f}" (a float is shown as it is only with at most 6 significant '
        "digits)",
    )


def test_short_numbers_and_escaped_braces_read_as_written(tmp_path, monkeypatch):
    import numpy as np

    from toymodels.many_heads import model

    monkeypatch.setattr(model, "CLOCK", np.float32(6.9))
    monkeypatch.setattr(model, "TURN", np.int64(12345))
    text = broken(
        "Some prose",
        r"\{{ not a value }}, {{ toymodels.many_heads.model.CLOCK }} and "
        "{{ toymodels.many_heads.model.TURN }} of",
    )
    root = project(tmp_path, {"a.md": text})
    html = (site_build.build(root, root / "site") / "test.html").read_text()
    assert "<p>{{ not a value }}, 6.9 and 12,345 of" in html


def test_a_limit_inside_another_leaves_the_outer_one_running():
    """A call into an author's code limited inside another limit (a module imported while a
    value is read) gives the outer limit back what is left of its time."""
    from sitebuild.authoring import limits

    start = time.monotonic()
    with pytest.raises(limits.Overrun), limits.time_limit(1):
        with limits.time_limit(5):
            pass
        while time.monotonic() - start < 10:
            pass
    assert time.monotonic() - start < 5


def test_a_page_rendered_again_asks_its_cells_only_what_changed():
    """serve's builder renders a page again with its cells' last answers (cellrunner.Replay):
    the same cells start no Python; from the first cell that changed, a Python is started and
    given the cells before it first, so that it holds their variables."""
    replay = cellrunner.Replay()

    def render(*cells):
        process = cellrunner.CellProcess(replay)
        try:
            said = [process.run(code, "page", None, 20)["stdout"] for code in cells]
            return said, process.proc is not None
        finally:
            process.close()

    assert render("x = 2", "print(x * 3)") == (["", "6\n"], True)
    assert render("x = 2", "print(x * 3)") == (["", "6\n"], False)
    assert render("x = 2", "print(x * 5)") == (["", "10\n"], True)
    assert render("x = 2", "print(x * 5)", "print(x + 1)") == (["", "10\n", "3\n"], True)
