"""The standard library and numpy reach the reader's browser compiled
(sitebuild/fetched/bytecode.py): every .pyc the site serves is Python 3.12's bytecode of exactly the
pinned source it replaces or sits beside, the rest of the standard library is as it was, and a
page's Python imports the bytecode."""

import _imp
import zipfile

import pytest
from conftest import open_ready
from playwright.sync_api import expect

from sitebuild.fetched import assets, bytecode

MAGIC_3_12 = (3531).to_bytes(2, "little") + b"\r\n"  # importlib.util.MAGIC_NUMBER of Python 3.12
UNCHECKED_HASH = 1  # the flags word of a hash-based .pyc that Python takes without its source


def served(site):
    (folder,) = site.glob("bytecode/*/")
    return folder


def assert_compiled_from(pyc, source, name):
    """PYC is 3.12's bytecode, hash-based and unchecked, of SOURCE (bytes): its header holds the
    source's hash, keyed by the magic number as Python keys it."""
    assert pyc[:4] == MAGIC_3_12, name
    assert int.from_bytes(pyc[4:8], "little") == UNCHECKED_HASH, name
    assert pyc[8:16] == _imp.source_hash(int.from_bytes(MAGIC_3_12, "little"), source), name


def test_the_standard_library_is_the_pinned_one_with_what_starts_import_compiled(site):
    with zipfile.ZipFile(assets.runtime_dir() / "python_stdlib.zip") as pinned:
        original = {i.filename: pinned.read(i) for i in pinned.infolist() if not i.is_dir()}
    with zipfile.ZipFile(served(site) / "python_stdlib.zip") as z:
        ours = {name: z.read(name) for name in z.namelist()}
    compiled = {name[:-1] for name in ours if name.endswith(".pyc")}
    # Pyodide's own start, numpy's import and the site's modules (AHEAD)
    needed = {"asyncio/base_events.py", "json/__init__.py", "dataclasses.py", "decimal.py"}
    needed |= {"xml/etree/ElementTree.py", "html/parser.py", "ast.py", "inspect.py"}
    assert needed <= compiled and len(compiled) > 150, sorted(needed - compiled)
    assert not compiled & set(ours), "a compiled module kept its source"
    assert set(original) == (set(ours) - {n + "c" for n in compiled}) | compiled
    for name, data in original.items():
        if name in compiled:
            assert_compiled_from(ours[name + "c"], data, name)
        else:
            assert ours[name] == data, name


def cached(source):
    """Where Python 3.12 looks for the bytecode of SOURCE (a path in site-packages)."""
    folder, _, file = source.rpartition("/")
    return f"{folder}/__pycache__/{file.removesuffix('.py')}.cpython-312.pyc"


def test_numpys_imported_modules_come_compiled_beside_their_sources(site):
    with zipfile.ZipFile(assets.runtime_dir() / assets.NUMPY_WHEEL) as wheel:
        sources = {cached(n): wheel.read(n) for n in wheel.namelist() if n.endswith(".py")}
    with zipfile.ZipFile(served(site) / "numpy.zip") as z:
        names = set(z.namelist())
        assert names <= set(sources), sorted(names - set(sources))
        for name in names:
            assert_compiled_from(z.read(name), sources[name], name)
    imported = ("numpy/__init__.py", "numpy/random/__init__.py", "numpy/_core/numeric.py")
    assert {cached(n) for n in imported} <= names and len(names) > 50


def test_the_site_serves_them_under_their_content_and_no_source_standard_library(site):
    folder = served(site)
    assert sorted(p.name for p in folder.iterdir()) == sorted(bytecode.FILES)
    assert not (site / "pyodide" / "python_stdlib.zip").exists()
    rel = folder.relative_to(site).as_posix() + "/"
    assert f'<meta name="mh-bytecode" content="{rel}">' in (site / "one-head.html").read_text()


# what a reader's cell sees of where its modules came from
WHERE = """import importlib.util, os, sys
zipped = {m.__spec__.origin.rpartition(".")[2] for m in list(sys.modules.values())
          if getattr(getattr(m, "__spec__", None), "origin", None)
          and ".zip/" in m.__spec__.origin}
numpy = [m.__file__ for n, m in list(sys.modules.items())
         if n.startswith("numpy") and (getattr(m, "__file__", None) or "").endswith(".py")]
len(numpy) > 50, all(os.path.exists(importlib.util.cache_from_source(f)) for f in numpy), zipped"""


@pytest.mark.browser
def test_a_pages_python_imports_the_standard_library_and_numpy_as_bytecode(page, base_url):
    asked = []
    page.on("request", lambda r: asked.append(r.url.split("?")[0].rsplit("/", 1)[1]))
    open_ready(page, base_url + "one-head.html")
    cell = page.locator("#cell-3")  # it runs the cells above it first, as a notebook would
    cell.locator("textarea").fill(WHERE)
    cell.get_by_role("button", name="Run").click()
    # the cells above it run first: seconds on a busy machine
    value = cell.locator("[data-output] pre.value")
    expect(value).to_have_text("(True, True, {'pyc'})", timeout=60_000)
    assert {"python_stdlib.zip", "numpy.zip"} <= set(asked)
