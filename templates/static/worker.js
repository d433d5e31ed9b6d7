// Runs Pyodide off the main thread. Messages in: {type:"init", pyodideURL, pyURL} and
// {type:"call", id, fn:"toymodels.mod:func", args:[...]}. Messages out: progress, ready,
// failed, and {id, ok, result | error} for each call. Python errors come back as data.

import { allowOrigin } from "./netguard.js";

let callPython = null;

const CALLER = `
import importlib, json
def _mh_call(name, args_json):
    module, func = name.split(":")
    return json.dumps(getattr(importlib.import_module(module), func)(*json.loads(args_json)))
_mh_call
`;

function progress(step, label) {
  self.postMessage({ type: "progress", step, label });
}

async function fetchText(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.text();
}

// Pyodide waits forever when its .wasm cannot be fetched, so look before loading.
async function checkRuntime(pyodideURL) {
  const names = ["pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];
  const answers = await Promise.all(names.map((name) => fetch(new URL(name, pyodideURL), { method: "HEAD" }).then(
    (r) => (r.ok ? null : `${name} answered ${r.status}`),
    () => `${name} could not be fetched`,
  )));
  const missing = answers.filter(Boolean);
  if (missing.length) throw new Error(`the Python runtime is incomplete (${missing.join(", ")})`);
}

async function boot({ pyodideURL, pyURL }) {
  allowOrigin(pyodideURL); // the official CDN, when the site was built to use it
  progress(1, "the Python runtime");
  await checkRuntime(pyodideURL);
  const { loadPyodide } = await import(new URL("pyodide.mjs", pyodideURL).href);
  const pyodide = await loadPyodide({ indexURL: pyodideURL, stdout: () => {}, stderr: () => {} });
  progress(2, "numpy");
  const failures = [];
  await pyodide.loadPackage("numpy", { messageCallback: () => {}, errorCallback: (m) => failures.push(m) });
  if (failures.length) throw new Error(`numpy did not load: ${failures.join("; ")}`);
  progress(3, "the models");
  const files = JSON.parse(await fetchText(new URL("files.json", pyURL)));
  const home = "/home/pyodide/site-py";
  for (const { path, hash } of files) {
    const text = await fetchText(new URL(`${path}?v=${hash}`, pyURL));
    pyodide.FS.mkdirTree(`${home}/${path.split("/").slice(0, -1).join("/")}`);
    pyodide.FS.writeFile(`${home}/${path}`, text);
  }
  pyodide.runPython(`import sys; sys.path.insert(0, "${home}"); import numpy, toymodels`);
  pyodide.runPython("import os; os.environ['MANYHEADS_PY_URL'] = url", { globals: pyodide.toPy({ url: String(pyURL) }) });
  callPython = pyodide.runPython(CALLER);
}

function pythonError(err) {
  const text = String(err && err.message ? err.message : err);
  const lines = text.trim().split("\n");
  const last = lines[lines.length - 1];
  const match = /^(\w+(?:Error|Exception|Warning)?): ?(.*)$/.exec(last);
  return { type: match ? match[1] : (err && err.name) || "Error", message: match ? match[2] : last, traceback: text };
}

self.onmessage = async ({ data }) => {
  if (data.type === "init") {
    try {
      await boot(data);
      self.postMessage({ type: "ready" });
    } catch (err) {
      self.postMessage({ type: "failed", message: String(err && err.message ? err.message : err) });
    }
    return;
  }
  if (data.type === "call") {
    if (!callPython) {
      self.postMessage({ id: data.id, ok: false, error: { type: "NotReady", message: "Python is not ready", traceback: "" } });
      return;
    }
    try {
      const out = callPython(data.fn, JSON.stringify(data.args));
      self.postMessage({ id: data.id, ok: true, result: JSON.parse(out) });
    } catch (err) {
      self.postMessage({ id: data.id, ok: false, error: pythonError(err) });
    }
  }
};
