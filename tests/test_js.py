"""The JavaScript, checked in every test run as ruff checks the Python: its unit tests
(tests/js/*.test.js, run by `node --test`: the answer store's logic in milliseconds, without a
browser), the syntax of every script the site ships (and of the bench's page scripts), and
lines of at most ruff's line-length (100 characters). A line too long is split, never exempted.

Node's own check is used rather than a linter from npm: it needs no install beyond the Node
that npm (README: what the commands need) comes with."""

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["ruff"]["line-length"]
# templates/early.js is written into every page's <head>, a classic inline script
SHIPPED = [
    *sorted((ROOT / "templates" / "static").glob("*.js")),
    ROOT / "templates" / "early.js",
    *sorted((ROOT / "bench").glob("*.js")),
]
SHIPPED += sorted((ROOT / "sitebuild").glob("*.js"))  # serve's own, sent to its pages
UNIT_TESTS = sorted((ROOT / "tests" / "js").glob("*.test.js"))
# a course page loads this one with a plain <script src>, not as a module (README: teachers)
CLASSIC = {"embed-resize.js", "early.js"}
# a classic script parsed as the browser parses one (node --check would take it for CommonJS)
PARSE_SCRIPT = (
    "new (require('vm').Script)(require('fs').readFileSync(0, 'utf8'), "
    "{ filename: process.argv[1] })"
)


def where(path):
    return path.relative_to(ROOT).as_posix()


@pytest.fixture(scope="module")
def node():
    found = shutil.which("node")
    if not found:
        pytest.fail("node is not installed: it comes with npm (Debian: apt-get install npm)")
    return found


def test_the_unit_tests_pass(node):
    assert UNIT_TESTS, "tests/js/ holds no *.test.js"
    run = subprocess.run(
        [node, "--test", "--test-reporter=spec", *map(str, UNIT_TESTS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if run.returncode:
        pytest.fail(f"node --test failed:\n{run.stdout}\n{run.stderr}", pytrace=False)


@pytest.mark.parametrize("path", SHIPPED, ids=where)
def test_every_shipped_script_parses(node, path):
    if path.name in CLASSIC:
        command = [node, "-e", PARSE_SCRIPT, where(path)]
    else:
        command = [node, "--input-type=module", "--check"]
    run = subprocess.run(
        command, input=path.read_bytes(), cwd=ROOT, capture_output=True, timeout=60
    )
    if run.returncode:
        error = run.stderr.decode("utf-8", "replace").replace("[stdin]", where(path))
        pytest.fail(error.split("\n    at ")[0], pytrace=False)


def test_no_line_is_longer_than_pythons():
    too_long = [
        f"{where(path)}:{n}: {len(line)} characters, more than {LIMIT}; split the line"
        for path in [*SHIPPED, *(ROOT / "tests").glob("js/**/*.js")]
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if len(line) > LIMIT
    ]
    assert not too_long, "\n".join(too_long)
