// A reader's own model file as the page hands it to Python (static/ownfile.js): URL fetched as
// a Blob, standing in for the File the reader chose, handed to the worker as it is (putFile:
// Python reads slices of it there, as it reads the reader's File); then CODE
// (bench/in_pyodide/own_file_page.py) run in that worker, its last expression returned
async ([url, code]) => {
  const py = await readyPython();
  const blob = await (await fetch(url)).blob();
  await py.putFile(blob);
  return { value: await runCell(py, code) };
}
