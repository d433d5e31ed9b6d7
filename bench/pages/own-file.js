// Files in a Python of its own: each of FILES ([url, name]) fetched into the page and put into
// Python's file system as /tmp/NAME (a reader's own GGUF files, the page standing in for the
// reader's disk; or SmolLM2's two files, as the worker holds them once the reader loaded them);
// then CODE (bench/in_pyodide/own_file.py or why.py) run, its last expression returned
async ([files, code]) => {
  const py = await readyPython();
  for (const [url, name] of files) {
    await py.put("/tmp/" + name, new Uint8Array(await (await fetch(url)).arrayBuffer()));
  }
  return { value: await runCell(py, code) };
}
