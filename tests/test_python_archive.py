"""The worker reads the site's Python from one archive: the build writes
py/HASH/python.zip holding exactly the files files.json lists, and a first visit fetches it
once and no .py file one by one (`python bench/first_visit.py` times it at 100 ms a round
trip)."""

import json
import zipfile

import pytest
from conftest import open_ready


def test_the_archive_holds_exactly_the_listed_files(site):
    (folder,) = [p.parent for p in site.glob("py/*/python.zip")]
    files = json.loads((folder / "files.json").read_text())
    with zipfile.ZipFile(folder / "python.zip") as z:
        assert sorted(z.namelist()) == sorted(f["path"] for f in files)
        for f in files:
            assert z.read(f["path"]) == (folder / f["path"]).read_bytes()


@pytest.mark.browser
def test_a_first_visit_fetches_the_python_in_one_request(browser, base_url):
    context = browser.new_context(service_workers="block")  # its offline copy asks for each file
    asked = []
    context.on("request", lambda r: asked.append(r.url))
    page = context.new_page()
    open_ready(page, base_url + "split-attend.html")
    context.close()
    names = [u.split("?")[0].rsplit("/", 1)[1] for u in asked if "/py/" in u]
    python = [n for n in names if n.endswith((".py", ".zip")) or n == "files.json"]
    assert python == ["python.zip"], python
