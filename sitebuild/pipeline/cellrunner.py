"""A page's live cells at build time, run in a child Python of their own with a hard limit.

A cell is the author's code, run in order in one namespace per page, like a notebook
(toymodels/page/cells.py runs each). Run inside the build's own process, a cell could keep the
build for ever (a bare `except` around an endless loop, SIGALRM ignored or its timer cleared)
or end it with no word (`os._exit(0)`). So each page's cells run in one child process, started
at the page's first cell (one per page, not per cell: a start costs a Python and numpy), and the
build waits for each cell's answer at most `seconds`: then it kills the child. A child that
ends, or answers what is not an answer, is reported too; the build names the cell
(sitebuild/pipeline/pages.py).

A build that renders the same page again in the same process (serve's builder, after an edit to
the chapter's prose) may hand it a Replay of the last render's requests and answers: while the
page asks what it asked then, in the same order, the answers are the last ones and no child is
started; from the first request that differs, a child is started, given the requests before it
(so that it holds the same variables) and asked from there on. No request names a line of the
chapter (the build adds the place to what a cell or an exercise's check answers), so that lines
added or removed above a cell or an exercise leave the requests as they were.

The child's requests and answers pass through two pipes of their own, one JSON line each, so
that what a cell prints (to sys.stdout, or to the file descriptors 1 and 2, which go nowhere)
cannot be taken for an answer. It reads its sys.path (and toymodels' folders) from the build
first, so it imports the same toymodels/.
"""

import contextlib
import ctypes
import importlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time

PR_SET_PDEATHSIG = 1  # linux/prctl.h
START_SECONDS = 60  # a child's start (Python, numpy, the cells' module), not a cell's time


class CellStopped(Exception):
    """The cell was still running after its time, and its process was killed."""


class CellEnded(Exception):
    """The cell's process ended (or answered nonsense) while running it; the message says how."""


class Replay:
    """A page's requests to its cells' Python and their answers, as JSON text, in order: those
    of the last render (`before`) and of this one (`now`)."""

    def __init__(self):
        self.before, self.now = [], []

    def next_render(self):
        self.before, self.now = self.now, []


class CellProcess:
    """The child Python running one page's cells; `run` starts it, `close` ends it. With a
    REPLAY, the answers of the last render are given while the requests are the same."""

    def __init__(self, replay=None):
        self.proc = None
        self.replay = replay if replay is not None else Replay()
        self.replay.next_render()

    def run(self, code, ns, check, seconds):
        """cells.run(CODE, NS, CHECK) in the child: its result (a dict), or CellStopped after
        SECONDS, or CellEnded."""
        return self._ask([code, ns, check], seconds)

    def call(self, name, args, seconds):
        """NAME ("package.module:function") called with ARGS in the child, for the build (an
        exercise's check where the cells' variables are): its JSON value, or CellStopped after
        SECONDS, or CellEnded."""
        return self._ask(["call", name, list(args)], seconds)["value"]

    def _ask(self, request, seconds):
        asked, r = json.dumps(request), self.replay
        n = len(r.now)
        if self.proc is None and n < len(r.before) and r.before[n][0] == asked:
            r.now.append(r.before[n])
            return json.loads(r.before[n][1])
        if self.proc is None:
            self._start()
            for earlier, _ in r.now:  # the variables the answers given so far left
                self._send(earlier)
                self._answer(seconds)
        self._send(asked)
        answer = self._answer(seconds)
        r.now.append((asked, json.dumps(answer)))
        return answer

    def _start(self):
        from_build, to_child = os.pipe()
        from_child, to_build = os.pipe()
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed with the child)
        # -P: this file's folder is not put first on the child's sys.path
        command = [sys.executable, "-P", __file__, str(from_build), str(to_build), str(os.getpid())]
        self.proc = subprocess.Popen(
            command,
            pass_fds=(from_build, to_build),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        os.close(from_build)
        os.close(to_build)
        self.requests = os.fdopen(to_child, "w", encoding="utf-8")
        self.answers = from_child
        self.pending = b""
        try:
            # toymodels/ may span folders (toymodels.__path__, as figures.py reads it)
            folders = list(importlib.import_module("toymodels").__path__)
            self._send(json.dumps([sys.path, folders]))
            self._answer(START_SECONDS)
        except (CellEnded, CellStopped) as e:
            raise RuntimeError(f"the Python for live cells did not start ({e})") from None

    def _send(self, line):
        """LINE, a request as JSON text, to the child."""
        try:
            self.requests.write(line + "\n")
            self.requests.flush()
        except (BrokenPipeError, ValueError):
            raise CellEnded(self._ended()) from None

    def _answer(self, seconds):
        deadline = time.monotonic() + seconds
        with selectors.DefaultSelector() as selector:
            selector.register(self.answers, selectors.EVENT_READ)
            while b"\n" not in self.pending:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    self._kill()
                    raise CellStopped(f"still running after {seconds} s")
                piece = os.read(self.answers, 1 << 16)
                if not piece:
                    raise CellEnded(self._ended())
                self.pending += piece
        line, _, self.pending = self.pending.partition(b"\n")
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            self._kill()
            raise CellEnded("it wrote something else than a cell's result to the build")
        return answer

    def _ended(self):
        """How the child ended (it is then gone): its exit status or signal, and the last line
        it wrote to stderr."""
        try:
            status = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._kill()
            return "it closed its link to the build"
        self.log.seek(0)
        said = self.log.read().decode("utf-8", "replace").strip().splitlines()
        self._forget()
        how = f"exit status {status}" if status >= 0 else f"killed by signal {-status}"
        return how + (f": {said[-1]}" if said else "")

    def _kill(self):
        self.proc.kill()
        self.proc.wait()
        self._forget()

    def _forget(self):
        with contextlib.suppress(OSError):  # a pipe the child no longer reads
            self.requests.close()
        os.close(self.answers)
        self.log.close()
        self.proc = None

    def close(self):
        """End the child: its requests closed, it leaves its loop (killed if it does not)."""
        if self.proc is None:
            return
        with contextlib.suppress(OSError):
            self.requests.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._forget()


def _child(from_build, to_build, build):
    """The child's loop: sys.path, then one cell a line, each answered with its result. On
    Linux it is killed with the build (a build stopped by `build.py serve`, say) even in the
    middle of an endless cell."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != build:  # the build ended before the line above
        return
    requests = os.fdopen(from_build, "r", encoding="utf-8")
    answers = os.fdopen(to_build, "w", encoding="utf-8")
    sys.path[:], folders = json.loads(requests.readline())
    importlib.import_module("toymodels").__path__[:] = folders
    from sitebuild.authoring import browser
    from toymodels.page import cells

    answers.write("{}\n")
    answers.flush()
    for line in requests:
        request = json.loads(line)
        if request[0] == "call":
            module, _, name = request[1].partition(":")
            answer = {"value": getattr(importlib.import_module(module), name)(*request[2])}
        else:  # the browser's limits on what a cell's code reads (sitebuild/authoring/browser.py)
            with browser.traced():
                answer = cells.run(*request)
        # default=str: an exercise's check may give a message that is not text
        answers.write(json.dumps(answer, default=str) + "\n")
        answers.flush()


if __name__ == "__main__":
    _child(*map(int, sys.argv[1:4]))
