"""The line of toymodels/ an author should fix when Python fails there.

A traceback runs through the build, importlib and numpy as well as the author's module, and
the author can change only the module: the line to name is a syntax error's own line, or the
innermost frame of the traceback that lies in the author's own package (the package of the
module the chapter names), and the innermost line of toymodels/ beside it where that lies
elsewhere: the kit's line that raised, or another chapter's model the author reused. Paths are
written from the project's root (toymodels/…/x.py), as every other author message writes them.
"""

import contextlib
import importlib
import inspect
import re
import sys
import traceback
import warnings
from pathlib import Path

import toymodels

from ..pipeline.chapters import AuthorError
from . import limits


def relative(filename):
    """'toymodels/…/x.py' for a file of the toymodels package, else None."""
    if not filename or filename.startswith("<"):
        return None
    path = Path(filename).resolve()
    for folder in toymodels.__path__:
        folder = Path(folder).resolve()
        if folder in path.parents:
            return "toymodels/" + path.relative_to(folder).as_posix()
    return None


def raised_at(exc):
    """(file, line) in toymodels/ where EXC went wrong, or None when no frame lies there: a
    SyntaxError's own file and line, else the innermost toymodels/ frame of its traceback."""
    if isinstance(exc, SyntaxError):
        where = relative(exc.filename)
        if where:
            return where, exc.lineno or 1
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        where = relative(frame.filename)
        if where:
            found = (where, frame.lineno)
    return found


def blamed(exc, package):
    """(the line to fix, the line that raised) for EXC raised while running PACKAGE's code
    ("toymodels.two_back"): the innermost frame in PACKAGE, and the innermost frame of
    toymodels/ if it lies elsewhere (else None). Without a frame in PACKAGE, the innermost
    of toymodels/ and None; without any in toymodels/, (None, None)."""
    innermost = raised_at(exc)
    if isinstance(exc, SyntaxError) and innermost:
        return innermost, None
    folder = package.replace(".", "/") + "/"
    own = None
    for frame in traceback.extract_tb(exc.__traceback__):
        where = relative(frame.filename)
        if where and where.startswith(folder):
            own = (where, frame.lineno)
    if own is None or own == innermost:
        return innermost, None
    return own, innermost


def package_of(module_name):
    """'toymodels.two_back.figure' -> 'toymodels.two_back': the chapter's package."""
    return ".".join(module_name.split(".")[:2])


def stopped_at(dump):
    """The innermost line of toymodels/ in a traceback faulthandler printed (most recent call
    first), outside toymodels/page/ if any lies there: (file, line), or None."""
    found = [
        (where, int(line))
        for path, line in re.findall(r'^\s*File "([^"]+)", line (\d+)', dump, re.M)
        if (where := relative(path))
    ]
    authors = [f for f in found if not f[0].startswith("toymodels/page/")]
    return (authors or found or [None])[0]


def defined_at(obj):
    """(file, line) in toymodels/ of a function's `def`, or None."""
    try:
        where = relative(inspect.getsourcefile(obj))
        return (where, inspect.getsourcelines(obj)[1]) if where else None
    except (OSError, TypeError):
        return None


def assigned_at(module, name):
    """(file, line) in toymodels/ of the line that assigns NAME at the top of MODULE, or None."""
    try:
        where = relative(inspect.getsourcefile(module))
        lines = inspect.getsource(module).split("\n")
    except (OSError, TypeError):
        return None
    start = re.compile(rf"^{re.escape(name)}\s*(?::[^=]*)?=")
    line = next((n for n, text in enumerate(lines, 1) if start.match(text)), None)
    return (where, line) if where and line else None


def exception_text(exc):
    """'Type: message', without the absolute path an ImportError adds in parentheses."""
    text = str(exc)
    path = getattr(exc, "path", None)
    if isinstance(exc, ImportError) and path:
        text = text.replace(f" ({path})", "")
    if isinstance(exc, SyntaxError):
        text = exc.msg
    return f"{type(exc).__name__}: {text}"


# what numpy's warnings mean, and what to do about one, said in every note of one
NUMPY_WARNS = (
    "numpy warns of a number it could not compute (an overflow, a division by zero, a nan): "
    "fix the computation, or put it in `with np.errstate(...)` where that result is meant"
)
# module name -> [((file, line) or None, 'Category: message')] for each warning its import set
# off: a module is imported once a process, and every build in it names them
IMPORT_WARNINGS = {}


def import_module(name, rel, line, notes=None):
    """importlib.import_module(NAME) for the chapter line REL:LINE that names it. A module that
    does not exist raises ModuleNotFoundError, as there; one that exists but cannot be imported
    (a syntax error, a misspelt import, module-level code that raises or runs past the limit
    of `limited`) is an AuthorError at the line of toymodels/ that failed, naming REL:LINE and
    how to fix it. Each warning its import set off (numpy's at a module's top level) is added
    to NOTES as (file, line, message), at the line of toymodels/ that set it off."""
    try:
        fresh = name not in sys.modules
        with warnings_caught(package_of(name)) as warned:
            module = limited(importlib.import_module, name)
        if fresh:
            IMPORT_WARNINGS[name] = warned
        if notes is not None:
            said = f"importing {name} (needed by {rel}:{line})"
            for note in warning_notes(IMPORT_WARNINGS.get(name, ()), said, (rel, line)):
                if note not in notes:
                    notes.append(note)
        return module
    except ModuleNotFoundError as e:
        if e.name and (name == e.name or name.startswith(e.name + ".")):
            raise
        failed = e
    except (Exception, limits.Overrun) as e:
        failed = e
    if isinstance(failed, limits.Overrun):
        what = (
            f"importing this module was still running after {limits.FIGURE_SECONDS} s, and "
            "was stopped here (an endless loop?)"
        )
        fix = (
            "a module's top level runs at every build and before the reader's first tap: "
            "keep slow work in a function, called when it is needed"
        )
    elif isinstance(failed, SyntaxError):
        what = f"Python cannot read this file: {failed.msg}"
        fix = "fix the code at this line or above it"
    elif isinstance(failed, ImportError):
        what = f"importing this module raised {exception_text(failed)}"
        fix = "check the name: a module here may import numpy, the standard library and toymodels/"
    else:
        what = f"importing this module raised {exception_text(failed)}"
        fix = "fix the code at this line, which runs when the module is imported"
    at, inner = blamed(failed, package_of(name))
    if at is None:
        raise AuthorError(rel, line, f"importing {name} raised {exception_text(failed)}") from None
    raise AuthorError(*at, f"{what}{reached(inner)} (needed by {rel}:{line}); {fix}") from None


@contextlib.contextmanager
def warnings_caught(package):
    """While the block runs, every warning (numpy's among them) is kept, not printed: -> a
    list that receives ((file, line) to name, 'Category: message') for each, where the line
    is the innermost of PACKAGE ("toymodels.two_back") on the stack when it was set off, else
    the innermost of toymodels/, else None; not numpy's own file, which Python names."""
    found = []

    def keep(message, category, filename, lineno, file=None, line=None):
        stack = traceback.extract_stack()[:-1]
        folder = package.replace(".", "/") + "/"
        ours = [(w, f.lineno) for f in stack if (w := relative(f.filename))]
        own = [at for at in ours if at[0].startswith(folder)]
        found.append(((own or ours or [None])[-1], f"{category.__name__}: {message}"))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = keep
        yield found


def warning_notes(warned, what, fallback):
    """(file, line, message) for each warning of WARNED (as warnings_caught keeps them) that
    WHAT ("the value 'toymodels.x.y.z' (needed by chapters/a.md:10)") set off, at its line of
    toymodels/, else at FALLBACK (file, line)."""
    return [
        (*(at or fallback), f"{what} set off a warning ({said}); {NUMPY_WARNS}")
        for at, said in warned
    ]


def limited(fn, *args):
    """FN(*ARGS), a call into an author's code, held to the per-call limit a figure's state is
    held to (limits.FIGURE_SECONDS, then the backstop): limits.Overrun if it runs longer."""
    with limits.backstop(limits.BACKSTOP_SECONDS), limits.time_limit(limits.FIGURE_SECONDS):
        return fn(*args)


def reached(inner):
    """' (in FILE:LINE, called from this line)' for the line that raised beyond the author's."""
    return f" (in {inner[0]}:{inner[1]}, called from this line)" if inner else ""
