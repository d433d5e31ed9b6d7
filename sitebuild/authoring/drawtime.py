"""`check --strict` times each live figure where the reader runs it: its first state's render in
the built site's own Python, Pyodide under Node (drawtime.mjs, booting as
templates/static/pyruntime.js does, sitepython.mjs), all figures in one Node process, which
boots while the check reads the built pages.

The build times every state in CPython (limits.SLOW_SECONDS), but Pyodide is not a constant
factor slower: each step of pure Python (a loop over words, a string built a piece at a time)
costs several times what it costs in CPython, a large matrix product more (Pyodide's numpy has
no OpenBLAS); the bench's section "CPython to Pyodide" measures each. So a figure quick in
CPython can keep a reader waiting on every tap. Each figure is called once to import its
module and read its data, then REPEAT times as a tap calls it; the best of those in processor
time (which a busy machine lengthens far less than the clock) is held to
limits.PYODIDE_SLOW_SECONDS, and named with CPython's best time for the same call and the
ratio. A figure over the budget, or one that raises only there, is a warning at its
`def render`. The answers are kept in the download cache under a name made of all they come
from, so a site whose Python and figures are unchanged costs no Pyodide start.
"""

import hashlib
import json
import os
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

from ..fetched import assets
from . import blame, limits

HERE = Path(__file__).parent
REPEAT = 3  # calls timed after the first, which imports the module and reads its data


def figures_of(renderers):
    """[(Drawing, its first state)] for each live figure of RENDERERS (pages.ChapterRenderer,
    rendered), each model and state once, whose module ships: one from a folder the toymodels
    package was extended by, outside ROOT/toymodels, is not in the site's Python."""
    out, seen = [], set()
    for renderer in renderers:
        shipped = (renderer.root / "toymodels").resolve()
        for fig in renderer.figures.values():
            key = (fig.model, json.dumps(fig.result["state"], sort_keys=True))
            source = Path(getattr(fig.module, "__file__", None) or "/").resolve()
            if not source.is_relative_to(shipped):
                continue
            if fig.live and fig.drawing is not None and key not in seen:
                seen.add(key)
                out.append((fig.drawing, fig.result["state"]))
    return out


def cpython_seconds(drawing, state, repeat=3):
    """The least processor time, in seconds, of REPEAT calls of the figure's render with STATE
    in this process (its module imported and its data read already, by the build); None if a
    call fails or overruns, which the build has reported. Its warnings the build noted."""
    best = None
    for _ in range(repeat):
        try:
            with limits.time_limit(limits.FIGURE_SECONDS), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                began = time.process_time()
                drawing.fn(dict(state), drawing.fid)
                took = time.process_time() - began
        except (Exception, limits.Overrun):
            return None
        best = took if best is None else min(best, took)
    return best


def site_python(root, site):
    """What sitepython.mjs takes to boot SITE's Python (built from ROOT): pyruntime.js, the
    site, and its folders of Python and bytecode."""
    py = next(site.glob("py/*/python.zip")).parent.relative_to(site).as_posix()
    compiled = next(site.glob("bytecode/*/numpy.zip")).parent.relative_to(site).as_posix()
    return [str(root / "templates" / "static" / "pyruntime.js"), str(site), py, compiled]


def start(root, site, figures):
    """Start timing FIGURES ([(Drawing, state)]) in the Python of SITE, built from ROOT, in a
    Node process that boots while the caller goes on; -> a function that waits for it and
    returns notes(...) of its answers. Figures already over limits.SLOW_SECONDS in CPython,
    which the build warns of, are not timed again. Raises RuntimeError if Node is missing, and
    the function does if it fails."""
    cpython = [cpython_seconds(d, s) for d, s in figures]
    timed = [
        (f, c)
        for f, c in zip(figures, cpython, strict=True)
        if c is not None and c <= limits.SLOW_SECONDS
    ]
    if not timed:
        return list
    jobs = [{"model": d.model, "state": s, "fid": d.fid} for (d, s), _ in timed]
    kept = _kept(root, site, jobs)
    if kept.is_file():
        answers = json.loads(kept.read_text(encoding="utf-8"))
        return lambda: notes(timed, answers)
    folder = tempfile.TemporaryDirectory()
    listed = Path(folder.name) / "jobs.json"
    listed.write_text(json.dumps(jobs), encoding="utf-8")
    command = ["node", str(HERE / "drawtime.mjs"), str(listed), *site_python(root, site)]
    # each call has at most the build's limit, several times over under Pyodide's slowness
    timeout = 60 + (REPEAT + 1) * limits.FIGURE_SECONDS * len(jobs)
    try:
        node = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "REPEAT": str(REPEAT)},
        )
    except FileNotFoundError:
        folder.cleanup()
        raise RuntimeError("timing the figures in Pyodide needs Node: install nodejs") from None

    def finish():
        try:
            out, err = node.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            node.kill()
            node.communicate()
            raise RuntimeError(
                f"timing the figures in Pyodide took more than {timeout} s"
            ) from None
        finally:
            folder.cleanup()
        if node.returncode:
            raise RuntimeError(f"timing the figures in Pyodide failed:\n{err.strip()}")
        answers = json.loads(out)
        kept.parent.mkdir(parents=True, exist_ok=True)
        part = kept.with_name(f"{kept.name}.{os.getpid()}")
        part.write_text(json.dumps(answers), encoding="utf-8")
        part.replace(kept)
        return notes(timed, answers)

    return finish


def _kept(root, site, jobs):
    """Where the answers for JOBS in SITE's Python are kept, in the download cache: named by
    everything they come from (the site's Python and data, the bytecode's content-addressed
    folder, the pinned runtime, the scripts that boot and call it, the jobs), so an unchanged
    site is not timed again, by the next check or by a test building the same figures."""
    h = hashlib.sha256(json.dumps([assets.PUBLISHED_SHA256, REPEAT, jobs]).encode())
    pyruntime, _, py, compiled = site_python(root, site)
    h.update(compiled.encode())
    for path in (
        site / py / "python.zip",
        site / py / "data.json",
        Path(pyruntime),
        HERE / "sitepython.mjs",
        HERE / "drawtime.mjs",
    ):
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return assets.cache_dir() / "drawtime" / f"{h.hexdigest()[:24]}.json"


def notes(timed, answers):
    """(file, line, message) for each figure of TIMED ([((Drawing, state), CPython's seconds)])
    whose render, by its answer from drawtime.mjs in ANSWERS, took more than
    limits.PYODIDE_SLOW_SECONDS of processor time at best in the reader's Python, or raised
    there."""
    out = []
    for ((drawing, state), here), got in zip(timed, answers, strict=True):
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
