"""The README is the manual, and it and docs/ point at files that exist.

A newcomer finds the two commands, the author guide, the figure kit and the layout in the first
screen; the README stays short (design notes go to docs/, measurements to bench/RESULTS.md);
every repository path the README or docs/ name in backticks is there."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FIRST_SCREEN = 30  # lines
TOP = ("chapters/", "docs/", "bench/", "sitebuild/", "toymodels/", "templates/", "tests/")


def test_the_readme_is_a_short_manual():
    assert README.stat().st_size <= 15_000
    first = "\n".join(README.read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN])
    for needed in ("make serve", "make test", "chapters/90-author-guide.md", "page/kit/"):
        assert needed in first, needed
    assert "(#layout)" in first and "\n## Layout\n" in README.read_text(encoding="utf-8")


def named_paths(text):
    """Repository paths in backticks: `docs/security.md`, `toymodels/page/kit/`; not patterns
    (NN, NAME, *, …), examples (my_chapter) or built files (site/)."""
    for path in re.findall(r"`([\w./-]+)`", text):
        if path.startswith(TOP) and not re.search(r"[A-Z]{2,}|\*|…|\.\.|my[_-]chapter", path):
            yield path.split("#")[0]


def test_the_paths_the_readme_and_docs_name_exist():
    documents = [README, *sorted((ROOT / "docs").glob("*.md"))]
    assert len(documents) >= 5
    missing = [
        f"{doc.name}: {path}"
        for doc in documents
        for path in named_paths(doc.read_text(encoding="utf-8"))
        if not (ROOT / path).exists()
    ]
    assert missing == []
