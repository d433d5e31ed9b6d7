// What the reader leaves on a page (guesses, edited cells, solved exercises), kept in this
// browser's localStorage under the page's path. Nothing is sent anywhere. Storage may be
// off (private windows, file://): then nothing is kept and nothing breaks.

const prefix = () => `mh:${location.pathname}:`;

export function load(key) {
  try {
    return localStorage.getItem(prefix() + key);
  } catch {
    return null;
  }
}

export function save(key, value) {
  try {
    if (value === undefined) localStorage.removeItem(prefix() + key);
    else localStorage.setItem(prefix() + key, value);
  } catch {
    // storage is off; the page works without it
  }
}

export function entries(start) {
  const out = [];
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (key.startsWith(prefix() + start)) out.push([key.slice((prefix() + start).length), localStorage.getItem(key)]);
    }
  } catch {
    // storage is off
  }
  return out;
}
