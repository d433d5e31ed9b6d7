"""Smaller breaks: a slug that would replace a page the build writes, a
chapter that is a folder, front matter nested 5,000 deep, `build.py new` with backslashes,
quotes and 300 characters in the title, a data file whose name leaves the folder a zip is
unpacked into on Windows, a symbolic link as the training results, CSV fields that start a
formula after a space or in full width, and clients that send their headers a byte at a time.
Every server listens on 127.0.0.1."""

import functools
import html
import os
import re
import socket
import threading
import tomllib
import tracemalloc
import urllib.error
import urllib.request
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from conftest import wait_until
from test_build import GOOD, broken, project
from test_hostile_authors import fails

from sitebuild.authoring import scaffold
from sitebuild.pipeline import build as site_build
from sitebuild.pipeline.chapters import AuthorError
from sitebuild.serving.serve import Handler, Server
from toymodels.page import cells, download

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("slug", ["index", "training-results", "class"])
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


@contextmanager
def dev_server(directory, server_class=Server):
    """`build.py serve`'s server over DIRECTORY on a free port of 127.0.0.1, in a thread."""
    server = server_class(("127.0.0.1", 0), functools.partial(Handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()


def slow_readers(port, path, count):
    """COUNT connections that ask for PATH with a small receive window and each take 8 KB of
    the answer every 0.2 s (never silent, never done), until stop.set()."""
    stop, readers = threading.Event(), []
    for _ in range(count):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)  # before connect: the window
        s.connect(("127.0.0.1", port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        s.setblocking(False)
        readers.append(s)

    def read():
        while not stop.wait(0.2):
            for s in readers:
                with suppress(BlockingIOError, OSError):
                    s.recv(8192)
        for s in readers:
            s.close()

    threading.Thread(target=read, daemon=True).start()
    return stop


def fetch(port, path):
    """(status, headers, body) of one GET."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def test_slow_downloads_hold_no_thread_that_pages_need(tmp_path):
    """More slow downloads of a model than the server has threads, and a page is
    still answered; so is the whole model, byte for byte, to a reader who takes it at once."""
    (tmp_path / "index.html").write_text("<p>ok</p>")
    model = os.urandom(4 << 20)  # more than a connection's socket buffers hold
    (tmp_path / "model.bin").write_bytes(model)
    with dev_server(tmp_path) as port:
        stop = slow_readers(port, "/model.bin", Server.max_threads + 8)
        try:
            answered = []
            threading.Thread(target=lambda: answered.append(fetch(port, "/")), daemon=True).start()
            assert wait_until(lambda: answered, 30, "a page was never answered")
            assert answered[0][0] == 200 and answered[0][2] == b"<p>ok</p>"
            status, headers, body = fetch(port, "/model.bin")
            assert status == 200 and int(headers["Content-Length"]) == len(model)
            assert body == model
        finally:
            stop.set()


def answer_to(port, request):
    """All the server sends back to the bytes REQUEST, until it hangs up."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        said = b""
        while chunk := s.recv(65536):
            said += chunk
    return said


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", b"414"),
        (b"GARBAGE\r\n\r\n", b"400"),
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", b"400"),  # a TLS hello
        (b"GET / HTTP/1.1 extra\r\n\r\n", b"400"),
        (b"GET / HTTP/9.9\r\n\r\n", b"505"),
    ],
    ids=["long-line", "garbage", "tls-hello", "four-words", "version"],
)
def test_malformed_requests_are_answered_without_a_traceback(
    tmp_path, capsys, request_bytes, status
):
    (tmp_path / "index.html").write_text("<p>ok</p>")
    with dev_server(tmp_path) as port:
        said = answer_to(port, request_bytes)
        assert said.split(b"\r\n", 1)[0].startswith(b"HTTP/1.0 " + status + b" "), said[:200]
        assert b"frame-ancestors 'self'" in said  # the policy header, as on every answer
        assert answer_to(port, b"GET / HTTP/1.0\r\n\r\n").endswith(b"\r\n\r\n<p>ok</p>")
    assert capsys.readouterr().err == ""


def test_beyond_max_transfers_a_download_is_told_to_come_back(tmp_path):
    """With `max_transfers` files being sent, one more request is answered 503 with
    Retry-After once no place is freed within `slot_seconds`; when those readers hang up, their
    places are free again."""
    (tmp_path / "index.html").write_text("<p>ok</p>")
    (tmp_path / "model.bin").write_bytes(os.urandom(4 << 20))

    class Two(Server):
        max_transfers = 2

    with dev_server(tmp_path, Two) as port:
        stop = slow_readers(port, "/model.bin", 2)
        busy = wait_until(lambda: (a := fetch(port, "/"))[0] == 503 and a, 30, "never full")
        status, headers, body = busy
        assert headers["Retry-After"] == str(Server.retry_seconds)
        assert body == b"Too many downloads at once; try again in a few seconds.\n"
        stop.set()  # the readers hang up
        assert wait_until(lambda: fetch(port, "/")[0] == 200, 30, "no place was freed")


def test_a_place_freed_within_a_moment_is_waited_for_not_refused(tmp_path):
    """A busy machine's sending thread frees a finished file's place late, and a classroom's
    next request may come first: it waits for the place (`slot_seconds`) instead of a 503."""
    (tmp_path / "index.html").write_text("<p>ok</p>")

    class One(Server):
        max_transfers = 1

    made = []

    class Kept(One):
        def server_activate(self):
            super().server_activate()
            made.append(self)

    with dev_server(tmp_path, Kept) as port:
        (server,) = made
        assert server.reserve()  # the one place, held as by a file still being sent
        threading.Timer(0.5, server.release).start()  # sent, and noticed late
        assert fetch(port, "/")[0] == 200


# ---- what a live cell shows ----------------------------------------------------


def test_a_cell_printing_200_000_lines_shows_the_first_and_counts_the_rest():
    n = cells.OUTPUT_LINES
    cells.forget("t")
    got = cells.run("for i in range(200_000):\n    print(i)", "t")["stdout"]
    shown = "".join(f"{i}\n" for i in range(n))
    assert got == shown + f"[output cut at {n:,} lines, {200_000 - n:,} more]\n"
    # a last line without its end counts too
    got = cells.run("print('a\\n' * 1500 + 'tail', end='')", "t")["stdout"]
    assert got == "a\n" * n + f"[output cut at {n:,} lines, {1500 - n + 1:,} more]\n"
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"cut at {n:,} lines and {cells.OUTPUT_CHARS:,} characters" in readme


def test_a_cell_printing_100_mb_keeps_only_what_it_shows():
    """The text cut is counted as it is written, never kept: the cell's peak memory stays far
    below the 100 MB it prints (a piece at a time)."""
    c = cells.OUTPUT_CHARS
    cells.forget("t")
    tracemalloc.start()
    try:
        got = cells.run("for _ in range(1000):\n    print('y' * 100_000)", "t")["stdout"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == "y" * c + f"\n[output cut at {c:,} characters, {1000 * 100_001 - c:,} more]\n"
    assert peak < 10 << 20, peak


def test_a_cells_value_and_error_are_cut_too():
    c = cells.OUTPUT_CHARS
    cells.forget("t")
    value = cells.run("'v' * 300_000", "t")["value"]
    assert (
        value == "'" + "v" * (c - 1) + f"\n[output cut at {c:,} characters, {300_002 - c:,} more]\n"
    )
    error = cells.run("raise ValueError('z' * 300_000)", "t")["error"]
    said = "ValueError: " + "z" * 300_000 + "\n"
    assert error.endswith(
        "\n" + said[:c] + f"\n[output cut at {c:,} characters, {len(said) - c:,} more]\n"
    )
    # a traceback of 2,000 lines keeps its first frames and the error itself
    error = cells.run("def f(n): return g(n)\ndef g(n): return f(n)\nf(1)", "t")["error"]
    lines = error.splitlines()
    assert lines[0] == "Traceback (most recent call last):" and len(lines) == cells.OUTPUT_LINES + 2
    assert re.fullmatch(r"\[output cut at 1,000 lines, [\d,]+ more\]", lines[-2])
    assert lines[-1] == "RecursionError: maximum recursion depth exceeded"
