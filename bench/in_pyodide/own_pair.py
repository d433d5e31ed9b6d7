"""Run in Pyodide by bench/run.py (its part `whathead`), as a live cell, once SmolLM2's two files
are in the worker and warmed up: "What a head does", Figure 3, on each pair of texts (medians
of REPEAT runs after one warm-up, in ms): the forward of both texts, kept whole (the traces);
then, with the forward done, the direct attribution of every head at the last token, and the
whole figure drawn (attribution, attention, HTML); one head patched at layer 1, 15 and 30, and
all nine heads of layer 1 (each one forward from that layer up)."""

import json
import statistics
import time

from toymodels.models.smollm2 import live as smollm2
from toymodels.what_a_head_does import live, own
from toymodels.what_a_head_does.patching import Patch


def ms(f):
    t = time.perf_counter()
    f()
    return (time.perf_counter() - t) * 1000


PATCHES = (
    ("L1H1", [(0, 0)]),
    ("L15H1", [(14, 0)]),
    ("L30H1", [(29, 0)]),
    ("L1", [(0, h) for h in range(9)]),
)


def one_round(clean, corrupt, a, b):
    """Each step once on a new pair -> {step: ms}."""
    ids, bad = smollm2.encode(clean)[0], smollm2.encode(corrupt)[0]
    ta, tb = live.candidate(a)[0], live.candidate(b)[0]
    live._pairs.clear()
    p = live.pair(ids, bad)
    out = {"forward": ms(p.finish)}
    out["attribution"] = ms(lambda: p.attribution(len(ids) - 1, ta, tb))
    out["figure"] = ms(lambda: own.render({"clean": clean, "corrupt": corrupt, "a": a, "b": b}))
    for name, heads in PATCHES:
        out[name] = ms(lambda heads=heads: Patch(*p.traces, heads).advance(1e9))
    return len(ids), out


def measure(pairs, repeat):
    out = {}
    for pair in pairs:
        rounds = [one_round(*pair) for _ in range(repeat + 1)][1:]  # the first warms up
        n = rounds[0][0]
        out[str(n)] = {k: statistics.median(r[k] for _, r in rounds) for k in rounds[0][1]}
    return json.dumps(out)
