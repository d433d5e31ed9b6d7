"""What the reader's browser has, so that code it cannot run stops the build at the author's line.

The build runs a figure's module under CPython, with everything the build installed, and the
reader's browser runs the same module under Pyodide, which has much less: the standard library
as Pyodide ships it (python_stdlib.zip, less the modules pyodide-lock.json sells apart, such as
sqlite3 and ssl), numpy, and the shipped toymodels/ (without its BUILD_ONLY packages); of files,
only the .py files of toymodels/, and the files of toymodels/data/, fetched one by one through
toymodels.page.data.read_bytes. So `import markdown` or a word list read from beside the module
works at build time and fails on the reader's first tap.

Two checks hold a figure's code to that. `refuse_imports` reads the source of a module and of
every toymodels module it imports (every import statement, run or not, since a figure's state
decides which lines run) and stops at the first import of what the browser lacks. `traced`
runs the figure (its import and every state the build draws) with its file reads watched (an
audit hook, sys.addaudithook): a read by toymodels/ code of a file of the project that the
browser would not have raises FileNotFoundError there, as the browser would, with what to do
instead. Files outside the project (a cache the build fills, say) are not watched. Each read
through read_bytes is recorded in READS, by the module that asked, so that a chapter's SCORM
package carries the data its Python read even where no string names the folder
(sitebuild/lms/needs.py, sitebuild/pipeline/imports.py).
"""

import ast
import contextlib
import functools
import json
import os
import sys
import threading
import zipfile
from importlib import util
from pathlib import Path

import toymodels
from toymodels import BUILD_ONLY
from toymodels.page import data

from ..fetched import assets
from ..pipeline.chapters import AuthorError
from . import blame

# modules of the browser that no file names: Pyodide's bridge to JavaScript
BRIDGE = ("js", "pyodide_js")
# toymodels module -> the paths in toymodels/data/ it read through read_bytes
READS = {}
# path in toymodels/data/ -> (file, line) of toymodels/ first seen reading it through read_bytes
READ_AT = {}


@functools.cache
def modules():
    """The top-level modules the reader's Python can import, or None when the runtime has not
    been fetched (the build fetches it; a figure alone is then not held to it)."""
    try:
        runtime = assets.runtime_dir()
    except Exception:
        return None
    stdlib = zipfile.ZipFile(runtime / "python_stdlib.zip").namelist()
    lock = json.loads((runtime / "pyodide-lock.json").read_text(encoding="utf-8"))
    names = {n.split("/")[0].removesuffix(".py") for n in stdlib} - {"site-packages"}
    sold_apart = {
        name
        for package in lock["packages"].values()
        if package.get("package_type") == "cpython_module"
        for name in package["imports"]
    }
    # the standard library's compiled modules (math, zlib, ...) are built into Pyodide itself;
    # the few it leaves out (readline, say) are not told apart here
    compiled = {n for n in sys.stdlib_module_names if n not in names and _compiled(n)}
    loaded = set(lock["packages"]["numpy"]["imports"])  # static/pyruntime.js loads numpy alone
    return frozenset((names | compiled | set(sys.builtin_module_names) | loaded) - sold_apart) | {
        "toymodels",
        *BRIDGE,
    }


def _compiled(name):
    try:
        spec = util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return spec is not None and (spec.origin == "built-in" or spec.origin.endswith(".so"))


def refuse_imports(name, rel, line):
    """An AuthorError at the first import, in module NAME or a toymodels module it imports, of
    a module the reader's browser lacks; REL:LINE names the chapter's line that needs NAME."""
    have = modules()
    if have is None:
        return
    seen, todo = set(), [name]
    while todo:
        module = todo.pop(0)
        path = _file(module)
        if module in seen or path is None:
            continue
        seen.add(module)
        for imported, at in _imports_of(module, str(path), path.stat().st_mtime_ns):
            top = imported.split(".")
            if top[0] == "toymodels" and len(top) > 1 and top[1] in BUILD_ONLY:
                raise AuthorError(
                    blame.relative(str(path)),
                    at,
                    f"this imports toymodels/{top[1]}/, which is build-only and never "
                    f"reaches the reader's browser (needed by {rel}:{line}); a module the "
                    "browser runs may import numpy, the standard library and the other "
                    "packages of toymodels/",
                )
            if top[0] not in have:
                raise AuthorError(
                    blame.relative(str(path)),
                    at,
                    f"the reader's browser has no module '{top[0]}' (needed by {rel}:{line}): "
                    "its Python holds numpy, the standard library as Pyodide ships it and "
                    "toymodels/, and nothing else the build has installed; compute it with "
                    "those, or compute it at build time as a prose value",
                )
            if top[0] == "toymodels":
                todo.append(imported)


def refuse_cell_imports(code, rel, first_line):
    """An AuthorError at the first import of a live cell's CODE (its first line at REL:
    FIRST_LINE) of a module the reader's browser lacks: the reader runs the cell there."""
    have = modules()
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return  # running it says so
    for imported, at in _imports(tree, "__cell__"):
        top = imported.split(".")
        lacking = top[0] not in have if have is not None else False
        if lacking or (top[0] == "toymodels" and len(top) > 1 and top[1] in BUILD_ONLY):
            raise AuthorError(
                rel,
                first_line + at - 1,
                f"this live cell imports {imported}, which the reader's browser does not have, "
                "so it would fail when the reader runs it: its Python holds numpy, the standard "
                "library as Pyodide ships it and toymodels/ without its build-only packages",
            )


@functools.lru_cache(maxsize=1024)
def _imports_of(module, path, mtime):
    """The imports of MODULE, read from its file PATH as it was at MTIME (a build reads each
    file once, and `serve` again once it changed)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (SyntaxError, ValueError):
        return ()  # importing it said so already
    return tuple(_imports(tree, module))


def _imports(tree, module):
    """(module name, line) of each import in TREE, relative ones resolved from MODULE; a name
    imported from a package may be a module of it, so both are listed. An import inside a try
    that catches ImportError is left out: the module runs without it."""
    is_package = (_file(module) or Path()).name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]

    def walk(node, guarded):
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            for child in node.body:
                yield from walk(child, True)
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                yield from walk(child, guarded)
            return
        if isinstance(node, ast.Import) and not guarded:
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not guarded:
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            yield base, node.lineno
            yield from (
                (f"{base}.{a.name}", node.lineno)
                for a in node.names
                if base.startswith("toymodels") and _file(f"{base}.{a.name}")
            )
        for child in ast.iter_child_nodes(node):
            yield from walk(child, guarded)

    yield from walk(tree, False)


def _catches_import_error(handler):
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        n is None or (isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError"))
        for n in names
    )


def _file(module):
    """The file of a toymodels module in any folder of the package, or None."""
    parts = module.split(".")
    if parts[0] != "toymodels" or len(parts) < 2:
        return None
    for folder in map(Path, toymodels.__path__):
        base = folder.joinpath(*parts[1:])
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return path
    return None


_tracing = threading.local()


@contextlib.contextmanager
def traced(refuse=True):
    """While the block runs in this thread, reads through read_bytes are added to READS and,
    with REFUSE, a read by toymodels/ code of a file of the project that the browser would not
    have raises FileNotFoundError there. Without REFUSE, for code the browser may never run: a
    prose value's module, imported at build time alone unless a figure imports it too."""
    _install()
    before = getattr(_tracing, "on", None)
    _tracing.on = "refuse" if refuse else "record"
    try:
        yield
    finally:
        _tracing.on = before


_installed = []


def _install():
    if not _installed:
        sys.addaudithook(_hook)  # for the life of the process: an audit hook cannot be removed
        _installed.append(True)


def _hook(event, args):
    mode = getattr(_tracing, "on", None)
    if event != "open" or mode is None:
        return
    path, how, flags = args
    if not isinstance(path, (str, bytes, Path)) or _writes(how, flags):
        return
    _tracing.on = None  # what the check itself does is not traced
    try:
        _check_read(Path(path.decode() if isinstance(path, bytes) else path).resolve(), mode)
    finally:
        _tracing.on = mode


def _writes(mode, flags):
    """Whether a file is opened to be written (open's MODE, or os.open's FLAGS): only reads
    are watched."""
    if mode is not None:
        return any(c in mode for c in "wax+")
    return flags & (os.O_WRONLY | os.O_RDWR) != 0


def _check_read(path, mode):
    """Record a read through read_bytes; in MODE "refuse", raise FileNotFoundError if the
    innermost toymodels/ frame reads PATH, a file of the project the browser lacks."""
    reader = Path(data.__file__).resolve()
    frame, through = sys._getframe(2), None
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<frozen importlib") or filename.endswith(
            ("linecache.py", "tokenize.py")
        ):
            return  # Python importing a module, or reading source for a traceback
        if Path(filename).resolve() == reader:
            through = through or frame
        elif blame.relative(filename):
            break
        frame = frame.f_back
    if frame is None and through is None:
        return  # not toymodels/ code
    home, shown = Path(data.HERE).resolve(), _shown(path)
    if through is not None and home in path.parents:
        if frame is not None:
            asked = frame.f_globals.get("__name__", "")
            READS.setdefault(asked, set()).add(path.relative_to(home).as_posix())
            READ_AT.setdefault(
                path.relative_to(home).as_posix(),
                (blame.relative(frame.f_code.co_filename), frame.f_lineno),
            )
        return
    if mode != "refuse":
        return
    if through is not None:
        raise FileNotFoundError(
            f"read_bytes reads {shown}, outside toymodels/data/, the only folder the site "
            "ships data from (its data.json): move the file into toymodels/data/ and name it "
            "from there"
        )
    if not _in_project(path) or (path.suffix == ".py" and _shipped(path)):
        return
    if home in path.parents:
        inside = path.relative_to(home).as_posix()
        raise FileNotFoundError(
            f"{shown} is read directly, and the reader's browser gets a data file only through "
            f'toymodels.page.data.read_bytes: write read_bytes("{inside}")'
        )
    raise FileNotFoundError(
        f"the reader's browser has no file {shown}: it has the .py files of toymodels/ and, "
        "through toymodels.page.data.read_bytes, the files of toymodels/data/; move the file "
        'into toymodels/data/ and read it with read_bytes("PATH IN toymodels/data")'
    )


def _folders():
    return [Path(p).resolve() for p in toymodels.__path__]


def _in_project(path):
    return any(folder.parent in path.parents for folder in _folders())


def _shipped(path):
    for folder in _folders():
        if folder in path.parents:
            return path.relative_to(folder).parts[0] not in BUILD_ONLY
    return False


def _shown(path):
    """PATH as an author reads it: toymodels/…, else from the project's folder, else whole."""
    if blame.relative(str(path)):
        return blame.relative(str(path))
    for folder in _folders():
        if folder.parent in path.parents:
            return path.relative_to(folder.parent).as_posix()
    return str(path)
