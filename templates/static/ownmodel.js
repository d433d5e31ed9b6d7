// The reader's own sentence in "Real heads": the model's file (named by the figure's form,
// data-own-file, in the site's models/ folder) is fetched only when the reader presses the
// load button, with a progress bar in bytes, kept in a cache of its own for later and offline
// visits, and handed to the Python worker's file system; then the figure draws again. No maths
// here: Python (toymodels/real_heads/live.py) does all of it.
// The file must be the one the build recorded (data-own-bytes, data-own-sha256): a copy that
// is not (cut short, damaged, or a network's login page kept in its place) is never used nor
// kept; a damaged kept copy is dropped and the reader told, and the load button fetches it
// again. The cache is named by the course's address, as the offline copies are (sw.js), so
// two courses on one origin keep their own copies.

const SITE = new URL("../", import.meta.url).href;
const CACHE = `mh-model ${SITE}`;
const HOME = "/home/pyodide/models/";
const SAFE = /^[\w.-]+$/;

function modelOf(form) {
  const file = form && form.dataset.ownFile;
  if (!file || !SAFE.test(file)) return null;
  const url = new URL(`models/${file}`, SITE).href;
  const bytes = Number(form.dataset.ownBytes) || 0;
  return { file, url, bytes, sha256: form.dataset.ownSha256 || "" };
}

async function sha256(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// whether BYTES are the model the build recorded; without Web Crypto (a page on plain http
// from another computer) only the size can be checked
async function isTheModel(model, bytes) {
  if (bytes.length !== model.bytes) return false;
  if (!globalThis.crypto?.subtle) return true;
  return (await sha256(bytes)) === model.sha256;
}

async function openCache() {
  if (!("caches" in self)) return null;
  try {
    return await caches.open(CACHE);
  } catch {
    return null; // a cache the browser refuses (private mode, file://) only means no copy
  }
}

// the kept copy: {bytes} when it is the model, {damaged: true} (and dropped) when it is not
async function fromCache(model) {
  const cache = await openCache();
  try {
    const hit = cache && (await cache.match(model.url));
    if (!hit) return {};
    const bytes = new Uint8Array(await hit.arrayBuffer());
    if (await isTheModel(model, bytes)) return { bytes };
    await cache.delete(model.url);
    console.warn(`Many Heads: the kept copy of ${model.file} is not the file this site was built ` +
      "with; it was dropped and is fetched again when the model is loaded");
    return { damaged: true };
  } catch {
    return {};
  }
}

async function keep(model, bytes) {
  const cache = await openCache();
  if (!cache) return;
  try {
    for (const old of await cache.keys()) {
      if (old.url !== model.url) await cache.delete(old); // this course's older model
    }
    const headers = { "Content-Type": "application/octet-stream" };
    await cache.put(model.url, new Response(bytes, { headers }));
  } catch {
    // no room: the next visit downloads again
  }
}

async function download(model, onBytes) {
  const response = await fetch(model.url, { cache: "no-cache" });
  if (!response.ok) throw new Error(`the model file answered ${response.status}`);
  const reader = response.body.getReader();
  const parts = [];
  let got = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    got += value.length;
    onBytes(got);
  }
  const bytes = new Uint8Array(got);
  let at = 0;
  for (const part of parts) { bytes.set(part, at); at += part.length; }
  if (!(await isTheModel(model, bytes))) {
    throw new Error("the file that came is not the model this site was built with " +
      "(cut short, or a network's page in its place)");
  }
  return bytes;
}

async function install(python, file, bytes) {
  await python.ready;
  await python.put(HOME + file, bytes);
  await python.call("toymodels.real_heads.live:warm", []);
}

export function setupOwnModel(python) {
  let installed = null; // the file now in the worker
  let damaged = false; // a kept copy was dropped: the next download says so

  document.addEventListener("click", async (e) => {
    const button = e.target.closest("[data-own-load]");
    const form = button && button.closest("form");
    const model = modelOf(form);
    const figure = button && button.closest("figure[data-figure]");
    if (!model || !figure || button.disabled) return;
    button.disabled = true;
    const box = button.parentElement;
    const bar = box.querySelector("[data-own-progress]");
    const status = box.querySelector("[data-own-status]");
    const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
    try {
      const kept = await fromCache(model);
      damaged ||= Boolean(kept.damaged);
      let bytes = kept.bytes;
      if (!bytes) {
        bar.hidden = false;
        const again = damaged
          ? "The kept copy of the model was damaged; downloading it again"
          : "Downloading the model";
        bytes = await download(model, (got) => {
          bar.value = got;
          status.textContent = `${again}: ${mb(got)} of ${mb(model.bytes)}`;
        });
        damaged = false;
        await keep(model, bytes);
      }
      status.textContent = "Starting the model…";
      await install(python, model.file, bytes);
      installed = model.file;
      figure.dispatchEvent(new CustomEvent("mh:set", { detail: {} }));
    } catch (err) {
      status.textContent = `The model did not load: ${err.message}. Try again.`;
      button.disabled = false;
    }
  });

  // A later visit: a model kept by an earlier one goes into the worker before the figures
  // draw their state from the URL, with no download.
  async function restore() {
    const model = modelOf(document.querySelector("form[data-own-file]"));
    if (!model || installed === model.file) return;
    const kept = await fromCache(model);
    damaged ||= Boolean(kept.damaged);
    if (!kept.bytes) return;
    try {
      await install(python, model.file, kept.bytes);
      installed = model.file;
    } catch {
      // the figure offers the load button again
    }
  }
  return { restore };
}
