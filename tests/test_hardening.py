"""The build and the dev server under faults and load, the published runtime, the CSV export
and the embed script, each against what a careless or hostile neighbour could do.

Every server here listens on 127.0.0.1 and is started by the test that uses it; load is
bounded in count and time."""

import csv
import errno
import fcntl
import functools
import http.client
import importlib.util
import io
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from contextlib import contextmanager, suppress
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import QuietServer
from test_build import GOOD, project

from sitebuild.fetched import assets, bytecode
from sitebuild.pipeline import build as site_build
from sitebuild.pipeline.chapters import AuthorError
from sitebuild.serving.serve import Server, chapters_only

ROOT = Path(__file__).resolve().parent.parent


def build_command(root, site, *extra):
    """`build.py build` of `root` into `site`, loading Pyodide from its CDN (a quicker build)."""
    return [sys.executable, str(ROOT / "build.py"), "build", "--root", str(root)] + [
        "--out",
        str(site),
        "--pyodide-cdn",
        *extra,
    ]


def whole(site):
    """site/ holds one complete build: every file its service worker lists is there."""
    sw = (site / "sw.js").read_text()
    files = json.loads(re.search(r"const FILES = (\[.*?\]);", sw, re.S).group(1))
    return len(files) > 10 and all((site / f).exists() for f in files if f != "./")


def beside(site):
    """What lies beside site/: nothing a build left behind."""
    return sorted(p.name for p in site.parent.iterdir())


# ---- publishing site/ ------------------------------------------------------------------------

KILL_AT = r"""
import os, signal, sys, traceback
from pathlib import Path

from sitebuild.pipeline.build import build

site, root = Path(sys.argv[1]), Path(sys.argv[2])
EVENTS = {"os.mkdir", "os.rename", "os.replace", "os.rmdir", "os.remove", "os.symlink",
          "shutil.rmtree", "ctypes.call_function"}

def beside_site(value):
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    return isinstance(value, (str, os.PathLike)) and Path(value).parent == site.parent

def kill_at(k):
    # each change to the folder holding site/ is a step; SIGKILL the build at step k
    seen = 0
    def hook(event, args):
        nonlocal seen
        paths = args[1] if event == "ctypes.call_function" else args
        if event in EVENTS and any(map(beside_site, paths)):
            seen += 1
            if seen == k:
                os.kill(os.getpid(), signal.SIGKILL)
    return hook

# one build a line of stdin (its k), each in a fork of this process, which has imported the
# build once; its exit code (-9: killed) goes to stdout
for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        sys.addaudithook(kill_at(int(line)))
        try:
            build(root, site, cdn=True)
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


def test_a_build_killed_at_any_step_leaves_a_whole_site_and_the_next_cleans_up(tmp_path):
    old = project(tmp_path / "old", {"a.md": GOOD})
    new = project(tmp_path / "new", {"a.md": GOOD.replace("Some prose", "Newer prose")})
    site = tmp_path / "out/site"
    site.parent.mkdir()
    site_build.build(old, site, cdn=True)
    builds = subprocess.Popen(
        [sys.executable, "-c", KILL_AT, str(site), str(new)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        for k in range(1, 13):
            builds.stdin.write(f"{k}\n")
            builds.stdin.flush()
            code = int(builds.stdout.readline())
            assert code in (0, -9), f"the build killed at step {k} exited with {code}"
            assert site.is_dir() and whole(site), f"killed at step {k}: {beside(site)}"
            text = (site / "test.html").read_text()
            assert ("Some prose" in text) != ("Newer prose" in text)
            if code == 0:
                break
        else:
            pytest.fail("the build took more than 12 steps to publish")
    finally:
        builds.stdin.close()
        builds.wait(timeout=60)
    assert k >= 3  # it was killed at least while writing and while swapping
    site_build.build(old, site, cdn=True)
    assert beside(site) == ["site"]


def test_without_an_exchanging_rename_a_half_swap_is_put_back(tmp_path, monkeypatch):
    from sitebuild.pipeline import publish

    def cannot(a, b):
        raise OSError(errno.EINVAL, "not on this file system")

    monkeypatch.setattr(publish, "_exchange", cannot)
    root = project(tmp_path, {"a.md": GOOD})
    site = tmp_path / "out/site"
    site.parent.mkdir()
    site_build.build(root, site, cdn=True)
    site_build.build(root, site, cdn=True)  # replaced by two renames
    assert whole(site) and beside(site) == ["site"]
    # a build killed between the two renames left the old site aside and no site/
    (site.parent / "site.old-x1").mkdir()
    site.rename(site.parent / "site.old-x1/site")
    (root / "chapters/a.md").write_text(GOOD.replace("::: slot", "::: slott"))
    with pytest.raises(AuthorError):
        site_build.build(root, site, cdn=True)
    assert whole(site) and beside(site) == ["site"]


def test_a_second_build_waits_for_the_first(tmp_path):
    root = project(tmp_path, {"a.md": GOOD})
    site = tmp_path / "out/site"
    site.parent.mkdir()
    site_build.build(root, site, cdn=True)
    fd = os.open(site.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a build of this site is under way
        second = subprocess.Popen(
            build_command(root, site), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        line = second.stderr.readline()
        assert "another build in" in line and "waiting for it to finish" in line, line
        assert second.poll() is None and beside(site) == ["site"]
    finally:
        os.close(fd)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0 and out.startswith("built "), err
    # two at once, for real: both finish, one after the other
    both = [
        subprocess.Popen(build_command(root, site), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    assert [p.wait(120) for p in both] == [0, 0]
    assert whole(site) and beside(site) == ["site"]


def build_py():
    """build.py, the command line, as a module of this process (so that a test can change what
    it calls)."""
    spec = importlib.util.spec_from_file_location("build_cli", ROOT / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# where the disk fills up: a page written (a write names no file), a static file copied
# (shutil names the source, then the destination)
FULL_AT = {
    "a page": ("pathlib.Path.open", "test.html"),
    "a copy": ("shutil.copyfile", "static/main.js"),
}


class FullFile:
    """A file opened for writing on a full disk: every write fails, as the system's does."""

    def __init__(self, f):
        self.f = f

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("where", FULL_AT)
def test_a_full_disk_says_so_and_leaves_the_site(tmp_path, monkeypatch, capfd, where):
    root = project(tmp_path, {"a.md": GOOD})
    site = root / "site"
    site.mkdir()
    (site / "index.html").write_text("the previous build")
    target, name = FULL_AT[where]
    real = {"pathlib.Path.open": Path.open, "shutil.copyfile": shutil.copyfile}[target]

    def full(*args, **kwargs):
        path = str(args[0] if target == "pathlib.Path.open" else args[1])
        if not path.endswith("/" + name):
            return real(*args, **kwargs)
        if target == "pathlib.Path.open":
            return FullFile(real(*args, **kwargs))
        error = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        error.filename, error.filename2 = str(args[0]), path
        raise error

    monkeypatch.setattr(target, full)
    cli = build_py()
    assert cli.main(["build", "--root", str(root), "--pyodide-cdn"]) == 1
    err = capfd.readouterr().err
    written = rf"{re.escape(str(root))}/site\.new-\w+/{re.escape(name)}"
    assert re.fullmatch(
        rf"build\.py: the disk is full writing {written}; free space and build "
        r"again\n",
        err,
    ), err
    assert sorted(p.name for p in root.iterdir()) == ["chapters", "site", "templates", "toymodels"]
    assert [p.name for p in site.iterdir()] == ["index.html"]
    assert (site / "index.html").read_text() == "the previous build"


# ---- the published Pyodide runtime -----------------------------------------------------------


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private copy of the verified download cache, so that tampering harms no other test."""
    src = assets.runtime_dir()
    copy = tmp_path / "cache" / src.name
    shutil.copytree(src, copy)
    made = bytecode.bytecode_dir()  # compiled from the runtime before it was tampered with
    shutil.copytree(made, tmp_path / "cache" / made.name)
    assets.morphdom_script()  # every build reads morphdom's and DOMPurify's tarballs too
    assets.dompurify_script()
    (tmp_path / "cache" / "downloads").mkdir()
    for name in (assets.MORPHDOM_TARBALL, assets.DOMPURIFY_TARBALL):
        shutil.copy(assets.cache_dir() / "downloads" / name, tmp_path / "cache" / "downloads")
    monkeypatch.setenv("MANYHEADS_CACHE", str(tmp_path / "cache"))
    return copy


def test_the_published_runtime_is_a_copy_the_cache_cannot_change(tmp_path, cache):
    root = project(tmp_path, {"a.md": GOOD})
    site = site_build.build(root, root / "site")
    published = site / "pyodide/pyodide.mjs"
    before = published.read_bytes()
    with open(cache / "pyodide.mjs", "r+b") as f:  # the cache is edited in place, later
        f.write(b"/* changed */")
    assert published.read_bytes() == before
    assert assets.sha256(published) == assets.RUNTIME_SHA256["pyodide.mjs"]


TAMPERING = [
    ("the wasm", False, r"pyodide\.asm\.wasm \(copied from .*\): sha256 is [0-9a-f]{64}, expected"),
    (
        "the wasm and the stamp",
        True,
        r"\.verified is damaged or was written for other pins; delete",
    ),
    ("a corrupted stamp", None, r"\.verified is damaged or was written for other pins; delete"),
]


@pytest.mark.parametrize("what,stamp,message", TAMPERING, ids=[t[0] for t in TAMPERING])
def test_a_tampered_runtime_is_refused_with_a_message(tmp_path, cache, what, stamp, message):
    if stamp is None:
        (cache / ".verified").write_text('{"pyodide.mjs": ')
    else:
        with open(cache / "pyodide.asm.wasm", "ab") as f:
            f.write(b"\0evil")
    if stamp:
        verified = json.loads((cache / ".verified").read_text())
        verified["pyodide.asm.wasm"] = assets.sha256(cache / "pyodide.asm.wasm")
        (cache / ".verified").write_text(json.dumps(verified))
    root = project(tmp_path, {"a.md": GOOD})
    command = build_command(root, root / "site")
    command.remove("--pyodide-cdn")
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error: ") and re.search(message, done.stderr), done.stderr
    assert not (root / "site").exists()


def test_a_tampered_runtime_is_never_compiled_to_bytecode(tmp_path, cache):
    shutil.rmtree(bytecode.bytecode_dir())  # in the private cache: it is made again at need
    with open(cache / "pyodide.asm.wasm", "ab") as f:
        f.write(b"\0evil")
    root = project(tmp_path, {"a.md": GOOD})
    done = subprocess.run(build_command(root, root / "site"), capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    expected = rf"^error: {re.escape(str(cache))}/pyodide\.asm\.wasm: sha256 is [0-9a-f]{{64}}, "
    assert re.search(expected + "expected", done.stderr), done.stderr
    assert not (root / "site").exists() and not list((tmp_path / "cache").glob("bytecode-*"))


def fake_compile(monkeypatch, files):
    """The compiling step (Node running Pyodide) writing FILES ({name: bytes}) into the folder
    it is given; -> the commands it was run with."""
    commands = []

    def run(command, **kwargs):
        commands.append(command)
        for name, data in files.items():
            (Path(command[3]) / name).write_bytes(data)

    monkeypatch.setattr(bytecode.subprocess, "run", run)
    return commands


def test_tampered_bytecode_with_a_rewritten_stamp_is_compiled_again(
    tmp_path, cache, monkeypatch, capsys
):
    made = bytecode.bytecode_dir()  # the private copy
    genuine = {name: (made / name).read_bytes() for name in bytecode.FILES}
    with open(made / "python_stdlib.zip", "ab") as f:
        f.write(b"\0evil")
    (made / ".made").write_text(json.dumps({f: assets.sha256(made / f) for f in bytecode.FILES}))
    commands = fake_compile(monkeypatch, genuine)
    site = tmp_path / "site"
    site.mkdir()
    folder = bytecode.copy_bytecode(site)
    assert {f: assets.sha256(site / folder / f) for f in bytecode.FILES} == bytecode.MADE_SHA256
    assert len(commands) == 1 and commands[0][0] == "node"
    said = (
        f"build.py: {made} is not the bytecode sitebuild/fetched/bytecode.py pins; "
        "compiling again\n"
    )
    assert capsys.readouterr().err == said


def test_bytecode_compiled_to_other_bytes_than_the_pins_is_refused(tmp_path, cache, monkeypatch):
    shutil.rmtree(bytecode.bytecode_dir())  # in the private cache
    fake_compile(monkeypatch, {"python_stdlib.zip": b"other", "numpy.zip": b"bytes"})
    with pytest.raises(assets.AssetError) as refused:
        bytecode.bytecode_dir()
    made = {"python_stdlib.zip": assets.sha256(b"other"), "numpy.zip": assets.sha256(b"bytes")}
    assert str(refused.value) == (
        f"compiling Python ahead made {json.dumps(made)}, not the files "
        "sitebuild/fetched/bytecode.py pins in MADE_SHA256; after a change to AHEAD, "
        "bytecode.mjs or bytecode_in_pyodide.py or the runtime's pins, put these hashes there"
    )
    assert not list((tmp_path / "cache").glob("bytecode-*"))


# ---- the dev server --------------------------------------------------------------------------


@contextmanager
def serving(tmp_path):
    """`build.py serve` on a free port of 127.0.0.1: (host, port, the server's process)."""
    root = project(tmp_path, {"a.md": GOOD})
    command = [sys.executable, str(ROOT / "build.py"), "serve", "--root", str(root)]
    proc = subprocess.Popen(
        [*command, "--port", "0", "--pyodide-cdn"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        line = ""
        while "Many Heads is at" not in line:
            line = proc.stdout.readline()
            assert line, "serve exited early"
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", line).group(1))
        yield "127.0.0.1", port, proc
    finally:
        proc.terminate()
        proc.wait(10)


def get(host, port, path, timeout=30):
    """(status, body) of one GET, straight to 127.0.0.1 (no proxy can be involved)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def threads_of(proc):
    """How many threads the process runs now (Linux)."""
    status = Path(f"/proc/{proc.pid}/status").read_text()
    return int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))


def load(host, port, path, clients, each):
    """`clients` threads start at once, each making `each` requests in turn: the seconds each
    request took, and the failures."""
    seconds, failures, lock = [], [], threading.Lock()
    start = threading.Barrier(clients)

    def client():
        start.wait()
        for _ in range(each):
            t = time.perf_counter()
            try:
                status, _ = get(host, port, path)
                problem = None if status == 200 else f"status {status}"
            except OSError as e:
                problem = repr(e)
            with lock:
                seconds.append(time.perf_counter() - t) if not problem else failures.append(problem)

    workers = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    return seconds, failures


def test_serve_answers_a_classroom_at_once(tmp_path):
    with serving(tmp_path) as (host, port, _):
        seconds, failures = load(host, port, "/test.html", clients=200, each=2)
    p99 = statistics.quantiles(seconds, n=100)[98] if len(seconds) > 1 else None
    print(f"serve: {len(seconds)} ok, {len(failures)} failed, p99 {p99:.3f} s, {os.getloadavg()}")
    assert failures == [] and len(seconds) == 400
    assert p99 < 1.0, p99


def test_serve_closes_idle_connections_without_a_thread_each(tmp_path):
    with serving(tmp_path) as (host, port, proc):
        idle = [socket.create_connection((host, port), timeout=30) for _ in range(300)]
        try:
            threads = []
            for _ in range(5):  # the server's threads over a second with 300 idle connections
                time.sleep(0.2)
                threads.append(threads_of(proc))
            t = time.perf_counter()
            assert get(host, port, "/test.html")[0] == 200
            assert time.perf_counter() - t < 1.0
            assert max(threads) < 50, threads
            deadline = time.monotonic() + 20
            for s in idle:
                s.settimeout(max(0.1, deadline - time.monotonic()))
                with suppress(ConnectionResetError):
                    assert s.recv(1) == b""  # closed by the server
        finally:
            for s in idle:
                s.close()


@pytest.mark.parametrize("server_class", [Server, QuietServer])
def test_a_browser_hanging_up_prints_nothing_but_a_fault_does(server_class, capsys):
    """`make serve`'s server and the tests' own print no traceback when a browser leaves a page
    mid-download (the bench's and the tests' output stays readable), and still print a fault."""
    server = server_class.__new__(server_class)  # no socket: only its error handling is tried
    for error in (ConnectionResetError(104, "Connection reset by peer"), BrokenPipeError(32, "")):
        try:
            raise error
        except OSError:
            server.handle_error(None, ("127.0.0.1", 1))
    assert capsys.readouterr().err == ""
    try:
        raise ValueError("a real fault")
    except ValueError:
        server.handle_error(None, ("127.0.0.1", 1))
    assert "ValueError: a real fault" in capsys.readouterr().err


def test_serve_refuses_nul_bytes_and_lists_no_folders(tmp_path):
    with serving(tmp_path) as (host, port, _):
        assert get(host, port, "/%00")[0] in (400, 404)
        assert get(host, port, "/test.html%00.txt")[0] in (400, 404)
        assert get(host, port, "/")[0] == 200  # index.html
        for folder in ("/embed/", "/py/", "/static/", "/embed/test/"):
            status, body = get(host, port, folder)
            assert status == 404 and b"Directory listing" not in body, folder
        assert get(host, port, "/test.html")[0] == 200


# ---- the CSV export --------------------------------------------------------------------------

ANSWERS = ["x;=1+1", "=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1", 'say "hi"', "a,b", "1\n2"]


def spreadsheet_cells(text, separator):
    """The cells a spreadsheet makes of `text` when it splits on `separator` outside quotes
    (quotes toggle, wherever they stand), without the quotes."""
    cells, cell, quoted = [], [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif ch in (separator, "\r", "\n") and not quoted:
            cells.append("".join(cell))
            cell = []
        else:
            cell.append(ch)
    return cells


@pytest.mark.browser
def test_results_csv_starts_no_formula_in_any_locale(page, base_url):
    page.goto(base_url + "many-heads.html")
    page.evaluate(
        """(answers) => answers.forEach((answer, i) => localStorage.setItem(
          `mh:${location.pathname}:result:check-${i + 1}`,
          JSON.stringify({ kind: "check yourself", question: answer, answer, correct: i % 2 === 0,
                           time: "2024-01-01T00:00:00.000Z" })))""",
        ANSWERS,
    )
    page.reload()
    page.wait_for_selector(f"[data-results]:not([hidden]) tbody tr >> nth={len(ANSWERS) - 1}")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download all chapters as CSV").click()
    text = Path(download.value.path()).read_bytes().decode("utf-8")
    assert re.fullmatch(r'(?:"(?:[^"]|"")*"(?:,|\r\n))+', text), text  # every field quoted
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    expected = [("'" + a if a[0] in "=+-@\t\r" else a) for a in ANSWERS]
    assert [r["answer"] for r in rows] == expected and [r["question"] for r in rows] == expected
    for separator in ",;\t":
        cells = spreadsheet_cells(text, separator)
        assert not [c for c in cells if c[:1] in ("=", "+", "-", "@")], (separator, cells)


# ---- the embed script on a course page -------------------------------------------------------

# the pages name an icon of their own, so that Chromium asks their server for no favicon.ico
COURSE = """<!doctype html><html><head><title>A course page</title>
<link rel="icon" href="data:,"></head><body>
<iframe id="figure" src="{figure}" title="Figure" width="100%" height="200"></iframe>
<iframe id="advert" src="{advert}" title="Advert" width="100%" height="200"></iframe>
<script src="{resize}"></script></body></html>"""
ADVERT = """<!doctype html><html><head><title>0</title><link rel="icon" href="data:,">
</head><body><p>Buy now</p><script>
let n = 0;
setInterval(() => {
  parent.postMessage({ type: "manyheads:height", height: 3000 }, "*");
  document.title = String(++n);
}, 50);
</script></body></html>"""


@contextmanager
def plain_server(directory):
    """Somebody else's static server on 127.0.0.1, without this site's policy."""
    quiet = type("Quiet", (SimpleHTTPRequestHandler,), {"log_message": lambda *args: None})
    handler = functools.partial(quiet, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.browser
def test_embed_resize_listens_only_to_the_figures_frames(page, base_url, tmp_path):
    (tmp_path / "course").mkdir()
    (tmp_path / "ads").mkdir()
    (tmp_path / "ads/advert.html").write_text(ADVERT)
    with plain_server(tmp_path / "course") as course, plain_server(tmp_path / "ads") as ads:
        (tmp_path / "course/index.html").write_text(
            COURSE.format(
                figure=f"{base_url}embed/many-heads/three-heads.html",
                advert=f"{ads}advert.html",
                resize=f"{base_url}static/embed-resize.js",
            )
        )
        page.goto(course + "index.html")
        height = "(id) => document.getElementById(id).getBoundingClientRect().height"
        page.wait_for_function(f"({height})('figure') > 300", timeout=60_000)
        advert = next(f for f in page.frames if f.url.endswith("advert.html"))
        deadline = time.monotonic() + 30
        while int(advert.title() or 0) < 20:  # the advert has posted its height many times
            assert time.monotonic() < deadline
            page.wait_for_timeout(100)
        assert page.evaluate(height, "advert") < 250  # still its height="200"
        assert page.evaluate("document.getElementById('advert').style.height") == ""


# a course on the site's own origin: frames whose src names a figure, but that show something
# else of that origin (the advert, moved into the frame; their own srcdoc)
SAME_ORIGIN = """<!doctype html><html><head><title>A course page</title>
<link rel="icon" href="data:,"></head><body>
<iframe id="figure" src="/mh/embed/many-heads/three-heads.html" title="Figure" height="200">
</iframe>
<iframe id="moved" src="/mh/embed/no-such-figure.html" title="Moved" height="200"></iframe>
<iframe id="srcdoc" src="/mh/embed/many-heads/three-heads.html" title="Srcdoc" height="200"
 srcdoc="<script>setInterval(() => parent.postMessage({type: 'manyheads:height', height: 3000},
 '*'), 50)</script>"></iframe>
<script src="/mh/static/embed-resize.js"></script></body></html>"""


@pytest.mark.browser
def test_embed_resize_on_the_sites_origin_reads_what_each_frame_shows(page, site, tmp_path):
    (tmp_path / "mh").symlink_to(site)
    (tmp_path / "ads").mkdir()
    (tmp_path / "ads/advert.html").write_text(ADVERT)
    (tmp_path / "course.html").write_text(SAME_ORIGIN)
    page.watch.expect(r"status of 404 .*/mh/embed/no-such-figure\.html\)$")
    with plain_server(tmp_path) as origin:
        page.goto(origin + "course.html")
        page.evaluate(
            "document.getElementById('moved').contentWindow.location = '/ads/advert.html'"
        )
        height = "(id) => document.getElementById(id).getBoundingClientRect().height"
        page.wait_for_function(f"({height})('figure') > 300", timeout=60_000)
        # the moved frame's own navigation may still be under way under load
        deadline = time.monotonic() + 30
        while not (advert := next((f for f in page.frames if f.url.endswith("advert.html")), 0)):
            assert time.monotonic() < deadline, "the moved frame never showed the advert"
            page.wait_for_timeout(100)
        while int(advert.title() or 0) < 20:  # the advert has posted its height many times
            assert time.monotonic() < deadline
            page.wait_for_timeout(100)
        for frame in ("moved", "srcdoc"):
            assert page.evaluate(height, frame) < 250, frame  # still its height="200"


def test_serve_keeps_its_builder_only_for_edited_chapters(tmp_path):
    """serve builds an edit to chapters alone in the builder that built before, which holds the
    code it imported then; an edited module, template or data file gets a fresh builder."""
    chapters = tmp_path / "chapters"
    assert chapters_only(tmp_path, [chapters / "01-a.md", chapters / "02-b.md"])
    for other in ("toymodels/two_back/figure.py", "templates/chapter.html", "toymodels/data/x"):
        assert not chapters_only(tmp_path, [chapters / "01-a.md", tmp_path / other])
    assert not chapters_only(tmp_path, [tmp_path / "chapters.md"])
