"""Live code cells: run a reader's (or author's) Python in a page's shared namespace.

The build runs every cell of a chapter once, in order, with CPython and prints the
output under it; the browser runs the same function under Pyodide when the reader
presses Run. Cells of one page share a namespace, like a notebook.
"""

import ast
import contextlib
import importlib
import io
import linecache
import traceback

import numpy as np

NAMESPACES = {}
FILENAME = "<cell>"


def _show(value):
    with np.printoptions(precision=3, suppress=True):
        return repr(value)


def _traceback(err):
    """The traceback without this module's own frames: what the reader's code did."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == FILENAME]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(type(err), err)
    return "".join(lines), (frames[-1].lineno if frames else getattr(err, "lineno", None))


def run(code, ns="page", check=None):
    """-> {"stdout", "value", "error", "line", "check"}: what one cell printed, its last
    expression, any traceback, and the exercise's CHECK of the namespace."""
    env = NAMESPACES.setdefault(ns, {"__name__": "__cell__", "np": np})
    out = io.StringIO()
    result = {"stdout": "", "value": None, "error": None, "line": None, "check": None}
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            linecache.cache[FILENAME] = (
                len(code),
                None,
                code.splitlines(True),
                FILENAME,
            )  # source lines in tracebacks
            tree = ast.parse(code, FILENAME)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, FILENAME, "exec"), env)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), FILENAME, "eval"), env)
                if value is not None:
                    result["value"] = _show(value)
        except BaseException as err:  # the reader's code may raise anything, even SystemExit
            result["error"], result["line"] = _traceback(err)
    result["stdout"] = out.getvalue()
    if check and not result["error"]:
        result["check"] = verdict(check, ns)
    return result


def verdict(check, ns="page"):
    """-> {"ok", "message", "fault"}: the exercise's CHECK ("toymodels.MODULE:FUNCTION") of the
    page's namespace NS. A check that raises, or returns no (passed, message), is the page's
    fault, not the reader's: "fault" is then True and the message says so (the build tries
    each check on its starting code, but a reader's variables may be anything)."""
    env = NAMESPACES.setdefault(ns, {"__name__": "__cell__", "np": np})
    try:
        module, _, func = check.partition(":")
        ok, message = getattr(importlib.import_module(module), func)(env)
        if not isinstance(message, str):
            raise TypeError(f"its message is {type(message).__name__}, not text")
    except Exception as err:  # the author's check, given whatever the reader's code left
        what = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        message = (
            f"The exercise's own check failed ({what}), so it cannot say whether your code is "
            "right. This is a mistake in the page, not in your code."
        )
        return {"ok": False, "message": message, "fault": True}
    return {"ok": bool(ok), "message": message, "fault": False}


def forget(ns="page"):
    """Empty a page's namespace (the reader restarted Python, or the build starts a page)."""
    NAMESPACES.pop(ns, None)
