"""`check --strict` times each live figure where the reader runs it: its first state's render in
the built site's own Python, Pyodide under Node (drawtime.mjs, booting as
templates/static/pyruntime.js does), all figures in one process started once.

The build times every state in CPython (limits.SLOW_SECONDS), but Pyodide is not a constant
factor slower: numpy's work runs at about the speed it has in CPython, while every step of
pure-Python code (a loop over words, a string built a piece at a time) is many times slower
(the bench's section "pyodide", its row "CPython to Pyodide", measures both). So a figure quick
in CPython can keep a reader waiting on every tap. Each figure is called once to import its
module and read its data, then REPEAT times as a tap calls it; the best of those, in processor
time (which a busy machine lengthens far less than the clock), is compared with
limits.PYODIDE_SLOW_SECONDS and named with CPython's best time for the same call and the ratio.
A figure over the budget, or one that raises only there, is a warning at its `def render`.
"""

import json
import os
import subprocess
import time
from pathlib import Path

from . import blame, limits

HERE = Path(__file__).parent
REPEAT = 3  # calls timed after the first, which imports the module and reads its data


def figures_of(renderers):
    """[(Drawing, its first state)] for each live figure of RENDERERS (pages.ChapterRenderer,
    rendered), each model and state once."""
    out, seen = [], set()
    for renderer in renderers:
        for fig in renderer.figures.values():
            key = (fig.model, json.dumps(fig.result["state"], sort_keys=True))
            if fig.live and fig.drawing is not None and key not in seen:
                seen.add(key)
                out.append((fig.drawing, fig.result["state"]))
    return out


def cpython_seconds(drawing, state, repeat=3):
    """The least processor time, in seconds, of REPEAT calls of the figure's render with STATE
    in this process (its module imported and its data read already, by the build)."""
    best = None
    for _ in range(repeat):
        with limits.time_limit(limits.FIGURE_SECONDS):
            began = time.process_time()
            drawing.fn(dict(state), drawing.fid)
            took = time.process_time() - began
        best = took if best is None else min(best, took)
    return best


def site_python(root, site):
    """What sitepython.mjs takes to boot SITE's Python (built from ROOT): pyruntime.js, the
    site, and its folders of Python and bytecode."""
    py = next(site.glob("py/*/python.zip")).parent.relative_to(site).as_posix()
    compiled = next(site.glob("bytecode/*/numpy.zip")).parent.relative_to(site).as_posix()
    return [str(root / "templates" / "static" / "pyruntime.js"), str(site), py, compiled]


def in_pyodide(root, site, jobs):
    """[{"calls": [{"wall", "cpu"} in ms, ...], "error"?}] for each job {model, state, fid},
    called 1 + REPEAT times in the Python of SITE, built from ROOT, under Node; raises
    RuntimeError if Node fails."""
    command = ["node", str(HERE / "drawtime.mjs"), *site_python(root, site)]
    # each call has at most the build's limit, several times over under Pyodide's slowness
    timeout = 60 + (REPEAT + 1) * limits.FIGURE_SECONDS * len(jobs)
    try:
        run = subprocess.run(
            command,
            input=json.dumps(jobs),
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "REPEAT": str(REPEAT)},
        )
    except FileNotFoundError:
        raise RuntimeError("timing the figures in Pyodide needs Node: install nodejs") from None
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timing the figures in Pyodide took more than {timeout} s") from None
    if run.returncode:
        raise RuntimeError(f"timing the figures in Pyodide failed:\n{run.stderr.strip()}")
    return json.loads(run.stdout)


def notes(root, site, figures):
    """(file, line, message) for each of FIGURES ([(Drawing, state)]) whose render, in the
    reader's Python, takes more than limits.PYODIDE_SLOW_SECONDS of processor time at best, or
    raises there; figures already over limits.SLOW_SECONDS in CPython, which the build warns
    of, are not timed again."""
    cpython = [cpython_seconds(d, s) for d, s in figures]
    timed = [(f, c) for f, c in zip(figures, cpython, strict=True) if c <= limits.SLOW_SECONDS]
    jobs = [{"model": d.model, "state": s, "fid": d.fid} for (d, s), _ in timed]
    out = []
    for ((drawing, state), here), got in zip(timed, in_pyodide(root, site, jobs), strict=True):
        at, figure = drawing.site(blame.defined_at(drawing.fn))
        given = f"given the state {json.dumps(state, ensure_ascii=False)} (its first view)"
        if got.get("error"):
            out.append(
                (
                    *at,
                    f"{figure} raised {got['error']} in the reader's Python (Pyodide, under "
                    f"Node), {given}, though it draws in CPython; the browser's Python holds "
                    "numpy, the standard library as Pyodide ships it and toymodels/, and nothing "
                    "else",
                )
            )
            continue
        best = min(c["cpu"] for c in got["calls"][1:]) / 1000
        if best <= limits.PYODIDE_SLOW_SECONDS:
            continue
        ratio = f"{best / here:.0f} times" if here > 0 else "many times"
        out.append(
            (
                *at,
                f"{figure} took {best * 1000:.0f} ms of processor time to draw in the reader's "
                f"Python (Pyodide, timed under Node: the best of {REPEAT} calls), {ratio} its "
                f"{here * 1000:.0f} ms in CPython, {given}: more than the "
                f"{limits.PYODIDE_SLOW_SECONDS} s a state may take, on every tap; pure Python "
                "runs several times slower in Pyodide than in CPython: replace loops over words "
                "or cells by numpy operations on whole arrays, or compute once and keep what "
                "every state needs",
            )
        )
    return out
