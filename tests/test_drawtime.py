"""`check --strict` times each live figure's first state in the reader's Python (Pyodide under
Node, sitebuild/authoring/drawtime.py): a figure quick in CPython but slow there is a warning at its
`def render`, with both times, and so is one that raises only there; a quick one is not. The
figures are in one chapter, timed in one Pyodide start."""

import json
import re
import shutil
import sys

import pytest
from test_build import ROOT

import toymodels
from sitebuild.authoring import check, drawtime, limits

# a figure drawing its cells one at a time in pure Python: a few ms in CPython, several times
# that in Pyodide
FIGURE = '''\
"""{doc}"""

from ..page.figure import merge, result
from ..page.html import esc

DEFAULTS = {{"label": "cells"}}


def render(state=None, fid="pace"):
    state = merge(DEFAULTS, state)
    total = 0
    for i in range({cells}):
        total += i * i % 7
    return result(f"<p>{{total}} {{esc(state['label'])}}</p>", state, summary=f"{{total}}.")
'''
# a figure that draws in CPython and raises in the browser
ELSEWHERE = '''\
"""Draws in CPython only."""

import sys

from ..page.figure import merge, result

DEFAULTS = {"label": "cells"}


def render(state=None, fid="pace"):
    state = merge(DEFAULTS, state)
    if sys.platform == "emscripten":
        raise LookupError("not in the browser")
    return result("<p>1</p>", state, summary="1.")
'''
CHAPTER = """+++
title = "Pace"
slug = "pace"
order = 95
series = "Appendix"
summary = "Two figures, one slow in the browser."
sources = ["Someone (2020). A paper."]
+++

Some prose.

::: figure slow
model: toymodels.pace.slow:render
caption: Slow.
alt: A number.
:::

::: figure quick
model: toymodels.pace.quick:render
caption: Quick.
alt: A number.
:::

::: figure elsewhere
model: toymodels.pace.elsewhere:render
caption: Elsewhere.
alt: A number.
:::
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project whose toymodels/ holds the kernel and the package `pace` (slow.py, quick.py,
    elsewhere.py):
    the build ships them to the site's Python, and this process imports them from there."""
    root = tmp_path / "proj"
    (root / "chapters").mkdir(parents=True)
    (root / "chapters" / "a.md").write_text(CHAPTER)
    (root / "templates").symlink_to(ROOT / "templates")
    shutil.copytree(ROOT / "toymodels" / "page", root / "toymodels" / "page")
    shutil.copy(ROOT / "toymodels" / "__init__.py", root / "toymodels")
    (root / "toymodels" / "pace").mkdir()
    (root / "toymodels" / "pace" / "__init__.py").write_text("")
    for name, doc, cells in (("slow", "Slow in Pyodide.", 400_000), ("quick", "Quick.", 10)):
        (root / "toymodels" / "pace" / f"{name}.py").write_text(FIGURE.format(doc=doc, cells=cells))
    (root / "toymodels" / "pace" / "elsewhere.py").write_text(ELSEWHERE)
    monkeypatch.setattr(toymodels, "__path__", [*toymodels.__path__, str(root / "toymodels")])
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    yield root
    for name in [m for m in sys.modules if m.startswith("toymodels.pace")]:
        del sys.modules[name]


def test_a_figure_slow_only_in_pyodide_is_a_warning_at_its_render(project, monkeypatch, capsys):
    """The slow figure's loop takes some 20 ms in CPython, under the build's own budget
    (limits.SLOW_SECONDS, 0.2 s), and several times that in Pyodide, over the budget set here
    (0.02 s for 0.2 s, to keep the test short): one warning, at slow.py's `def render`, naming
    both times and their ratio; one at elsewhere.py's, naming what it raised there; the quick
    figure gets none."""
    monkeypatch.setattr(limits, "PYODIDE_SLOW_SECONDS", 0.02)
    kept = project.parent / "kept.json"  # not the download cache: timed afresh every run
    monkeypatch.setattr(drawtime, "_kept", lambda root, site, jobs: kept)
    assert check.check(project, strict=True) == 1
    assert [len(answer["calls"]) for answer in json.loads(kept.read_text())] == [4, 4, 0]
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if ": warning: " in line]
    assert len(warnings) == 2, err
    m = re.fullmatch(
        r"toymodels/pace/slow\.py:9: warning: figure 'toymodels\.pace\.slow:render' "
        r"\(chapters/a\.md:13\) took (\d+) ms of processor time to draw in the reader's Python "
        r"\(Pyodide, timed under Node: the best of 3 calls\), (\d+) times its (\d+) ms in "
        r'CPython, given the state \{"label": "cells"\} \(its first view\): more than the '
        r"0\.02 s a state may take, on every tap; pure Python runs several times slower in "
        r"Pyodide than in CPython: replace loops over words or cells by numpy operations on "
        r"whole arrays, or compute once and keep what every state needs",
        warnings[0],
    )
    assert m, warnings[0]
    pyodide_ms, ratio, cpython_ms = map(int, m.groups())
    assert pyodide_ms > 20 and cpython_ms < 200 and ratio > 1
    assert abs(ratio - pyodide_ms / max(cpython_ms, 1)) <= max(1, ratio / 5)
    assert warnings[1] == (
        "toymodels/pace/elsewhere.py:10: warning: figure 'toymodels.pace.elsewhere:render' "
        "(chapters/a.md:25) raised LookupError: not in the browser in the reader's Python "
        '(Pyodide, under Node), given the state {"label": "cells"} (its first view), though it '
        "draws in CPython; the browser's Python holds numpy, the standard library as Pyodide "
        "ships it and toymodels/, and nothing else"
    )
    assert err.rstrip().endswith("check: 0 error(s), 2 warning(s) (strict): FAILED")
    # the author guide shows the message as it is, with the budget as it is
    guide = " ".join((ROOT / "chapters" / "90-author-guide.md").read_text("utf-8").split())
    for part in (
        " ms of processor time to draw in the reader's Python (Pyodide, timed under Node: the "
        "best of 3 calls), ",
        warnings[0].split(" (its first view)")[1].replace("0.02 s", "0.2 s"),
        " in the reader's Python (Pyodide, under Node), given the state ",
        warnings[1].split(" (its first view)")[1],
    ):
        assert part in guide, part
