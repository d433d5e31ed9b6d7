"""A test that asks for a browser fixture is marked `browser` by conftest's collection hook, so
`pytest -m "not browser"` (a run without Chromium) starts none, whether or not the test's module
remembered the marker."""

import subprocess
import sys

from conftest import ROOT

# one test per fixture that opens a page, none of them marked, and one that needs no browser
MODULE = """
def test_page(page): pass
def test_new_page(new_page): pass
def test_ready_page(ready_page): pass
def test_browser(browser): pass
def test_profiles(profiles): pass
def test_site_only(site): pass
"""

# prints what is left after `-m` deselected
REPORT = """
def pytest_collection_finish(session):
    for item in session.items:
        print("kept", item.name)
"""


def test_not_browser_collects_no_test_that_uses_a_browser_fixture(tmp_path):
    (tmp_path / "test_inner.py").write_text(MODULE)
    (tmp_path / "report_kept.py").write_text(REPORT)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "report_kept"]
        + ["-p", "no:cacheprovider", "--collect-only", "-q", "-m", "not browser", "test_inner.py"],
        cwd=tmp_path,
        env={"PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}:{tmp_path}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    kept = [line.split()[1] for line in run.stdout.splitlines() if line.startswith("kept ")]
    assert kept == ["test_site_only"], run.stdout + run.stderr
