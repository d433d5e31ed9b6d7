// A real model for the reader's own text ("Real heads", "Heads that copy"): its files (named by
// the figure's form, data-own-files, in the site's models/ folder) are fetched only when the
// reader presses the load button, with a progress bar over all their bytes, kept in a cache of
// their own for later and offline visits, and handed to the Python worker's file system; then
// the function data-own-warm names reads them, and the figures using the model draw again.
// No maths here: Python does all of it.
// Each file must be the one the build recorded (data-own-bytes, data-own-sha256, one per file,
// in the same order): a copy that is not (cut short, damaged, or a network's login page kept
// in its place) is never used nor kept; a damaged kept copy is dropped and the reader told, and
// the load button fetches it again. Before any byte is fetched, the worker's memory must be
// able to grow to what the model needs (data-own-memory, in MB): where the browser cannot give
// it (a phone), the reader is told so and nothing is downloaded.
// A model has one state on the page, shared by every figure that uses it: each of its load boxes
// (whichever figure drew it, and however often it is drawn again) says the same thing, and a box
// of a model kept by an earlier visit says it is starting that copy and offers no button.
// The cache is named by the course's address, as the offline copies are (sw.js), so two
// courses on one origin keep their own copies; keeping a model's files drops only the older
// versions of those same files (the name less its -HASH part), never another model's.

const SITE = new URL("../", import.meta.url).href;
const CACHE = `mh-model ${SITE}`;
const HOME = "/home/pyodide/models/";
const SAFE = /^[\w.-]+$/;
const WARM = /^[\w.]+:\w+$/;
const ROOM = "toymodels.page.memory:room";
const DIGEST = "toymodels.page.digest:sha256";
const WAITING = "Python is still starting: the download begins as soon as it is ready…";
const RESTORING = "Starting the model from the copy kept in your browser…";

// the model a form names: {key, files: [{file, url, bytes, sha256}], bytes, warm, memory}
function modelOf(form) {
  const list = (name) => (form?.dataset[name] || "").split(/\s+/).filter(Boolean);
  const names = list("ownFiles");
  const sizes = list("ownBytes");
  const hashes = list("ownSha256");
  const warm = form?.dataset.ownWarm || "";
  if (!names.length || !names.every((f) => SAFE.test(f)) || !WARM.test(warm)) return null;
  if (sizes.length !== names.length || hashes.length !== names.length) return null;
  const files = names.map((file, i) => ({
    file,
    url: new URL(`models/${file}`, SITE).href,
    bytes: Number(sizes[i]) || 0,
    sha256: hashes[i],
  }));
  const bytes = files.reduce((n, f) => n + f.bytes, 0);
  const memory = Number(form.dataset.ownMemory) || 0;
  return { key: `${warm} ${names.join(" ")}`, files, bytes, warm, memory };
}

// a file's name without its content hash: what its older versions share
const stem = (name) => name.replace(/-[0-9a-f]{16}(\.\w+)$/, "$1");

let checks = 0; // the copies put into the worker to be checked, each under a name of its own

// the sha256 of BYTES (hex): by Web Crypto, or where the page has none (plain http from another
// computer) by Python's hashlib in the worker, on a copy of the bytes (the worker keeps none)
async function sha256(bytes, python) {
  if (!globalThis.crypto?.subtle) {
    await python.ready;
    const copy = `/tmp/mh-check-${++checks}`;
    await python.put(copy, bytes.slice());
    return python.call(DIGEST, [copy]);
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// whether BYTES are the file the build recorded: its size, then its sha256
async function isTheFile(f, bytes, python) {
  return bytes.length === f.bytes && (await sha256(bytes, python)) === f.sha256;
}

async function openCache() {
  if (!("caches" in self)) return null;
  try {
    return await caches.open(CACHE);
  } catch {
    return null; // a cache the browser refuses (private mode, file://) only means no copy
  }
}

// the kept copy of F: {bytes} when it is the file, {damaged: true} (and dropped) when it is not
async function fromCache(f, python) {
  const cache = await openCache();
  try {
    const hit = cache && (await cache.match(f.url));
    if (!hit) return {};
    const bytes = new Uint8Array(await hit.arrayBuffer());
    if (await isTheFile(f, bytes, python)) return { bytes };
    await cache.delete(f.url);
    console.warn(`Many Heads: the kept copy of ${f.file} is not the file this site was built ` +
      "with; it was dropped and is fetched again when the model is loaded");
    return { damaged: true };
  } catch {
    return {};
  }
}

async function keep(f, bytes) {
  const cache = await openCache();
  if (!cache) return;
  try {
    for (const old of await cache.keys()) {
      const name = new URL(old.url).pathname.split("/").pop();
      if (old.url !== f.url && stem(name) === stem(f.file)) await cache.delete(old);
    }
    const headers = { "Content-Type": "application/octet-stream" };
    await cache.put(f.url, new Response(bytes, { headers }));
  } catch {
    // no room: the next visit downloads again
  }
}

async function download(f, python, onBytes) {
  const response = await fetch(f.url, { cache: "no-cache" });
  if (!response.ok) throw new Error(`${f.file} answered ${response.status}`);
  const reader = response.body.getReader();
  const bytes = new Uint8Array(f.bytes);
  let got = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (got + value.length > bytes.length) throw new Error(`${f.file} is longer than it should be`);
    bytes.set(value, got);
    got += value.length;
    onBytes(value.length);
  }
  if (!(await isTheFile(f, bytes.subarray(0, got), python))) {
    throw new Error(`${f.file} that came is not the file this site was built with ` +
      "(cut short, or a network's page in its place)");
  }
  return bytes;
}

const mb = (n) => `${Math.round(n / 1e6)} MB`;

// why the worker cannot hold the model, or "" when it can: the device's memory as the browser
// states it (navigator.deviceMemory, in GB, where there is one), then whether the worker's
// memory actually grows to what the model needs (toymodels/page/memory.py)
async function noRoom(python, model) {
  if (!model.memory) return "";
  const device = navigator.deviceMemory;
  const needs = `This model needs about ${model.memory} MB of memory for its computations`;
  const keep = "nothing was downloaded; the curated texts still work.";
  if (device && device * 1024 < 2 * model.memory) {
    return `${needs}, and this device has about ${device * 1024} MB in all: ${keep}`;
  }
  if (!(await python.call(ROOM, [model.memory]))) {
    return `${needs}, more than this browser gives a page here (phones often give less): ${keep}`;
  }
  return "";
}

async function install(python, model, files) {
  await python.ready;
  for (const { file, bytes } of files) await python.put(HOME + file, bytes);
  await python.call(model.warm, []);
}

// A model has one state on the page, shared by every load box that names it, in any figure:
// what its status line says, its progress bar ([value, max], or null: hidden) and its load button
// ("offered", "waiting": shown but disabled, "refused": disabled for good, "hidden": a kept copy
// is being started, so there is nothing to press). A figure's redraw puts Python's empty box in
// again: the state is painted back into it before the browser shows it
const OFFERED = { text: "", bar: null, button: "offered" };
const loadBoxes = () => document.querySelectorAll("form[data-own-files]");

// the state S in the load box FORM
function paint(form, s) {
  const status = form.querySelector("[data-own-status]");
  const bar = form.querySelector("[data-own-progress]");
  const button = form.querySelector("[data-own-load]");
  if (status && status.textContent !== s.text) status.textContent = s.text;
  if (bar && bar.hidden !== !s.bar) bar.hidden = !s.bar;
  if (bar && s.bar) [bar.max, bar.value] = [s.bar[1], s.bar[0]];
  if (button && button.hidden !== (s.button === "hidden")) button.hidden = s.button === "hidden";
  if (button) button.disabled = s.button !== "offered";
}

// every figure with a load box for MODEL draws again, now that the model is in the worker
function redraw(model) {
  for (const form of formsOf(model)) {
    const figure = form.closest("figure[data-figure]");
    if (figure) figure.dispatchEvent(new CustomEvent("mh:set", { detail: {} }));
  }
}

const formsOf = (model) => [...loadBoxes()].filter((form) => modelOf(form)?.key === model.key);

// The load button loads its model; the models kept by an earlier visit are looked for as the
// page opens, and every load box drawn, now or later, shows its model's state. -> {restore,
// started}, for main.js: before the figures draw their state from the URL, and after
export function setupOwnModel(python) {
  const models = new OwnModels(python);
  document.addEventListener("click", (e) => models.onClick(e));
  models.lookInCache();
  const watch = new MutationObserver(() => models.drawnAgain());
  watch.observe(document.body, { childList: true, subtree: true });
  return { restore: () => models.restore(), started: () => models.started() };
}

// The models named by the page's load boxes, and what the worker and the cache hold of them
class OwnModels {
  constructor(python) {
    this.python = python;
    this.installed = new Set(); // the keys of the models now in the worker
    this.damaged = new Set(); // models of which a kept copy was dropped: the download says so
    this.busy = new Map(); // key -> the promise of the model's load under way
    this.states = new Map(); // key -> {text, bar, button}
    this.keptURLs = new Set(); // the URLs the model cache held when the page opened
    this.tried = new Set(); // the models whose kept copies were looked for
    this.restoring = false; // a load box drawn from now on has its kept model restored
    this.looked = null; // the promise of lookInCache()
  }

  // MODEL's state changed by CHANGE, and shown in every one of its load boxes
  show(model, change) {
    const s = { ...(this.states.get(model.key) || OFFERED), ...change };
    this.states.set(model.key, s);
    for (const form of formsOf(model)) paint(form, s);
  }

  // whether the model cache holds a copy of each of MODEL's files (not read yet, nor checked)
  allKept(model) {
    return model.files.every((f) => this.keptURLs.has(f.url));
  }

  // the kept copies of MODEL's files, {file: bytes} (those missing or damaged left out)
  async kept(model) {
    const out = new Map();
    for (const f of model.files) {
      const copy = await fromCache(f, this.python);
      if (copy.damaged) this.damaged.add(model.key);
      if (copy.bytes) out.set(f.file, copy.bytes);
    }
    return out;
  }

  // MODEL into the worker, from its kept copies and the files downloaded now
  async load(model) {
    const start = performance.now();
    if (!document.documentElement.classList.contains("py-ready")) {
      this.show(model, { text: WAITING });
    }
    await this.python.ready;
    const refused = await noRoom(this.python, model);
    if (refused) throw Object.assign(new Error(refused), { refused: true });
    const have = await this.kept(model);
    await this.downloadMissing(model, have);
    this.show(model, { text: "Starting the model…" });
    const files = model.files.map((f) => ({ file: f.file, bytes: have.get(f.file) }));
    await install(this.python, model, files);
    this.installed.add(model.key);
    this.show(model, { button: "hidden" }); // until its figures draw again, without the box
    performance.measure("mh-own-model-loaded", { start, detail: model.key }); // for the bench
  }

  // MODEL's files that HAVE (file -> bytes) lacks, downloaded into it with a progress bar over
  // all their bytes, and kept
  async downloadMissing(model, have) {
    const missing = model.files.filter((f) => !have.has(f.file));
    if (!missing.length) return;
    const total = missing.reduce((n, f) => n + f.bytes, 0);
    const what = this.damaged.has(model.key)
      ? "The kept copy of the model was damaged; downloading it again"
      : "Downloading the model";
    let got = 0;
    this.show(model, { text: `${what}: 0 MB of ${mb(total)}`, bar: [0, total] });
    for (const f of missing) {
      const bytes = await download(f, this.python, (n) => {
        got += n;
        this.show(model, { text: `${what}: ${mb(got)} of ${mb(total)}`, bar: [got, total] });
      });
      have.set(f.file, bytes);
    }
    this.damaged.delete(model.key);
    for (const f of missing) await keep(f, have.get(f.file));
  }

  // one load or restore of a model at a time: a second asker waits for the first
  once(model, start) {
    const { busy } = this;
    if (!busy.has(model.key)) busy.set(model.key, start().finally(() => busy.delete(model.key)));
    return busy.get(model.key);
  }

  // a load button pressed
  async onClick(e) {
    const button = e.target.closest("[data-own-load]");
    const form = button && button.closest("form");
    const model = modelOf(form);
    if (!model || button.disabled) return;
    this.show(model, { button: "waiting" });
    try {
      if (this.busy.has(model.key)) await this.busy.get(model.key).catch(() => {});
      if (!this.installed.has(model.key)) await this.once(model, () => this.load(model));
      redraw(model);
    } catch (err) {
      const text = err.refused ? err.message : `The model did not load: ${err.message}. Try again.`;
      this.show(model, { text, bar: null, button: err.refused ? "refused" : "offered" });
    }
  }

  // MODEL from its kept copies, with no download (nor a memory check's refusal: then the load
  // button says it): -> whether it is in the worker now. While it starts, its load boxes say so
  // and offer no button.
  async fromKept(model) {
    const start = performance.now();
    if (this.installed.has(model.key)) return true;
    if (!this.allKept(model)) return false;
    this.show(model, { text: RESTORING, bar: null, button: "hidden" });
    try {
      const have = await this.kept(model);
      if (have.size !== model.files.length || (await noRoom(this.python, model))) {
        this.show(model, OFFERED);
        return false;
      }
      const files = model.files.map((f) => ({ file: f.file, bytes: have.get(f.file) }));
      await install(this.python, model, files);
      this.installed.add(model.key);
      performance.measure("mh-own-model-restored", { start, detail: model.key });
      return true;
    } catch {
      this.show(model, OFFERED);
      return false; // the figure offers the load button again
    }
  }

  // the models the page's load boxes name whose kept copies were not looked for yet
  modelsOnPage() {
    const models = new Map();
    for (const form of loadBoxes()) {
      const model = modelOf(form);
      if (model && !this.tried.has(model.key)) models.set(model.key, model);
    }
    return [...models.values()];
  }

  // which files the model cache holds, read as the page opens: a load box of a model kept whole
  // says at once that it starts from the copy, and shows no button to press meanwhile
  lookInCache() {
    this.looked = openCache()
      .then((cache) => (cache ? cache.keys() : []))
      .then((keys) => {
        this.keptURLs = new Set(keys.map((r) => r.url));
        const restoring = { text: RESTORING, bar: null, button: "hidden" };
        for (const model of this.modelsOnPage()) {
          if (this.allKept(model)) this.show(model, restoring);
        }
      })
      .catch(() => {});
  }

  // A later visit: every model kept by an earlier one goes into the worker before the figures
  // draw their state from the URL (restore); a form drawn later (a figure whose state, from the
  // URL or the reader, turns to the reader's own text) has its model restored when it appears,
  // and its figures drawn again. Whatever draws a load box, the model's state is painted into it.
  drawnAgain() {
    for (const form of loadBoxes()) {
      const model = modelOf(form);
      const s = model && this.states.get(model.key);
      if (s) paint(form, s);
    }
    if (!this.restoring) return;
    for (const model of this.modelsOnPage()) {
      this.tried.add(model.key);
      this.once(model, () => this.fromKept(model)).then((ok) => ok && redraw(model));
    }
  }

  async restore() {
    await this.looked;
    for (const model of this.modelsOnPage()) {
      this.tried.add(model.key);
      await this.once(model, () => this.fromKept(model));
    }
    this.restoring = true;
  }

  // once the figures are live: a figure that still shows the load box of a model now in the
  // worker (its state, the same as the built page's, drew nothing new) draws again
  started() {
    const stale = new Map();
    for (const form of loadBoxes()) {
      const model = modelOf(form);
      if (model && this.installed.has(model.key) && form.querySelector("[data-own-load]")) {
        stale.set(model.key, model);
      }
    }
    stale.forEach(redraw);
  }
}
