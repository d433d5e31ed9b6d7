"""The plan of the house, held by tests: the import graph has no loop, shipped code never
reaches build-only code, chapter packages depend one way, and the tree the build ships to
the browser imports every module and computes every value the chapters quote."""

import ast
import importlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sitebuild.fetched import bytecode
from sitebuild.pipeline.build import shipped_python
from toymodels import BUILD_ONLY

ROOT = Path(__file__).resolve().parent.parent
# the kernel first, the real models over it, then the chapters in reading order: a package may
# import only itself and packages before it (the guide's example stands alone on the kernel)
ORDER = (
    "page",
    "models",
    "one_head",
    "many_heads",
    "split_attend",
    "real_heads",
    "one_character",
    "heads_that_copy",
    "what_a_head_does",
    "why_a_head_looks",
)
ALONE = ("guide",)


def module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules():
    files = [ROOT / "build.py", *sorted((ROOT / "sitebuild").rglob("*.py"))]
    files += sorted((ROOT / "toymodels").rglob("*.py"))
    return {module_name(p): p for p in files}


def imported(path, name, known):
    """Every module the file (module NAME) imports, at its top or inside functions, by its
    absolute name; `from pkg import x` imports pkg.x when that is one of the KNOWN modules."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for a in node.names:
                yield f"{base}.{a.name}" if f"{base}.{a.name}" in known else base


def imports(path, name, known):
    """The project modules that the file imports, at its top or inside functions."""
    found = set()
    for target in imported(path, name, known):
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def graph():
    known = project_modules()
    return {name: imports(path, name, known) for name, path in known.items()}


def shipped(name):
    parts = name.split(".")
    return parts[0] == "toymodels" and (len(parts) == 1 or parts[1] not in BUILD_ONLY)


def test_the_import_graph_has_no_loop():
    edges = graph()
    state, loops = {}, []

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(edges[node]):
            if state.get(nxt) == "open":
                loops.append(" -> ".join(path[path.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert loops == []


def test_the_graph_is_read_right():
    """The reader of imports finds relative, aliased and in-function imports (else the other
    tests here could pass on an empty graph)."""
    edges = graph()
    assert "toymodels.page.html" in edges["toymodels.many_heads.figure"]
    assert (
        "toymodels.many_heads.model" in edges["toymodels.many_heads.figure"]
    )  # `from . import model`
    assert "toymodels.page.data" in edges["toymodels.models.charmodel.model"]  # inside a function
    assert "toymodels.models.charmodel.copy_test" in edges["toymodels.training.evaluate"]
    assert "sitebuild.pipeline.build" in edges["build"]


def test_shipped_code_never_reaches_build_only_code():
    bad = [
        f"{a} imports {b}"
        for a, targets in graph().items()
        if shipped(a)
        for b in targets
        if not shipped(b)
    ]
    assert bad == []


def test_the_bytecode_compiled_ahead_covers_what_the_shipped_code_imports():
    """sitebuild/fetched/bytecode.py's AHEAD names exactly the standard-library and numpy modules
    the shipped Python imports: one it missed would be compiled from source at every start."""
    known, found = project_modules(), set()
    for f in shipped_python(ROOT):
        path = ROOT / f["path"]
        found.update(imported(path, module_name(path), known))
    outside = {n for n in found if n.split(".")[0] in (*sys.stdlib_module_names, "numpy")}
    assert sorted(outside) == sorted(bytecode.AHEAD), (
        "set sitebuild/fetched/bytecode.py's AHEAD to these modules (then its MADE_SHA256 to the "
        "hashes the build names): " + ", ".join(sorted(outside))
    )


def test_no_module_imports_the_command_line_script():
    assert [a for a, targets in graph().items() if "build" in targets] == []


def test_the_build_is_grouped_and_its_commands_sit_on_top():
    """sitebuild/ holds its modules in subpackages that show the plan (README, Layout), and the
    commands built on the pipeline (lms/: SCORM, cmi5, quiz banks; serving/: serve, the loopback
    server) are imported by no other part of the build, so each can change alone."""
    loose = sorted(p.name for p in (ROOT / "sitebuild").glob("*.py") if p.name != "__init__.py")
    assert loose == [], "put these in a subpackage of sitebuild/: " + ", ".join(loose)
    on_top = ("sitebuild.lms", "sitebuild.serving")
    bad = [
        f"{a} imports {b}"
        for a, targets in graph().items()
        if a.startswith("sitebuild.") and not a.startswith(on_top)
        for b in targets
        if b.startswith(on_top)
    ]
    assert bad == []


def test_conftest_holds_only_hooks_and_fixtures():
    """tests/conftest.py is pytest's hooks and fixtures; every helper lives in tests/support/,
    one job a module, and conftest only re-exports the ones tests import from it."""
    tree = ast.parse((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    helpers = [
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        or isinstance(node, ast.FunctionDef)
        and not node.name.startswith("pytest_")
        and not any("fixture" in ast.unparse(d) for d in node.decorator_list)
        and node.name != "uses_a_browser"  # the collection hook's own test
    ]
    assert helpers == [], "move these to a module of tests/support/: " + ", ".join(helpers)


def test_chapter_packages_depend_one_way():
    bad = []
    for a, targets in graph().items():
        if not shipped(a) or a.count(".") < 2:
            continue
        pa = a.split(".")[1]
        for b in targets:
            pb = b.split(".")[1] if b.count(".") >= 1 else None
            if pb is None or pb == pa:
                continue
            if pa in ALONE:
                allowed = ("page",)
            elif pa in ORDER:
                allowed = ORDER[: ORDER.index(pa)]
            else:  # a new chapter's package comes after every chapter listed here
                allowed = ORDER
            if pb not in allowed:
                bad.append(f"{a} imports {b}")
    assert bad == []
    packages = {p.name for p in (ROOT / "toymodels").iterdir() if (p / "__init__.py").exists()}
    assert set(ORDER + ALONE + BUILD_ONLY) <= packages


def test_a_real_models_code_is_reached_through_models_never_through_a_chapter():
    """A real model's forward, tokenizer and live run are toymodels/models/NAME/, written once:
    no package imports a module of a chapter that reads a real model but that chapter itself
    (a second chapter on the same model imports toymodels.models.NAME)."""
    real = ("real_heads", "heads_that_copy", "what_a_head_does")
    bad = [
        f"{a} imports {b}"
        for a, targets in graph().items()
        for b in targets
        if b.count(".") >= 1
        and b.split(".")[1] in real
        and a.split(".")[:2] != b.split(".")[:2]
        and not a.startswith(("toymodels.export", "tests"))
    ]
    assert bad == []


def chapter_names():
    """Every {{ value }}, figure model and exercise check the chapters name."""
    values, callables = set(), set()
    for path in sorted((ROOT / "chapters").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        # outside code: the guide shows placeholders and names as examples in backticks
        prose = re.sub(r"^(```|~~~).*?^\1|`[^`\n]+`", "", text, flags=re.M | re.S)
        values |= set(re.findall(r"\{\{\s*(toymodels[\w.]+)\s*\}\}", prose))
        callables |= set(re.findall(r"^(?:model|check):\s*(toymodels[\w.]+:\w+)\s*$", text, re.M))
    return sorted(values), sorted(callables)


def test_the_shipped_tree_imports_everything_and_computes_every_value(tmp_path):
    """Only what the build copies into site/py/: every module imports, every placeholder of
    every chapter evaluates, every figure and check the chapters name exists."""
    files = shipped_python(ROOT)
    for f in files:
        (tmp_path / f["path"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f["path"], tmp_path / f["path"])
    shutil.copytree(ROOT / "toymodels" / "data", tmp_path / "toymodels" / "data")
    modules = sorted(module_name(ROOT / f["path"]) for f in files)
    values, callables = chapter_names()
    assert len(values) > 50 and len(callables) > 8
    script = """
import importlib, json, sys
modules, values, callables = json.loads(sys.stdin.read())
for name in modules:
    importlib.import_module(name)
out = {}
for name in values:
    module, _, attr = name.rpartition(".")
    v = getattr(importlib.import_module(module), attr)
    out[name] = str(v() if callable(v) else v)
for name in callables:
    module, _, func = name.partition(":")
    assert callable(getattr(importlib.import_module(module), func)), name
try:
    import toymodels.training
except ModuleNotFoundError:
    out["(training)"] = "absent"
print(json.dumps(out))
"""
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            f"import sys; sys.path.insert(0, {str(tmp_path)!r}); exec({script!r})",
        ],
        input=json.dumps([modules, values, callables]),
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out.pop("(training)") == "absent"
    assert sorted(out) == values and all(v.strip() for v in out.values())


def names_read(files):
    """Every name shipped code reads: a variable, an attribute, a name imported."""
    read = set()
    for path in files:
        for node in ast.walk(ast.parse((ROOT / path).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                read.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                read.add(node.attr)
            elif isinstance(node, ast.ImportFrom):
                read |= {alias.name for alias in node.names}
    return read


def test_every_value_published_for_prose_is_quoted_or_used():
    """The other way round from the test above: a value a module lists in PROSE_VALUES is
    quoted by a chapter, or read by shipped code (a figure, a check, another value); one that
    is neither is dead weight the build computes for nothing."""
    files = [f["path"] for f in shipped_python(ROOT)]
    published = set()
    for path in files:
        if "PROSE_VALUES" in (ROOT / path).read_text(encoding="utf-8"):
            module = importlib.import_module(module_name(ROOT / path))
            listed = getattr(module, "PROSE_VALUES", ())
            published |= {f"{module.__name__}.{name}" for name in listed}
    quoted, _ = chapter_names()
    assert set(quoted) <= published, set(quoted) - published
    read = names_read(files)
    idle = sorted(n for n in published - set(quoted) if n.rpartition(".")[2] not in read)
    assert idle == [], "published for prose, never quoted nor read: " + ", ".join(idle)


def test_no_module_reaches_into_another_modules_private_names():
    """A name another module uses is public: `assets.copy_file`, never `assets._copy`."""
    project = project_modules()
    bad = []
    for name, path in project.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        modules = set()  # the names this file gives the project's modules it imports
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                for alias in node.names:
                    if f"{base}.{alias.name}" in project:
                        modules.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                modules |= {a.asname for a in node.names if a.asname and a.name in project}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    assert bad == []


def test_a_missing_export_is_one_kind_of_error_whichever_chapter_reads_it(monkeypatch):
    """One MissingData (toymodels/page/data.py), raised by each chapter's reader of exported
    files with the command that writes the file."""
    from toymodels.heads_that_copy import heads as copying
    from toymodels.page import data
    from toymodels.real_heads import maps
    from toymodels.what_a_head_does import heads as doing

    defined = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "toymodels").rglob("*.py")
        if re.search(r"^class MissingData\b", p.read_text(encoding="utf-8"), re.M)
    ]
    assert defined == ["toymodels/page/data.py"]

    def missing(rel):
        raise FileNotFoundError(f"toymodels/data/{rel} is missing")

    monkeypatch.setattr(data, "read_bytes", missing)
    for read, how in (
        (copying._read, "python -m toymodels.export smollm2"),
        (doing._read, "python -m toymodels.export patching"),
        (maps._read_json, "make export"),
    ):
        with pytest.raises(data.MissingData, match=f"is missing; run `{how}`"):
            read("index.json")
