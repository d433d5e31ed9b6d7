// A built site's Python in Node, booted as the reader's browser boots it
// (templates/static/pyruntime.js): the pinned Pyodide of SITE/pyodide/ with the standard library
// and numpy's bytecode of SITE/BYTECODE, the site's Python of SITE/PY (its python.zip), and
// data files read by toymodels/page/data.py's synchronous request, answered here from the
// site's files as a static host serves them. Pyodide under Node takes paths where the browser
// gives it URLs, so the steps are pyruntime.js's, with its CALLER, which every call goes through.
// Used by sitebuild/authoring/drawtime.mjs (`check --strict`) and the bench
// (bench/pages/ratio-node.mjs).

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

globalThis.XMLHttpRequest = class {
  open(method, url) {
    this.url = url;
  }
  send() {
    let bytes = null;
    try {
      bytes = fs.readFileSync(fileURLToPath(this.url));
    } catch {}
    this.status = bytes ? 200 : 404;
    this.response = bytes
      ? bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
      : new ArrayBuffer(0);
  }
};

const bytesOf = (file) => new Uint8Array(fs.readFileSync(file));

// -> {pyodide, call}: call(name, args) calls the function NAME ("module:function") with ARGS
// through JSON, as the page's worker does
export async function bootSite({ pyruntime, site, py, bytecode }) {
  const at = (folder, name = "") => path.join(site, folder, name);
  const { loadPyodide } = await import(pathToFileURL(at("pyodide", "pyodide.mjs")).href);
  const quiet = () => {};
  const pyodide = await loadPyodide({
    indexURL: at("pyodide/"),
    stdLibURL: at(bytecode, "python_stdlib.zip"),
    stdout: quiet,
    stderr: quiet,
  });
  const failures = [];
  const errorCallback = (m) => failures.push(m);
  await pyodide.loadPackage("numpy", { messageCallback: quiet, errorCallback });
  if (failures.length) throw new Error(`numpy did not load: ${failures.join("; ")}`);
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  pyodide.unpackArchive(bytesOf(at(bytecode, "numpy.zip")), "zip", { extractDir: sitePackages });
  const home = "/home/pyodide/site-py";
  pyodide.unpackArchive(bytesOf(at(py, "python.zip")), "zip", { extractDir: home });
  pyodide.runPython(`import sys; sys.path.insert(0, "${home}"); import numpy, toymodels`);
  const url = pathToFileURL(`${at(py)}/`).href;
  const globals = pyodide.toPy({ url });
  pyodide.runPython("import os; os.environ['MANYHEADS_PY_URL'] = url", { globals });
  const source = Buffer.from(fs.readFileSync(pyruntime)).toString("base64");
  const { CALLER } = await import(`data:text/javascript;base64,${source}`);
  const callPython = pyodide.runPython(CALLER);
  const call = (fn, args) => JSON.parse(callPython(fn, JSON.stringify(args)));
  return { pyodide, call };
}
