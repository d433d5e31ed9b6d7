"""`python build.py serve`: serve site/ on 127.0.0.1 and rebuild it when its sources change.

Each rebuild runs `build.py` in a fresh process, so edited toymodels are
imported anew; a failed rebuild prints the author's error and keeps serving
the last good site.
"""

import contextlib
import functools
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .policy import content_security_policy

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

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Security-Policy", self.csp)
        super().end_headers()

    def log_message(self, fmt, *args):
        pass


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
    return done.returncode == 0


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
    if not rebuild(root, out, extra) and not out.exists():
        return 1
    if "--pyodide-cdn" in extra:
        from .assets import CDN_URL

        Handler.csp = content_security_policy(CDN_URL)
    handler = functools.partial(Handler, directory=str(out))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=watch, args=(root, out, extra), daemon=True).start()
    print(f"Many Heads is at http://127.0.0.1:{server.server_port}/  (Ctrl-C stops)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0
