"""Run by bench/smollm2_live.py in Pyodide under Node: the timings of SmolLM2 live's numpy.
REPEAT is set by the driver (bench/pages/smollm2-live.mjs); the last value is the JSON printed."""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, "/w")
import numpy as np  # noqa: E402

from toymodels.models.smollm2 import weights  # noqa: E402
from toymodels.models.smollm2.llama import Cache  # noqa: E402

REPEAT = int(REPEAT)  # noqa: F821  (set by bench/pages/smollm2-live.mjs)
out = {}


def median_ms(f, n=REPEAT):
    print(len(out), "measured", file=sys.stderr, flush=True)  # progress
    f()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(1000 * (time.perf_counter() - t))
    return round(sorted(times)[len(times) // 2], 1)


m = json.loads(Path("/w/manifest.json").read_text())
t = time.perf_counter()
data = Path("/w/weights.bin").read_bytes()
out["read file ms"] = round(1000 * (time.perf_counter() - t), 1)
blocks = weights.Blocks(m, data)
layers = [x["name"] for x in m["tensors"] if x["name"].startswith("blk.")]
out["dequantise 30 layers (Q4_1 + F32) ms"] = median_ms(
    lambda: [blocks.tensor(n) for n in layers], 3
)
out["dequantise embedding (Q8_0) ms"] = median_ms(lambda: blocks.tensor("token_embd.weight"), 3)
t = time.perf_counter()
net = weights.model(m, data)
out["build the model (keep) ms"] = round(1000 * (time.perf_counter() - t), 1)
t = time.perf_counter()
bpe = weights.tokenizer(Path("/w/tokenizer.json").read_text(encoding="utf-8"))
bpe.encode("warm up")
out["tokenizer ready ms"] = round(1000 * (time.perf_counter() - t), 1)
ids = bpe.encode("Elinor Dashwood walked to the village to post a letter. " * 8)[:64]
for T in (1, 8, 20, 64):
    out[f"forward {T} tokens ms"] = median_ms(lambda T=T: net.forward(ids[:T]))
    out[f"forward {T} tokens, maps only ms"] = median_ms(
        lambda T=T: net.forward(ids[:T], logits=None)
    )


def write_on():
    c = Cache(net.n_layer)
    net.forward(ids[:20], cache=c, logits=None)
    t = time.perf_counter()
    net.forward(ids[20:21], cache=c, logits="last")
    return 1000 * (time.perf_counter() - t)


write_on()
times = sorted(write_on() for _ in range(REPEAT))
out["write 1 token after 20 (cache, last logits) ms"] = round(times[REPEAT // 2], 1)

rng = np.random.default_rng(0)
shapes = {
    "qkv": (20, 576, 960),
    "o": (20, 576, 576),
    "gate_up": (20, 576, 3072),
    "down": (20, 1536, 576),
    "logits 1 token": (1, 576, 49152),
    "logits 20 tokens": (20, 576, 49152),
}
for name, (a, b, c) in shapes.items():
    x = rng.standard_normal((a, b), dtype=np.float32)
    w = rng.standard_normal((b, c), dtype=np.float32)
    out[f"{name} ({a}x{b} @ {b}x{c}): @ ms"] = median_ms(lambda x=x, w=w: x @ w)
    out[f"{name} ({a}x{b} @ {b}x{c}): einsum ms"] = median_ms(
        lambda x=x, w=w: np.einsum("ij,jk->ik", x, w)
    )
    out[f"{name}: einsum(optimize=True) ms"] = median_ms(
        lambda x=x, w=w: np.einsum("ij,jk->ik", x, w, optimize=True)
    )
q = rng.standard_normal((9, 20, 64), dtype=np.float32)
k = rng.standard_normal((9, 64, 20), dtype=np.float32)
out["scores (9x20x64 @ 9x64x20): @ ms"] = median_ms(lambda: q @ k)
out["scores: einsum ms"] = median_ms(lambda: np.einsum("hij,hjk->hik", q, k))
json.dumps(out)
