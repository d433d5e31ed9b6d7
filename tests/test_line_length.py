"""The HTML and CSS the project writes by hand (templates/ and tests/harness/) keep ruff's
line-length (100 characters), as the Python and JavaScript do (tests/test_js.py): a page read in
a side-by-side diff or a terminal needs no sideways scrolling. A line too long is wrapped where
whitespace means nothing (between attributes, inside a Jinja tag, between CSS declarations),
never exempted."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["ruff"]["line-length"]
FOLDERS = ("templates", "tests/harness")


def test_no_html_or_css_line_is_longer_than_pythons():
    files = sorted(
        path
        for folder in FOLDERS
        for ext in ("html", "css")
        for path in (ROOT / folder).rglob(f"*.{ext}")
    )
    assert any(p.suffix == ".css" for p in files) and any(p.suffix == ".html" for p in files)
    too_long = [
        f"{path.relative_to(ROOT).as_posix()}:{n}: {len(line)} characters, more than {LIMIT}; "
        "wrap the line"
        for path in files
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if len(line) > LIMIT
    ]
    assert not too_long, "\n".join(too_long)
