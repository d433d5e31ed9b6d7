"""SmolLM2 live under Pyodide 0.27.7: how long the page's numpy takes, in Node (the
site's runtime from the download cache, the same wasm numpy the browser runs; no page, no
worker, so this is the Python's own time).

`python bench/smollm2_live.py` repacks the GGUF into the cache if needed
(sitebuild/models/smollm2.py), then prints, as medians over REPEAT runs after one warm-up:

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

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from sitebuild.fetched import assets  # noqa: E402
from sitebuild.models import smollm2 as smollm2_recipe  # noqa: E402

REPEAT = int(os.environ.get("BENCH_REPEAT", 5))
# the shipped packages SmolLM2's code runs on, copied whole into Pyodide's file system
SHIPPED = sorted(
    p.relative_to(ROOT / "toymodels").as_posix()
    for folder in ("models", "page")
    for p in (ROOT / "toymodels" / folder).rglob("*.py")
)


def main():
    runtime = assets.runtime_dir()
    folder, manifest = smollm2_recipe.files()
    node = shutil.which("node")
    if node is None:
        sys.exit("node is not installed: this bench runs Pyodide in Node")
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.json"
        config.write_text(
            json.dumps(
                {
                    "runtime": str(runtime),
                    "wheel": assets.NUMPY_WHEEL,
                    "shipped": SHIPPED,
                    "src": str(ROOT / "toymodels"),
                    "folder": str(folder),
                    "weights": manifest["weights"]["file"],
                    "tokenizer": manifest["tokenizer"]["file"],
                    "script": str(BENCH / "in_pyodide" / "smollm2_live.py"),
                    "repeat": REPEAT,
                }
            )
        )
        driver = BENCH / "pages" / "smollm2-live.mjs"
        before = os.getloadavg()
        done = subprocess.run([node, str(driver), str(config)], stdout=subprocess.PIPE, text=True)
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
