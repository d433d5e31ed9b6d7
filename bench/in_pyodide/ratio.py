"""Run by bench/run.py (its part `ratio`) in CPython, in Pyodide under Node (as `check --strict`
times figures, sitebuild/authoring/drawtime.py) and in Pyodide in Chromium: the same work in each,
so that the ratios say how much slower the reader's Python is than the build's, by kind of work.
Each is the best of REPEAT runs after one, in ms (the best: the least disturbed by other work
on the machine)."""

import functools
import json
import time

import numpy as np

from toymodels.many_heads import figure as many_heads
from toymodels.models.charmodel import model as cm
from toymodels.one_character import figure as char_figure

REPEAT = 15
TEXT = ("the queen. the queen. " * 3)[:64]


def python_loop():
    """Pure Python: arithmetic on ints, a step at a time."""
    total = 0
    for i in range(200_000):
        total += i * i % 7
    return total


def python_markup():
    """Pure Python as a figure writes it: a 64 x 64 grid's markup, one cell at a time."""
    cells = []
    for i in range(64):
        for j in range(64):
            share = (i * 31 + j * 17) % 100 / 100
            cells.append(f'<rect x="{j}" y="{i}" class="s{int(share * 9)}"><title>{share:.0%}')
    return "".join(cells)


def numpy_product():
    """numpy alone: a 256 x 256 matrix product, then a softmax over its rows."""
    a = np.linspace(-1, 1, 256 * 256).reshape(256, 256)
    s = a @ a.T
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@functools.cache
def reference():
    return cm.load("reference")[:2]


def char_forward():
    """A numpy-heavy figure's model: the character model's forward pass over 64 characters,
    every intermediate kept, as "One character at a time" computes it."""
    params, cfg = reference()
    return cm.forward(params, cfg, cm.encode(TEXT), keep=True)


def char_state():
    """A numpy-heavy figure state: "One character at a time"'s figure for 64 characters."""
    return char_figure.render({"text": TEXT})


def heads_state():
    """A figure state of small arrays and much markup: "Many heads"' figure, its word 5."""
    return many_heads.render({"word": "5"})


WORK = (python_loop, python_markup, numpy_product, char_forward, char_state, heads_state)


def best_ms(f):
    f()
    times = []
    for _ in range(REPEAT):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return round(min(times) * 1000, 3)


def measure():
    return json.dumps({"runs": REPEAT, **{f.__name__: best_ms(f) for f in WORK}})
