"""The sha256 of a file the reader's browser fetched, computed by Python's hashlib where the page
has no Web Crypto to do it (a page on plain http from another computer, such as a classroom
server: browsers give `crypto.subtle` to secure pages only). static/ownmodel.js puts a copy of
the bytes into the worker's file system and asks here, so a model file is checked against the
sha256 the build recorded on every address the site is served from."""

import hashlib
import os

PIECE = 1 << 20  # bytes read at a time: the file is never copied whole into Python's memory


def sha256(path):
    """The sha256 (hex) of the file PATH, which is then removed: it is a copy made only to be
    checked."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for piece in iter(lambda: f.read(PIECE), b""):
                h.update(piece)
    finally:
        os.remove(path)
    return h.hexdigest()
