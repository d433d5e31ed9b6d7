// Many Heads' service worker, written by the build for build {{ build }}.
// On install it keeps this build's whole site in caches named by its scope (the Pyodide runtime
// in one of its own, kept across builds), so a second visit works with no network, and two
// builds under different sub-paths of one origin keep their copies side by side. Scripts,
// styles, the Python and its data carry their content's hash in their names, so they come from
// the copy first; pages come from the network first, and from this build's copy when the
// network fails or is slow. A page from either place loads only files its own build names, so
// a visit never mixes two builds. Once active it deletes older copies of its own scope only.
// Chromium activates it at once despite skipWaiting only when the old worker is idle; otherwise
// when the reader's pages of the site are closed.

const SCOPE = self.registration.scope;
const SITE = `mh-site-{{ build }} ${SCOPE}`;
const RUNTIME = `mh-runtime-{{ runtime }} ${SCOPE}`;
const FILES = {{ files | tojson }};
const IMMUTABLE = new Set({{ immutable | tojson }}.map((path) => new URL(path, SCOPE).href));
const PYODIDE = new URL("pyodide/", SCOPE).href;

// One file into `cache`: kept already, copied from an older copy when its name carries its
// hash, else fetched. A file the server does not have is left out with a warning, so one
// missing file does not cost the whole offline copy; a network failure fails the install,
// and the previous worker and its copy stay.
async function keep(cache, path) {
  const url = new URL(path, SCOPE).href;
  if (await cache.match(url)) return;
  const copy = IMMUTABLE.has(url) && (await caches.match(url));
  if (copy) return cache.put(url, copy);
  const response = await fetch(new Request(url, { cache: "no-cache" }));
  if (!response.ok) {
    console.warn(
      `Many Heads: ${path} answered ${response.status}; it is left out of the offline copy`,
    );
    return;
  }
  await cache.put(url, response);
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const [site, runtime] = await Promise.all([caches.open(SITE), caches.open(RUNTIME)]);
    await Promise.all(
      FILES.map((path) => keep(path.startsWith("pyodide/") ? runtime : site, path)),
    );
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

function cached(request, cacheName) {
  return caches.match(request.url, { ignoreSearch: true, cacheName });
}

async function cacheFirst(request, cacheName) {
  return (await cached(request, cacheName)) || fetch(request);
}

// The network's answer when it comes; this build's copy when the network fails, or is silent
// for longer than a reader should wait and a copy exists.
async function networkFirst(request) {
  const network = fetch(request);
  const slow = new Promise((resolve) => setTimeout(resolve, 4000))
    .then(() => cached(request, SITE));
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
      const hit = await cached(request, url.startsWith(PYODIDE) ? RUNTIME : SITE);
      if (!hit) throw new Error(`${url} is not cached`);
      return new Response(null, { status: 200, headers: hit.headers });
    }));
  } else if (request.method === "GET") {
    if (url.startsWith(PYODIDE)) event.respondWith(cacheFirst(request, RUNTIME));
    else if (IMMUTABLE.has(url)) event.respondWith(cacheFirst(request, SITE));
    else event.respondWith(networkFirst(request));
  }
});
