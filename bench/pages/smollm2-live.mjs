// Node driver of bench/smollm2_live.py: Pyodide from the download cache, the shipped models'
// and kernel's files and SmolLM2's repacked weights in Pyodide's file system, then the bench's
// Python; prints its JSON. The one argument is the path of a JSON file of paths (written by
// bench/smollm2_live.py).
import { readFileSync } from "node:fs";

const cfg = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { loadPyodide } = await import(cfg.runtime + "/pyodide.mjs");
const py = await loadPyodide({ indexURL: cfg.runtime + "/" });
await py.loadPackage(cfg.runtime + "/" + cfg.wheel);
py.FS.mkdirTree("/w/toymodels");
py.FS.writeFile("/w/toymodels/__init__.py", "");
for (const f of cfg.shipped) {
  py.FS.mkdirTree("/w/toymodels/" + f.slice(0, f.lastIndexOf("/")));
  py.FS.writeFile("/w/toymodels/" + f, readFileSync(cfg.src + "/" + f));
}
py.FS.writeFile("/w/weights.bin", readFileSync(cfg.folder + "/" + cfg.weights));
py.FS.writeFile("/w/tokenizer.json", readFileSync(cfg.folder + "/" + cfg.tokenizer));
py.FS.writeFile("/w/manifest.json", readFileSync(cfg.folder + "/manifest.json"));
py.globals.set("REPEAT", cfg.repeat);
console.log(await py.runPythonAsync(readFileSync(cfg.script, "utf8")));
