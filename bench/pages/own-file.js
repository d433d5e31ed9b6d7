// A reader's own GGUF files in a Python of its own: each of FILES ([url, name]) fetched into the
// page (it stands in for the reader's disk) and put into Python's file system as /tmp/NAME;
// then CODE (bench/in_pyodide/own_file.py) run, its last expression returned
async ([files, code]) => {
  const py = await readyPython();
  for (const [url, name] of files) {
    await py.put("/tmp/" + name, new Uint8Array(await (await fetch(url)).arrayBuffer()));
  }
  return { value: await runCell(py, code) };
}
