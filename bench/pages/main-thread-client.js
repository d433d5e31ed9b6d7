// Served in place of static/pyclient.js to run Pyodide on the page's own thread, to show what the
// worker buys; the site itself has no such switch, so no link can move a reader's Python off it.
import { boot, pythonError } from "./pyruntime.js";
export class PythonError extends Error {
  constructor({ type, message, traceback }) {
    super(`${type}: ${message}`);
    this.type = type;
    this.traceback = traceback;
  }
}
export function startPython({ pyodideURL, pyURL, bytecodeURL, onProgress }) {
  let callPython = null;
  const progress = (step, label) => onProgress?.(step, 3, label);
  const ready = boot({ pyodideURL, pyURL, bytecodeURL }, progress).then((call) => {
    callPython = (fn, args) => {
      try {
        return Promise.resolve(call(fn, args));
      } catch (err) {
        return Promise.reject(new PythonError(pythonError(err)));
      }
    };
  });
  ready.catch(() => {});
  return { ready, call: (fn, args) => callPython(fn, args), restart: () => ready };
}
