"""The bench stands alone and writes what it measures into bench/RESULTS.md.

bench/ imports the project and sitebuild/serving/loopback.py (the server and browser it shares with
the tests), never tests/, and no bench module imports one that imports it back; the scripts it runs
in the page are JavaScript files under bench/pages/, which it reads. RESULTS.md keeps one
section per part of the bench: a run rewrites its own and keeps the others."""

import ast
import datetime
import importlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from bench import ci, common, results

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
WHEN = datetime.datetime(2026, 12, 5, 9, 30, tzinfo=datetime.UTC)


def bench_modules():
    return {p.stem: p for p in sorted(BENCH.glob("*.py"))}


def imported(path):
    """Every module name PATH imports, at its top or inside functions, as written."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def bench_imports(path, modules):
    """The bench modules PATH imports, whether as `bench.NAME` or, from bench/, as `NAME`."""
    found = set()
    for name in imported(path):
        for candidate in (name.removeprefix("bench."), name):
            if candidate in modules:
                found.add(candidate)
    return found


def test_the_bench_never_reaches_into_the_tests():
    for name, path in bench_modules().items():
        source = path.read_text(encoding="utf-8")
        tests = ("conftest", "support", "tests")
        assert not {n for n in imported(path) if n.split(".")[0] in tests}, name
        assert not re.search(r"sys\.path\.\w+\([^)]*tests", source), name


def test_no_bench_module_imports_one_that_imports_it_back():
    modules = bench_modules()
    edges = {name: bench_imports(path, modules) for name, path in modules.items()}
    assert "common" in edges["run"] and "results" in edges["run"]  # the reader reads imports
    loops = [f"{a} <-> {b}" for a in edges for b in edges[a] if a in edges.get(b, ())]
    assert loops == []
    assert "allheads" not in edges["common"] and "run" not in edges["allheads"]


JAVASCRIPT = re.compile(r"=>\s*[{(\[]|\b(const|let) \w+ =|\bdocument\.\w+\(|\bwindow\.\w+ =")


def test_page_scripts_are_javascript_files_not_python_strings():
    """No Python string of bench/ holds more than two lines of JavaScript."""
    for name, path in bench_modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                script = JAVASCRIPT.search(text)
                assert not (script and text.count("\n") > 1), f"{name}: {text[:60]!r}"


def page_scripts(kind):
    """The names of bench/pages/ files the bench reads as KIND: page_function or page_script."""
    named = set()
    for path in bench_modules().values():
        named |= set(re.findall(rf'{kind}\("([\w-]+\.js)"', path.read_text()))
    return named


def test_every_page_script_named_is_there_and_every_file_is_used():
    named = page_scripts("page_function") | page_scripts("page_script")
    files = {p.name for p in (BENCH / "pages").glob("*.js")}
    assert named and named <= files
    assert files - named == {common.HELPERS}
    pyodide = set()
    for path in bench_modules().values():
        pyodide |= set(re.findall(r'"(\w+\.py)"', path.read_text()))
    assert {p.name for p in (BENCH / "in_pyodide").glob("*.py")} <= pyodide


@pytest.mark.skipif(not shutil.which("node"), reason="node checks the scripts' syntax")
def test_page_scripts_parse_as_the_page_gets_them(tmp_path):
    """Each function as page.evaluate gets it (helpers.js in scope) is one expression, and each
    script or module the page is given as it is parses as one."""
    checked = []
    for name in sorted(page_scripts("page_function")):
        checked.append((name, f"const f = {common.page_function(name)};\n", ".js"))
    for name in sorted(page_scripts("page_script")):
        module = re.search(r"^(import|export) ", common.page_script(name), re.M)
        checked.append((name, common.page_script(name), ".mjs" if module else ".js"))
    for name, source, suffix in checked:
        script = tmp_path / Path(name).with_suffix(suffix)
        script.write_text(source)
        done = subprocess.run(["node", "--check", str(script)], capture_output=True, text=True)
        assert done.returncode == 0, f"{name}: {done.stderr}"
    assert len(checked) > 10


def test_what_the_pyodide_scripts_import_is_there():
    """Each name bench/in_pyodide/*.py imports from toymodels exists: a module moved (the
    character model went to toymodels/models/) broke `ratio`, which no test runs."""
    missing = []
    for path in sorted((BENCH / "in_pyodide").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("toymodels"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    if not hasattr(module, alias.name):
                        try:
                            importlib.import_module(f"{node.module}.{alias.name}")
                        except ImportError:
                            missing.append(f"{path.name}: {node.module}.{alias.name}")
    assert missing == []


def test_in_pyodide_code_ends_with_its_call():
    code = common.in_pyodide("charmodel.py", "the queen.")
    assert code.rstrip().endswith("\nmeasure('the queen.')")
    ast.parse(code)
    assert common.answer(repr('{"a": [1, 2]}')) == {"a": [1, 2]}


def test_a_run_rewrites_its_own_section_and_keeps_the_others(tmp_path):
    path = tmp_path / "RESULTS.md"
    meta = {"when": WHEN, "at": "abc123", "on": "Linux, 2 CPUs"}
    results.write("live", "Live: 92 ms.", [0.5, 0.4, 0.3], [1.0, 0.6, 0.4], path, **meta)
    results.write("chapters", "| a | b |", [0.2, 0.2, 0.2], [0.3, 0.2, 0.2], path, **meta)
    text = path.read_text()
    assert text.startswith(results.HEAD)
    assert text.index("Chapters: loads and taps") < text.index("Your own sentence")  # in order
    assert (
        "Run 2026-12-05 09:30 UTC on commit abc123, Linux, 2 CPUs. Load average (1, 5, 15 min): "
        "0.5 0.4 0.3 before, 1.0 0.6 0.4 after.\n\nLive: 92 ms.\n"
    ) in text
    results.write("live", "Live: 80 ms.", [9.0, 5.0, 3.0], [9.5, 6.0, 3.0], path, **meta)
    again = path.read_text()
    assert "Live: 80 ms." in again and "92 ms" not in again
    assert "| a | b |" in again and again.count("<!-- bench section: live -->") == 1
    assert "**The machine was busy**: load average up to 9.5 on " in again
    assert set(results.sections(again)) == {"chapters", "live"}


def test_the_machine_is_busy_above_one_load_per_cpu():
    assert results.busy([1.9, 2.0, 5.0], [1.0, 1.5, 5.0], cpus=2) == ""
    assert "up to 2.5 on 2 CPUs" in results.busy([1.0, 1.0, 1.0], [1.0, 2.5, 1.0], cpus=2)


PYTEST_TAIL = """\
tests/test_zip.py ..                                                     [100%]

=========================== short test summary info ============================
SKIPPED [1] tests/test_x.py:12: needs a model
FAILED tests/test_y.py::test_z - AssertionError: 2 passed in 1.00s
========= 1 failed, 958 passed, 2 skipped, 1 error in 1196.23s (0:19:56) =========
"""


def test_ci_reads_pytests_last_summary_line():
    assert ci.summary(PYTEST_TAIL) == {
        "passed": 958,
        "failed": 1,
        "skipped": 2,
        "errors": 1,
        "seconds": 1196.23,
    }
    quiet = "collected\n961 passed, 2 warnings in 30.10s\n"  # pytest -q: no bars
    assert ci.summary(quiet) == {"passed": 961, "failed": 0, "warnings": 2, "seconds": 30.1}
    assert ci.summary("make: *** [Makefile:36: lint] Error 1\n") is None


def test_ci_writes_minutes_tests_commit_and_load(tmp_path):
    path = tmp_path / "RESULTS.md"
    body = ci.markdown(0, 23.44, ci.summary(PYTEST_TAIL.replace("1 failed, ", "")))
    section = results.write("ci", body, [0.4, 0.5, 0.6], [1.9, 1.2, 0.8], path, at="0123abcd")
    assert "on commit 0123abcd" in section and "0.4 0.5 0.6 before, 1.9 1.2 0.8 after" in section
    assert (
        "`bash .ci/run` on a clean clone: **passed** in 23.4 minutes, of which pytest 19.9 "
        "minutes (1196 s): 958 passed, 0 failed, 2 skipped, 1 error." in section
    )
    assert "**failed (exit status 2)** in 3.0 minutes; pytest printed no summary" in ci.markdown(
        2, 3.0, None
    )


def test_ci_runs_a_clean_clone_of_head_and_records_it(tmp_path):
    """A repository whose .ci/run prints a pytest summary: the clone holds HEAD's files only
    (not the work tree's changes), and its run's tests, status and commit are recorded."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    run = repo / ".ci" / "run"
    run.write_text(
        "test -e committed && ! test -e uncommitted || exit 7\n"
        "echo '=== 2 failed, 5 passed in 1.50s ==='\nexit 1\n"
    )
    (repo / "committed").write_text("")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "--quiet"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "--quiet", "-m", "a"], check=True)
    (repo / "uncommitted").write_text("")
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    status, section = ci.run(repo, tmp_path / "RESULTS.md")
    assert status == 1
    assert f"on commit {head[:12]}," in section
    assert "**failed (exit status 1)**" in section and ": 5 passed, 2 failed." in section
    assert section in (tmp_path / "RESULTS.md").read_text()
    assert not list(Path(tempfile.gettempdir()).glob("manyheads-ci-*/repo/committed"))


def test_the_committed_results_hold_only_the_bench_sections():
    text = results.PATH.read_text(encoding="utf-8")
    assert text.startswith(results.HEAD)
    found = results.sections(text)
    assert set(found) <= set(results.SECTIONS) and "chapters" in found and "ci" in found
    assert list(found) == [k for k in results.SECTIONS if k in found]


def test_a_run_keeps_the_history_no_part_writes_as_it_was(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(results.PATH.read_text(encoding="utf-8"), encoding="utf-8")
    history = results.sections(path.read_text())["history"]
    assert "2.5-3.1 s" in history  # bytecode.py's timings, moved from its docstring
    meta = {"when": WHEN, "at": "abc123", "on": "Linux, 2 CPUs"}
    results.write("ci", "CI: passed.", [0.5, 0.4, 0.3], [1.0, 0.6, 0.4], path, **meta)
    text = path.read_text()
    assert results.sections(text)["history"] == history and text.endswith(history)
    assert "CI: passed." in results.sections(text)["ci"]


def test_the_ratio_rows_name_every_work_ratio_py_times():
    """bench/run.py's part `ratio` writes a row for each piece of work bench/in_pyodide/ratio.py
    times, each with both ratios to CPython's time."""
    from bench import run

    tree = ast.parse((BENCH / "in_pyodide" / "ratio.py").read_text())
    work = next(n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "WORK")
    assert list(run.RATIO_ROWS) == [e.id for e in work.value.elts]
    ms = {key: 2.0 for key in run.RATIO_ROWS}
    r = {"cpython_ms": {"runs": 15, **ms}, "node_ms": {**ms, "python_loop": 7.0}}
    r["chromium_ms"] = {**ms, "python_loop": 9.0}
    table = run.ratio_markdown(r)
    assert (
        f"| {run.RATIO_ROWS['python_loop']} | 2.00 ms | 7.00 ms | 3.5× | 9.00 ms | 4.5× |" in table
    )
    assert "each the best of 15 runs after one" in table


def test_every_part_has_its_section_and_is_named_in_the_docs():
    """Each part `python bench/run.py PART` takes writes a section of its own, and
    docs/performance.md's list of the parts names them all, in run.py's order."""
    from bench import run

    assert set(run.PARTS) <= set(results.SECTIONS)
    docs = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    listed = re.search(r"runs\s+some\s+parts\s+alone\s+\(([^)]*)\)", docs)
    assert listed, "docs/performance.md no longer lists the parts"
    assert re.findall(r"`(\w+)`", listed[1]) == list(run.PARTS)


def test_the_360m_files_block_types_are_llama_cpps_q4_k_m(tmp_path):
    """bench/gguf360m.py at a small size of the same kind (rows 320 wide, not a whole number of
    k-quant blocks, and a feed-forward 512 wide, which is): each tensor has the type llama.cpp's
    Q4_K_M gives it, written out here (its use_more_bits picks layers 0, 3, 6 and 7 of 8 for
    Q6_K's attn_v and ffn_down; Q4_K falls back to Q5_0 and Q6_K to Q8_0 where rows are 320),
    the page's card opens it, and every weight is finite and small, as a real model's are."""
    pytest.importorskip("gguf", reason="the file is written with the gguf package")
    from support import tinygguf

    from bench import gguf360m
    from toymodels.models import card, quants
    from toymodels.models import gguf as reader

    donor = tinygguf.write_llama(tmp_path / "donor.gguf").read_bytes()
    vocab = len(tinygguf.vocabulary()[0])
    config = {"layers": 8, "width": 320, "heads": 5, "kv": 1, "ffn": 512, "vocab": vocab}
    path = tmp_path / "q4km.gguf"
    gguf360m.write(path, donor, config=config)
    data = path.read_bytes()
    tensors = reader.Reader(data, quants.nbytes).tensors
    want = {"token_embd.weight": "Q8_0", "output_norm.weight": "F32"}
    for i in range(8):
        more = i in (0, 3, 6, 7)
        for name in ("attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"):
            want[f"blk.{i}.{name}.weight"] = "Q5_0"
        want[f"blk.{i}.attn_v.weight"] = "Q8_0" if more else "Q5_0"
        want[f"blk.{i}.ffn_down.weight"] = "Q6_K" if more else "Q4_K"
        want[f"blk.{i}.attn_norm.weight"] = want[f"blk.{i}.ffn_norm.weight"] = "F32"
    assert {name: t[0] for name, t in tensors.items()} == want
    c = card.read(data)
    assert (c.layers, c.heads, c.kv_heads, c.width) == (8, 5, 1, 320)
    for name, (kind, shape, raw) in tensors.items():
        w = quants.dequantize(raw, kind, shape)
        assert np.isfinite(w).all() and np.abs(w).max() < 2, name
        assert np.abs(w).mean() > 1e-3, name  # not all zero
