// Keeps the Python worker on this site's own origin: the second wall. The first is the page's
// Content-Security-Policy, which the worker inherits because pyclient.js starts it from a blob:
// URL (a worker started from its own http(s) URL would take its policy from its own response,
// which a plain static host does not send). This module is for a browser that would not apply
// the page's policy there. Imported first by worker.js, before any of Python's code exists.
//
// Every way out that Python can reach through the worker's API either checks the final URL (it
// is converted to a string once, checked, and that same string is what the browser is handed)
// or is closed. The guards are installed where the browser defines each function (fetch lives
// on WorkerGlobalScope.prototype, not on the global object), and the real functions are kept
// only in this module's closure. One way no script can wrap: import() and eval, reached through
// pyodide.code.run_js or js.eval; only the inherited policy (script-src, no 'unsafe-eval')
// closes them, so this module alone would not.

// relative URLs resolve as they do in worker.js, beside this file
const BASE = new URL("./", import.meta.url);
const allowed = new Set([BASE.origin]);

export function allowOrigin(url) {
  allowed.add(new URL(String(url), BASE).origin);
}

function refused(what) {
  return new TypeError(`blocked by Many Heads' policy: ${what}`);
}

// `text` is already a string: the caller converted what it was given exactly once.
function checked(text) {
  const target = new URL(text, BASE);
  if (!allowed.has(target.origin) && target.protocol !== "data:") {
    throw refused(`this page may only contact its own origin, not ${target.origin}`);
  }
  return target.href;
}

// a property that holds `value` for good: not written, not listed, not redefined
const fixed = (value) => ({ value, writable: false, enumerable: false, configurable: false });

// Put `value` in place of `name` on every object of the global's prototype chain that defines it.
function replace(name, value) {
  for (let scope = self; scope; scope = Object.getPrototypeOf(scope)) {
    if (Object.prototype.hasOwnProperty.call(scope, name)) {
      Object.defineProperty(scope, name, fixed(value));
    }
  }
}

// fetch: a genuine Request (recognised by the browser's own brand check, not by instanceof) is
// copied as it is; anything else becomes one string. The check reads the URL of the Request
// built from it, and that Request is what goes out.
const RealRequest = self.Request;
const requestURL = Object.getOwnPropertyDescriptor(RealRequest.prototype, "url").get;
const realFetch = self.fetch;

function isRequest(value) {
  try {
    requestURL.call(value);
    return true;
  } catch {
    return false;
  }
}

replace("fetch", function fetch(input, init) {
  try {
    const request = new RealRequest(isRequest(input) ? input : checked(String(input)), init);
    checked(requestURL.call(request));
    return realFetch.call(self, request);
  } catch (err) {
    return Promise.reject(err);
  }
});

const realOpen = XMLHttpRequest.prototype.open;
Object.defineProperty(XMLHttpRequest.prototype, "open", {
  value: function open(method, url, ...rest) {
    return realOpen.call(this, method, checked(String(url)), ...rest);
  },
  writable: false,
  enumerable: true,
  configurable: false,
});

// A constructor that checks its URL; the real one stays out of reach (not the guard's
// prototype, and no longer its instances' `constructor`).
function guard(name) {
  const Real = self[name];
  if (typeof Real !== "function") return;
  const Guarded = {
    [name]: function (url, ...rest) {
      if (!new.target) throw new TypeError(`Failed to construct '${name}': use 'new'`);
      return Reflect.construct(Real, [checked(String(url)), ...rest], new.target);
    },
  }[name];
  for (const key of Object.getOwnPropertyNames(Real)) {
    if (["length", "name", "prototype"].includes(key)) continue;
    Object.defineProperty(Guarded, key, Object.getOwnPropertyDescriptor(Real, key));
  }
  Object.setPrototypeOf(Guarded, Object.getPrototypeOf(Real));
  Guarded.prototype = Real.prototype;
  Object.defineProperty(Real.prototype, "constructor", fixed(Guarded));
  replace(name, Guarded);
}
guard("WebSocket");
guard("EventSource");

// What Python never needs is closed: workers of its own (a new worker would not carry this
// module), the Cache API (cache.add fetches), fonts (a FontFace fetches its url()), other
// transports, notifications (an icon is fetched), and importScripts (already refused in a
// module worker; it stays a function that throws TypeError, which Pyodide's loader expects).
const CLOSED = [
  "Worker", "SharedWorker", "WebTransport", "WebSocketStream", "FontFace", "Notification",
  "importScripts",
];
for (const name of CLOSED) {
  const Real = self[name];
  if (typeof Real !== "function") continue;
  const closed = {
    [name]: function () {
      throw refused(`Python in this page may not use ${name}`);
    },
  }[name];
  if (Real.prototype) Object.defineProperty(Real.prototype, "constructor", fixed(closed));
  replace(name, closed);
}
replace("caches", undefined);
if (self.navigator && "sendBeacon" in self.navigator) {
  const beacon = { value: () => false, configurable: false };
  Object.defineProperty(Object.getPrototypeOf(self.navigator), "sendBeacon", beacon);
}
