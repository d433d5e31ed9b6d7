// Many Heads' service worker, written by the build for build {{ build }}.
// It keeps what the reader opens, as they go: every file of this build that a page of the site
// fetches while it is in control, and, when a page asks (static/offline.js, once its Python is
// ready), that page with what it loaded before, its scripts and, if it runs Python, the Python
// runtime. The whole site is kept only when the reader chooses it (its size is WHOLE bytes,
// counted by the build). Copies live in caches named by the scope (the Pyodide runtime in one of
// its own, kept across builds), so two builds under different sub-paths of one origin keep
// their copies side by side. Scripts, styles, the Python and its data carry their content's hash
// in their names, so they come from the copy first; pages come from the network first, and from
// this build's copy when the network fails or is slow. A file with a plain name is kept only if
// its bytes are this build's (DIGESTS), so a page from either place loads only files its own
// build names, and a visit never mixes two builds. An update keeps the newer version of what the
// copy it replaces held (the whole site, if the reader chose it); once active it deletes older
// copies of its own scope only. Chromium activates it at once despite skipWaiting only when the
// old worker is idle; otherwise when the reader's pages of the site are closed.

const SCOPE = self.registration.scope;
const SITE = `mh-site-{{ build }} ${SCOPE}`;
const RUNTIME = `mh-runtime-{{ runtime }} ${SCOPE}`;
// every file of the build but the reader's own models (fetched only when asked, and kept by the
// page in a cache of its own), with its size in bytes
const FILES = {{ files | tojson }};
const SIZES = {{ sizes | tojson }};
const WHOLE = {{ whole | tojson }};
// the sha256 of every file with a plain name (pages, unhashed scripts) but the runtime's
const DIGESTS = {{ digests | tojson }};
// kept with every page: the hashed scripts, styles and icon; with a page that runs Python,
// also its runtime (Pyodide, the compiled standard library and numpy, the site's Python)
const SHELL = {{ shell | tojson }};
const PYTHON = {{ python | tojson }};
const IMMUTABLE = new Set({{ immutable | tojson }}.map((path) => new URL(path, SCOPE).href));
const PYODIDE = new URL("pyodide/", SCOPE).href;
// not a file of the site: the reader's choice to keep the whole site, kept in the site's cache
const CHOICE = new URL("mh-offline-whole-site", SCOPE).href;

const href = (path) => new URL(path, SCOPE).href;
const SIZE = new Map(FILES.map((path, i) => [href(path), SIZES[i]]));
const DIGEST = new Map(Object.entries(DIGESTS).map(([path, digest]) => [href(path), digest]));
const cacheFor = (url) => (url.startsWith(PYODIDE) ? RUNTIME : SITE);

async function sha256(response) {
  const bytes = await response.clone().arrayBuffer();
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

// RESPONSE as URL in its cache, if it is this build's file: a plain-named file whose bytes are
// another build's (a page published since this worker installed) is not kept.
async function put(url, response) {
  if (!response.ok || !SIZE.has(url)) return false;
  if (DIGEST.has(url) && (await sha256(response)) !== DIGEST.get(url)) return false;
  await (await caches.open(cacheFor(url))).put(url, response);
  return true;
}

// One file: kept already, copied from an older copy when its name carries its hash, else
// fetched. A file the server does not have is left out with a warning, so one missing file does
// not cost the rest; a network failure rejects.
async function keep(url) {
  const cache = await caches.open(cacheFor(url));
  if (await cache.match(url)) return;
  const copy = IMMUTABLE.has(url) && (await caches.match(url));
  if (copy) return cache.put(url, copy);
  // a hashed name never changes, nor does a file of this version of the runtime: the browser's
  // HTTP cache may have it from the page's visit
  const fresh = IMMUTABLE.has(url) || url.startsWith(PYODIDE) ? "default" : "no-cache";
  const response = await fetch(new Request(url, { cache: fresh }));
  if (!response.ok) {
    const status = response.status;
    console.warn(`Many Heads: ${url} answered ${status}; it is left out of the offline copy`);
    return;
  }
  await put(url, response);
}

const keepAll = (urls) => Promise.all([...new Set(urls)].filter((u) => SIZE.has(u)).map(keep));

// What pages need offline: themselves and what they loaded (URLS), the scripts every page
// loads and, when they run Python, the runtime.
function needs(urls, python) {
  return [...urls, ...SHELL.map(href), ...(python ? PYTHON.map(href) : [])];
}

// A file's name without the content hashes a newer build changes: `static/main.HASH.js` and
// `py/HASH/python.zip` stand for `static/main.js` and `py/*/python.zip`.
const family = (url) =>
  url.replace(/\/[0-9a-f]{12}\//g, "/*/").replace(/\.[0-9a-f]{12}(\.\w+)$/, "$1");

// What an older copy of this scope held, carried into this build's: the whole site if the reader
// chose it, else this build's version of every file it held, and the shell and runtime.
async function carryOver() {
  const held = [];
  let whole = false;
  for (const key of await caches.keys()) {
    if (!(await older(key))) continue;
    const cache = await caches.open(key);
    whole ||= Boolean(await cache.match(CHOICE));
    held.push(...(await cache.keys()).map((request) => family(request.url)));
  }
  if (whole) return keepWhole();
  if (!held.length) return;
  const wanted = new Set(held);
  const carried = FILES.map(href).filter((url) => wanted.has(family(url)));
  const python = PYTHON.some((path) => wanted.has(family(href(path))));
  await keepAll(needs(carried, python));
}

async function keepWhole(progress = () => {}) {
  const urls = FILES.map(href);
  let done = 0;
  await Promise.all(urls.map((url) => keep(url).then(() => progress(++done, urls.length))));
  await (await caches.open(SITE)).put(CHOICE, new Response("whole site"));
}

// What the copy holds now, for the page to say: the pages, the bytes, whether it is the whole.
async function kept() {
  let bytes = 0;
  const pages = new Set();
  for (const name of [SITE, RUNTIME]) {
    for (const { url } of await (await caches.open(name)).keys()) {
      bytes += SIZE.get(url) ?? 0;
      if (url === SCOPE) pages.add(href("index.html"));
      else if (url.endsWith(".html")) pages.add(url);
    }
  }
  const whole = Boolean(await caches.match(CHOICE, { cacheName: SITE }));
  return { type: "kept", bytes, pages: pages.size, whole, wholeBytes: WHOLE };
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    await Promise.all([caches.open(SITE), caches.open(RUNTIME)]);
    await carryOver();
    await self.skipWaiting();
  })());
});

// A cache this worker may delete: an older copy of its own scope. Copies named without a scope
// (by earlier versions of this worker) count as its own when everything they hold lies in it.
async function older(key) {
  if (key === SITE || key === RUNTIME || !/^mh-(site|runtime)-/.test(key)) return false;
  if (key.includes(" ")) return key.endsWith(` ${SCOPE}`);
  const held = await (await caches.open(key)).keys();
  return held.every((request) => request.url.startsWith(SCOPE));
}

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (await older(key)) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

// {type: "keep", page, loaded, python}: keep that page and what it needs; {type: "keep-whole"}:
// keep every file of the site, reporting {type: "progress", done, total} as it goes; both are
// answered on the message's port with what the copy then holds, or {type: "failed", message}.
self.addEventListener("message", (event) => {
  const { data } = event;
  const [port] = event.ports;
  if (!port || !data) return;
  const work = (async () => {
    if (data.type === "keep") {
      const loaded = (data.loaded || []).map(String).filter((url) => url.startsWith(SCOPE));
      await keepAll(needs([String(data.page), ...loaded], Boolean(data.python)));
    } else if (data.type === "keep-whole") {
      await keepWhole((done, total) => {
        if (done % 20 === 0 || done === total) port.postMessage({ type: "progress", done, total });
      });
    }
    port.postMessage(await kept());
  })().catch((err) => port.postMessage({ type: "failed", message: String(err.message || err) }));
  event.waitUntil(work);
});

function cached(request, cacheName) {
  return caches.match(request.url, { ignoreSearch: true, cacheName });
}

// The network's answer, kept on the way when it is a file of this build.
function fetchKeeping(event, request) {
  const url = request.url.split(/[?#]/)[0];
  let done;
  event.waitUntil(new Promise((resolve) => { done = resolve; }));
  return fetch(request).then(
    (response) => {
      const keeping = SIZE.has(url) && response.ok && response.type === "basic";
      done(keeping ? put(url, response.clone()).catch(() => false) : false);
      return response;
    },
    (err) => {
      done(false);
      throw err;
    },
  );
}

// A figure's pre-rendered answers that the copy lacks (the figure never came near the screen
// while the reader was online) answer as none when the network fails: the page then waits for
// Python, as it does for a state the build did not draw, and logs no failed request.
const ANSWERS = new URL("prerendered/", SCOPE).href;
const NO_ANSWERS = () => new Response("{}", { headers: { "Content-Type": "application/json" } });

async function cacheFirst(event, request, cacheName) {
  const hit = await cached(request, cacheName);
  if (hit) return hit;
  try {
    return await fetchKeeping(event, request);
  } catch (err) {
    if (request.url.startsWith(ANSWERS) && SIZE.has(request.url.split(/[?#]/)[0])) {
      return NO_ANSWERS();
    }
    throw err;
  }
}

// The network's answer when it comes; this build's copy when the network fails, or is silent
// for longer than a reader should wait and a copy exists.
async function networkFirst(event, request) {
  const network = fetchKeeping(event, request);
  const slow = new Promise((resolve) => setTimeout(resolve, 4000)).then(() =>
    cached(request, SITE),
  );
  try {
    return await Promise.race([network, slow.then((hit) => hit || network)]);
  } catch (err) {
    const hit = await cached(request, SITE);
    if (hit) return hit;
    throw err;
  }
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (!request.url.startsWith(SCOPE)) return; // another origin, or another site on this host
  const url = request.url.split(/[?#]/)[0];
  if (request.method === "HEAD") {
    event.respondWith(fetch(request).catch(async () => {
      const hit = await cached(request, cacheFor(url));
      if (!hit) throw new Error(`${url} is not cached`);
      return new Response(null, { status: 200, headers: hit.headers });
    }));
  } else if (request.method === "GET") {
    if (url.startsWith(PYODIDE)) event.respondWith(cacheFirst(event, request, RUNTIME));
    else if (IMMUTABLE.has(url)) event.respondWith(cacheFirst(event, request, SITE));
    else event.respondWith(networkFirst(event, request));
  }
});
