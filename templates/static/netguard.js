// Keeps the Python worker on this site's own origin. A worker takes its Content-Security-Policy
// from its own HTTP response, which a plain static host does not send, so the worker enforces
// the same rule itself: fetch, XMLHttpRequest, WebSocket and EventSource to any other origin
// fail with a message that says why. Imported first by worker.js.

const allowed = new Set([self.location.origin]);

export function allowOrigin(url) {
  allowed.add(new URL(url, self.location.href).origin);
}

function check(url) {
  const target = new URL(url instanceof Request ? url.url : String(url), self.location.href);
  if (!allowed.has(target.origin) && !["blob:", "data:"].includes(target.protocol)) {
    throw new TypeError(`blocked by Many Heads' policy: this page may only contact its own origin, not ${target.origin}`);
  }
}

const realFetch = self.fetch.bind(self);
self.fetch = (input, init) => {
  try {
    check(input);
  } catch (err) {
    return Promise.reject(err);
  }
  return realFetch(input, init);
};

const realOpen = XMLHttpRequest.prototype.open;
XMLHttpRequest.prototype.open = function open(method, url, ...rest) {
  check(url);
  return realOpen.call(this, method, url, ...rest);
};

for (const name of ["WebSocket", "EventSource"]) {
  const Real = self[name];
  if (!Real) continue;
  self[name] = class extends Real {
    constructor(url, ...rest) {
      check(url);
      super(url, ...rest);
    }
  };
}
