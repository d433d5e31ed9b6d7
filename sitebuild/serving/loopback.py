"""A built site served on 127.0.0.1, and Debian's Chromium to open it with: what the tests
(tests/conftest.py) and the bench (bench/) share, so that neither reaches into the other.

The bench times what a reader waits for, so it runs the browser (`chromium`). The tests run the
same build's headless shell (`chromium-headless-shell`: the same Blink and V8 without the
browser's own layer, what Playwright itself runs headless since 1.49): their pages cost it 14%
less processor time, and a test run here lasts as long as its processor time (docs/testing.md).

The server is `build.py serve`'s handler (its MIME types, policy header and hardening) over any
folder, on a free port, in a thread; hang-ups by the browser are not printed."""

import functools
import threading
from http.server import ThreadingHTTPServer

from .serve import Handler, QuietHangUps

CHROMIUM = "/usr/bin/chromium"  # the bench's
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"  # the tests'
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class QuietServer(QuietHangUps, ThreadingHTTPServer):
    pass


def serve_dir(directory):
    """DIRECTORY served on 127.0.0.1 at a free port (server.server_port) until
    server.shutdown()."""
    server = QuietServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
