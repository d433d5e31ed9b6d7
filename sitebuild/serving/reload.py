"""`build.py serve` reloads the open page once a save is built.

Only serve's own answers carry this: it adds one script to every page it sends, from its own
origin (the pages' policy allows scripts from there, and no inline script), naming the build
the page came from. The script asks serve which build it serves now, BUILD_PATH, a few times
a second, and reloads the page when that changed. A site that `build.py build` writes never
holds it, so a deployed page never asks.
"""

import html
import io
from http import HTTPStatus
from pathlib import Path

SCRIPT_PATH = "/__serve/reload.js"
BUILD_PATH = "/__serve/build"
SCRIPT = Path(__file__).with_name("reload.js")  # BUILD_PATH is "build" beside it
# serve's answer for the site's service worker: under serve every build is a new version of the
# site's worker, and with each update a reload's navigation now and then stayed pending for a
# minute; this worker intercepts nothing and leaves at once, so every request goes to serve
# (a built site's own worker is tried with `build.py build` and any static server)
WORKER_PATH = "/sw.js"
NO_WORKER = (
    b"// build.py serve: no service worker while an author edits (sitebuild/serving/reload.py)\n"
    b'self.addEventListener("install", () => self.skipWaiting());\n'
    b'self.addEventListener("activate", (e) => e.waitUntil(self.registration.unregister()));\n'
)


def handler(base, builds):
    """A request handler class like BASE whose pages carry the script, answering its two
    paths and the service worker's (NO_WORKER); BUILDS.count names the build served now."""

    class Reloading(base):
        def send_head(self):
            path = self.path.split("?", 1)[0].split("#", 1)[0]
            if path == BUILD_PATH:
                return self._send(str(builds.count).encode(), "text/plain; charset=utf-8")
            if path == SCRIPT_PATH:
                return self._send(SCRIPT.read_bytes(), "text/javascript")
            if path == WORKER_PATH:
                return self._send(NO_WORKER, "text/javascript")
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

        def _send(self, body, kind):
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)

    return Reloading
