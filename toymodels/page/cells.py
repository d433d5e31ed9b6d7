"""Live code cells: run a reader's (or author's) Python in a page's shared namespace.

The build runs every cell of a chapter once, in order, with CPython and prints the
output under it; the browser runs the same function under Pyodide when the reader
presses Run. Cells of one page share a namespace, like a notebook.

What a cell printed, its value and its traceback are each cut at OUTPUT_LINES lines and
OUTPUT_CHARS characters, with a last line saying how much more there was: a page shows a
few thousand lines at once, but a cell printing millions would freeze it (or, in hundreds of
megabytes, crash the tab), and what is cut is only counted, never kept, so the worker never
holds or sends more than that.
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
OUTPUT_LINES = 1000
OUTPUT_CHARS = 100_000
PROSE_VALUES = ("OUTPUT_LINES", "OUTPUT_CHARS")


class Capped(io.TextIOBase):
    """A cell's sys.stdout and sys.stderr: keeps the first OUTPUT_LINES lines and
    OUTPUT_CHARS characters written to it, and of the rest only counts the characters and
    lines."""

    def __init__(self):
        self.kept, self.chars, self.lines = [], 0, 0  # lines: the line ends kept
        self.cut = None  # the limit that cut the output, "lines" or "characters"
        self.more_chars = self.more_lines = 0  # counted only: the line ends cut
        self.open = False  # the text cut ends inside a line

    def writable(self):
        return True

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"string argument expected, got '{type(s).__name__}'")
        rest = s if self.cut else self._keep(s)
        if rest:
            self.more_chars += len(rest)
            self.more_lines += rest.count("\n")
            self.open = not rest.endswith("\n")
        return len(s)

    def _keep(self, s):
        """Keep what fits of S; -> the rest."""
        take = s[: OUTPUT_CHARS - self.chars]
        at = -1
        for _ in range(OUTPUT_LINES - self.lines):
            at = take.find("\n", at + 1)
            if at < 0:
                break
        else:  # the last line allowed ends at `at` (none is allowed: at = -1)
            take = take[: at + 1]
        self.kept.append(take)
        self.chars += len(take)
        self.lines += take.count("\n")
        rest = s[len(take) :]
        if rest:
            self.cut = "lines" if self.lines >= OUTPUT_LINES else "characters"
        return rest

    def getvalue(self):
        text = "".join(self.kept)
        if not self.cut:
            return text
        if self.cut == "lines":
            at, more = f"{OUTPUT_LINES:,} lines", self.more_lines + self.open
        else:
            at, more = f"{OUTPUT_CHARS:,} characters", self.more_chars
        end = "" if text.endswith("\n") or not text else "\n"
        return f"{text}{end}[output cut at {at}, {more:,} more]\n"


def capped(text):
    """TEXT cut as a cell's output is."""
    out = Capped()
    out.write(text)
    return out.getvalue()


def _show(value):
    with np.printoptions(precision=3, suppress=True):
        return capped(repr(value))


def _traceback(err):
    """The traceback without this module's own frames: what the reader's code did."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == FILENAME]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    # the frames and the error cut apart, so that the error itself is still shown
    error = "".join(traceback.format_exception_only(type(err), err))
    text = capped("".join(lines)) + capped(error)
    return text, (frames[-1].lineno if frames else getattr(err, "lineno", None))


def run(code, ns="page", check=None):
    """-> {"stdout", "value", "error", "line", "check"}: what one cell printed, its last
    expression, any traceback, and the exercise's CHECK of the namespace."""
    env = NAMESPACES.setdefault(ns, {"__name__": "__cell__", "np": np})
    out = Capped()
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
