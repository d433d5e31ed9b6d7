"""A new author's figure module, broken the ways a new author breaks it: each mistake stops the
build with `toymodels/…py:LINE: message`, the figure block's line and how to fix it, and leaves
site/ as it was; in the browser, a figure that raises says so and logs the traceback.

The module under test is a two-back head written as the author guide teaches, in a package of
its own (toymodels/two_back/) in a temporary folder that the toymodels package is extended by
for one test, so the real toymodels/ is never written to."""

import importlib
import io
import re
import subprocess
import sys
import textwrap
import zipfile

import pytest
from conftest import open_ready, without_build_answers
from playwright.sync_api import expect
from test_build import GOOD, ROOT, project

import toymodels
from sitebuild import build as site_build
from sitebuild.chapters import AuthorError

FIGURE = textwrap.dedent('''\
    """A two-back head: every word looks at the word two before it."""

    from ..page.figure import merge, result
    from ..page.html import esc

    SENTENCE = "The cat sat on the mat"
    DEFAULTS = {"sentence": SENTENCE, "word": "2", "view": "shares"}
    CHOICES = {"view": ("scores", "shares")}
    WORD_FIELD = "word"


    def render(state=None, fid="two-back"):
        state = merge(DEFAULTS, state)
        words = state["sentence"].split()
        i = int(state["word"])
        back = words[i - 2] if i >= 2 else "itself"
        buttons = "".join(
            f'<button data-key="word" data-value="{j}">{esc(w)}</button>'
            for j, w in enumerate(words)
        )
        return result(buttons, state, summary=f"{words[i]} looks at {back}.")
    ''')
CHAPTER = GOOD.replace("three-heads", "two-back").replace("many_heads", "two_back")
CHAPTER = CHAPTER.replace("::: slot two-back shares\n:::\n", "")
BLOCK = "chapters/a.md:13"  # the line 'model: toymodels.two_back.figure:render'
MODEL = "toymodels.two_back.figure:render"


@pytest.fixture
def author(tmp_path, monkeypatch):
    """write(figure_source) -> a project whose chapter draws toymodels.two_back.figure, the
    module holding FIGURE_SOURCE, with a previous build in its site/; write(source, NAME)
    writes toymodels/two_back/NAME instead."""
    extra = tmp_path / "extra"
    (extra / "two_back").mkdir(parents=True)
    (extra / "two_back" / "__init__.py").write_text("")
    monkeypatch.setattr(toymodels, "__path__", [*toymodels.__path__, str(extra)])
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # a module rewritten within a second
    root = project(tmp_path, {"a.md": CHAPTER})

    def write(source, name="figure.py"):
        for module in [m for m in sys.modules if m.startswith("toymodels.two_back")]:
            del sys.modules[module]
        (extra / "two_back" / name).write_text(source)
        importlib.invalidate_caches()
        return root

    site_build.build(write(FIGURE), root / "site")  # the previous, good build
    yield write
    for name in [m for m in sys.modules if m.startswith("toymodels.two_back")]:
        del sys.modules[name]


def stops(root, message):
    """Building ROOT stops with exactly MESSAGE and leaves the previous site/ as it was."""
    before = {p: p.read_bytes() for p in (root / "site").rglob("*.html")}
    with pytest.raises(AuthorError) as caught:
        site_build.build(root, root / "site")
    assert str(caught.value) == message
    assert {p: p.read_bytes() for p in (root / "site").rglob("*.html")} == before


def broken(old, new):
    assert old in FIGURE
    return FIGURE.replace(old, new, 1)


MISTAKES = [
    (
        "a syntax error",
        broken('def render(state=None, fid="two-back"):', 'def render(state=None, fid="two-back")'),
        f"toymodels/two_back/figure.py:12: Python cannot read this file: expected ':' (needed by "
        f"{BLOCK}); fix the code at this line or above it",
    ),
    (
        "a bracket never closed",
        broken('words = state["sentence"].split()', 'words = (state["sentence"].split()'),
        f"toymodels/two_back/figure.py:14: Python cannot read this file: '(' was never closed "
        f"(needed by {BLOCK}); fix the code at this line or above it",
    ),
    (
        "an import misspelt",
        broken("from ..page.html import esc", "import nump"),
        "toymodels/two_back/figure.py:4: importing this module raised ModuleNotFoundError: No "
        f"module named 'nump' (needed by {BLOCK}); check the name: a module here "
        "may import numpy, the standard library and toymodels/",
    ),
    (
        "a name the kernel lacks",
        broken("from ..page.html import esc", "from ..page.html import esk"),
        "toymodels/two_back/figure.py:4: importing this module raised ImportError: cannot import "
        f"name 'esk' from 'toymodels.page.html' (needed by {BLOCK}); check the "
        "name: a module here may import numpy, the standard library and toymodels/",
    ),
    (
        "module-level code that raises",
        broken('{"sentence": SENTENCE,', '{"sentence": SENTENCES,'),
        "toymodels/two_back/figure.py:7: importing this module raised NameError: name "
        f"'SENTENCES' is not defined (needed by {BLOCK}); fix the code at this "
        "line, which runs when the module is imported",
    ),
    (
        "render raising on the chapter's state",
        broken("back = words[i - 2] if i >= 2", "back = words[i + 9] if i >= 2"),
        f"toymodels/two_back/figure.py:16: figure '{MODEL}' ({BLOCK}) raised IndexError: list "
        'index out of range, given the state {} (from the chapter); render({}, "two-back") in '
        "Python shows the whole traceback",
    ),
    (
        "render raising on a word the reader taps",
        broken("back = words[i - 2] if i >= 2", "back = words[i + 1] if i >= 2"),
        f"toymodels/two_back/figure.py:16: figure '{MODEL}' ({BLOCK}) raised IndexError: list "
        'index out of range, given the state {"word": "5"} (a word of its WORD_FIELD); '
        'render({"word": "5"}, "two-back") in Python shows the whole traceback',
    ),
    (
        "render raising on a step",
        broken(
            'i = int(state["word"])',
            'i = int(state["word"])\n    scale = 1 / (state["view"] == "shares")',
        ),
        f"toymodels/two_back/figure.py:16: figure '{MODEL}' ({BLOCK}) raised ZeroDivisionError: "
        'division by zero, given the state {"view": "scores"} (one of its CHOICES); '
        'render({"view": "scores"}, "two-back") in Python shows the whole traceback',
    ),
    (
        "no summary",
        broken('summary=f"{words[i]} looks at {back}."', 'summary=""'),
        f"toymodels/two_back/figure.py:12: figure '{MODEL}' ({BLOCK}) returned an empty summary "
        "(what screen readers hear: one line on what the figure shows now), given the state {} "
        "(from the chapter); a figure returns toymodels.page.figure.result(html, state, "
        "slots=..., summary=...) or failure(state, error)",
    ),
    (
        "a summary only for some words",
        broken('summary=f"{words[i]} looks at {back}."', 'summary=f"{back}." if i != 3 else ""'),
        f"toymodels/two_back/figure.py:12: figure '{MODEL}' ({BLOCK}) returned an empty summary "
        '(what screen readers hear: one line on what the figure shows now), given the state {"word'
        '": "3"} (a word of its WORD_FIELD); a figure returns toymodels.page.figure.result(html, '
        "state, slots=..., summary=...) or failure(state, error)",
    ),
    (
        "a declared state refused",
        broken(
            '    words = state["sentence"].split()\n',
            '    words = state["sentence"].split()\n    if state["view"] == "scores":\n'
            '        return failure(state, "No scores yet.")\n',
        ).replace("import merge, result", "import failure, merge, result"),
        f"toymodels/two_back/figure.py:8: figure '{MODEL}' ({BLOCK}) refused the state "
        '{"view": "scores"} (one of its CHOICES), saying "No scores yet."; every state the '
        "module declares must draw, so fix render or this declaration",
    ),
    (
        "CHOICES naming no field",
        broken('CHOICES = {"view"', 'CHOICES = {"viw"'),
        "toymodels/two_back/figure.py:8: CHOICES names 'viw', which is not a field of DEFAULTS "
        "(did you mean 'view'?); the fields are sentence, word, view",
    ),
    (
        "CHOICES holding a string",
        broken('("scores", "shares")', '"scores"'),
        "toymodels/two_back/figure.py:8: CHOICES must map each field to a tuple of its values "
        'as strings, e.g. CHOICES = {"view": ("scores", "softmax")}',
    ),
    (
        "WORD_FIELD naming no field",
        broken('WORD_FIELD = "word"', 'WORD_FIELD = "wrd"'),
        "toymodels/two_back/figure.py:9: WORD_FIELD names 'wrd', which is not a field of "
        "DEFAULTS (did you mean 'word'?); the fields are sentence, word, view",
    ),
    (
        "WORD_FIELD with no word buttons",
        broken('data-key="word"', 'data-key="pick"'),
        "toymodels/two_back/figure.py:9: WORD_FIELD names 'word', but the figure drawn with its "
        'DEFAULTS has no control data-key="word"; name the field its word buttons set',
    ),
]


@pytest.mark.parametrize("name,source,message", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_broken_figure_module_stops_the_build_at_its_line(author, name, source, message):
    stops(author(source), message)


def test_a_prose_value_or_a_check_from_a_module_python_cannot_read(author):
    root = author('PROSE_VALUES = ("N",)\nN = (1\n', "values.py")
    chapter = root / "chapters" / "a.md"
    chapter.write_text(CHAPTER.replace("Some prose", "Some {{ toymodels.two_back.values.N }}"))
    stops(
        root,
        "toymodels/two_back/values.py:2: Python cannot read this file: '(' was never closed "
        "(needed by chapters/a.md:10); fix the code at this line or above it",
    )
    author("import nump\n\n\ndef check(env):\n    return True, 'Yes.'\n", "checks.py")
    exercise = "\n::: exercise Do it\ncheck: toymodels.two_back.checks:check\n---\nx = 1\n:::\n"
    chapter.write_text(CHAPTER + exercise)
    stops(
        root,
        "toymodels/two_back/checks.py:1: importing this module raised ModuleNotFoundError: No "
        "module named 'nump' (needed by chapters/a.md:20); check the name: a module here may "
        "import numpy, the standard library and toymodels/",
    )


def test_the_module_as_written_builds_and_is_drawn_for_every_declared_state(author, monkeypatch):
    root = author(FIGURE)
    from toymodels.two_back import figure

    drawn = []
    render = figure.render
    monkeypatch.setattr(
        figure, "render", lambda state, fid: drawn.append(state) or render(state, fid)
    )
    site_build.build(root, root / "site")
    words = [{"word": str(i)} for i in range(6)]
    exercised, prerendered = drawn[:10], drawn[10:]
    assert exercised == [{}, {}, {"view": "scores"}, {"view": "shares"}, *words]
    # then sitebuild/prerender.py: the default view and the states one tap from it (each word,
    # the nearest the shown one first: the next, then the previous)
    default = prerendered[0]
    at = int(default["word"])
    near = sorted((i for i in range(6) if i != at), key=lambda i: (abs(i - at), i < at))
    assert prerendered == [default, *({**default, "word": str(i)} for i in near)]
    drawn.clear()
    site_build.build(root, root / "site")  # tried once per process: the chapter's state only
    assert drawn == [{}, *prerendered]


def test_the_cli_prints_the_line_and_no_traceback(tmp_path):
    """`python build.py` with a figure module that Python cannot read: one line, exit 1."""
    extra = tmp_path / "extra" / "two_back"
    extra.mkdir(parents=True)
    (extra / "__init__.py").write_text("")
    (extra / "figure.py").write_text(broken('render(state=None, fid="two-back"):', "render("))
    root = project(tmp_path, {"a.md": CHAPTER})
    script = (
        "import sys, toymodels; toymodels.__path__.append(sys.argv[1]); "
        "sys.argv[1:] = ['--root', sys.argv[2]]; import build; sys.exit(build.main())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "extra"), str(root)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr == (
        "toymodels/two_back/figure.py:12: Python cannot read this file: '(' was never closed "
        f"(needed by {BLOCK}); fix the code at this line or above it\n"
    )
    assert not (root / "site").exists()


def test_the_guide_documents_every_message():
    guide = (ROOT / "chapters" / "90-author-guide.md").read_text(encoding="utf-8")
    for name in (
        "a syntax error",
        "an import misspelt",
        "render raising on a word the reader taps",
        "no summary",
        "a declared state refused",
        "WORD_FIELD with no word buttons",
    ):
        message = next(m for n, _, m in MISTAKES if n == name)
        text = message.split(": ", 1)[1]
        assert f"`{text}`" in guide, text


# ---- in the browser ----------------------------------------------------------------------------


@pytest.mark.browser
def test_a_figure_that_raises_in_the_browser_logs_its_traceback(new_page, base_url):
    """The reader sees what failed; the console holds the Python traceback for the author."""
    page = new_page(service_workers="block")  # so that the route sees the worker's requests

    def raise_on_word_1(route):
        """The site's Python comes as one archive (py/HASH/python.zip): the figure's file in it
        raises on word 1."""
        line = '    i, view = int(state["word"]), state["view"]\n'
        failing = line + '    if i == 1:\n        raise ZeroDivisionError("word 1 divides")\n'
        built = zipfile.ZipFile(io.BytesIO(route.fetch().body()))
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as changed:
            for info in built.infolist():
                data = built.read(info)
                if info.filename == "toymodels/guide/first_word.py":
                    assert line in data.decode()
                    data = data.decode().replace(line, failing, 1).encode()
                changed.writestr(info, data)
        route.fulfill(body=out.getvalue(), content_type="application/zip")

    page.context.route(re.compile(r".*/python\.zip(\?.*)?$"), raise_on_word_1)
    # the build's answers, drawn until Python has answered for the figure, come from the code as
    # it was built, where word 1 does not raise
    without_build_answers(page.context)
    page.watch.expect(r"^Figure #first-word \(toymodels\.guide\.first_word:render\) failed")
    open_ready(page, base_url + "author-guide.html")
    with page.expect_console_message(lambda m: m.type == "error") as logged:
        page.click("#first-word [data-fk=w1]")
    text = logged.value.text
    assert text.startswith(
        'Figure #first-word (toymodels.guide.first_word:render) failed with the state {"sentence":'
    ), text
    assert re.search(
        r'Traceback \(most recent call last\):\n(.|\n)*toymodels/guide/first_word\.py", line \d+, '
        r"in render\n(.|\n)*ZeroDivisionError: word 1 divides\s*$",
        text,
    ), text
    status = page.locator("#first-word [data-fig-status]")
    expect(status).to_have_text(
        "The figure's Python code failed: ZeroDivisionError: word 1 divides"
    )
