"""Data files shipped beside the models (toymodels/data/…), read the same way at build time
and in the browser.

Under CPython the file is read from this package's folder. Under Pyodide the
worker has copied only the .py files, so a data file is fetched on first use
from the site (a synchronous request, which a Web Worker may make) and kept in
the in-memory file system for the next call. The worker tells Python where the
site's py/ folder is through MANYHEADS_PY_URL.
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "data"


def read_bytes(relpath):
    """The bytes of toymodels/data/RELPATH; raises FileNotFoundError naming the file."""
    path = HERE / relpath
    if path.exists():
        return path.read_bytes()
    if sys.platform != "emscripten" or "MANYHEADS_PY_URL" not in os.environ:
        raise FileNotFoundError(f"toymodels/data/{relpath} is missing")
    from js import Uint8Array, XMLHttpRequest  # only in the browser

    xhr = XMLHttpRequest.new()
    xhr.open("GET", f"{os.environ['MANYHEADS_PY_URL']}toymodels/data/{relpath}", False)
    xhr.responseType = "arraybuffer"
    xhr.send(None)
    if xhr.status != 200:
        raise FileNotFoundError(f"toymodels/data/{relpath}: the site answered {xhr.status}")
    data = Uint8Array.new(xhr.response).to_py().tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def read_text(relpath):
    return read_bytes(relpath).decode("utf-8")
