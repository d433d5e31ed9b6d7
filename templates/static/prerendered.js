// First taps before Python: the build drew each live figure's states one tap away from its
// default view (sitebuild/pipeline/prerender.py) into one JSON file per figure, which the page's
// <meta name="mh-prerendered"> names ({figure id: file}). A tap whose state is in it is answered
// from there, through the figure's own swap, until Python takes over: until Python is ready, and
// then until Python's first answer for that figure is in (figures.js); any other tap waits for
// Python. A figure's file is fetched once the figure comes within a screen of the reader's view
// (or a tap asks for one of its states), so a reader who reads the top of a chapter does not
// download the answers of its last figures; never on the way to the first paint.

let files = null; // {figure id: URL of its answers}
const loads = new Map(); // figure id -> the promise of its answers
const fetched = {}; // a figure's answers once they are in
let watching = false;

function named() {
  if (files) return files;
  files = {};
  const meta = document.querySelector('meta[name="mh-prerendered"]');
  try {
    for (const [fid, path] of Object.entries(meta ? JSON.parse(meta.content) : {})) {
      files[fid] = new URL(path, document.baseURI);
    }
  } catch {
    // a page whose list does not read: taps wait for Python
  }
  return files;
}

function load(fid) {
  if (!loads.has(fid)) {
    const url = named()[fid];
    const answers = !url
      ? Promise.resolve({})
      : fetch(url)
        .then((r) => (r.ok ? r.json() : {}))
        .catch(() => ({})); // without the file, taps wait for Python
    loads.set(fid, answers.then((all) => { fetched[fid] = all[fid] ?? {}; }));
  }
  return loads.get(fid);
}

// The name of a state in the file, as prerender.key builds it: its fields sorted, as JSON.
export function key(state) {
  return JSON.stringify(Object.keys(state).sort().map((k) => [k, String(state[k])]));
}

// Start watching (once), as soon as the page has live figures: each figure's answers are
// fetched when it comes within a screen of the view.
export function loadPrerendered() {
  if (watching) return;
  watching = true;
  const ids = Object.keys(named());
  if (typeof IntersectionObserver !== "function") {
    ids.forEach(load);
    return;
  }
  const near = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      near.unobserve(entry.target);
      load(entry.target.id);
    }
  }, { rootMargin: "100% 0px" });
  for (const fid of ids) {
    const figure = document.getElementById(fid);
    if (figure) near.observe(figure);
    else load(fid);
  }
}

// The answer Python would give for `state` of figure `fid`, or null.
export async function prerendered(fid, state) {
  await load(fid);
  return prerenderedNow(fid, state);
}

// The same, at once: null while the figure's file is still on its way.
export function prerenderedNow(fid, state) {
  return fetched[fid]?.[key(state)] ?? null;
}
