"""Run by bench/run.py (its part `ownfile`) as a live cell in Pyodide, and as a script in
CPython (numpy on one thread, as Pyodide's is): a reader's own GGUF file, from the file in the
Python's file system to its first maps (toymodels/models/gguffile/), and the card of files the
page refuses (toymodels/models/card.py).

For the model file PATH, each step timed once, in ms, as the page goes: the card read from the
header in pieces (card.read on the open file); the whole file read; the model loaded as the card
says (its weights in float32 or its blocks kept); the tokenizer made from the card's metadata
and TEXT tokenized; the first layer's maps; every layer's maps. Then, for each refused file
(name, path, the size the page would be told), the card's time and its refusal's reason. Then
the memory: the worker's WebAssembly memory in Pyodide, the peak resident size in CPython."""

import json
import os
import sys
import time


def measure(path, text, refused):
    from toymodels.models import card
    from toymodels.models.gguffile import model as gf
    from toymodels.models.gguffile import tokenizer as tk

    out = {}
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        c = card.read(f, file_size=os.path.getsize(path))
    t1 = time.perf_counter()
    with open(path, "rb") as f:
        data = f.read()
    t2 = time.perf_counter()
    model = gf.load(data, keeps=c.keeps)
    t3 = time.perf_counter()
    tok = tk.tokenizer(c.fields)
    ids = tk.for_model(tok, text)
    t4 = time.perf_counter()
    steps = model.run(ids)
    next(steps)
    t5 = time.perf_counter()
    for _ in steps:
        pass
    t6 = time.perf_counter()
    out["file"] = {
        "bytes": len(data),
        "keeps": c.keeps,
        "parameters": c.parameters,
        "tokens": len(ids),
        "card_ms": (t1 - t0) * 1000,
        "read_ms": (t2 - t1) * 1000,
        "load_ms": (t3 - t2) * 1000,
        "tokenizer_ms": (t4 - t3) * 1000,
        "first_layer_ms": (t5 - t4) * 1000,
        "all_maps_ms": (t6 - t4) * 1000,
        "to_first_maps_ms": (t5 - t0) * 1000,
    }
    out["refused"] = {}
    for name, rpath, size in refused:
        t0 = time.perf_counter()
        try:
            with open(rpath, "rb") as f:
                card.read(f, file_size=size)
            reason = None
        except card.Refused as e:
            reason = e.reason
        out["refused"][name] = {"card_ms": (time.perf_counter() - t0) * 1000, "reason": reason}
    if sys.platform == "emscripten":
        import pyodide_js

        out["memory_bytes"] = pyodide_js._module.HEAP8.length
    else:
        import resource

        out["memory_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return json.dumps(out)
