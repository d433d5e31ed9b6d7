"""Data files shipped beside the models (toymodels/data/…), read the same way at build time
and in the browser.

Under CPython the file is read from this package's folder. Under Pyodide the
worker has copied only the .py files, so a data file is fetched on first use
from the site (a synchronous request, which a Web Worker may make) and kept in
the in-memory file system for the next call. The worker tells Python where the
site's Python folder is through MANYHEADS_PY_URL; the build names each data file
by its content and lists the names in data.json there, so this build's Python
never reads another build's data. `fetched()` lists what was fetched, so that the page can
ask the site's service worker to keep it for offline visits (static/offline.js).
"""

import json
import os
import sys
from pathlib import Path
from urllib.parse import urljoin

HERE = Path(__file__).resolve().parent.parent / "data"


def read_bytes(relpath):
    """The bytes of toymodels/data/RELPATH; raises FileNotFoundError naming the file."""
    path = HERE / relpath
    if path.exists():
        return path.read_bytes()
    if sys.platform != "emscripten" or "MANYHEADS_PY_URL" not in os.environ:
        raise FileNotFoundError(f"toymodels/data/{relpath} is missing")
    data = _fetch(_site_url(relpath), f"toymodels/data/{relpath}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


_fetched = []  # the URLs fetched, in order
_names = {}  # data.json: toymodels/data/RELPATH -> its content-addressed URL


def _site_url(relpath):
    """Where the site keeps toymodels/data/RELPATH, as its data.json (read once) says."""
    base = os.environ["MANYHEADS_PY_URL"]
    if not _names:
        _names.update(json.loads(_fetch(base + "data.json", "data.json")))
    if relpath not in _names:
        raise FileNotFoundError(f"toymodels/data/{relpath} is not in the site's data.json")
    return urljoin(base, _names[relpath])


def _fetch(url, what):
    """The bytes at `url`, by a synchronous request; `what` names the file in an error."""
    from js import Uint8Array, XMLHttpRequest  # only in the browser

    xhr = XMLHttpRequest.new()
    xhr.open("GET", url, False)
    xhr.responseType = "arraybuffer"
    xhr.send(None)
    if xhr.status != 200:
        raise FileNotFoundError(f"{what}: the site answered {xhr.status}")
    _fetched.append(url)
    return Uint8Array.new(xhr.response).to_py().tobytes()


def fetched():
    """The address of every file fetched from the site so far, in order (none under CPython)."""
    return list(_fetched)


def read_text(relpath):
    return read_bytes(relpath).decode("utf-8")


class MissingData(FileNotFoundError):
    """A data file an export writes is not there; the message says how to write it."""


def read_exported(relpath, how):
    """The bytes of toymodels/data/RELPATH, a file an export writes (toymodels/export/): when it
    is missing, MissingData naming the file and HOW to write it ("run `make export` …"), which
    the build shows an author who has not run the export."""
    try:
        return read_bytes(relpath)
    except FileNotFoundError as e:
        raise MissingData(f"{e}; {how}") from None
