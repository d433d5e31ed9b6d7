"""`python build.py serve`: serve site/ on 127.0.0.1 and rebuild it when its sources change.

The system tells serve of each save (watchfiles, no polling). A builder process
(sitebuild/serving/worker.py) builds, and is kept from one build to the next while only chapters
change, with the pipeline and the chapters' modules imported and the last build in memory: a
chapter's edit renders that chapter alone and writes only what it changed, and the open pages
reload once it is built (reload.py). Any other change (a module, a template, a data file) gets a
fresh builder, so edited toymodels are imported anew. A failed rebuild prints the author's error
and says that the last good site is still served. A build never holds serve up: a change saved
while it runs stops it and builds the newer sources, and one still running after BUILD_SECONDS
is stopped and reported at the line of toymodels/ it was running (the builder prints where it
was when stopped, faulthandler), so the next saved change builds again. The server stays
responsive under a classroom's worth of browsers: a deep accept queue, a bounded number of
threads, silent connections closed after a while, files' bytes sent by one thread for every
download at once (a slow download of a model holds no thread), no folder listings, a 400 for a
path it cannot hold, and an answer without a traceback to a request it cannot read.
"""

import contextlib
import functools
import html
import os
import re
import select
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

from ..authoring import blame, limits
from ..pipeline.policy import content_security_policy, framing
from . import reload

WATCHED = ("chapters", "templates", "toymodels", "sitebuild")
BUILD_PY = Path(__file__).resolve().parents[2] / "build.py"
BUILD_SECONDS = 180  # a whole build; one takes seconds, so this is a build that hangs


class Handler(SimpleHTTPRequestHandler):
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
        ".whl": "application/zip",
        ".py": "text/plain; charset=utf-8",
        ".svg": "image/svg+xml",
    }

    csp = content_security_policy()
    # a request line it cannot read is answered with a status line and headers (the default,
    # HTTP/0.9, would send the error page bare)
    default_request_version = "HTTP/1.0"
    timeout = 10  # seconds a connection may stay silent before it is closed
    # seconds a request's line and headers may take in all: a client that sends them a byte at
    # a time, never silent for `timeout`, would hold one of the server's threads for ever
    header_seconds = 10

    def handle_one_request(self):
        self.deadline = threading.Timer(self.header_seconds, self._hang_up)
        self.deadline.start()
        try:
            super().handle_one_request()
        finally:
            self.deadline.cancel()

    def parse_request(self):
        ok = super().parse_request()  # reads the headers
        self.deadline.cancel()
        return ok

    def _hang_up(self):
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def do_GET(self):
        """Under `Server`, the file's bytes are left to the server's sending thread (a reader
        who takes them slowly holds none of the threads that answer requests), and a 503 with
        Retry-After says so when it already sends `Server.max_transfers` files."""
        server = self.server
        if not isinstance(server, Server):  # the tests' and the bench's server
            return super().do_GET()
        if not server.reserve():
            return self._busy()
        body = None
        try:
            body = self.send_head()
        finally:
            if body is None:
                server.release()
        if body is not None:
            server.later(self.connection, body)
            self.close_connection = True

    def _busy(self):
        message = b"Too many downloads at once; try again in a few seconds.\n"
        self.send_response(HTTPStatus.SERVICE_UNAVAILABLE)
        self.send_header("Retry-After", str(Server.retry_seconds))
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(message)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(message)
        self.close_connection = True

    def send_head(self):
        """A path with a NUL byte gets a 400 instead of an error that drops the connection."""
        if "\x00" in unquote(self.path.split("?", 1)[0].split("#", 1)[0]):
            self.send_error(HTTPStatus.BAD_REQUEST, "No such page")
            return None
        return super().send_head()

    def list_directory(self, path):
        """A folder without index.html is not a page: 404, never a listing of its files."""
        self.send_error(HTTPStatus.NOT_FOUND, "No such page")

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        # a request whose line could not be read has no path: its error page is framed as a page
        path = getattr(self, "path", "/")
        self.send_header("Content-Security-Policy", f"{self.csp}; {framing(path)}")
        super().end_headers()

    def log_message(self, fmt, *args):
        pass


class QuietHangUps:
    """A server mixin: a browser that hangs up mid-answer (a page left, a load cancelled) is no
    error, and prints no traceback; any other fault does."""

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class Transfer:
    """A file being sent on one connection: what is left of the chunk read last, and when the
    reader last took any of it."""

    chunk = 64 * 1024

    def __init__(self, body):
        self.body, self.left, self.moved = body, b"", time.monotonic()

    def step(self, connection):
        """Send what the connection takes now; -> whether the whole file is sent."""
        if not self.left:
            self.left = memoryview(self.body.read(self.chunk))
            if not self.left:
                return True
        with contextlib.suppress(BlockingIOError):
            self.left = self.left[connection.send(self.left) :]
            self.moved = time.monotonic()
        return False


class Server(QuietHangUps, ThreadingHTTPServer):
    """Many browsers at once, with bounded means. A burst of connections waits in a deep accept
    queue instead of being refused; a connection that has sent nothing yet waits in one
    selector, not in a thread, and is closed after `idle_timeout` seconds; at most
    `max_threads` threads answer the connections that have spoken. They only read the request
    and write the headers: one more thread sends every file's bytes, each as fast as its reader
    takes them, so that slow downloads (a classroom fetching a 97 MB model over a slow
    network) hold none of the threads that answer pages. A reader that takes nothing for
    `idle_timeout` seconds is hung up on; beyond `max_transfers` files at once (bounding the
    open files and the memory, one chunk each), a request that finds no place free within
    `slot_seconds` is answered 503 with Retry-After."""

    request_queue_size = 1024
    max_threads = 32
    idle_timeout = 10
    max_transfers = 256
    slot_seconds = 2
    retry_seconds = 5

    def server_activate(self):
        super().server_activate()
        self.pool = ThreadPoolExecutor(self.max_threads, thread_name_prefix="serve")
        self.silent, self.silent_lock = selectors.DefaultSelector(), threading.Lock()
        self.closed = False
        self.sending, self.sending_lock = selectors.DefaultSelector(), threading.Lock()
        self.held, self.pending = 0, {}
        self.slots = threading.Condition(self.silent_lock)
        self.wake_up, self.waker = socket.socketpair()  # a new transfer ends the sender's wait
        self.waker.setblocking(False)
        self.sending.register(self.wake_up, selectors.EVENT_READ)
        threading.Thread(target=self._dispatch, daemon=True).start()
        threading.Thread(target=self._send, daemon=True).start()

    def reserve(self):
        """A place among the files being sent, waiting up to `slot_seconds` for one (a busy
        machine's sending thread frees a finished file's place late: a classroom's second
        request may come first); -> whether there was one."""
        with self.slots:
            if not self.slots.wait_for(lambda: self.held < self.max_transfers, self.slot_seconds):
                return False
            self.held += 1
            return True

    def release(self):
        with self.slots:
            self.held -= 1
            self.slots.notify()

    def later(self, request, body):
        """Send the open file BODY on REQUEST once its handler is done with the connection."""
        with self.silent_lock:
            self.pending[request] = body

    def shutdown_request(self, request):
        """A connection whose handler is done: closed, or handed to the sending thread."""
        with self.silent_lock:
            body = self.pending.pop(request, None)
        if body is None:
            super().shutdown_request(request)
            return
        request.setblocking(False)
        with self.sending_lock:
            self.sending.register(request, selectors.EVENT_WRITE, Transfer(body))
        with contextlib.suppress(OSError):  # full: the sender is awake already
            self.waker.send(b"\0")

    def _send(self):
        """Send every file being sent as its reader takes it; hang up on a reader that took
        nothing for `idle_timeout` seconds."""
        while not self.closed:
            for key, _ in self.sending.select(timeout=0.5):
                if key.fileobj is self.wake_up:
                    with contextlib.suppress(OSError):
                        self.wake_up.recv(4096)
                    continue
                try:
                    done = key.data.step(key.fileobj)
                except OSError:  # the reader hung up
                    done = True
                if done:
                    self._sent(key)
            now = time.monotonic()
            with self.sending_lock:
                keys = list(self.sending.get_map().values())
            for key in keys:
                if key.data and now - key.data.moved > self.idle_timeout:
                    self._sent(key)

    def _sent(self, key):
        with self.sending_lock:
            self.sending.unregister(key.fileobj)
        key.data.body.close()
        super().shutdown_request(key.fileobj)
        self.release()

    def process_request(self, request, client_address):
        with self.silent_lock:
            self.silent.register(request, selectors.EVENT_READ, (client_address, time.monotonic()))

    def _dispatch(self):
        """Hand each connection that has spoken to a thread; close those silent for too long."""
        while not self.closed:
            for key, _ in self.silent.select(timeout=0.5):
                with self.silent_lock:
                    self.silent.unregister(key.fileobj)
                self.pool.submit(self.process_request_thread, key.fileobj, key.data[0])
            with self.silent_lock:
                expired = [
                    key
                    for key in self.silent.get_map().values()
                    if time.monotonic() - key.data[1] > self.idle_timeout
                ]
                for key in expired:
                    self.silent.unregister(key.fileobj)
            for key in expired:
                self.shutdown_request(key.fileobj)

    def server_close(self):
        self.closed = True
        super().server_close()
        self.pool.shutdown(wait=False)
        self.wake_up.close()
        self.waker.close()


class Changes:
    """The sources' changes as the system reports them (watchfiles: inotify on Linux, FSEvents
    on macOS, ReadDirectoryChangesW on Windows), gathered until taken; `fd` turns readable
    when there are some, for a select beside other waits. An editor's save (a write, or a new
    file renamed over the old) comes as one batch: watchfiles waits STEP_MS for more of it."""

    STEP_MS = 30

    def __init__(self, root):
        # serve's alone (the build does not need it), imported here so that an environment
        # without it stops serve at once, saying so
        from watchfiles import watch

        self.watch = watch
        self.root = Path(root)
        self.paths, self.lock = set(), threading.Lock()
        self.fd, self._wake = os.pipe()
        os.set_blocking(self._wake, False)
        folders = [str(self.root / d) for d in WATCHED if (self.root / d).is_dir()]
        threading.Thread(target=self._watch, args=(folders,), daemon=True).start()

    def _watch(self, folders):
        watch = self.watch
        try:
            self._gather(watch(*folders, step=self.STEP_MS, raise_interrupt=False))
        except Exception as e:  # such as the system's limit on watched folders, reached
            said = f"serve: the system does not report saves ({e}); looking for them instead"
            print(said, flush=True)
            polled = watch(*folders, step=self.STEP_MS, raise_interrupt=False, force_polling=True)
            self._gather(polled)

    def _gather(self, batches):
        for batch in batches:
            with self.lock:
                self.paths.update(Path(path) for _, path in batch)
            with contextlib.suppress(BlockingIOError):  # full: serve was woken already
                os.write(self._wake, b"\0")

    def wait(self):
        """Until there are changes to take."""
        select.select([self.fd], [], [])

    def take(self):
        """The paths changed since the last take (an empty set if none)."""
        with self.lock:
            os.set_blocking(self.fd, False)
            with contextlib.suppress(BlockingIOError):
                while os.read(self.fd, 4096):
                    pass
            os.set_blocking(self.fd, True)
            paths, self.paths = self.paths, set()
        return paths


def chapters_only(root, paths):
    """Whether every path of PATHS is in ROOT's chapters/: a builder that imported the code
    before can build them (anything else may be a module to import anew, or a template or data
    file a module read when imported)."""
    chapters = Path(root) / "chapters"
    return all(chapters in Path(path).parents for path in paths)


class Builds:
    """serve's builds, one at a time, each by its builder (sitebuild/serving/worker.py), kept
    from one build to the next while only chapters change; `good` is when the site served was
    built (None: no site yet), `count` how many good builds there were (the open pages reload
    when it grows, reload.py)."""

    def __init__(self, root, out, extra, changes):
        self.root, self.out, self.extra, self.changes = root, out, extra, changes
        self.count = 0
        self.good = out.stat().st_mtime if (out / "index.html").exists() else None
        self.kept = Path(tempfile.mkdtemp(prefix="manyheads-serve."))  # chapters rendered
        self.worker = None
        # what the builders say, one build at a time; appended to, so that it can be emptied
        # between builds under a builder still writing to it. Closed by close()
        self.log = tempfile.TemporaryFile("a+", encoding="utf-8")  # noqa: SIM115

    def run(self, changed=()):
        """Build until a build ends without a newer change saved meanwhile; -> whether the
        last one built. Prints what the build said and what is served now."""
        while True:
            if changed and not chapters_only(self.root, changed):
                self._stop()  # a fresh builder imports the edited code
            done = self._once()
            if done is not None:
                return done
            print("change seen while building: stopped that build, building again …", flush=True)
            changed = self.changes.take()

    def _once(self):
        """One build: True or False as it ended, or None if a change stopped it."""
        if self.worker is not None and self.worker.poll() is not None:
            self._stop()  # it ended between builds
        if self.worker is None:
            self._start()
        self.log.seek(0)
        self.log.truncate()
        try:
            self.worker.stdin.write("build\n")
            self.worker.stdin.flush()
        except BrokenPipeError:  # it ended just now: its answer is its end
            pass
        why, answer = self._wait()
        self.log.seek(0)
        said = self.log.read()
        if why == "changed":
            return None
        ok = answer == "ok"
        print(_report(said, why == "overran", ok) or "built")
        if ok:
            Handler.csp = policy_of(self.out)
            self.count += 1
            self.good = time.time()
        elif self.good is not None:
            at = time.strftime("%H:%M:%S", time.localtime(self.good))
            print(f"still serving the last good site, built at {at}; save a change to build again")
        sys.stdout.flush()
        return ok

    def _start(self):
        """A fresh builder: it imports the pipeline now, and the chapters' code as it builds."""
        answers, self.answers_w = os.pipe()
        self.answers = os.fdopen(answers, "r", encoding="utf-8")
        boot = (
            f"import runpy, sys; sys.path.insert(0, {str(BUILD_PY.parent)!r}); "
            "runpy.run_module('sitebuild.serving.worker', run_name='__main__')"
        )
        cmd = [sys.executable, "-c", boot, "--root", str(self.root), "--out", str(self.out)]
        cmd += ["--reuse", str(self.kept), "--answer-fd", str(self.answers_w), *self.extra]
        self.worker = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            text=True,
            pass_fds=(self.answers_w,),
            start_new_session=True,  # Ctrl-C in the terminal ends serve, which ends it
        )
        os.close(self.answers_w)

    def _wait(self):
        """Wait for the builder's answer; stop it if a source changes meanwhile ("changed") or
        it runs past BUILD_SECONDS ("overran") -> (why it was stopped or None, its answer:
        "ok", "failed", or "" if it ended without one)."""
        deadline = time.monotonic() + BUILD_SECONDS
        while True:
            left = deadline - time.monotonic()
            ready = select.select([self.answers, self.changes.fd], [], [], max(left, 0))[0]
            if self.answers in ready:
                answer = self.answers.readline().strip()
                if not answer:  # it ended (its own watchdog ended a call that hung)
                    self._stop()
                return None, answer
            if self.changes.fd in ready:
                self._stop()
                return "changed", ""
            if left <= 0:
                self._stop()
                return "overran", ""

    def _stop(self):
        """End the builder, if any; it prints where it was (faulthandler)."""
        if self.worker is None:
            return
        self.worker.terminate()
        try:
            self.worker.wait(10)
        except subprocess.TimeoutExpired:
            self.worker.kill()
            self.worker.wait()
        self.worker.stdin.close()
        self.answers.close()
        self.worker = None

    def close(self):
        """serve ends: so does the builder."""
        self._stop()
        self.log.close()
        shutil.rmtree(self.kept, ignore_errors=True)


def _report(said, overran, ok):
    """What a build said, with the traceback faulthandler printed when it was stopped (by
    serve when it OVERRAN, or by its own watchdog, sitebuild/authoring/limits.py) turned into one
    line at the line of toymodels/ it was running."""
    said, where = _dump(said)
    if overran:
        said += f"\n{where or 'build.py'}: the build was still running after {BUILD_SECONDS} s "
        said += "and was stopped" + (" here; look for an endless loop" if where else "")
    elif where and not ok:
        said += (
            f"\n{where}: a call into the author's code was still running here after "
            f"{limits.BACKSTOP_SECONDS} s and "
            "was ended with the build (code that keeps Python for itself, such as one numpy "
            "operation on a huge array, cannot be stopped more gently); look for an endless loop"
        )
    return said.strip()


def _dump(said):
    """A build's output split at the traceback faulthandler printed (when the build was
    stopped from outside or by its own watchdog): (what the build said before it, the line
    of toymodels/ it was running as 'FILE:LINE', or None)."""
    m = re.search(r"^(?:Timeout \(|Fatal Python error|Current thread |Thread 0x)", said, re.M)
    if not m:
        return said, None
    at = blame.stopped_at(said[m.start() :])
    return said[: m.start()], f"{at[0]}:{at[1]}" if at else None


def policy_of(out):
    """The policy the built site's pages carry (it names their <style> by its hash, which
    changes with the styles), to send as a header too."""
    page = (out / "index.html").read_text("utf-8")
    meta = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    return html.unescape(meta[1])


def watch(builds):
    """Build again on every batch of saved changes."""
    while True:
        builds.changes.wait()
        changed = builds.changes.take()
        if changed:
            print("change seen, rebuilding …", flush=True)
            builds.run(changed)


def serve(root, out, port, extra):
    """Build, serve OUT, and build again on each save, in a builder kept from one build to the
    next (sitebuild/serving/worker.py): a chapter's edit renders that chapter alone and writes
    only what it changed (sitebuild/pipeline/build.py's Memory), and the open pages reload once
    it is built (sitebuild/serving/reload.py)."""
    builds = Builds(root, out.absolute(), extra, Changes(root))
    try:
        return _serve(builds, out, port)
    finally:
        builds.close()


def _serve(builds, out, port):
    if not builds.run():
        if not out.exists():
            return 1
        Handler.csp = policy_of(out)  # the last good site's
    handler = functools.partial(reload.handler(Handler, builds), directory=str(out))
    server = Server(("127.0.0.1", port), handler)
    threading.Thread(target=watch, args=(builds,), daemon=True).start()
    print(f"Many Heads is at http://127.0.0.1:{server.server_port}/  (Ctrl-C stops)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0
