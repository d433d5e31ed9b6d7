"""The JavaScript, checked in every test run as ruff checks the Python: its unit tests
(tests/js/*.test.js, run by `node --test`: the answer store's logic in milliseconds, without a
browser), the syntax of every script the site ships (the service worker as the build renders
it), of the bench's page scripts and of the build's Node part, each parsed as what it runs as (a
module or a classic script), and lines of at most ruff's line-length (100 characters). A line
too long is split, never exempted.

Node's own check is used rather than a linter from npm: it needs no install beyond the Node
that npm (README: what the commands need) comes with."""

import subprocess
import tomllib
from pathlib import Path

import pytest

from sitebuild.pipeline import build as site_build

ROOT = Path(__file__).resolve().parent.parent
LIMIT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["ruff"]["line-length"]
SERVICE_WORKER = ROOT / "templates" / "sw.js"
SCRIPTS = [
    *sorted((ROOT / "templates" / "static").glob("*.js")),
    SERVICE_WORKER,
    *sorted((ROOT / "bench" / "pages").glob("*.*js")),
    *sorted((ROOT / "sitebuild").rglob("*.mjs")),  # the build's Node part
    ROOT / "templates" / "early.js",  # written into every page's <head>, a classic inline script
    *sorted((ROOT / "sitebuild").rglob("*.js")),  # serve's own, sent to its pages
]
UNIT_TESTS = sorted((ROOT / "tests" / "js").glob("*.test.js"))
# classic scripts: a course page loads embed-resize.js with a plain <script src> (README:
# teachers), main.js registers the service worker as one; the bench's page scripts are function
# expressions or init scripts that page.evaluate and add_init_script run as one (bench/common.py)
CLASSIC = {"templates/static/embed-resize.js", "templates/sw.js", "templates/early.js"}
# the bench's modules: served in place of static/pyclient.js, and a driver Node runs
BENCH_MODULES = {
    "bench/pages/main-thread-client.js",
    "bench/pages/smollm2-live.mjs",
    "bench/pages/ratio-node.mjs",
}
# a classic script parsed as the browser parses one (node --check would take it for CommonJS)
PARSE_SCRIPT = (
    "new (require('vm').Script)(require('fs').readFileSync(0, 'utf8'), "
    "{ filename: process.argv[1] })"
)


def where(path):
    return path.relative_to(ROOT).as_posix()


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


def is_classic(path):
    name = where(path)
    return name in CLASSIC or (name.startswith("bench/pages/") and name not in BENCH_MODULES)


def source(path):
    """What runs: the service worker as the build renders it (sample values), the rest as is."""
    if path != SERVICE_WORKER:
        return path.read_bytes()
    template = site_build.environment(ROOT).get_template(SERVICE_WORKER.name)
    sample = {"build": "0" * 16, "runtime": "0.0.0", "files": ["./"], "immutable": []}
    sample |= {"sizes": [1], "whole": 1, "digests": {}, "shell": [], "python": []}
    return template.render(**sample).encode("utf-8")


@pytest.mark.parametrize("path", SCRIPTS, ids=where)
def test_every_script_parses(node, path):
    if is_classic(path):
        command = [node, "-e", PARSE_SCRIPT, where(path)]
    else:
        command = [node, "--input-type=module", "--check"]
    run = subprocess.run(command, input=source(path), cwd=ROOT, capture_output=True, timeout=60)
    if run.returncode:
        error = run.stderr.decode("utf-8", "replace").replace("[stdin]", where(path))
        pytest.fail(error.split("\n    at ")[0], pytrace=False)


def test_no_line_is_longer_than_pythons():
    too_long = [
        f"{where(path)}:{n}: {len(line)} characters, more than {LIMIT}; split the line"
        for path in [*SCRIPTS, *(ROOT / "tests").glob("js/**/*.js")]
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if len(line) > LIMIT
    ]
    assert not too_long, "\n".join(too_long)
