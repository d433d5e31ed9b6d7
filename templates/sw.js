// Many Heads' service worker, written by the build for build {{ build }}.
// On install it caches this build's whole site (the Pyodide runtime in a cache of its own,
// kept across builds), so a second visit works with no network. Pages, scripts and models
// come from the network first whenever it answers, and from this build's cache only when it
// does not; an old build's cache is deleted once this one is active, so a visit never mixes
// files of two builds. Chromium activates it at once despite skipWaiting only when the old
// worker is idle; otherwise when the reader's pages of the site are closed.

const SITE = "mh-site-{{ build }}";
const RUNTIME = "mh-runtime-{{ runtime }}";
const FILES = {{ files | tojson }};

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const [site, runtime] = await Promise.all([caches.open(SITE), caches.open(RUNTIME)]);
    await Promise.all(FILES.map(async (path) => {
      const cache = path.startsWith("pyodide/") ? runtime : site;
      if (cache === runtime && (await cache.match(path))) return;
      await cache.add(new Request(path, { cache: "no-cache" }));
    }));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if ((key.startsWith("mh-site-") && key !== SITE) || (key.startsWith("mh-runtime-") && key !== RUNTIME)) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

async function cached(request) {
  return caches.match(request.url, { ignoreSearch: true, cacheName: new URL(request.url).pathname.includes("/pyodide/") ? RUNTIME : SITE });
}

// The network's answer when it comes; this build's copy when the network fails, or is silent
// for longer than a reader should wait and a copy exists.
async function networkFirst(request) {
  const network = fetch(request);
  const slow = new Promise((resolve) => setTimeout(resolve, 4000)).then(() => cached(request));
  try {
    return await Promise.race([network, slow.then((hit) => hit || network)]);
  } catch (err) {
    const hit = await cached(request);
    if (hit) return hit;
    throw err;
  }
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method === "HEAD") {
    event.respondWith(fetch(request).catch(async () => {
      const hit = await cached(request);
      if (!hit) throw new Error(`${url.pathname} is not cached`);
      return new Response(null, { status: 200, headers: hit.headers });
    }));
  } else if (request.method === "GET") {
    event.respondWith(url.pathname.includes("/pyodide/")
      ? cached(request).then((hit) => hit || fetch(request))
      : networkFirst(request));
  }
});
