"""`python build.py serve`: serve site/ on 127.0.0.1 and rebuild it when its sources change.

Each rebuild runs `build.py` in a fresh process, so edited toymodels are
imported anew; a failed rebuild prints the author's error and keeps serving
the last good site. The server stays responsive under a classroom's worth of
browsers: a deep accept queue, a bounded number of threads, silent connections
closed after a while, no folder listings, and a 400 for a path it cannot hold.
"""

import contextlib
import functools
import html
import re
import selectors
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

from .policy import content_security_policy, framing

WATCHED = ("chapters", "templates", "toymodels", "sitebuild")


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
        self.send_header("Content-Security-Policy", f"{self.csp}; {framing(self.path)}")
        super().end_headers()

    def log_message(self, fmt, *args):
        pass


class QuietHangUps:
    """A server mixin: a browser that hangs up mid-answer (a page left, a load cancelled) is no
    error, and prints no traceback; any other fault does."""

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class Server(QuietHangUps, ThreadingHTTPServer):
    """Many browsers at once, with bounded means. A burst of connections waits in a deep accept
    queue instead of being refused; a connection that has sent nothing yet waits in one
    selector, not in a thread, and is closed after `idle_timeout` seconds; at most
    `max_threads` threads answer the connections that have spoken."""

    request_queue_size = 1024
    max_threads = 32
    idle_timeout = 10

    def server_activate(self):
        super().server_activate()
        self.pool = ThreadPoolExecutor(self.max_threads, thread_name_prefix="serve")
        self.silent, self.silent_lock = selectors.DefaultSelector(), threading.Lock()
        self.closed = False
        threading.Thread(target=self._dispatch, daemon=True).start()

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


def snapshot(root):
    return {p: p.stat().st_mtime_ns for d in WATCHED for p in (root / d).rglob("*") if p.is_file()}


def rebuild(root, out, extra):
    cmd = [
        sys.executable,
        str(Path(__file__).resolve().parent.parent / "build.py"),
        "build",
        "--out",
        str(out),
        *extra,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    print((done.stdout + done.stderr).strip() or "built", flush=True)
    if done.returncode == 0:
        Handler.csp = policy_of(out)
    return done.returncode == 0


def policy_of(out):
    """The policy the built site's pages carry (it names their <style> by its hash, which
    changes with the styles), to send as a header too."""
    page = (out / "index.html").read_text("utf-8")
    meta = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    return html.unescape(meta[1])


def watch(root, out, extra):
    seen = snapshot(root)
    while True:
        time.sleep(0.5)
        now = snapshot(root)
        if now != seen:
            seen = now
            print("change seen, rebuilding …", flush=True)
            rebuild(root, out, extra)


def serve(root, out, port, extra):
    if not rebuild(root, out, extra):
        if not out.exists():
            return 1
        Handler.csp = policy_of(out)  # the last good site's
    handler = functools.partial(Handler, directory=str(out))
    server = Server(("127.0.0.1", port), handler)
    threading.Thread(target=watch, args=(root, out, extra), daemon=True).start()
    print(f"Many Heads is at http://127.0.0.1:{server.server_port}/  (Ctrl-C stops)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0
