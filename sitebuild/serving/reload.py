"""`build.py serve` reloads the open page once a save is built.

Only serve's own answers carry this: it adds one script to every page it sends, from its own
origin (the pages' policy allows scripts from there, and no inline script), naming the build
the page came from. The script asks serve which build it serves now, BUILD_PATH, naming the
build it has; serve holds the question until a newer build is served (up to HOLD_SECONDS), so
the page reloads as soon as a save is built, and says so (the header HELD); beyond HELD_AT_MOST
pages asking at once (each held question holds one of serve's threads), serve answers at once
and the page asks again a little later. A site that `build.py build` writes never holds the
script, so a deployed page never asks.
"""

import html
import io
import threading
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs

SCRIPT_PATH = "/__serve/reload.js"
BUILD_PATH = "/__serve/build"
SCRIPT = Path(__file__).with_name("reload.js")  # BUILD_PATH is "build" beside it
HOLD_SECONDS = 20
HELD_AT_MOST = 8
HELD = "X-Serve-Held"


def handler(base, builds):
    """A request handler class like BASE whose pages carry the script, answering its two
    paths; BUILDS.count names the build served now, BUILDS.wait_for waits for another."""
    places = threading.BoundedSemaphore(HELD_AT_MOST)

    class Reloading(base):
        def send_head(self):
            path, _, query = self.path.split("#", 1)[0].partition("?")
            if path == BUILD_PATH:
                seen = parse_qs(query).get("seen", [""])[0]
                held = seen.isdigit() and places.acquire(blocking=False)
                try:
                    count = builds.wait_for(int(seen), HOLD_SECONDS) if held else builds.count
                finally:
                    if held:
                        places.release()
                kind = "text/plain; charset=utf-8"
                return self._send(str(count).encode(), kind, {HELD: "yes" if held else "no"})
            if path == SCRIPT_PATH:
                return self._send(SCRIPT.read_bytes(), "text/javascript")
            try:
                file = Path(self.translate_path(self.path))
                file = file / "index.html" if file.is_dir() else file
                page = file.suffix == ".html" and file.is_file()
            except (OSError, ValueError):  # a name no file has: the server says so
                page = False
            if not page or not path.endswith(("/", ".html")):
                return super().send_head()
            page = file.read_bytes()
            src = html.escape(f"{SCRIPT_PATH}?build={builds.count}")
            tag = f'<script type="module" src="{src}"></script>'.encode()
            at = page.rfind(b"</body>")
            page = page[:at] + tag + page[at:] if at >= 0 else page + tag
            return self._send(page, "text/html; charset=utf-8")

        def _send(self, body, kind, headers=()):
            self.send_response(HTTPStatus.OK)
            for name, value in dict(headers).items():
                self.send_header(name, value)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)

    return Reloading
