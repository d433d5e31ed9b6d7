"""Run in Pyodide by bench/run.py (its part `live`), as a live cell, once the model is loaded:
the reader's own sentence TEXT in "Real heads" (its maps, labels and figure) 20 times, the
worker's wasm memory, and the matrix product the browser's forwards use, einsum against @, on
the model's shapes (ms)."""

import json
import time

import numpy as np
import pyodide_js

from toymodels.models.minilm import live
from toymodels.real_heads import figure as fig


def times(f, n):
    f()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        out.append((time.perf_counter() - t) * 1000)
    return out


def measure(text):
    def own():
        live._done.clear()  # worked out anew each time, not read from what was kept
        return fig.render({"sentence": "own", "own": text})

    tokens = len(live.tokens(text))
    runs = times(own, 20)
    rng = np.random.default_rng(0)
    matmul = {}
    for a, b in ((384, 384), (384, 1536), (1536, 384)):
        x, w = rng.standard_normal((tokens, a)), rng.standard_normal((b, a))
        matmul[f"{tokens}x{a} by {a}x{b}"] = {
            "@": float(np.median(times(lambda x=x, w=w: x @ w.T, 9))),
            "einsum": float(np.median(times(lambda x=x, w=w: np.einsum("ik,jk->ij", x, w), 9))),
        }
    heap = pyodide_js._module.HEAP8.length
    return json.dumps({"tokens": tokens, "runs": runs, "heap": heap, "matmul": matmul})
