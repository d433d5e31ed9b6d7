// The page's handle on Python: starts the worker, reports progress, and turns calls into
// promises matched to replies by id. restart() ends a worker stuck in a reader's endless
// loop and boots a fresh one, without reloading the page; a call that leaves Python unusable
// (worker.js: dead) restarts it too, and is rejected with `restarted` set and a message that
// says so.
// `generation` counts what may have changed what Python holds: every call but a figure's
// drawing (marked pure), every file put, every restart. An answer computed ahead of the
// reader (answers.js) is good only while the generation it was computed in lasts.

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

// A handle that refuses every call, where the browser cannot run the worker
function noPython(why) {
  const ready = Promise.reject(new Error(why));
  ready.catch(() => {});
  const off = () => Promise.reject(new Error("Python is off"));
  return { ready, call: off, put: off, putFile: off, restart: () => ready, generation: 0 };
}

// -> the page's handle on Python: {ready, call, put, putFile, restart, generation}
export function startPython(urls) {
  if (typeof WebAssembly !== "object" || typeof Worker !== "function") {
    return noPython("this browser has no WebAssembly or Web Workers");
  }
  return new PythonWorker(urls);
}

// The worker's boot: a promise settled by its "ready" or "failed" message, its error, or the
// timeout, and the blob: URL it starts from, revoked once the worker has loaded
class Boot {
  constructor() {
    this.ready = new Promise((resolve, reject) => Object.assign(this, { resolve, reject }));
    this.ready.catch(() => {});
    this.source = workerSource();
    const late = `Python did not start within ${TIMEOUT_MS / 1000} seconds`;
    this.timer = setTimeout(() => this.reject(new Error(late)), TIMEOUT_MS);
  }

  loaded() {
    if (!this.source) return;
    URL.revokeObjectURL(this.source);
    this.source = null;
  }

  // the worker's error, or its message of TYPE ("ready", "failed") with MESSAGE
  end(type, message) {
    this.loaded();
    clearTimeout(this.timer);
    if (type === "ready") this.resolve();
    else this.reject(new Error(message));
  }
}

class PythonWorker {
  #pending = new Map(); // id -> {resolve, reject, timing}: the calls not answered yet
  #nextId = 0;
  #worker = null;

  constructor({ pyodideURL, pyURL, bytecodeURL, onProgress }) {
    this.urls = { pyodideURL, pyURL, bytecodeURL };
    this.onProgress = onProgress;
    this.generation = 0;
    this.ready = this.#spawn();
  }

  // a worker booting Python -> the promise that it is ready
  #spawn() {
    const boot = new Boot();
    try {
      this.#worker = new Worker(boot.source, { type: "module" });
    } catch (err) {
      boot.end("failed", `the Python worker could not start (${err.message})`);
      return boot.ready;
    }
    this.#worker.onerror = (event) => {
      event.preventDefault();
      boot.end("failed", `the Python worker failed (${event.message || "it could not be loaded"})`);
    };
    this.#worker.onmessage = ({ data }) => {
      boot.loaded(); // its first message comes once worker.js and its imports have run
      if (data.type === "progress") this.onProgress?.(data.step, STEPS, data.label);
      else if (data.type === "ready" || data.type === "failed") boot.end(data.type, data.message);
      else if (this.#pending.has(data.id)) this.#answer(data);
    };
    const { pyodideURL, pyURL, bytecodeURL } = this.urls;
    this.#worker.postMessage({
      type: "init", pyodideURL: String(pyodideURL), pyURL: String(pyURL),
      bytecodeURL: String(bytecodeURL),
    });
    return boot.ready;
  }

  // the worker's reply DATA to a call or a file put: a call that left Python unusable (dead)
  // restarts it and is rejected saying so
  #answer(data) {
    const { resolve, reject, timing } = this.#pending.get(data.id);
    this.#pending.delete(data.id);
    if (timing) timing.ms = data.ms;
    if (data.dead) {
      this.restart();
      const message = `Python stopped working (${data.error.type}: ${data.error.message}) ` +
        "and was started again: what it held, such as the variables of every cell, is gone";
      reject(Object.assign(new PythonError(data.error), { message, restarted: true }));
    } else data.ok ? resolve(data.result) : reject(new PythonError(data.error));
  }

  // MESSAGE to the worker (TRANSFER: what it hands over) -> the promise of its reply
  #send(message, transfer = [], timing = null) {
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, timing });
      this.#worker.postMessage({ ...message, id }, transfer);
    });
  }

  // PURE: the call only reads what Python holds (a figure's render); TIMING.ms is set to the
  // milliseconds Python took, waits in the worker's queue left out
  call(fn, args, { pure = false, timing = null } = {}) {
    if (!pure) this.generation++;
    return this.#send({ type: "call", fn, args }, [], timing);
  }

  // BYTES (a Uint8Array, handed over, not copied) as the file PATH in Python's file system
  put(path, bytes) {
    this.generation++;
    return this.#send({ type: "file", path, bytes }, [bytes.buffer]);
  }

  // FILE (a File or Blob from the reader's disk) handed to the worker as it is: Python reads
  // slices of it there; nothing of it is read here
  putFile(file) {
    this.generation++;
    return this.#send({ type: "blob", file });
  }

  restart() {
    this.generation++;
    this.#worker.terminate();
    for (const { reject } of this.#pending.values()) reject(new Error("Python was stopped"));
    this.#pending.clear();
    this.ready = this.#spawn();
    return this.ready;
  }
}
