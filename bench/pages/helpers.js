// Helpers in scope of every script of bench/pages/ that page.evaluate runs (bench/common.py's
// page_function puts them there). Not a module: the page runs them as one expression.

// ms from a reader's action ACT on figure FIG to the first paint after its answer is drawn
async function timeToPaint(fig, act) {
  const drawn = new Promise((r) => fig.addEventListener("mh:drawn", r, { once: true }));
  const t0 = performance.now();
  act();
  let timer;
  const late = new Promise((_, no) => {
    timer = setTimeout(
      () => no(new Error(`#${fig.id} never redrew within 60 s of a tap (no mh:drawn)`)),
      60_000,
    );
  });
  await Promise.race([drawn, late]).finally(() => clearTimeout(timer));
  // after the next paint
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return performance.now() - t0;
}

// a Python of its own, started as the site starts it (static/pyclient.js: a worker; the runtime
// and the bytecode the page's <meta>s name), once ready
async function readyPython() {
  const { startPython } = await import(new URL("static/pyclient.js", location.href).href);
  const meta = (name) =>
    new URL(document.querySelector(`meta[name="${name}"]`).content, document.baseURI);
  const py = startPython({
    pyodideURL: meta("mh-pyodide"),
    pyURL: new URL("py/", location.href),
    bytecodeURL: meta("mh-bytecode"),
  });
  await py.ready;
  return py;
}

// Python's answer to CODE (the value of its last expression, as repr), run as a live cell is
async function runCell(py, code) {
  const out = await py.call("toymodels.page.cells:run", [code, "bench", null]);
  if (out.error) throw new Error(out.error);
  return out.value;
}
