"""A new author's figure module, broken the ways a new author breaks it: each mistake stops the
build with `toymodels/…py:LINE: message`, the figure block's line and how to fix it, and leaves
site/ as it was; in the browser, a figure that raises says so and logs the traceback.

The module under test is a two-back head written as the author guide teaches, in a package of
its own (toymodels/two_back/) in a temporary folder that the toymodels package is extended by
for one test, so the real toymodels/ is never written to."""

import contextlib
import importlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
import warnings
import zipfile

import pytest
from conftest import open_ready, wait_until, without_build_answers
from playwright.sync_api import expect
from test_build import GOOD, ROOT, project
from test_build import MISTAKES as CHAPTER_MISTAKES

import toymodels
from sitebuild.authoring import browser, budgets, check, limits
from sitebuild.lms import scorm
from sitebuild.pipeline import build as site_build
from sitebuild.pipeline import cellrunner, pages, prerender
from sitebuild.pipeline.chapters import AuthorError

# its builds of projects, worth this many browser tests in the order workers take
# modules (conftest.py), which starts it early rather than last
SCHEDULE_WEIGHT = 20

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
        i = int(state["word"]) if state["word"] in map(str, range(len(words))) else 2
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
        for module in [m for m in browser.READS if m.startswith("toymodels.two_back")]:
            del browser.READS[module]  # what the module read as it was before
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
            '    words = state["sentence"].split()\n',
            '    words = state["sentence"].split()\n    scale = 1 / (state["view"] == "shares")\n',
        ),
        f"toymodels/two_back/figure.py:15: figure '{MODEL}' ({BLOCK}) raised ZeroDivisionError: "
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


def line_of(path, text):
    """The line of toymodels/PATH that holds TEXT: where the kit or a model raises."""
    lines = (ROOT / "toymodels" / path).read_text(encoding="utf-8").split("\n")
    return next(n for n, line in enumerate(lines, 1) if text in line)


MISTAKES += [
    (
        "an answer that changes for the same state",
        broken(
            'return result(buttons, state, summary=f"{words[i]} looks at {back}.")',
            "CALLS.append(1)\n    return result(buttons, state, "
            'summary=f"{words[i]} looks at {back} {len(CALLS)}.")',
        ).replace('WORD_FIELD = "word"', 'WORD_FIELD = "word"\nCALLS = []'),
        f"toymodels/two_back/figure.py:13: figure '{MODEL}' ({BLOCK}) drew the state {{}} (from "
        'the chapter) twice and gave two answers: its summary is …"sat looks at The 1."… once '
        'and …"sat looks at The 2."… the next time; a figure must give the same answer for the '
        "same state, since the page keeps and reuses answers: seed any randomness "
        "(numpy.random.default_rng(0)) and change no value another call reads",
    ),
    (
        "an inline style",
        broken('<button data-key="word"', '<button style="color: red" data-key="word"'),
        f"toymodels/two_back/figure.py:12: figure '{MODEL}' ({BLOCK}) wrote <button style=…>, "
        "given the state {} (from the chapter); the pages' security policy ignores inline "
        "styles and scripts: use the classes of templates/styles/site.css "
        "(toymodels.page.html.level for a share's colour) and the data-key attributes the page "
        "reads",
    ),
    (
        "markup the page's sanitizer drops",
        broken("return result(buttons,", "return result(buttons + '<img src=\"cat.png\">',"),
        f"toymodels/two_back/figure.py:12: figure '{MODEL}' ({BLOCK}) wrote <img>, an element "
        "the figure kit does not make, given the state {} (from the chapter); the page's "
        "sanitizer (templates/static/sanitize.js) keeps only what the figure kit makes, so build "
        "the figure from toymodels/page/kit/ and toymodels.page.html",
    ),
    (
        "a reader's text left unescaped",
        broken("{esc(w)}</button>", "{w}</button>"),
        f"toymodels/two_back/figure.py:12: figure '{MODEL}' ({BLOCK}) wrote a reader's text into "
        "its markup unescaped, given the state "
        + json.dumps({"sentence": 'The cat sat on the mat "\'><mh-probe data-mh-probe="1">'})
        + " (a reader's text, as the address bar may hold it): "
        "the markup holds <mh-probe as a tag; pass every text through toymodels.page.html.esc "
        "(the kit's pieces do) and build attributes with toymodels.page.html.attrs",
    ),
    (
        "a wrong shape passed to the kit",
        broken(
            "    return result(buttons, state,",
            '    buttons += kit.matrix("M", words, ["a"], [[1.0, 2.0]])\n'
            "    return result(buttons, state,",
        ).replace(
            "from ..page.html import esc", "from ..page import kit\nfrom ..page.html import esc"
        ),
        f"toymodels/two_back/figure.py:22: figure '{MODEL}' ({BLOCK}) raised ValueError: zip() "
        "argument 2 is shorter than argument 1 (in toymodels/page/kit/tables.py:"
        f"{line_of('page/kit/tables.py', 'zip(rows, values')}, called from "
        'this line), given the state {} (from the chapter); render({}, "two-back") in Python '
        "shows the whole traceback",
    ),
    (
        "another chapter's model given the wrong shape",
        broken(
            "    return result(buttons, state,",
            "    causal_attention(np.ones((3, 2)), np.ones((4, 5)))\n"
            "    return result(buttons, state,",
        ).replace(
            "from ..page.html import esc",
            "import numpy as np\n\nfrom ..many_heads.model import causal_attention\n"
            "from ..page.html import esc",
        ),
        f"toymodels/two_back/figure.py:24: figure '{MODEL}' ({BLOCK}) raised ValueError: matmul: "
        "Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
        "(n?,k),(k,m?)->(n?,m?) (size 5 is different from 2) (in toymodels/many_heads/model.py:"
        f"{line_of('many_heads/model.py', 'scores = q @ k.T')}, called from this line), given the "
        "state {} (from "
        'the chapter); render({}, "two-back") in Python shows the whole traceback',
    ),
]


def with_slider(choices, reading):
    """FIGURE with a slider for a field "strength" (0 to 4 in steps of 0.5) that steps set too:
    CHOICES lists CHOICES for it, and render reads it with READING."""
    return (
        broken(
            "    return result(buttons, state,",
            f"    {reading}\n"
            '    buttons += kit.slider(fid, "strength", state["strength"], label="Strength", '
            "low=0, high=4, step=0.5)\n"
            "    return result(buttons, state,",
        )
        .replace(
            "from ..page.html import esc", "from ..page import kit\nfrom ..page.html import esc"
        )
        .replace('"view": "shares"}', '"view": "shares", "strength": "1.0"}')
        .replace(
            'CHOICES = {"view": ("scores", "shares")}',
            f'CHOICES = {{"view": ("scores", "shares"), "strength": {choices}}}',
        )
    )


READ_NUMBER = (
    'state["strength"] = kit.read_number(state["strength"], low=0, high=4, step=0.5, default=1)[1]'
)
MISTAKES += [
    (
        "a slider's choices written otherwise than its field",
        with_slider('("1", "2")', READ_NUMBER),
        f"toymodels/two_back/figure.py:9: figure '{MODEL}' ({BLOCK}) draws the choice strength "
        '"1" of its slider as strength "1.0"; write each number of CHOICES as the slider\'s field '
        'holds it (kit.number_text(x, step) writes it: "1.0" here), since a step sets exactly '
        "the text written",
    ),
    (
        "a slider read against its choices",
        with_slider(
            '("1.0", "2.0")',
            'state["strength"] = state["strength"] if state["strength"] in '
            'CHOICES["strength"] else "1.0"',
        ),
        f"toymodels/two_back/figure.py:9: figure '{MODEL}' ({BLOCK}) has a slider for "
        "'strength', which CHOICES lists as 1.0, 2.0; moved to 0, it drew strength \"1.0\" "
        '(given the state {"strength": "0"} (a value its slider sends)): a slider sends every '
        "value of its scale, so read its field with kit.read_number rather than against "
        "CHOICES (give read_sentence only the choices of the fields that are not sliders)",
    ),
]


# what works under the build's CPython but not in the reader's browser
# (sitebuild/authoring/browser.py)
LACKS = "the reader's browser has no module '{}' (needed by " + BLOCK + "): its Python holds "
LACKS += "numpy, the standard library as Pyodide ships it and toymodels/, and nothing else the "
LACKS += "build has installed; compute it with those, or compute it at build time as a prose value"
NO_FILE = (
    "the reader's browser has no file toymodels/two_back/words.txt: it has the .py files of "
    "toymodels/ and, through toymodels.page.data.read_bytes, the files of toymodels/data/; move "
    'the file into toymodels/data/ and read it with read_bytes("PATH IN toymodels/data")'
)
READ = "from pathlib import Path\n\nfrom ..page import data\nfrom ..page.html import esc"
IN_RENDER = "    state = merge(DEFAULTS, state)\n"
DRAWN = ', given the state {} (from the chapter); render({}, "two-back") in Python shows the '
DRAWN += "whole traceback"
BROWSER = [
    (
        "a module only the build has",
        broken("from ..page.html import esc", "import markdown\nfrom ..page.html import esc"),
        f"toymodels/two_back/figure.py:4: {LACKS.format('markdown')}",
    ),
    (
        "a module only the build has, imported where one state needs it",
        broken(
            IN_RENDER, IN_RENDER + '    if state["view"] == "scores":\n        import html5lib\n'
        ),
        f"toymodels/two_back/figure.py:15: {LACKS.format('html5lib')}",
    ),
    (
        "a standard module Pyodide sells apart",
        broken("from ..page.html import esc", "import sqlite3\nfrom ..page.html import esc"),
        f"toymodels/two_back/figure.py:4: {LACKS.format('sqlite3')}",
    ),
    (
        "a build-only package",
        broken(
            "from ..page.html import esc",
            "from ..page.html import esc\nfrom ..training import corpus",
        ),
        "toymodels/two_back/figure.py:5: this imports toymodels/training/, "
        f"which is build-only and never reaches the reader's browser (needed by {BLOCK}); a "
        "module the browser runs may import numpy, the standard library and the other packages "
        "of toymodels/",
    ),
    (
        "a data file beside the module, read at import",
        broken("from ..page.html import esc", READ).replace(
            "WORD_FIELD = ",
            'WORDS = Path(__file__).with_name("words.txt").read_text()\nWORD_FIELD = ',
        ),
        "toymodels/two_back/figure.py:12: importing this module raised FileNotFoundError: "
        f"{NO_FILE} (needed by {BLOCK}); fix the code at this line, which runs when the module "
        "is imported",
    ),
    (
        "a data file beside the module, read by render",
        broken("from ..page.html import esc", READ).replace(
            IN_RENDER, IN_RENDER + '    Path(__file__).with_name("words.txt").read_text()\n'
        ),
        f"toymodels/two_back/figure.py:17: figure '{MODEL}' ({BLOCK}) raised FileNotFoundError: "
        f"{NO_FILE}{DRAWN}",
    ),
    (
        "a data path out of toymodels/data/",
        broken("from ..page.html import esc", READ).replace(
            IN_RENDER, IN_RENDER + '    data.read_text("../training/RESULTS.md")\n'
        ),
        f"toymodels/two_back/figure.py:17: figure '{MODEL}' ({BLOCK}) raised FileNotFoundError: "
        "read_bytes reads toymodels/training/RESULTS.md, outside toymodels/data/, the only "
        "folder the site ships data from (its data.json): move the file into toymodels/data/ "
        "and name it from there (in toymodels/page/data.py:"
        f"{line_of('page/data.py', 'return path.read_bytes()')}, called from this line){DRAWN}",
    ),
    (
        "a data file read without read_bytes",
        broken("from ..page.html import esc", READ).replace(
            IN_RENDER,
            IN_RENDER + '    (Path(data.HERE) / "realheads" / "live.json").read_bytes()\n',
        ),
        f"toymodels/two_back/figure.py:17: figure '{MODEL}' ({BLOCK}) raised FileNotFoundError: "
        "toymodels/data/realheads/live.json is read directly, and the reader's browser gets a "
        'data file only through toymodels.page.data.read_bytes: write read_bytes("realheads/'
        f'live.json"){DRAWN}',
    ),
]


@pytest.mark.parametrize("name,source,message", BROWSER, ids=[m[0] for m in BROWSER])
def test_code_the_browser_cannot_run_stops_the_build_at_its_line(author, name, source, message):
    """Each of these builds under CPython and failed on the reader's first tap."""
    author("The cat sat\n", "words.txt")
    stops(author(source), message)


def test_a_live_cell_calling_code_that_reads_a_file_the_browser_lacks(author):
    """The cell runs in the reader's browser too, and so does the code of toymodels/ it calls."""
    author("The cat sat\n", "words.txt")
    reader = "from pathlib import Path\n\n\ndef words():\n"
    reader += '    return Path(__file__).with_name("words.txt").read_text().split()\n'
    root = author(reader, "words.py")
    cell = "\n```python live\nfrom toymodels.two_back.words import words\nwords()\n```\n"
    (root / "chapters" / "a.md").write_text(CHAPTER + cell)
    stops(
        root,
        f"chapters/a.md:21: this live cell raised FileNotFoundError: {NO_FILE}; fix the code or "
        "its earlier cells",
    )


def test_what_the_browser_has_builds(author):
    """An import guarded for a browser without it, a data file through read_bytes and the
    module's own source all build; the data file read counts as the module's."""
    source = broken(
        "from ..page.html import esc",
        READ + "\ntry:\n    import markdown\nexcept ImportError:\n    markdown = None",
    ).replace(
        IN_RENDER,
        IN_RENDER + '    data.read_bytes("realheads/live.json")\n    Path(__file__).read_text()\n',
    )
    root = author(source)
    site_build.build(root, root / "site")
    assert "realheads/live.json" in browser.READS["toymodels.two_back.figure"]


def test_a_chapter_package_holds_a_data_folder_whose_name_the_code_builds(author, tmp_path):
    """No string names the folder, so only what the build saw the figure read puts it into the
    chapter's SCORM package (it was left out: a 404 in the LMS)."""
    source = broken("from ..page.html import esc", READ).replace(
        IN_RENDER, IN_RENDER + '    data.read_bytes("what_a_head_" + "does/index.json")\n'
    )
    (package,) = scorm.write_packages(author(source), tmp_path / "out", only=["test"])
    with zipfile.ZipFile(package) as z:
        folders = {n.split("/")[2] for n in z.namelist() if n.startswith("py/data/")}
    assert folders == {"what_a_head_does"}


@pytest.mark.parametrize("name,source,message", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_broken_figure_module_stops_the_build_at_its_line(author, name, source, message):
    stops(author(source), message)


def test_a_slider_whose_choices_agree_with_it_builds(author):
    root = author(with_slider('("1.0", "2.0")', READ_NUMBER))
    site = site_build.build(root, root / "site")
    assert 'name="strength"' in (site / "test.html").read_text()


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
    author("import markdown\n\n\ndef check(env):\n    return True, 'Yes.'\n", "checks.py")
    stops(
        root,
        "toymodels/two_back/checks.py:1: "
        + LACKS.format("markdown").replace(BLOCK, "chapters/a.md:20"),
    )


EXERCISE = "\n::: exercise Do it\ncheck: toymodels.two_back.checks:check\n---\nx = 1\n:::\n"
STILL = "was still running after 1 s, and was stopped here (an endless loop?)"
CHECK = "the check 'toymodels.two_back.checks:check' (chapters/a.md:20), given the starting code's"


def test_author_code_that_never_returns_stops_the_build_at_its_line(author, monkeypatch):
    """An endless loop at import, in a value for prose or in an exercise's check is stopped
    after the limit a figure's state has (limits.FIGURE_SECONDS; 1 s here), at its line."""
    monkeypatch.setattr(limits, "FIGURE_SECONDS", 1)
    root = author('PROSE_VALUES = ("N",)\nN = 0\nwhile N >= 0: N += 0\n', "values.py")
    chapter = root / "chapters" / "a.md"
    chapter.write_text(CHAPTER.replace("Some prose", "Some {{ toymodels.two_back.values.N }}"))
    stops(
        root,
        "toymodels/two_back/values.py:3: importing this module was still running after 1 s, and "
        "was stopped here (an endless loop?) (needed by chapters/a.md:10); a module's top level "
        "runs at every build and before the reader's first tap: keep slow work in a function, "
        "called when it is needed",
    )
    author(
        'PROSE_VALUES = ("n",)\n\n\ndef n():\n    i = 0\n    while i >= 0: i += 0\n', "values.py"
    )
    chapter.write_text(CHAPTER.replace("Some prose", "Some {{ toymodels.two_back.values.n }}"))
    stops(
        root,
        "toymodels/two_back/values.py:6: the value 'toymodels.two_back.values.n' (needed by "
        f"chapters/a.md:10) {STILL}; a value for prose must be quick to compute",
    )
    author("def check(env):\n    x = env['x']\n    while x >= 0: x += 0\n", "checks.py")
    chapter.write_text(CHAPTER + EXERCISE)
    stops(
        root,
        f"toymodels/two_back/checks.py:3: {CHECK} variables, {STILL}; a check gives every "
        "reader's code a verdict quickly: return (False, 'what to change') where the variables "
        "are not what it needs",
    )


def test_a_check_or_a_value_that_raises_or_gives_no_verdict_stops_the_build(author):
    root = author("def check(env):\n    return env['w'].sum() > 1, 'Yes.'\n", "checks.py")
    chapter = root / "chapters" / "a.md"
    chapter.write_text(CHAPTER + EXERCISE)
    stops(
        root,
        f"toymodels/two_back/checks.py:2: {CHECK} variables, raised KeyError: 'w'; a check "
        "gives every reader's code a verdict quickly: return (False, 'what to change') where "
        "the variables are not what it needs",
    )
    author("def check(env):\n    return env['x'] == 2\n", "checks.py")
    stops(
        root,
        f"toymodels/two_back/checks.py:1: {CHECK} variables, returned bool False; a check returns "
        "(passed, message), e.g. return False, 'Make each row of w add up to 1.'",
    )
    author('PROSE_VALUES = ("n",)\n\n\ndef n():\n    return {}["n"]\n', "values.py")
    chapter.write_text(CHAPTER.replace("Some prose", "Some {{ toymodels.two_back.values.n }}"))
    stops(
        root,
        "toymodels/two_back/values.py:5: the value 'toymodels.two_back.values.n' (needed by "
        "chapters/a.md:10) raised KeyError: 'n'",
    )


def test_the_check_must_pass_the_exercises_own_solution(author):
    """A solution below a second '---' runs where a reader's code would, apart from the
    page's later cells, and its check must pass it."""
    root = author("def check(env):\n    return env['x'] == 2, 'Make x 2.'\n", "checks.py")
    chapter = root / "chapters" / "a.md"
    solved = EXERCISE.replace("x = 1\n", "x = 1\n---\nx = 2\n") + "\n```python live\nx\n```\n"
    chapter.write_text(CHAPTER + solved)
    site = site_build.build(root, root / "site")
    page = (site / "test.html").read_text()
    assert "x = 2" not in page  # the solution is the build's alone
    assert re.search(r'<pre class="value"[^>]*>1</pre>', page)  # the later cell saw x = 1
    chapter.write_text(CHAPTER + solved.replace("x = 2", "x = 3"))
    stops(
        root,
        "chapters/a.md:24: the check 'toymodels.two_back.checks:check' (chapters/a.md:20) does "
        "not pass this exercise's own solution: it says 'Make x 2.'; fix the check or the "
        "solution",
    )
    chapter.write_text(CHAPTER + solved.replace("x = 2", "x = y"))
    stops(
        root,
        "chapters/a.md:24: this exercise's solution raised NameError: name 'y' is not defined; "
        "fix the code or its earlier cells",
    )


def test_a_check_that_fails_on_a_readers_code_says_the_fault_is_the_pages(monkeypatch):
    """In the page, a check that raises on what the reader's code left (or gives no message)
    is a verdict that blames the page's check, not the reader's code."""
    from toymodels.page import cells

    module = type(sys)("toymodels.faulty_check")
    module.check = lambda env: (env["w"].sum() > 1, "Right.")
    module.silent = lambda env: (True, None)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    cells.forget("faulty")
    result = cells.run("w = 1", "faulty", "toymodels.faulty_check:check")
    assert result["error"] is None
    assert result["check"] == {
        "ok": False,
        "fault": True,
        "message": "The exercise's own check failed (AttributeError: 'int' object has no "
        "attribute 'sum'), so it cannot say whether your code is right. This is a mistake in "
        "the page, not in your code.",
    }
    silent = cells.verdict("toymodels.faulty_check:silent", "faulty")
    assert silent["fault"] and "(TypeError: its message is NoneType, not text)" in silent["message"]
    assert cells.verdict("toymodels.guide.exercise:check_strength", "faulty") == {
        "ok": False,
        "fault": False,
        "message": "Run the cell so that w holds the head's shares, one row per word.",
    }
    cells.forget("faulty")


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
    exercised, probed, prerendered = drawn[:11], drawn[11:14], drawn[14:]
    # the chapter's state twice (the same answer each time), DEFAULTS, CHOICES, each word
    assert exercised == [{}, {}, {}, {"view": "scores"}, {"view": "shares"}, *words]
    # a reader's markup in each field, after its default: it must come back escaped
    markup = '"\'><mh-probe data-mh-probe="1">'
    assert probed == [{k: f"{v} {markup}"} for k, v in figure.DEFAULTS.items()]
    # then sitebuild/pipeline/prerender.py: the default view and the states one tap from it (each
    # word, the nearest the shown one first: the next, then the previous)
    default = prerendered[0]
    at = int(default["word"])
    near = sorted((i for i in range(6) if i != at), key=lambda i: (abs(i - at), i < at))
    assert prerendered == [default, *({**default, "word": str(i)} for i in near)]
    drawn.clear()
    site_build.build(root, root / "site")  # tried once per process: the chapter's state only
    assert drawn == [{}, {}, *prerendered]


def test_a_renamed_package_is_suggested_before_another_chapters_module(tmp_path, monkeypatch):
    """The author renamed toymodels/heads_copy/ to toymodels/previous_token/, and the chapter
    still names the old one: the build suggests the author's package (one no chapter names
    yet) before another chapter's heads_that_copy, closer in spelling, and lists it first."""
    extra = tmp_path / "extra"
    (extra / "previous_token").mkdir(parents=True)
    (extra / "previous_token" / "__init__.py").write_text("")
    (extra / "previous_token" / "figure.py").write_text(FIGURE)
    monkeypatch.setattr(toymodels, "__path__", [*toymodels.__path__, str(extra)])
    chapters = {p.name: p.read_text("utf-8") for p in (ROOT / "chapters").glob("*.md")}
    chapters["50-copy.md"] = CHAPTER.replace("two_back", "heads_copy")
    root = project(tmp_path, chapters)
    with pytest.raises(AuthorError) as caught:
        pages.call_figure(
            "chapters/50-copy.md", 13, "toymodels.heads_copy.figure:render", "f", {}, root
        )
    assert str(caught.value).startswith(
        "chapters/50-copy.md:13: unknown figure 'toymodels.heads_copy.figure:render': there is "
        "no toymodels/heads_copy/figure.py (did you mean "
        "'toymodels.previous_token.figure:render'?); figures are "
        "toymodels.previous_token.figure:render, toymodels.guide."
    ), str(caught.value)


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
        "an answer that changes for the same state",
        "an inline style",
        "markup the page's sanitizer drops",
        "a reader's text left unescaped",
        "a slider's choices written otherwise than its field",
        "a slider read against its choices",
    ):
        message = next(m for n, _, m in MISTAKES if n == name)
        text = message.split(": ", 1)[1]
        assert f"`{text}`" in guide, text
    for name in ("a value never closed", "a lone dollar", "a guess with two answers"):
        text = next(m for n, _, m in CHAPTER_MISTAKES if n == name).split(": ", 1)[1]
        assert f"`{text}`" in guide, text
    for text in (  # the messages of the tests above, with the limit as it is, 10 s
        "importing this module was still running after 10 s, and was stopped here (an endless "
        "loop?) (needed by chapters/a.md:10); a module's top level runs at every build and "
        "before the reader's first tap: keep slow work in a function, called when it is needed",
        f"the value 'toymodels.two_back.values.n' (needed by chapters/a.md:10) {STILL}; a value "
        "for prose must be quick to compute".replace("1 s", "10 s"),
        f"{CHECK} variables, raised KeyError: 'w'; a check gives every reader's code a verdict "
        "quickly: return (False, 'what to change') where the variables are not what it needs",
        f"{CHECK} variables, returned bool False; a check returns (passed, message), e.g. "
        "return False, 'Make each row of w add up to 1.'",
    ):
        assert f"`{text}`" in guide, text
        assert f"`{text}`" in guide, text
    for name in ("a module only the build has", "a data file beside the module, read by render"):
        text = next(m for n, _, m in BROWSER if n == name).split(": ", 1)[1]
        assert f"`{text}`" in guide, text
    # the kit's line moves as the kit changes: the guide writes LINE
    kit = next(m for n, _, m in MISTAKES if n == "a wrong shape passed to the kit")
    written = re.sub(r"tables\.py:\d+", "tables.py:LINE", kit.split(": ", 1)[1])
    assert f"`{written}`" in guide, written
    looping = (
        "was still drawing after 10 s, given the state {} (from the chapter), and was stopped "
        "here (an endless loop?)"
    )
    assert looping in guide  # the limits as the guide states them
    assert limits.FIGURE_SECONDS == 10 and limits.SLOW_SECONDS == 0.2
    assert "more than the 0.2 s a state may take" in guide and "after 180 s" in guide
    sizes = (budgets.DATA_FILE_BYTES, budgets.FIGURE_BYTES, budgets.PAGE_BYTES)
    assert sizes == (2_000_000, 300_000, 1_000_000)
    assert "a data file over 2 MB, a figure's\nmarkup (its `html` and slots) over 300 kB" in guide
    assert "and a chapter's page over 1 MB are" in guide


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


# ---- time: a figure that runs too long, and one slow to draw -----------------------------------

LOOPING = broken(
    "    back = words[i - 2]", "    while i >= 0: i += 0  # noqa\n    back = words[i - 2]"
)


SLEEPING = broken("    back = words[i - 2]", "    time.sleep(30)\n    back = words[i - 2]").replace(
    "from ..page.html import esc", "import time\n\nfrom ..page.html import esc"
)


@pytest.mark.parametrize(
    "source,line", [(LOOPING, 16), (SLEEPING, 18)], ids=["an endless loop", "30 s a state"]
)
def test_a_figure_that_runs_too_long_is_stopped_at_its_line(author, monkeypatch, source, line):
    """The build stops a figure still drawing after its time (FIGURE_SECONDS, 10 s; 1 s here)
    and names the line it was running, the state and the block."""
    monkeypatch.setattr(limits, "FIGURE_SECONDS", 1)
    stops(
        author(source),
        f"toymodels/two_back/figure.py:{line}: figure '{MODEL}' ({BLOCK}) was still drawing "
        "after 1 s, given the state {} (from the chapter), and was stopped here (an endless "
        "loop?); a figure must draw a state in well under a second, since the page calls it on "
        'every tap; render({}, "two-back") in Python shows where it is slow',
    )


def test_a_state_slow_to_draw_is_a_warning_naming_the_figure_state_and_time(author, monkeypatch):
    """A state over SLOW_SECONDS of processor time (0.2 s; 0.05 s here) is a warning naming the
    module's render line, the block, the state and the time; `check --strict` fails on it."""
    monkeypatch.setattr(limits, "SLOW_SECONDS", 0.05)
    slow = broken(
        "    back = words[i - 2]",
        "    if i == 4:\n        spent = time.process_time()\n"
        "        while time.process_time() - spent < 0.1:\n            pass\n"
        "    back = words[i - 2]",
    ).replace("from ..page.html import esc", "import time\n\nfrom ..page.html import esc")
    root = author(slow)
    notes = []
    site_build.build(root, root / "site", notes=notes)
    # drawn as a word of its WORD_FIELD, then as a tap the page gets before Python (prerender)
    assert len(notes) == 2, notes
    assert '"word": "4"' in notes[1][2] and "(one tap from the figure's first view)" in notes[1][2]
    path, line, message = notes[0]
    assert (path, line) == ("toymodels/two_back/figure.py", 14)
    assert re.fullmatch(
        rf"figure '{re.escape(MODEL)}' \({BLOCK}\) took 0\.1\d s of processor time to draw, "
        r'given the state \{"word": "4"\} \(a word of its WORD_FIELD\): more than the 0\.05 s a '
        r"state may take, and the reader's Python \(Pyodide\) takes several times as long on a "
        r"tap; make render faster \(compute once and keep what every state needs\)",
        message,
    ), message
    assert check.check(root, strict=False) == 0
    assert check.check(root, strict=True, timed=False) == 1


def test_a_numpy_warning_is_a_warning_naming_the_figure_state_and_line(author, capsys):
    """numpy's warning (here a log of 0 for one word) is noted at the author's line with the
    state that set it off, once, rather than printed with a path into numpy; `check` counts it
    and fails on it with --strict."""
    warns = broken(
        "    back = words[i - 2]",
        "    if i == 4:\n        np.log(np.zeros(1))\n    back = words[i - 2]",
    ).replace("from ..page.html import esc", "import numpy as np\n\nfrom ..page.html import esc")
    root = author(warns)
    notes = []
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        site_build.build(root, root / "site", notes=notes)
    assert escaped == []  # noted, not printed with a path into numpy
    assert notes == [
        (
            "toymodels/two_back/figure.py",
            19,
            f"figure '{MODEL}' ({BLOCK}) set off a warning (RuntimeWarning: divide by zero "
            'encountered in log), given the state {"word": "4"} (a word of its WORD_FIELD); numpy '
            "warns of a number it could not compute (an overflow, a division by zero, a nan): fix "
            "the computation, or put it in `with np.errstate(...)` where that result is meant",
        )
    ]
    assert check.check(root, strict=False) == 0
    said = capsys.readouterr().err  # the chapter has no recap either: a warning too
    assert said.endswith(
        "check: 0 error(s), 2 warning(s) (1 of them set off by the code of toymodels/): ok\n"
    )
    assert check.check(root, strict=True, timed=False) == 1


LOG_OF_0 = "set off a warning (RuntimeWarning: divide by zero encountered in log); numpy warns "
LOG_OF_0 += "of a number it could not compute (an overflow, a division by zero, a nan): fix the "
LOG_OF_0 += "computation, or put it in `with np.errstate(...)` where that result is meant"
VALUE = "the value 'toymodels.two_back.values.n' (needed by chapters/a.md:10)"
WARNS_AT = {  # the author's files, the chapter's change, and the notes they give
    "import": (
        {
            "figure.py": broken(
                "from ..page.html import esc",
                "import numpy as np\n\nfrom ..page.html import esc\n\nLOW = np.log(np.zeros(1))",
            )
        },
        lambda chapter: chapter,
        [
            (
                "toymodels/two_back/figure.py",
                8,
                f"importing toymodels.two_back.figure (needed by {BLOCK}) {LOG_OF_0}",
            )
        ],
    ),
    "prose value": (
        {
            "values.py": 'import numpy as np\n\nLOW = np.log(np.zeros(1))\nPROSE_VALUES = ("n",)'
            '\n\n\ndef n():\n    np.log(np.zeros(1))\n    return "two"\n'
        },
        lambda chapter: chapter.replace("Some prose", "Some {{ toymodels.two_back.values.n }}"),
        [
            (
                "toymodels/two_back/values.py",
                3,
                f"importing toymodels.two_back.values (needed by chapters/a.md:10) {LOG_OF_0}",
            ),
            ("toymodels/two_back/values.py", 8, f"{VALUE} {LOG_OF_0}"),
        ],
    ),
    "exercise check": (
        {
            "checks.py": "import numpy as np\n\n\ndef check(env):\n    np.log(np.zeros(1))\n"
            "    return True, 'Yes.'\n"
        },
        lambda chapter: chapter + EXERCISE,
        [("toymodels/two_back/checks.py", 5, f"{CHECK} variables, {LOG_OF_0}")],
    ),
}


@pytest.mark.parametrize("kind", WARNS_AT)
def test_a_numpy_warning_outside_a_figure_is_a_warning_at_its_line(author, capsys, kind):
    """numpy's warning (a log of 0) at a module's top level, in a value for prose or in an
    exercise's check is noted at the author's line, naming what set it off and the chapter's
    line that needs it, rather than printed with a path into numpy; `check` counts it and fails
    on it with --strict."""
    files, change, expected = WARNS_AT[kind]
    for name, source in files.items():
        root = author(source, name)
    chapter = root / "chapters" / "a.md"
    chapter.write_text(change(chapter.read_text()))
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        assert check.check(root, strict=True, timed=False) == 1
    assert escaped == []  # noted, not printed with a path into numpy
    said = capsys.readouterr().err.splitlines()
    assert [line for line in said if "recap" not in line] == [
        *(f"{path}:{line}: warning: {message}" for path, line, message in expected),
        # the chapter has no recap either: a warning too
        f"check: 0 error(s), {len(expected) + 1} warning(s) ({len(expected)} of them set off by "
        "the code of toymodels/) (strict): FAILED",
    ]


def test_lines_added_above_an_exercise_ask_its_python_nothing_new(author, monkeypatch):
    """serve's builder (site_build.Memory) renders an edited chapter with its cells' last
    answers (cellrunner.Replay): lines added or removed above a cell and an exercise leave what
    the page asks its cells' Python as it was, so no Python is started, and what the build
    says names the lines where the exercise and the cell now are."""
    author(WARNS_AT["exercise check"][0]["checks.py"], "checks.py")
    root = author(FIGURE)
    chapter = root / "chapters" / "a.md"
    cell = "\n```python live\nprint(x)\nx + 1\n```\n"
    started = []
    start = cellrunner.CellProcess._start
    monkeypatch.setattr(cellrunner.CellProcess, "_start", lambda p: started.append(1) or start(p))
    kept, memory = root.parent / "kept", site_build.Memory()

    def build(text):
        """TEXT as the chapter, built as serve's builder builds it -> its warnings; STARTED
        then says whether a Python for the cells was started."""
        chapter.write_text(text)
        started.clear()
        notes = []
        site_build.build(root, root / "site", notes=notes, reuse=kept, memory=memory)
        return [n for n in notes if "recap" not in n[2]]

    def warned(line):
        check = CHECK.replace("chapters/a.md:20", f"chapters/a.md:{line}")
        return [("toymodels/two_back/checks.py", 5, f"{check} variables, {LOG_OF_0}")]

    def fails(text, line):
        with pytest.raises(AuthorError) as caught:
            build(text)
        assert str(caught.value) == (
            f"chapters/a.md:{line}: this live cell raised NameError: name 'y' is not defined; "
            "fix the code or its earlier cells"
        )

    text = CHAPTER + EXERCISE + cell
    assert build(text) == warned(20) and started
    shifted = text.replace("Some prose", "A new paragraph.\n\nSome prose", 1)
    assert build(shifted) == warned(22) and not started
    failing = cell.replace("x + 1", "x + y")
    fails(shifted.replace(cell, failing), 29)
    fails(text.replace(cell, failing), 27)  # lines taken away: the error given again, moved up
    assert not started


def test_big_output_is_a_warning_at_the_line_to_change(author, monkeypatch):
    """A data file, a figure's markup and a page over their budgets (here just under the
    biggest data file, and small) are each one warning at the line to change: the line that
    read the file, `def render`, the figure block; `check --strict` fails on them."""
    files = [p for p in (ROOT / "toymodels" / "data").rglob("*") if p.is_file()]
    biggest = max(files, key=lambda p: p.stat().st_size)
    rel = biggest.relative_to(ROOT / "toymodels" / "data").as_posix()
    monkeypatch.setattr(budgets, "DATA_FILE_BYTES", biggest.stat().st_size - 1)
    monkeypatch.setattr(budgets, "FIGURE_BYTES", 2000)
    monkeypatch.setattr(budgets, "PAGE_BYTES", 20_000)
    monkeypatch.setattr(browser, "READ_AT", {})
    monkeypatch.setattr(prerender, "RAW_BUDGET", 3000)
    source = broken("from ..page.html import esc", READ).replace(
        IN_RENDER,
        IN_RENDER + f'    data.read_bytes("{rel}")\n    pad = "<p>" + "x" * 3000 + "</p>"\n',
    )
    root = author(source.replace("return result(buttons,", "return result(buttons + pad,"))
    notes = []
    site_build.build(root, root / "site", notes=notes)
    mb = f"{biggest.stat().st_size / 1e3:.0f} kB"
    assert (
        "toymodels/two_back/figure.py",
        17,
        f"toymodels/data/{rel} is {mb}, more than the {mb} a data file may be: the site, its "
        "offline zip and each SCORM package whose chapter reads it carry it, and a reader's "
        "browser fetches it whole; keep only what the figures show (float16, fewer steps, one "
        "file per state)",
    ) in notes
    big = [n for n in notes if "of markup" in n[2]]
    assert big == [
        (
            "toymodels/two_back/figure.py",
            15,
            f"figure '{MODEL}' ({BLOCK}) wrote 3 kB of markup, given the state {{}} (from the "
            "chapter): more than the 2 kB a figure's markup may hold, since its page carries it, "
            "Python sends it on every tap and the build prepares first taps only within 3 kB "
            "of answers per figure; draw less (fewer rows, fewer digits)",
        )
    ]
    unprepared, page = [n for n in notes if n[0] == "chapters/a.md"]
    assert unprepared == (
        "chapters/a.md",
        12,
        "figure 'two-back' gets no prepared first taps: not one of its states fits what they "
        "may take (110 kB gzipped, 3 kB raw), so a tap before Python is ready waits for it; "
        "draw less",
    )
    assert page[1] == 12 and re.fullmatch(
        r"the page test\.html is \d+ kB, more than the 20 kB a page may be, which a reader "
        r"downloads before seeing it; its biggest figure, 'two-back', is \d kB; draw less, or "
        r"split the chapter",
        page[2],
    ), page
    assert check.check(root, strict=False) == 0
    assert check.check(root, strict=True, timed=False) == 1


def test_build_and_serve_report_a_figure_that_loops_and_serve_builds_the_next_save(tmp_path):
    """Under `build.py serve`: a save that makes a figure loop for ever is a build that ends
    (its figure stopped at its line, here after 2 s), with the last good site still served and
    said so; the next save is built."""
    root, figure, env = served_project(
        tmp_path, "from sitebuild.authoring import limits\nlimits.FIGURE_SECONDS = 2\n"
    )
    with serving(root, env) as (said, get):
        assert b"sat looks at The." in get("test.html")
        figure.write_text(LOOPING)
        wait_until(lambda: any("still serving" in line for line in said), 60, "no report")
        text = "".join(said)
        assert (
            f"toymodels/two_back/figure.py:16: figure '{MODEL}' ({BLOCK}) was still drawing "
            "after 2 s, given the state {} (from the chapter), and was stopped here" in text
        ), text
        assert re.search(r"still serving the last good site, built at \d\d:\d\d:\d\d", text)
        assert b"sat looks at The." in get("test.html")
        figure.write_text(FIGURE.replace("looks at", "sees"))
        wait_until(lambda: b"sat sees The." in get("test.html"), 60, "the fix was not built")


def test_serve_builds_a_change_saved_while_a_build_runs(tmp_path):
    """A save while a build runs (here one whose figure loops, stopped only after 60 s) stops
    that build and builds the newer sources at once."""
    root, figure, env = served_project(
        tmp_path, "from sitebuild.authoring import limits\nlimits.FIGURE_SECONDS = 60\n"
    )
    with serving(root, env) as (said, get):
        start = time.monotonic()
        figure.write_text(LOOPING)
        wait_until(lambda: any("change seen, rebuilding" in line for line in said), 30, "unseen")
        figure.write_text(FIGURE.replace("looks at", "sees"))
        wait_until(lambda: b"sat sees The." in get("test.html"), 50, "the fix was not built")
        assert time.monotonic() - start < 60
        assert any("change seen while building: stopped that build" in line for line in said)


def test_serve_stops_a_build_that_overruns_and_says_where_it_was(tmp_path):
    """A build still running after serve's BUILD_SECONDS (15 s here; a figure held by code that
    no signal stops) is stopped by serve, which names the line it was running."""
    root, figure, env = served_project(
        tmp_path, "from sitebuild.serving import serve\nserve.BUILD_SECONDS = 15\n"
    )
    blocked = broken(
        "    back = words[i - 2]",
        "    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])\n"
        "    while i >= 0: i += 0  # noqa\n    back = words[i - 2]",
    ).replace("from ..page.html import esc", "import signal\n\nfrom ..page.html import esc")
    with serving(root, env) as (said, get):
        figure.write_text(blocked)
        wait_until(lambda: any("still serving" in line for line in said), 60, "no report")
        text = "".join(said)
        assert (
            "toymodels/two_back/figure.py:19: the build was still running after 15 s and was "
            "stopped here; look for an endless loop" in text
        ), text
        assert "Traceback" not in text and "Current thread" not in text
        figure.write_text(FIGURE.replace("looks at", "sees"))
        wait_until(lambda: b"sat sees The." in get("test.html"), 60, "the fix was not built")


@pytest.mark.browser
def test_serve_shows_a_saved_edit_in_the_open_page(page, tmp_path):
    """A save to a chapter is built (that chapter alone rendered again) and the page open on it
    reloads itself to show it; the script that asks is serve's own, never in the built site."""
    root, _, env = served_project(tmp_path, "")
    with serving(root, env) as (said, get):
        url = re.search(r"http://127\.0\.0\.1:\d+/", "".join(said)).group(0)
        # Python ready first: a page still loading would ask for files the new build replaced
        open_ready(page, url + "test.html")
        expect(page.locator("main")).to_contain_text("Some prose")
        chapter = root / "chapters" / "a.md"
        chapter.write_text(chapter.read_text().replace("Some prose", "Edited prose"))
        expect(page.locator("main")).to_contain_text("Edited prose", timeout=120_000)
        assert b"/__serve/reload.js" in get("test.html")
        # the reloaded page left before serve stops: what it still asks for (its Python, a
        # figure's answers, the build's number) would find no server
        page.wait_for_selector("html.py-ready", timeout=90_000)
        page.goto("about:blank")
    assert "__serve" not in (root / "site" / "test.html").read_text()


def served_project(tmp_path, setting):
    """A project whose toymodels/ holds the repository's packages (linked) and a package
    two_back/ of its own, which serve watches; every Python serve starts imports it, and runs
    SETTING. -> (root, two_back/figure.py, the environment to start serve in)."""
    root = project(tmp_path, {"a.md": CHAPTER})
    (root / "toymodels").unlink()
    (root / "toymodels").mkdir()
    for part in (ROOT / "toymodels").iterdir():
        if part.is_dir() and part.name != "__pycache__":  # the build publishes no linked file
            (root / "toymodels" / part.name).symlink_to(part)
        elif part.is_file():
            shutil.copy(part, root / "toymodels" / part.name)
    (root / "toymodels" / "two_back").mkdir()
    (root / "toymodels" / "two_back" / "__init__.py").write_text("")
    figure = root / "toymodels" / "two_back" / "figure.py"
    figure.write_text(FIGURE)
    custom = tmp_path / "custom"
    custom.mkdir()
    (custom / "sitecustomize.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nimport toymodels\n"
        f"toymodels.__path__.append({str(root / 'toymodels')!r})\n{setting}"
    )
    return root, figure, {**os.environ, "PYTHONPATH": str(custom), "PYTHONDONTWRITEBYTECODE": "1"}


@contextlib.contextmanager
def serving(root, env):
    """`build.py serve` on ROOT: (the lines it has said so far, get(path) -> the page's bytes)."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "build.py"), "serve", "--root", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    said = []
    threading.Thread(target=lambda: said.extend(proc.stdout), daemon=True).start()
    try:
        wait_until(
            lambda: any("Many Heads is at" in line for line in said) or proc.poll() is not None,
            90,
            "serve did not start",
        )
        line = next((line for line in said if "Many Heads is at" in line), None)
        assert line, f"serve exited early: {said}"
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)

        def get(path):
            with urllib.request.urlopen(url + path, timeout=10) as r:
                return r.read()

        yield said, get
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_build_ends_a_figure_no_signal_can_stop(tmp_path):
    """Code that a signal cannot interrupt (here a figure that blocks SIGALRM, as code holding
    Python for itself would) ends the build after BACKSTOP_SECONDS with where it was, instead
    of hanging it."""
    extra = tmp_path / "extra"
    (extra / "two_back").mkdir(parents=True)
    (extra / "two_back" / "__init__.py").write_text("")
    blocked = broken(
        "    back = words[i - 2]",
        "    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])\n"
        "    while i >= 0: i += 0  # noqa\n    back = words[i - 2]",
    ).replace("from ..page.html import esc", "import signal\n\nfrom ..page.html import esc")
    (extra / "two_back" / "figure.py").write_text(blocked)
    root = project(tmp_path, {"a.md": CHAPTER})
    script = (
        "import sys, toymodels; toymodels.__path__.append(sys.argv[1]); "
        "from sitebuild.authoring import limits; "
        "limits.FIGURE_SECONDS, limits.BACKSTOP_SECONDS = 1, 2; "
        "sys.argv[1:] = ['--root', sys.argv[2]]; import build; sys.exit(build.main())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(extra), str(root)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("Timeout (0:00:04)!"), done.stderr
    assert re.search(r'File ".*/two_back/figure\.py", line 19 in render', done.stderr)
    assert not (root / "site").exists()
