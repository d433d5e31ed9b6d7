// The reader's own sentence in "Real heads": the model's file (named by the figure's form,
// data-own-file, in the site's models/ folder) is fetched only when the reader presses the
// load button, with a progress bar in bytes, kept in a cache of its own for later and offline
// visits, and handed to the Python worker's file system; then the figure draws again. No maths
// here: Python (toymodels/real_heads/live.py) does all of it.

const CACHE = "mh-model";
const HOME = "/home/pyodide/models/";
const SAFE = /^[\w.-]+$/;

function fileOf(form) {
  const file = form && form.dataset.ownFile;
  return file && SAFE.test(file) ? file : null;
}

function urlOf(file) {
  return new URL(`../models/${file}`, import.meta.url).href;
}

async function fromCache(url) {
  if (!("caches" in self)) return null;
  try {
    const hit = await (await caches.open(CACHE)).match(url);
    return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
  } catch {
    return null; // a cache the browser refuses (private mode, file://) only means no copy
  }
}

async function keep(url, bytes) {
  if (!("caches" in self)) return;
  try {
    const cache = await caches.open(CACHE);
    for (const old of await cache.keys()) if (old.url !== url) await cache.delete(old); // an older build's model
    await cache.put(url, new Response(bytes, { headers: { "Content-Type": "application/octet-stream" } }));
  } catch {
    // no room or no cache: the next visit downloads again
  }
}

async function download(url, total, onBytes) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`the model file answered ${response.status}`);
  const reader = response.body.getReader();
  const parts = [];
  let got = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    got += value.length;
    onBytes(got, total);
  }
  const bytes = new Uint8Array(got);
  let at = 0;
  for (const part of parts) { bytes.set(part, at); at += part.length; }
  return bytes;
}

async function install(python, file, bytes) {
  await python.ready;
  await python.put(HOME + file, bytes);
  await python.call("toymodels.real_heads.live:warm", []);
}

export function setupOwnModel(python) {
  let installed = null; // the file now in the worker

  document.addEventListener("click", async (e) => {
    const button = e.target.closest("[data-own-load]");
    const form = button && button.closest("form");
    const file = fileOf(form);
    const figure = button && button.closest("figure[data-figure]");
    if (!file || !figure || button.disabled) return;
    button.disabled = true;
    const box = button.parentElement;
    const bar = box.querySelector("[data-own-progress]");
    const status = box.querySelector("[data-own-status]");
    const total = Number(form.dataset.ownBytes) || 0;
    const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
    try {
      const url = urlOf(file);
      let bytes = await fromCache(url);
      if (!bytes) {
        bar.hidden = false;
        bytes = await download(url, total, (got) => {
          bar.value = got;
          status.textContent = `Downloading the model: ${mb(got)} of ${mb(total)}`;
        });
        await keep(url, bytes);
      }
      status.textContent = "Starting the model…";
      await install(python, file, bytes);
      installed = file;
      figure.dispatchEvent(new CustomEvent("mh:set", { detail: {} }));
    } catch (err) {
      status.textContent = `The model did not load: ${err.message}. Try again.`;
      button.disabled = false;
    }
  });

  // A later visit: a model kept by an earlier one goes into the worker before the figures
  // draw their state from the URL, with no download.
  async function restore() {
    const file = fileOf(document.querySelector("form[data-own-file]"));
    if (!file || installed === file) return;
    const bytes = await fromCache(urlOf(file));
    if (!bytes) return;
    try {
      await install(python, file, bytes);
      installed = file;
    } catch {
      // the figure offers the load button again
    }
  }
  return { restore };
}
