"""Time limits for what a chapter makes the build run: live cells and Markdown.

A chapter is code (its live cells run at build time) and its author is trusted like a
contributor, but a mistake must not hang the build, nor `build.py serve`, which would then
never rebuild a later edit. `time_limit` raises Overrun in the main thread after SECONDS,
through SIGALRM; elsewhere (a thread, or a system without SIGALRM) it sets no limit.
"""

import contextlib
import signal
import threading

CELL_SECONDS = 20  # one live cell at build time
MARKDOWN_SECONDS = 10  # one piece of a chapter's Markdown


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

    previous = signal.signal(signal.SIGALRM, overrun)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
