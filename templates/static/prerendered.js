// First taps before Python: the build drew each live figure's states one tap away from its
// default view (sitebuild/prerender.py) into one JSON file per page, named by the page's
// <meta name="mh-prerendered">. A tap whose state is in it is answered from there, through the
// figure's own swap, until Python takes over: until Python is ready, and then until Python's
// first answer for that figure is in (figures.js); any other tap waits for Python.
// Fetched after the page is up, so it is never on the way to the first paint.

let answers = null;
let fetched = {}; // the file's answers once they are in

function load() {
  const meta = document.querySelector('meta[name="mh-prerendered"]');
  if (!meta) return Promise.resolve({});
  return fetch(new URL(meta.content, document.baseURI))
    .then((r) => (r.ok ? r.json() : {}))
    .catch(() => ({})) // without the file, taps wait for Python
    .then((all) => (fetched = all));
}

// The name of a state in the file, as prerender.key builds it: its fields sorted, as JSON.
export function key(state) {
  return JSON.stringify(Object.keys(state).sort().map((k) => [k, String(state[k])]));
}

// Start the fetch (once), as soon as the page has live figures.
export function loadPrerendered() {
  answers ??= load();
}

// The answer Python would give for `state` of figure `fid`, or null.
export async function prerendered(fid, state) {
  loadPrerendered();
  await answers;
  return prerenderedNow(fid, state);
}

// The same, at once: null while the file is still on its way.
export function prerenderedNow(fid, state) {
  return fetched[fid]?.[key(state)] ?? null;
}
