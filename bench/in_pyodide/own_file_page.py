"""Run by bench/run.py (its part `ownfile`) as a live cell in Pyodide's worker, and as a
script in CPython (numpy on one thread, as Pyodide's is): a reader's own GGUF file opened the
way the page opens it (toymodels/models/ownfile.py), from the file to its first maps.

WHERE is the file: in the page, its size, the File (a Blob here) being the worker's
`manyheadsFile` already, as static/ownfile.js hands it over, read in slices with
FileReaderSync; in CPython, its path. Each step timed once, in ms: the card from the header
(open_source, which also asks for the card's memory); the tensors read a step at a time
(load_step, BUDGET_S each, as the page calls it), the last step building the model and
running the card's checks (timed apart); TEXT tokenized; the first layer's maps; every
layer's maps; the last token's logits. A file the page refuses gives its card's time and
reason only. Then the memory: the worker's WebAssembly memory in Pyodide (it only grows, so
this is its peak, and at least what the card asked for; and before the file was opened, the
card's BASE_MB), the peak resident size in CPython.
"""

import json
import sys
import time
from pathlib import Path


def measure(where, text):
    from toymodels.models import ownfile

    timed = {}
    checks = ownfile.checks

    def timed_checks():
        t = time.perf_counter()
        out = checks()
        timed["checks_ms"] = (time.perf_counter() - t) * 1000
        return out

    ownfile.checks = timed_checks  # what the last load_step calls once the model is built
    base = None
    if sys.platform == "emscripten":
        import pyodide_js

        base = pyodide_js._module.HEAP8.length  # the worker's memory before the file
    try:
        if sys.platform == "emscripten":
            source = ownfile.BlobSource(int(where))
        else:
            source = ownfile.PathSource(Path(where))
        t0 = time.perf_counter()
        card = ownfile.open_source(source)
        t1 = time.perf_counter()
        out = {"bytes": source.size, "card_ms": (t1 - t0) * 1000}
        if not card["ok"]:
            out["refused"] = card["reason"]
            out["read_bytes"] = source.read_bytes
            return json.dumps(out)
        steps = 0
        while not ownfile.load_step()["ready"]:
            steps += 1
        t2 = time.perf_counter()
        model = ownfile.model()[0]
        ids = ownfile.encode(text)[0]
        t3 = time.perf_counter()
        layers = model.run(ids)
        next(layers)
        t4 = time.perf_counter()
        *_, (_, _, x) = layers
        t5 = time.perf_counter()
        model.logits(x[-1:])
        t6 = time.perf_counter()
    finally:
        ownfile.checks = checks
    out |= {
        "keeps": ownfile.keeps(),
        "plan": list(ownfile._state["card"].plan),
        "layers": ownfile._state["card"].layers,
        "planned_bytes": ownfile._state["card"].memory_bytes,
        "base_bytes": base,
        "parameters": ownfile._state["card"].parameters,
        "quants": ownfile._state["card"].quants,
        "tokens": len(ids),
        "steps": steps + 1,
        "load_ms": (t2 - t1) * 1000,
        "checks_ms": timed["checks_ms"],
        "tokenizer_ms": (t3 - t2) * 1000,
        "first_layer_ms": (t4 - t3) * 1000,
        "all_maps_ms": (t5 - t3) * 1000,
        "logits_ms": (t6 - t5) * 1000,
        "to_first_maps_ms": (t4 - t0) * 1000,
    }
    ownfile.close()
    if sys.platform == "emscripten":
        import pyodide_js

        out["memory_bytes"] = pyodide_js._module.HEAP8.length
    else:
        import resource

        out["memory_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return json.dumps(out)
