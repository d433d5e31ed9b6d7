"""Run by bench/run.py (its part `why`) as a live cell in Pyodide, and as a script in CPython
(numpy on one thread, as Pyodide's is): "Why a head looks there"'s Figure 3 on the reader's
own text in SmolLM2 (toymodels/why_a_head_looks/own.py), its steps as the figure calls them.

SmolLM2's two files are in FOLDER (live.use). For TEXT, REPEAT times after one warm-up round,
in ms:

- the lazy forward (smollm2.Split(..., lazy=True)) in the pieces the figure computes it in,
  a first piece of one part then pieces of smollm2.PIECE_S each (`advance`, as own.render
  calls it): each run's longest piece, which is what a tap made meanwhile waits for at most,
  and the pieces' count; and the same forward a part per piece (budget 0): its longest part
  (a slice of one product's rows, or a layer's attention), the smallest piece there can be,
  and the parts' count;
- on a Split whose forward is complete and whose head has not been split yet, the figure's
  default head (the export's strongest induction head) from the last token to the key it
  gives most: its split as the figure makes it (Split.totals, then kit.score_split), the
  first time (every earlier layer's writes and the layer's reads made) and again for another
  key (its totals kept: a tap on a key);
- the knockout of the top key-side component (the figure's first "Take out" button) from the
  keys, Split.knockout.

The medians, the longest of every run, and what was measured (tokens, head, component)."""

import json
import statistics
import time


def measure(folder, text, repeat):
    from toymodels.models.smollm2 import live
    from toymodels.page import kit
    from toymodels.why_a_head_looks import exported
    from toymodels.why_a_head_looks import smollm2 as s2

    live.use(folder)
    llama, _ = live.model()
    ids, _ = live.encode(text)
    top = exported.heads()[0]
    layer, head = top["layer"], top["head"]
    i = len(ids) - 1
    words = [live.piece(t) for t in ids]
    runs = {k: [] for k in ("piece", "pieces", "part", "split", "again", "knockout")}
    for n in range(repeat + 1):  # the first round warms up
        s = s2.Split(llama, ids, lazy=True)
        pieces = []
        while not s.complete:
            t0 = time.perf_counter()
            s.advance(s2.PIECE_S if s.ran else 0.0)
            pieces.append(time.perf_counter() - t0)
        parts = []
        s = s2.Split(llama, ids, lazy=True)
        while not s.complete:
            t0 = time.perf_counter()
            s.advance(0.0)
            parts.append(time.perf_counter() - t0)
        j = int(s.attention(layer, head, i).argmax())
        t0 = time.perf_counter()
        names, _, key_side = s.totals(layer, head, i)
        kit.score_split(s, layer, head, i, j, words=words)
        t1 = time.perf_counter()
        other = 0 if j else 1
        s.totals(layer, head, i)
        kit.score_split(s, layer, head, i, other, words=words)
        t2 = time.perf_counter()
        lift = key_side[:, j] - key_side.mean(-1)
        gone = names[max(range(len(names)), key=lambda c: (lift[c], -c))]
        t3 = time.perf_counter()
        s.knockout(layer, head, i, gone, "keys")
        t4 = time.perf_counter()
        if n:
            runs["piece"].append(max(pieces))
            runs["pieces"].append(len(pieces))
            runs["part"].append(max(parts))
            runs["split"].append(t1 - t0)
            runs["again"].append(t2 - t1)
            runs["knockout"].append(t4 - t3)
    out = {
        "tokens": len(ids),
        "head": exported.slug(top["name"]),
        "removed": gone.replace("\u00a0", " "),
        "repeat": repeat,
        "budget_ms": s2.PIECE_S * 1000,
        "pieces": max(runs.pop("pieces")),
        "parts": s.ran,
    }
    for key, times in runs.items():
        out[f"{key}_ms"] = statistics.median(times) * 1000
        out[f"{key}_max_ms"] = max(times) * 1000
    return json.dumps(out)
