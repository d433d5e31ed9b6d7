"""Runs inside Pyodide (its Python 3.12, under Node: sitebuild/fetched/bytecode.mjs), never on the
build machine's Python, whose bytecode would not be Pyodide's: compiles the standard-library and
numpy modules a page imports, so that the reader's browser reads bytecode instead of compiling their
source at every start.

compile_ahead(out, modules) imports MODULES (Pyodide has already imported its own at start),
then writes, for every module then loaded from the standard library's zip or from numpy:
- OUT/python_stdlib.zip: Pyodide's standard library with each such module as .pyc, without its
  .py (zipimport reads a .pyc alone), and every other file as it was;
- OUT/numpy.zip: each such numpy module's bytecode as numpy/.../__pycache__/NAME.cpython-312.pyc,
  to unpack into site-packages beside the sources, which stay for tracebacks.
Each .pyc is hash-based and unchecked: Python takes it without comparing it to a source, so it
cannot be refused for a file's date. Entries are sorted and dated 1980: the same inputs make
the same bytes (with PYTHONHASHSEED fixed, which bytecode.mjs sets)."""

import importlib
import importlib.util
import sys
import zipfile
from importlib._bootstrap_external import _code_to_hash_pyc


def pyc(source, filename):
    """The bytecode of SOURCE (bytes) as a .pyc file, its tracebacks naming FILENAME."""
    code = compile(source, filename, "exec", dont_inherit=True)
    return _code_to_hash_pyc(code, importlib.util.source_hash(source), checked=False)


def put(archive, name, data):
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def compile_ahead(out, modules):
    for name in modules:
        importlib.import_module(name)
    loaded = {getattr(m, "__file__", None) for m in list(sys.modules.values())} - {None}
    stdlib = next(p for p in sys.path if p.endswith(".zip"))
    compiled = 0
    with zipfile.ZipFile(stdlib) as src, zipfile.ZipFile(f"{out}/python_stdlib.zip", "w") as z:
        for info in sorted(src.infolist(), key=lambda i: i.filename):
            data, path = src.read(info), f"{stdlib}/{info.filename}"
            if path in loaded and path.endswith(".py"):
                put(z, info.filename + "c", pyc(data, path))
                compiled += 1
            elif not info.is_dir():
                put(z, info.filename, data)
    site = importlib.import_module("numpy").__path__[0].rsplit("/", 1)[0]
    ours = sorted(f for f in loaded if f.startswith(f"{site}/numpy/") and f.endswith(".py"))
    with zipfile.ZipFile(f"{out}/numpy.zip", "w") as z:
        for path in ours:
            with open(path, "rb") as f:
                put(z, importlib.util.cache_from_source(path)[len(site) + 1 :], pyc(f.read(), path))
    return compiled + len(ours)
