"""A pytest of its own, for tests of the fixtures themselves, whose tests must fail on purpose."""

import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[2]


def outcomes_of(folder, module):
    """Run MODULE (a test module's text, with this conftest's fixtures) in a pytest of its own in
    FOLDER -> ({a test's name's first seven characters: what its report says went wrong}, the
    run's output): for tests of the fixtures themselves, whose tests must fail on purpose."""
    (folder / "test_inner.py").write_text(module)
    report = folder / "report.xml"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider"]
        + ["-q", "-W", "always", f"--junitxml={report}", "test_inner.py"],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    outcomes = {}
    for case in ElementTree.parse(report).iter("testcase"):
        said = [f"{e.tag}: {e.get('message')} {e.text}" for e in case if e.tag != "properties"]
        said = [s for s in said if not s.startswith("system-")]
        outcomes.setdefault(case.get("name")[:7], []).extend(said)
    return outcomes, run.stdout + run.stderr
