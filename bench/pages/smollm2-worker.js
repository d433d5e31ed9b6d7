// SmolLM2 ("Heads that copy") in a Python of its own: the two files read from the page's model
// cache (ownmodel.js kept them), handed to Python and warmed up; then CODE
// (bench/in_pyodide/smollm2_page.py) run, its last expression returned; also how long Web
// Crypto takes to check the weight file's sha256, as ownmodel.js does on each visit (ms)
async ([urls, code]) => {
  const py = await readyPython();
  const cache = await caches.open("mh-model " + new URL("./", location.href).href);
  const files = [];
  for (const url of urls) files.push(new Uint8Array(await (await cache.match(url)).arrayBuffer()));
  const t0 = performance.now();
  await crypto.subtle.digest("SHA-256", files[0]);
  const sha256 = performance.now() - t0;
  for (const [i, url] of urls.entries()) {
    await py.put("/home/pyodide/models/" + url.split("/").pop(), files[i]);
  }
  await py.call("toymodels.models.smollm2.live:warm", []);
  return { sha256, value: await runCell(py, code) };
}
