"""Import a module and what it imports in small steps, one call each, leaf first.

What: the page calls load(name) until it says nothing is left. Each call does one small thing:
it reads one more of this project's files to learn NAME's import order (order(): each module
after the modules its top-level import statements name, read with ast, not run, following
this project's modules and stopping at anyone else's, so numpy.random is one step), or, once
the order is known, imports the first module in it that is not imported yet. A package whose
__init__ imports its modules (page/kit) comes in one call: Python runs it before any of them.

Why: Pyodide has no compiled .pyc for the site's modules, so a first import compiles them, and
a module that pulls in ten others holds the worker for hundreds of milliseconds in one call; a
tap elsewhere on the page would wait behind it. One file read or one module imported per call
lets the worker answer between two (trainer.js imports the trainer this way when the reader
presses Train).
"""

import ast
import importlib
import importlib.util
import os
import sys

OURS = __name__.split(".")[0]  # "toymodels"
ROOT = os.path.dirname(os.path.dirname(sys.modules[OURS].__file__))  # the folder holding it


def _source(name):
    """(the file of our module NAME, whether it is a package), or None: found on disk, since
    importlib's find_spec would import NAME's parent packages."""
    path = os.path.join(ROOT, *name.split("."))
    for file, package in ((os.path.join(path, "__init__.py"), True), (path + ".py", False)):
        if os.path.isfile(file):
            return file, package
    return None


def _imports(name):
    """The modules our module NAME's top-level statements import (relative ones resolved)."""
    found = _source(name)
    if found is None:
        return []
    file, is_package = found
    package = name if is_package else name.rpartition(".")[0]
    with open(file, encoding="utf-8") as f:
        tree = ast.parse(f.read(), file)
    out = []
    for node in tree.body:  # imports inside functions run later, when called
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            out.append(base)
            for alias in node.names:  # `from . import model` imports a module
                if base.split(".")[0] == OURS and _source(f"{base}.{alias.name}"):
                    out.append(f"{base}.{alias.name}")
    return out


_read = {}  # our module -> the modules its top-level statements import (each file read once)


def _walk(name):
    """(NAME and what it imports, each after its imports, as far as the files read so far tell;
    the first of our modules on the way whose file is not read yet, or None)."""
    out, seen, unread = [], set(), []

    def visit(mod):
        if mod in seen or unread:
            return
        seen.add(mod)
        parent = mod.rpartition(".")[0]
        if parent:
            visit(parent)
        if mod.split(".")[0] == OURS:
            if mod not in _read:
                unread.append(mod)
                return
            for dep in _read[mod]:
                visit(dep)
        out.append(mod)

    visit(name)
    return out, (unread or [None])[0]


def order(name):
    """NAME and every module it imports, each after what it imports (parents before children)."""
    out, unread = _walk(name)
    while unread:
        _read[unread] = _imports(unread)
        out, unread = _walk(name)
    return tuple(out)


def load(name):
    """One step towards importing NAME: read one more of our files to learn the order, or import
    the first module of order(NAME) not imported yet -> {"left": how many steps remain, at
    least}."""
    out, unread = _walk(name)
    if unread:
        _read[unread] = _imports(unread)
        return {"left": 1 + sum(m not in sys.modules for m in out)}
    todo = [m for m in out if m not in sys.modules]
    if todo:
        importlib.import_module(todo[0])
    return {"left": max(len(todo) - 1, 0)}
