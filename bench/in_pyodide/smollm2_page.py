"""Run in Pyodide by bench/run.py (its part `smollm2`), as a live cell, once SmolLM2's two files
are in the worker and warmed up (toymodels/models/smollm2/live.py): for each text, the first
layer's maps (a new run's first piece, which the page draws at once), all 30 layers' maps (its
270 heads), and one token written on with the KV cache (its greedy choice from the last row's
logits included), each the median of REPEAT runs, in ms; then the worker's WebAssembly memory
(bytes), with the model in and the texts' runs kept."""

import json
import statistics
import time

import pyodide_js

from toymodels.models.smollm2 import live


def measure(texts, repeat):
    llama, _ = live.model()
    out = {}
    for text in texts:
        ids, _ = live.encode(text)
        first, whole, written = [], [], []
        for _ in range(repeat + 1):  # the first round warms up
            r = live.Run(llama, ids)
            t0 = time.perf_counter()
            r.advance(budget=0.0)  # one layer
            t1 = time.perf_counter()
            r.finish()
            t2 = time.perf_counter()
            live.extend(r, live.choose(r))
            t3 = time.perf_counter()
            first.append((t1 - t0) * 1000)
            whole.append((t2 - t0) * 1000)
            written.append((t3 - t2) * 1000)
        out[str(len(ids))] = {
            "first_layer_ms": statistics.median(first[1:]),
            "all_maps_ms": statistics.median(whole[1:]),
            "written_token_ms": statistics.median(written[1:]),
        }
    return json.dumps({"texts": out, "heap": pyodide_js._module.HEAP8.length})
