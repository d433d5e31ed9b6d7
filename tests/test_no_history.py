"""Docs state rules and their reasons, code says what and why; the history of how they came to
be (which run measured what, on which day, at which commit, for which issue) lives in `git log`
and in bench/RESULTS.md, written by the bench (its last section keeps the measurements that were
once quoted in docs/). A date or a commit id in docs/, or an issue number in a docstring or a
comment, is history that goes stale the next time the code changes."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
# 6 December, December 2026, 2026-12-06; a commit id: 7 to 40 hex digits with a digit and a letter
DATE = re.compile(rf"\b\d{{1,2}} (?:{MONTHS})\b|\b(?:{MONTHS}) \d{{4}}\b|\b\d{{4}}-\d\d-\d\d\b")
COMMIT = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
ISSUE = re.compile(r"\bissues? #?\d+", re.I)
# the content-addressed name of a static file, as docs/security.md shows one: no commit
ASSET_NAME = re.compile(r"\.[0-9a-f]{12}\.(?:js|css|png)\b")


def tracked(*patterns):
    listed = subprocess.run(
        ["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in listed if (ROOT / name).exists()]


def found(paths, pattern, ignore=None):
    return [
        f"{path.relative_to(ROOT).as_posix()}:{n}: {m.group(0)!r}"
        for path in paths
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        for m in pattern.finditer(ignore.sub("", line) if ignore else line)
    ]


def test_docs_hold_no_dates_or_commit_ids():
    docs = tracked("docs/*.md")
    assert docs
    dated = found(docs, DATE) + found(docs, COMMIT, ignore=ASSET_NAME)
    assert not dated, (
        "a dated run in docs/ (move the measurement to bench/RESULTS.md, keep the rule):\n"
        + "\n".join(dated)
    )


def test_code_names_no_issue_numbers():
    code = tracked("*.py", "*.js", "*.mjs", "*.html", "*.css", "Makefile")
    assert code
    named = found(code, ISSUE)
    assert not named, (
        "an issue number in code (say what and why; the issue belongs in the commit message):\n"
        + "\n".join(named)
    )


def test_what_was_tried_is_said_without_its_measurements():
    """docs/performance.md's "Tried and not shipped" says what was tried and why it did not
    ship; how much faster or slower it measured is history, kept in bench/RESULTS.md's last
    section, which no run of the bench rewrites."""
    text = (ROOT / "docs" / "performance.md").read_text("utf-8")
    tried = text.split("\n## Tried and not shipped\n", 1)[1].split("\n## ", 1)[0]
    measured = re.findall(r"\d+(?:[.,–-]\d+)* ?(?:ms|s|MB|KB|kB|%|×)(?!\w)|\bload \d", tried)
    assert measured == [], "move these to bench/RESULTS.md's last section: " + ", ".join(measured)
    results = (ROOT / "bench" / "RESULTS.md").read_text("utf-8")
    history = results.split("<!-- bench section: history -->", 1)[1]
    assert "### docs/performance.md: tried and not shipped" in history
