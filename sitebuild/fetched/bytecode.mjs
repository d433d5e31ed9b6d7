// Node's part of sitebuild/fetched/bytecode.py: `node bytecode.mjs RUNTIME OUT MODULE...` starts
// the pinned Pyodide of the folder RUNTIME with numpy, runs bytecode_in_pyodide.py inside it for
// MODULES and copies what that wrote (bytecode.py's FILES) into the folder OUT.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [runtime, out, ...modules] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(path.join(runtime, "pyodide.mjs")).href);
const say = (line) => process.stderr.write(`${line}\n`);
// a fixed hash seed: sets are marshalled in their iteration order
const pyodide = await loadPyodide({
  indexURL: `${path.resolve(runtime)}/`,
  env: { PYTHONHASHSEED: "0" },
  stdout: say,
  stderr: say,
});
await pyodide.loadPackage("numpy", { messageCallback: () => {}, errorCallback: say });
pyodide.runPython(fs.readFileSync(new URL("bytecode_in_pyodide.py", import.meta.url), "utf8"));
pyodide.FS.mkdirTree("/ahead");
const compileAhead = pyodide.globals.get("compile_ahead");
const compiled = compileAhead("/ahead", pyodide.toPy(modules));
for (const name of pyodide.FS.readdir("/ahead").filter((n) => n !== "." && n !== "..")) {
  fs.writeFileSync(path.join(out, name), pyodide.FS.readFile(`/ahead/${name}`));
}
say(`${compiled} modules compiled ahead`);
