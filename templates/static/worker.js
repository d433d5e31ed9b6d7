// Runs Pyodide off the main thread. Messages in: {type:"init", pyodideURL, pyURL, bytecodeURL} and
// {type:"call", id, fn:"toymodels.mod:func", args:[...]} and {type:"file", id, path, bytes} (a file
// for Python's file system, e.g. SmolLM2's) and {type:"blob", id, file} (the reader's own model
// file, a File from their disk, held as manyheadsFile for Python to read slices of with
// FileReaderSync: toymodels/models/ownfile.py). Messages out: progress, ready,
// failed, and {id, ok, result | error} for each call, with ms, Python's time, when it answered.
// Python errors come back as data; an error after which Python can no longer be used (Pyodide's
// fatal error) comes with dead: true, and the page starts a new worker.

import { allowOrigin } from "./netguard.js";
import { boot, pythonError } from "./pyruntime.js";

let callPython = null;

self.onmessage = async ({ data }) => {
  if (data.type === "init") {
    try {
      allowOrigin(data.pyodideURL); // the official CDN, when the site was built to use it
      const progress = (step, label) => self.postMessage({ type: "progress", step, label });
      callPython = await boot(data, progress);
      self.postMessage({ type: "ready" });
    } catch (err) {
      self.postMessage({ type: "failed", message: String(err && err.message ? err.message : err) });
    }
    return;
  }
  if (data.type === "file") {
    try {
      if (!callPython) throw new Error("Python is not ready");
      callPython.writeFile(data.path, data.bytes);
      self.postMessage({ id: data.id, ok: true, result: data.bytes.length });
    } catch (err) {
      const dead = callPython?.dead();
      self.postMessage({ id: data.id, ok: false, error: pythonError(err), dead });
    }
    return;
  }
  if (data.type === "blob") {
    self.manyheadsFile = data.file;
    self.postMessage({ id: data.id, ok: true, result: data.file.size });
    return;
  }
  if (data.type === "call") {
    if (!callPython) {
      const error = { type: "NotReady", message: "Python is not ready", traceback: "" };
      self.postMessage({ id: data.id, ok: false, error });
      return;
    }
    try {
      const t0 = performance.now();
      const result = callPython(data.fn, data.args);
      self.postMessage({ id: data.id, ok: true, result, ms: performance.now() - t0 });
    } catch (err) {
      const dead = callPython.dead();
      self.postMessage({ id: data.id, ok: false, error: pythonError(err), dead });
    }
  }
};
