"""Run in Pyodide by bench/run.py (its part `pyodide`), as a live cell: on TEXT, the character
model's forward pass with every intermediate kept, everything "One character at a time" computes
for it (lab.look) and its whole figure's HTML; each the median ms of repeated runs after one."""

import json
import time

from toymodels.models.charmodel import model as cm
from toymodels.one_character import figure as fig
from toymodels.one_character import lab


def median_ms(f, n):
    f()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return round(sorted(times)[n // 2] * 1000, 2)


def measure(text):
    params, cfg, _ = cm.load("reference")
    x = cm.encode(text)
    forward = median_ms(lambda: cm.forward(params, cfg, x, keep=True), 21)
    params, cfg = lab.checkpoint(lab.DEFAULT_RUN, lab.steps(lab.DEFAULT_RUN)[-1])
    look = median_ms(lambda: lab.look(params, cfg, text, len(text) - 1, 1, 0), 21)
    render = median_ms(lambda: fig.render({"text": text}), 11)
    return json.dumps({"forward": forward, "look": look, "render": render})
