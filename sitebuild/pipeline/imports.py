"""Which toymodels modules a chapter's Python may import in the browser, read from the source,
not run: the modules its figures and exercise checks name and its live cells import, with every
module of toymodels/ these import in turn. The build copies a model's files only for chapters
that can load it; a SCORM package carries the data these modules read (sitebuild/lms/needs.py)."""

import ast
import re

from .chapters import Block
from .figures import MODEL


def named_modules(chapter):
    """The toymodels modules CHAPTER's figures and checks name and its live cells import."""
    found = set()
    for block in _blocks(chapter.body):
        for _, text in block.lines:
            m = re.match(r"^\s*(?:model|check)\s*:\s*(\S+)\s*$", text)
            if m and MODEL.match(m[1]) and block.name in ("figure", "exercise"):
                found.add(MODEL.match(m[1])[1])
        if block.name in ("cell", "exercise"):
            code = "\n".join(t for _, t in block.lines).split("\n---\n")[-1]
            found |= {name for name in _imports(code, None) if name.startswith("toymodels.")}
    return found


def _blocks(pieces):
    for p in pieces:
        if isinstance(p, Block):
            yield p
            yield from _blocks(p.children)


def imported(modules, root):
    """MODULES with every toymodels module they import, directly or not."""
    seen, todo = set(), list(modules)
    while todo:
        name = todo.pop()
        if name in seen or _path(name, root) is None:
            continue
        seen.add(name)
        todo += [m for m in _imports(source(name, root), name) if m.startswith("toymodels.")]
    return seen


def _imports(code, module):
    """Modules CODE imports (relative imports resolved from MODULE); a name imported from a
    package may be a module of it, so both are listed."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level and module:
                package = module.split(".")[: -node.level]
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def _path(module, root):
    """The file of a toymodels module: PACKAGE/NAME.py or PACKAGE/NAME/__init__.py."""
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def source(module, root):
    """The source of a toymodels module of the project at ROOT."""
    return _path(module, root).read_text(encoding="utf-8")
