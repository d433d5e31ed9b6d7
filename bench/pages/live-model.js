// The reader's own sentence ("Real heads") in a Python of its own: the model file fetched once
// (so the HTTP cache is warm), then fetched again, handed to Python and warmed up (load to
// ready, ms); then CODE (bench/in_pyodide/own_sentence.py) run, its last expression returned
async ([url, code]) => {
  const py = await readyPython();
  await (await fetch(url)).arrayBuffer(); // the HTTP cache is warm from here on
  const t0 = performance.now();
  const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
  await py.put("/home/pyodide/models/" + url.split("/").pop(), bytes);
  await py.call("toymodels.models.minilm.live:warm", []);
  const ready = performance.now() - t0;
  return { ready, value: await runCell(py, code) };
}
