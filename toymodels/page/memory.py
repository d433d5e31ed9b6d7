"""Whether the Python worker's memory can grow to what a model needs, asked before the model
is downloaded (static/ownmodel.js): a phone's browser may not give a page hundreds of MB, and
the reader should hear so before fetching 100 MB, not see the page fail after it."""


def room(mb):
    """Whether this Python's memory is, or can grow to, MB megabytes (2**20 bytes). Under
    Pyodide an empty numpy array of the bytes missing is asked for, which grows the
    WebAssembly memory without writing to it, then let go: the memory stays the worker's, for
    the model. Under CPython: True."""
    try:
        import pyodide_js
    except ImportError:
        return True
    import numpy as np

    missing = int(mb) * 2**20 - pyodide_js._module.HEAP8.length
    if missing <= 0:
        return True
    try:
        block = np.empty(missing, np.uint8)
    except MemoryError:
        return False
    del block
    return True
