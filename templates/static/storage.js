// What the reader leaves on a page (guesses, edited cells, answers), kept in this browser's
// localStorage under the page's path. Nothing is sent anywhere. Storage may be off (private
// windows, file://): then it is kept in memory for this visit only, and nothing breaks. Inside
// an LMS the page keeps what the LMS restored in memory too (keepInMemory), so a computer
// shared by a class never shows one student another's answers.

const prefix = () => `mh:${location.pathname}:`;
const folder = () => `mh:${location.pathname.replace(/[^/]*$/, "")}`;
let memory = null; // a Map standing in for localStorage

function inMemory() {
  memory ??= new Map();
  return {
    get length() { return memory.size; },
    key: (i) => [...memory.keys()][i] ?? null,
    getItem: (k) => memory.get(k) ?? null,
    setItem: (k, v) => memory.set(k, String(v)),
    removeItem: (k) => memory.delete(k),
  };
}

export function keepInMemory() {
  memory = new Map();
}

function store() {
  if (memory) return inMemory();
  try {
    const local = localStorage;
    local.getItem("mh:"); // throws where storage is off
    return local;
  } catch {
    return inMemory();
  }
}

export function load(key) {
  try {
    return store().getItem(prefix() + key);
  } catch {
    return null;
  }
}

export function save(key, value) {
  try {
    if (value === undefined) store().removeItem(prefix() + key);
    else store().setItem(prefix() + key, value);
  } catch {
    // storage is off; the page works without it
  }
}

export function entries(start) {
  const out = [];
  try {
    const s = store();
    for (let i = 0; i < s.length; i++) {
      const key = s.key(i);
      const head = prefix() + start;
      if (key.startsWith(head)) out.push([key.slice(head.length), s.getItem(key)]);
    }
  } catch {
    // storage is off
  }
  return out;
}

// [page, key, value] for every KEY beginning with START on any page of this site's folder (the
// chapters beside this one), for what gathers all chapters, such as the results file.
export function siteEntries(start) {
  const top = folder();
  const out = [];
  try {
    const s = store();
    for (let i = 0; i < s.length; i++) {
      const key = s.key(i);
      if (!key.startsWith(top)) continue;
      const rest = key.slice(top.length);
      const cut = rest.indexOf(`:${start}`);
      if (cut <= 0 || rest.slice(0, cut).includes("/")) continue;
      out.push([rest.slice(0, cut), rest.slice(cut + 1 + start.length), s.getItem(key)]);
    }
  } catch {
    // storage is off
  }
  return out;
}

// A value kept for the whole site (the student's name), not for one page.
export function loadShared(key) {
  try {
    return store().getItem(`${folder()}:${key}`);
  } catch {
    return null;
  }
}

export function saveShared(key, value) {
  try {
    const k = `${folder()}:${key}`;
    if (value === undefined) store().removeItem(k);
    else store().setItem(k, value);
  } catch {
    // storage is off
  }
}
