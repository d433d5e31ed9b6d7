// Boots Pyodide, numpy and the site's own Python modules, and returns a function that
// calls one Python function with JSON arguments. The standard library and numpy's modules come
// as bytecode the build compiled (sitebuild/fetched/bytecode.py), so no start compiles their
// source. Used inside worker.js (the benchmark also loads it on the page's thread, through a client
// of its own, to measure what the worker buys).

// A function's first call imports its code and loads its data, which stay for the page's life:
// then everything alive is moved out of the garbage collector's sight (gc.freeze), so a later
// full collection does not walk it. Under Pyodide a full collection walking it took 23 ms, in
// the middle of a reader's tap.
export const CALLER = `
import gc, importlib, json
_called = set()
def _mh_call(name, args_json):
    module, func = name.split(":")
    out = json.dumps(getattr(importlib.import_module(module), func)(*json.loads(args_json)))
    if name not in _called:
        _called.add(name)
        gc.collect()
        gc.freeze()
    return out
_mh_call
`;

async function fetchOk(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response;
}
const fetchText = async (url) => (await fetchOk(url)).text();

// Pyodide waits forever when its .wasm cannot be fetched, so look before loading.
async function checkRuntime(pyodideURL, stdLibURL) {
  const names = ["pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "pyodide-lock.json"];
  const urls = [...names.map((name) => new URL(name, pyodideURL)), stdLibURL];
  const look = (url) => {
    const name = url.pathname.split("/").pop();
    return fetch(url, { method: "HEAD" }).then(
      (r) => (r.ok ? null : `${name} answered ${r.status}`),
      () => `${name} could not be fetched`,
    );
  };
  const answers = await Promise.all(urls.map(look));
  const missing = answers.filter(Boolean);
  if (missing.length) throw new Error(`the Python runtime is incomplete (${missing.join(", ")})`);
}

export async function boot({ pyodideURL, pyURL, bytecodeURL }, progress) {
  progress(1, "the Python runtime");
  const stdLibURL = new URL("python_stdlib.zip", bytecodeURL);
  await checkRuntime(pyodideURL, stdLibURL);
  const { loadPyodide } = await import(new URL("pyodide.mjs", pyodideURL).href);
  const quiet = () => {};
  const options = { indexURL: String(pyodideURL), stdLibURL: String(stdLibURL) };
  const pyodide = await loadPyodide({ ...options, stdout: quiet, stderr: quiet });
  progress(2, "numpy");
  const failures = [];
  const errorCallback = (m) => failures.push(m);
  const numpyBytecode = fetchOk(new URL("numpy.zip", bytecodeURL)).then((r) => r.arrayBuffer());
  numpyBytecode.catch(() => {}); // awaited below, once numpy is in
  await pyodide.loadPackage("numpy", { messageCallback: quiet, errorCallback });
  if (failures.length) throw new Error(`numpy did not load: ${failures.join("; ")}`);
  // numpy's bytecode beside its sources, in the __pycache__ folders Python looks in
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  pyodide.unpackArchive(await numpyBytecode, "zip", { extractDir: sitePackages });
  progress(3, "the models");
  const home = "/home/pyodide/site-py";
  // the site's Python in one archive (one request, not one per file); a folder without it
  // (an older build's) is read file by file
  const bundle = await fetch(new URL("python.zip", pyURL));
  if (bundle.ok) {
    pyodide.unpackArchive(await bundle.arrayBuffer(), "zip", { extractDir: home });
  } else {
    const files = JSON.parse(await fetchText(new URL("files.json", pyURL)));
    for (const { path, hash } of files) {
      const text = await fetchText(new URL(`${path}?v=${hash}`, pyURL));
      pyodide.FS.mkdirTree(`${home}/${path.split("/").slice(0, -1).join("/")}`);
      pyodide.FS.writeFile(`${home}/${path}`, text);
    }
  }
  pyodide.runPython(`import sys; sys.path.insert(0, "${home}"); import numpy, toymodels`);
  const globals = pyodide.toPy({ url: String(pyURL) });
  pyodide.runPython("import os; os.environ['MANYHEADS_PY_URL'] = url", { globals });
  const callPython = pyodide.runPython(CALLER);
  const call = (fn, args) => JSON.parse(callPython(fn, JSON.stringify(args)));
  // whether Python can no longer be used: a JavaScript error thrown through its WebAssembly
  // (a reader's cell can do it: FS.createLazyFile of a missing file, read) is what Pyodide
  // calls a fatal error, after which its API throws and calls answer nothing
  call.dead = () => {
    try {
      return !pyodide.globals;
    } catch {
      return true;
    }
  };
  call.writeFile = (path, bytes) => {
    pyodide.FS.mkdirTree(path.split("/").slice(0, -1).join("/"));
    pyodide.FS.writeFile(path, bytes);
  };
  return call;
}

export function pythonError(err) {
  const text = String(err && err.message ? err.message : err);
  const lines = text.trim().split("\n");
  const last = lines[lines.length - 1];
  const match = /^(\w+(?:Error|Exception|Warning)?): ?(.*)$/.exec(last);
  const type = match ? match[1] : (err && err.name) || "Error";
  return { type, message: match ? match[2] : last, traceback: text };
}
