"""Time limits for what a chapter makes the build run: live cells, Markdown, and every call
into an author's code (a module's import, a value for prose, an exercise's check, a figure).

A chapter is code (its live cells and figures run at build time) and its author is trusted
like a contributor, but a mistake must not hang the build, nor `build.py serve`, which would
then never rebuild a later edit. `time_limit` raises Overrun in the main thread after SECONDS,
through SIGALRM; elsewhere (a thread, or a system without SIGALRM) it sets no limit.

A signal reaches Python code only between two of its steps, so code that keeps the
interpreter for itself (one numpy operation on a huge array, say) is not stopped by it:
`backstop` ends the process then, through faulthandler's own thread, printing where each
thread was.
"""

import contextlib
import faulthandler
import signal
import sys
import threading
import time

# one live cell at build time, in a child process killed then (pipeline/cellrunner.py)
CELL_SECONDS = 20
MARKDOWN_SECONDS = 10  # one piece of a chapter's Markdown
# one call into an author's code at build time (importing a module, reading a value for
# prose, an exercise's check, one state of a figure): the wall-clock time after which it is
# stopped (the page calls render on every tap, so a state that takes seconds is already a
# mistake) ...
FIGURE_SECONDS = 10
# ... and the processor time above which the build warns (`check --strict` fails). Processor
# time, so that a busy machine does not make a figure slow
SLOW_SECONDS = 0.2
# the same budget for a figure's first state in the reader's Python (Pyodide), which
# `check --strict` times (sitebuild/authoring/drawtime.py): there pure-Python code runs many times
# slower than in CPython, so a figure well within SLOW_SECONDS here can be far over it on a tap
PYODIDE_SLOW_SECONDS = SLOW_SECONDS
# a figure's call that a signal could not stop ends the build after 1 to 2 times this
BACKSTOP_SECONDS = FIGURE_SECONDS + 5


class Overrun(BaseException):
    """Raised inside the work that ran too long; a BaseException, so that a cell's own
    `except Exception` cannot swallow it."""


@contextlib.contextmanager
def time_limit(seconds):
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def overrun(signum, frame):
        raise Overrun(f"still running after {seconds} s")

    # a limit set inside another (a module imported while a value is read) gives the outer
    # one back what is left of its time
    outer, began = signal.getitimer(signal.ITIMER_REAL)[0], time.monotonic()
    previous = signal.signal(signal.SIGALRM, overrun)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer) if outer else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - began), 1e-3))


@contextlib.contextmanager
def backstop(seconds):
    """While the block runs, a call that `tick` starts and that runs for more than SECONDS
    after it ends the process (exit status 1), printing every thread's traceback to stderr;
    `time_limit` should have stopped it first, so this strikes only where a signal could not.
    faulthandler's watchdog is armed for twice SECONDS and armed again only once SECONDS of it
    have gone by, so a tick costs a clock reading. In a thread it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _armed.append([seconds, None])
    try:
        tick()
        yield
    finally:
        _armed.pop()
        faulthandler.cancel_dump_traceback_later()
        if _armed:
            _armed[-1][1] = None  # the enclosing block's watchdog is armed at its next tick


_armed = []  # [seconds, when armed] of each backstop block open, innermost last


def tick():
    """A call starts: make sure the innermost backstop's watchdog gives it its SECONDS."""
    if not _armed:
        return
    now = time.monotonic()
    seconds, armed = _armed[-1]
    if armed is None or now - armed > seconds:
        faulthandler.dump_traceback_later(2 * seconds, exit=True, file=sys.__stderr__)
        _armed[-1][1] = now
