// Entry point of every chapter page: wires up the blocks, then starts Python in a
// worker and hands the figures to it. Without this script the page is still whole.

import { setupBlocks } from "./blocks.js";
import { setupCells } from "./cells.js";
import { setupDownloads } from "./downloads.js";
import { setupEmbed } from "./embed.js";
import { setupResults } from "./results.js";
import { setupFigures } from "./figures.js";
import { setupOwnModel } from "./ownmodel.js";
import { setupScrollers } from "./scrollers.js";
import { startPython } from "./pyclient.js";

document.documentElement.classList.add("js");
setupBlocks();
setupEmbed();
setupResults();
setupScrollers();
// the class summary's own script, on its page only (class.html)
if (document.querySelector("[data-class]")) import("./class.js");

const figures = setupFigures();
const bar = document.querySelector("[data-pystatus]");

function status(text, value) {
  if (!bar) return;
  bar.hidden = false;
  bar.querySelector("[data-pystatus-text]").textContent = text;
  const progress = bar.querySelector("[data-pystatus-bar]");
  if (value === undefined) progress.hidden = true;
  else progress.value = value;
}

const cellCount = document.querySelectorAll("[data-cell]").length;
if (figures.count || cellCount) {
  const meta = (name) =>
    new URL(document.querySelector(`meta[name="${name}"]`).content, document.baseURI);
  const python = startPython({
    pyodideURL: meta("mh-pyodide"),
    bytecodeURL: meta("mh-bytecode"),
    pyURL: new URL("../py/", import.meta.url),
    onProgress: (step, steps, label) => {
      status(`Loading ${label} (${step} of ${steps})…`, step - 1);
    },
  });
  figures.connect(python);
  setupCells(python);
  setupDownloads(python);
  const ownModel = setupOwnModel(python);
  if (document.querySelector("[data-trainer]")) {
    // only where the section is
    import("./trainer.js").then(({ setupTrainer }) => setupTrainer(python));
  }
  status("Loading the Python runtime (1 of 3)…", 0);
  python.ready.then(
    async () => {
      await ownModel.restore();
      await figures.start();
      performance.mark("mh-python-ready");
      keepForOffline();
      status(figures.count ? "Interactive figures are ready." : "Python is ready: run the cells.");
      bar?.classList.add("is-done"); // said to screen readers, then gone from the screen
      document.documentElement.classList.add("py-ready");
    },
    (err) => {
      status(`Interaction is off: ${err.message}. The figures show their first state.`);
      bar.classList.add("is-off");
      figures.off();
    },
  );
} else {
  keepForOffline(); // nothing to compete with: keep the site now
}

// After Python is up (so it does not compete with start-up), let the service worker keep this
// build for offline visits. Not on file:// or where service workers are off.
function keepForOffline() {
  if (!("serviceWorker" in navigator) || !location.protocol.startsWith("http")) return;
  if (document.querySelector('meta[name="mh-lms"]')) return; // an LMS serves its package
  const scope = new URL("../", import.meta.url).pathname;
  navigator.serviceWorker.register(new URL("../sw.js", import.meta.url), { scope })
    .catch(() => {}); // a refused registration only means no offline copy
}
