// The page's handle on Python: starts the worker, reports progress, and turns calls into
// promises matched to replies by id. restart() ends a worker stuck in a reader's endless
// loop and boots a fresh one, without reloading the page.

const STEPS = 3;
const TIMEOUT_MS = 90000;

export class PythonError extends Error {
  constructor({ type, message, traceback }) {
    super(`${type}: ${message}`);
    this.type = type;
    this.traceback = traceback;
  }
}

// Pyodide on the page's own thread: only for the benchmark's side-by-side measurement.
function startOnMainThread({ pyodideURL, pyURL, onProgress }) {
  let callPython = null;
  const ready = import("./pyruntime.js").then(async (runtime) => {
    const call = await runtime.boot({ pyodideURL, pyURL }, (step, label) => onProgress?.(step, STEPS, label));
    callPython = (fn, args) => {
      try {
        return Promise.resolve(call(fn, args));
      } catch (err) {
        return Promise.reject(new PythonError(runtime.pythonError(err)));
      }
    };
  });
  ready.catch(() => {});
  return { ready, call: (fn, args) => callPython(fn, args), restart: () => ready };
}

export function startPython({ pyodideURL, pyURL, onProgress, mainThread = false }) {
  if (mainThread) return startOnMainThread({ pyodideURL, pyURL, onProgress });
  if (typeof WebAssembly !== "object" || typeof Worker !== "function") {
    const ready = Promise.reject(new Error("this browser has no WebAssembly or Web Workers"));
    ready.catch(() => {});
    return { ready, call: () => Promise.reject(new Error("Python is off")), restart: () => ready };
  }
  const pending = new Map();
  let nextId = 0;
  let worker = null;
  const handle = { ready: null, call, restart };

  function spawn() {
    let settle;
    const ready = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    ready.catch(() => {});
    try {
      worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
    } catch (err) {
      settle.reject(new Error(`the Python worker could not start (${err.message})`));
      return ready;
    }
    const timer = setTimeout(() => settle.reject(new Error(`Python did not start within ${TIMEOUT_MS / 1000} seconds`)), TIMEOUT_MS);
    worker.onerror = (event) => {
      event.preventDefault();
      settle.reject(new Error(`the Python worker failed (${event.message || "it could not be loaded"})`));
    };
    worker.onmessage = ({ data }) => {
      if (data.type === "progress") onProgress?.(data.step, STEPS, data.label);
      else if (data.type === "ready") { clearTimeout(timer); settle.resolve(); }
      else if (data.type === "failed") { clearTimeout(timer); settle.reject(new Error(data.message)); }
      else if (pending.has(data.id)) {
        const { resolve, reject } = pending.get(data.id);
        pending.delete(data.id);
        data.ok ? resolve(data.result) : reject(new PythonError(data.error));
      }
    };
    worker.postMessage({ type: "init", pyodideURL: String(pyodideURL), pyURL: String(pyURL) });
    return ready;
  }

  function call(fn, args) {
    const id = ++nextId;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ type: "call", id, fn, args });
    });
  }

  function restart() {
    worker.terminate();
    for (const { reject } of pending.values()) reject(new Error("Python was stopped"));
    pending.clear();
    handle.ready = spawn();
    return handle.ready;
  }

  handle.ready = spawn();
  return handle;
}
