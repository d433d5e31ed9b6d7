"""SmolLM2 live (issue 47) under Pyodide 0.27.7: how long the page's numpy takes, in Node (the
site's runtime from the download cache, the same wasm numpy the browser runs; no page, no
worker, so this is the Python's own time).

`python bench/smollm2_live.py` repacks the GGUF into the cache if needed
(sitebuild/smollm2live.py), then prints, as medians over REPEAT runs after one warm-up:

- reading the weight file and dequantising it (every layer's Q4_1 blocks; the Q8_0
  embedding), and building the model (keep: every layer kept in float32);
- a forward of 1, 8, 20 and 64 tokens (maps and every position's logits), and one token
  written on after 20 with the KV cache (last position's logits);
- `@` against `np.einsum` on the forward's products at 20 tokens, and on the logits of one
  token (no BLAS in Pyodide's numpy: the issue asks which is faster);

with the load average before and after.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitebuild import assets, smollm2live  # noqa: E402

REPEAT = int(os.environ.get("BENCH_REPEAT", 5))
SHIPPED = ("__init__.py", "llama.py", "quants.py", "bpe.py", "weights.py")

DRIVER = """
import { loadPyodide } from "%(runtime)s/pyodide.mjs";
import { readFileSync } from "node:fs";
const py = await loadPyodide({ indexURL: "%(runtime)s/" });
await py.loadPackage("%(runtime)s/%(wheel)s");
py.FS.mkdirTree("/w/toymodels/heads_that_copy");
py.FS.writeFile("/w/toymodels/__init__.py", "");
for (const f of %(shipped)s) {
  py.FS.writeFile("/w/toymodels/heads_that_copy/" + f, readFileSync("%(src)s/" + f));
}
py.FS.writeFile("/w/weights.bin", readFileSync("%(folder)s/%(weights)s"));
py.FS.writeFile("/w/tokenizer.json", readFileSync("%(folder)s/%(tokenizer)s"));
py.FS.writeFile("/w/manifest.json", readFileSync("%(folder)s/manifest.json"));
const out = await py.runPythonAsync(readFileSync("%(script)s", "utf8"));
console.log(out);
"""

SCRIPT = """
import json, sys, time
sys.path.insert(0, "/w")
import numpy as np
from toymodels.heads_that_copy import weights
from toymodels.heads_that_copy.llama import Cache

REPEAT = %(repeat)d
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

m = json.load(open("/w/manifest.json"))
t = time.perf_counter()
data = open("/w/weights.bin", "rb").read()
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
bpe = weights.tokenizer(open("/w/tokenizer.json", encoding="utf-8").read())
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
shapes = {"qkv": (20, 576, 960), "o": (20, 576, 576), "gate_up": (20, 576, 3072),
          "down": (20, 1536, 576), "logits 1 token": (1, 576, 49152),
          "logits 20 tokens": (20, 576, 49152)}
for name, (a, b, c) in shapes.items():
    x = rng.standard_normal((a, b), dtype=np.float32)
    w = rng.standard_normal((b, c), dtype=np.float32)
    out[f"{name} ({a}x{b} @ {b}x{c}): @ ms"] = median_ms(lambda: x @ w)
    out[f"{name} ({a}x{b} @ {b}x{c}): einsum ms"] = median_ms(lambda: np.einsum("ij,jk->ik", x, w))
    out[f"{name}: einsum(optimize=True) ms"] = median_ms(
        lambda: np.einsum("ij,jk->ik", x, w, optimize=True)
    )
q = rng.standard_normal((9, 20, 64), dtype=np.float32)
k = rng.standard_normal((9, 64, 20), dtype=np.float32)
out["scores (9x20x64 @ 9x64x20): @ ms"] = median_ms(lambda: q @ k)
out["scores: einsum ms"] = median_ms(lambda: np.einsum("hij,hjk->hik", q, k))
json.dumps(out)
"""


def main():
    runtime = assets.runtime_dir()
    folder, manifest = smollm2live.files()
    node = shutil.which("node")
    if node is None:
        sys.exit("node is not installed: this bench runs Pyodide in Node")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench.py"
        script.write_text(SCRIPT % {"repeat": REPEAT})
        driver = Path(tmp) / "driver.mjs"
        driver.write_text(
            DRIVER
            % {
                "runtime": runtime,
                "wheel": assets.NUMPY_WHEEL,
                "shipped": json.dumps(SHIPPED),
                "src": ROOT / "toymodels" / "heads_that_copy",
                "folder": folder,
                "weights": manifest["weights"]["file"],
                "tokenizer": manifest["tokenizer"]["file"],
                "script": script,
            }
        )
        before = os.getloadavg()
        done = subprocess.run([node, str(driver)], stdout=subprocess.PIPE, text=True)
        after = os.getloadavg()
    if done.returncode:
        sys.exit(f"node failed ({done.returncode}): {done.stdout[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    width = max(map(len, result))
    for k, v in result.items():
        print(f"{k:<{width}}  {v}")
    print(f"load average before {before[0]:.2f}, after {after[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
