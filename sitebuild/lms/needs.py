"""Which data a chapter's Python reads in the browser, so that a SCORM package of one chapter
carries only that (sitebuild/lms/scorm.py): the site keeps toymodels/data/ in top-level folders
(charmodel/, realheads/, smollm2/), a few MB to 15 MB each.

A chapter's Python is what the browser runs for it: the modules its figures and exercise checks
name and the modules its live cells import, with every module of toymodels/ these import in
turn (read from their source, not run: sitebuild/pipeline/imports.py). Such a module reads a
data folder by naming it in a string, as `DIR = "smollm2"` or `f"charmodel/{run}/manifest.json"`
do (toymodels.page.data.read_bytes takes a path inside toymodels/data/), so a folder whose name
starts a string in one of them is needed; where the modules name only whole paths in it
(`"smollm2/live.json"`), only those files are. Prose values ({{ … }}) are not: the build
writes their values into the page. A file whose path the code builds (DIR = "char" +
"model") is found by what the build saw read: call data_paths after building the chapter.
"""

import ast
import re

from ..authoring.browser import READS
from ..pipeline.imports import imported, named_modules, source


def data_paths(chapter, root):
    """What of toymodels/data/ CHAPTER's Python may read, sorted: a top-level folder
    ("smollm2") where one of its modules names the folder or a path made at run time in it
    (f"smollm2/{name}.npz"), else the files its modules name whole ("smollm2/live.json"), so
    that a chapter using one file of another chapter's folder carries that file alone; and the
    files its modules were seen reading while the build drew its figures (browser.READS),
    which finds a file whose name the code builds. Text in a string (a docstring that
    mentions a file) names nothing."""
    folders = _folders(root)
    whole, files = set(), set()
    named = named_modules(chapter)
    modules = imported(named, root)
    for module in modules:
        for text, made in _strings(source(module, root)):
            top = text.split("/")[0]
            if top not in folders or not re.fullmatch(r"[\w.-]+(?:/[\w.{}-]*)*", text):
                continue
            if made or "/" not in text:
                whole.add(top)
            else:
                files.add(text)
    for module in modules | named:  # what the build saw read (sitebuild/authoring/browser.py)
        files |= {path for path in READS.get(module, ()) if path.split("/")[0] in folders}
    return sorted(whole | {p for p in files if p.split("/")[0] not in whole})


def _strings(code):
    """(text, made): every string constant of CODE (made False), and the start of every
    f-string (made True)."""
    out, parts = [], set()
    nodes = list(ast.walk(ast.parse(code)))
    for node in nodes:
        if isinstance(node, ast.JoinedStr):
            parts |= {id(v) for v in node.values}
            head = node.values[0] if node.values else None
            if isinstance(head, ast.Constant) and isinstance(head.value, str):
                out.append((head.value, True))
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts:
            out.append((node.value, False))
    return out


def data_folders(chapter, root):
    """The top-level folders of toymodels/data/ that CHAPTER's Python may read (a part of,
    data_paths), sorted."""
    return sorted({p.split("/")[0] for p in data_paths(chapter, root)})


def _folders(root):
    data = root / "toymodels" / "data"
    return [p.name for p in data.iterdir() if p.is_dir()] if data.is_dir() else []
