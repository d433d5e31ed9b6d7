// Node driver of bench/run.py's part `ratio`: `node ratio-node.mjs PYRUNTIME_JS SITE PY BYTECODE`
// boots the built SITE's Python as `check --strict` does (sitebuild/authoring/sitepython.mjs), runs
// the Python on stdin and prints the value of its last expression, a string.
import fs from "node:fs";

import { bootSite } from "../../sitebuild/authoring/sitepython.mjs";

const [pyruntime, site, py, bytecode] = process.argv.slice(2);
const { pyodide } = await bootSite({ pyruntime, site, py, bytecode });
process.stdout.write(String(pyodide.runPython(fs.readFileSync(0, "utf8"))));
