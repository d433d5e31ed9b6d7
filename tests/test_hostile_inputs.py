"""The smaller breaks of issue 44 (6): a slug that would replace a page the build writes, a
chapter that is a folder, front matter nested 5,000 deep, `build.py new` with backslashes,
quotes and 300 characters in the title, a data file whose name leaves the folder a zip is
unpacked into on Windows, a symbolic link as the training results, CSV fields that start a
formula after a space or in full width, and clients that send their headers a byte at a time.
Every server listens on 127.0.0.1."""

import functools
import html
import re
import socket
import threading
import tomllib
import urllib.request

import pytest
from conftest import wait_until
from test_build import GOOD, broken, project
from test_hostile_authors import fails

from sitebuild import build as site_build
from sitebuild import scaffold
from sitebuild.chapters import AuthorError
from sitebuild.serve import Handler, Server
from toymodels.page import download


@pytest.mark.parametrize("slug", ["index", "training-results"])
def test_a_slug_naming_a_page_the_build_writes(tmp_path, slug):
    fails(
        tmp_path,
        broken('slug = "test"', f'slug = "{slug}"'),
        f"chapters/a.md:3: slug '{slug}' is the name of a page the build writes itself "
        f'({slug}.html); choose another, e.g. slug = "many-heads"',
    )


def test_a_chapter_that_is_a_folder(tmp_path):
    root = project(tmp_path, {"a.md": GOOD})
    (root / "chapters" / "b.md").mkdir()
    with pytest.raises(AuthorError) as err:
        site_build.build(root, root / "site")
    assert str(err.value) == (
        "chapters/b.md:1: this chapter is not a file (a folder?); a chapter is a file NAME.md "
        "in chapters/"
    )


@pytest.mark.parametrize("nest", [("[", "]"), ("{ a = ", " }")])
def test_front_matter_nested_5000_deep(tmp_path, nest):
    deep = nest[0] * 5000 + "1" + nest[1] * 5000
    fails(
        tmp_path,
        broken("order = 1", f"order = 1\nx = {deep}"),
        "chapters/a.md:2: front matter nests tables or lists too deeply; it holds only flat fields",
    )


TITLES = [
    r"C:\new\table and \u0041 \"quoted\"",
    'A "quoted" title with a tab\there and a \\ at the end \\',
    "Attention " + "and more attention " * 16,  # 300+ characters
    "Ünïcödé ＝ title\x7f with DEL",
]


@pytest.mark.parametrize("title", TITLES)
def test_new_keeps_the_title_as_typed_and_builds(tmp_path, title):
    root = project(tmp_path, {"a.md": GOOD})
    path, _ = scaffold.new_chapter(root, title)
    assert len(path.name.encode()) < 100
    front = path.read_text(encoding="utf-8").split("+++")[1]
    assert tomllib.loads(front)["title"] == title
    site = site_build.build(root, root / "site")
    slug = tomllib.loads(front)["slug"]
    assert (site / f"{slug}.html").exists()


# titles the prose would read as markup: the recap before each new chapter leads on with it
LEADING = [
    "Costs {{ toymodels.many_heads.model.D_HEAD }} and {{ x }}",
    "<b>bold</b> & <script>alert(1)</script> &amp;",
    "$x$, `code`, *stars*, [a](b), \\$ and <!-- -- ...",
    "Two\nlines\twith ::: in them",
]


def test_new_leads_on_from_the_recap_before_with_the_title_as_typed(tmp_path):
    root = project(tmp_path, {"a.md": GOOD})
    scaffold.new_chapter(root, "First")
    slugs = ["first"]
    for title in LEADING:
        path, led = scaffold.new_chapter(root, title)
        assert led.name.endswith(f"-{slugs[-1]}.md")
        slugs.append(tomllib.loads(path.read_text(encoding="utf-8").split("+++")[1])["slug"])
    site = site_build.build(root, root / "site")
    for slug, title in zip(slugs, LEADING, strict=False):
        page = (site / f"{slug}.html").read_text(encoding="utf-8")
        shown = re.search(r'<p class="mh-next-step">(.*?)</p>', page, re.S)[1]
        shown = " ".join(html.unescape(re.sub(r"<[^>]+>", "", shown)).split())
        said = " ".join(title.split())
        assert shown == f"Next: {said}. Next, {said}: {scaffold.LEAD_IN}.", slug


UNSAFE_DATA = ["a\\..\\..\\evil.bat", "C:evil.json", "two\nlines.json", "tail."]


@pytest.mark.parametrize("name", UNSAFE_DATA)
def test_a_data_file_named_to_leave_the_folder(tmp_path, name):
    root = project(tmp_path, {"a.md": GOOD}, copied=("toymodels",))
    (root / "toymodels" / "data" / name).write_text("{}")
    with pytest.raises(AuthorError) as err:
        site_build.build(root, root / "site")
    said = repr(f"toymodels/data/{name}")[1:-1]
    assert str(err.value).startswith(f"{said}:1: this file's name holds a \\, a :, a line break")
    assert not (root / "site").exists()


def test_a_symlinked_results_file_is_not_published(tmp_path):
    root = project(tmp_path, {"a.md": GOOD}, copied=("toymodels",))
    results = root / "toymodels" / "training" / "RESULTS.md"
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nThe build machine's file.\n")
    results.unlink(missing_ok=True)
    results.symlink_to(secret)
    with pytest.raises(AuthorError) as err:
        site_build.build(root, root / "site")
    assert str(err.value).startswith("toymodels/training/RESULTS.md:1: is a symbolic link")


@pytest.mark.parametrize(
    "field",
    [
        " =1+1",
        "\n=1+1",
        "\r\n=SUM(A1)",
        "＝1+1",
        "\u3000=1+1",
        "\u00a0@SUM(A1)",
        "﹦1",
        "＋1",
        "－1",
    ],
)
def test_csv_fields_that_start_a_formula_after_space_or_in_full_width(field):
    assert download.safe(field) == "'" + field
    assert download.safe("a=1") == "a=1" and download.safe("12.5%") == "12.5%"


def test_clients_sending_headers_a_byte_at_a_time_do_not_block_the_server(tmp_path):
    (tmp_path / "index.html").write_text("<p>ok</p>")

    class Quick(Handler):
        header_seconds = 1

    server = Server(("127.0.0.1", 0), functools.partial(Quick, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_port
    stop = threading.Event()
    slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(Server.max_threads + 8)]

    def trickle(s):  # a header byte every 0.2 s: never silent long enough for `timeout`
        try:
            s.sendall(b"GET / HTTP/1.1\r\n")
            while not stop.wait(0.2):
                s.sendall(b"X")
        except OSError:
            pass  # the server hung up

    for s in slow:
        threading.Thread(target=trickle, args=(s,), daemon=True).start()
    answered = []

    def ask():
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=60) as r:
            answered.append(r.read())

    try:
        threading.Thread(target=ask, daemon=True).start()
        assert wait_until(lambda: answered, 30, "a reader's request was never answered")
        assert answered == [b"<p>ok</p>"]
    finally:
        stop.set()
        for s in slow:
            s.close()
        server.shutdown()
        server.server_close()
