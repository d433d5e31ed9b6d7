// The page's handle on Python: starts the worker, reports progress, and turns calls into
// promises matched to replies by id. restart() ends a worker stuck in a reader's endless
// loop and boots a fresh one, without reloading the page; a call that leaves Python unusable
// (worker.js: dead) restarts it too, and is rejected with `restarted` set and a message that
// says so.
// `generation` counts what may have changed what Python holds: every call but a figure's
// drawing (marked pure), every file put, every restart. An answer computed ahead of the
// reader (figures.js) is good only while the generation it was computed in lasts.

const STEPS = 3;
const TIMEOUT_MS = 90000;

export class PythonError extends Error {
  constructor({ type, message, traceback }) {
    super(`${type}: ${message}`);
    this.type = type;
    this.traceback = traceback;
  }
}

// The worker starts from a blob: URL holding one line, an import of worker.js. A worker from
// a local URL inherits the page's Content-Security-Policy, the <meta> one included, so Python
// is held to the page's own rules (its origin only, no eval) even on a host that sends no
// headers; a worker started from worker.js's own URL would take its policy from worker.js's
// response, and a plain static host sends none. netguard.js, which worker.js imports first,
// is the second wall. Each start has a blob of its own, revoked once the worker has loaded.
function workerSource() {
  const script = new URL("./worker.js", import.meta.url).href;
  const blob = new Blob([`import ${JSON.stringify(script)};\n`], { type: "text/javascript" });
  return URL.createObjectURL(blob);
}

export function startPython({ pyodideURL, pyURL, bytecodeURL, onProgress }) {
  if (typeof WebAssembly !== "object" || typeof Worker !== "function") {
    const ready = Promise.reject(new Error("this browser has no WebAssembly or Web Workers"));
    ready.catch(() => {});
    const off = () => Promise.reject(new Error("Python is off"));
    return { ready, call: off, put: off, restart: () => ready, generation: 0 };
  }
  const pending = new Map();
  let nextId = 0;
  let worker = null;
  const handle = { ready: null, call, put, restart, generation: 0 };

  function spawn() {
    let settle;
    const ready = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    ready.catch(() => {});
    const source = workerSource();
    let revoked = false;
    const loaded = () => { if (!revoked) { revoked = true; URL.revokeObjectURL(source); } };
    try {
      worker = new Worker(source, { type: "module" });
    } catch (err) {
      loaded();
      settle.reject(new Error(`the Python worker could not start (${err.message})`));
      return ready;
    }
    const late = `Python did not start within ${TIMEOUT_MS / 1000} seconds`;
    const timer = setTimeout(() => settle.reject(new Error(late)), TIMEOUT_MS);
    worker.onerror = (event) => {
      loaded();
      event.preventDefault();
      const why = event.message || "it could not be loaded";
      settle.reject(new Error(`the Python worker failed (${why})`));
    };
    worker.onmessage = ({ data }) => {
      loaded(); // its first message comes once worker.js and its imports have run
      if (data.type === "progress") onProgress?.(data.step, STEPS, data.label);
      else if (data.type === "ready") {
        clearTimeout(timer);
        settle.resolve();
      } else if (data.type === "failed") {
        clearTimeout(timer);
        settle.reject(new Error(data.message));
      } else if (pending.has(data.id)) {
        const { resolve, reject, timing } = pending.get(data.id);
        pending.delete(data.id);
        if (timing) timing.ms = data.ms;
        if (data.dead) {
          restart();
          const message = `Python stopped working (${data.error.type}: ${data.error.message}) ` +
            "and was started again: what it held, such as the variables of every cell, is gone";
          reject(Object.assign(new PythonError(data.error), { message, restarted: true }));
        } else data.ok ? resolve(data.result) : reject(new PythonError(data.error));
      }
    };
    worker.postMessage({
      type: "init", pyodideURL: String(pyodideURL), pyURL: String(pyURL),
      bytecodeURL: String(bytecodeURL),
    });
    return ready;
  }

  // PURE: the call only reads what Python holds (a figure's render); TIMING.ms is set to the
  // milliseconds Python took, waits in the worker's queue left out
  function call(fn, args, { pure = false, timing = null } = {}) {
    if (!pure) handle.generation++;
    const id = ++nextId;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, timing });
      worker.postMessage({ type: "call", id, fn, args });
    });
  }

  // BYTES (a Uint8Array, handed over, not copied) as the file PATH in Python's file system
  function put(path, bytes) {
    handle.generation++;
    const id = ++nextId;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ type: "file", id, path, bytes }, [bytes.buffer]);
    });
  }

  function restart() {
    handle.generation++;
    worker.terminate();
    for (const { reject } of pending.values()) reject(new Error("Python was stopped"));
    pending.clear();
    handle.ready = spawn();
    return handle.ready;
  }

  handle.ready = spawn();
  return handle;
}
