// Offline reading: the site's service worker (sw.js) keeps what the reader opens, as they go.
// Once the page is settled (its Python ready, if it runs Python) it registers the worker and
// asks it to keep this page and what it has loaded: its own files, and the data files Python
// fetched (toymodels/page/data.py). The page's footer then says what is kept, and offers to
// keep the whole site, with its size as the build counted it; nothing else is fetched unasked.
// Not on file://, where service workers are off, or in an LMS (which serves its package). When
// the worker has answered, <html data-offline-kept> says "page" or "site" (the tests wait for
// it).

const MB = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

// The worker's answer to MESSAGE, sent on a port of its own; ON_PROGRESS sees the progress
// messages before it.
function ask(worker, message, onProgress = () => {}) {
  return new Promise((resolve, reject) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = ({ data }) => {
      if (data.type === "progress") return onProgress(data);
      channel.port1.close();
      if (data.type === "failed") reject(new Error(data.message));
      else resolve(data);
    };
    worker.postMessage(message, [channel.port2]);
  });
}

function show(note, kept) {
  const text = note.querySelector("[data-offline-text]");
  const whole = note.querySelector("[data-offline-whole]");
  note.hidden = false;
  document.documentElement.dataset.offlineKept = kept.whole ? "site" : "page";
  if (kept.whole) {
    const size = MB(kept.wholeBytes);
    text.textContent = `The whole site is kept in this browser for offline reading (${size}).`;
    whole.hidden = true;
    return;
  }
  const pages = kept.pages === 1
    ? "this page, with what it"
    : `the ${kept.pages} pages you have opened, with what they`;
  text.textContent = `Kept in this browser for offline reading: ${pages} loaded `
    + `(${MB(kept.bytes)}). Other pages need the network.`;
  whole.textContent = `Keep the whole site for offline reading (${MB(kept.wholeBytes)})`;
  whole.hidden = false;
  whole.disabled = false;
}

// PYTHON, the page's Python (or null where none runs), once it is ready.
export async function keepForOffline(python) {
  if (!("serviceWorker" in navigator) || !location.protocol.startsWith("http")) return;
  if (document.querySelector('meta[name="mh-lms"]')) return;
  const note = document.querySelector("[data-offline]");
  const scope = new URL("../", import.meta.url).pathname;
  let registration;
  try {
    await navigator.serviceWorker.register(new URL("../sw.js", import.meta.url), { scope });
    registration = await navigator.serviceWorker.ready;
  } catch {
    return; // a refused registration only means no offline copy
  }
  const fetched = python
    ? await python.call("toymodels.page.data:fetched", [], { pure: true }).catch(() => [])
    : [];
  const loaded = performance.getEntriesByType("resource").map((entry) => entry.name);
  const page = location.href.split(/[?#]/)[0];
  const message = { type: "keep", page, loaded: [...loaded, ...fetched], python: Boolean(python) };
  let kept;
  try {
    kept = await ask(registration.active, message);
  } catch (err) {
    console.warn(`Many Heads: this page could not be kept for offline reading (${err.message})`);
    return;
  }
  if (!note) return;
  show(note, kept);
  const whole = note.querySelector("[data-offline-whole]");
  whole.addEventListener("click", async () => {
    whole.disabled = true;
    const text = note.querySelector("[data-offline-text]");
    text.textContent = "Keeping the whole site for offline reading…";
    const progress = ({ done, total }) => {
      text.textContent = `Keeping the whole site for offline reading: ${done} of ${total} files…`;
    };
    try {
      show(note, await ask(registration.active, { type: "keep-whole" }, progress));
    } catch (err) {
      const why = err.message;
      text.textContent = `The whole site could not be kept (${why}); try again when online.`;
      whole.disabled = false;
    }
  });
}
